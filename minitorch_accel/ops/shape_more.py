"""More shape ops, PyTorch's names: ``flip``, ``roll``, ``rot90``, ``tril``/``triu``,
``diagonal``, ``diag``, ``diag_embed``, ``trace``, ``movedim``, ``swapaxes``, ``narrow``,
``ravel``, ``tile``, the ``broadcast_*`` family, ``meshgrid``, ``atleast_*d`` and the
``*stack`` joins.

Views stay views as in PyTorch (``diagonal``, ``narrow``, ``movedim``, ``broadcast_to``,
``meshgrid``: writes through them reach the input); ``flip``, ``roll``, ``tril`` and
``diag_embed`` return new memory. Each new Function is a few lines; the rest are
compositions of :mod:`~minitorch_accel.ops.shape`'s ops.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core.factories import tensor as _tensor
from ..core.function import Function
from ..core.size import Size
from ..core.tensor import Tensor
from .shape import Permute, cat, normalize_dim


def _dims(dims: int | Sequence[int], ndim: int, op: str) -> tuple[int, ...]:
    listed = (dims,) if isinstance(dims, (int, np.integer)) else tuple(dims)
    out = tuple(normalize_dim(d, ndim, op) for d in listed)
    if len(set(out)) != len(out):
        raise RuntimeError(f"{op}: dims {tuple(listed)} name a dim more than once")
    return out


class Flip(Function):
    """``a`` reversed along ``dims`` (a copy); the gradient is flipped back."""

    saves_inputs = False

    def forward(self, a: Any, *, dims: tuple[int, ...]) -> Any:
        self.dims = dims
        return self.xp.flip(a, dims).copy()

    def backward(self, grad: Tensor) -> Tensor:
        return Flip.apply(grad, dims=self.dims)


def flip(input: Tensor, dims: int | Sequence[int]) -> Tensor:
    """``input`` with the order of its elements reversed along each of ``dims`` (a copy,
    as in PyTorch).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.flip(mta.tensor([[1, 2], [3, 4]]), (0, 1)).tolist()
    [[4, 3], [2, 1]]
    """
    return Flip.apply(input, dims=_dims(dims, input.ndim, "flip")) if input.ndim else input.clone()


def fliplr(input: Tensor) -> Tensor:
    """``input`` flipped left to right (dim 1); needs at least 2 dims.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.fliplr(mta.tensor([[1, 2], [3, 4]])).tolist()
    [[2, 1], [4, 3]]
    """
    if input.ndim < 2:
        raise RuntimeError("fliplr: input must be >= 2-d.")
    return flip(input, 1)


def flipud(input: Tensor) -> Tensor:
    """``input`` flipped upside down (dim 0); needs at least 1 dim.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.flipud(mta.tensor([[1, 2], [3, 4]])).tolist()
    [[3, 4], [1, 2]]
    """
    if input.ndim < 1:
        raise RuntimeError("flipud: input must be >= 1-d.")
    return flip(input, 0)


class Roll(Function):
    """``a`` rolled by ``shifts`` along ``dims`` (a copy); the gradient rolls back."""

    saves_inputs = False

    def forward(self, a: Any, *, shifts: tuple[int, ...], dims: tuple[int, ...]) -> Any:
        self.shifts, self.dims = shifts, dims
        return self.xp.roll(a, shifts, dims)

    def backward(self, grad: Tensor) -> Tensor:
        return Roll.apply(grad, shifts=tuple(-s for s in self.shifts), dims=self.dims)


def roll(
    input: Tensor, shifts: int | Sequence[int], dims: int | Sequence[int] | None = None
) -> Tensor:
    """``input`` with its elements moved ``shifts`` places along ``dims`` (those pushed
    off the end come back at the start); without ``dims`` the tensor is rolled as 1-d.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.roll(mta.tensor([1, 2, 3, 4]), 1).tolist()
    [4, 1, 2, 3]
    >>> mta.roll(mta.tensor([[1, 2], [3, 4]]), (1, 1), (0, 1)).tolist()
    [[4, 3], [2, 1]]
    """
    moves = (shifts,) if isinstance(shifts, (int, np.integer)) else tuple(shifts)
    if dims is None:
        if len(moves) != 1:
            raise RuntimeError(f"roll: without dims give one shift, got {moves}")
        return roll(input.reshape(-1), moves, 0).reshape(input.shape)
    axes = (dims,) if isinstance(dims, (int, np.integer)) else tuple(dims)
    if len(moves) != len(axes):
        raise RuntimeError(
            f"roll: shifts and dimensions must align. shifts: {len(moves)}, dims: {len(axes)}"
        )
    axes = tuple(normalize_dim(d, input.ndim, "roll") for d in axes)
    return Roll.apply(input, shifts=tuple(int(s) for s in moves), dims=axes)


def rot90(input: Tensor, k: int = 1, dims: Sequence[int] = (0, 1)) -> Tensor:
    """``input`` rotated by ``k`` quarter turns in the plane of ``dims``, from the first
    towards the second (a copy).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.rot90(mta.tensor([[1, 2], [3, 4]])).tolist()
    [[2, 4], [1, 3]]
    """
    if len(dims) != 2:
        raise RuntimeError(f"rot90: expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"rot90: expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = _dims(dims, input.ndim, "rot90")
    k = k % 4
    if k == 1:
        return flip(input, d1).transpose(d0, d1)
    if k == 2:
        return flip(input, (d0, d1))
    if k == 3:
        return flip(input, d0).transpose(d0, d1)
    return input.clone()


class Triangle(Function):
    """The lower (``upper=False``) or upper triangle of the last two dims, zeros
    elsewhere; the gradient keeps the same triangle.
    """

    saves_inputs = False

    def forward(self, a: Any, *, diagonal: int, upper: bool) -> Any:
        self.diagonal, self.upper = diagonal, upper
        n, m = a.shape[-2:]
        below = self.xp.tri(n, m, diagonal - 1 if upper else diagonal, dtype=bool)
        keep = ~below if upper else below
        return self.xp.where(keep, a, self.xp.zeros((), dtype=a.dtype))

    def backward(self, grad: Tensor) -> Tensor:
        return Triangle.apply(grad, diagonal=self.diagonal, upper=self.upper)


def _triangle(input: Tensor, diagonal: int, upper: bool) -> Tensor:
    if input.ndim < 2:
        op = "triu" if upper else "tril"
        raise RuntimeError(f"{op}: input tensor must have at least 2 dimensions")
    return Triangle.apply(input, diagonal=int(diagonal), upper=upper)


def tril(input: Tensor, diagonal: int = 0) -> Tensor:
    """The lower triangle of the last two dims (``j <= i + diagonal``), zeros above.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.tril(mta.ones(3, 3, dtype=mta.int64)).tolist()
    [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    """
    return _triangle(input, diagonal, upper=False)


def triu(input: Tensor, diagonal: int = 0) -> Tensor:
    """The upper triangle of the last two dims (``j >= i + diagonal``), zeros below.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.triu(mta.ones(2, 3, dtype=mta.int64), 1).tolist()
    [[0, 1, 1], [0, 0, 1]]
    """
    return _triangle(input, diagonal, upper=True)


def _triangle_indices(
    row: int, col: int, offset: int, upper: bool, dtype: Any, device: Any
) -> Tensor:
    mask = np.tri(row, col, offset - 1 if upper else offset, dtype=bool)
    rows, cols = np.nonzero(~mask if upper else mask)
    return _tensor(np.stack([rows, cols]), dtype=dtype or np.int64, device=device)


def tril_indices(
    row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None
) -> Tensor:
    """The ``(2, N)`` row and column indices of the lower triangle of a ``row x col``
    matrix (``j <= i + offset``), in row-major order.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.tril_indices(3, 3).tolist()
    [[0, 1, 1, 2, 2, 2], [0, 0, 1, 0, 1, 2]]
    """
    return _triangle_indices(row, col, offset, False, dtype, device)


def triu_indices(
    row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None
) -> Tensor:
    """The ``(2, N)`` indices of the upper triangle (``j >= i + offset``).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.triu_indices(2, 3, 1).tolist()
    [[0, 0, 1], [1, 2, 2]]
    """
    return _triangle_indices(row, col, offset, True, dtype, device)


def _diagonal_index(
    xp: Any, shape: tuple[int, ...], offset: int, dim1: int, dim2: int
) -> tuple[Any, ...]:
    """A raw index of the diagonal ``offset`` of dims ``dim1``/``dim2`` of ``shape``: the
    result's diagonal dim comes last, as in :func:`diagonal`.
    """
    n1, n2 = shape[dim1], shape[dim2]
    length = max(0, min(n1 + min(offset, 0), n2 - max(offset, 0)))
    steps = xp.arange(length)
    others = [d for d in range(len(shape)) if d not in (dim1, dim2)]
    index: list[Any] = [None] * len(shape)
    for k, d in enumerate(others):  # broadcast over the kept dims, diagonal last
        index[d] = xp.arange(shape[d]).reshape((-1,) + (1,) * (len(others) - k))
    index[dim1] = steps - min(offset, 0)
    index[dim2] = steps + max(offset, 0)
    return tuple(index)


class Diagonal(Function):
    """A diagonal of ``a`` (a view); the gradient is put back on that diagonal of zeros."""

    saves_inputs = False
    returns_view = True

    def forward(self, a: Any, *, offset: int, dim1: int, dim2: int) -> Any:
        self.shape, self.params = a.shape, (offset, dim1, dim2)
        # NumPy's diagonal is read-only: make the same view by hand, from the corner
        # where the diagonal starts, one step along both dims at a time
        corner = [slice(None)] * a.ndim
        corner[dim1], corner[dim2] = slice(max(-offset, 0), None), slice(max(offset, 0), None)
        start = a[tuple(corner)]
        kept = [d for d in range(a.ndim) if d not in (dim1, dim2)]
        shape = [start.shape[d] for d in kept] + [min(start.shape[dim1], start.shape[dim2])]
        strides = [start.strides[d] for d in kept] + [start.strides[dim1] + start.strides[dim2]]
        return self.xp.lib.stride_tricks.as_strided(start, tuple(shape), tuple(strides))

    def backward(self, grad: Tensor) -> Tensor:
        return DiagonalScatter.apply(grad, shape=self.shape, params=self.params)


class DiagonalScatter(Function):
    """Zeros of ``shape`` with ``values`` on a diagonal; the gradient is that diagonal."""

    saves_inputs = False

    def forward(self, values: Any, *, shape: tuple[int, ...], params: tuple[int, int, int]) -> Any:
        self.params = params
        out = self.xp.zeros(shape, dtype=values.dtype)
        out[_diagonal_index(self.xp, shape, *params)] = values
        return out

    def backward(self, grad: Tensor) -> Tensor:
        offset, dim1, dim2 = self.params
        return diagonal(grad, offset, dim1, dim2)


def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The diagonal ``offset`` (above the main one if positive) of the matrices in dims
    ``dim1``/``dim2``, as a new last dim: a view, writes reach ``input``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> x = mta.zeros(3, 3)
    >>> x.diagonal().fill_(1.0).tolist(), x.diagonal(1).shape
    ([1.0, 1.0, 1.0], (2,))
    """
    d1 = normalize_dim(dim1, input.ndim, "diagonal")
    d2 = normalize_dim(dim2, input.ndim, "diagonal")
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return Diagonal.apply(input, offset=int(offset), dim1=d1, dim2=d2)


_diagonal_of = diagonal  # for diag, whose argument ``diagonal`` hides the function


def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Matrices with the last dim of ``input`` on their diagonal ``offset``, in dims
    ``dim1``/``dim2`` of the result (which has one more dim), zeros elsewhere.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.diag_embed(mta.tensor([[1, 2]])).tolist()
    [[[1, 0], [0, 2]]]
    """
    ndim = input.ndim + 1
    d1, d2 = normalize_dim(dim1, ndim, "diag_embed"), normalize_dim(dim2, ndim, "diag_embed")
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = (input.shape[-1] if input.ndim else 1) + abs(int(offset))
    kept = iter(input.shape[:-1])
    shape = tuple(n if d in (d1, d2) else next(kept) for d in range(ndim))
    values = input if input.ndim else input.reshape(1)
    if d1 > d2:  # the diagonal index walks dim1's axis first: swap and negate the offset
        d1, d2, offset = d2, d1, -offset
    return DiagonalScatter.apply(values, shape=shape, params=(int(offset), d1, d2))


def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """A 1-d ``input`` as the diagonal ``diagonal`` of a square matrix, or of a 2-d
    ``input`` its diagonal ``diagonal`` as a 1-d tensor (a copy, as in PyTorch).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.diag(mta.tensor([1, 2])).tolist(), mta.diag(mta.tensor([[1, 2], [3, 4]])).tolist()
    ([[1, 0], [0, 2]], [1, 4])
    """
    if input.ndim == 1:
        return diag_embed(input, diagonal)
    if input.ndim == 2:
        return _diagonal_of(input, diagonal).clone()
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")


def trace(input: Tensor) -> Tensor:
    """The sum of the main diagonal of a 2-d tensor (integers give int64).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.trace(mta.tensor([[1, 2], [3, 4]]))
    tensor(5)
    """
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    return diagonal(input).sum()


def movedim(input: Tensor, source: int | Sequence[int], destination: int | Sequence[int]) -> Tensor:
    """``input`` with dims ``source`` moved to positions ``destination``, the others
    keeping their order (a view).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.movedim(mta.zeros(2, 3, 4), 0, -1).shape
    (3, 4, 2)
    """
    src = _dims(source, input.ndim, "movedim")
    dst = _dims(destination, input.ndim, "movedim")
    if len(src) != len(dst):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({list(src)} dims) should "
            f"contain the same number of dims as destination ({list(dst)} dims)"
        )
    rest = iter(d for d in range(input.ndim) if d not in src)
    moved = dict(zip(dst, src, strict=True))
    order = tuple(moved[i] if i in moved else next(rest) for i in range(input.ndim))
    return input if order == tuple(range(input.ndim)) else Permute.apply(input, dims=order)


moveaxis = movedim


def swapaxes(input: Tensor, axis0: int, axis1: int) -> Tensor:
    """Same as :func:`~minitorch_accel.transpose` (NumPy's name; a view).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.swapaxes(mta.zeros(2, 3), 0, 1).shape
    (3, 2)
    """
    return input.transpose(axis0, axis1)


def swapdims(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """Same as :func:`~minitorch_accel.transpose` (a view).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.swapdims(mta.zeros(2, 3), 0, 1).shape
    (3, 2)
    """
    return input.transpose(dim0, dim1)


def narrow(input: Tensor, dim: int, start: int | Tensor, length: int) -> Tensor:
    """The ``length`` slices of ``input`` from ``start`` along ``dim`` (a view;
    ``start`` may be negative, or a 0-d integer tensor).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.narrow(mta.arange(6), 0, -4, 2).tolist()
    [2, 3]
    """
    d = normalize_dim(dim, input.ndim, "narrow")
    size, first = input.shape[d], int(start)
    if not -size <= first <= size:
        raise IndexError(
            f"narrow: start ({first}) out of range (expected to be in range of [{-size}, {size}])"
        )
    first %= max(size, 1) if first < 0 else size + 1
    if length < 0 or first + length > size:
        raise RuntimeError(
            f"narrow: start ({first}) + length ({length}) exceeds dimension size ({size})."
        )
    return input[(slice(None),) * d + (slice(first, first + length),)]


def ravel(input: Tensor) -> Tensor:
    """``input`` as 1-d: a view when the memory allows, else a copy.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.ravel(mta.tensor([[1, 2], [3, 4]])).tolist()
    [1, 2, 3, 4]
    """
    return input.reshape(-1)


def tile(input: Tensor, dims: Sequence[int]) -> Tensor:
    """``input`` repeated ``dims[i]`` times along each dim; fewer ``dims`` than dims are
    padded with ones in front (unlike :meth:`Tensor.repeat`, which refuses them).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.tile(mta.tensor([[1, 2]]), (2,)).tolist()
    [[1, 2, 1, 2]]
    """
    sizes = tuple(dims)
    return input.repeat(*((1,) * (input.ndim - len(sizes)) + sizes))


def broadcast_shapes(*shapes: int | Sequence[int]) -> Size:
    """The shape tensors of ``shapes`` broadcast to.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.broadcast_shapes((2, 1), (3,))
    (2, 3)
    """
    listed = [(s,) if isinstance(s, (int, np.integer)) else tuple(s) for s in shapes]
    try:
        return Size(np.broadcast_shapes(*listed))
    except ValueError:
        raise RuntimeError(
            f"broadcast_shapes: shapes {', '.join(map(str, listed))} cannot be broadcast "
            "together (each dim must be equal or 1)"
        ) from None


def broadcast_to(input: Tensor, size: Sequence[int]) -> Tensor:
    """``input`` broadcast to ``size`` without copying (a view; -1 keeps a dim).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.broadcast_to(mta.tensor([1, 2]), (2, 2)).tolist()
    [[1, 2], [1, 2]]
    """
    return input.expand(*size)


def broadcast_tensors(*tensors: Tensor) -> tuple[Tensor, ...]:
    """The tensors broadcast to their common shape (views).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> [t.shape for t in mta.broadcast_tensors(mta.zeros(2, 1), mta.zeros(3))]
    [(2, 3), (2, 3)]
    """
    shape = broadcast_shapes(*(t.shape for t in tensors))
    return tuple(t.expand(*shape) for t in tensors)


def meshgrid(
    *tensors: Tensor | Sequence[Tensor], indexing: str | None = None
) -> tuple[Tensor, ...]:
    """Coordinate grids from 1-d tensors: with ``indexing="ij"`` the i-th result varies
    along dim i; with ``"xy"`` the first two dims are swapped (NumPy's default). Without
    ``indexing``, ``"ij"`` and PyTorch's warning. The results are views (expanded).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> ys, xs = mta.meshgrid(mta.tensor([0, 1]), mta.tensor([5, 6, 7]), indexing="ij")
    >>> ys.shape, xs[1].tolist()
    ((2, 3), [5, 6, 7])
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn(
            "meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
            UserWarning,
            stacklevel=2,
        )
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise ValueError(f'meshgrid: indexing must be "ij" or "xy", got {indexing!r}')
    grids: list[Tensor] = [t.reshape(-1) for t in tensors]  # type: ignore[union-attr]
    if any(t.ndim > 1 for t in tensors):  # type: ignore[union-attr]
        raise RuntimeError("meshgrid: expects all tensors to be 0-d or 1-d")
    swap = indexing == "xy" and len(grids) >= 2
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    shape = tuple(g.shape[0] for g in grids)
    out = []
    for i, g in enumerate(grids):
        view = (1,) * i + (-1,) + (1,) * (len(grids) - i - 1)
        out.append(g.reshape(view).expand(*shape))
    if swap:  # the grids of the swapped inputs are in their place: swap them back
        out[0], out[1] = out[1], out[0]
    return tuple(out)


def _at_least(tensors: tuple[Any, ...], ndim: int) -> Any:
    items = (
        tuple(tensors[0])
        if len(tensors) == 1 and isinstance(tensors[0], (list, tuple))
        else tensors
    )
    shaped = []
    for t in items:
        if t.ndim >= ndim:
            shaped.append(t)
        elif ndim == 3 and t.ndim == 2:
            shaped.append(t.unsqueeze(-1))
        elif ndim == 3 and t.ndim == 1:
            shaped.append(t.reshape(1, -1, 1))
        else:
            shaped.append(t.reshape((1,) * (ndim - max(t.ndim, 1)) + tuple(t.shape or (1,))))
    single = len(tensors) == 1 and isinstance(tensors[0], Tensor)
    return shaped[0] if single else tuple(shaped)


def atleast_1d(*tensors: Any) -> Any:
    """Each tensor with at least 1 dim (a 0-d one becomes shape ``(1,)``); one tensor in,
    one out, else a tuple.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.atleast_1d(mta.tensor(1.0)).shape
    (1,)
    """
    return _at_least(tensors, 1)


def atleast_2d(*tensors: Any) -> Any:
    """Each tensor with at least 2 dims (``(n,)`` becomes ``(1, n)``).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.atleast_2d(mta.zeros(3)).shape
    (1, 3)
    """
    return _at_least(tensors, 2)


def atleast_3d(*tensors: Any) -> Any:
    """Each tensor with at least 3 dims (``(n,)`` becomes ``(1, n, 1)``, ``(m, n)``
    becomes ``(m, n, 1)``).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.atleast_3d(mta.zeros(2, 3)).shape
    (2, 3, 1)
    """
    return _at_least(tensors, 3)


def hstack(tensors: Sequence[Tensor]) -> Tensor:
    """Join along dim 1 (dim 0 for 1-d tensors), 0-d tensors as 1-d.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.hstack([mta.tensor([1, 2]), mta.tensor([3])]).tolist()
    [1, 2, 3]
    """
    items = atleast_1d(tuple(tensors))
    return cat(items, 0 if items[0].ndim == 1 else 1)


def vstack(tensors: Sequence[Tensor]) -> Tensor:
    """Join along dim 0, 1-d tensors as rows.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.vstack([mta.tensor([1, 2]), mta.tensor([3, 4])]).tolist()
    [[1, 2], [3, 4]]
    """
    return cat(atleast_2d(tuple(tensors)), 0)


row_stack = vstack


def dstack(tensors: Sequence[Tensor]) -> Tensor:
    """Join along dim 2 (depth), after :func:`atleast_3d`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.dstack([mta.tensor([1, 2]), mta.tensor([3, 4])]).tolist()
    [[[1, 3], [2, 4]]]
    """
    return cat(atleast_3d(tuple(tensors)), 2)


def column_stack(tensors: Sequence[Tensor]) -> Tensor:
    """Join as columns: 0-d and 1-d tensors become columns ``(n, 1)``, then
    :func:`hstack`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.column_stack([mta.tensor([1, 2]), mta.tensor([3, 4])]).tolist()
    [[1, 3], [2, 4]]
    """
    return hstack([t.reshape(-1, 1) if t.ndim <= 1 else t for t in tensors])


def new_full(
    like: Tensor,
    size: tuple[Any, ...],
    fill_value: Any,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """``fill_value`` in ``size`` (varargs or one sequence), with ``like``'s dtype and
    device unless given: what ``Tensor.new_zeros``/``new_ones``/``new_full``/``new_empty``
    return.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> x = mta.zeros(1, dtype=mta.int32)
    >>> x.new_ones(2, 3).dtype, x.new_full((2,), 7).tolist(), x.new_zeros((1, 2)).shape
    (dtype('int32'), [7, 7], (1, 2))
    """
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    shape = tuple(int(s) for s in size)
    out = _tensor(
        np.full(shape, fill_value, dtype=dtype or like.dtype), device=device or like.device
    )
    return out.requires_grad_() if requires_grad else out


def new_tensor(
    like: Tensor, data: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Tensor:
    """A new leaf tensor of ``data`` (copied), with ``like``'s dtype and device unless
    given: what ``Tensor.new_tensor`` returns.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.zeros(1, dtype=mta.float64).new_tensor([1, 2]).dtype
    dtype('float64')
    """
    if isinstance(data, Tensor):
        data = data.detach().clone()
    return _tensor(
        data, dtype=dtype or like.dtype, device=device or like.device, requires_grad=requires_grad
    )
