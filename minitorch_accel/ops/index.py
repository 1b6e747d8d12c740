"""Indexing along one dim: ``gather``, ``scatter``, ``index_select``, ``masked_fill``.

``gather(a, dim, index)`` reads ``a`` at ``index`` along ``dim`` and at every position
elsewhere (for ``dim=1``: ``out[i, j] = a[i, index[i, j]]``); its gradient adds back
into those positions, repeats accumulating. ``scatter`` writes instead of reading.
Sorting and selection (:mod:`~minitorch_accel.ops.sort`) return their values through
:class:`Gather`, so their gradients follow the indices they return.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.function import Function, on_input_device
from ..core.tensor import Tensor
from .shape import normalize_dim


def along(xp: Any, index: Any, dim: int) -> tuple[Any, ...]:
    """A full fancy index: ``index`` on ``dim``, and every position on the other dims
    (``a[along(xp, index, 1)][i, j] == a[i, index[i, j]]``).
    """
    grid = []
    for d, n in enumerate(index.shape):
        if d == dim:
            grid.append(index)
        else:
            shape = [1] * index.ndim
            shape[d] = n
            grid.append(xp.arange(n).reshape(shape))
    return tuple(grid)


class Gather(Function):
    """``a`` read at ``index`` along ``dim``; the gradient is scattered back (summed)."""

    def forward(self, a: Any, index: Any, *, dim: int) -> Any:
        self.dim, self.in_shape = dim, a.shape
        return a[along(self.xp, index, dim)]

    def backward(self, grad: Tensor) -> tuple[Tensor, None]:
        index = self.inputs[1]
        return ScatterAdd.apply(grad, index, dim=self.dim, shape=self.in_shape), None


class ScatterAdd(Function):
    """``zeros(shape)`` with ``src`` added at ``index`` along ``dim``."""

    def forward(self, src: Any, index: Any, *, dim: int, shape: tuple[int, ...]) -> Any:
        self.dim = dim
        out = self.xp.zeros(shape, dtype=src.dtype)
        self.xp.add.at(out, along(self.xp, index, dim), src)
        return out

    def backward(self, grad: Tensor) -> tuple[Tensor, None]:
        return Gather.apply(grad, self.inputs[1], dim=self.dim), None


class Scatter(Function):
    """A copy of ``a`` with ``src`` written at ``index`` along ``dim``."""

    def forward(self, a: Any, index: Any, src: Any, *, dim: int) -> Any:
        self.dim = dim
        out = a.copy()
        out[along(self.xp, index, dim)] = src
        return out

    def backward(self, grad: Tensor) -> tuple[Tensor | None, None, Tensor | None]:
        _, index, src = self.inputs
        assert index is not None and src is not None
        zeros = Tensor._make(self.xp.zeros(src.shape, grad.dtype), self.device, False, None)
        grad_a = Scatter.apply(grad, index, zeros, dim=self.dim)
        grad_src = Gather.apply(grad, index, dim=self.dim) if self.needs_input_grad[2] else None
        return grad_a, None, grad_src


def _check_index(op: str, a: Tensor, dim: int, index: Tensor) -> int:
    if not isinstance(index, Tensor) or index.dtype.kind not in "iu":
        raise TypeError(f"{op}: index must be an integer tensor, got {_describe(index)}")
    d = normalize_dim(dim, a.ndim, op)
    if index.ndim != a.ndim:
        raise ValueError(
            f"{op}: index has {index.ndim} dims but the tensor has {a.ndim} (shape {a.shape})"
        )
    for i, (n, m) in enumerate(zip(index.shape, a.shape, strict=True)):
        if i != d and n > m:
            raise ValueError(
                f"{op}: index shape {index.shape} is larger than {a.shape} outside dim {dim}"
            )
    return d


def check_bounds(op: str, index: Tensor, size: int, dim: int) -> None:
    """Raise PyTorch's error if an entry of ``index`` is outside ``[0, size)``: gather
    and scatter do not wrap negative indices around as Python does.
    """
    array = index.array
    with index.device.guard():
        bad = (array < 0) | (array >= size)
        first = int(array[bad].reshape(-1)[0]) if bool(bad.any()) else None
    if first is not None:
        raise RuntimeError(
            f"{op}: index {first} is out of bounds for dimension {dim} with size {size}"
        )


def _describe(value: Any) -> str:
    return f"a tensor of {value.dtype}" if isinstance(value, Tensor) else type(value).__name__


def gather(input: Tensor, dim: int, index: Tensor) -> Tensor:
    """Values of ``input`` at ``index`` along ``dim`` (``out[i][j] = input[i][index[i][j]]``
    for ``dim=1``); ``index`` has ``input``'s number of dims.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.gather(mta.tensor([[1, 2], [3, 4]]), 1, mta.tensor([[1, 1], [0, 1]])).tolist()
    [[2, 2], [3, 4]]
    """
    d = _check_index("gather", input, dim, index)
    check_bounds("gather", index, input.shape[d] if input.ndim else 1, d)
    return Gather.apply(input, index, dim=d)


def scatter(
    input: Tensor, dim: int, index: Tensor, src: Tensor | float, reduce: str | None = None
) -> Tensor:
    """A copy of ``input`` with ``src`` written at ``index`` along ``dim``
    (``out[i][index[i][j]] = src[i][j]`` for ``dim=1``); ``src`` may be a number.

    Where ``index`` repeats a position, which write wins is not specified (as in PyTorch).
    ``reduce="add"`` or ``"multiply"`` combines instead of writing (PyTorch's deprecated
    form of :func:`~minitorch_accel.scatter_reduce` with ``"sum"``/``"prod"``; here it is
    differentiable, where PyTorch's backward raises).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.scatter(mta.zeros(2, 3), 1, mta.tensor([[2], [0]]), 5.0).tolist()
    [[0.0, 0.0, 5.0], [5.0, 0.0, 0.0]]
    """
    d = _check_index("scatter", input, dim, index)
    check_bounds("scatter", index, input.shape[d] if input.ndim else 1, d)
    if reduce is not None:
        from .index_more import scatter_reduce

        modes = {"add": "sum", "multiply": "prod"}
        if reduce not in modes:
            raise ValueError(f"scatter: reduce must be 'add' or 'multiply', got {reduce!r}")
        if not isinstance(src, Tensor):
            with input.device.guard():
                filled = input.xp.full(index.shape, src, dtype=input.dtype)
            src = Tensor._make(filled, input.device, False, None)
        return scatter_reduce(input, d, index, src, modes[reduce])
    if isinstance(src, Tensor):
        if src.ndim != index.ndim or any(
            s < n for s, n in zip(src.shape, index.shape, strict=True)
        ):
            raise ValueError(
                f"scatter: src of shape {src.shape} is smaller than index {index.shape}"
            )
        src = src[tuple(slice(0, n) for n in index.shape)].to(dtype=input.dtype)
    else:
        with input.device.guard():
            filled = input.xp.full(index.shape, src, dtype=input.dtype)
        src = Tensor._make(filled, input.device, False, None)
    return Scatter.apply(input, index, src, dim=d)


def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:
    """The slices of ``input`` at the positions in the 1-d ``index`` along ``dim``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.index_select(mta.tensor([[1, 2, 3], [4, 5, 6]]), 1, mta.tensor([2, 0])).tolist()
    [[3, 1], [6, 4]]
    """
    if not isinstance(index, Tensor) or index.ndim > 1 or index.dtype.kind not in "iu":
        raise TypeError(f"index_select: index must be a 1-d integer tensor, got {index!r}")
    d = normalize_dim(dim, input.ndim, "index_select")
    size = input.shape[d] if input.ndim else 1
    with index.device.guard():
        bad = bool(((index.array < 0) | (index.array >= size)).any())
    if bad:
        raise IndexError(
            f"index_select: index out of range in self (dim {dim} has size {size}, the "
            f"index holds values outside 0..{size - 1})"
        )
    if input.ndim == 0:
        return input.reshape(1)[index.reshape(-1)].reshape(index.shape)
    return input[(slice(None),) * d + (index.reshape(-1),)]


@on_input_device
def masked_fill(input: Tensor, mask: Tensor, value: float | Tensor) -> Tensor:
    """A copy of ``input`` with ``value`` where the bool ``mask`` (broadcast) is true.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.masked_fill(mta.tensor([1.0, 2.0, 3.0]), mta.tensor([True, False, True]), 0.0)
    tensor([0., 2., 0.])
    """
    from .elementwise import where

    if not isinstance(mask, Tensor) or mask.dtype != np.bool_:
        raise TypeError(f"masked_fill: mask must be a bool tensor, got {_describe(mask)}")
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise ValueError(
                f"masked_fill: value must be a number or a 0-d tensor, got {value.shape}"
            )
        fill = value.to(dtype=input.dtype)
    else:
        fill = Tensor._make(input.xp.asarray(value, dtype=input.dtype), input.device, False, None)
    return where(mask, fill, input)
