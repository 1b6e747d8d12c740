"""More elementwise math, as PyTorch has it: rounding (``floor``, ``round`` ...), logs
and exponentials in other bases, hyperbolic and inverse trigonometric functions,
``erfc``/``erfinv``, and binary ops (``atan2``, ``hypot``, ``lerp``, ``logaddexp``,
``xlogy``, ``copysign`` ...), with ``nan_to_num``.

Each op is one small :class:`~minitorch_accel.core.function.Function` (forward on raw
arrays, backward in Tensor ops, so second derivatives work) or a composition of
existing ops. Every backward is PyTorch's formula written in the same order (from its
``derivatives.yaml``), so NaN, inf and zeros come out as PyTorch's at non-finite points.

Dtypes are PyTorch's: integer and bool inputs of the float functions become float32;
the rounding functions keep integer dtypes (and refuse bool, as PyTorch); composite
float16 formulas are computed in float32 and rounded once, as PyTorch's CPU kernels do.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core.defaults import get_default_dtype
from ..core.function import Function
from ..core.tensor import Tensor
from . import unary as _unary
from .activation import erf as erf  # re-exported: Tensor.erf
from .activation import erf_array
from .bitwise import NotDifferentiable
from .elementwise import clamp, div, masked_grad, pow, where
from .operands import (
    Operand,
    _float_input,
    _tensors_or_numbers,
    as_operand,
    common_operands,
    number_as_tensor,
    result_type,
)

_LN2 = 0.6931471805599453
_LN10 = 2.3025850929940456
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_CF_DEPTH = 60  # erfc's continued fraction: relative error below 1e-15 from x = 2 on


def _opmath(a: Any) -> Any:
    """``a`` in the precision PyTorch's CPU kernels compute in: float32 for float16."""
    return a.astype(np.float32) if a.dtype == np.float16 else a


def _tensor(array: Any, like: Tensor) -> Tensor:
    """A constant (no gradient) on ``like``'s device."""
    return Tensor._make(array, like.device, False, None)


def _never(fn: Function) -> Any:
    """A bool mask that keeps nothing: :func:`masked_grad` with it gives exact zeros."""
    return fn.xp.zeros((), dtype=bool)


# ------------------------------------------------------------------ rounding
class Rounding(Function):
    """Base of the rounding ops: their gradient is 0 (exactly, even for an infinite
    incoming gradient), as PyTorch's ``zeros_like(grad)``.
    """

    saves_inputs = False

    def backward(self, grad: Tensor) -> Tensor:
        return masked_grad(grad, _never(self))


class Floor(Rounding):
    """The largest integer ``<= a``."""

    def forward(self, a: Any) -> Any:
        return self.xp.floor(a)


class Ceil(Rounding):
    """The smallest integer ``>= a``."""

    def forward(self, a: Any) -> Any:
        return self.xp.ceil(a)


class Trunc(Rounding):
    """``a`` rounded toward zero."""

    def forward(self, a: Any) -> Any:
        return self.xp.trunc(a)


class Round(Rounding):
    """``a`` rounded to ``decimals`` places, halves to even: ``rint(a * 10**d) / 10**d``
    (``rint(a / 10**-d) * 10**-d`` for negative ``d``), as PyTorch computes it.
    """

    def forward(self, a: Any, *, decimals: int) -> Any:
        if decimals == 0:
            return self.xp.rint(a)
        x = _opmath(a)
        scale = x.dtype.type(10.0 ** abs(decimals))
        with np.errstate(over="ignore", invalid="ignore"):
            if decimals > 0:
                return (self.xp.rint(x * scale) / scale).astype(a.dtype)
            return (self.xp.rint(x / scale) * scale).astype(a.dtype)


def _rounding(name: str, cls: type[Function], input: Tensor, **params: Any) -> Tensor:
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}: expected a Tensor, got {type(input).__name__}")
    if input.dtype.kind == "b":
        raise TypeError(f"{name}: not defined for bool tensors (as in PyTorch)")
    if input.dtype.kind in "iu":  # already whole: a copy, as PyTorch
        with input.device.guard():
            return _tensor(input.array.copy(), input)
    return cls.apply(input, **params)


def floor(input: Tensor) -> Tensor:
    """The largest integer ``<= input`` (integer tensors come back unchanged, as a
    copy; bool raises). Gradient 0.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.floor(mta.tensor([-1.5, 0.5, 2.0]))
    tensor([-2.,  0.,  2.])
    """
    return _rounding("floor", Floor, input)


def ceil(input: Tensor) -> Tensor:
    """The smallest integer ``>= input``. Gradient 0.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.ceil(mta.tensor([-1.5, 0.5, 2.0]))
    tensor([-1.,  1.,  2.])
    """
    return _rounding("ceil", Ceil, input)


