"""More indexing: ``scatter_add``, ``scatter_reduce``, ``index_add``/``_fill``/``_copy``,
``index_put``, ``take``, ``take_along_dim``, ``masked_select``/``_scatter``, ``nonzero``,
``argwhere``, one-argument ``where`` and ``repeat_interleave``.

Most are compositions of :mod:`~minitorch_accel.ops.shape`'s indexing (``GetItem``,
``IndexAdd``, ``IndexPut``) and :mod:`~minitorch_accel.ops.index`'s ``Gather`` and
``ScatterAdd``, so their gradients come from those. :class:`ScatterReduce` is a Function
of its own; its backward follows PyTorch's (a tie of maxima shares the gradient equally).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.factories import ones_like, zeros_like
from ..core.function import Function, on_input_device
from ..core.tensor import Tensor
from . import elementwise as _E
from .index import Gather, ScatterAdd, _check_index, check_bounds
from .shape import IndexAdd, IndexPut, normalize_dim

_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


def _constant(like: Tensor, array: Any) -> Tensor:
    return Tensor._make(array, like.device, False, None)


def _dim_index(a: Tensor, d: int, index: Any) -> tuple[Any, ...]:
    """A raw index that takes ``index`` along dim ``d`` and everything elsewhere."""
    return (slice(None),) * d + (index,)


def _check_index_1d(op: str, a: Tensor, dim: int, index: Tensor) -> int:
    if not isinstance(index, Tensor) or index.ndim > 1 or index.dtype.kind not in "iu":
        raise TypeError(f"{op}: index must be a 1-d integer tensor, got {index!r}")
    d = normalize_dim(dim, a.ndim, op)
    size = a.shape[d] if a.ndim else 1
    with index.device.guard():
        bad = bool(((index.array < 0) | (index.array >= size)).any())
    if bad:
        raise IndexError(
            f"{op}: index out of range in self (dim {dim} has size {size}, the index holds "
            f"values outside 0..{size - 1})"
        )
    return d


def _src_like_index(op: str, input: Tensor, index: Tensor, src: Tensor) -> Tensor:
    """``src`` cut to ``index``'s shape (PyTorch reads only that corner of it)."""
    if not isinstance(src, Tensor):
        raise TypeError(f"{op}: src must be a Tensor, got {type(src).__name__}")
    if src.dtype != input.dtype:
        raise RuntimeError(
            f"{op}(): Expected self.dtype to be equal to src.dtype (got {input.dtype} and "
            f"{src.dtype}); convert one of them with .to(dtype)"
        )
    if src.ndim != index.ndim or any(s < n for s, n in zip(src.shape, index.shape, strict=True)):
        raise ValueError(f"{op}: src of shape {src.shape} is smaller than index {index.shape}")
    return src[tuple(slice(0, n) for n in index.shape)]


def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """``input`` with ``src`` added at ``index`` along ``dim`` (repeats accumulate):
    ``out[i][index[i][j]] += src[i][j]`` for ``dim=1``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.scatter_add(mta.zeros(1, 3), 1, mta.tensor([[0, 2, 0]]), mta.ones(1, 3))
    tensor([[2., 0., 1.]])
    """
    d = _check_index("scatter_add", input, dim, index)
    check_bounds("scatter_add", index, input.shape[d] if input.ndim else 1, d)
    src = _src_like_index("scatter_add", input, index, src)
    return input + ScatterAdd.apply(src, index, dim=d, shape=tuple(input.shape))


def _identity(dtype: Any, reduce: str) -> Any:
    """The value a reduction starts from when ``include_self=False``."""
    if reduce in ("sum", "mean", "prod"):
        return 1 if reduce == "prod" else 0
    if np.dtype(dtype).kind == "f":
        return -np.inf if reduce == "amax" else np.inf
    info = np.iinfo(dtype)
    return info.min if reduce == "amax" else info.max


