"""``einsum``: sums of products named by index letters, e.g. ``"bij,bjk->bik"``.

The gradient for one operand is another einsum: the output's gradient times every
other operand, summed down to that operand's letters. A letter only that operand has
(summed away in the forward) comes back by broadcasting.
"""

from __future__ import annotations

import builtins
import string
from typing import Any

from ..core.function import Function
from ..core.tensor import Tensor


def _parse(equation: str, ndims: list[int]) -> tuple[list[str], str]:
    """Input subscripts and the output subscript, letters only: ``...`` becomes letters
    the equation does not use, one per broadcast dim (right-aligned, as NumPy and
    PyTorch), and an implicit output (no ``->``) is those dims, then the letters used
    once, sorted.
    """
    text = equation.replace(" ", "")
    lhs, arrow, rhs = text.partition("->")
    inputs = lhs.split(",")
    if len(inputs) != len(ndims):
        raise ValueError(f"einsum: {equation!r} names {len(inputs)} operands, got {len(ndims)}")
    if "." in text.replace("...", ""):
        raise ValueError(f"einsum: {equation!r} has a '.' outside '...'")
    free = [c for c in string.ascii_letters if c not in text]
    spans = [
        n - len(subs.replace("...", "")) if "..." in subs else 0
        for subs, n in zip(inputs, ndims, strict=True)
    ]
    if builtins.min(spans, default=0) < 0:
        raise ValueError(f"einsum: {equation!r} names more dims than an operand has")
    ellipsis = "".join(free[: builtins.max(spans, default=0)])
    inputs = [
        subs.replace("...", ellipsis[len(ellipsis) - k :])
        for subs, k in zip(inputs, spans, strict=True)
    ]
    for subs in inputs:
        if len(set(subs)) != len(subs):
            raise ValueError(
                f"einsum: a letter repeated within one operand ({subs!r}) is not supported"
            )
    if arrow:
        return inputs, rhs.replace("...", ellipsis)
    letters = "".join(inputs)
    once = sorted(c for c in set(letters) if letters.count(c) == 1 and c not in ellipsis)
    return inputs, ellipsis + "".join(once)


def _broadcast(inputs: list[str], tensors: list[Tensor]) -> list[Tensor]:
    """Each operand with its size-1 dims expanded to their letter's size elsewhere
    (dims named by one letter broadcast, as PyTorch's einsum).
    """
    size: dict[str, int] = {}
    for subs, t in zip(inputs, tensors, strict=True):
        for c, n in zip(subs, t.shape, strict=True):
            if size.get(c, 1) not in (1, n) and n != 1:
                raise ValueError(
                    f"einsum: dim {c!r} has sizes {size[c]} and {n}; they must match or be 1"
                )
            size[c] = builtins.max(size.get(c, 1), n)
    out = []
    for subs, t in zip(inputs, tensors, strict=True):
        shape = tuple(size[c] for c in subs)
        out.append(t if tuple(t.shape) == shape else t.expand(shape))
    return out


class Einsum(Function):
    """``einsum(subscripts, *operands)``: each operand's gradient is an einsum of the others."""

    def forward(self, *arrays: Any, inputs: tuple[str, ...], output: str) -> Any:
        self.subs, self.out_subs = inputs, output
        return self.xp.einsum(",".join(inputs) + "->" + output, *arrays)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        grads: list[Tensor | None] = []
        for i, subs in enumerate(self.subs):
            if not self.needs_input_grad[i]:
                grads.append(None)
                continue
            others = [
                (s, t)
                for j, (s, t) in enumerate(zip(self.subs, self.inputs, strict=True))
                if j != i
            ]
            known = set(self.out_subs).union(*[set(s) for s, _ in others])
            target = "".join(c for c in subs if c in known)
            g = Einsum.apply(
                grad,
                *[t for _, t in others],
                inputs=(self.out_subs, *[s for s, _ in others]),
                output=target,
            )
            if target != subs:  # letters summed only in this operand: broadcast back
                shape = [g.shape[target.index(c)] if c in target else 1 for c in subs]
                g = g.reshape(shape).expand(self.inputs[i].shape)
            grads.append(g)
        return tuple(grads)


def einsum(equation: str, *operands: Any) -> Tensor:
    """Einstein summation, e.g. ``einsum("ij,jk->ik", a, b)`` is ``a @ b``.

    Letters name dims; a letter absent from the output is summed over. Without ``->``
    the output holds the letters used once, in alphabetical order. ``...`` stands for the
    remaining (broadcast) dims, and dims of size 1 broadcast, as in PyTorch. Not
    supported: a letter repeated within one operand (diagonals).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> a, b = mta.ones(2, 3), mta.ones(3, 4)
    >>> mta.einsum("ij,jk->ik", a, b).shape
    (2, 4)
    >>> mta.einsum("ij->", a).item()
    6.0
    >>> mta.einsum("...ij,...jk->...ik", mta.ones(5, 2, 3), b).shape
    (5, 2, 4)
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    for t in operands:
        if not isinstance(t, Tensor):
            raise TypeError(
                f"einsum: operands must be Tensors, got {type(t).__name__}; wrap it with "
                "minitorch_accel.tensor(...)"
            )
    inputs, output = _parse(equation, [t.ndim for t in operands])
    for subs, t in zip(inputs, operands, strict=True):
        if len(subs) != t.ndim:
            raise ValueError(f"einsum: {subs!r} names {len(subs)} dims of a {t.ndim}-d operand")
    from .operands import result_dtype

    dtype = result_dtype(*[t.dtype for t in operands])
    tensors = _broadcast(inputs, [t.to(dtype=dtype) for t in operands])
    return Einsum.apply(*tensors, inputs=tuple(inputs), output=output)