def trunc(input: Tensor) -> Tensor:
    """``input`` rounded toward zero. Gradient 0.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.trunc(mta.tensor([-1.5, 0.5, 2.7]))
    tensor([-1.,  0.,  2.])
    """
    return _rounding("trunc", Trunc, input)


def fix(input: Tensor) -> Tensor:
    """Same as :func:`trunc`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.fix(mta.tensor([-1.5]))
    tensor([-1.])
    """
    return _rounding("fix", Trunc, input)


def round(input: Tensor, decimals: int = 0) -> Tensor:
    """``input`` rounded to ``decimals`` decimal places (negative: to tens, hundreds,
    ...), halves to the even neighbour, as PyTorch. Integer tensors only with
    ``decimals=0`` (as PyTorch). Gradient 0.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.round(mta.tensor([0.5, 1.5, 2.5, -0.5]))
    tensor([ 0.,  2.,  2., -0.])
    >>> mta.round(mta.tensor([1.2345, 1250.0], dtype=mta.float64), decimals=2).tolist()
    [1.23, 1250.0]
    """
    if isinstance(input, Tensor) and input.dtype.kind in "iu" and decimals != 0:
        raise TypeError(
            f"round: decimals={decimals} is not defined for {input.dtype} tensors (as in PyTorch)"
        )
    return _rounding("round", Round, input, decimals=int(decimals))


class Frac(Function):
    """``a - trunc(a)``: its gradient is ``grad`` (PyTorch's)."""

    saves_inputs = False

    def forward(self, a: Any) -> Any:
        return a - self.xp.trunc(a)

    def backward(self, grad: Tensor) -> Tensor:
        return grad


def frac(input: Tensor) -> Tensor:
    """The fractional part ``input - trunc(input)`` (sign of ``input``); float tensors
    only, as PyTorch. Gradient 1.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.frac(mta.tensor([-1.5, 2.25]))
    tensor([-0.5 ,  0.25])
    """
    if not isinstance(input, Tensor) or input.dtype.kind != "f":
        what = input.dtype if isinstance(input, Tensor) else type(input).__name__
        raise TypeError(f"frac: defined for float tensors only (as in PyTorch), got {what}")
    return Frac.apply(input)


# ------------------------------------------------------------------ signs
def sgn(input: Tensor) -> Tensor:
    """:func:`sign` (PyTorch's ``sgn`` differs from it only for complex numbers, which
    this package does not have).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.sgn(mta.tensor([-2, 0, 3]))
    tensor([-1,  0,  1])
    """
    return _unary.sign(input)


def signbit(input: Tensor) -> Tensor:
    """True where the sign bit is set: negative numbers, ``-0.0`` and ``-inf`` (a bool
    tensor, no gradient).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.signbit(mta.tensor([-1.0, -0.0, 0.0, 2.0]))
    tensor([ True,  True, False, False])
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"signbit: expected a Tensor, got {type(input).__name__}")
    xp, x = input.xp, input.array
    with input.device.guard():
        if x.dtype.kind == "f":
            return _tensor(xp.signbit(x), input)
        return _tensor(x < 0, input)  # integers (False for unsigned and bool)


class Copysign(Function):
    """``|a|`` with the sign of ``b``: ``d/da = grad * (out / a)`` (0 where ``a == 0``),
    ``d/db = 0``, as PyTorch's ``copysign_tensor_self_backward``.
    """

    saves_inputs = False  # backward needs only the ratio out / a, +-1 or 0

    def forward(self, a: Any, b: Any) -> Any:
        out = self.xp.copysign(a, b)
        with np.errstate(invalid="ignore", divide="ignore"):
            self.ratio = self.xp.where(a == 0, a.dtype.type(0), out / a)  # +-1, a constant
        return out

    def backward(self, grad: Tensor) -> tuple[Tensor, Tensor]:
        return grad * _tensor(self.ratio, grad), masked_grad(grad, _never(self))


def copysign(input: Operand, other: Operand) -> Tensor:
    """``|input|`` with the sign of ``other`` (``-0.0`` counts as negative); integers
    give float32, as PyTorch. Gradient: ``sign`` ratio for ``input``, 0 for ``other``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.copysign(mta.tensor([1.0, -2.0, 3.0]), mta.tensor([-1.0, 1.0, -0.0]))
    tensor([-1.,  2., -3.])
    """
    a, b = _float_operands("copysign", input, other)
    return Copysign.apply(a, b)


def positive(input: Tensor) -> Tensor:
    """``+input``: ``input`` itself (bool raises, as in PyTorch).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> x = mta.tensor([1.0, -2.0])
    >>> mta.positive(x) is x
    True
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"positive: expected a Tensor, got {type(input).__name__}")
    if input.dtype.kind == "b":
        raise TypeError("positive: the + operator is not defined for bool tensors (as in PyTorch)")
    return input