class ScatterReduce(Function):
    """``a`` with ``src`` combined in at ``index`` along ``dim`` by ``reduce``."""

    saves_output = True

    def forward(
        self, a: Any, index: Any, src: Any, *, dim: int, reduce: str, include_self: bool
    ) -> Any:
        from .index import along

        xp = self.xp
        self.dim, self.reduce, self.include_self = dim, reduce, include_self
        where = along(xp, index, dim)
        out = a.copy()
        if not include_self:
            out[where] = _identity(a.dtype, reduce)
        ufunc = {"sum": xp.add, "mean": xp.add, "prod": xp.multiply}.get(reduce)
        if ufunc is None:
            ufunc = xp.maximum if reduce == "amax" else xp.minimum
        ufunc.at(out, where, src)
        if reduce == "mean":
            count = (
                xp.ones(a.shape, dtype=np.int64) if include_self else xp.zeros(a.shape, np.int64)
            )
            xp.add.at(count, where, 1)
            count = xp.maximum(count, 1)
            out = out // count if a.dtype.kind in "iu" else (out / count).astype(a.dtype)
        return out

    def backward(self, grad: Tensor) -> tuple[Tensor | None, None, Tensor | None]:
        a, index, src = self.inputs
        assert a is not None and index is not None and src is not None
        d, result = self.dim, self.output()
        if self.reduce == "sum":
            grad_a, grad_src = grad, grad.gather(d, index)
        elif self.reduce == "mean":
            count = ones_like(grad) if self.include_self else zeros_like(grad)
            count = scatter_add(count, d, index, ones_like(index, dtype=grad.dtype))
            count = count.masked_fill(count == 0, 1.0)
            grad_a = grad / count
            grad_src = grad.gather(d, index) / count.gather(d, index)
        elif self.reduce == "prod":
            masked_a = a.masked_fill(a == 0, 1.0)
            grad_a = grad * scatter_reduce(
                masked_a, d, index, src, "prod", include_self=self.include_self
            )
            grad_a = grad_a / masked_a
            src_zero = src == 0
            zeros_per_slot = scatter_add(zeros_like(a), d, index, src_zero.to(dtype=a.dtype))
            one_zero = zeros_per_slot.gather(d, index) == 1
            single_zero = one_zero.masked_fill(_E.logical_not(src_zero), False)
            masked_src = src.masked_fill(single_zero, 1.0)
            without = scatter_reduce(
                a, d, index, masked_src, "prod", include_self=self.include_self
            )
            grad_src = _E.where(
                single_zero,
                (grad * without).gather(d, index),
                (grad * result).gather(d, index) / src.masked_fill(src_zero, 1.0),
            )
        else:  # amax, amin: ties share the gradient equally
            value = result.gather(d, index)
            a_is = (a == result).to(dtype=grad.dtype)
            src_is = (src == value).to(dtype=grad.dtype)
            shared = grad / scatter_add(a_is, d, index, src_is)
            grad_a, grad_src = a_is * shared, src_is * shared.gather(d, index)
        if not self.include_self:
            grad_a = grad_a.scatter(d, index, 0.0)
        return grad_a, None, grad_src


def scatter_reduce(
    input: Tensor,
    dim: int,
    index: Tensor,
    src: Tensor,
    reduce: str,
    *,
    include_self: bool = True,
) -> Tensor:
    """``input`` with each ``src[i][j]`` combined into ``out[i][index[i][j]]`` (``dim=1``)
    by ``reduce``: ``"sum"``, ``"prod"``, ``"mean"``, ``"amax"`` or ``"amin"``.

    With ``include_self=False`` the positions that receive values start from them alone
    (``input``'s value there is left out). Gradients as PyTorch's: maxima (minima) that tie
    share the gradient equally. ``"mean"`` of integers rounds down.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> x = mta.tensor([1.0, 2.0, 3.0])
    >>> mta.scatter_reduce(x, 0, mta.tensor([0, 0, 2]), mta.tensor([5.0, 7.0, 1.0]), "amax")
    tensor([7., 2., 3.])
    >>> x.scatter_reduce(0, mta.tensor([0, 0]), mta.tensor([5.0, 7.0]), "mean",
    ...                  include_self=False)
    tensor([6., 2., 3.])
    """
    if reduce not in _REDUCTIONS:
        raise ValueError(
            f"scatter_reduce: reduce must be one of {', '.join(map(repr, _REDUCTIONS))}, "
            f"got {reduce!r}"
        )
    d = _check_index("scatter_reduce", input, dim, index)
    check_bounds("scatter_reduce", index, input.shape[d] if input.ndim else 1, d)
    src = _src_like_index("scatter_reduce", input, index, src)
    return ScatterReduce.apply(
        input, index, src, dim=d, reduce=reduce, include_self=bool(include_self)
    )


