"""Several devices of one machine working on one model: four ways.

- **Data parallelism** splits the batch: :class:`TowerTrainer` (the explicit recipe)
  and :class:`DataParallel` (the same as a Module, ``nn.DataParallel``).
- **Model parallelism** splits the layers: :func:`split_model` / :class:`ModelParallel`.
- **Pipeline parallelism** splits the layers and the batch into micro-batches:
  :class:`Pipeline`, with the schedules of :mod:`~minitorch_accel.parallel.schedules`.
- **Tensor parallelism** splits each layer's weight: :class:`ColumnParallelLinear`,
  :class:`RowParallelLinear`.

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
from .data_parallel import DataParallel
from .model_parallel import ModelParallel, split_model
from .mpi_pipeline import MPIPipeline
from .pipeline import Pipeline
from .reduce import DeviceReducer, HostLink, weighted_sum
from .replicate import replicate, replicate_optimizer, shard_sizes, split_batch
from .schedules import (
    Action,
    TimelineEvent,
    bubble_fraction,
    durations_of,
    gpipe_schedule,
    one_f_one_b_schedule,
    peak_in_flight,
    simulate,
    theoretical_bubble,
)
from .tensor_parallel import ColumnParallelLinear, RowParallelLinear, TensorParallelMLP
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
    "Action",
    "ColumnParallelLinear",
    "RowParallelLinear",
    "TensorParallelMLP",
    "DataParallel",
    "MPIPipeline",
    "ModelParallel",
    "Pipeline",
    "TimelineEvent",
    "bubble_fraction",
    "durations_of",
    "gpipe_schedule",
    "one_f_one_b_schedule",
    "peak_in_flight",
    "simulate",
    "split_model",
    "theoretical_bubble",
]
