"""Activation layers, as ``torch.nn``: each applies the function of
:mod:`~minitorch_accel.nn.functional` of the same name.
"""

from __future__ import annotations

from ..core.tensor import Tensor
from . import functional as F
from .module import Module


class Sigmoid(Module):
    """``1 / (1 + exp(-x))`` elementwise.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.Sigmoid()(mta.zeros(1)).item()
    0.5
    """

    def forward(self, input: Tensor) -> Tensor:
        """Apply :func:`~minitorch_accel.sigmoid`."""
        return F.sigmoid(input)


class Tanh(Module):
    """The hyperbolic tangent elementwise."""

    def forward(self, input: Tensor) -> Tensor:
        """Apply :func:`~minitorch_accel.tanh`."""
        return F.tanh(input)


class LeakyReLU(Module):
    """``x`` for ``x > 0``, else ``negative_slope * x``; ``inplace`` writes the result
    into the input.
    """

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input: Tensor) -> Tensor:
        """Apply :func:`~minitorch_accel.nn.functional.leaky_relu`."""
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        """The settings shown inside this layer's ``repr``."""
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class ELU(Module):
    """``x`` for ``x > 0``, else ``alpha * (exp(x) - 1)``; ``inplace`` writes the result
    into the input.
    """

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input: Tensor) -> Tensor:
        """Apply :func:`~minitorch_accel.nn.functional.elu`."""
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        """The settings shown inside this layer's ``repr``."""
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class GELU(Module):
    """``x * Phi(x)`` (``approximate="tanh"``: the tanh approximation)."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        """Apply :func:`~minitorch_accel.nn.functional.gelu`."""
        return F.gelu(input, self.approximate)

    def extra_repr(self) -> str:
        """The settings shown inside this layer's ``repr``."""
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """``x * sigmoid(x)``; ``inplace`` writes the result into the input."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        """Apply :func:`~minitorch_accel.nn.functional.silu`."""
        return F.silu(input, self.inplace)

    def extra_repr(self) -> str:
        """``inplace=True`` when set (as PyTorch prints it)."""
        return "inplace=True" if self.inplace else ""


class Softmax(Module):
    """``exp(x) / sum(exp(x))`` along ``dim``."""

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        """Apply :func:`~minitorch_accel.softmax`."""
        return F.softmax(input, self.dim)

    def extra_repr(self) -> str:
        """The settings shown inside this layer's ``repr``."""
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    """``log(softmax(x))`` along ``dim``, computed stably."""

    def forward(self, input: Tensor) -> Tensor:
        """Apply :func:`~minitorch_accel.log_softmax`."""
        return F.log_softmax(input, self.dim)