def index_add(
    input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: float = 1
) -> Tensor:
    """``input`` with ``alpha * source``'s slices added at positions ``index`` along
    ``dim`` (repeats accumulate).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.index_add(mta.zeros(3, 2), 0, mta.tensor([2, 0, 2]), mta.ones(3, 2)).tolist()
    [[1.0, 1.0], [0.0, 0.0], [2.0, 2.0]]
    """
    d = _check_index_1d("index_add", input, dim, index)
    if alpha != 1:
        source = source * alpha
    where = _dim_index(input, d, index.reshape(-1).array)
    return input + IndexAdd.apply(source.to(dtype=input.dtype), index=where, shape=input.shape)


def index_fill(input: Tensor, dim: int, index: Tensor, value: float | Tensor) -> Tensor:
    """``input`` with its slices at positions ``index`` along ``dim`` set to ``value`` (a
    number or a 0-d tensor, which then gets the gradient of those positions).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.index_fill(mta.zeros(2, 3), 1, mta.tensor([0, 2]), -1.0).tolist()
    [[-1.0, 0.0, -1.0], [-1.0, 0.0, -1.0]]
    """
    d = _check_index_1d("index_fill", input, dim, index)
    with input.device.guard():
        mask = input.xp.zeros(input.shape, dtype=bool)
        mask[_dim_index(input, d, index.reshape(-1).array)] = True
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise ValueError(
                f"index_fill: value must be a number or a 0-d tensor, got {value.shape}"
            )
        fill = value.to(dtype=input.dtype)
    else:
        fill = _constant(input, input.xp.asarray(value, dtype=input.dtype))
    return _E.where(_constant(input, mask), fill, input)


def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """``input`` with its slices at positions ``index`` along ``dim`` replaced by those of
    ``source`` (``out[:, index[j]] = source[:, j]`` for ``dim=1``).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.index_copy(mta.zeros(3), 0, mta.tensor([2, 0]), mta.tensor([5.0, 6.0]))
    tensor([6., 0., 5.])
    """
    d = _check_index_1d("index_copy", input, dim, index)
    if source.dtype != input.dtype:
        raise RuntimeError(
            f"index_copy(): self and source expected to have the same dtype, but got (self) "
            f"{input.dtype} and (source) {source.dtype}"
        )
    return IndexPut.apply(input, source, index=_dim_index(input, d, index.reshape(-1).array))


def _raw_indices(op: str, indices: Any) -> tuple[Any, ...]:
    if not isinstance(indices, (tuple, list)) or not all(
        isinstance(i, Tensor) or i is None for i in indices
    ):
        raise TypeError(f"{op}: indices must be a tuple of tensors, got {type(indices).__name__}")
    return tuple(
        slice(None) if i is None else i.array.astype(bool) if i.dtype == np.uint8 else i.array
        for i in indices
    )


@on_input_device
def index_put(
    input: Tensor, indices: tuple[Tensor | None, ...], values: Tensor, accumulate: bool = False
) -> Tensor:
    """``input`` with ``values`` (broadcast) written at ``input[indices]``; with
    ``accumulate=True`` added there instead, repeated positions accumulating.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> i = (mta.tensor([0, 0, 2]),)
    >>> mta.index_put(mta.zeros(3), i, mta.tensor(1.0), accumulate=True)
    tensor([2., 0., 1.])
    """
    where = _raw_indices("index_put", indices)
    if not isinstance(values, Tensor):
        values = _constant(input, input.xp.asarray(values, dtype=input.dtype))
    values = values.to(dtype=input.dtype)
    if not accumulate:
        return IndexPut.apply(input, values, index=where)
    with input.device.guard():
        shape = input.array[where].shape
    return input + IndexAdd.apply(values.expand(shape), index=where, shape=input.shape)