# ------------------------------------------------------------------ powers, logs, exponentials
def square(input: Tensor) -> Tensor:
    """``input * input`` (``input ** 2``); integers keep their dtype, bool gives int64,
    as PyTorch.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.square(mta.tensor([-3, 2]))
    tensor([9, 4])
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"square: expected a Tensor, got {type(input).__name__}")
    if input.dtype.kind == "b":
        input = input.to(dtype=np.int64)
    return pow(input, 2)


class Reciprocal(Function):
    """``1 / a``: ``d/da = -grad * out**2``."""

    saves_inputs = False
    saves_output = True

    def forward(self, a: Any) -> Any:
        with np.errstate(divide="ignore"):
            return self.xp.reciprocal(a)

    def backward(self, grad: Tensor) -> Tensor:
        out = self.output()
        return -grad * (out * out)


def reciprocal(input: Tensor) -> Tensor:
    """``1 / input`` (integers give float32).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.reciprocal(mta.tensor([2, 4]))
    tensor([0.5 , 0.25])
    """
    return Reciprocal.apply(_float_input("reciprocal", input))


class Log2(Function):
    """``log2(a)``: ``d/da = grad / (a ln 2)``."""

    def forward(self, a: Any) -> Any:
        with np.errstate(divide="ignore", invalid="ignore"):
            return self.xp.log2(a)

    def backward(self, grad: Tensor) -> Tensor:
        return grad / (self.inputs[0] * _LN2)


class Log10(Function):
    """``log10(a)``: ``d/da = grad / (a ln 10)``."""

    def forward(self, a: Any) -> Any:
        with np.errstate(divide="ignore", invalid="ignore"):
            return self.xp.log10(a)

    def backward(self, grad: Tensor) -> Tensor:
        return grad / (self.inputs[0] * _LN10)


class Expm1(Function):
    """``exp(a) - 1``: ``d/da = grad * (out + 1)``."""

    saves_inputs = False
    saves_output = True

    def forward(self, a: Any) -> Any:
        with np.errstate(over="ignore"):
            return self.xp.expm1(a)

    def backward(self, grad: Tensor) -> Tensor:
        return grad * (self.output() + 1.0)


class Exp2(Function):
    """``2 ** a``: ``d/da = grad * out * ln 2``."""

    saves_inputs = False
    saves_output = True

    def forward(self, a: Any) -> Any:
        with np.errstate(over="ignore"):
            return self.xp.exp2(a)

    def backward(self, grad: Tensor) -> Tensor:
        return grad * self.output() * _LN2


def log2(input: Tensor) -> Tensor:
    """The base-2 logarithm.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.log2(mta.tensor([1.0, 8.0]))
    tensor([0., 3.])
    """
    return Log2.apply(_float_input("log2", input))


def log10(input: Tensor) -> Tensor:
    """The base-10 logarithm.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.log10(mta.tensor([1.0, 100.0]))
    tensor([0., 2.])
    """
    return Log10.apply(_float_input("log10", input))


def expm1(input: Tensor) -> Tensor:
    """``exp(input) - 1``, accurate for small ``input``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.expm1(mta.tensor([0.0])).item()
    0.0
    """
    return Expm1.apply(_float_input("expm1", input))


def exp2(input: Tensor) -> Tensor:
    """``2 ** input``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.exp2(mta.tensor([0, 3]))
    tensor([1., 8.])
    """
    return Exp2.apply(_float_input("exp2", input))


# ------------------------------------------------------------ hyperbolic, inverse trigonometric
class Sinh(Function):
    """``sinh(a)``: ``d/da = grad * cosh(a)``."""

    def forward(self, a: Any) -> Any:
        with np.errstate(over="ignore"):
            return self.xp.sinh(a)

    def backward(self, grad: Tensor) -> Tensor:
        return grad * cosh(self.inputs[0])


class Cosh(Function):
    """``cosh(a)``: ``d/da = grad * sinh(a)``."""

    def forward(self, a: Any) -> Any:
        with np.errstate(over="ignore"):
            return self.xp.cosh(a)

    def backward(self, grad: Tensor) -> Tensor:
        return grad * sinh(self.inputs[0])


class Asin(Function):
    """``asin(a)``: ``d/da = grad * rsqrt(1 - a**2)``."""

    def forward(self, a: Any) -> Any:
        with np.errstate(invalid="ignore"):
            return self.xp.arcsin(a)

    def backward(self, grad: Tensor) -> Tensor:
        a = self.inputs[0]
        return grad * _unary.rsqrt(-a * a + 1.0)


class Acos(Function):
    """``acos(a)``: ``d/da = -grad * rsqrt(1 - a**2)``."""

    def forward(self, a: Any) -> Any:
        with np.errstate(invalid="ignore"):
            return self.xp.arccos(a)

    def backward(self, grad: Tensor) -> Tensor:
        a = self.inputs[0]
        return grad * -_unary.rsqrt(-a * a + 1.0)


class Atan(Function):
    """``atan(a)``: ``d/da = grad / (a**2 + 1)``."""

    def forward(self, a: Any) -> Any:
        return self.xp.arctan(a)

    def backward(self, grad: Tensor) -> Tensor:
        a = self.inputs[0]
        return grad / (a * a + 1.0)


class Asinh(Function):
    """``asinh(a)``: ``d/da = grad * rsqrt(a**2 + 1)``."""

    def forward(self, a: Any) -> Any:
        return self.xp.arcsinh(a)

    def backward(self, grad: Tensor) -> Tensor:
        a = self.inputs[0]
        return grad * _unary.rsqrt(a * a + 1.0)


class Acosh(Function):
    """``acosh(a)``: ``d/da = grad * rsqrt(a**2 - 1)``."""

    def forward(self, a: Any) -> Any:
        with np.errstate(invalid="ignore"):
            return self.xp.arccosh(a)

    def backward(self, grad: Tensor) -> Tensor:
        a = self.inputs[0]
        return grad * _unary.rsqrt(a * a - 1.0)


class Atanh(Function):
    """``atanh(a)``: ``d/da = grad / (1 - a**2)``."""

    def forward(self, a: Any) -> Any:
        with np.errstate(divide="ignore", invalid="ignore"):
            return self.xp.arctanh(a)

    def backward(self, grad: Tensor) -> Tensor:
        a = self.inputs[0]
        return grad / (1.0 - a * a)


def sinh(input: Tensor) -> Tensor:
    """The hyperbolic sine.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.sinh(mta.tensor([0.0])).item()
    0.0
    """
    return Sinh.apply(_float_input("sinh", input))


def cosh(input: Tensor) -> Tensor:
    """The hyperbolic cosine.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.cosh(mta.tensor([0.0])).item()
    1.0
    """
    return Cosh.apply(_float_input("cosh", input))


def asin(input: Tensor) -> Tensor:
    """The inverse sine (NaN outside ``[-1, 1]``).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.asin(mta.tensor([1.0], dtype=mta.float64)).round(decimals=6).item()
    1.570796
    """
    return Asin.apply(_float_input("asin", input))


def acos(input: Tensor) -> Tensor:
    """The inverse cosine (NaN outside ``[-1, 1]``).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.acos(mta.tensor([1.0])).item()
    0.0
    """
    return Acos.apply(_float_input("acos", input))


def atan(input: Tensor) -> Tensor:
    """The inverse tangent.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.atan(mta.tensor([1.0], dtype=mta.float64)).round(decimals=6).item()
    0.785398
    """
    return Atan.apply(_float_input("atan", input))


def asinh(input: Tensor) -> Tensor:
    """The inverse hyperbolic sine.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.asinh(mta.tensor([0.0])).item()
    0.0
    """
    return Asinh.apply(_float_input("asinh", input))


def acosh(input: Tensor) -> Tensor:
    """The inverse hyperbolic cosine (NaN below 1).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.acosh(mta.tensor([1.0])).item()
    0.0
    """
    return Acosh.apply(_float_input("acosh", input))


def atanh(input: Tensor) -> Tensor:
    """The inverse hyperbolic tangent (``+-inf`` at ``+-1``, NaN outside).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.atanh(mta.tensor([0.0, 1.0]))
    tensor([ 0., inf])
    """
    return Atanh.apply(_float_input("atanh", input))


# ------------------------------------------------------------------ erfc, erfinv
def erfc_array(xp: Any, x: Any) -> Any:
    """``1 - erf(x)`` of a raw float array, accurate in relative terms far out where
    ``1 - erf`` would cancel: ``1 - erf(x)`` for ``|x| < 2``; beyond, the continued
    fraction ``exp(-x^2) / sqrt(pi) / (x + (1/2) / (x + 1 / (x + (3/2) / (x + ...))))``
    and ``erfc(-x) = 2 - erfc(x)``. Computed in float64.

    Examples
    --------
    >>> import numpy as np
    >>> f"{float(erfc_array(np, np.array([5.0]))[0]):.10e}"  # 1 - erf(5) would give 0
    '1.5374597944e-12'
    """
    x64 = x.astype(np.float64)
    a = xp.maximum(xp.abs(x64), 2.0)
    fraction = a.copy()
    for k in range(_CF_DEPTH, 0, -1):
        fraction = a + (k / 2) / fraction
    with np.errstate(invalid="ignore", over="ignore"):
        tail = xp.exp(-a * a) / (math.sqrt(math.pi) * fraction)  # erfc(|x|), |x| >= 2
    tail = xp.where(x64 < 0, 2.0 - tail, tail)
    out = xp.where(xp.abs(x64) < 2.0, 1.0 - erf_array(xp, x64), tail)
    return xp.where(xp.isnan(x64), x64, out).astype(x.dtype)


def erfinv_array(xp: Any, y: Any) -> Any:
    """The inverse of ``erf`` of a raw float array: PyTorch's starting point (a
    rational approximation, central for ``|y| <= 0.7``, tail beyond), then two Newton
    steps on ``erf(x) = |y|``, written as ``erfc(x) = 1 - |y|`` in the tail (``erf``
    would lose the digits near ``+-1``). ``+-inf`` at ``+-1``, NaN outside. Computed in float64.

    Examples
    --------
    >>> import numpy as np
    >>> f"{float(erfinv_array(np, np.array([0.5]))[0]):.12f}"
    '0.476936276204'
    """
    y64 = y.astype(np.float64)
    s = xp.abs(y64)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = s * s  # the central approximation
        num = ((-0.140543331 * z + 0.914624893) * z - 1.645349621) * z + 0.886226899
        den = (((0.012229801 * z - 0.329097515) * z + 1.442710462) * z - 2.118377725) * z + 1.0
        central = s * num / den
        w = xp.sqrt(-xp.log((1.0 - xp.minimum(s, 1.0)) / 2.0))  # the tail approximation
        num = ((1.641345311 * w + 3.429567803) * w - 1.624906493) * w - 1.970840454
        tail = num / ((1.637067800 * w + 3.543889200) * w + 1.0)
        x = xp.where(s <= 0.7, central, tail)
        for _ in range(2):
            residual = xp.where(s <= 0.7, erf_array(xp, x) - s, (1.0 - s) - erfc_array(xp, x))
            x = x - residual / (_TWO_OVER_SQRT_PI * xp.exp(-x * x))
    x = xp.where(s == 1.0, np.inf, xp.where(s > 1.0, np.nan, x))
    x = xp.where(xp.isnan(y64), y64, x)
    return xp.copysign(x, y64).astype(y.dtype)


class Erfc(Function):
    """``erfc(a)``: ``d/da = -2/sqrt(pi) exp(-a**2) grad``."""

    def forward(self, a: Any) -> Any:
        return erfc_array(self.xp, a)

    def backward(self, grad: Tensor) -> Tensor:
        a = self.inputs[0]
        return (-(a * a)).exp() * -_TWO_OVER_SQRT_PI * grad


class Erfinv(Function):
    """``erfinv(a)``: ``d/da = sqrt(pi)/2 exp(out**2) grad``."""

    saves_inputs = False
    saves_output = True

    def forward(self, a: Any) -> Any:
        return erfinv_array(self.xp, a)

    def backward(self, grad: Tensor) -> Tensor:
        out = self.output()
        return (out * out).exp() * (0.5 * math.sqrt(math.pi)) * grad


def erfc(input: Tensor) -> Tensor:
    """The complementary error function ``1 - erf(input)``, accurate where it is tiny.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.erfc(mta.tensor([0.0])).item()
    1.0
    """
    return Erfc.apply(_float_input("erfc", input))


def erfinv(input: Tensor) -> Tensor:
    """The inverse error function: ``erf(erfinv(y)) == y`` on ``(-1, 1)``; ``+-inf``
    at ``+-1``, NaN outside.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.erfinv(mta.tensor([0.0, 1.0, 2.0]))
    tensor([ 0., inf, nan])
    """
    return Erfinv.apply(_float_input("erfinv", input))


# ------------------------------------------------------------------ logit, nan_to_num
class Logit(Function):
    """``log(p / (1 - p))``, ``p`` clamped to ``[eps, 1 - eps]`` when ``eps`` is given.
    Gradient as PyTorch's ``logit_backward`` kernel: ``grad / (p (1 - p))``,
    ``grad * inf`` at 0 and 1, NaN outside ``[0, 1]`` without ``eps``, 0 outside
    ``[eps, 1 - eps]`` with it.
    """

    def forward(self, a: Any, *, eps: float | None) -> Any:
        self.eps = eps
        p = _opmath(a)
        if eps is not None:
            p = self.xp.clip(p, eps, 1.0 - eps)
        with np.errstate(divide="ignore", invalid="ignore"):
            return self.xp.log(p / (1 - p)).astype(a.dtype)

    def backward(self, grad: Tensor) -> Tensor:
        p = self.inputs[0]
        lo, hi = (0.0, 1.0) if self.eps is None else (self.eps, 1.0 - self.eps)
        edge = (p.array == 0) | (p.array == 1)
        inner = where(_tensor(edge, p), grad * math.inf, grad / (p * (1.0 - p)))
        outside = _tensor((p.array < lo) | (p.array > hi), p)
        fill = math.nan if self.eps is None else 0.0
        return where(outside, _tensor(self.xp.asarray(fill, dtype=grad.dtype), grad), inner)


def logit(input: Tensor, eps: float | None = None) -> Tensor:
    """``log(p / (1 - p))``, the inverse of :func:`~minitorch_accel.sigmoid`; with
    ``eps``, ``p`` is clamped to ``[eps, 1 - eps]`` first.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.logit(mta.tensor([0.5, 0.0, 1.0]))
    tensor([  0., -inf,  inf])
    >>> mta.logit(mta.tensor([0.0], dtype=mta.float64), eps=0.1).round(decimals=4).item()
    -2.1972
    """
    return Logit.apply(_float_input("logit", input), eps=None if eps is None else float(eps))


class NanToNum(Function):
    """NaN and infinities replaced: the gradient is ``grad * isfinite(a)`` (PyTorch's
    product, so an infinite ``grad`` gives NaN at a replaced element).
    """

    saves_inputs = False

    def forward(self, a: Any, *, nan: float, posinf: float, neginf: float) -> Any:
        self.finite = self.xp.isfinite(a).astype(a.dtype)
        return self.xp.nan_to_num(a, nan=nan, posinf=posinf, neginf=neginf)

    def backward(self, grad: Tensor) -> Tensor:
        return grad * _tensor(self.finite, grad)


def nan_to_num(
    input: Tensor,
    nan: float = 0.0,
    posinf: float | None = None,
    neginf: float | None = None,
) -> Tensor:
    """``input`` with NaN replaced by ``nan``, ``+inf`` by ``posinf`` and ``-inf`` by
    ``neginf`` (default: the dtype's largest and smallest finite values). Integer and
    bool tensors come back unchanged (a copy).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nan_to_num(mta.tensor([float("nan"), float("inf"), -1.0]), posinf=9.0)
    tensor([ 0.,  9., -1.])
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"nan_to_num: expected a Tensor, got {type(input).__name__}")
    if input.dtype.kind != "f":
        with input.device.guard():
            return _tensor(input.array.copy(), input)
    limits = np.finfo(input.dtype)
    return NanToNum.apply(
        input,
        nan=float(nan),
        posinf=float(limits.max if posinf is None else posinf),
        neginf=float(limits.min if neginf is None else neginf),
    )


