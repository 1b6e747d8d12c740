"""Mixed precision: float16 compute with float32 master weights, and loss scaling."""

from .autocast import autocast, is_autocast_enabled
from .grad_scaler import GradScaler

__all__ = ["GradScaler", "autocast", "is_autocast_enabled"]
