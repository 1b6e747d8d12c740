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
from . import compare as _compare
from . import elementwise as _E
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
from .scan import VectorNorm
from .shape import normalize_dim as _normalize_dim

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


# ------------------------------------------------------------------ PyTorch's aliases
def absolute(input: Tensor) -> Tensor:
    """Same as :func:`~minitorch_accel.abs`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.absolute(mta.tensor([-2, 3]))
    tensor([2, 3])
    """
    return _E.abs(input)


def negative(input: Tensor) -> Tensor:
    """``-input`` (same as :func:`~minitorch_accel.neg`).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.negative(mta.tensor([-2.0, 3.0]))
    tensor([ 2., -3.])
    """
    return _E.neg(input)


def divide(input: Operand, other: Operand, *, rounding_mode: str | None = None) -> Tensor:
    """Same as :func:`~minitorch_accel.div`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.divide(mta.tensor([7, -7]), 2, rounding_mode="floor")
    tensor([ 3, -4])
    """
    return div(input, other, rounding_mode=rounding_mode)


def multiply(input: Operand, other: Operand) -> Tensor:
    """Same as :func:`~minitorch_accel.mul`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.multiply(mta.tensor([1.5, 2.0]), 2)
    tensor([3., 4.])
    """
    return _E.mul(input, other)


def subtract(input: Operand, other: Operand, *, alpha: Any = 1) -> Tensor:
    """Same as :func:`~minitorch_accel.sub`: ``input - alpha * other``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.subtract(mta.tensor([5.0]), mta.tensor([1.0]), alpha=2)
    tensor([3.])
    """
    return _E.sub(input, other, alpha=alpha)


def arcsin(input: Tensor) -> Tensor:
    """Same as :func:`asin`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.arcsin(mta.tensor([0.0, 2.0]))
    tensor([ 0., nan])
    """
    return asin(input)


def arccos(input: Tensor) -> Tensor:
    """Same as :func:`acos`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.arccos(mta.tensor([1.0]))
    tensor([0.])
    """
    return acos(input)


def arctan(input: Tensor) -> Tensor:
    """Same as :func:`atan`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.arctan(mta.tensor([0.0]))
    tensor([0.])
    """
    return atan(input)


def arcsinh(input: Tensor) -> Tensor:
    """Same as :func:`asinh`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.arcsinh(mta.tensor([0.0]))
    tensor([0.])
    """
    return asinh(input)


def arccosh(input: Tensor) -> Tensor:
    """Same as :func:`acosh`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.arccosh(mta.tensor([1.0, 0.5]))
    tensor([ 0., nan])
    """
    return acosh(input)


def arctanh(input: Tensor) -> Tensor:
    """Same as :func:`atanh`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.arctanh(mta.tensor([0.0, 1.0]))
    tensor([ 0., inf])
    """
    return atanh(input)


def greater(input: Operand, other: Operand) -> Tensor:
    """Same as :func:`~minitorch_accel.gt`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.greater(mta.tensor([1, 3]), 2)
    tensor([False,  True])
    """
    return _compare.gt(input, other)


def greater_equal(input: Operand, other: Operand) -> Tensor:
    """Same as :func:`~minitorch_accel.ge`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.greater_equal(mta.tensor([1, 2]), 2)
    tensor([False,  True])
    """
    return _compare.ge(input, other)


def less(input: Operand, other: Operand) -> Tensor:
    """Same as :func:`~minitorch_accel.lt`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.less(mta.tensor([1, 3]), 2)
    tensor([ True, False])
    """
    return _compare.lt(input, other)


def less_equal(input: Operand, other: Operand) -> Tensor:
    """Same as :func:`~minitorch_accel.le`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.less_equal(mta.tensor([2, 3]), 2)
    tensor([ True, False])
    """
    return _compare.le(input, other)


def not_equal(input: Operand, other: Operand) -> Tensor:
    """Same as :func:`~minitorch_accel.ne`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.not_equal(mta.tensor([2, 3]), 2)
    tensor([False,  True])
    """
    return _compare.ne(input, other)


