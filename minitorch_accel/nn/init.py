"""Weight initialization, in place, as ``torch.nn.init``.

Random values are drawn on the host from the host generator (seeded by
:func:`minitorch_accel.manual_seed`) and then copied to the tensor's device, so a model
starts from the same weights whichever device it lives on.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.factories import host_generator
from ..core.grad_mode import no_grad
from ..core.tensor import Tensor

_LINEAR = (
    "linear",
    "conv1d",
    "conv2d",
    "conv3d",
    "sigmoid",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
)


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for a nonlinearity (as ``torch.nn.init.calculate_gain``).

    ``1`` for linear/conv/sigmoid, ``5/3`` for tanh, ``sqrt(2)`` for relu,
    ``sqrt(2 / (1 + a**2))`` for leaky_relu with slope ``a`` (default 0.01), ``3/4``
    for selu.
    """
    if nonlinearity in _LINEAR:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3.0
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        if isinstance(slope, bool) or not isinstance(slope, (int, float)):
            raise ValueError(f"negative_slope {slope!r} is not a valid number")
        return math.sqrt(2.0 / (1.0 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4.0
    raise ValueError(f"unsupported nonlinearity {nonlinearity!r}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """``(fan_in, fan_out)`` of a weight: (out, in) for a linear layer, and
    (out, in, *kernel) for a convolution, whose kernel size multiplies both.
    """
    if tensor.ndim < 2:
        raise ValueError(
            f"fan in and fan out need a tensor of at least 2 dims, got shape {tensor.shape}"
        )
    receptive = int(np.prod(tensor.shape[2:])) if tensor.ndim > 2 else 1
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _fan(tensor: Tensor, mode: str) -> int:
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"mode must be 'fan_in' or 'fan_out', got {mode!r}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _fill_from_host(tensor: Tensor, values: np.ndarray) -> Tensor:
    with no_grad():
        tensor.copy_(Tensor(values.astype(tensor.dtype, copy=False)))
    return tensor


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0) -> Tensor:
    """Fill ``tensor`` with samples of U(a, b), in place."""
    return _fill_from_host(tensor, host_generator().uniform(a, b, size=tensor.shape))


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0) -> Tensor:
    """Fill ``tensor`` with samples of N(mean, std**2), in place."""
    return _fill_from_host(tensor, host_generator().normal(mean, std, size=tensor.shape))


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill ``tensor`` with ``val``, in place."""
    with no_grad():
        tensor.fill_(val)
    return tensor


def zeros_(tensor: Tensor) -> Tensor:
    """Fill ``tensor`` with zeros, in place."""
    return constant_(tensor, 0.0)


def ones_(tensor: Tensor) -> Tensor:
    """Fill ``tensor`` with ones, in place."""
    return constant_(tensor, 1.0)


def xavier_uniform_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    """Glorot uniform: U(-a, a) with ``a = gain * sqrt(6 / (fan_in + fan_out))``."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound)


def xavier_normal_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    """Glorot normal: N(0, std**2) with ``std = gain * sqrt(2 / (fan_in + fan_out))``."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)))


def kaiming_uniform_(
    tensor: Tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu"
) -> Tensor:
    """He uniform: U(-bound, bound) with ``bound = gain * sqrt(3 / fan)``.

    ``gain = calculate_gain(nonlinearity, a)``. PyTorch's default for Linear and Conv2d
    weights is ``a = sqrt(5)``, which gives ``bound = 1 / sqrt(fan_in)``.
    """
    gain = calculate_gain(nonlinearity, a)
    bound = gain * math.sqrt(3.0 / _fan(tensor, mode))
    return uniform_(tensor, -bound, bound)


def kaiming_normal_(
    tensor: Tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu"
) -> Tensor:
    """He normal: N(0, std**2) with ``std = gain / sqrt(fan)``."""
    gain = calculate_gain(nonlinearity, a)
    return normal_(tensor, 0.0, gain / math.sqrt(_fan(tensor, mode)))
