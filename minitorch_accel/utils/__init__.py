"""Utilities: gradient checks, timing, the environment report."""

from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .timing import BenchmarkResult, Timer, benchmark

__all__ = [
    "BenchmarkResult",
    "GradcheckError",
    "Timer",
    "benchmark",
    "data",
    "gradcheck",
    "gradgradcheck",
]

from . import data
