"""More activations: ``leaky_relu``, ``elu``, ``silu``, ``gelu`` (and ``erf`` under it).

All but :class:`Erf` are compositions of differentiable ops, so their gradients (of
every order) come from those ops. ``erf`` has no NumPy function: :func:`erf_array`
computes it with its Taylor series near 0 and the asymptotic series of ``erfc`` far
from it, accurate to about 1e-10 in float64.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core.function import Function
from ..core.tensor import Tensor
from .elementwise import clamp, sigmoid, tanh, where
from .operands import _float_input

_TAYLOR_TERMS = 60  # x**(2n+1) / n! at |x| = 4 falls below 1e-13 of the largest term
_SWITCH = 4.0  # |x| beyond which the asymptotic series of erfc is used


def erf_array(xp: Any, x: Any) -> Any:
    """``erf(x)`` of a raw float array, through ``xp`` (computed in float64)."""
    x64 = x.astype(np.float64)
    a = xp.abs(x64)
    near = xp.minimum(a, _SWITCH)
    # erf(x) = 2/sqrt(pi) * sum_n (-1)^n x^(2n+1) / (n! (2n+1))
    term, total, square = near.copy(), near.copy(), near * near
    for n in range(1, _TAYLOR_TERMS):
        term *= -square / n
        total += term / (2 * n + 1)
    series = total * (2.0 / math.sqrt(math.pi))
    # erfc(x) ~ exp(-x^2) / (x sqrt(pi)) * (1 - 1/(2x^2) + 3/(2x^2)^2 - ...)
    far = xp.maximum(a, _SWITCH)
    inverse, step, tail_sum = 1.0 / (2.0 * far * far), xp.ones_like(far), xp.ones_like(far)
    for k in range(1, 9):
        step *= -(2 * k - 1) * inverse
        tail_sum += step
    tail = 1.0 - xp.exp(-far * far) / (far * math.sqrt(math.pi)) * tail_sum
    return (xp.where(a <= _SWITCH, series, tail) * xp.sign(x64)).astype(x.dtype)


class Erf(Function):
    """``erf(a)``: ``d/da = 2/sqrt(pi) exp(-a**2)``."""

    def forward(self, a: Any) -> Any:
        return erf_array(self.xp, a)

    def backward(self, grad: Tensor) -> Tensor:
        a = self.inputs[0]
        return grad * ((a * a * -1.0).exp() * (2.0 / math.sqrt(math.pi)))


def erf(a: Tensor) -> Tensor:
    """The error function ``2/sqrt(pi) * integral_0^a exp(-t^2) dt``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> round(mta.erf(mta.tensor([0.5], dtype=mta.float64)).item(), 10)
    0.5204998778
    """
    return Erf.apply(_float_input("erf", a))


def leaky_relu(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """``x`` where ``x > 0``, else ``negative_slope * x``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.functional.leaky_relu(mta.tensor([-2.0, 3.0]), 0.1)
    tensor([-0.2,  3. ])
    """
    return where(input > 0, input, input * negative_slope)


def elu(input: Tensor, alpha: float = 1.0) -> Tensor:
    """``x`` where ``x > 0``, else ``alpha * (exp(x) - 1)``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.functional.elu(mta.tensor([0.0, 2.0]))
    tensor([0., 2.])
    """
    negative = (clamp(input, max=0.0).exp() - 1.0) * alpha  # exp of x <= 0 only: no overflow
    return where(input > 0, input, negative)


def silu(input: Tensor) -> Tensor:
    """``x * sigmoid(x)`` (also called swish).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.functional.silu(mta.tensor([0.0])).item()
    0.0
    """
    return input * sigmoid(input)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """``x * Phi(x)``, ``Phi`` the standard normal CDF ``(1 + erf(x / sqrt(2))) / 2``;
    ``approximate="tanh"`` uses ``tanh(sqrt(2/pi) (x + 0.044715 x^3))`` for the erf.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> round(mta.nn.functional.gelu(mta.tensor([1.0])).item(), 5)
    0.84134
    """
    if approximate == "tanh":
        inner = (input + input * input * input * 0.044715) * math.sqrt(2.0 / math.pi)
        return input * (tanh(inner) + 1.0) * 0.5
    if approximate != "none":
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    return input * (erf(input * (1.0 / math.sqrt(2.0))) + 1.0) * 0.5
