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
from ..ops import activation as _activation
from ..ops import activation_more as _activation_more
from ..ops import dropout as _dropout
from ..ops import elementwise as _elementwise
from ..ops import torch_surface as _surface
from ..ops.activation import gelu, logsigmoid, softmin, softplus, softsign, tanhshrink
from ..ops.activation_more import hardshrink, prelu, softshrink
from ..ops.adaptive_max import adaptive_max_pool2d, adaptive_max_pool2d_with_indices
from ..ops.attention import scaled_dot_product_attention
from ..ops.channel_dropout import dropout1d, dropout2d, dropout3d
from ..ops.conv1d import conv1d
from ..ops.conv_transpose import conv_transpose1d, conv_transpose2d
from ..ops.distance import cosine_similarity, normalize, pairwise_distance
from ..ops.elementwise import sigmoid, tanh
from ..ops.fold import fold, unfold
from ..ops.instance_norm import instance_norm
from ..ops.layer_norm import embedding, group_norm, layer_norm
from ..ops.linear import Linear
from ..ops.loss import cross_entropy, mse_loss, nll_loss
from ..ops.lp_pool import lp_pool1d, lp_pool2d, lp_pool3d
from ..ops.margin_loss import (
    multi_margin_loss,
    multilabel_margin_loss,
    multilabel_soft_margin_loss,
    triplet_margin_loss,
    triplet_margin_with_distance_loss,
)
from ..ops.misc_layers import (
    alpha_dropout,
    bilinear,
    channel_shuffle,
    embedding_bag,
    feature_alpha_dropout,
    glu,
    local_response_norm,
    rms_norm,
)
from ..ops.norm import batch_norm
from ..ops.one_hot import one_hot
from ..ops.pad import pad
from ..ops.pointwise_loss import (
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cosine_embedding_loss,
    gaussian_nll_loss,
    hinge_embedding_loss,
    huber_loss,
    kl_div,
    l1_loss,
    margin_ranking_loss,
    poisson_nll_loss,
    smooth_l1_loss,
    soft_margin_loss,
)
from ..ops.pool1d import (
    adaptive_avg_pool1d,
    adaptive_max_pool1d,
    adaptive_max_pool1d_with_indices,
    avg_pool1d,
    max_pool1d,
    max_pool1d_with_indices,
)
from ..ops.pool3d import adaptive_avg_pool3d, avg_pool3d, max_pool3d, max_pool3d_with_indices
from ..ops.reduce import log_softmax, softmax
from ..ops.resample import (
    interpolate,
    pixel_shuffle,
    pixel_unshuffle,
    upsample,
    upsample_bilinear,
    upsample_nearest,
)
from ..ops.tensor_methods import write_in_place
from ..ops.torch_surface import gumbel_softmax, pdist
from ..ops.unpool import max_unpool1d, max_unpool2d, max_unpool3d


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
    from ..ops.pool import adaptive_avg_pool2d, avg_pool2d, max_pool2d, max_pool2d_with_indices
except ModuleNotFoundError as exc:
    if exc.name != "minitorch_accel.ops.pool":
        raise
    adaptive_avg_pool2d = _missing("adaptive_avg_pool2d", "minitorch_accel.ops.pool", exc)
    avg_pool2d = _missing("avg_pool2d", "minitorch_accel.ops.pool", exc)
    max_pool2d = _missing("max_pool2d", "minitorch_accel.ops.pool", exc)
    max_pool2d_with_indices = _missing("max_pool2d_with_indices", "minitorch_accel.ops.pool", exc)


