"""Pipeline stages as MPI ranks: the same schedules, across processes or machines.

:class:`Pipeline` runs its stages as threads of one process. Here each MPI rank (a
process started by ``mpiexec -n p``, possibly on another machine) holds one stage and
follows its row of the same schedule; activations go to the next rank and gradients to
the one before through mpi4py. Sends are non-blocking (``isend``), as in PyTorch's
pipelining: with blocking sends two neighbours could each wait for the other to
receive. Receives block; the schedule guarantees that what a rank waits for comes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..backends import Device, DeviceLike
from ..core.tensor import Tensor
from ..nn import Module
from .replicate import OptimizerLike
from .schedules import SCHEDULES, TimelineEvent, forward_schedule

LossFn = Callable[[Any, Any], Tensor]


class MPIPipeline:
    """This rank's stage of a pipeline whose stages are the ranks of an MPI communicator.

    Parameters
    ----------
    stage : Module
        This rank's part of the model (rank ``r`` holds stage ``r``), moved to ``device``.
    chunks : int
        Micro-batches per batch.
    schedule : {"1f1b", "gpipe"}
    loss_fn : callable, optional
        ``loss_fn(output, target)``, used on the last rank; see :class:`Pipeline`.
    optimizer : Optimizer, optional
        Updates this rank's parameters at the end of :meth:`step`.
    loss_reduction : {"mean", "sum"}
    comm : mpi4py communicator, optional
        Default ``MPI.COMM_WORLD``.
    device : str or Device
        Where this rank's stage runs (default ``"cpu"``).

    Attributes
    ----------
    bytes_sent : int
        Bytes of activations and gradients this rank has sent, over all steps.
    last_timeline : list of TimelineEvent
        This rank's actions in the latest step (seconds since it began).

    Notes
    -----
    Every rank calls :meth:`step` with the same batch size: rank 0 reads ``x``, the last
    rank reads ``target`` (the others may pass None for what they do not use). An error
    on one rank leaves its neighbours waiting: run under ``mpiexec`` with
    ``distributed.init()`` (which aborts the whole job on an uncaught exception).

    Examples
    --------
    Run with ``mpiexec -n 2 python script.py``::

        from mpi4py import MPI
        rank = MPI.COMM_WORLD.Get_rank()
        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
        stage = split_model(model, ["cpu:1", "cpu:2"]).stages[rank].to("cpu")
        pipe = MPIPipeline(stage, chunks=4, loss_fn=nn.MSELoss())
        loss = pipe.step(x, target)       # the same value on every rank
    """

    def __init__(
        self,
        stage: Module,
        chunks: int,
        schedule: str = "1f1b",
        loss_fn: LossFn | None = None,
        *,
        optimizer: OptimizerLike | None = None,
        loss_reduction: str = "mean",
        comm: Any = None,
        device: DeviceLike = "cpu",
    ) -> None:
        if comm is None:
            from mpi4py import MPI

            comm = MPI.COMM_WORLD
        if schedule not in SCHEDULES:
            raise ValueError(f"schedule must be one of {sorted(SCHEDULES)}, got {schedule!r}")
        if not isinstance(chunks, int) or chunks < 1:
            raise ValueError(f"chunks must be a positive int, got {chunks!r}")
        self.comm = comm
        self.rank: int = int(comm.Get_rank())
        self.size: int = int(comm.Get_size())
        self.device = Device(device)
        self.stage = stage.to(self.device)
        self.chunks, self.schedule, self.loss_fn = chunks, schedule, loss_fn
        self.optimizer, self.loss_reduction = optimizer, loss_reduction
        self.bytes_sent = 0
        self.last_timeline: list[TimelineEvent] = []

    @property
    def is_first(self) -> bool:
        """Whether this rank reads the input."""
        return self.rank == 0

    @property
    def is_last(self) -> bool:
        """Whether this rank computes the loss (and the outputs)."""
        return self.rank == self.size - 1

    def step(self, x: Tensor | None, target: Tensor | None) -> float:
        """Forward and backward of one batch, then ``optimizer.step()`` if given.

        Returns
        -------
        float
            The whole batch's loss, on every rank.

        Raises
        ------
        ValueError
            On every rank, if the batch has fewer samples than ``chunks``.
        """
        if self.is_last and self.loss_fn is None:
            raise ValueError("MPIPipeline.step needs a loss_fn on the last rank")
        n = self._batch_size(x)
        sizes = self._sizes(n)
        weights = [k / n if self.loss_reduction == "mean" else 1.0 for k in sizes]
        if self.optimizer is not None:
            for p in self.stage.parameters():
                p.grad = None
        row = SCHEDULES[self.schedule](self.size, len(sizes))[self.rank]
        losses = self._run(row, x, target, sizes, weights, training=True)
        if self.optimizer is not None:
            self.optimizer.step()
        total = sum(w * losses[i] for i, w in enumerate(weights)) if self.is_last else None
        return float(self.comm.bcast(total, root=self.size - 1))

    def forward(self, x: Tensor | None) -> Tensor | None:
        """Inference through the ranks: the output on the last rank (None elsewhere)."""
        from ..core.grad_mode import no_grad
        from ..ops.shape import cat

        n = self._batch_size(x)
        sizes = self._sizes(n, clip=True)
        outputs: dict[int, Tensor] = {}
        with no_grad():
            row = forward_schedule(self.size, len(sizes))[self.rank]
            self._run(row, x, None, sizes, [1.0] * len(sizes), training=False, outputs=outputs)
        return cat([outputs[i] for i in range(len(sizes))], dim=0) if self.is_last else None

    # ------------------------------------------------------------ the schedule
    def _run(  # noqa: C901  (one branch per action of the schedule, as in Pipeline)
        self,
        row: list[Any],
        x: Tensor | None,
        target: Tensor | None,
        sizes: list[int],
        weights: list[float],
        training: bool,
        outputs: dict[int, Tensor] | None = None,
    ) -> dict[int, float]:
        from time import perf_counter

        starts = [sum(sizes[:i]) for i in range(len(sizes) + 1)]
        held: dict[int, tuple[Tensor, Tensor]] = {}
        losses: dict[int, float] = {}
        pending: list[Any] = []
        events: list[TimelineEvent] = []
        begin = perf_counter()
        for action in row:
            i = action.microbatch
            if action.kind == "F":
                if self.is_first:
                    assert x is not None
                    inp = x[starts[i] : starts[i + 1]].detach().to(self.device)
                    tick = perf_counter()
                else:
                    received = self.comm.recv(source=self.rank - 1, tag=2 * i)
                    tick = perf_counter()
                    inp = Tensor._from_data(_canonical(received), device=self.device)
                    if training:
                        inp.requires_grad_(True)
                out = self.stage(inp)
                if self.is_last and training:
                    assert self.loss_fn is not None and target is not None
                    part = target[starts[i] : starts[i + 1]].to(self.device)
                    loss = self.loss_fn(out, part)
                    losses[i] = float(loss.item())
                    out = loss * weights[i]
                elif self.is_last and outputs is not None:
                    outputs[i] = out
                else:
                    pending.append(self._send(out, self.rank + 1, 2 * i))
                if training:
                    held[i] = (inp, out)
            else:
                grad = None
                if not self.is_last:
                    received = self.comm.recv(source=self.rank + 1, tag=2 * i + 1)
                    grad = Tensor._from_data(_canonical(received), device=self.device)
                tick = perf_counter()
                inp, out = held.pop(i)
                out.backward(grad)
                if not self.is_first:
                    assert inp.grad is not None
                    pending.append(self._send(inp.grad, self.rank - 1, 2 * i + 1))
            events.append(
                TimelineEvent(
                    self.rank,
                    i,
                    action.kind,
                    tick - begin,
                    perf_counter() - begin,
                    f"rank {self.rank}",
                )
            )
        for request in pending:
            request.wait()
        self.last_timeline = events
        return losses

    def _send(self, tensor: Tensor, dest: int, tag: int) -> Any:
        array = tensor.detach().to("cpu").array
        self.bytes_sent += int(array.nbytes)
        return self.comm.isend(array, dest=dest, tag=tag)

    def _batch_size(self, x: Tensor | None) -> int:
        n = len(x) if self.is_first and x is not None else None
        found: int | None = self.comm.bcast(n, root=0)
        if found is None:
            raise ValueError("MPIPipeline: rank 0 needs the input batch x")
        return found

    def _sizes(self, n: int, clip: bool = False) -> list[int]:
        chunks = min(self.chunks, n) if clip else self.chunks
        if n < chunks:
            raise ValueError(
                f"a batch of {n} sample(s) cannot be cut into chunks={chunks} micro-batches: "
                f"each needs at least one sample; use chunks <= {n} or a larger batch"
            )
        base, extra = divmod(n, chunks)
        return [base + 1 if i < extra else base for i in range(chunks)]


def _canonical(array: Any) -> Any:
    """``array`` viewed with NumPy's own instance of its dtype (an unpickled array carries
    an equal but distinct dtype object, which identity checks would refuse).
    """
    import numpy as np

    return array.view(np.dtype(array.dtype.name))
