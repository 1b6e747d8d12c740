"""Smooth activations: the ELU family (``elu``, ``selu``, ``celu``), ``silu``, ``gelu``
(and ``erf`` under it), ``softplus``, ``mish``, ``logsigmoid``, ``softsign``,
``tanhshrink``, ``softmin``, and ``leaky_relu``. The piecewise-linear ones are in
:mod:`~minitorch_accel.ops.activation_more`.

Where PyTorch has one fused kernel, the op here is one :class:`Function` too, whose
backward multiplies the incoming gradient once by the derivative, computed first
(``grad * f'(x)``, as PyTorch does). Written as a chain of ops instead, an infinite
``grad`` would meet ``inf - inf`` inside the chain and give NaN where PyTorch gives
``+-inf``. The derivative is built from differentiable ops, so second derivatives work.
Where PyTorch composes ops in Python (``softsign``, ``tanhshrink``, ``softmin``), the
same composition is used here, so NaN and infinities come out as in PyTorch. Integer
input is converted to float32 (PyTorch refuses it in its fused kernels).

``erf`` has no NumPy function: :func:`erf_array` computes it with its Taylor series
near 0 and the asymptotic series of ``erfc`` far from it, accurate to about 1e-10 in
float64.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core.function import Function
from ..core.tensor import Tensor
from .elementwise import clamp, sigmoid, tanh, where
from .operands import _float_input
from .reduce import implicit_softmax_dim, softmax

_TAYLOR_TERMS = 60  # x**(2n+1) / n! at |x| = 4 falls below 1e-13 of the largest term
_SWITCH = 4.0  # |x| beyond which the asymptotic series of erfc is used
_SELU_ALPHA = 1.6732632423543772848170429916717  # from Klambauer et al. (2017), as PyTorch
_SELU_SCALE = 1.0507009873554804934193349852946
_SQRT1_2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)  # the standard normal density at 0
_TANH_BETA = math.sqrt(2.0 / math.pi)  # gelu's tanh approximation: tanh(beta (x + kappa x^3))
_TANH_KAPPA = 0.044715


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
    # copysign, not a product with sign(x): erf(-0.0) is -0.0, as PyTorch's
    return xp.copysign(xp.where(a <= _SWITCH, series, tail), x64).astype(x.dtype)


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


def softplus_array(xp: Any, z: Any) -> Any:
    """``log(1 + exp(z))`` of a raw array as ``max(z, 0) + log1p(exp(-|z|))``: ``exp``
    never overflows.

    Examples
    --------
    >>> import numpy as np
    >>> softplus_array(np, np.array([-1000.0, 0.0, 1000.0])).round(4).tolist()
    [0.0, 0.6931, 1000.0]
    """
    return xp.maximum(z, 0) + xp.log1p(xp.exp(-xp.abs(z)))


def log_sigmoid_array(xp: Any, x: Any) -> Any:
    """``log(sigmoid(x))`` of a raw array as ``min(x, 0) - log1p(exp(-|x|))``: no
    overflow for any ``x``.

    Examples
    --------
    >>> import numpy as np
    >>> log_sigmoid_array(np, np.array([-1000.0, 1000.0])).tolist()
    [-1000.0, 0.0]
    """
    return xp.minimum(x, 0) - xp.log1p(xp.exp(-xp.abs(x)))


class Pointwise(Function):
    """An elementwise ``y = f(x)`` whose backward is ``grad * f'(x)``: subclasses give
    ``forward`` and ``derivative`` (``f'`` of the input Tensor, from differentiable ops).
    """

    def derivative(self, x: Tensor) -> Tensor:
        """``f'(x)``, built from differentiable ops."""
        raise NotImplementedError

    def backward(self, grad: Tensor) -> Tensor:
        return grad * self.derivative(self.inputs[0])


class Elu(Pointwise):
    """``scale * x`` where ``x > 0``, else ``scale * alpha * (exp(input_scale * x) - 1)``:
    ELU, SELU and CELU. As in PyTorch's per-element (and GPU) code the exponential
    branch is the one tested (``x <= 0``), so a NaN input gets the linear branch's
    gradient, ``scale`` (PyTorch's CPU vector path gives NaN there).
    """

    def forward(self, x: Any, *, alpha: float, scale: float, input_scale: float) -> Any:
        self.alpha, self.scale, self.input_scale = alpha, scale, input_scale
        xp = self.xp
        negative = x <= 0
        # expm1 of x <= 0 only (no overflow), and of -0.0 itself (-0.0, as PyTorch)
        curve = xp.expm1(xp.where(negative, x, 0) * input_scale) * (alpha * scale)
        return xp.where(negative, curve, x * scale)

    def derivative(self, x: Tensor) -> Tensor:
        k = self.input_scale
        curve = (clamp(x, max=0.0) * k).exp() * (self.alpha * self.scale * k)
        return where(x <= 0, curve, self.scale)


def elu(input: Tensor, alpha: float = 1.0) -> Tensor:
    """``x`` where ``x > 0``, else ``alpha * (exp(x) - 1)``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.functional.elu(mta.tensor([0.0, 2.0]))
    tensor([0., 2.])
    """
    return Elu.apply(_float_input("elu", input), alpha=alpha, scale=1.0, input_scale=1.0)


def selu(input: Tensor) -> Tensor:
    """``scale * elu(x, alpha)`` with the self-normalizing constants ``alpha ~ 1.6733``
    and ``scale ~ 1.0507`` (Klambauer et al., 2017).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> round(mta.nn.functional.selu(mta.tensor([1.0])).item(), 4)
    1.0507
    """
    x = _float_input("selu", input)
    return Elu.apply(x, alpha=_SELU_ALPHA, scale=_SELU_SCALE, input_scale=1.0)


def celu(input: Tensor, alpha: float = 1.0) -> Tensor:
    """``x`` where ``x > 0``, else ``alpha * (exp(x / alpha) - 1)``.

    Raises
    ------
    ValueError
        If ``alpha`` is 0 (it divides the input).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.functional.celu(mta.tensor([0.0, 2.0]), alpha=2.0)
    tensor([0., 2.])
    """
    if alpha == 0:
        raise ValueError("celu: alpha cannot be 0 (the input is divided by it)")
    x = _float_input("celu", input)
    return Elu.apply(x, alpha=alpha, scale=1.0, input_scale=1.0 / alpha)


def leaky_relu(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """``x`` where ``x > 0``, else ``negative_slope * x`` (a NaN input takes the second
    branch, as in PyTorch).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.functional.leaky_relu(mta.tensor([-2.0, 3.0]), 0.1)
    tensor([-0.2,  3. ])
    """
    return where(input > 0, input, input * negative_slope)


class Silu(Pointwise):
    """``x * sigmoid(x)``: ``d/dx = s (1 + x (1 - s))`` with ``s = sigmoid(x)``."""

    def forward(self, x: Any) -> Any:
        return x * (self.xp.tanh(x * 0.5) * 0.5 + 0.5)  # sigmoid as tanh: no overflow

    def derivative(self, x: Tensor) -> Tensor:
        s = sigmoid(x)
        return s * (x * (1.0 - s) + 1.0)


def silu(input: Tensor) -> Tensor:
    """``x * sigmoid(x)`` (also called swish).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.functional.silu(mta.tensor([0.0])).item()
    0.0
    """
    return Silu.apply(_float_input("silu", input))


class Gelu(Pointwise):
    """``x * Phi(x)``: ``d/dx = Phi(x) + x phi(x)`` (``phi`` the normal density), or the
    derivative of the tanh approximation.
    """

    def forward(self, x: Any, *, approximate: str) -> Any:
        self.approximate = approximate
        if approximate == "tanh":
            inner = (x + x * x * x * _TANH_KAPPA) * _TANH_BETA
            return x * 0.5 * (self.xp.tanh(inner) + 1)
        return x * 0.5 * (erf_array(self.xp, x * _SQRT1_2) + 1)

    def derivative(self, x: Tensor) -> Tensor:
        if self.approximate == "tanh":
            t = tanh((x + x * x * x * _TANH_KAPPA) * _TANH_BETA)
            inner_slope = (x * x * (3.0 * _TANH_KAPPA) + 1.0) * _TANH_BETA
            return (t + 1.0) * 0.5 + x * 0.5 * (1.0 - t * t) * inner_slope
        cdf = (erf(x * _SQRT1_2) + 1.0) * 0.5
        return cdf + x * ((x * x * -0.5).exp() * _INV_SQRT_2PI)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """``x * Phi(x)``, ``Phi`` the standard normal CDF ``(1 + erf(x / sqrt(2))) / 2``;
    ``approximate="tanh"`` uses ``tanh(sqrt(2/pi) (x + 0.044715 x^3))`` for the erf.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> round(mta.nn.functional.gelu(mta.tensor([1.0])).item(), 5)
    0.84134
    """
    if approximate not in ("none", "tanh"):
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    return Gelu.apply(_float_input("gelu", input), approximate=approximate)


class Softplus(Pointwise):
    """``log(1 + exp(beta x)) / beta``, and ``x`` itself where ``beta x > threshold``:
    ``d/dx = sigmoid(beta x)`` (1 above the threshold).
    """

    def forward(self, x: Any, *, beta: float, threshold: float) -> Any:
        self.beta, self.threshold = beta, threshold
        xp = self.xp
        bx = x * beta
        return xp.where(bx > threshold, x, softplus_array(xp, bx) / beta)

    def derivative(self, x: Tensor) -> Tensor:
        bx = x * self.beta
        return where(bx > self.threshold, 1.0, sigmoid(bx))


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta * x)) / beta``, a smooth ReLU; linear (``x``) where
    ``beta * x > threshold``, as PyTorch.

    Computed as ``max(z, 0) + log1p(exp(-|z|))`` (``z = beta * x``), which never
    overflows: where PyTorch's ``log1p(exp(z))`` overflows to inf (a ``threshold``
    raised above about 88 in float32), this gives the finite value.

    Raises
    ------
    ValueError
        If ``beta`` is 0 (PyTorch returns inf everywhere).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> round(mta.nn.functional.softplus(mta.tensor([0.0])).item(), 4)
    0.6931
    """
    if beta == 0:
        raise ValueError("softplus: beta must not be 0 (the result is divided by it)")
    return Softplus.apply(_float_input("softplus", input), beta=beta, threshold=threshold)


class Mish(Pointwise):
    """``x * tanh(softplus(x))``: ``d/dx = t + x sigmoid(x) (1 - t**2)``, ``t`` the tanh."""

    def forward(self, x: Any) -> Any:
        return x * self.xp.tanh(softplus_array(self.xp, x))

    def derivative(self, x: Tensor) -> Tensor:
        t = tanh(softplus(x))
        return t + x * sigmoid(x) * (1.0 - t * t)


def mish(input: Tensor) -> Tensor:
    """``x * tanh(softplus(x))`` (Misra, 2019).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> round(mta.nn.functional.mish(mta.tensor([1.0])).item(), 4)
    0.8651
    """
    return Mish.apply(_float_input("mish", input))


class LogSigmoid(Pointwise):
    """``log(sigmoid(x)) = min(x, 0) - log(1 + exp(-|x|))``: ``d/dx = sigmoid(-x)``."""

    def forward(self, x: Any) -> Any:
        return log_sigmoid_array(self.xp, x)

    def derivative(self, x: Tensor) -> Tensor:
        return sigmoid(-x)


def logsigmoid(input: Tensor) -> Tensor:
    """``log(1 / (1 + exp(-x)))``, computed without overflow for large ``|x|``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.functional.logsigmoid(mta.tensor([-1000.0, 1000.0])).tolist()
    [-1000.0, 0.0]
    """
    return LogSigmoid.apply(_float_input("logsigmoid", input))


def softsign(input: Tensor) -> Tensor:
    """``x / (1 + |x|)`` (the same composition as PyTorch's).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.functional.softsign(mta.tensor([-3.0, 1.0]))
    tensor([-0.75,  0.5 ])
    """
    input = _float_input("softsign", input)
    return input / (input.abs() + 1.0)


def tanhshrink(input: Tensor) -> Tensor:
    """``x - tanh(x)`` (the same composition as PyTorch's).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.functional.tanhshrink(mta.tensor([0.0])).item()
    0.0
    """
    input = _float_input("tanhshrink", input)
    return input - tanh(input)


def softmin(
    input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None
) -> Tensor:
    """``softmax(-x)`` along ``dim``: weights that favour the smallest values.

    ``dtype`` converts the input first; without ``dim`` PyTorch's old implicit choice
    applies (with its warning).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.functional.softmin(mta.tensor([1.0, 1.0]), dim=0)
    tensor([0.5, 0.5])
    """
    input = _float_input("softmin", input)
    if dim is None:
        dim = implicit_softmax_dim("softmin", input.ndim, _stacklevel)
    if dtype is not None:
        input = input.to(dtype=dtype)
    return softmax(-input, dim)