@on_input_device
def take(input: Tensor, index: Tensor) -> Tensor:
    """``input`` read as 1-d at ``index`` (negative indices count from the end); the
    result has ``index``'s shape.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.take(mta.tensor([[1, 2], [3, 4]]), mta.tensor([[0, -1]]))
    tensor([[1, 4]])
    """
    if not isinstance(index, Tensor) or index.dtype.kind not in "iu":
        raise TypeError(f"take: index must be an integer tensor, got {index!r}")
    n = input.numel()
    with index.device.guard():
        bad = bool(((index.array < -n) | (index.array >= n)).any())
    if bad:
        raise IndexError(f"take: index out of range for a tensor of {n} elements")
    return input.reshape(-1)[index]


@on_input_device
def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:
    """Values of ``input`` at ``indices`` along ``dim`` (negative indices count from the
    end), ``input`` and ``indices`` broadcast on the other dims; with ``dim=None`` both
    are read as 1-d. The partner of ``argsort``/``argmax(keepdim=True)``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> x = mta.tensor([[3.0, 1.0, 2.0]])
    >>> mta.take_along_dim(x, x.argsort(1), 1)
    tensor([[1., 2., 3.]])
    """
    if not isinstance(indices, Tensor) or indices.dtype.kind not in "iu":
        raise TypeError(f"take_along_dim: indices must be an integer tensor, got {indices!r}")
    if dim is None:
        return take_along_dim(input.reshape(-1), indices.reshape(-1), 0)
    if input.ndim != indices.ndim:
        raise RuntimeError(
            f"take_along_dim: input and indices should have the same number of dimensions, "
            f"but got {input.ndim} dimensions for input, and {indices.ndim} dimensions for "
            "indices"
        )
    d = normalize_dim(dim, input.ndim, "take_along_dim")
    n = input.shape[d]
    with indices.device.guard():
        bad = bool(((indices.array < -n) | (indices.array >= n)).any())
    if bad:
        raise IndexError(f"take_along_dim: index out of range for dim {dim} of size {n}")
    index = _constant(indices, indices.array % n if n else indices.array)
    rest = [tuple(1 if i == d else k for i, k in enumerate(t.shape)) for t in (input, indices)]
    shape = list(np.broadcast_shapes(*rest))  # broadcast on every dim but ``d``
    shape[d] = n
    input = input.expand(*shape)
    shape[d] = indices.shape[d]
    return Gather.apply(input, index.expand(*shape), dim=d)


def masked_select(input: Tensor, mask: Tensor) -> Tensor:
    """The elements of ``input`` where the bool ``mask`` is true, as a 1-d tensor
    (``input`` and ``mask`` broadcast together).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.masked_select(mta.tensor([[1, 2], [3, 4]]), mta.tensor([True, False]))
    tensor([1, 3])
    """
    if not isinstance(mask, Tensor) or mask.dtype != np.bool_:
        raise RuntimeError(f"masked_select: expected a bool mask, got {mask!r}")
    shape = np.broadcast_shapes(input.shape, mask.shape)
    return input.expand(*shape)[mask.expand(*shape)]


@on_input_device
def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """``input`` with the positions where ``mask`` (broadcast) is true filled, in order,
    from the first elements of ``source``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> m = mta.tensor([True, False, True])
    >>> mta.masked_scatter(mta.zeros(3), m, mta.tensor([7.0, 8.0, 9.0]))
    tensor([7., 0., 8.])
    """
    if not isinstance(mask, Tensor) or mask.dtype != np.bool_:
        raise RuntimeError(f"masked_scatter: expected a bool mask, got {mask!r}")
    if source.dtype != input.dtype:
        raise RuntimeError(
            f"masked_scatter: expected self and source to have same dtypes but got "
            f"{input.dtype} and {source.dtype}"
        )
    shape = tuple(np.broadcast_shapes(input.shape, mask.shape))
    where = input.xp.broadcast_to(mask.array, shape)
    count = int(where.sum())
    if count > source.numel():
        raise RuntimeError(
            f"masked_scatter: the mask has {count} true entries but source has only "
            f"{source.numel()} elements"
        )
    base = input.expand(*shape) if shape != input.shape else input
    return IndexPut.apply(base, source.reshape(-1)[:count], index=where)