# ------------------------------------------------------------------ binary math
def _float_operands(name: str, a: Operand, b: Operand) -> tuple[Tensor, Tensor]:
    """Both operands as tensors of one float dtype: PyTorch's result type, the default
    float dtype (float32) where that is an integer or bool.
    """
    a, b = _tensors_or_numbers(a, b)
    dtype = result_type(a, b)
    a, b = common_operands(name, (a, b), dtype if dtype.kind == "f" else get_default_dtype())
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise ValueError(f"{name}: shapes {a.shape} and {b.shape} do not broadcast") from None
    return a, b


def _same_dtype_tensors(name: str, *tensors: Any, floats_only: bool = True) -> None:
    """PyTorch's stricter ops (``hypot``, ``lerp``, ``logaddexp``, ``heaviside``): Tensor
    operands of one dtype, a float one unless ``floats_only`` is false.
    """
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}: expected Tensors, got {type(t).__name__} (as in PyTorch)")
    dtypes = {str(t.dtype) for t in tensors}
    if len(dtypes) > 1:
        raise TypeError(
            f"{name}: the tensors have dtypes {' and '.join(sorted(dtypes))}; convert them to "
            "one with .to(dtype=...) (as in PyTorch)"
        )
    if floats_only and tensors[0].dtype.kind != "f":
        raise TypeError(
            f"{name}: defined for float tensors only (as in PyTorch), got {tensors[0].dtype}"
        )


