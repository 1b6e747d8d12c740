"""``einsum``: sums of products named by index letters, e.g. ``"bij,bjk->bik"``.

The gradient for one operand is another einsum: the output's gradient times every
other operand, summed down to that operand's letters. A letter only that operand has
(summed away in the forward) comes back by broadcasting.
"""

from __future__ import annotations

from typing import Any

from ..core.function import Function
from ..core.tensor import Tensor


def _parse(equation: str, count: int) -> tuple[list[str], str]:
    """Input subscripts and the output subscript (implicit: letters used once, sorted)."""
    text = equation.replace(" ", "")
    if "." in text:
        raise ValueError("einsum: '...' is not supported; name every dim with a letter")
    lhs, arrow, rhs = text.partition("->")
    inputs = lhs.split(",")
    if len(inputs) != count:
        raise ValueError(f"einsum: {equation!r} names {len(inputs)} operands, got {count}")
    for subs in inputs:
        if len(set(subs)) != len(subs):
            raise ValueError(
                f"einsum: a letter repeated within one operand ({subs!r}) is not supported"
            )
    if not arrow:
        letters = "".join(inputs)
        rhs = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    return inputs, rhs


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
    the output holds the letters used once, in alphabetical order. Not supported: ``...``
    and a letter repeated within one operand (diagonals).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> a, b = mta.ones(2, 3), mta.ones(3, 4)
    >>> mta.einsum("ij,jk->ik", a, b).shape
    (2, 4)
    >>> mta.einsum("ij->", a).item()
    6.0
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    inputs, output = _parse(equation, len(operands))
    for subs, t in zip(inputs, operands, strict=True):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"einsum: operands must be Tensors, got {type(t).__name__}; wrap it with "
                "minitorch_accel.tensor(...)"
            )
        if len(subs) != t.ndim:
            raise ValueError(f"einsum: {subs!r} names {len(subs)} dims of a {t.ndim}-d operand")
    from .operands import result_dtype

    dtype = result_dtype(*[t.dtype for t in operands])
    tensors = [t.to(dtype=dtype) for t in operands]
    return Einsum.apply(*tensors, inputs=tuple(inputs), output=output)
