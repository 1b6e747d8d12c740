"""Utilities: gradient checks, timing, the environment report, activation checkpointing, memory
estimates.
"""

from .checkpoint import checkpoint, checkpoint_sequential
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .memory_estimate import MemoryEstimate, memory_estimate
from .timing import BenchmarkResult, Timer, benchmark

__all__ = [
    "BenchmarkResult",
    "GradcheckError",
    "MemoryEstimate",
    "Timer",
    "benchmark",
    "checkpoint",
    "checkpoint_sequential",
    "data",
    "gradcheck",
    "gradgradcheck",
    "memory_estimate",
]

from . import data