class Atan2(Function):
    """``atan2(a, b)``, the angle of the point ``(b, a)``: ``d/da = grad b / (a² + b²)``,
    ``d/db = -grad a / (a² + b²)``, both 0 where ``a² + b²`` is 0 (PyTorch's values).
    """

    def forward(self, a: Any, b: Any) -> Any:
        return self.xp.arctan2(a, b)

    def backward(self, grad: Tensor) -> tuple[Tensor, Tensor]:
        a, b = self.inputs
        squares = a * a + b * b
        zero = _tensor(self.xp.zeros((), dtype=squares.dtype), squares)
        recip = where(_tensor(squares.array == 0, squares), zero, reciprocal(squares))
        return grad * b * recip, grad * -a * recip


def atan2(input: Operand, other: Operand) -> Tensor:
    """The angle of the point ``(other, input)``, in ``[-pi, pi]``; integers give float32.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.atan2(mta.tensor([1.0]), mta.tensor([-1.0])).double().round(decimals=6).item()
    2.356194
    """
    a, b = _float_operands("atan2", input, other)
    return Atan2.apply(a, b)


def arctan2(input: Operand, other: Operand) -> Tensor:
    """Same as :func:`atan2`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.arctan2(mta.tensor([0.0]), mta.tensor([1.0])).item()
    0.0
    """
    return atan2(input, other)


