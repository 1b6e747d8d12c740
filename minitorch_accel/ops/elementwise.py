"""Elementwise ops: arithmetic, unary math, activations, comparisons.

Binary ops broadcast like NumPy; the autograd engine sums each gradient back to the
shape of its input, so a backward here returns full-shape gradients.

How scalars become operands and which dtype two operands share live in
:mod:`~minitorch_accel.ops.operands`; the comparisons (bool results, no gradient) in
:mod:`~minitorch_accel.ops.compare`. Both are importable from here as well.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from ..core.defaults import get_default_dtype
from ..core.function import Function, on_input_device
from ..core.tensor import Tensor
from .compare import _compare as _compare
from .compare import eq as eq
from .compare import ge as ge
from .compare import gt as gt
from .compare import le as le
from .compare import logical_not as logical_not
from .compare import lt as lt
from .compare import ne as ne
from .operands import Operand as Operand
from .operands import _binary as _binary
from .operands import _float_input as _float_input
from .operands import _tensors_or_numbers as _tensors_or_numbers
from .operands import as_operand as as_operand
from .operands import can_cast as can_cast
from .operands import common_operands as common_operands
from .operands import is_number as is_number
from .operands import number_as_tensor as number_as_tensor
from .operands import promote_types as promote_types
from .operands import result_dtype as result_dtype
from .operands import result_type as result_type


class Add(Function):
    """``a + b``, broadcasting; the gradient of each input is ``grad`` summed to its shape."""

    saves_inputs = False  # backward needs no input's values

    def forward(self, a: Any, b: Any) -> Any:
        return a + b

    def backward(self, grad: Tensor) -> tuple[Tensor, Tensor]:
        return grad, grad


class Sub(Function):
    """``a - b``, broadcasting."""

    saves_inputs = False  # backward needs no input's values

    def forward(self, a: Any, b: Any) -> Any:
        return a - b

    def backward(self, grad: Tensor) -> tuple[Tensor, Tensor | None]:
        return grad, (-grad if self.needs_input_grad[1] else None)


class Mul(Function):
    """``a * b``, broadcasting: ``d(ab)/da = b``, ``d(ab)/db = a``."""

    def forward(self, a: Any, b: Any) -> Any:
        return a * b

    def backward(self, grad: Tensor) -> tuple[Tensor | None, Tensor | None]:
        a, b = self.inputs
        need_a, need_b = self.needs_input_grad
        return (Mul.apply(grad, b) if need_a else None), (Mul.apply(grad, a) if need_b else None)


class Div(Function):
    """``a / b``, broadcasting: ``d(a/b)/da = 1/b``, ``d(a/b)/db = -a/b**2``."""

    def forward(self, a: Any, b: Any) -> Any:
        return a / b

    def backward(self, grad: Tensor) -> tuple[Tensor | None, Tensor | None]:
        a, b = self.inputs
        grad_a = grad / b
        return grad_a, (-grad_a * a / b if self.needs_input_grad[1] else None)


class Neg(Function):
    """``-a``."""

    saves_inputs = False  # backward needs no input's values

    def forward(self, a: Any) -> Any:
        return -a

    def backward(self, grad: Tensor) -> Tensor:
        return -grad


def pow_scalar_array(xp: Any, a: Any, exponent: float) -> Any:
    """``a ** exponent`` for a raw array, computed as PyTorch does: exponent 0 gives 1
    and 1 a copy; for float32 and float64, 0.5, -0.5 and -1 are ``sqrt``, ``1/sqrt`` and
    ``1/a`` (so ``(-inf) ** 0.5`` is NaN and ``(-0.0) ** -0.5`` is -inf, where C's
    ``pow`` gives inf and +inf). Other exponents use ``xp``'s power (PyTorch computes
    3 and -2 as products, which may differ in the last bit).

    Examples
    --------
    >>> import numpy as np
    >>> pow_scalar_array(np, np.array([-0.0, 4.0]), 0.5).tolist()
    [-0.0, 2.0]
    """
    if exponent == 0:
        return xp.ones_like(a)
    if exponent == 1:
        return a.copy()
    if a.dtype in (np.float32, np.float64):
        if exponent == 0.5:
            return xp.sqrt(a)
        if exponent == -0.5:
            return 1 / xp.sqrt(a)
        if exponent == -1:
            return 1 / a
    return a**exponent


class PowScalar(Function):
    """``a ** exponent`` for a Python number: ``d/da = exponent * a**(exponent-1)``,
    with ``a**(exponent-1)`` computed as the forward is (:func:`pow_scalar_array`), and
    exactly 0 for exponent 0 (PyTorch's ``pow_backward``).
    """

    def forward(self, a: Any, *, exponent: float) -> Any:
        self.exponent = exponent
        return pow_scalar_array(self.xp, a, exponent)

    def backward(self, grad: Tensor) -> Tensor:
        (a,) = self.inputs
        p = self.exponent
        if p == 0:  # zeros, as PyTorch: not a ** -1 * 0 (nan at 0), nor grad * 0 (nan at inf)
            return masked_grad(grad, self.xp.zeros((), dtype=bool))
        if p == 2:
            return grad * (a * 2.0)
        return grad * (PowScalar.apply(a, exponent=p - 1) * p)


class Pow(Function):
    """``a ** b`` for two tensors, with PyTorch's gradients (``pow_backward_self``,
    ``pow_backward_exponent``): ``d/da = b a**(b-1)``, exactly 0 where ``b == 0``;
    ``d/db = a**b log(a)``, taken as 0 where ``a == 0`` and ``b >= 0`` (a zero base
    would give NaN or -inf there).
    """

    saves_output = True

    def forward(self, a: Any, b: Any) -> Any:
        return a**b

    def backward(self, grad: Tensor) -> tuple[Tensor | None, Tensor | None]:
        a, b = self.inputs
        grad_a = grad_b = None
        if self.needs_input_grad[0]:
            grad_a = masked_grad(grad * (b * a ** (b - 1)), b.array != 0)
        if self.needs_input_grad[1]:
            zero_base = (a.array == 0) & (b.array >= 0)
            grad_b = grad * masked_grad(self.output() * log(a), ~zero_base)
        return grad_a, grad_b


class Exp(Function):
    """``exp(a)``, whose derivative is its own output (saved instead of ``a``)."""

    saves_inputs = False  # backward needs no input's values
    saves_output = True

    def forward(self, a: Any) -> Any:
        return self.xp.exp(a)

    def backward(self, grad: Tensor) -> Tensor:
        return grad * self.output()


class Log(Function):
    """``log(a)``: ``d/da = 1/a``."""

    def forward(self, a: Any) -> Any:
        return self.xp.log(a)

    def backward(self, grad: Tensor) -> Tensor:
        return grad / self.inputs[0]


class Sqrt(Function):
    """``sqrt(a)``: ``d/da = 1 / (2 sqrt(a))``, from the saved output."""

    saves_inputs = False  # backward needs no input's values
    saves_output = True

    def forward(self, a: Any) -> Any:
        return self.xp.sqrt(a)

    def backward(self, grad: Tensor) -> Tensor:
        return grad / (self.output() * 2.0)


def sign_array(xp: Any, a: Any) -> Any:
    """PyTorch's ``sign`` of a raw array: -1, 0 or 1, and 0 at NaN (``xp.sign`` gives
    NaN there).

    Examples
    --------
    >>> import numpy as np
    >>> sign_array(np, np.array([-2.0, 0.0, 3.0, np.nan])).tolist()
    [-1.0, 0.0, 1.0, 0.0]
    """
    s = xp.sign(a)
    return xp.nan_to_num(s, nan=0.0) if s.dtype.kind in "fc" else s


class Abs(Function):
    """``|a|``: the gradient is ``sign(a)`` (0 at 0 and at NaN, as PyTorch)."""

    saves_inputs = False  # backward needs no input's values

    def forward(self, a: Any) -> Any:
        self.sign = sign_array(self.xp, a)
        return self.xp.abs(a)

    def backward(self, grad: Tensor) -> Tensor:
        return grad * Tensor._make(self.sign, self.device, False, None)


class Relu(Function):
    """``max(a, 0)``: the gradient passes where the output is positive. As PyTorch's
    (``clamp_min(a, 0)``), ``relu(-0.0)`` is ``-0.0`` and NaN stays NaN
    (:func:`clamp_array`).
    """

    saves_inputs = False  # backward needs no input's values
    saves_output = True

    def forward(self, a: Any) -> Any:
        return clamp_array(self.xp, a, 0, None)

    def backward(self, grad: Tensor) -> Tensor:
        return ReluBackward.apply(grad, self.output())


class ReluBackward(Function):
    """ReLU's gradient from its output ``y``: 0 where ``y <= 0``, else ``grad``, as its
    own node (a backend may register a fused kernel for it). Its own gradient passes
    ``gg`` the same way to ``grad``; ``y`` gets none (the mask is flat almost
    everywhere).

    This is PyTorch's rule (``threshold_backward``), two cases included: where the
    output is NaN the gradient passes (``NaN <= 0`` is false), and where ``y <= 0`` the
    result is exactly 0 even for an infinite or NaN ``grad`` (``grad * (y > 0)`` would
    give NaN there, and a NaN input would silently get no gradient).
    """

    def forward(self, grad: Any, y: Any) -> Any:
        return self.xp.where(y <= 0, grad.dtype.type(0), grad)

    def backward(self, gg: Tensor) -> tuple[Tensor, None]:
        return ReluBackward.apply(gg, self.inputs[1]), None


class Sigmoid(Function):
    """``1 / (1 + exp(-a))``: ``d/da = s (1 - s)`` from the saved output ``s``."""

    saves_inputs = False  # backward needs no input's values
    saves_output = True

    def forward(self, a: Any) -> Any:
        # 0.5 * (1 + tanh(a / 2)) is sigmoid without overflow for large |a|
        out = self.xp.tanh(a * 0.5)
        out += 1
        out *= 0.5
        return out

    def backward(self, grad: Tensor) -> Tensor:
        return SigmoidGrad.apply(grad, self.output())


class SigmoidGrad(Function):
    """``grad * y * (1 - y)`` for ``y = sigmoid(x)``, as one op (it is on the hot path)."""

    def forward(self, grad: Any, y: Any) -> Any:
        return grad * (y * (1 - y))

    def backward(self, gg: Tensor) -> tuple[Tensor, Tensor]:
        grad, y = self.inputs
        return SigmoidGrad.apply(gg, y), gg * grad * (1.0 - 2.0 * y)


class Tanh(Function):
    """``tanh(a)``: ``d/da = 1 - t**2`` from the saved output ``t``."""

    saves_inputs = False  # backward needs no input's values
    saves_output = True

    def forward(self, a: Any) -> Any:
        return self.xp.tanh(a)

    def backward(self, grad: Tensor) -> Tensor:
        return TanhGrad.apply(grad, self.output())


class TanhGrad(Function):
    """``grad * (1 - y**2)`` for ``y = tanh(x)``, as one op (it is on the hot path)."""

    def forward(self, grad: Any, y: Any) -> Any:
        return grad * (1 - y * y)

    def backward(self, gg: Tensor) -> tuple[Tensor, Tensor]:
        grad, y = self.inputs
        return TanhGrad.apply(gg, y), gg * grad * y * -2.0


class Maximum(Function):
    """Elementwise maximum; at ties each input gets half the gradient, and where either is
    NaN both get all of it (PyTorch's rule: ``a`` loses it only where ``a < b``).
    """

    saves_inputs = False  # backward needs no input's values

    def forward(self, a: Any, b: Any) -> Any:
        self.split = _tie_split(self.xp, a, b)
        self.keep_a, self.keep_b = ~(a < b), ~(a > b)
        return self.xp.maximum(a, b)

    def backward(self, grad: Tensor) -> tuple[Tensor, Tensor]:
        return _shared_grads(self, grad)


class Minimum(Function):
    """Elementwise minimum; ties and NaN as :class:`Maximum` (``a`` loses the gradient
    only where ``a > b``).
    """

    saves_inputs = False  # backward needs no input's values

    def forward(self, a: Any, b: Any) -> Any:
        self.split = _tie_split(self.xp, a, b)
        self.keep_a, self.keep_b = ~(a > b), ~(a < b)
        return self.xp.minimum(a, b)

    def backward(self, grad: Tensor) -> tuple[Tensor, Tensor]:
        return _shared_grads(self, grad)


def _tie_split(xp: Any, a: Any, b: Any) -> Any:
    """0.5 where ``a == b`` (a tie shares the gradient), else 1: a factor that never
    makes NaN of an infinite gradient, as a multiply by 0 would.
    """
    return xp.where(a == b, 0.5, 1.0)


def _shared_grads(fn: Maximum | Minimum, grad: Tensor) -> tuple[Tensor, Tensor]:
    """The two inputs' gradients of :class:`Maximum` or :class:`Minimum`: ``grad``
    (halved at ties) masked to exactly 0 where the input lost.
    """
    split = grad * Tensor._make(fn.split.astype(grad.dtype), fn.device, False, None)
    return masked_grad(split, fn.keep_a), masked_grad(split, fn.keep_b)


class Clamp(Function):
    """``a`` limited to ``[low, high]`` (numbers): the gradient passes inside the range
    only.
    """

    saves_inputs = False  # backward needs no input's values

    def forward(self, a: Any, *, low: float | None, high: float | None) -> Any:
        inside = self.xp.ones(a.shape, dtype=bool)
        if low is not None:
            inside &= a >= low
        if high is not None:
            inside &= a <= high
        self.inside = inside
        return clamp_array(self.xp, a, low, high)

    def backward(self, grad: Tensor) -> Tensor:
        return masked_grad(grad, self.inside)


def clamp_array(xp: Any, a: Any, low: float | None, high: float | None) -> Any:
    """PyTorch's ``clamp`` of a raw array by number bounds (either may be None): ``low``
    where ``a < low``, then ``high`` where that is ``> high``, else ``a`` itself.

    So where ``a`` equals a bound it keeps its own bits: ``clamp(-0.0, min=0.0)`` and
    ``relu(-0.0)`` are ``-0.0`` as in PyTorch, which ``xp.clip`` and ``xp.maximum`` do
    not promise (NumPy's sign of a zero tie depends on the dtype and the CPU). NaN in
    ``a`` stays NaN; a NaN bound makes every element NaN, as PyTorch. Integer arrays go
    to ``xp.clip`` (they have no signed zero).

    Examples
    --------
    >>> import numpy as np
    >>> np.signbit(clamp_array(np, np.array([-0.0, -1.0, 0.0]), 0.0, None)).tolist()
    [True, False, False]
    """
    if a.dtype.kind != "f":
        return xp.clip(a, low, high)
    out = a
    for bound, beyond in ((low, xp.less), (high, xp.greater)):
        if bound is not None:
            value = a.dtype.type(bound)
            out = xp.where(beyond(out, value) | (value != value), value, out)
    return out


class ClampTensor(Function):
    """``min(max(a, low), high)`` with tensor bounds (either may be None), broadcasting;
    a NaN anywhere gives NaN. PyTorch's gradients (``clamp_backward``,
    ``clamp_backward_min_max``): ``a`` gets it where ``low <= a <= high``, ``low`` where
    ``a < low < high``, ``high`` where ``a > high`` or ``high < low`` (then the result
    is ``high``).
    """

    saves_inputs = False  # backward needs only the masks

    def forward(self, a: Any, low: Any, high: Any) -> Any:
        xp = self.xp
        inside = True
        out = a
        if low is not None:
            inside = a >= low
            out = xp.maximum(out, low)
        if high is not None:
            inside = inside & (a <= high)
            out = xp.minimum(out, high)
        self.inside = inside
        if low is not None:
            self.to_low = (a < low) & (low < high) if high is not None else a < low
        if high is not None:
            self.to_high = (a > high) | (high < low) if low is not None else a > high
        return out

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        need_a, need_low, need_high = self.needs_input_grad
        return (
            masked_grad(grad, self.inside) if need_a else None,
            masked_grad(grad, self.to_low) if need_low else None,
            masked_grad(grad, self.to_high) if need_high else None,
        )


def floor_divide_array(xp: Any, a: Any, b: Any) -> Any:
    """``floor(a / b)`` of raw arrays as PyTorch computes it: integers floor (the
    caller rules out a zero divisor); floats use ``fmod`` so the quotient is exact
    (``(a - fmod(a, b)) / b``, then rounded), ``a / b`` for ``b == 0`` and a zero
    carrying the sign of ``a / b`` (c10's ``div_floor_floating``).

    Examples
    --------
    >>> import numpy as np
    >>> floor_divide_array(np, np.array([7.0, -7.0, -5.0, 1.0]), np.array([2.0, 2.0, np.inf, 0.0]))
    array([ 3., -4., -1., inf])
    """
    if a.dtype.kind != "f":
        return xp.floor_divide(a, b)
    with np.errstate(all="ignore"):  # IEEE results (inf, NaN) are the answer here
        mod = xp.fmod(a, b)
        div = (a - mod) / b
        div = xp.where((mod != 0) & ((b < 0) != (mod < 0)), div - 1, div)
        floor = xp.floor(div)
        floor = xp.where(div - floor > 0.5, floor + 1, floor)
        quotient = xp.where(div != 0, floor, xp.copysign(a.dtype.type(0), a / b))
        return xp.where(b == 0, a / b, quotient)


class DivRounded(Function):
    """``a / b`` rounded toward zero (``"trunc"``) or down (``"floor"``, Python's
    ``//``); its gradient is 0 for both inputs, as PyTorch's.
    """

    saves_inputs = False  # the gradient is zero

    def forward(self, a: Any, b: Any, *, rounding_mode: str) -> Any:
        xp = self.xp
        if a.dtype.kind in "iu":
            if bool((b == 0).any()):
                raise ZeroDivisionError("div: integer division by zero")
            quotient = xp.floor_divide(a, b)
            if rounding_mode == "trunc":  # floor rounds a negative quotient down: undo it
                quotient = quotient + ((quotient * b != a) & ((a < 0) != (b < 0)))
            return quotient.astype(a.dtype, copy=False)
        if rounding_mode == "floor":
            return floor_divide_array(xp, a, b)
        return xp.trunc(a / b)

    def backward(self, grad: Tensor) -> tuple[Tensor, Tensor]:
        zero = masked_grad(grad, self.xp.zeros((), dtype=bool))
        return zero, zero


class Where(Function):
    """``cond ? a : b`` elementwise: each branch's gradient where it was chosen."""

    def forward(self, cond: Any, a: Any, b: Any) -> Any:
        return self.xp.where(cond, a, b)

    def backward(self, grad: Tensor) -> tuple[None, Tensor, Tensor]:
        cond = self.inputs[0]
        assert cond is not None
        return None, masked_grad(grad, cond.array), masked_grad(grad, ~cond.array)


class MaskedGrad(Function):
    """``grad`` where ``keep`` is true, else exactly 0: how a backward masks a gradient
    off (:class:`Clamp`, :class:`Where`, :class:`Maximum`, ...). PyTorch's rule: a
    masked-off element is 0 even where ``grad`` is infinite or NaN, which ``grad *
    keep`` would make NaN. Its own gradient masks ``gg`` the same way; ``keep`` (bool,
    broadcasting against ``grad``) is a constant.

    Examples
    --------
    >>> import numpy as np
    >>> import minitorch_accel as mta
    >>> g = mta.tensor([np.inf, 2.0])
    >>> MaskedGrad.apply(g, keep=np.array([False, True])).tolist()
    [0.0, 2.0]
    """

    saves_inputs = False  # backward needs only keep

    def forward(self, grad: Any, *, keep: Any) -> Any:
        self.keep = keep
        return self.xp.where(keep, grad, grad.dtype.type(0))

    def backward(self, gg: Tensor) -> Tensor:
        return masked_grad(gg, self.keep)


def masked_grad(grad: Tensor, keep: Any) -> Tensor:
    """:class:`MaskedGrad`: ``grad`` where the bool array ``keep`` is true, exactly 0
    elsewhere.
    """
    return MaskedGrad.apply(grad, keep=keep)


# ------------------------------------------------------------------ the functional API
def _scaled(name: str, a: Operand, b: Operand, alpha: Any) -> Operand:
    """``alpha * b`` for :func:`add` and :func:`sub` (PyTorch refuses a float ``alpha``
    for integer operands).
    """
    if alpha == 1 and not isinstance(alpha, float):
        return b
    integral = result_type(*[v for v in (a, b) if isinstance(v, Tensor) or is_number(v)])
    if integral.kind in "biu" and isinstance(alpha, (float, np.floating)):
        raise TypeError(
            f"{name}: alpha={alpha} is a float, but the operands are {integral}; give an int "
            "alpha, or convert the operands first with .float()"
        )
    return b * alpha


def add(a: Operand, b: Operand, *, alpha: Any = 1) -> Tensor:
    """``a + alpha * b``, broadcasting.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.add(mta.tensor([1.0, 2.0]), mta.tensor([1.0, 1.0]), alpha=3)
    tensor([4., 5.])
    """
    return _binary(Add, a, _scaled("add", a, b, alpha))


def sub(a: Operand, b: Operand, *, alpha: Any = 1) -> Tensor:
    """``a - alpha * b``, broadcasting."""
    return _binary(Sub, a, _scaled("sub", a, b, alpha))


def mul(a: Operand, b: Operand) -> Tensor:
    """``a * b``, broadcasting."""
    return _binary(Mul, a, b)


def div(a: Operand, b: Operand, *, rounding_mode: str | None = None) -> Tensor:
    """``a / b``, broadcasting, as PyTorch's ``div``.

    ``rounding_mode=None`` is true division (integers give the default float dtype);
    ``"trunc"`` rounds the quotient toward zero and ``"floor"`` down (Python's ``//``),
    both keeping the operands' :func:`result_type` (integers stay integers, and an
    integer division by zero raises ZeroDivisionError); their gradient is 0.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> a = mta.tensor([7, -7])
    >>> mta.div(a, 2), mta.div(a, 2, rounding_mode="floor"), mta.div(a, 2, rounding_mode="trunc")
    (tensor([ 3.5, -3.5]), tensor([ 3, -4]), tensor([ 3, -3]))
    """
    a, b = _tensors_or_numbers(a, b)
    if rounding_mode is None:
        dtype = result_type(a, b)
        if dtype.kind != "f":
            dtype = get_default_dtype()
        return _binary(Div, *common_operands("div", (a, b), dtype))
    if rounding_mode not in ("trunc", "floor"):
        raise ValueError(
            f"div: rounding_mode must be None, 'trunc' or 'floor', got {rounding_mode!r}"
        )
    a, b = common_operands("div", (a, b))
    if a.dtype.kind == "b":
        raise TypeError(f"div: rounding_mode={rounding_mode!r} is not defined for bool tensors")
    return DivRounded.apply(a, b, rounding_mode=rounding_mode)


def neg(a: Tensor) -> Tensor:
    """``-a``."""
    return Neg.apply(a)


def pow(a: Operand, exponent: Operand) -> Tensor:
    """``a ** exponent``; the exponent may be a number or a tensor.

    The result dtype is PyTorch's :func:`result_type` (``bool ** 2`` is int64, an
    integer tensor stays integer for a non-negative int exponent). Differs from
    PyTorch: a negative int exponent of an integer tensor gives the default float
    dtype (PyTorch raises). Gradients are PyTorch's, zero base included (see
    :class:`Pow`).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.tensor([True, False]) ** 2
    tensor([1, 0])
    """
    if isinstance(a, Tensor) and is_number(exponent):
        dtype = result_type(a, exponent)
        if dtype.kind != "f" and exponent < 0:
            dtype = get_default_dtype()
        if a.dtype != dtype:
            a = a.to(dtype=dtype)
        return PowScalar.apply(a, exponent=exponent)
    return _binary(Pow, a, exponent)


def exp(a: Tensor) -> Tensor:
    """``e ** a``."""
    return Exp.apply(_float_input("exp", a))


def log(a: Tensor) -> Tensor:
    """The natural logarithm."""
    return Log.apply(_float_input("log", a))


def sqrt(a: Tensor) -> Tensor:
    """The square root."""
    return Sqrt.apply(_float_input("sqrt", a))


def abs(a: Tensor) -> Tensor:
    """The absolute value (its gradient at 0 is 0)."""
    return Abs.apply(a)


def relu(a: Tensor) -> Tensor:
    """``max(a, 0)``, as PyTorch's ``clamp_min(a, 0)``: ``relu(-0.0)`` is ``-0.0``, NaN
    stays NaN, and the gradient at 0 is 0.
    """
    return Relu.apply(a)


def sigmoid(a: Tensor) -> Tensor:
    """``1 / (1 + exp(-a))``, computed without overflow."""
    return Sigmoid.apply(_float_input("sigmoid", a))


def tanh(a: Tensor) -> Tensor:
    """The hyperbolic tangent."""
    return Tanh.apply(_float_input("tanh", a))


def maximum(a: Operand, b: Operand) -> Tensor:
    """The elementwise maximum of two tensors, broadcasting. Where ``-0.0`` meets
    ``0.0`` the sign of the zero is not specified (PyTorch's CPU result depends on the
    tensor's size); use :func:`clamp` with a number bound for a result that keeps it.
    """
    return _binary(Maximum, a, b)


def minimum(a: Operand, b: Operand) -> Tensor:
    """The elementwise minimum of two tensors, broadcasting."""
    return _binary(Minimum, a, b)


def clamp(a: Tensor, min: Any = None, max: Any = None) -> Tensor:
    """Limit values to ``[min, max]``; the gradient is zero outside.

    ``min`` and ``max`` are both numbers or both tensors (broadcasting against ``a``;
    then each bound gets the gradient where it was chosen, as in PyTorch). Where
    ``min > max`` the result is ``max``. The result dtype is :func:`result_type` of
    ``a`` and the bounds.

    With number bounds, an element equal to a bound is kept as it is, as PyTorch:
    ``clamp(-0.0, min=0.0)`` is ``-0.0``, and the gradient there is 1. A NaN element
    gives NaN, a NaN bound NaN everywhere. With tensor bounds the sign of a zero result
    where ``-0.0`` meets ``0.0`` is not specified (PyTorch's own depends on the
    tensor's size there), nor is it for :func:`maximum` and :func:`minimum`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> x = mta.tensor([-2.0, 0.0, 2.0])
    >>> x.clamp(-1.0, 1.0), x.clamp(mta.tensor([-1.0, 1.0, 1.0]), mta.tensor([0.0, 2.0, 1.5]))
    (tensor([-1.,  0.,  1.]), tensor([-1. ,  1. ,  1.5]))
    """
    if min is None and max is None:
        raise ValueError("clamp: give at least one of min and max")
    bounds = [v for v in (min, max) if v is not None]
    if builtins.all(isinstance(v, Tensor) for v in bounds):
        a, *given = common_operands("clamp", (a, *bounds))
        low = given.pop(0) if min is not None else None
        high = given.pop(0) if max is not None else None
        return ClampTensor.apply(a, low, high)
    if not builtins.all(is_number(v) for v in bounds):
        kinds = ", ".join(f"{n}={type(v).__name__}" for n, v in (("min", min), ("max", max)))
        raise TypeError(
            f"clamp: min and max must both be numbers or both be Tensors (or None), got {kinds}"
        )
    dtype = result_type(a, *bounds)
    if a.dtype != dtype:
        a = a.to(dtype=dtype)  # float bounds make an integer tensor the default float dtype
    return Clamp.apply(a, low=min, high=max)


@on_input_device
def where(condition: Tensor, a: Operand, b: Operand) -> Tensor:
    """``a`` where ``condition`` is true, else ``b``, broadcasting all three; the
    result dtype is :func:`result_type` of ``a`` and ``b`` (numbers count as in
    PyTorch: ``where(c, 1, 0)`` is int64, ``where(c, 1.0, 0)`` the default float dtype).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.where(mta.tensor([True, False]), 1, 0)
    tensor([1, 0])
    """
    if condition.dtype != np.bool_:
        raise TypeError(f"where: condition must be a bool tensor, got {condition.dtype}")
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        dtype = result_type(condition.detach(), a, b)  # the numbers' dtype (condition is bool)
        a, b = number_as_tensor(a, dtype, condition), number_as_tensor(b, dtype, condition)
    else:
        a, b = common_operands("where", _tensors_or_numbers(a, b))
    try:
        return Where.apply(condition, a, b)
    except ValueError:
        try:
            np.broadcast_shapes(condition.shape, a.shape, b.shape)
        except ValueError:
            raise ValueError(
                f"where: shapes {condition.shape}, {a.shape} and {b.shape} do not broadcast"
            ) from None
        raise
