"""The environment report printed by ``python -m minitorch_accel info``."""

from __future__ import annotations

import os
import platform
import sys
from typing import Any

import numpy as np

from .. import __version__, backends


def _version(module: str) -> str:
    try:
        mod: Any = __import__(module)
    except Exception:
        return "not installed"
    return str(getattr(mod, "__version__", "installed"))


def blas_name() -> str:
    """The BLAS library NumPy uses for matrix multiplication (best effort)."""
    try:
        config: Any = np.show_config(mode="dicts")
        blas = config["Build Dependencies"]["blas"]
        return f"{blas.get('name', '?')} {blas.get('version', '')}".strip()
    except Exception:
        return "unknown"


def report() -> str:
    """A multi-line report: versions, backends and the devices found."""
    lines = [
        f"minitorch_accel {__version__}",
        f"python          {sys.version.split()[0]} ({platform.platform()})",
        f"numpy           {np.__version__} (BLAS: {blas_name()})",
        f"cpu cores       {os.cpu_count()}",
    ]
    for module in ("mpi4py", "tqdm", "matplotlib", "torch"):
        lines.append(f"{module:<15} {_version(module)}")
    lines.append("backends:")
    for name in backends.registered():
        try:
            backend = backends.get(name)
        except (RuntimeError, ImportError) as exc:
            lines.append(f"  {name:<6} unavailable: {exc}")
            continue
        lines.append(f"  {name:<6} available: {backend.describe()}")
    return "\n".join(lines)
