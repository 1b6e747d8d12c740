"""One data-parallel training step across processes, and rank-0 checkpoints."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from ..backends import Device, DeviceLike
from ..tensor import Tensor
from . import comm
from .fingerprint import check_same_model
from .sync import allreduce_flat, broadcast_parameters, pack_gradients, unpack_gradients


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
    """

    def __init__(
        self,
        model: Any,
        loss_fn: Callable[[Tensor, Tensor], Tensor],
        optimizer: Any,
        device: DeviceLike = "cpu",
    ) -> None:
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
        # one message: every gradient times this rank's batch size, the batch size, the loss
        flat = pack_gradients(params, extra=(1.0, float(loss.item())))
        flat.data *= local
        allreduce_flat(flat)
        flat.data /= float(flat.data[-2])  # the total batch size over all ranks
        unpack_gradients(params, flat)
        self.optimizer.step()
        return float(flat.data[-1])


def save_checkpoint(obj: Any, path: str | os.PathLike[str]) -> None:
    """Rank 0 writes ``obj`` (atomically, see :func:`minitorch_accel.save`); every rank
    waits until the file is complete."""
    from ..serialization import save

    if comm.rank() == 0:
        save(obj, path)
    if comm.is_initialized():
        comm.barrier()


def load_checkpoint(path: str | os.PathLike[str], map_location: DeviceLike | None = None) -> Any:
    """Every rank reads the checkpoint (a file visible to all of them). The world size
    may differ from the run that wrote it: model and optimizer state are the same on
    every rank, and :class:`DistributedSampler` re-shards the data."""
    from ..serialization import load

    return load(path, map_location=map_location)
