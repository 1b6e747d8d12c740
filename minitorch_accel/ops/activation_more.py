"""Piecewise activations: ``hardtanh`` and ``relu6``, ``hardsigmoid``, ``hardswish``,
``threshold``, ``hardshrink``, ``softshrink``, and ``prelu``.

Their gradients follow PyTorch's kernels, kinks and non-finite values included:

- Where the function is flat the gradient is *selected* to be exactly 0, never computed
  as ``grad * 0`` (which gives NaN for an infinite incoming gradient).
- At a kink the gradient is the one PyTorch's test picks: ``hardtanh`` (and ``relu6``)
  gives 0 at ``min_val`` and ``max_val``, ``hardswish`` 0 at -3 and ``grad`` at 3,
  ``threshold`` 0 where ``x == threshold``, the shrinks 0 at ``+-lambd``.
- A NaN input fails every comparison, so it goes where PyTorch's per-element test sends
  it: ``hardtanh``, ``hardswish``, ``threshold`` and the shrinks pass the gradient,
  ``hardsigmoid`` gives 0, ``prelu`` takes the ``weight * x`` branch.

(PyTorch's CPU kernels process long tensors in vector registers, and those paths
disagree with its per-element code at NaN for ``hardtanh``, ``hardswish`` and the
shrinks. This follows the per-element code, which its GPU kernels share.)

Unlike PyTorch, integer input is converted to float32 (PyTorch keeps integers in
``hardtanh``, ``relu6`` and ``threshold`` and refuses them in the others).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.function import Function
from ..core.tensor import Tensor
from .elementwise import clamp_array, masked_grad, where
from .operands import _float_input

#: PyTorch's hardsigmoid kernel multiplies by the float32 constant ``1.0f / 6.0f`` in
#: every dtype: float64 gradients use the same number, to agree with it exactly.
_ONE_SIXTH = float(np.float32(1.0) / np.float32(6.0))


class MaskedGradient(Function):
    """A piecewise op whose backward passes ``grad * slope`` where its forward set the
    bool array ``self.passes``, and exactly 0 elsewhere. ``slope`` is a constant (1 by
    default).
    """

    saves_inputs = False  # backward needs the mask only
    slope = 1.0
    passes: Any

    def backward(self, grad: Tensor) -> Tensor:
        return masked_grad(grad * self.slope if self.slope != 1.0 else grad, self.passes)


class Hardtanh(MaskedGradient):
    """``x`` limited to ``[min_val, max_val]``; the gradient is 0 unless
    ``min_val < x < max_val`` (0 at the bounds, as PyTorch). An ``x`` equal to a bound
    keeps its bits (``-0.0`` stays ``-0.0``: :func:`~.elementwise.clamp_array`).
    """

    def forward(self, x: Any, *, min_val: float, max_val: float) -> Any:
        self.passes = ~((x <= min_val) | (x >= max_val))  # PyTorch's test: NaN passes
        return clamp_array(self.xp, x, min_val, max_val)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """``x`` limited to ``[min_val, max_val]``; its gradient is 0 at both bounds.

    Raises
    ------
    ValueError
        If ``min_val > max_val``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.functional.hardtanh(mta.tensor([-2.0, 0.5, 3.0]))
    tensor([-1. ,  0.5,  1. ])
    """
    if min_val > max_val:
        raise ValueError(
            f"hardtanh: min_val ({min_val}) cannot be greater than max_val ({max_val})"
        )
    return Hardtanh.apply(_float_input("hardtanh", input), min_val=min_val, max_val=max_val)


def relu6(input: Tensor) -> Tensor:
    """``min(max(x, 0), 6)``: :func:`hardtanh` on ``[0, 6]`` (its gradient is 0 at 0 and 6;
    ``relu6(-0.0)`` is ``-0.0``, as PyTorch).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.functional.relu6(mta.tensor([-1.0, 3.0, 8.0]))
    tensor([0., 3., 6.])
    """
    return hardtanh(input, 0.0, 6.0)


class Hardsigmoid(MaskedGradient):
    """``clip(x + 3, 0, 6) / 6``: slope 1/6 for ``-3 < x < 3``, else exactly 0."""

    slope = _ONE_SIXTH

    def forward(self, x: Any) -> Any:
        self.passes = (x > -3) & (x < 3)  # NaN fails: its gradient is 0, as in PyTorch
        return self.xp.clip(x + 3, 0, 6) / 6


def hardsigmoid(input: Tensor) -> Tensor:
    """``0`` for ``x <= -3``, ``1`` for ``x >= 3``, ``x / 6 + 1/2`` between.

    As PyTorch, the gradient ``1/6`` is that float32 number in every dtype (float64
    gradients differ from ``1/6`` by 3e-8 relative).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.functional.hardsigmoid(mta.tensor([-4.0, 0.0, 4.0]))
    tensor([0. , 0.5, 1. ])
    """
    return Hardsigmoid.apply(_float_input("hardsigmoid", input))


class Hardswish(Function):
    """``x * clip(x + 3, 0, 6) / 6``: the gradient is 0 for ``x <= -3``,
    ``grad * (x / 3 + 1/2)`` for ``-3 < x < 3`` and ``grad`` from 3 up (and at NaN).
    """

    def forward(self, x: Any) -> Any:
        return x * self.xp.clip(x + 3, 0, 6) / 6

    def backward(self, grad: Tensor) -> Tensor:
        x = self.inputs[0]
        passed = where(x < 3, grad * (x / 3.0 + 0.5), grad)
        return masked_grad(passed, ~(x.array <= -3))  # NaN passes


def hardswish(input: Tensor) -> Tensor:
    """``x * hardsigmoid(x)`` (Howard et al., 2019).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.functional.hardswish(mta.tensor([-4.0, 0.0, 4.0]))
    tensor([-0.,  0.,  4.])
    """
    return Hardswish.apply(_float_input("hardswish", input))


class Threshold(MaskedGradient):
    """``value`` where ``x <= threshold``, else ``x``; the gradient passes where ``x`` did."""

    def forward(self, x: Any, *, threshold: float, value: float) -> Any:
        below = x <= threshold
        self.passes = ~below
        return self.xp.where(below, x.dtype.type(value), x)


def threshold(input: Tensor, threshold: float, value: float) -> Tensor:
    """``value`` where ``input <= threshold``, else ``input``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.functional.threshold(mta.tensor([0.5, 2.0]), 1.0, -1.0)
    tensor([-1.,  2.])
    """
    return Threshold.apply(_float_input("threshold", input), threshold=threshold, value=value)


class Hardshrink(MaskedGradient):
    """0 where ``-lambd <= x <= lambd``, else ``x``."""

    def forward(self, x: Any, *, lambd: float) -> Any:
        self.passes = ~((x >= -lambd) & (x <= lambd))
        return self.xp.where(self.passes, x, 0)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """0 where ``|x| <= lambd``, else ``x``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.functional.hardshrink(mta.tensor([-1.0, 0.2, 0.7]))
    tensor([-1. ,  0. ,  0.7])
    """
    return Hardshrink.apply(_float_input("hardshrink", input), lambd=lambd)


class Softshrink(MaskedGradient):
    """``x -+ lambd`` where ``|x| > lambd``, else a zero of ``x``'s sign."""

    def forward(self, x: Any, *, lambd: float) -> Any:
        xp = self.xp
        self.passes = ~((x >= -lambd) & (x <= lambd))
        # copysign: PyTorch's zeros keep the input's sign (-0.3 gives -0.0)
        return xp.where(self.passes, x - xp.copysign(lambd, x), xp.copysign(0, x))


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x - lambd`` for ``x > lambd``, ``x + lambd`` for ``x < -lambd``, else 0.

    Raises
    ------
    ValueError
        If ``lambd`` is negative.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.functional.softshrink(mta.tensor([-1.0, 0.2, 0.7]))
    tensor([-0.5,  0. ,  0.2])
    """
    if not lambd >= 0:
        raise ValueError(f"softshrink: lambd must be >= 0, got {lambd}")
    return Softshrink.apply(_float_input("softshrink", input), lambd=lambd)


class PRelu(Function):
    """``x`` where ``x > 0``, else ``weight * x``, ``weight`` broadcast against ``x``:
    the gradients are ``grad`` or ``weight * grad`` for ``x``, and 0 or ``x * grad``
    for ``weight`` (selected, not multiplied by a mask, as PyTorch).
    """

    def forward(self, x: Any, weight: Any) -> Any:
        return self.xp.where(x > 0, x, weight * x)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, Tensor | None]:
        x, weight = self.inputs
        positive = x > 0
        need_x, need_weight = self.needs_input_grad
        grad_x = where(positive, grad, grad * weight) if need_x else None
        grad_weight = masked_grad(grad * x, ~positive.array) if need_weight else None
        return grad_x, grad_weight


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """``x`` where ``x > 0``, else ``weight * x``, with a learned slope: one ``weight``
    for every element, or one per channel (dim 1 of ``input``).

    Raises
    ------
    ValueError
        If ``weight`` is not 0- or 1-D, or has neither 1 value nor one per channel.
    TypeError
        If ``input`` and ``weight`` have different dtypes.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> x = mta.tensor([[-1.0, -1.0], [2.0, -2.0]])
    >>> mta.nn.functional.prelu(x, mta.tensor([0.1, 0.5]))
    tensor([[-0.1, -0.5],
            [ 2. , -1. ]])
    """
    if weight.ndim > 1:
        raise ValueError(
            f"prelu: weight must be a scalar or 1-D tensor (one slope per channel), got "
            f"shape {weight.shape}"
        )
    channels = input.shape[1] if input.ndim >= 2 else 1
    if weight.numel() not in (1, channels):
        raise ValueError(
            f"prelu: weight has {weight.numel()} values but the input of shape "
            f"{input.shape} has {channels} channel(s) (dim 1); give one value or one per "
            f"channel, e.g. nn.PReLU(num_parameters={channels})"
        )
    if input.dtype != weight.dtype:
        raise TypeError(
            f"prelu: input is {input.dtype} but weight is {weight.dtype}; "
            "convert one with .to(dtype=...)"
        )
    if weight.numel() == 1:
        slope = weight.reshape(())
    else:  # (C,) -> (C, 1, ..., 1): broadcast along dim 1
        slope = weight.reshape((channels,) + (1,) * (input.ndim - 2))
    return PRelu.apply(input, slope)
