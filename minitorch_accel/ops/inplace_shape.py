"""In-place methods that change what a tensor *is*, not only its values: its shape and
strides (``unsqueeze_``, ``t_``, ``resize_``, ``as_strided_``...), its place in the graph
(``detach_``), and the CPU-only Python callbacks (``apply_``, ``map_``, ``map2_``); plus
``fill_diagonal_``, ``put_`` and ``index_reduce_``.

As in PyTorch, each returns the same Tensor object. A shape change is an in-place view
op: the tensor keeps its memory, its version counter moves, and where autograd records
(the tensor requires grad and is not a leaf) the view op becomes its ``grad_fn``.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..backends.memory_tracker import tracker as _memory
from ..core.function import Function
from ..core.grad_mode import is_grad_enabled
from ..core.tensor import Tensor
from ..core.versions import version_counter

LEAF_IN_PLACE = "a leaf Variable that requires grad is being used in an in-place operation."


def view_in_place(target: Tensor, compute: Callable[[Tensor], Tensor], op: str) -> Tensor:
    """Make ``target`` hold ``compute(target)``, a view of its own memory with other
    shape metadata (PyTorch's in-place view ops): the same object and memory, its
    version bumped.

    Where autograd records, the view op becomes ``target``'s grad_fn (a leaf that
    requires grad is refused, as in PyTorch). Under ``no_grad`` a non-leaf keeps its
    grad_fn, as in PyTorch: backward through it then fails, its shape having changed.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> x = mta.zeros(2, 3)
    >>> view_in_place(x, lambda t: t.t(), "t_") is x, x.shape, x._version
    (True, (3, 2), 1)
    """
    recording = is_grad_enabled() and target.requires_grad
    if recording and target.grad_fn is None:
        raise RuntimeError(f"{op}: {LEAF_IN_PLACE} Wrap it in `with minitorch_accel.no_grad():`")
    counter = version_counter(target)
    had_views = counter.has_views
    node = target._node if recording else None
    before = Tensor._make(target.array, target.device, recording, node)
    before._version_counter = counter
    result = compute(before)
    counter.has_views = had_views  # the result replaces target: it is no new view of it
    counter.value += 1
    target.array = result.array
    if recording:
        target._node = result._node
    return target


def t_(target: Tensor) -> Tensor:
    """:meth:`~minitorch_accel.Tensor.t` in place (at most 2 dims).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.zeros(2, 3).t_().shape
    (3, 2)
    """
    if target.ndim > 2:
        raise RuntimeError(
            f"t_() expects a tensor with <= 2 dimensions, but self is {target.ndim}D; use "
            "transpose_(dim0, dim1)"
        )
    return view_in_place(target, lambda t: t.t() if t.ndim == 2 else t, "t_")


def detach_(target: Tensor) -> Tensor:
    """Cut ``target`` off the graph in place: no grad_fn, ``requires_grad=False`` (its
    ``.grad`` stays), as PyTorch's ``detach_``. A view is refused, as in PyTorch; here a
    tensor counts as a view when it shares its memory and version counter with another
    and its array is a view of another array.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> y = mta.ones(2, requires_grad=True) * 2
    >>> y.detach_() is y, y.requires_grad, y.grad_fn
    (True, False, None)
    """
    if target._version_counter.has_views and getattr(target.array, "base", None) is not None:
        raise RuntimeError(
            "Can't detach views in-place. Use detach() instead (it returns a new tensor "
            "and leaves this view as it is)"
        )
    target._node = None
    target.requires_grad = False
    return target


def _shape_of(sizes: tuple[Any, ...], op: str) -> tuple[int, ...]:
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    shape = tuple(int(s) for s in sizes)
    if any(s < 0 for s in shape):
        raise RuntimeError(f"{op}: sizes must be non-negative, got {list(shape)}")
    return shape


def resize_(target: Tensor, *sizes: Any) -> Tensor:
    """Give ``target`` shape ``sizes`` (row-major), keeping its leading elements: a
    smaller size views the first ones (in memory order), a larger one moves the values
    into new memory whose remaining elements are zeros (PyTorch leaves them
    uninitialized). Refused for a tensor that requires grad, as in PyTorch.

    Unlike PyTorch, growing gives the tensor new memory that its views (made before)
    no longer share, and a tensor whose memory has gaps (a strided slice) keeps a copy
    of its own elements, not of the storage around them.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> x = mta.arange(6.0)
    >>> x.resize_(2, 2)
    tensor([[0., 1.],
            [2., 3.]])
    >>> x.resize_(3, 2)[2].tolist()
    [0.0, 0.0]
    """
    shape = _shape_of(sizes, "resize_")
    if target.requires_grad:
        raise RuntimeError(
            "cannot resize variables that require grad; resize x.detach() (or a clone)"
        )
    array = target.array
    if tuple(array.shape) == shape:
        return target
    version_counter(target).value += 1
    n = int(np.prod(shape))
    with target.device.guard():
        flat = array.reshape(-1) if array.flags.c_contiguous else array.ravel(order="K")
        if n <= flat.size:
            target.array = flat[:n].reshape(shape)
            return target
        grown = target.xp.zeros(n, dtype=array.dtype)
        grown[: flat.size] = flat
        if _memory.enabled:
            _memory.record_tensor(grown, target.device, None)
        target.array = grown.reshape(shape)
    return target


def _span(array: Any) -> int:
    """How many elements the memory of ``array`` spans from its first one (its strides
    are not negative): what ``as_strided_`` may address.
    """
    if not array.size:
        return 0
    item = int(array.itemsize)
    return 1 + builtins.sum(
        (int(n) - 1) * int(s) // item for n, s in zip(array.shape, array.strides, strict=True)
    )


class AsStrided(Function):
    """A view of ``a``'s memory with the given sizes and strides (in elements) from
    ``offset`` elements past its first one; the gradient adds up each output element's
    share at the input element it reads (several, where strides overlap).
    """

    saves_inputs = False  # backward needs the positions only
    returns_view = True

    def forward(
        self, a: Any, *, size: tuple[int, ...], stride: tuple[int, ...], offset: int
    ) -> Any:
        item = a.itemsize
        span = _span(a)
        memory = self.xp.lib.stride_tricks.as_strided(a, (span,), (item,))
        out = self.xp.lib.stride_tricks.as_strided(
            memory[offset:], size, tuple(s * item for s in stride)
        )
        self.in_positions = self.xp.lib.stride_tricks.as_strided(
            self.xp.arange(span, dtype=np.int64), a.shape, tuple(s // item * 8 for s in a.strides)
        )
        self.out_positions = (
            offset
            + builtins.sum(
                (self.xp.arange(n, dtype=np.int64) * s).reshape((-1,) + (1,) * (len(size) - d - 1))
                for d, (n, s) in enumerate(zip(size, stride, strict=True))
            )
            + self.xp.zeros(size, dtype=np.int64)
        )
        self.span = span
        return out

    def backward(self, grad: Tensor) -> Tensor:
        positions = Tensor._make(self.out_positions.reshape(-1), grad.device, False, None)
        memory = grad.new_zeros(self.span).index_add(0, positions, grad.reshape(-1))
        return memory[Tensor._make(self.in_positions, grad.device, False, None)]


def as_strided_(
    target: Tensor, size: Sequence[int], stride: Sequence[int], storage_offset: int | None = None
) -> Tensor:
    """Make ``target`` a view of its own memory with ``size`` and ``stride`` (in
    elements), ``storage_offset`` elements past its first element (default 0).

    PyTorch counts ``storage_offset`` from the start of the tensor's storage; here
    from the tensor's first element: the same for a tensor that is not a view into a
    larger one. The view must stay inside the memory the tensor spans.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.arange(6.0).as_strided_((2, 2), (1, 2))
    tensor([[0., 2.],
            [1., 3.]])
    """
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    offset = 0 if storage_offset is None else int(storage_offset)
    array = target.array
    if len(size) != len(stride) or any(s < 0 for s in (*size, *stride)) or offset < 0:
        raise RuntimeError(
            f"as_strided_: mismatch in length of strides and shape, or a negative size, "
            f"stride or offset: size {list(size)}, stride {list(stride)}, offset {offset}"
        )
    if any(s < 0 for s in array.strides):
        raise RuntimeError(
            "as_strided_: this tensor's memory runs backwards (a flip view); call "
            ".contiguous() on it first"
        )
    item = array.itemsize
    span = _span(array)
    needed = (
        0
        if 0 in size
        else offset + 1 + builtins.sum((n - 1) * s for n, s in zip(size, stride, strict=True))
    )
    if needed > span:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, "
            f"and itemsize {item} requiring a storage size of {needed * item} are out of bounds "
            f"for storage of size {span * item}"
        )

    def compute(t: Tensor) -> Tensor:
        return AsStrided.apply(t, size=size, stride=stride, offset=offset)

    return view_in_place(target, compute, "as_strided_")


def _diagonal_positions(shape: tuple[int, ...], wrap: bool) -> np.ndarray:
    """The row-major positions of the main diagonal of ``shape`` (as ``fill_diagonal_``)."""
    if len(shape) < 2:
        raise RuntimeError(f"fill_diagonal_: dimensions must larger than 1, got shape {shape}")
    if len(shape) > 2 and len(set(shape)) != 1:
        raise RuntimeError(
            f"fill_diagonal_: all dimensions of input must be of equal length, got {shape}"
        )
    if len(shape) == 2:
        rows, cols = shape
        end = rows * cols if wrap else builtins.min(rows, cols) * cols
        return np.arange(0, end, cols + 1)
    n = shape[0]
    step = builtins.sum(n**k for k in range(len(shape)))
    return np.arange(0, n * step, step)


def fill_diagonal_(target: Tensor, fill_value: Any, wrap: bool = False) -> Tensor:
    """Write ``fill_value`` on the main diagonal (all dims equal beyond 2-d); a tall
    matrix with ``wrap=True`` starts the diagonal again after each ``cols + 1`` rows,
    as PyTorch (and NumPy's ``fill_diagonal``).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.zeros(2, 3).fill_diagonal_(5.0)
    tensor([[5., 0., 0.],
            [0., 5., 0.]])
    """
    from .tensor_methods import write_in_place

    where = np.unravel_index(_diagonal_positions(tuple(target.shape), wrap), target.shape)
    if target.dtype.kind == "f":
        mask = np.zeros(target.shape, dtype=bool)
        mask[where] = True
        on_device = Tensor._from_data(mask, device=target.device)
        return write_in_place(
            target, lambda t: t.masked_fill(on_device, fill_value), "fill_diagonal_"
        )
    target._check_inplace()  # integers and bools hold no gradient: write directly
    with target.device.guard():
        target.array[tuple(target.xp.asarray(w) for w in where)] = fill_value
    return target


def put_(target: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """Write ``source`` at the positions ``index`` of ``target`` read as 1-d (row-major;
    negative positions count from the end); ``accumulate=True`` adds instead, repeated
    positions adding up.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.zeros(2, 2).put_(mta.tensor([0, -1]), mta.tensor([7.0, 9.0]))
    tensor([[7., 0.],
            [0., 9.]])
    """
    from .tensor_methods import write_in_place

    if not isinstance(index, Tensor) or index.dtype.kind not in "iu":
        got = index.dtype if isinstance(index, Tensor) else type(index).__name__
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {got}")
    if not isinstance(source, Tensor):
        raise TypeError(f"put_(): source must be a Tensor, got {type(source).__name__}")
    if index.numel() != source.numel():
        raise IndexError(
            "put_(): Expected source and index to have the same number of elements, but got "
            f"source.numel() = {source.numel()}, index.numel() = {index.numel()}"
        )
    n = target.numel()
    positions = index.to(target.device).reshape(-1)
    with target.device.guard():
        bad = positions.array[(positions.array < -n) | (positions.array >= n)]
    if bad.size:
        raise IndexError(
            f"out of range: tried to access index {int(bad[0])} on a tensor of {n} elements."
        )
    values = source.to(target.device).reshape(-1)

    def compute(t: Tensor) -> Tensor:
        flat = t.reshape(-1).index_put((positions,), values, accumulate)
        return flat.reshape(t.shape)

    return write_in_place(target, compute, "put_")


_INDEX_REDUCTIONS = ("prod", "mean", "amax", "amin")


def index_reduce_(
    target: Tensor,
    dim: int,
    index: Tensor,
    source: Tensor,
    reduce: str,
    include_self: bool = True,
) -> Tensor:
    """Reduce the slices ``source.select(dim, i)`` into ``target.select(dim,
    index[i])`` with ``reduce`` (``"prod"``, ``"mean"``, ``"amax"`` or ``"amin"``),
    counting ``target``'s own values unless ``include_self=False``, as PyTorch's
    ``index_reduce_`` (an integer ``"mean"`` rounds down).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> x = mta.full((2, 2), 2.0)
    >>> x.index_reduce_(0, mta.tensor([0, 0]), mta.tensor([[1.0, 2.0], [3.0, 4.0]]), "prod")
    tensor([[ 6., 16.],
            [ 2.,  2.]])
    """
    from .shape import normalize_dim
    from .tensor_methods import write_in_place

    if reduce not in _INDEX_REDUCTIONS:
        raise RuntimeError(
            "index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got "
            f"{reduce}."
        )
    d = normalize_dim(dim, target.ndim, "index_reduce_")
    if not isinstance(index, Tensor) or index.ndim > 1 or index.dtype.kind not in "iu":
        raise IndexError("index_reduce_(): index must be a 1-d integer tensor")
    if source.ndim != target.ndim or index.numel() != (source.shape[d] if source.ndim else 1):
        raise IndexError(
            f"index_reduce_(): source of shape {tuple(source.shape)} needs as many slices "
            f"along dim {dim} as index has elements ({index.numel()}), and {target.ndim} dims"
        )
    spread = [1] * source.ndim
    spread[d] = -1
    where = index.to(target.device).reshape(*spread).expand(*source.shape)

    def compute(t: Tensor) -> Tensor:
        return t.scatter_reduce(d, where, source, reduce, include_self=include_self)

    return write_in_place(target, compute, "index_reduce_")


def _python_callback_checks(op: str, tensors: Sequence[Tensor]) -> None:
    """``apply_``, ``map_`` and ``map2_`` run Python on each element: CPU tensors that
    require no grad only, as in PyTorch.
    """
    for t in tensors:
        if not t.is_cpu:
            raise RuntimeError(f"{op} is only implemented on CPU tensors, got one on {t.device}")
        if t.requires_grad:
            raise RuntimeError(
                f"Can't call {op}() on Variable that requires grad. Use "
                f"var.detach().{op}() instead."
            )


def _store(array: Any, where: tuple[int, ...], value: Any) -> None:
    if not isinstance(value, (bool, int, float, np.bool_, np.integer, np.floating)):
        raise TypeError(f"must be real number, not {type(value).__name__}")
    array[where] = value


def apply_(target: Tensor, callable: Callable[[Any], Any]) -> Tensor:
    """Replace each element ``v`` by ``callable(v)`` (a Python number in, one out),
    on the CPU, for a tensor that requires no grad; slow (one Python call per element),
    as PyTorch's ``apply_``. The version counter does not move, as in PyTorch.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.tensor([1, 2]).apply_(lambda v: v * 10)
    tensor([10, 20])
    """
    _python_callback_checks("apply_", [target])
    array = target.array
    for where in np.ndindex(array.shape):
        _store(array, where, callable(array[where].item()))
    return target


def _same_dtype(op: str, target: Tensor, others: Sequence[Tensor]) -> list[Any]:
    arrays = []
    for name, other in zip(("other", "tensor2"), others, strict=False):
        if not isinstance(other, Tensor) or other.dtype != target.dtype:
            got = other.dtype if isinstance(other, Tensor) else type(other).__name__
            raise TypeError(f"{op}: expected {target.dtype} for '{name}' (got {got})")
        try:
            arrays.append(np.broadcast_to(other.array, target.shape))
        except ValueError:
            raise RuntimeError(
                f"{op}: the expanded size of the tensor {tuple(other.shape)} must match the "
                f"existing size {tuple(target.shape)}"
            ) from None
    return arrays


def map_(target: Tensor, tensor: Tensor, callable: Callable[[Any, Any], Any]) -> Tensor:
    """Replace each element ``v`` by ``callable(v, w)``, ``w`` the matching element of
    ``tensor`` (same dtype, broadcast to this shape); as :meth:`apply_` otherwise.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.tensor([1.0, 2.0]).map_(mta.tensor([10.0]), lambda v, w: v + w)
    tensor([11., 12.])
    """
    _python_callback_checks("map_", [target, tensor])
    (other,) = _same_dtype("map_", target, [tensor])
    array = target.array
    for where in np.ndindex(array.shape):
        _store(array, where, callable(array[where].item(), other[where].item()))
    return target


def map2_(target: Tensor, x: Tensor, y: Tensor, callable: Callable[[Any, Any, Any], Any]) -> Tensor:
    """Replace each element ``v`` by ``callable(v, a, b)``, ``a`` and ``b`` the matching
    elements of ``x`` and ``y``; as :meth:`map_` otherwise.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> a, b = mta.tensor([1.0, 2.0]), mta.tensor([10.0, 20.0])
    >>> mta.zeros(2).map2_(a, b, lambda v, p, q: v + p * q)
    tensor([10., 40.])
    """
    _python_callback_checks("map2_", [target, x, y])
    first, second = _same_dtype("map2_", target, [x, y])
    array = target.array
    for where in np.ndindex(array.shape):
        value = callable(array[where].item(), first[where].item(), second[where].item())
        _store(array, where, value)
    return target
