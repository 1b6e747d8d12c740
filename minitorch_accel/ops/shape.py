"""Shape ops: reshape, transpose, permute, expand, squeeze, cat, stack, pad, indexing."""

from __future__ import annotations

import builtins
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core.function import Function, on_input_device
from ..core.tensor import Tensor
from .operands import result_dtype


def normalize_dim(dim: int, ndim: int, op: str) -> int:
    """``dim`` as a non-negative index into ``ndim`` dims (a 0-d tensor accepts 0 and -1).

    Raises
    ------
    IndexError
        If ``dim`` is outside ``[-ndim, ndim - 1]``, naming the op and the valid range.
    """
    n = builtins.max(ndim, 1)
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
        raise TypeError(f"{op}: a dim is an int, got {dim!r}")
    if not -n <= dim < n:
        raise IndexError(
            f"{op}: dim {dim} is out of range for a tensor with {ndim} dimension(s) "
            f"(expected {-n}..{n - 1})"
        )
    return int(dim) % n


class Reshape(Function):
    """``a`` with another shape (a view where possible); the gradient is reshaped back.

    A reshape that must copy (``x.t().reshape(-1)``) returns memory of its own, and so
    a version counter of its own, as in PyTorch: ``returns_view`` is decided per call.
    """

    saves_inputs = False  # backward needs no input's values
    returns_view = True

    def forward(self, a: Any, *, shape: tuple[int, ...]) -> Any:
        self.in_shape = a.shape
        out = a.reshape(shape)
        if out.size and not self.xp.may_share_memory(a, out):  # the layout forced a copy
            self.returns_view = False
        return out

    def backward(self, grad: Tensor) -> Tensor:
        return grad.reshape(self.in_shape)


