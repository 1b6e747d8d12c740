"""More elementwise math: ``rsqrt``, ``log1p``, ``sin``, ``cos``, ``tan``, ``sign``.

One small :class:`~minitorch_accel.core.function.Function` each: forward on the raw array,
backward in Tensor ops (so second derivatives work).
"""

from __future__ import annotations

from typing import Any

from ..core.function import Function
from ..core.tensor import Tensor
from .elementwise import masked_grad, sign_array
from .operands import _float_input


class Rsqrt(Function):
    """``1 / sqrt(a)``: ``d/da = -r**3 / 2`` from the saved output ``r``."""

    saves_output = True

    def forward(self, a: Any) -> Any:
        return 1 / self.xp.sqrt(a)

    def backward(self, grad: Tensor) -> Tensor:
        out = self.output()
        return grad * out * out * out * -0.5  # d/da a**-0.5 = -0.5 a**-1.5


class Log1p(Function):
    """``log(1 + a)``: ``d/da = 1 / (1 + a)``."""

    def forward(self, a: Any) -> Any:
        return self.xp.log1p(a)

    def backward(self, grad: Tensor) -> Tensor:
        return grad / (self.inputs[0] + 1.0)


class Sin(Function):
    """``sin(a)``: ``d/da = cos(a)``."""

    def forward(self, a: Any) -> Any:
        return self.xp.sin(a)

    def backward(self, grad: Tensor) -> Tensor:
        return grad * cos(self.inputs[0])


class Cos(Function):
    """``cos(a)``: ``d/da = -sin(a)``."""

    def forward(self, a: Any) -> Any:
        return self.xp.cos(a)

    def backward(self, grad: Tensor) -> Tensor:
        return grad * -sin(self.inputs[0])


class Tan(Function):
    """``tan(a)``: ``d/da = 1 + t**2`` from the saved output ``t``."""

    saves_output = True

    def forward(self, a: Any) -> Any:
        return self.xp.tan(a)

    def backward(self, grad: Tensor) -> Tensor:
        out = self.output()
        return grad * (out * out + 1.0)  # 1 + tan**2


class Sign(Function):
    """``sign(a)``, 0 at NaN as PyTorch (:func:`~.elementwise.sign_array`), a bool
    tensor as it is (a copy): the gradient is zero, exactly, even for an infinite
    incoming gradient.
    """

    saves_inputs = False  # backward needs no input's values

    def forward(self, a: Any) -> Any:
        return a.copy() if a.dtype.kind == "b" else sign_array(self.xp, a)

    def backward(self, grad: Tensor) -> Tensor:
        return masked_grad(grad, self.xp.zeros((), dtype=bool))  # flat where defined


def rsqrt(a: Tensor) -> Tensor:
    """``1 / sqrt(a)``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.rsqrt(mta.tensor([4.0, 0.25]))
    tensor([0.5, 2. ])
    """
    return Rsqrt.apply(_float_input("rsqrt", a))


def log1p(a: Tensor) -> Tensor:
    """``log(1 + a)``, accurate for small ``a``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.log1p(mta.tensor([0.0])).item()
    0.0
    """
    return Log1p.apply(_float_input("log1p", a))


def sin(a: Tensor) -> Tensor:
    """The sine (radians).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.sin(mta.tensor([0.0])).item()
    0.0
    """
    return Sin.apply(_float_input("sin", a))


def cos(a: Tensor) -> Tensor:
    """The cosine (radians).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.cos(mta.tensor([0.0])).item()
    1.0
    """
    return Cos.apply(_float_input("cos", a))


def tan(a: Tensor) -> Tensor:
    """The tangent (radians).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.tan(mta.tensor([0.0])).item()
    0.0
    """
    return Tan.apply(_float_input("tan", a))


def sign(a: Tensor) -> Tensor:
    """-1, 0 or 1 by the sign of each element (0 at NaN), in ``a``'s dtype; a bool
    tensor comes back as it is (a copy), as PyTorch. Gradient 0.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.sign(mta.tensor([-2.0, 0.0, 3.0])), mta.sign(mta.tensor([True, False]))
    (tensor([-1.,  0.,  1.]), tensor([ True, False]))
    """
    return Sign.apply(a)
