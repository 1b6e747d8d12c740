"""One data-parallel training step across processes, and rank-0 checkpoints."""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any, NoReturn

from ..backends import Device, DeviceLike
from ..core.tensor import Tensor
from . import comm
from .fingerprint import check_same_model
from .sync import allreduce_flat, broadcast_parameters, pack_gradients, unpack_gradients


class _StopSignals:
    """SIGTERM and SIGINT (main thread only) turned into counts read between steps; a
    second signal acts as usual (ends this rank, which aborts the job).
    """

    def __init__(self) -> None:
        self.received: dict[int, int] = {signal.SIGTERM: 0, signal.SIGINT: 0}
        if threading.current_thread() is threading.main_thread():
            for signum in self.received:
                signal.signal(signum, self._handle)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if any(self.received.values()):  # the second one: stop now
            signal.signal(signum, signal.SIG_DFL)
            if signum == signal.SIGINT:
                raise KeyboardInterrupt
            os.kill(os.getpid(), signum)
            return
        self.received[signum] += 1
        sys.stderr.write(
            f"[rank {comm.rank()}] {signal.Signals(signum).name}: every rank stops after "
            "the next step to save a checkpoint (send it again to abort)\n"
        )
        sys.stderr.flush()


class DistributedTrainer:
    """Data parallel over MPI ranks: each rank trains on its own batch, gradients are
    averaged over all ranks (weighted by batch size), every rank takes the same step.

    ``step`` on R ranks with batches ``b_1..b_R`` gives the same parameters as one
    process taking a step on the concatenation of the batches (for a loss that is a
    mean over samples).

    Parameters
    ----------
    model : Module
        The same architecture on every rank (names, shapes and dtypes are compared
        once, and a difference raises ``ValueError`` naming it); identical values after
        construction (rank 0's are broadcast).
    loss_fn : callable
        ``loss_fn(outputs, targets) -> scalar Tensor``, a mean over the batch.
    optimizer : Optimizer
        Over ``model.parameters()``.
    device : str or Device
        Where this rank computes (one process per GPU: ``f"cuda:{local_rank}"``).
    handle_signals : bool, default True
        Catch SIGTERM (what Slurm and Kubernetes send before preempting a job) and
        SIGINT on any rank: the flag travels with the next step's all-reduce, so every
        rank sees :attr:`should_stop` after the same step; then call :meth:`stop`.

    Attributes
    ----------
    steps : int
        Steps taken by this trainer.
    should_stop : bool
        True on every rank after the same step once any rank received SIGTERM or SIGINT.
    exit_status : int
        143 after SIGTERM, 130 after SIGINT (0 otherwise), the same on every rank.
    """

    def __init__(
        self,
        model: Any,
        loss_fn: Callable[[Tensor, Tensor], Tensor],
        optimizer: Any,
        device: DeviceLike = "cpu",
        handle_signals: bool = True,
    ) -> None:
        self.steps, self.should_stop, self.exit_status = 0, False, 0
        self._signals = _StopSignals() if handle_signals else None
        self.device = Device(device)
        self.model = model.to(self.device)
        self.loss_fn = loss_fn
        self.optimizer = optimizer
        broadcast_parameters(self.model)

    def step(self, inputs: Tensor, targets: Tensor) -> float:
        """Forward, backward, all-reduce, update; returns the mean loss over all ranks."""
        check_same_model(self.model)  # cached: a collective only if the model changed
        local = int(inputs.shape[0])
        self.model.train()
        self.optimizer.zero_grad()
        loss = self.loss_fn(self.model(inputs.to(self.device)), targets.to(self.device))
        loss.backward()
        params = [p for p in self.model.parameters() if p.requires_grad]
        # one message: every gradient times this rank's batch size, the batch size, the
        # loss, and how many ranks received SIGTERM and SIGINT (divided back below)
        received = self._signals.received if self._signals is not None else {}
        sigterm, sigint = received.get(signal.SIGTERM, 0), received.get(signal.SIGINT, 0)
        flat = pack_gradients(
            params, extra=(1.0, float(loss.item()), sigterm / local, sigint / local)
        )
        flat.array[...] *= local
        allreduce_flat(flat)
        total, terms, ints = float(flat.array[-4]), float(flat.array[-2]), float(flat.array[-1])
        flat.array[...] /= total  # the total batch size over all ranks
        unpack_gradients(params, flat)
        self.optimizer.step()
        self.steps += 1
        if terms > 0 or ints > 0:
            self.should_stop = True
            self.exit_status = 143 if terms > 0 else 130
        return float(flat.array[-3])

    def stop(
        self, checkpoint: Any, path: str | os.PathLike[str], resume_command: str | None = None
    ) -> NoReturn:
        """After :attr:`should_stop`: rank 0 saves ``checkpoint`` to ``path`` (every rank
        waits), prints how to resume, and every rank exits with :attr:`exit_status`.

        Parameters
        ----------
        checkpoint : dict
            What to save (model and optimizer states, the step or epoch reached...).
        path : str or os.PathLike
            Where (a file all ranks can see).
        resume_command : str, optional
            Shown after "Resume with:" (``{path}`` is replaced by the path).
        """
        save_checkpoint(checkpoint, path)
        if comm.rank() == 0:
            name = "SIGTERM" if self.exit_status == 143 else "SIGINT"
            hint = (resume_command or "load_checkpoint({path!r})").format(path=os.fspath(path))
            print(
                f"Training stopped by {name} after step {self.steps} on every rank; checkpoint "
                f"saved to {os.fspath(path)}.\nResume with: {hint}",
                file=sys.stderr,
                flush=True,
            )
        raise SystemExit(self.exit_status or 1)


def save_checkpoint(obj: Any, path: str | os.PathLike[str]) -> None:
    """Rank 0 writes ``obj`` (atomically, see :func:`minitorch_accel.save`); every rank
    waits until the file is complete.
    """
    from ..serialization import save

    if comm.rank() == 0:
        save(obj, path)
    if comm.is_initialized():
        comm.barrier()


def load_checkpoint(path: str | os.PathLike[str], map_location: DeviceLike | None = None) -> Any:
    """Every rank reads the checkpoint (a file visible to all of them). The world size
    may differ from the run that wrote it: model and optimizer state are the same on
    every rank, and :class:`DistributedSampler` re-shards the data.
    """
    from ..serialization import load

    return load(path, map_location=map_location)
