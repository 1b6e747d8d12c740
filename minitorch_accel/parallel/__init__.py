"""Data parallelism on one machine: one model, several devices, every batch split.

:class:`TowerTrainer` follows the tower recipe: master parameters on the host, a
replica per device, the batch split across devices, forward and backward on every
device at once (one thread each), gradients back as one flat buffer per device,
averaged with weights ``shard / batch``, and one update of the master parameters.
``reduce="device"`` averages between the devices instead (an NCCL all-reduce on
distinct GPUs) and keeps the parameters there.

>>> from minitorch_accel.parallel import shard_sizes
>>> shard_sizes(10, 3)
[4, 3, 3]
"""

from __future__ import annotations

from ..ops.flat import FlatLayout

# Model parallelism and nn.DataParallel
from .data_parallel import DataParallel  # noqa: E402
from .model_parallel import ModelParallel, split_model  # noqa: E402
from .reduce import DeviceReducer, HostLink, weighted_sum
from .replicate import replicate, replicate_optimizer, shard_sizes, split_batch
from .timings import PHASES, StepTimings, TimingLog, TowerTiming, format_table
from .tower import TowerTrainer

__all__ = [
    "PHASES",
    "DeviceReducer",
    "FlatLayout",
    "HostLink",
    "StepTimings",
    "TimingLog",
    "TowerTiming",
    "TowerTrainer",
    "format_table",
    "replicate",
    "replicate_optimizer",
    "shard_sizes",
    "split_batch",
    "weighted_sum",
    # model parallelism and nn.DataParallel
    "DataParallel",
    "ModelParallel",
    "split_model",
]