def conj_physical(input: Tensor) -> Tensor:
    """The complex conjugate; there are no complex dtypes here, so ``input`` itself,
    as PyTorch returns a real tensor (the same object, not a copy).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> x = mta.tensor([1.0, -2.0])
    >>> mta.conj_physical(x) is x
    True
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"conj_physical: expected a Tensor, got {type(input).__name__}")
    return input


# ------------------------------------------------------------------ sinc, degrees
class Sinc(Function):
    """``sin(pi a) / (pi a)``, 1 at 0: ``d/da = grad (cos(pi a) pi a - sin(pi a)) / (pi a**2)``,
    exactly 0 where ``pi a**2`` is 0 (even for an infinite ``grad``), as PyTorch's
    ``sinc_backward``.
    """

    def forward(self, a: Any) -> Any:
        xp = self.xp
        x = _opmath(a)
        product = x * x.dtype.type(math.pi)
        with np.errstate(invalid="ignore", divide="ignore"):
            out = xp.where(x == 0, x.dtype.type(1), xp.sin(product) / product)
        return out.astype(a.dtype)

    def backward(self, grad: Tensor) -> Tensor:
        a = self.inputs[0]
        product = a * math.pi
        squared = a * a * math.pi
        out = grad * (product * product.cos() - product.sin()) / squared
        return where(squared == 0, 0.0, out)


def sinc(input: Tensor) -> Tensor:
    """The normalized sinc function ``sin(pi x) / (pi x)``, 1 at ``x = 0``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.sinc(mta.tensor([0.0, 0.5]))
    tensor([1.    , 0.6366])
    """
    return Sinc.apply(_float_input("sinc", input))


def deg2rad(input: Tensor) -> Tensor:
    """Degrees to radians: ``input * (pi / 180)`` (integers give float32, as PyTorch).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.deg2rad(mta.tensor([180.0, -90.0]))
    tensor([ 3.1416, -1.5708])
    """
    return _float_input("deg2rad", input) * (math.pi / 180.0)


def rad2deg(input: Tensor) -> Tensor:
    """Radians to degrees: ``input * (180 / pi)`` (integers give float32, as PyTorch).

    Examples
    --------
    >>> import math
    >>> import minitorch_accel as mta
    >>> mta.rad2deg(mta.tensor([math.pi / 2]))
    tensor([90.])
    """
    return _float_input("rad2deg", input) * (180.0 / math.pi)


# ------------------------------------------------------------------ addcmul, addcdiv, renorm
def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """``input + value * tensor1 * tensor2``, broadcasting (PyTorch's order of operations).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> one = mta.tensor([1.0, 1.0])
    >>> mta.addcmul(one, mta.tensor([2.0, 3.0]), mta.tensor([4.0, 5.0]), value=0.5)
    tensor([5. , 8.5])
    """
    return input + value * tensor1 * tensor2  # type: ignore[no-any-return]


def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """``input + value * tensor1 / tensor2``, broadcasting. Integer ``tensor1`` and
    ``tensor2`` are refused, as in PyTorch (its integer division was removed).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.addcdiv(mta.tensor([1.0]), mta.tensor([3.0]), mta.tensor([2.0]), value=2)
    tensor([4.])
    """
    for t in (tensor1, tensor2):
        if isinstance(t, Tensor) and t.dtype.kind in "biu":
            raise TypeError(
                "addcdiv: integer division with addcdiv is no longer supported (as in "
                "PyTorch); convert tensor1 and tensor2 to floats, or use "
                "input + value * tensor1.div(tensor2, rounding_mode='trunc')"
            )
    return input + value * tensor1 / tensor2  # type: ignore[no-any-return]


def renorm(input: Tensor, p: float, dim: int, maxnorm: float) -> Tensor:
    """Each slice ``input.select(dim, i)`` whose ``p``-norm exceeds ``maxnorm``, scaled
    by ``maxnorm / (norm + 1e-7)`` (PyTorch's formula); the other slices unchanged.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.renorm(mta.tensor([[3.0, 4.0], [0.3, 0.4]]), 2, 0, 1.0)
    tensor([[0.6, 0.8],
            [0.3, 0.4]])
    """
    if not isinstance(input, Tensor) or input.dtype.kind != "f":
        got = input.dtype if isinstance(input, Tensor) else type(input).__name__
        raise TypeError(f"renorm: expected a floating-point tensor, got {got}")
    if isinstance(p, bool) or not isinstance(p, (int, float)) or p <= 0:
        raise ValueError(f"renorm: non-positive-norm not supported, got p={p}")
    if maxnorm < 0:
        raise ValueError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if input.ndim <= 1:
        raise ValueError(f"renorm: input needs at least 2 dimensions, got {input.ndim}")
    d = _normalize_dim(dim, input.ndim, "renorm")
    dims = tuple(i for i in range(input.ndim) if i != d)
    norm = VectorNorm.apply(input, p=float(p), dims=dims, keepdim=True)
    factor = where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)
    return input * factor


# ------------------------------------------------------------------ integers and floats
class NextAfter(NotDifferentiable):
    """The next float after ``a`` toward ``b``; no derivative, as in PyTorch."""

    def forward(self, a: Any, b: Any) -> Any:
        return self.xp.nextafter(a, b)


def nextafter(input: Tensor, other: Tensor) -> Tensor:
    """The next floating-point value after ``input`` toward ``other``, elementwise
    (both tensors of one float dtype).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> (mta.nextafter(mta.tensor([1.0]), mta.tensor([2.0])) - 1).item() == 2.0**-23
    True
    """
    _same_dtype_tensors("nextafter", input, other)
    return NextAfter.apply(input, other)


def _integer_pair(name: str, input: Tensor, other: Tensor) -> tuple[Tensor, Tensor]:
    for t in (input, other):
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}: expected tensors, got {type(t).__name__}")
        if t.dtype.kind not in "iu":
            raise TypeError(f"{name}: not implemented for {t.dtype} (integer tensors only)")
    a, b = common_operands(name, (input, other))
    return a, b


def gcd(input: Tensor, other: Tensor) -> Tensor:
    """The greatest common divisor of two integer tensors, elementwise (non-negative;
    ``gcd(0, 0) = 0``).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.gcd(mta.tensor([-4, 0, 6]), mta.tensor([6, 0, -9]))
    tensor([2, 0, 3])
    """
    a, b = _integer_pair("gcd", input, other)
    with a.device.guard():
        return _tensor(a.xp.gcd(a.array, b.array), a)


def lcm(input: Tensor, other: Tensor) -> Tensor:
    """The least common multiple of two integer tensors, elementwise (non-negative; 0
    where either is 0).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.lcm(mta.tensor([-4, 0, 6]), mta.tensor([6, 0, -9]))
    tensor([12,  0, 18])
    """
    a, b = _integer_pair("lcm", input, other)
    with a.device.guard():
        return _tensor(a.xp.lcm(a.array, b.array), a)


def ldexp(input: Tensor, other: Tensor) -> Tensor:
    """``input * 2**other``, as PyTorch computes it (``mul(input, pow(2.0, other))``:
    the result is a float tensor).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.ldexp(mta.tensor([1.0, 3.0]), mta.tensor([3, -1]))
    tensor([8. , 1.5])
    """
    if not isinstance(other, Tensor):
        raise TypeError(f"ldexp: other must be a Tensor, got {type(other).__name__}")
    return _E.mul(input, pow(2.0, other))


# ------------------------------------------------------------------ the gamma family
# Written without SciPy, as PyTorch's CPU kernels compute them: lgamma by Lanczos's
# series with the reflection formula below 1/2; digamma, trigamma and the Hurwitz zeta
# (for polygamma) ported from PyTorch's ``Math.h`` (Cephes), with its special values.
_LANCZOS_G = 7.0
_LANCZOS = (
    0.99999999999980993,
    676.5203681218851,
    -1259.1392167224028,
    771.32342877765313,
    -176.61502916214059,
    12.507343278686905,
    -0.13857109526572012,
    9.9843695780195716e-6,
    1.5056327351493116e-7,
)
_PSI_ASYMPTOTIC = (  # digamma's asymptotic series in 1/x**2 (Cephes), highest power first
    8.33333333333333333333e-2,
    -2.10927960927960927961e-2,
    7.57575757575757575758e-3,
    -4.16666666666666666667e-3,
    3.96825396825396825397e-3,
    -8.33333333333333333333e-3,
    8.33333333333333333333e-2,
)
_PSI_10 = 2.25175258906672110764  # digamma(10)
_ZETA_A = (  # (2k)! / B_2k, the Euler-Maclaurin tail of the Hurwitz zeta (Cephes)
    12.0,
    -720.0,
    30240.0,
    -1209600.0,
    47900160.0,
    -1.8924375803183791606e9,
    7.47242496e10,
    -2.950130727918164224e12,
    1.1646782814350067249e14,
    -4.5979787224074726105e15,
    1.8152105401943546773e17,
    -7.1661652561756670113e18,
)


def _lgamma_taylor() -> tuple[float, ...]:
    """The Taylor coefficients of ``lgamma(1 + e)``: ``-gamma``, then
    ``(-1)**k zeta(k) / k`` (60 terms: below 1e-17 for ``|e| <= 1/2``).
    """
    global _LGAMMA_TAYLOR
    if not _LGAMMA_TAYLOR:
        zetas = [float(hurwitz_zeta_array(np, float(k), np.ones(1))[0]) for k in range(2, 61)]
        _LGAMMA_TAYLOR = (-_EULER_GAMMA, *((-1) ** k * z / k for k, z in enumerate(zetas, 2)))
    return _LGAMMA_TAYLOR


_EULER_GAMMA = 0.57721566490153286061
_LGAMMA_TAYLOR: tuple[float, ...] = ()


def _lgamma_from_half(xp: Any, y: Any) -> Any:
    """``lgamma(y)`` for float64 ``y >= 1/2``: the Taylor series about 1 (and, by
    ``lgamma(2 + e) = log1p(e) + lgamma(1 + e)``, about 2) on ``[1/2, 5/2)``, where the
    zeros at 1 and 2 make any other formula lose digits; Lanczos's series beyond.
    """
    e = xp.where(y < 1.5, y - 1.0, y - 2.0)
    e = xp.where(y < 2.5, e, 0.0)
    taylor = xp.zeros_like(e)
    for coefficient in reversed(_lgamma_taylor()):
        taylor = (taylor + coefficient) * e
    taylor = xp.where(y < 1.5, taylor + 0.0, xp.log1p(e) + taylor)  # + 0.0: +0 at 1, not -0
    z = y - 1.0
    series = xp.full(z.shape, _LANCZOS[0])
    for i in range(1, len(_LANCZOS)):
        series = series + _LANCZOS[i] / (z + i)
    t = z + _LANCZOS_G + 0.5
    lanczos = 0.5 * math.log(2 * math.pi) + (z + 0.5) * xp.log(t) - t + xp.log(series)
    lanczos = xp.where(xp.isinf(z), np.inf, lanczos)
    return xp.where(y < 2.5, taylor, lanczos)


def lgamma_array(xp: Any, x: Any) -> Any:
    """``log|Gamma(x)|`` of a raw float array, computed in float64: the Taylor series
    about 1 and 2 on ``[1/2, 5/2)`` (exact zeros at 1 and 2, as the C library's),
    Lanczos's series (g = 7, 9 terms; relative error near 1e-15) above, and the
    reflection ``log(pi / |sin(pi x)|) - lgamma(1 - x)`` below 1/2, ``sin(pi x)`` taken
    of the exact fractional part of ``x``. ``inf`` at 0, the negative integers and ``+-inf``.

    Examples
    --------
    >>> import numpy as np
    >>> lgamma_array(np, np.array([0.5, 5.0])).round(12).tolist()  # log(sqrt(pi)), log(24)
    [0.572364942925, 3.178053830348]
    """
    x64 = x.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        positive = _lgamma_from_half(xp, xp.where(x64 < 0.5, 1.0 - x64, x64))
        sin_pi_x = xp.abs(xp.sin(math.pi * (x64 - xp.floor(x64))))
        reflected = math.log(math.pi) - xp.log(sin_pi_x) - positive
        out = xp.where(x64 < 0.5, reflected, positive)
        out = xp.where((x64 <= 0) & (x64 == xp.floor(x64)), np.inf, out)  # poles and -inf
    return out.astype(x.dtype)


def digamma_array(xp: Any, x: Any) -> Any:
    """``d/dx lgamma(x)`` of a raw float array, PyTorch's ``calc_digamma``: the
    reflection ``digamma(1 - x) - pi / tan(pi r)`` (``r`` the fractional part) below 0,
    the recurrence ``digamma(x) = digamma(x + 1) - 1/x`` up to 10, then the asymptotic
    series. ``-inf`` at ``+0``, ``inf`` at ``-0``, NaN at the negative integers and ``-inf``.
    Computed in the input's precision (float32 for float16).

    Examples
    --------
    >>> import numpy as np
    >>> f"{float(digamma_array(np, np.array([1.0]))[0]):.15f}"  # minus Euler's constant
    '-0.577215664901533'
    """
    a = _opmath(x)
    one = a.dtype.type(1)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        r = a - xp.trunc(a)
        correction = xp.where(a < 0, math.pi / xp.tan(math.pi * r.astype(np.float64)), 0.0)
        z = xp.where(a < 0, one - a, a)
        result = xp.zeros_like(z)
        for _ in range(10):  # push z to >= 10 (z > 0 here)
            small = z < 10
            result = xp.where(small, result - one / z, result)
            z = xp.where(small, z + one, z)
        at_ten = z == 10  # PyTorch returns its stored digamma(10) there
        inv2 = one / (z * z)
        poly = xp.zeros_like(z)
        for coefficient in _PSI_ASYMPTOTIC:
            poly = poly * inv2 + a.dtype.type(coefficient)
        tail = xp.where(z < 1.0e17, inv2 * poly, a.dtype.type(0))
        out = result + xp.log(z) - a.dtype.type(0.5) / z - tail
        out = xp.where(at_ten, result + a.dtype.type(_PSI_10), out)
        out = out - correction.astype(a.dtype)
        out = xp.where((a < 0) & (a == xp.trunc(a)), np.nan, out)
        out = xp.where(a == 0, xp.copysign(a.dtype.type(np.inf), -a), out)
    return out.astype(x.dtype)


def trigamma_array(xp: Any, x: Any) -> Any:
    """``d/dx digamma(x)`` of a raw float array, PyTorch's ``calc_trigamma``: the
    reflection ``pi**2 / sin(pi x)**2`` below 1/2, six steps of the recurrence, then
    the asymptotic series (4 terms: an error near 1e-9, PyTorch's). In the input's
    precision (float32 for float16), as PyTorch, so ``sin(pi x)`` at a negative integer
    is tiny, not 0: a huge finite value.

    Examples
    --------
    >>> import numpy as np
    >>> f"{float(trigamma_array(np, np.array([1.0]))[0]):.12f}"  # pi**2/6 = 1.644934066848...
    '1.644934067638'
    """
    a = _opmath(x)
    t = a.dtype.type
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        reflect = a < 0.5
        sin_pi_x = xp.sin(t(math.pi) * a)
        result = xp.where(reflect, -(t(math.pi) * t(math.pi)) / (sin_pi_x * sin_pi_x), t(0))
        z = xp.where(reflect, t(1) - a, a)
        for _ in range(6):
            result = result + t(1) / (z * z)
            z = z + t(1)
        ixx = t(1) / (z * z)
        tail = t(1) + t(1) / (t(2) * z) + ixx * (t(1 / 6) - ixx * (t(1 / 30) - ixx * t(1 / 42)))
        result = result + tail / z
    return xp.where(reflect, -result, result).astype(x.dtype)


def hurwitz_zeta_array(xp: Any, s: float, q: Any) -> Any:
    """The Hurwitz zeta ``sum_k (q + k)**-s`` of a raw array ``q`` for a whole ``s >= 2``,
    PyTorch's (Cephes's) ``zeta`` in float64: the terms up to ``q + N > 9`` (``N >= 9``),
    then the Euler-Maclaurin tail with 12 Bernoulli terms. ``inf`` at the non-positive
    integers, NaN at ``+inf`` (as PyTorch's).

    Examples
    --------
    >>> import numpy as np
    >>> f"{float(hurwitz_zeta_array(np, 2.0, np.array([1.0]))[0]):.14f}"  # pi**2 / 6
    '1.64493406684823'
    """
    q64 = q.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        finite = q64[xp.isfinite(q64)]
        lowest = float(finite.min()) if finite.size else 0.0
        steps = xp.maximum(9.0, xp.floor(9.0 - xp.nan_to_num(q64)) + 1.0)
        total = xp.power(q64, -s)
        for i in range(1, max(9, int(math.floor(9.0 - lowest)) + 1) + 1):
            total = total + xp.where(i <= steps, xp.power(q64 + i, -s), 0.0)
        w = q64 + steps
        b = xp.power(w, -s)
        total = total + b * w / (s - 1.0) - 0.5 * b
        a, k = 1.0, 0.0
        for coefficient in _ZETA_A:
            a *= s + k
            b = b / w
            total = total + a * b / coefficient
            k += 1.0
            a *= s + k
            b = b / w
            k += 1.0
        total = xp.where((q64 <= 0) & (q64 == xp.floor(q64)), np.inf, total)
    return total


class Lgamma(Function):
    """``log|Gamma(a)|``: ``d/da = grad * digamma(a)``."""

    def forward(self, a: Any) -> Any:
        return lgamma_array(self.xp, a)

    def backward(self, grad: Tensor) -> Tensor:
        return grad * digamma(self.inputs[0])


class Polygamma(Function):
    """The ``n``-th derivative of digamma: ``d/da = grad * polygamma(n + 1, a)``."""

    def forward(self, a: Any, *, n: int) -> Any:
        self.n = n
        xp = self.xp
        if n == 0:
            return digamma_array(xp, a)
        if n == 1:
            return trigamma_array(xp, a)
        scale = (1.0 if n % 2 else -1.0) * math.exp(math.lgamma(n + 1.0))
        with np.errstate(invalid="ignore", over="ignore"):
            return (scale * hurwitz_zeta_array(xp, n + 1.0, a)).astype(a.dtype)

    def backward(self, grad: Tensor) -> Tensor:
        return grad * Polygamma.apply(self.inputs[0], n=self.n + 1)


def lgamma(input: Tensor) -> Tensor:
    """``log|Gamma(input)|`` (``inf`` at 0, the negative integers and ``+-inf``).
    Float64 agrees with the C library's ``lgamma`` to about 1e-14.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.lgamma(mta.tensor([1.0, 3.0, 0.0]))
    tensor([0.    , 0.6931,    inf])
    """
    return Lgamma.apply(_float_input("lgamma", input))


def digamma(input: Tensor) -> Tensor:
    """``d/dx lgamma(x)`` (``-inf`` at ``+0``, ``inf`` at ``-0``, NaN at the negative
    integers, as PyTorch).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.digamma(mta.tensor([1.0, 0.0]))
    tensor([-0.5772,    -inf])
    """
    return Polygamma.apply(_float_input("digamma", input), n=0)


def polygamma(n: int, input: Tensor) -> Tensor:
    """The ``n``-th derivative of :func:`digamma` (``n = 0`` is digamma), as PyTorch
    computes it: its trigamma for ``n = 1``, ``(-1)**(n+1) n! zeta(n + 1, x)`` above.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.polygamma(1, mta.tensor([1.0, 0.5]))
    tensor([1.6449, 4.9348])
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"polygamma: n must be an int, got {n!r}")
    if n < 0:
        raise ValueError(f"polygamma(n, x) does not support negative n, got n={n}")
    return Polygamma.apply(_float_input("polygamma", input), n=int(n))


def mvlgamma(input: Tensor, p: int) -> Tensor:
    """The multivariate log-gamma of dimension ``p``:
    ``sum_{i<p} lgamma(x - i/2) + p (p-1)/4 log(pi)``, as PyTorch composes it.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.mvlgamma(mta.tensor([2.5]), 1)  # lgamma(2.5)
    tensor([0.2847])
    """
    if isinstance(p, bool) or not isinstance(p, (int, np.integer)):
        raise TypeError(f"mvlgamma: p must be an int, got {p!r}")
    if p < 1:
        raise ValueError(f"mvlgamma: p has to be greater than or equal to 1, got {p}")
    x = _float_input("mvlgamma", input)
    with x.device.guard():
        steps = x.xp.arange(-p * 0.5 + 0.5, 0.5, 0.5).astype(x.dtype)
    args = x.unsqueeze(-1) + _tensor(steps, x)
    return lgamma(args).sum(-1) + p * (p - 1) * math.log(math.pi) * 0.25


# ------------------------------------------------------------------ i0
_I_SERIES_TERMS = 90  # the power series to |x| = 25: the last term below 1e-17 of the sum
_I_ASYMPTOTIC_TERMS = 30  # Hankel's expansion from |x| = 25: the last term below 1e-17


def bessel_ie_array(xp: Any, x: Any, order: int) -> Any:
    """``exp(-|x|) I_order(x)`` (order 0 or 1) of a raw float array, in float64: the
    power series ``sum (x/2)**(2k+order) / (k! (k+order)!)`` for ``|x| <= 25``, and
    Hankel's asymptotic expansion beyond; 0 at ``+-inf``, NaN at NaN.

    Examples
    --------
    >>> import numpy as np
    >>> f"{float(bessel_ie_array(np, np.array([1.0]), 0)[0] * np.exp(1.0)):.12f}"  # I0(1)
    '1.266065877752'
    """
    x64 = xp.abs(x.astype(np.float64))
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        near = xp.minimum(x64, 25.0)
        quarter_square = near * near / 4.0
        term = (near / 2.0) ** order / math.factorial(order)
        series = term
        for k in range(1, _I_SERIES_TERMS):
            term = term * quarter_square / (k * (k + order))
            series = series + term
        series = series * xp.exp(-near)
        far = xp.maximum(x64, 25.0)
        mu = 4.0 * order * order
        term = xp.ones_like(far)
        expansion = term
        for k in range(1, _I_ASYMPTOTIC_TERMS):
            term = term * -(mu - (2 * k - 1) ** 2) / (8.0 * k * far)
            expansion = expansion + term
        expansion = expansion / xp.sqrt(2.0 * math.pi * far)
        out = xp.where(x64 <= 25.0, series, expansion)
    if order == 1:
        out = xp.where(x < 0, -out, out)
    return out


class I0(Function):
    """``I0(a)``, the modified Bessel function of order 0: ``d/da = grad * i1(a)``."""

    def forward(self, a: Any) -> Any:
        x = _opmath(a)
        with np.errstate(over="ignore", invalid="ignore"):
            # exp(|x|) in the input's precision, as PyTorch's: it overflows where PyTorch's does
            out = self.xp.exp(self.xp.abs(x)) * bessel_ie_array(self.xp, x, 0).astype(x.dtype)
        return out.astype(a.dtype)

    def backward(self, grad: Tensor) -> Tensor:
        return grad * I1.apply(self.inputs[0])


class I1(Function):
    """``I1(a)`` (the gradient of :func:`i0`): ``d/da = grad * (i0(a) - i1(a) / a)``,
    0.5 where ``|a|`` is below the dtype's epsilon (PyTorch's ``i1_backward``).
    """

    saves_output = True

    def forward(self, a: Any) -> Any:
        x = _opmath(a)
        with np.errstate(over="ignore", invalid="ignore"):
            out = self.xp.exp(self.xp.abs(x)) * bessel_ie_array(self.xp, x, 1).astype(x.dtype)
        return out.astype(a.dtype)

    def backward(self, grad: Tensor) -> Tensor:
        a = self.inputs[0]
        eps = float(np.finfo(a.dtype).eps)
        not_tiny = a.abs() > eps
        safe = where(not_tiny, a, eps)
        slope = i0(safe) - self.output() * reciprocal(safe)
        return grad * where(not_tiny, slope, 0.5)


def i0(input: Tensor) -> Tensor:
    """The modified Bessel function of the first kind of order 0,
    ``sum_k ((x/2)**k / k!)**2``. As PyTorch's, ``exp(|x|)`` is taken in the input's
    precision, so the result overflows where that does, and is NaN at ``+-inf``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.i0(mta.tensor([0.0, 1.0]))
    tensor([1.    , 1.2661])
    """
    return I0.apply(_float_input("i0", input))


# ------------------------------------------------------------------ igamma, igammac
_IGAMMA_TERMS = 400  # series and continued fraction: enough for a up to about 1e4


def igamma_array(xp: Any, a: Any, x: Any, upper: bool) -> Any:
    """The regularized lower incomplete gamma ``P(a, x)`` (``upper``: ``Q = 1 - P``) of
    raw float arrays, in float64: the power series for ``x < a + 1`` and Lentz's
    continued fraction for ``Q`` beyond (Numerical Recipes' ``gser``/``gcf``), with
    PyTorch's values at the edges (NaN for negative arguments, ``P(0, x > 0) = 1`` ...).
    PyTorch uses Cephes's kernels, which add Temme's expansion for large ``a``: where
    ``a`` is large (beyond about 1e3) the two differ in the last digits.

    Examples
    --------
    >>> import numpy as np
    >>> f"{float(igamma_array(np, np.array([1.0]), np.array([1.0]), False)[0]):.15f}"
    '0.632120558828558'
    """
    a64, x64 = (v.astype(np.float64) for v in xp.broadcast_arrays(a, x))
    with np.errstate(invalid="ignore", divide="ignore", over="ignore", under="ignore"):
        sa = xp.where(a64 > 0, a64, 1.0)  # safe arguments: the edges are set below
        sx = xp.where(x64 > 0, x64, 1.0)
        log_front = sa * xp.log(sx) - sx - lgamma_array(xp, sa)
        term = 1.0 / sa  # P by its series
        total = term
        for n in range(1, _IGAMMA_TERMS):
            term = term * sx / (sa + n)
            total = total + term
        lower = total * xp.exp(log_front)
        tiny = 1e-300  # Q by Lentz's continued fraction
        b = sx + 1.0 - sa
        c = xp.full(b.shape, 1.0 / tiny)
        d = 1.0 / b
        h = d
        for n in range(1, _IGAMMA_TERMS):
            an = -n * (n - sa)
            b = b + 2.0
            d = an * d + b
            d = xp.where(xp.abs(d) < tiny, tiny, d)
            c = b + an / c
            c = xp.where(xp.abs(c) < tiny, tiny, c)
            d = 1.0 / d
            h = h * d * c
        upper_cf = xp.exp(log_front) * h
        by_series = sx < sa + 1.0
        p = xp.where(by_series, lower, 1.0 - upper_cf)
        q = xp.where(by_series, 1.0 - lower, upper_cf)
        out = xp.where(xp.isnan(a64) | xp.isnan(x64), np.nan, q if upper else p)
        # PyTorch's edge cases, in its order (the first that applies wins)
        edge_inf_x, edge_zero_x = (0.0, 1.0) if upper else (1.0, 0.0)
        out = xp.where(xp.isinf(x64), edge_inf_x, out)
        out = xp.where(xp.isinf(a64), xp.where(xp.isinf(x64), np.nan, edge_zero_x), out)
        out = xp.where(x64 == 0, edge_zero_x, out)
        out = xp.where(a64 == 0, xp.where(x64 > 0, edge_inf_x, np.nan), out)
        out = xp.where((x64 < 0) | (a64 < 0), np.nan, out)
    return out


class Igamma(Function):
    """``P(a, x)`` (``Q`` when ``upper``): no derivative in ``a`` (as PyTorch);
    ``d/dx = +-grad * exp((a - 1) log x - x - lgamma(a))``.
    """

    def forward(self, a: Any, x: Any, *, upper: bool) -> Any:
        self.upper = upper
        return igamma_array(self.xp, a, x, upper).astype(result_type_arrays(a, x))

    def backward(self, grad: Tensor) -> tuple[Tensor | None, Tensor]:
        a, x = self.inputs
        if self.needs_input_grad[0]:
            name = "igammac" if self.upper else "igamma"
            raise RuntimeError(f"the derivative of {name} with respect to input is not implemented")
        slope = ((a - 1) * x.log() - x - lgamma(a)).exp()
        return None, grad * (-slope if self.upper else slope)


def result_type_arrays(a: Any, b: Any) -> Any:
    """The dtype of a binary op on two float arrays of one dtype (they are checked equal)."""
    return np.result_type(a.dtype, b.dtype)


def _igamma(name: str, input: Tensor, other: Tensor, upper: bool) -> Tensor:
    _same_dtype_tensors(name, input, other)
    try:
        np.broadcast_shapes(input.shape, other.shape)
    except ValueError:
        raise ValueError(
            f"{name}: shapes {input.shape} and {other.shape} do not broadcast"
        ) from None
    return Igamma.apply(input, other, upper=upper)


def igamma(input: Tensor, other: Tensor) -> Tensor:
    """The regularized lower incomplete gamma function
    ``P(a, x) = 1/Gamma(a) int_0^x t**(a-1) e**-t dt`` with ``a = input``, ``x = other``
    (float tensors of one dtype). Differentiable in ``other`` only, as in PyTorch.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.igamma(mta.tensor([1.0, 2.0]), mta.tensor([0.0, 2.0]))
    tensor([0.   , 0.594])
    """
    return _igamma("igamma", input, other, upper=False)


def igammac(input: Tensor, other: Tensor) -> Tensor:
    """The regularized upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)``
    (see :func:`igamma`), accurate where it is tiny.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.igammac(mta.tensor([1.0, 2.0]), mta.tensor([0.0, 2.0]))
    tensor([1.   , 0.406])
    """
    return _igamma("igammac", input, other, upper=True)


# ------------------------------------------------------------------ values with a zero gradient
class Replaced(Function):
    """``values`` in place of the inputs: the comparisons written in place and the
    random fills, whose gradient PyTorch defines as 0 (exactly, even for an infinite
    incoming gradient) for every input.
    """

    saves_inputs = False

    def forward(self, *arrays: Any, values: Any) -> Any:
        self.count = len(arrays)
        return values

    def backward(self, grad: Tensor) -> Any:
        zero = masked_grad(grad, _never(self))
        return zero if self.count == 1 else (zero,) * self.count


def replaced(input: Tensor, values: Tensor, *others: Tensor) -> Tensor:
    """``values`` (of ``input``'s shape) recorded as a function of ``input`` (and of
    ``others``) with gradient 0: what an in-place fill of ``input`` records.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> x = mta.tensor([1.0, 2.0], requires_grad=True)
    >>> y = replaced(x, mta.tensor([5.0, 6.0]))
    >>> y.sum().backward(); x.grad
    tensor([0., 0.])
    """
    if values.shape != input.shape:
        raise ValueError(f"replaced: values of shape {values.shape} for a tensor of {input.shape}")
    with values.device.guard():
        array = values.array.astype(input.dtype)
    return Replaced.apply(input, *others, values=array)


def compared_in_place(name: str, input: Tensor, other: Operand) -> Tensor:
    """``input.<name>(other)`` (``eq``, ``lt`` ...) in ``input``'s dtype (1 or 0) and
    gradient 0 for both sides: the value of PyTorch's ``eq_``, ``lt_`` ...

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> compared_in_place("lt", mta.tensor([1.0, 3.0]), 2)
    tensor([1., 0.])
    """
    values = getattr(_compare, name)(input, other)
    if values.shape != input.shape:
        raise ValueError(
            f"{name}_: the result has shape {values.shape}, this tensor {input.shape}: an "
            "in-place op cannot change the shape"
        )
    others = (other,) if isinstance(other, Tensor) and other.requires_grad else ()
    return replaced(input, values, *others)
