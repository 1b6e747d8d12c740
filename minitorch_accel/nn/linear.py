"""The fully connected layer."""

from __future__ import annotations

import math

from ..backends import DeviceLike
from ..core import factories
from ..core.convert import DTypeLike
from ..core.tensor import Tensor
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter


class Linear(Module):
    """``y = x @ weight.T + bias``.

    Parameters
    ----------
    in_features, out_features : int
        Sizes of the last dim of the input and of the output.
    bias : bool
        Learn an additive bias (default True).
    device, dtype : optional
        Where the parameters live and their dtype (default "cpu", float32).

    Attributes
    ----------
    weight : Parameter
        (out_features, in_features), initialized from U(-k, k) with
        ``k = 1 / sqrt(in_features)`` (``kaiming_uniform_`` with ``a = sqrt(5)``, as
        PyTorch).
    bias : Parameter or None
        (out_features,), from the same U(-k, k).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> layer = nn.Linear(3, 2)
    >>> layer(mta.ones(5, 3)).shape
    (5, 2)
    """

    weight: Parameter
    bias: Parameter | None

    def __init__(
        self,
        in_features: int,
        out_features: int,
        bias: bool = True,
        device: DeviceLike | None = None,
        dtype: DTypeLike = None,
    ) -> None:
        super().__init__()
        if in_features < 0 or out_features < 0:
            raise ValueError(
                f"Linear: sizes must be non-negative, got ({in_features}, {out_features})"
            )
        if in_features == 0:  # PyTorch warns and builds a layer that maps to its bias
            raise ValueError(
                "Linear: in_features must be at least 1, got 0 (a layer that reads no "
                "feature has nothing to learn from, and its initialization divides by it)"
            )
        self.in_features, self.out_features = in_features, out_features
        self.weight = Parameter(
            factories.empty(out_features, in_features, device=device, dtype=dtype)
        )
        self.bias = (
            Parameter(factories.empty(out_features, device=device, dtype=dtype)) if bias else None
        )
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw new initial weights (and bias) as the constructor does."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = 1.0 / math.sqrt(self.in_features) if self.in_features > 0 else 0.0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        """Apply the affine map to the last dim of ``input``."""
        shape = getattr(input, "shape", None)
        if shape is not None and (len(shape) == 0 or shape[-1] != self.in_features):
            raise ValueError(
                f"Linear({self.in_features}, {self.out_features}) expects input of shape "
                f"(N, {self.in_features}) (or (..., {self.in_features})), got {tuple(shape)}"
                + ("; flatten it first, e.g. x.flatten(1)" if len(shape) > 2 else "")
            )
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        """The settings shown inside this layer's ``repr``."""
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )
