"""Integer and bool ops: bitwise and logical operators, integer division, tests of values.

- Bitwise (``&``, ``|``, ``^``, ``~``, ``<<``, ``>>``): integer and bool tensors only,
  as PyTorch; ``~`` is bitwise NOT on integers and logical NOT on bools.
- Logical (``logical_and`` ...): any dtype, nonzero (NaN included) is true; bool result.
- Integer division: :func:`floor_divide` (``//``) rounds toward minus infinity,
  :func:`remainder` (``%``) takes the sign of the divisor, :func:`fmod` that of the
  dividend. On floats they follow PyTorch's kernels exactly (NaN, inf and the sign of
  zero included); on integers a zero divisor raises :class:`IntegerZeroDivisionError`,
  as PyTorch does on the CPU. None of them is defined for bool, as in PyTorch.
- Tests of values (``isnan``, ``isclose``, ``equal`` ...): bool tensors or Python bools.

None of these carries a gradient except :func:`remainder` and :func:`fmod` (``grad``
for the dividend, ``-grad * q`` for the divisor, ``q`` the rounded quotient, as
PyTorch); :func:`floor_divide` has none, and its backward raises, as PyTorch's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.function import Function
from ..core.tensor import Tensor
from .compare import logical_not as logical_not  # re-exported: the fourth logical op
from .elementwise import floor_divide_array
from .operands import Operand, _tensors_or_numbers, common_operands


class IntegerZeroDivisionError(ZeroDivisionError, RuntimeError):
    """An integer tensor divided by zero (``//``, ``%``, :func:`fmod`). PyTorch raises
    a ``RuntimeError("ZeroDivisionError")`` on the CPU; this is both, so that either
    ``except`` catches it.
    """


def _operands(name: str, a: Operand, b: Operand) -> tuple[Tensor, Tensor]:
    """``a`` and ``b`` as tensors on one device with PyTorch's common dtype."""
    a, b = common_operands(name, _tensors_or_numbers(a, b))
    if a.device is not b.device:
        raise RuntimeError(
            f"{name}: expected both tensors on one device, got {a.device} and {b.device}"
        )
    return a, b


def _no_grad_result(a: Tensor, b: Tensor, compute: Callable[[Any, Any, Any], Any]) -> Tensor:
    """``compute(xp, a_array, b_array)`` as a tensor that carries no gradient."""
    with a.device.guard():
        return Tensor._make(compute(a.xp, a.array, b.array), a.device, False, None)


def _check_shapes(name: str, a: Tensor, b: Tensor) -> None:
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise ValueError(f"{name}: shapes {a.shape} and {b.shape} do not broadcast") from None


def _integer_operands(name: str, a: Operand, b: Operand) -> tuple[Tensor, Tensor]:
    a, b = _operands(name, a, b)
    if a.dtype.kind not in "iub":
        raise TypeError(
            f"{name}: not defined for {a.dtype} tensors, only for integer and bool ones "
            "(as in PyTorch)"
        )
    _check_shapes(name, a, b)
    return a, b


# ------------------------------------------------------------------ bitwise
def bitwise_and(input: Operand, other: Operand) -> Tensor:
    """``input & other`` bit by bit (logical AND for bools); integer and bool only.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.bitwise_and(mta.tensor([12, -1]), mta.tensor([10, 6]))
    tensor([8, 6])
    >>> mta.tensor([True, False]) & mta.tensor([True, True])
    tensor([ True, False])
    """
    a, b = _integer_operands("bitwise_and", input, other)
    return _no_grad_result(a, b, lambda xp, x, y: xp.bitwise_and(x, y))


def bitwise_or(input: Operand, other: Operand) -> Tensor:
    """``input | other`` bit by bit (logical OR for bools); integer and bool only.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.bitwise_or(mta.tensor([12, 0]), mta.tensor([10, 6]))
    tensor([14,  6])
    """
    a, b = _integer_operands("bitwise_or", input, other)
    return _no_grad_result(a, b, lambda xp, x, y: xp.bitwise_or(x, y))


def bitwise_xor(input: Operand, other: Operand) -> Tensor:
    """``input ^ other`` bit by bit (logical XOR for bools); integer and bool only.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.bitwise_xor(mta.tensor([12, 0]), mta.tensor([10, 6]))
    tensor([6, 6])
    """
    a, b = _integer_operands("bitwise_xor", input, other)
    return _no_grad_result(a, b, lambda xp, x, y: xp.bitwise_xor(x, y))


def bitwise_not(input: Tensor) -> Tensor:
    """``~input``: each bit flipped for integers (``~x == -x - 1`` for signed ones),
    logical NOT for bools; a float tensor raises a TypeError, as in PyTorch.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> ~mta.tensor([1, 0, -3])
    tensor([-2, -1,  2])
    >>> ~mta.tensor([True, False])
    tensor([False,  True])
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"bitwise_not: expected a Tensor, got {type(input).__name__}")
    if input.dtype.kind not in "iub":
        raise TypeError(
            f"~ (bitwise_not) is only defined for integer and bool tensors, got {input.dtype}; "
            "for a mask use a bool tensor, e.g. ~(x > 0) or x == 0"
        )
    with input.device.guard():
        return Tensor._make(input.xp.invert(input.array), input.device, False, None)


def _shift(xp: Any, a: Any, b: Any, left: bool) -> Any:
    """``a << b`` or ``a >> b`` with PyTorch's rule for a shift outside ``[0, bits)``:
    0 to the left; the sign (0 or -1) to the right (C leaves those undefined).
    """
    outside = (b < 0) | (b >= a.dtype.itemsize * 8)
    count = xp.where(outside, b.dtype.type(0), b)
    if left:
        return xp.where(outside, a.dtype.type(0), xp.left_shift(a, count))
    sign_fill = xp.where(a < 0, a.dtype.type(-1) if a.dtype.kind == "i" else 0, a.dtype.type(0))
    return xp.where(outside, sign_fill, xp.right_shift(a, count))


def _shift_operands(name: str, a: Operand, b: Operand) -> tuple[Tensor, Tensor]:
    a, b = _integer_operands(name, a, b)
    if a.dtype.kind == "b":
        raise TypeError(
            f"{name}: not defined for bool tensors (as in PyTorch); convert with .long()"
        )
    return a, b


def bitwise_left_shift(input: Operand, other: Operand) -> Tensor:
    """``input << other``: integer tensors only; bits shifted out are lost (the result
    wraps in the dtype) and a shift by a negative count or by the dtype's width or more
    gives 0, as in PyTorch.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.bitwise_left_shift(mta.tensor([1, -3]), 2)
    tensor([  4, -12])
    """
    a, b = _shift_operands("bitwise_left_shift", input, other)
    return _no_grad_result(a, b, lambda xp, x, y: _shift(xp, x, y, True))


def bitwise_right_shift(input: Operand, other: Operand) -> Tensor:
    """``input >> other``: integer tensors only, arithmetic (a negative number stays
    negative); a shift by a negative count or by the dtype's width or more gives 0 or -1
    by the sign, as in PyTorch.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.bitwise_right_shift(mta.tensor([16, -16]), 2)
    tensor([ 4, -4])
    """
    a, b = _shift_operands("bitwise_right_shift", input, other)
    return _no_grad_result(a, b, lambda xp, x, y: _shift(xp, x, y, False))


# ------------------------------------------------------------------ logical
def _logical(name: str, input: Tensor, other: Tensor, ufunc: str) -> Tensor:
    for t in (input, other):
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}: expected Tensors, got {type(t).__name__} (as in PyTorch)")
    if input.device is not other.device:
        raise RuntimeError(
            f"{name}: expected both tensors on one device, got {input.device} and {other.device}"
        )
    _check_shapes(name, input, other)
    return _no_grad_result(input, other, lambda xp, x, y: getattr(xp, ufunc)(x, y))


def logical_and(input: Tensor, other: Tensor) -> Tensor:
    """True where both are nonzero (NaN counts as nonzero); any dtypes, bool result.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.logical_and(mta.tensor([1.0, 0.0, 2.0]), mta.tensor([3, 4, 0]))
    tensor([ True, False, False])
    """
    return _logical("logical_and", input, other, "logical_and")


def logical_or(input: Tensor, other: Tensor) -> Tensor:
    """True where either is nonzero; any dtypes, bool result.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.logical_or(mta.tensor([1.0, 0.0]), mta.tensor([0, 0]))
    tensor([ True, False])
    """
    return _logical("logical_or", input, other, "logical_or")


def logical_xor(input: Tensor, other: Tensor) -> Tensor:
    """True where exactly one is nonzero; any dtypes, bool result.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.logical_xor(mta.tensor([1.0, 0.0, 2.0]), mta.tensor([1, 0, 0]))
    tensor([False, False,  True])
    """
    return _logical("logical_xor", input, other, "logical_xor")


# ------------------------------------------------------------------ integer division
def remainder_array(xp: Any, a: Any, b: Any) -> Any:
    """``a - floor(a / b) * b`` (the sign of ``b``) of raw arrays, as PyTorch: floats
    as ``fmod`` moved by ``b`` where the signs differ (``-0.0 % 3.0`` is ``-0.0``,
    ``-1.0 % inf`` is ``inf``); integers by ``xp.remainder``, which has that sign.
    """
    if a.dtype.kind != "f":
        return xp.remainder(a, b)
    with np.errstate(all="ignore"):
        mod = xp.fmod(a, b)
        return xp.where((mod != 0) & ((b < 0) != (mod < 0)), mod + b, mod)


def _division_operands(name: str, a: Operand, b: Operand) -> tuple[Tensor, Tensor]:
    a, b = _operands(name, a, b)
    if a.dtype.kind == "b":
        raise TypeError(
            f"{name}: not defined for bool tensors (as in PyTorch); convert with .long()"
        )
    _check_shapes(name, a, b)
    if a.dtype.kind in "iu":
        with b.device.guard():
            zero = bool((b.array == 0).any())
        if zero:
            raise IntegerZeroDivisionError(
                f"ZeroDivisionError: {name} of an integer tensor by zero; convert to float "
                "first (x.float()) for inf/NaN results"
            )
    return a, b


class NotDifferentiable(Function):
    """Base of the ops PyTorch gives no derivative (``floor_divide``, ``heaviside``):
    their output requires grad as PyTorch's does, and backward raises, as PyTorch's.
    """

    saves_inputs = False

    def backward(self, grad: Tensor) -> Tensor:
        name = type(self).__name__
        raise RuntimeError(
            f"the derivative of {name} is not implemented (as in PyTorch): it is 0 almost "
            "everywhere; detach its input (x.detach()) if no gradient is meant to pass"
        )


class FloorDivide(NotDifferentiable):
    """``floor(a / b)``: no derivative, as in PyTorch (its backward raises)."""

    def forward(self, a: Any, b: Any) -> Any:
        return floor_divide_array(self.xp, a, b)


class Remainder(Function):
    """``a % b`` with the sign of ``b``: ``d/da = 1``, ``d/db = -floor(a / b)``."""

    def forward(self, a: Any, b: Any) -> Any:
        return remainder_array(self.xp, a, b)

    def backward(self, grad: Tensor) -> tuple[Tensor, Tensor | None]:
        a, b = self.inputs
        if not self.needs_input_grad[1]:
            return grad, None
        quotient = floor_divide_array(self.xp, a.array, b.array)
        return grad, -grad * Tensor._make(quotient, self.device, False, None)


class Fmod(Function):
    """``fmod(a, b)`` with the sign of ``a``: ``d/da = 1``, ``d/db = -trunc(a / b)``."""

    def forward(self, a: Any, b: Any) -> Any:
        with np.errstate(all="ignore"):
            return self.xp.fmod(a, b)

    def backward(self, grad: Tensor) -> tuple[Tensor, Tensor | None]:
        a, b = self.inputs
        if not self.needs_input_grad[1]:
            return grad, None
        with np.errstate(all="ignore"):
            quotient = self.xp.trunc(a.array / b.array)
        return grad, -grad * Tensor._make(quotient, self.device, False, None)


def floor_divide(input: Operand, other: Operand) -> Tensor:
    """``input // other``: the quotient rounded toward minus infinity (PyTorch's
    behaviour since 1.13, and Python's). Integers stay integers and raise
    :class:`IntegerZeroDivisionError` for a zero divisor; floats give ``inf``/``NaN``
    there. Bool raises a TypeError. No gradient (as in PyTorch).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.tensor([7, -7]) // 2
    tensor([ 3, -4])
    >>> mta.floor_divide(mta.tensor([7.0, -7.0]), 2.0)
    tensor([ 3., -4.])
    """
    a, b = _division_operands("floor_divide", input, other)
    return FloorDivide.apply(a, b)


def remainder(input: Operand, other: Operand) -> Tensor:
    """``input % other``: ``input - floor(input / other) * other``, with the sign of
    ``other`` (Python's ``%``). Integers raise :class:`IntegerZeroDivisionError` for a
    zero divisor; floats give NaN there. Gradients: 1 for ``input``, ``-floor(input /
    other)`` for ``other``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.tensor([5, -5]) % 3
    tensor([2, 1])
    >>> mta.remainder(mta.tensor([5.0, -5.0]), -3.0)
    tensor([-1., -2.])
    """
    a, b = _division_operands("remainder", input, other)
    return Remainder.apply(a, b)


def fmod(input: Operand, other: Operand) -> Tensor:
    """C's ``fmod``: ``input - trunc(input / other) * other``, with the sign of
    ``input``. Integers raise :class:`IntegerZeroDivisionError` for a zero divisor;
    floats give NaN there. Gradients: 1 for ``input``, ``-trunc(input / other)`` for
    ``other``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.fmod(mta.tensor([5, -5]), 3)
    tensor([ 2, -2])
    """
    a, b = _division_operands("fmod", input, other)
    return Fmod.apply(a, b)


# ------------------------------------------------------------------ tests of values
def _test(name: str, input: Tensor, compute: Callable[[Any, Any], Any]) -> Tensor:
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}: expected a Tensor, got {type(input).__name__}")
    with input.device.guard():
        return Tensor._make(compute(input.xp, input.array), input.device, False, None)


def isnan(input: Tensor) -> Tensor:
    """True where ``input`` is NaN (never for integer and bool tensors).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.isnan(mta.tensor([1.0, float("nan")]))
    tensor([False,  True])
    """
    return _test("isnan", input, lambda xp, x: xp.isnan(x))


def isinf(input: Tensor) -> Tensor:
    """True where ``input`` is ``+inf`` or ``-inf``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.isinf(mta.tensor([1.0, float("-inf"), float("nan")]))
    tensor([False,  True, False])
    """
    return _test("isinf", input, lambda xp, x: xp.isinf(x))


def isposinf(input: Tensor) -> Tensor:
    """True where ``input`` is ``+inf``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.isposinf(mta.tensor([float("inf"), float("-inf")]))
    tensor([ True, False])
    """
    return _test("isposinf", input, lambda xp, x: xp.isinf(x) & (x > 0))


def isneginf(input: Tensor) -> Tensor:
    """True where ``input`` is ``-inf``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.isneginf(mta.tensor([float("inf"), float("-inf")]))
    tensor([False,  True])
    """
    return _test("isneginf", input, lambda xp, x: xp.isinf(x) & (x < 0))


def isfinite(input: Tensor) -> Tensor:
    """True where ``input`` is neither infinite nor NaN (always, for integers and bools).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.isfinite(mta.tensor([1.0, float("inf"), float("nan")]))
    tensor([ True, False, False])
    """
    return _test("isfinite", input, lambda xp, x: xp.isfinite(x))


def isreal(input: Tensor) -> Tensor:
    """True everywhere: this package has no complex dtypes.

    PyTorch's is false where the imaginary part is nonzero.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.isreal(mta.tensor([1.0, float("nan")]))
    tensor([ True,  True])
    """
    return _test("isreal", input, lambda xp, x: xp.ones(x.shape, dtype=bool))


def isclose(
    input: Tensor,
    other: Tensor,
    rtol: float = 1e-05,
    atol: float = 1e-08,
    equal_nan: bool = False,
) -> Tensor:
    """True where ``|input - other| <= atol + rtol * |other|``, or where both are equal
    (infinities of one sign included); NaNs are equal only with ``equal_nan``. Both
    tensors must have one dtype, as in PyTorch.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> a = mta.tensor([1.0, 2.0, float("inf")])
    >>> mta.isclose(a, mta.tensor([1.0 + 1e-6, 2.1, float("inf")]))
    tensor([ True, False,  True])
    """
    for t in (input, other):
        if not isinstance(t, Tensor):
            raise TypeError(f"isclose: expected Tensors, got {type(t).__name__}")
    if input.dtype != other.dtype:
        raise TypeError(
            f"isclose: the tensors have dtypes {input.dtype} and {other.dtype}; convert one "
            "with .to(dtype=...) (PyTorch requires one dtype too)"
        )
    if rtol < 0 or atol < 0:
        raise ValueError(f"isclose: rtol and atol must be >= 0, got rtol={rtol}, atol={atol}")
    _check_shapes("isclose", input, other)

    def compute(xp: Any, a: Any, b: Any) -> Any:
        equal = a == b
        if a.dtype.kind == "b":
            return equal
        if a.dtype.kind != "f":  # integers: compare in float64 (no wrap-around in a - b)
            a, b = a.astype(np.float64), b.astype(np.float64)
        if equal_nan:
            equal |= xp.isnan(a) & xp.isnan(b)
        with np.errstate(invalid="ignore", over="ignore"):  # inf - inf
            error = xp.abs(a - b)
            return equal | (xp.isfinite(error) & (error <= atol + xp.abs(rtol * b)))

    return _no_grad_result(input, other, compute)


def allclose(
    input: Tensor,
    other: Tensor,
    rtol: float = 1e-05,
    atol: float = 1e-08,
    equal_nan: bool = False,
) -> bool:
    """Whether :func:`isclose` holds everywhere (a Python bool).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.allclose(mta.tensor([1.0, 2.0]), mta.tensor([1.0, 2.0 + 1e-7]))
    True
    """
    close = isclose(input, other, rtol, atol, equal_nan)
    with close.device.guard():
        return bool(close.array.all())


def equal(input: Tensor, other: Tensor) -> bool:
    """Whether both tensors have one shape and equal values (a Python bool; NaN is never
    equal). Dtypes may differ, as in PyTorch.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.equal(mta.tensor([1, 2]), mta.tensor([1.0, 2.0]))
    True
    >>> mta.equal(mta.tensor([1]), mta.tensor([[1]]))
    False
    """
    for t in (input, other):
        if not isinstance(t, Tensor):
            raise TypeError(f"equal: expected Tensors, got {type(t).__name__}")
    if input.device is not other.device:
        raise RuntimeError(
            f"equal: expected both tensors on one device, got {input.device} and {other.device}"
        )
    if input.shape != other.shape:
        return False
    with input.device.guard():
        return bool((input.array == other.array).all())