def _apply(op: Any, input: Tensor, inplace: bool, name: str, saves_input: bool = True) -> Tensor:
    """``op(input)``, or with ``inplace`` ``input`` made to hold it
    (:func:`~minitorch_accel.ops.tensor_methods.write_in_place`: computed out of place
    first, so ``inplace=True`` changes ``input`` as PyTorch does but saves no memory here).
    """
    if not inplace:
        return op(input)  # type: ignore[no-any-return]
    return write_in_place(input, op, f"{name}(inplace=True)", saves_input)


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """``max(input, 0)``; with ``inplace``, written into ``input`` as PyTorch does
    (computed out of place first: no memory is saved).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> import minitorch_accel.nn.functional as F
    >>> x = mta.tensor([-1.0, 2.0])
    >>> F.relu(x, inplace=True) is x, x.tolist()
    (True, [0.0, 2.0])
    """
    return _apply(_elementwise.relu, input, inplace, "relu", saves_input=False)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``input`` where ``input > 0``, else ``negative_slope * input``; ``inplace`` as
    :func:`relu`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.functional.leaky_relu(mta.tensor([-2.0, 3.0]), 0.1)
    tensor([-0.2,  3. ])
    """
    return _apply(lambda x: _activation.leaky_relu(x, negative_slope), input, inplace, "leaky_relu")


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``input`` where ``input > 0``, else ``alpha * (exp(input) - 1)``; ``inplace`` as
    :func:`relu`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.functional.elu(mta.tensor([0.0, 2.0]))
    tensor([0., 2.])
    """
    return _apply(lambda x: _activation.elu(x, alpha), input, inplace, "elu")


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """``input * sigmoid(input)``; ``inplace`` as :func:`relu`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.functional.silu(mta.tensor([0.0])).item()
    0.0
    """
    return _apply(_activation.silu, input, inplace, "silu")


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """:func:`minitorch_accel.ops.activation.selu`; ``inplace`` as :func:`relu`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.functional.selu(mta.tensor([0.0])).item()
    0.0
    """
    return _apply(_activation.selu, input, inplace, "selu")


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """:func:`minitorch_accel.ops.activation.celu`; ``inplace`` as :func:`relu`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.functional.celu(mta.tensor([2.0]), alpha=0.5).item()
    2.0
    """
    return _apply(lambda x: _activation.celu(x, alpha), input, inplace, "celu")


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """:func:`minitorch_accel.ops.activation.mish`; ``inplace`` as :func:`relu`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.functional.mish(mta.tensor([0.0])).item()
    0.0
    """
    return _apply(_activation.mish, input, inplace, "mish")


def hardtanh(
    input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False
) -> Tensor:
    """:func:`minitorch_accel.ops.activation_more.hardtanh`; ``inplace`` as :func:`relu`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> x = mta.tensor([-2.0, 0.5])
    >>> mta.nn.functional.hardtanh(x, inplace=True) is x, x.tolist()
    (True, [-1.0, 0.5])
    """
    return _apply(
        lambda x: _activation_more.hardtanh(x, min_val, max_val), input, inplace, "hardtanh"
    )


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """:func:`minitorch_accel.ops.activation_more.relu6`; ``inplace`` as :func:`relu`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.functional.relu6(mta.tensor([-1.0, 9.0])).tolist()
    [0.0, 6.0]
    """
    return _apply(_activation_more.relu6, input, inplace, "relu6")


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """:func:`minitorch_accel.ops.activation_more.hardsigmoid`; ``inplace`` as :func:`relu`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.functional.hardsigmoid(mta.tensor([0.0])).item()
    0.5
    """
    return _apply(_activation_more.hardsigmoid, input, inplace, "hardsigmoid")


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """:func:`minitorch_accel.ops.activation_more.hardswish`; ``inplace`` as :func:`relu`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.functional.hardswish(mta.tensor([3.0])).item()
    3.0
    """
    return _apply(_activation_more.hardswish, input, inplace, "hardswish")


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """:func:`minitorch_accel.ops.activation_more.threshold`; ``inplace`` as :func:`relu`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.functional.threshold(mta.tensor([0.5, 2.0]), 1.0, 0.0).tolist()
    [0.0, 2.0]
    """
    return _apply(
        lambda x: _activation_more.threshold(x, threshold, value), input, inplace, "threshold"
    )


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """:func:`minitorch_accel.ops.dropout.dropout`; ``inplace`` as :func:`relu`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> y = mta.nn.functional.dropout(mta.ones(1000), p=0.5)
    >>> sorted(set(y.tolist()))
    [0.0, 2.0]
    """
    return _apply(
        lambda x: _dropout.dropout(x, p, training), input, inplace, "dropout", saves_input=False
    )


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


# ---------------------------------------------------------------- in-place forms, rrelu,
# gumbel_softmax, pdist (the torch_surface helper's; ops in ops/torch_surface.py)
def relu_(input: Tensor) -> Tensor:
    """:func:`relu` in place: ``relu(input, inplace=True)``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> x = mta.tensor([-1.0, 2.0])
    >>> mta.nn.functional.relu_(x) is x, x.tolist()
    (True, [0.0, 2.0])
    """
    return relu(input, inplace=True)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """:func:`elu` in place.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.functional.elu_(mta.tensor([0.0, 2.0]))
    tensor([0., 2.])
    """
    return elu(input, alpha, inplace=True)