def _target_shape(a: Tensor, shape: tuple[Any, ...]) -> tuple[int, ...]:
    """``shape`` (varargs or one sequence, one dim may be -1) checked against ``a``'s size."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    target = tuple(int(s) for s in shape)
    known = int(np.prod([s for s in target if s != -1]))
    if (
        target.count(-1) > 1
        or (-1 not in target and known != a.numel())
        or (-1 in target and (known == 0 or a.numel() % known))
    ):
        raise ValueError(
            f"cannot reshape a tensor of shape {a.shape} ({a.numel()} elements) into {target}"
        )
    if -1 in target:
        target = tuple(a.numel() // known if s == -1 else s for s in target)
    return target


def reshape(a: Tensor, *shape: Any) -> Tensor:
    """The same elements in a new shape (one dim may be -1). A view when possible."""
    target = _target_shape(a, shape)
    if target == a.shape:
        return a
    return Reshape.apply(a, shape=target)


def _viewable(shape: tuple[int, ...], strides: tuple[int, ...], new: tuple[int, ...]) -> bool:
    """Whether memory laid out with ``strides`` can be read as ``new`` without a copy
    (PyTorch's ``computeStride``): each run of dims that are contiguous with one another
    must split into whole dims of ``new``.
    """
    if not shape or 0 in shape:
        return True
    view_d, base = len(new) - 1, strides[-1]
    chunk_numel = view_numel = 1
    for d in range(len(shape) - 1, -1, -1):
        chunk_numel *= shape[d]
        if d == 0 or (shape[d - 1] != 1 and strides[d - 1] != chunk_numel * base):
            while view_d >= 0 and (view_numel < chunk_numel or new[view_d] == 1):
                view_numel *= new[view_d]
                view_d -= 1
            if view_numel != chunk_numel:
                return False
            if d > 0:
                base, chunk_numel, view_numel = strides[d - 1], 1, 1
    return view_d == -1


def view(a: Tensor, *shape: Any) -> Tensor:
    """The same memory read with a new shape (one dim may be -1): always a view, writes
    through it change ``a`` (PyTorch's ``Tensor.view(*shape)``).

    As in PyTorch, a tensor whose memory cannot be read in the new shape without a copy
    (e.g. ``x.t().view(-1)``) raises; use :func:`reshape` (or ``.contiguous()`` first).
    Some ops here return memory laid out otherwise than PyTorch would (a convolution's
    output, for one): such a tensor that shares its memory with no view is first laid out
    row-major in place, so ``conv(x).view(n, -1)`` works as in PyTorch; one that has views
    raises as above.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> x = mta.zeros(2, 3)
    >>> v = x.view(6)
    >>> v[0] = 5.0
    >>> x[0, 0].item()
    5.0
    """
    target = _target_shape(a, shape)
    if target == a.shape:
        return a
    layout = tuple(a.shape), tuple(int(s) for s in a.array.strides)
    if not _viewable(*layout, target):
        if a._version_counter.has_views:
            raise RuntimeError(
                "view size is not compatible with input tensor's size and stride (at least "
                "one dimension spans across two contiguous subspaces). Use .reshape(...) "
                "instead."
            )
        with a.device.guard():  # this tensor alone sees its memory: lay it out row-major
            a.array = a.xp.ascontiguousarray(a.array)
    return Reshape.apply(a, shape=target)


class Contiguous(Function):
    """A row-major (C-contiguous) copy of ``a``; the gradient passes unchanged."""

    saves_inputs = False  # backward needs no input's values

    def forward(self, a: Any) -> Any:
        return self.xp.ascontiguousarray(a)

    def backward(self, grad: Tensor) -> Tensor:
        return grad


def is_contiguous(a: Tensor) -> bool:
    """Whether ``a``'s elements lie in memory in row-major order with no gaps.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> x = mta.zeros(2, 3)
    >>> x.is_contiguous(), x.t().is_contiguous()
    (True, False)
    """
    return bool(a.array.flags.c_contiguous)


def contiguous(a: Tensor) -> Tensor:
    """``a`` itself if it is contiguous, else a row-major copy (differentiable).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> y = mta.zeros(2, 3).t().contiguous()
    >>> y.is_contiguous(), y.view(6).shape
    (True, (6,))
    """
    return a if is_contiguous(a) else Contiguous.apply(a)


class Permute(Function):
    """``a`` with its dimensions reordered; the gradient gets the inverse order."""

    saves_inputs = False  # backward needs no input's values
    returns_view = True

    def forward(self, a: Any, *, dims: tuple[int, ...]) -> Any:
        self.dims = dims
        return a.transpose(dims)

    def backward(self, grad: Tensor) -> Tensor:
        return grad.permute(*np.argsort(self.dims).tolist())


def permute(a: Tensor, *dims: Any) -> Tensor:
    """Reorder the dimensions: ``out.shape[i] == a.shape[dims[i]]`` (a view)."""
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = tuple(dims[0])
    if len(dims) != a.ndim:
        raise ValueError(f"permute: {dims} is not a permutation of the {a.ndim} dims of {a.shape}")
    norm = tuple(normalize_dim(d, a.ndim, "permute") for d in dims)
    if sorted(norm) != list(range(a.ndim)):
        raise ValueError(f"permute: {dims} is not a permutation of the {a.ndim} dims of {a.shape}")
    return Permute.apply(a, dims=norm)


def transpose(a: Tensor, dim0: int = -2, dim1: int = -1) -> Tensor:
    """Swap two dimensions (a view)."""
    d0, d1 = normalize_dim(dim0, a.ndim, "transpose"), normalize_dim(dim1, a.ndim, "transpose")
    dims = list(range(a.ndim))
    dims[d0], dims[d1] = d1, d0
    return Permute.apply(a, dims=tuple(dims))


class Expand(Function):
    """``a`` broadcast to a larger shape; the gradient is summed back to ``a``'s shape."""

    saves_inputs = False  # backward needs no input's values
    returns_view = True

    def forward(self, a: Any, *, shape: tuple[int, ...]) -> Any:
        return self.xp.broadcast_to(a, shape)

    def backward(self, grad: Tensor) -> Tensor:
        return grad  # the engine sums it back to the input's shape


def expand(a: Tensor, *shape: Any) -> Tensor:
    """Broadcast to a larger shape without copying (-1 keeps a dim)."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    lead = len(shape) - a.ndim
    if lead < 0:
        raise ValueError(f"expand: cannot expand shape {a.shape} to fewer dims {shape}")
    if any(s == -1 for s in shape[:lead]) or any(s < -1 for s in shape):
        raise ValueError(
            f"expand: bad size in {tuple(shape)} for shape {a.shape}: -1 (keep the size) is "
            "only allowed for existing dims, and sizes cannot be negative"
        )
    target = tuple(a.shape[i - lead] if s == -1 else int(s) for i, s in enumerate(shape))
    try:
        np.broadcast_shapes(a.shape, target)
    except ValueError:
        raise ValueError(f"expand: shape {a.shape} cannot be broadcast to {target}") from None
    if target == a.shape:
        return a
    return Expand.apply(a, shape=target)


def flatten(a: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge dims ``start_dim..end_dim`` into one."""
    if a.ndim == 0:
        return a.reshape(1)
    start = normalize_dim(start_dim, a.ndim, "flatten")
    end = normalize_dim(end_dim, a.ndim, "flatten")
    if start > end:
        raise ValueError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim}")
    shape = a.shape[:start] + (int(np.prod(a.shape[start : end + 1])),) + a.shape[end + 1 :]
    return a.reshape(shape)


def squeeze(a: Tensor, dim: int | Sequence[int] | None = None) -> Tensor:
    """Remove dims of size 1 (only those in ``dim``, an int or a tuple, if given; a
    listed dim whose size is not 1 is kept, as in PyTorch).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.zeros(1, 3, 1).squeeze((0, 2)).shape, mta.zeros(1, 3, 1).squeeze(1).shape
    ((3,), (1, 3, 1))
    """
    if dim is None:
        return a.reshape(tuple(s for s in a.shape if s != 1))
    dims = tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)
    drop = {normalize_dim(d, a.ndim, "squeeze") for d in dims}
    if a.ndim == 0:
        return a
    return a.reshape(tuple(s for i, s in enumerate(a.shape) if not (i in drop and s == 1)))