class Hypot(Function):
    """``sqrt(a² + b²)`` without overflow: ``d/da = grad a / out``, ``d/db = grad b / out``."""

    saves_output = True

    def forward(self, a: Any, b: Any) -> Any:
        return self.xp.hypot(a, b)

    def backward(self, grad: Tensor) -> tuple[Tensor, Tensor]:
        a, b = self.inputs
        out = self.output()
        return grad * a / out, grad * b / out


def hypot(input: Tensor, other: Tensor) -> Tensor:
    """``sqrt(input² + other²)``, computed without overflow; float tensors of one dtype,
    as PyTorch.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.hypot(mta.tensor([3.0]), mta.tensor([4.0]))
    tensor([5.])
    """
    _same_dtype_tensors("hypot", input, other)
    a, b = _float_operands("hypot", input, other)
    return Hypot.apply(a, b)


class Lerp(Function):
    """``a + w (b - a)``, computed as PyTorch's kernel (from the nearer end, so ``w = 1``
    gives ``b`` exactly): gradients ``grad (1 - w)``, ``grad w``, ``grad (b - a)``.
    """

    def forward(self, a: Any, b: Any, w: Any) -> Any:
        x, y, t = _opmath(a), _opmath(b), _opmath(w)
        with np.errstate(invalid="ignore", over="ignore"):
            out = self.xp.where(self.xp.abs(t) < 0.5, x + t * (y - x), y - (y - x) * (1 - t))
        return out.astype(a.dtype)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
        a, b, w = self.inputs
        need_a, need_b, need_w = self.needs_input_grad
        return (
            grad * (1.0 - w) if need_a else None,
            grad * w if need_b else None,
            grad * (b - a) if need_w else None,
        )