def selu_(input: Tensor) -> Tensor:
    """:func:`selu` in place.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.functional.selu_(mta.tensor([0.0]))
    tensor([0.])
    """
    return selu(input, inplace=True)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """:func:`celu` in place.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.functional.celu_(mta.tensor([2.0]), 0.5)
    tensor([2.])
    """
    return celu(input, alpha, inplace=True)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """:func:`leaky_relu` in place.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.functional.leaky_relu_(mta.tensor([-2.0, 3.0]), 0.5)
    tensor([-1.,  3.])
    """
    return leaky_relu(input, negative_slope, inplace=True)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """:func:`hardtanh` in place.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.functional.hardtanh_(mta.tensor([-2.0, 0.5]))
    tensor([-1. ,  0.5])
    """
    return hardtanh(input, min_val, max_val, inplace=True)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """:func:`threshold` in place.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.functional.threshold_(mta.tensor([0.5, 2.0]), 1.0, -1.0)
    tensor([-1.,  2.])
    """
    return _apply(
        lambda x: _activation_more.threshold(x, threshold, value), input, True, "threshold_"
    )


def rrelu(
    input: Tensor,
    lower: float = 1.0 / 8,
    upper: float = 1.0 / 3,
    training: bool = False,
    inplace: bool = False,
) -> Tensor:
    """:func:`minitorch_accel.ops.torch_surface.rrelu` (random slopes while
    ``training``); ``inplace`` as :func:`relu`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.functional.rrelu(mta.tensor([-2.0, 3.0]), 0.25, 0.75)
    tensor([-1.,  3.])
    """
    return _apply(lambda x: _surface.rrelu(x, lower, upper, training), input, inplace, "rrelu")


def rrelu_(
    input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False
) -> Tensor:
    """:func:`rrelu` in place.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> x = mta.tensor([-2.0, 3.0])
    >>> mta.nn.functional.rrelu_(x, 0.5, 0.5, training=True) is x, x.tolist()
    (True, [-1.0, 3.0])
    """
    return rrelu(input, lower, upper, training, inplace=True)


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
    "multi_margin_loss",
    "multilabel_margin_loss",
    "multilabel_soft_margin_loss",
    "triplet_margin_loss",
    "triplet_margin_with_distance_loss",
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
    "cosine_similarity",
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "normalize",
    "one_hot",
    "pad",
    "pairwise_distance",
    "celu",
    "hardshrink",
    "hardsigmoid",
    "hardswish",
    "hardtanh",
    "logsigmoid",
    "mish",
    "prelu",
    "relu6",
    "selu",
    "softmin",
    "softplus",
    "softshrink",
    "softsign",
    "tanhshrink",
    "threshold",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "cosine_embedding_loss",
    "gaussian_nll_loss",
    "hinge_embedding_loss",
    "huber_loss",
    "kl_div",
    "l1_loss",
    "margin_ranking_loss",
    "poisson_nll_loss",
    "smooth_l1_loss",
    "soft_margin_loss",
    "conv_transpose1d",
    "conv_transpose2d",
    "adaptive_max_pool2d",
    "adaptive_max_pool2d_with_indices",
    "fold",
    "interpolate",
    "pixel_shuffle",
    "pixel_unshuffle",
    "unfold",
    "upsample",
    "upsample_bilinear",
    "upsample_nearest",
    "alpha_dropout",
    "bilinear",
    "channel_shuffle",
    "embedding_bag",
    "feature_alpha_dropout",
    "glu",
    "instance_norm",
    "local_response_norm",
    "rms_norm",
    "scaled_dot_product_attention",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool1d_with_indices",
    "avg_pool1d",
    "avg_pool3d",
    "lp_pool1d",
    "lp_pool2d",
    "lp_pool3d",
    "max_pool1d",
    "max_pool1d_with_indices",
    "max_pool2d_with_indices",
    "max_pool3d",
    "max_pool3d_with_indices",
    "max_unpool1d",
    "max_unpool2d",
    "max_unpool3d",
    "celu_",
    "elu_",
    "gumbel_softmax",
    "hardtanh_",
    "leaky_relu_",
    "pdist",
    "relu_",
    "rrelu",
    "rrelu_",
    "selu_",
    "threshold_",
]