def nonzero(input: Tensor, *, as_tuple: bool = False) -> Any:
    """The indices of the nonzero elements: an ``(n, ndim)`` int64 tensor, one row per
    element in row-major order, or with ``as_tuple=True`` one 1-d tensor per dim.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nonzero(mta.tensor([[0, 3], [4, 0]])).tolist()
    [[0, 1], [1, 0]]
    >>> mta.nonzero(mta.tensor([0, 3, 4]), as_tuple=True)
    (tensor([1, 2]),)
    """
    with input.device.guard():
        array = input.array if input.ndim else input.array.reshape(1)
        found = [i.astype(np.int64) for i in input.xp.nonzero(array)]
        if as_tuple:
            return tuple(_constant(input, i) for i in found)
        if input.ndim == 0:
            return _constant(input, input.xp.zeros((len(found[0]), 0), dtype=np.int64))
        return _constant(input, input.xp.stack(found, axis=1))


def argwhere(input: Tensor) -> Tensor:
    """Same as :func:`nonzero`: the ``(n, ndim)`` indices of the nonzero elements.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.argwhere(mta.tensor([0.0, 2.0])).tolist()
    [[1]]
    """
    return nonzero(input)  # type: ignore[no-any-return]


def where(condition: Tensor, input: Any = None, other: Any = None) -> Any:
    """``input`` where ``condition`` is true, else ``other`` (see
    :func:`minitorch_accel.ops.elementwise.where`); with ``condition`` alone, its nonzero
    indices as a tuple (``nonzero(condition, as_tuple=True)``), as PyTorch.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.where(mta.tensor([[True, False], [True, True]]))
    (tensor([0, 1, 1]), tensor([0, 0, 1]))
    """
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    if input is None or other is None:
        raise TypeError("where: give both input and other, or neither (nonzero indices)")
    return _E.where(condition, input, other)


@on_input_device
def repeat_interleave(
    input: Tensor,
    repeats: int | Tensor | None = None,
    dim: int | None = None,
    *,
    output_size: int | None = None,
) -> Tensor:
    """Each element (each slice along ``dim``) repeated ``repeats`` times in place:
    ``[a, b] -> [a, a, b, b]``. ``repeats`` is an int or one count per slice; without
    ``dim`` the input is flattened. ``repeat_interleave(counts)`` alone repeats each
    index ``i`` ``counts[i]`` times.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.repeat_interleave(mta.tensor([1, 2]), 2)
    tensor([1, 1, 2, 2])
    >>> mta.repeat_interleave(mta.tensor([[1, 2], [3, 4]]), mta.tensor([1, 2]), dim=0).tolist()
    [[1, 2], [3, 4], [3, 4]]
    >>> mta.repeat_interleave(mta.tensor([2, 1]))
    tensor([0, 0, 1])
    """
    xp = input.xp
    if repeats is None:
        if input.ndim != 1 or input.dtype.kind not in "iu":
            raise RuntimeError("repeat_interleave: repeats must be a 1-d integer tensor")
        with input.device.guard():
            return _constant(input, xp.repeat(xp.arange(input.shape[0]), input.array))
    if dim is None:
        input, d = input.reshape(-1), 0
    else:
        d = normalize_dim(dim, input.ndim, "repeat_interleave")
    n = input.shape[d] if input.ndim else 1
    counts = repeats.array if isinstance(repeats, Tensor) else repeats
    if isinstance(repeats, Tensor) and repeats.numel() == 1:
        counts = repeats.array.reshape(())
    elif isinstance(repeats, Tensor) and repeats.shape != (n,):
        raise RuntimeError(
            f"repeat_interleave: repeats must have the same size as input along dim, got "
            f"{tuple(repeats.shape)} for size {n}"
        )
    if bool((xp.asarray(counts) < 0).any()):
        raise RuntimeError("repeat_interleave: repeats can not be negative")
    with input.device.guard():
        index = xp.repeat(xp.arange(n), counts)
    if output_size is not None and int(index.shape[0]) != output_size:
        raise RuntimeError(
            f"repeat_interleave: output_size {output_size} does not match the {index.shape[0]} "
            "repeated entries"
        )
    return input[_dim_index(input, d, _constant(input, index))]
