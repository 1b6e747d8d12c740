"""Elementwise ops: arithmetic, unary math, activations, comparisons.

Binary ops broadcast like NumPy; the autograd engine sums each gradient back to the
shape of its input, so a backward here returns full-shape gradients.

How scalars become operands and which dtype two operands share live in
:mod:`~minitorch_accel.ops.operands`; the comparisons (bool results, no gradient) in
:mod:`~minitorch_accel.ops.compare`. Both are importable from here as well.
"""

from __future__ import annotations

from typing import Any

import numpy as np

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
from .operands import _promote as _promote
from .operands import _scalar_dtype as _scalar_dtype
from .operands import as_operand as as_operand
from .operands import result_dtype as result_dtype


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


class PowScalar(Function):
    """``a ** exponent`` for a Python number: ``d/da = exponent * a**(exponent-1)``."""

    def forward(self, a: Any, *, exponent: float) -> Any:
        self.exponent = exponent
        return a**exponent

    def backward(self, grad: Tensor) -> Tensor:
        (a,) = self.inputs
        p = self.exponent
        if p == 0:  # zeros, as PyTorch: not a ** -1 * 0 (nan at 0), nor grad * 0 (nan at inf)
            return masked_grad(grad, self.xp.zeros((), dtype=bool))
        if p == 2:
            return grad * (a * 2.0)
        return grad * (a ** (p - 1) * p)


class Pow(Function):
    """``a ** b`` for two tensors: ``d/da = b a**(b-1)``, ``d/db = a**b log(a)``."""

    saves_output = True

    def forward(self, a: Any, b: Any) -> Any:
        return a**b

    def backward(self, grad: Tensor) -> tuple[Tensor | None, Tensor | None]:
        a, b = self.inputs
        grad_a = grad * b * a ** (b - 1) if self.needs_input_grad[0] else None
        grad_b = grad * self.output() * log(a) if self.needs_input_grad[1] else None
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
    """``max(a, 0)``: the gradient passes where the output is positive."""

    saves_inputs = False  # backward needs no input's values
    saves_output = True

    def forward(self, a: Any) -> Any:
        return self.xp.maximum(a, 0)

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
    """``a`` limited to ``[low, high]``: the gradient passes inside the range only."""

    saves_inputs = False  # backward needs no input's values

    def forward(self, a: Any, *, low: float | None, high: float | None) -> Any:
        inside = self.xp.ones(a.shape, dtype=bool)
        if low is not None:
            inside &= a >= low
        if high is not None:
            inside &= a <= high
        self.inside = inside
        return self.xp.clip(a, low, high)

    def backward(self, grad: Tensor) -> Tensor:
        return masked_grad(grad, self.inside)


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
def add(a: Operand, b: Operand) -> Tensor:
    """``a + b``, broadcasting."""
    return _binary(Add, a, b)


def sub(a: Operand, b: Operand) -> Tensor:
    """``a - b``, broadcasting."""
    return _binary(Sub, a, b)


def mul(a: Operand, b: Operand) -> Tensor:
    """``a * b``, broadcasting."""
    return _binary(Mul, a, b)


def div(a: Operand, b: Operand) -> Tensor:
    """``a / b`` (true division: integers give float32), broadcasting."""
    if isinstance(a, Tensor) and a.dtype.kind != "f":
        a = a.to(dtype=np.float32)
    if isinstance(b, Tensor) and b.dtype.kind != "f":
        b = b.to(dtype=np.float32)
    return _binary(Div, a, b)


def neg(a: Tensor) -> Tensor:
    """``-a``."""
    return Neg.apply(a)


def pow(a: Operand, exponent: Operand) -> Tensor:
    """``a ** exponent``; the exponent may be a number or a tensor.

    An integer tensor stays integer for non-negative integer exponents; a fractional or
    negative exponent makes it float32 (NumPy would refuse or give float64).
    """
    if isinstance(a, Tensor) and isinstance(exponent, (int, float)):
        if a.dtype.kind != "f" and (isinstance(exponent, float) or exponent < 0):
            a = a.to(dtype=np.float32)
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
    """``max(a, 0)``."""
    return Relu.apply(a)


def sigmoid(a: Tensor) -> Tensor:
    """``1 / (1 + exp(-a))``, computed without overflow."""
    return Sigmoid.apply(_float_input("sigmoid", a))


def tanh(a: Tensor) -> Tensor:
    """The hyperbolic tangent."""
    return Tanh.apply(_float_input("tanh", a))


def maximum(a: Operand, b: Operand) -> Tensor:
    """The elementwise maximum of two tensors, broadcasting."""
    return _binary(Maximum, a, b)


def minimum(a: Operand, b: Operand) -> Tensor:
    """The elementwise minimum of two tensors, broadcasting."""
    return _binary(Minimum, a, b)


def clamp(a: Tensor, min: float | None = None, max: float | None = None) -> Tensor:
    """Limit values to ``[min, max]``; the gradient is zero outside."""
    if min is None and max is None:
        raise ValueError("clamp: give at least one of min and max")
    if a.dtype.kind != "f" and (isinstance(min, float) or isinstance(max, float)):
        a = a.to(dtype=np.float32)  # float bounds make an integer tensor float32, not float64
    return Clamp.apply(a, low=min, high=max)


@on_input_device
def where(condition: Tensor, a: Operand, b: Operand) -> Tensor:
    """``a`` where ``condition`` is true, else ``b``, broadcasting all three."""
    if condition.dtype != np.bool_:
        raise TypeError(f"where: condition must be a bool tensor, got {condition.dtype}")
    ref = a if isinstance(a, Tensor) else b if isinstance(b, Tensor) else None
    if ref is None:
        ref = Tensor._make(
            condition.xp.asarray(1.0, dtype=np.float32), condition.device, False, None
        )
    a, b = as_operand(a, ref), as_operand(b, ref)
    if a.dtype is not b.dtype and a.dtype != b.dtype:  # equal dtypes may be two objects
        common = result_dtype(a.dtype, b.dtype)
        a, b = a.to(dtype=common), b.to(dtype=common)
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
