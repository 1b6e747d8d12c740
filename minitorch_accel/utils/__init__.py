"""Utilities: gradient checks, timing, the environment report, activation checkpointing."""

from .checkpoint import checkpoint, checkpoint_sequential
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .timing import BenchmarkResult, Timer, benchmark

__all__ = [
    "BenchmarkResult",
    "GradcheckError",
    "Timer",
    "benchmark",
    "checkpoint",
    "checkpoint_sequential",
    "gradcheck",
    "gradgradcheck",
]