def lerp(input: Tensor, end: Tensor, weight: Operand) -> Tensor:
    """Linear interpolation ``input + weight * (end - input)``; ``weight`` a number or a
    tensor (broadcasting). Float tensors of one dtype, as PyTorch.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.lerp(mta.tensor([0.0, 10.0]), mta.tensor([10.0, 20.0]), 0.25)
    tensor([ 2.5, 12.5])
    """
    _same_dtype_tensors("lerp", input, end)
    if isinstance(weight, Tensor) and weight.ndim > 0 and weight.dtype != input.dtype:
        raise TypeError(
            f"lerp: weight has dtype {weight.dtype}, input {input.dtype} (as in PyTorch)"
        )
    if isinstance(weight, Tensor):
        w = weight if weight.dtype == input.dtype else weight.to(dtype=input.dtype)  # 0-d
    else:  # a number: kept in the precision PyTorch computes in (float32 for float16)
        w = number_as_tensor(
            weight, np.dtype(np.float32 if input.dtype == np.float16 else input.dtype), input
        )
    try:
        np.broadcast_shapes(input.shape, end.shape, w.shape)
    except ValueError:
        raise ValueError(
            f"lerp: shapes {input.shape}, {end.shape} and {w.shape} do not broadcast"
        ) from None
    return Lerp.apply(input, end, w)


class LogAddExp(Function):
    """``log(exp(a) + exp(b))`` (``base=2``: ``log2(2**a + 2**b)``) without overflow:
    ``max + log1p(exp(-|a - b|))``, and ``a`` itself where both are one infinity.
    Gradients ``grad / (1 + base**(b - a))`` and ``grad / (1 + base**(a - b))``.
    """

    def forward(self, a: Any, b: Any, *, base: float) -> Any:
        self.base = base
        xp, x, y = self.xp, _opmath(a), _opmath(b)
        with np.errstate(invalid="ignore", over="ignore"):
            gap = -xp.abs(x - y)
            if base == 2.0:
                out = xp.maximum(x, y) + xp.log1p(xp.exp2(gap)) * (1 / _LN2)
            else:
                out = xp.maximum(x, y) + xp.log1p(xp.exp(gap))
        return xp.where(xp.isinf(x) & (x == y), x, out).astype(a.dtype)

    def backward(self, grad: Tensor) -> tuple[Tensor, Tensor]:
        a, b = self.inputs
        if self.base == 2.0:
            return grad / (pow(2.0, b - a) + 1.0), grad / (pow(2.0, a - b) + 1.0)
        return grad / ((b - a).exp() + 1.0), grad / ((a - b).exp() + 1.0)


def logaddexp(input: Tensor, other: Tensor) -> Tensor:
    """``log(exp(input) + exp(other))``, computed without overflow; float tensors of
    one dtype, as PyTorch.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> x = mta.tensor([1000.0], dtype=mta.float64)
    >>> mta.logaddexp(x, x).round(decimals=4).item()
    1000.6931
    """
    _same_dtype_tensors("logaddexp", input, other)
    a, b = _float_operands("logaddexp", input, other)
    return LogAddExp.apply(a, b, base=math.e)


