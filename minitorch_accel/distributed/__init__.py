"""Data parallel across processes and machines, over MPI (mpi4py).

Run a script with ``mpiexec -n 2 python script.py``; in it, ``distributed.init()``, a
:class:`DistributedSampler` per rank, and :class:`DistributedTrainer` (or
:func:`broadcast_parameters` + :func:`allreduce_gradients` in your own loop).
"""

from .comm import (
    abort,
    allgather_object,
    allreduce_array,
    barrier,
    broadcast_array,
    broadcast_object,
    init,
    is_initialized,
    local_rank,
    rank,
    world_size,
)
from .fingerprint import check_same_model
from .sampler import DistributedSampler
from .sync import (
    allreduce_flat,
    allreduce_gradients,
    broadcast_parameters,
    pack,
    pack_gradients,
    unpack,
    unpack_gradients,
)
from .trainer import DistributedTrainer, load_checkpoint, save_checkpoint

__all__ = [
    "DistributedSampler",
    "DistributedTrainer",
    "abort",
    "allgather_object",
    "allreduce_array",
    "allreduce_flat",
    "allreduce_gradients",
    "barrier",
    "broadcast_array",
    "broadcast_object",
    "broadcast_parameters",
    "check_same_model",
    "init",
    "is_initialized",
    "local_rank",
    "load_checkpoint",
    "pack",
    "pack_gradients",
    "rank",
    "save_checkpoint",
    "unpack",
    "unpack_gradients",
    "world_size",
]