def unsqueeze(a: Tensor, dim: int) -> Tensor:
    """Insert a dim of size 1 at ``dim``."""
    d = dim if dim >= 0 else dim + a.ndim + 1
    if not 0 <= d <= a.ndim:
        raise IndexError(
            f"unsqueeze: dim {dim} is out of range for a tensor with {a.ndim} dimension(s) "
            f"(expected {-a.ndim - 1}..{a.ndim})"
        )
    return a.reshape(a.shape[:d] + (1,) + a.shape[d:])


class Cat(Function):
    """Tensors joined along ``dim``; each gets its slice of the gradient."""

    saves_inputs = False  # backward needs no input's values

    def forward(self, *arrays: Any, dim: int) -> Any:
        self.dim, self.sizes = dim, [x.shape[dim] for x in arrays]
        return self.xp.concatenate(arrays, axis=dim)

    def backward(self, grad: Tensor) -> tuple[Tensor, ...]:
        pieces, start = [], 0
        for size in self.sizes:
            index = (slice(None),) * self.dim + (slice(start, start + size),)
            pieces.append(grad[index])
            start += size
        return tuple(pieces)


def cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Join tensors along an existing dim.

    As in PyTorch, 1-d empty tensors (shape ``(0,)``) are skipped whatever the other
    shapes (they still count for the result's dtype).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.cat([mta.tensor([]), mta.ones(1, 2)]).shape
    (1, 2)
    """
    if len(tensors) == 0:
        raise ValueError("cat: expected a non-empty sequence of tensors")
    dtypes = [t.dtype for t in tensors]
    kept = [t for t in tensors if t.shape != (0,)]
    if not kept:
        return tensors[0].to(dtype=result_dtype(*dtypes))
    if len(kept) < len(tensors):
        return cat([t.to(dtype=result_dtype(*dtypes)) for t in kept], dim)
    ref = tensors[0]
    if ref.ndim == 0:
        raise ValueError("cat: 0-d tensors cannot be joined; use stack")
    d = normalize_dim(dim, ref.ndim, "cat")
    for t in tensors[1:]:
        if (
            t.ndim != ref.ndim
            or t.shape[:d] + t.shape[d + 1 :] != ref.shape[:d] + ref.shape[d + 1 :]
        ):
            raise ValueError(f"cat: shapes {ref.shape} and {t.shape} differ outside dim {dim}")
    dtype = result_dtype(*[t.dtype for t in tensors])
    return Cat.apply(*[t.to(dtype=dtype) for t in tensors], dim=d)


def stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Join tensors of one shape along a new dim."""
    if len(tensors) == 0:
        raise ValueError("stack: expected a non-empty sequence of tensors")
    shapes = {t.shape for t in tensors}
    if len(shapes) > 1:
        raise ValueError(f"stack: all tensors need the same shape, got {sorted(shapes)}")
    return cat([unsqueeze(t, dim) for t in tensors], dim)


class Pad(Function):
    """``a`` padded with a constant; the gradient is the middle slice."""

    saves_inputs = False  # backward needs no input's values

    def forward(self, a: Any, *, widths: tuple[tuple[int, int], ...], value: float) -> Any:
        self.index = tuple(slice(lo, lo + s) for (lo, _), s in zip(widths, a.shape, strict=False))
        return self.xp.pad(a, widths, mode="constant", constant_values=value)

    def backward(self, grad: Tensor) -> Tensor:
        return grad[self.index]


def pad(a: Tensor, pad: Sequence[int], value: float = 0.0) -> Tensor:
    """Constant padding, PyTorch-style: ``pad=(left, right, top, bottom, ...)`` pads the
    last dim first.
    """
    if len(pad) % 2 or len(pad) // 2 > a.ndim:
        raise ValueError(f"pad: expected pairs for at most {a.ndim} dims, got {tuple(pad)}")
    if builtins.min(pad, default=0) < 0:
        raise ValueError(f"pad: negative padding {tuple(pad)} is not supported")
    widths = [(0, 0)] * a.ndim
    for i in range(len(pad) // 2):
        widths[a.ndim - 1 - i] = (int(pad[2 * i]), int(pad[2 * i + 1]))
    return Pad.apply(a, widths=tuple(widths), value=value)


def raw_index(index: Any) -> Any:
    """An index with any Tensors in it replaced by their arrays (a uint8 tensor becomes a
    bool mask, as in PyTorch, with its deprecation warning; an empty list selects nothing).
    """
    if isinstance(index, tuple):
        return tuple(_raw_part(i) for i in index)
    return _raw_part(index)


def _raw_part(part: Any) -> Any:
    if isinstance(part, Tensor):
        if part.dtype == np.uint8:
            warnings.warn(
                "indexing with dtype uint8 is now deprecated, please use a dtype bool instead.",
                UserWarning,
                stacklevel=2,
            )
            return part.array.astype(bool)
        return part.array
    if isinstance(part, list):  # a list is an int array (or a bool mask), also in a tuple
        array = np.asarray(part)
        return array.astype(np.int64) if array.size == 0 else array
    return part


def _is_advanced(index: Any) -> bool:
    parts = index if isinstance(index, tuple) else (index,)
    return any(hasattr(p, "dtype") and p.dtype != np.bool_ for p in parts)


class GetItem(Function):
    """``a[index]``; the gradient is scattered back into zeros of ``a``'s shape."""

    saves_inputs = False  # backward needs no input's values

    def forward(self, a: Any, *, index: Any) -> Any:
        self.index, self.in_shape = index, a.shape
        parts = index if isinstance(index, tuple) else (index,)
        self.returns_view = not any(getattr(p, "ndim", 0) for p in parts)  # no index arrays
        out = a[index]
        if self.returns_view and not isinstance(out, self.xp.ndarray):
            # NumPy gives a scalar (a copy) for a single element; ``a[..., Ellipsis]``
            # is the 0-d view PyTorch returns, so that ``a[0].fill_(9)`` changes ``a``
            out = a[tuple(parts) + (Ellipsis,)]
        return out

    def backward(self, grad: Tensor) -> Tensor:
        return IndexAdd.apply(grad, index=self.index, shape=self.in_shape)


class IndexAdd(Function):
    """``zeros(shape)`` with ``grad`` added at ``index``; repeated indices accumulate."""

    saves_inputs = False  # backward needs no input's values

    def forward(self, grad: Any, *, index: Any, shape: tuple[int, ...]) -> Any:
        self.index = index
        out = self.xp.zeros(shape, dtype=grad.dtype)
        if _is_advanced(index):
            self.xp.add.at(out, index, grad)
        else:
            out[index] = grad
        return out

    def backward(self, grad: Tensor) -> Tensor:
        return GetItem.apply(grad, index=self.index)


class IndexPut(Function):
    """``a`` with ``value`` written at ``index``, out of place: the recorded form of
    ``a[index] = value``.
    """

    saves_inputs = False

    def forward(self, a: Any, value: Any, *, index: Any) -> Any:
        self.index = index
        out = a.copy()
        out[index] = value
        return out

    def backward(self, grad: Tensor) -> tuple[Tensor | None, Tensor | None]:
        grad_a = None
        if self.needs_input_grad[0]:
            zero = Tensor._make(self.xp.zeros((), grad.dtype), grad.device, False, None)
            grad_a = IndexPut.apply(grad, zero, index=self.index)
        grad_value = grad[self.index] if self.needs_input_grad[1] else None
        return grad_a, grad_value


@on_input_device
def getitem(a: Tensor, index: Any) -> Tensor:
    """``a[index]``: ints, slices, None, Ellipsis, bool masks and int arrays (tensors
    or arrays). The gradient of an int-array index accumulates repeated positions.
    """
    raw = raw_index(index)
    if isinstance(raw, tuple):
        raw = tuple(a.xp.asarray(i) if isinstance(i, np.ndarray) else i for i in raw)
    elif isinstance(raw, np.ndarray):
        raw = a.xp.asarray(raw)
    try:
        return GetItem.apply(a, index=raw)
    except IndexError as exc:
        raise IndexError(
            f"index {index!r} is invalid for a tensor of shape {a.shape}: {exc}"
        ) from None