def logaddexp2(input: Tensor, other: Tensor) -> Tensor:
    """``log2(2**input + 2**other)``, computed without overflow.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.logaddexp2(mta.tensor([3.0]), mta.tensor([3.0]))
    tensor([4.])
    """
    _same_dtype_tensors("logaddexp2", input, other)
    a, b = _float_operands("logaddexp2", input, other)
    return LogAddExp.apply(a, b, base=2.0)


class Xlogy(Function):
    """``a * log(b)``, 0 where ``a == 0`` (unless ``b`` is NaN). Gradients (PyTorch's):
    ``xlogy(grad, b)`` for ``a``, 0 where ``a == 0`` and ``b <= 0``; ``grad a / b``
    for ``b``.
    """

    def forward(self, a: Any, b: Any) -> Any:
        xp = self.xp
        with np.errstate(divide="ignore", invalid="ignore"):
            out = xp.where(a == 0, a.dtype.type(0), a * xp.log(b))
        return xp.where(xp.isnan(b), b, out)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, Tensor | None]:
        a, b = self.inputs
        grad_a = None
        if self.needs_input_grad[0]:
            grad_a = masked_grad(xlogy(grad, b), ~((a.array == 0) & (b.array <= 0)))
        return grad_a, (grad * a / b if self.needs_input_grad[1] else None)


def xlogy(input: Operand, other: Operand) -> Tensor:
    """``input * log(other)``, but 0 where ``input == 0`` (so ``0 * log(0)`` is 0, as
    in entropies); NaN where ``other`` is NaN. Integers give float32.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.xlogy(mta.tensor([0.0, 2.0]), mta.tensor([0.0, 1.0]))
    tensor([0., 0.])
    """
    a, b = _float_operands("xlogy", input, other)
    return Xlogy.apply(a, b)


class Heaviside(NotDifferentiable):
    """The step function; no derivative, as in PyTorch."""

    def forward(self, a: Any, values: Any) -> Any:
        xp = self.xp
        return xp.where(a == 0, values, (a > 0).astype(a.dtype))


def heaviside(input: Tensor, values: Tensor) -> Tensor:
    """0 where ``input < 0``, ``values`` where ``input == 0``, 1 where ``input > 0`` (0
    at NaN, as PyTorch). Both tensors of one dtype; no gradient.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.heaviside(mta.tensor([-1.0, 0.0, 2.0]), mta.tensor(0.5))
    tensor([0. , 0.5, 1. ])
    """
    _same_dtype_tensors("heaviside", input, values, floats_only=False)
    try:
        np.broadcast_shapes(input.shape, values.shape)
    except ValueError:
        raise ValueError(
            f"heaviside: shapes {input.shape} and {values.shape} do not broadcast"
        ) from None
    return Heaviside.apply(input, values)


def clamp_min(input: Tensor, min: Any) -> Tensor:
    """:func:`~minitorch_accel.clamp` with a lower bound only.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.clamp_min(mta.tensor([-1.0, 2.0]), 0.0)
    tensor([0., 2.])
    """
    if isinstance(input, Tensor) and input.dtype.kind == "b" and not isinstance(min, Tensor):
        input = input.to(dtype=np.int64)  # a number bound makes a bool tensor int64, as PyTorch
    return clamp(input, min=min)


def clamp_max(input: Tensor, max: Any) -> Tensor:
    """:func:`~minitorch_accel.clamp` with an upper bound only.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.clamp_max(mta.tensor([-1.0, 2.0]), 0.0)
    tensor([-1.,  0.])
    """
    if isinstance(input, Tensor) and input.dtype.kind == "b" and not isinstance(max, Tensor):
        input = input.to(dtype=np.int64)
    return clamp(input, max=max)


def float_power(input: Operand, exponent: Operand) -> Tensor:
    """``input ** exponent`` computed in float64, whatever the dtypes (PyTorch's
    ``float_power``); the gradient is :func:`~minitorch_accel.pow`'s.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.float_power(mta.tensor([2, 3]), 2)
    tensor([4., 9.], dtype=float64)
    """
    if isinstance(input, Tensor):
        input = input.to(dtype=np.float64)
    if isinstance(exponent, Tensor):
        exponent = exponent.to(dtype=np.float64)
        if not isinstance(input, Tensor):
            input = as_operand(float(input), exponent)
    elif isinstance(exponent, (int, float, np.number)):
        exponent = float(exponent)
    return pow(input, exponent)


def true_divide(dividend: Operand, divisor: Operand) -> Tensor:
    """Same as :func:`~minitorch_accel.div` (true division: integers give float32).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.true_divide(mta.tensor([3, 4]), 2)
    tensor([1.5, 2. ])
    """
    return div(dividend, divisor)
