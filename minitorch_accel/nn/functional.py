"""Stateless layer functions, as ``torch.nn.functional``: ``import ... as F``.

Examples
--------
>>> import minitorch_accel as mta
>>> import minitorch_accel.nn.functional as F
>>> x = mta.ones(2, 3)
>>> F.linear(x, mta.ones(4, 3), mta.zeros(4)).shape
(2, 4)
"""

from __future__ import annotations

from typing import Any

from ..core import autocast_state
from ..core.tensor import Tensor
from ..ops.activation import elu, gelu, leaky_relu, silu
from ..ops.conv1d import conv1d
from ..ops.dropout import dropout
from ..ops.elementwise import relu, sigmoid, tanh
from ..ops.layer_norm import embedding, group_norm, layer_norm
from ..ops.linear import Linear
from ..ops.loss import cross_entropy, mse_loss, nll_loss
from ..ops.norm import batch_norm
from ..ops.reduce import log_softmax, softmax


def _missing(name: str, module: str, error: ModuleNotFoundError) -> Any:
    def unavailable(*args: Any, **kwargs: Any) -> Tensor:
        raise RuntimeError(f"{name} is unavailable: {module} could not be imported ({error})")

    unavailable.__name__ = name
    unavailable.__doc__ = f"Unavailable: {module} could not be imported."
    return unavailable


try:
    from ..ops.conv import conv2d
except ModuleNotFoundError as exc:  # only a missing ops.conv; errors inside it propagate
    if exc.name != "minitorch_accel.ops.conv":
        raise
    conv2d = _missing("conv2d", "minitorch_accel.ops.conv", exc)

try:
    from ..ops.pool import adaptive_avg_pool2d, avg_pool2d, max_pool2d
except ModuleNotFoundError as exc:
    if exc.name != "minitorch_accel.ops.pool":
        raise
    adaptive_avg_pool2d = _missing("adaptive_avg_pool2d", "minitorch_accel.ops.pool", exc)
    avg_pool2d = _missing("avg_pool2d", "minitorch_accel.ops.pool", exc)
    max_pool2d = _missing("max_pool2d", "minitorch_accel.ops.pool", exc)


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """The affine map ``input @ weight.T + bias``.

    Parameters
    ----------
    input : Tensor
        (..., in_features).
    weight : Tensor
        (out_features, in_features).
    bias : Tensor, optional
        (out_features,).

    Returns
    -------
    Tensor
        (..., out_features).

    Raises
    ------
    ValueError
        If the shapes do not fit (all of them are named).
    """
    if weight.ndim != 2 or input.ndim < 1 or input.shape[-1] != weight.shape[1]:
        raise ValueError(
            f"linear: input of shape {input.shape} does not fit a weight of shape "
            f"{weight.shape} (expected input (..., {weight.shape[-1]}))"
        )
    if bias is not None and bias.shape != (weight.shape[0],):
        raise ValueError(
            f"linear: bias of shape {bias.shape} does not fit weight {weight.shape}; "
            f"expected ({weight.shape[0]},)"
        )
    if autocast_state.state.dtype is not None:  # inside amp.autocast: float16 compute
        input, weight, bias = autocast_state.to_compute_dtype(input, weight, bias)  # type: ignore[assignment]
    if input.dtype is not weight.dtype and input.dtype != weight.dtype:
        raise TypeError(
            f"linear: input is {input.dtype} but weight is {weight.dtype}; "
            "convert one with .to(dtype=...)"
        )
    return Linear.apply(input, weight, bias)


__all__ = [
    "adaptive_avg_pool2d",
    "avg_pool2d",
    "batch_norm",
    "conv2d",
    "cross_entropy",
    "dropout",
    "linear",
    "log_softmax",
    "max_pool2d",
    "mse_loss",
    "nll_loss",
    "relu",
    "softmax",
    "conv1d",
    "elu",
    "embedding",
    "gelu",
    "group_norm",
    "layer_norm",
    "leaky_relu",
    "sigmoid",
    "silu",
    "tanh",
]
