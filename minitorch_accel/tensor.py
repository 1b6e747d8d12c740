"""The Tensor: a backend array, the device it lives on, and its place in the graph.

What a tensor holds, and reading it back, is :class:`~minitorch_accel.tensor_data.TensorData`;
this file adds how tensors are made, how they move between devices, backward, and the
operators and methods, which delegate to the functions of :mod:`minitorch_accel.ops`.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator
from typing import Any

import numpy as np

from . import autograd
from .autograd import Function, is_grad_enabled, run_backward
from .backends import Device, DeviceLike
from .backends.memory_tracker import tracker as _memory
from .convert import HOST, DTypeLike, as_dtype, move_array, to_array
from .tensor_data import TensorData
from .tensor_methods import TensorMethods


class Tensor(TensorData, TensorMethods):
    """An n-dimensional array on a device, with optional gradient tracking.

    Parameters
    ----------
    data : array_like
        Python numbers and (nested) lists become float32 (floats) or int64 (integers);
        NumPy and CuPy arrays keep their dtype.
    dtype : dtype, optional
        Convert to this dtype.
    device : str or Device, optional
        Where the tensor lives; default ``"cpu"`` (or the device of a CuPy array).
    requires_grad : bool
        Record operations on this tensor so that :meth:`backward` can fill ``.grad``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> x = mta.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> (x * x).sum().backward()
    >>> x.grad
    tensor([2., 4., 6.])
    """

    __slots__ = ()

    def __init__(
        self,
        data: Any,
        dtype: DTypeLike = None,
        device: DeviceLike | None = None,
        requires_grad: bool = False,
    ) -> None:
        source = data if isinstance(data, Tensor) else None
        if source is not None:
            device = source.device if device is None else device
            data = source.detach().to(device, dtype=dtype).array
        dev, array = to_array(data, dtype, device)
        if _memory.enabled:
            _memory.record_tensor(array, dev, None)
        self.array = array
        self.device = dev
        self.grad = None
        self._node = None
        self._version_counter = autograd.UNWRITTEN
        if source is not None and array is source.array:  # the same storage: one counter
            self._version_counter = autograd.version_counter(source)
        self._hooks = None
        self.requires_grad = False
        if requires_grad:
            self.requires_grad_(True)

    __hash__ = object.__hash__

    def __iter__(self) -> Iterator[Tensor]:
        for i in range(len(self)):
            yield self[i]

    # ---------------------------------------------------------------- devices, dtypes
    def to(
        self,
        device: DeviceLike | None = None,
        dtype: DTypeLike = None,
        non_blocking: bool = False,
    ) -> Tensor:
        """This tensor on another device and/or with another dtype (differentiable).

        Returns ``self`` when nothing changes. Moving between two devices copies the
        data and counts the bytes in :data:`minitorch_accel.backends.transfer_stats`.
        ``non_blocking=True`` lets a GPU copy overlap with other work. As in PyTorch,
        ``to(dtype)`` and ``to(other_tensor)`` (its device and dtype) work too.
        """
        if isinstance(device, Tensor):
            device, dtype = device.device, device.dtype
        elif isinstance(device, (np.dtype, type)):
            device, dtype = None, device
        out = self
        if dtype is not None and as_dtype(dtype) != self.dtype:
            from .ops.elementwise import Cast

            out = Cast.apply(out, dtype=as_dtype(dtype))
        if device is not None:
            dst = Device(device)
            if dst is not out.device:
                data = move_array(out.array, out.device, dst, non_blocking)
                if out.requires_grad and is_grad_enabled():
                    node = ToDevice.__new__(ToDevice)
                    node.device, node.xp = out.device, out.xp
                    node.inputs, node.needs_input_grad = (out,), (True,)
                    node.input_nodes = (out._node,)
                    return Tensor._make(data, dst, True, node)
                return Tensor._make(data, dst, False, None)
        return out

    def cpu(self) -> Tensor:
        """This tensor on the host (``"cpu"``)."""
        return self.to(HOST)

    def cuda(self, index: int = 0, non_blocking: bool = False) -> Tensor:
        """This tensor on GPU ``index``."""
        return self.to(f"cuda:{index}", non_blocking=non_blocking)

    def float(self) -> Tensor:
        """This tensor as float32."""
        return self.to(dtype=np.float32)

    def double(self) -> Tensor:
        """This tensor as float64."""
        return self.to(dtype=np.float64)

    def half(self) -> Tensor:
        """This tensor as float16."""
        return self.to(dtype=np.float16)

    def long(self) -> Tensor:
        """This tensor as int64."""
        return self.to(dtype=np.int64)

    # ---------------------------------------------------------------- autograd
    def clone(self) -> Tensor:
        """A copy of the data (differentiable)."""
        from .ops.elementwise import Clone

        return Clone.apply(self)

    def backward(
        self,
        gradient: Tensor | None = None,
        retain_graph: bool | None = None,
        create_graph: bool = False,
    ) -> None:
        """Accumulate d(self)/d(leaf) into the ``.grad`` of every leaf that requires grad.

        Parameters
        ----------
        gradient : Tensor, optional
            d(loss)/d(self); required unless ``self`` has one element.
        retain_graph : bool, optional
            Keep the graph so backward can run through it again (default:
            ``create_graph``). Otherwise it is freed as the walk goes.
        create_graph : bool
            Record the backward pass, so gradients can be differentiated again.
        """
        from .autograd import _seed_gradient

        seed = _seed_gradient(self, gradient)
        keep = create_graph if retain_graph is None else retain_graph
        run_backward([self], [seed], keep, create_graph)

    # ---------------------------------------------------------------- operators
    def __add__(self, other: Any) -> Tensor:
        return _E.add(self, other)

    def __radd__(self, other: Any) -> Tensor:
        return _E.add(other, self)

    def __sub__(self, other: Any) -> Tensor:
        return _E.sub(self, other)

    def __rsub__(self, other: Any) -> Tensor:
        return _E.sub(other, self)

    def __mul__(self, other: Any) -> Tensor:
        return _E.mul(self, other)

    def __rmul__(self, other: Any) -> Tensor:
        return _E.mul(other, self)

    def __truediv__(self, other: Any) -> Tensor:
        return _E.div(self, other)

    def __rtruediv__(self, other: Any) -> Tensor:
        return _E.div(_E.as_operand(other, self), self)

    def __pow__(self, exponent: Any) -> Tensor:
        return _E.pow(self, exponent)

    def __rpow__(self, base: Any) -> Tensor:
        return _E.pow(_E.as_operand(base, self), self)

    def __matmul__(self, other: Tensor) -> Tensor:
        return _M.matmul(self, other)

    def __rmatmul__(self, other: Tensor) -> Tensor:
        return _M.matmul(other, self)

    def __neg__(self) -> Tensor:
        return _E.Neg.apply(self)

    def __abs__(self) -> Tensor:
        return _E.abs(self)

    def __invert__(self) -> Tensor:
        return _E.logical_not(self)

    def __eq__(self, other: object) -> Tensor:  # type: ignore[override]
        return _E.eq(self, other)

    def __ne__(self, other: object) -> Tensor:  # type: ignore[override]
        return _E.ne(self, other)

    def __lt__(self, other: Any) -> Tensor:
        return _E.lt(self, other)

    def __le__(self, other: Any) -> Tensor:
        return _E.le(self, other)

    def __gt__(self, other: Any) -> Tensor:
        return _E.gt(self, other)

    def __ge__(self, other: Any) -> Tensor:
        return _E.ge(self, other)

    def __getitem__(self, index: Any) -> Tensor:
        return _S.getitem(self, index)

    # ---------------------------------------------------------------- math methods
    def exp(self) -> Tensor:
        """See :func:`minitorch_accel.exp`."""
        return _E.exp(self)

    def log(self) -> Tensor:
        """See :func:`minitorch_accel.log`."""
        return _E.log(self)

    def sqrt(self) -> Tensor:
        """See :func:`minitorch_accel.sqrt`."""
        return _E.sqrt(self)

    def abs(self) -> Tensor:
        """See :func:`minitorch_accel.abs`."""
        return _E.abs(self)

    def relu(self) -> Tensor:
        """See :func:`minitorch_accel.relu`."""
        return _E.relu(self)

    def sigmoid(self) -> Tensor:
        """See :func:`minitorch_accel.sigmoid`."""
        return _E.sigmoid(self)

    def tanh(self) -> Tensor:
        """See :func:`minitorch_accel.tanh`."""
        return _E.tanh(self)

    def clamp(self, min: builtins.float | None = None, max: builtins.float | None = None) -> Tensor:
        """See :func:`minitorch_accel.clamp`."""
        return _E.clamp(self, min, max)

    def matmul(self, other: Tensor) -> Tensor:
        """See :func:`minitorch_accel.matmul`."""
        return _M.matmul(self, other)

    def sum(self, dim: Any = None, keepdim: bool = False) -> Tensor:
        """See :func:`minitorch_accel.sum`."""
        return _R.sum(self, dim, keepdim)

    def mean(self, dim: Any = None, keepdim: bool = False) -> Tensor:
        """See :func:`minitorch_accel.mean`."""
        return _R.mean(self, dim, keepdim)

    def var(self, dim: Any = None, keepdim: bool = False, correction: int = 1) -> Tensor:
        """See :func:`minitorch_accel.var`."""
        return _R.var(self, dim, keepdim, correction)

    def max(self, dim: int | Tensor | None = None, keepdim: bool = False) -> Any:
        """See :func:`minitorch_accel.max`: a tensor, or ``(values, indices)`` with a dim."""
        return _R.max(self, dim, keepdim)

    def min(self, dim: int | Tensor | None = None, keepdim: bool = False) -> Any:
        """See :func:`minitorch_accel.min`: a tensor, or ``(values, indices)`` with a dim."""
        return _R.min(self, dim, keepdim)

    def argmax(self, dim: int | None = None, keepdim: bool = False) -> Tensor:
        """See :func:`minitorch_accel.argmax`."""
        return _R.argmax(self, dim, keepdim)

    def argmin(self, dim: int | None = None, keepdim: bool = False) -> Tensor:
        """See :func:`minitorch_accel.argmin`."""
        return _R.argmin(self, dim, keepdim)

    def logsumexp(self, dim: Any = None, keepdim: bool = False) -> Tensor:
        """See :func:`minitorch_accel.logsumexp`."""
        return _R.logsumexp(self, dim, keepdim)

    def softmax(self, dim: int = -1) -> Tensor:
        """See :func:`minitorch_accel.softmax`."""
        return _R.softmax(self, dim)

    def log_softmax(self, dim: int = -1) -> Tensor:
        """See :func:`minitorch_accel.log_softmax`."""
        return _R.log_softmax(self, dim)

    def any(self) -> bool:
        """True if any element is non-zero."""
        with self.device.guard():
            return bool(self.xp.any(self.array))

    def all(self) -> bool:
        """True if every element is non-zero."""
        with self.device.guard():
            return bool(self.xp.all(self.array))

    # ---------------------------------------------------------------- shape methods
    def reshape(self, *shape: Any) -> Tensor:
        """See :func:`minitorch_accel.reshape`."""
        return _S.reshape(self, *shape)

    def view(self, *shape: Any) -> Tensor:
        """Same as :meth:`reshape` (which returns a view whenever NumPy can)."""
        return _S.reshape(self, *shape)

    def transpose(self, dim0: int = -2, dim1: int = -1) -> Tensor:
        """See :func:`minitorch_accel.transpose`."""
        return _S.transpose(self, dim0, dim1)

    @property
    def T(self) -> Tensor:
        """All dims reversed."""
        return _S.permute(self, *reversed(range(self.ndim)))

    def permute(self, *dims: Any) -> Tensor:
        """See :func:`minitorch_accel.permute`."""
        return _S.permute(self, *dims)

    def expand(self, *shape: Any) -> Tensor:
        """See :func:`minitorch_accel.expand`."""
        return _S.expand(self, *shape)

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
        """See :func:`minitorch_accel.flatten`."""
        return _S.flatten(self, start_dim, end_dim)

    def squeeze(self, dim: int | None = None) -> Tensor:
        """See :func:`minitorch_accel.squeeze`."""
        return _S.squeeze(self, dim)

    def unsqueeze(self, dim: int) -> Tensor:
        """See :func:`minitorch_accel.unsqueeze`."""
        return _S.unsqueeze(self, dim)

    # ---------------------------------------------------------------- in place (graph-aware)
    # An in-place op either writes the array directly (nothing to record: under no_grad,
    # or no tensor involved requires grad), bumping the version counter, or, when
    # autograd must see it, computes the out-of-place result from a snapshot of this
    # tensor's history and writes it into the storage: the tensor's grad_fn becomes the
    # new node (PyTorch "rebases history" the same way).
    def _records(self, other: Any) -> bool:
        """Whether an in-place op of this tensor with ``other`` must be recorded."""
        return is_grad_enabled() and (
            self.requires_grad or (isinstance(other, Tensor) and other.requires_grad)
        )

    def _history(self, copy: bool) -> Tensor:
        """This tensor's values and grad_fn as another Tensor, to be the input of the
        recorded op (a copy of the values when the op saves them for backward).
        """
        if self.requires_grad and self._node is None:
            self._check_inplace()  # raises: a leaf that requires grad
        if self._version_counter.has_views:
            raise RuntimeError(
                "an in-place operation recorded for autograd on a tensor that is, or has, a "
                f"view (shape {list(self.shape)}) is not supported; use the out-of-place "
                "form (y = y + x), or clone() the tensor first"
            )
        if not copy:
            before = Tensor._make(self.array, self.device, self.requires_grad, self._node)
            before._version_counter = autograd.version_counter(self)
            return before
        with self.device.guard():
            array = self.device.backend.clone(self.array)
        return Tensor._make(array, self.device, self.requires_grad, self._node)

    def _rebase(self, result: Tensor) -> Tensor:
        """Write ``result`` into this tensor's storage and make its grad_fn this
        tensor's: the recorded form of an in-place op.
        """
        if result.shape != self.shape:
            raise RuntimeError(
                f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                f"{list(result.shape)}"
            )
        autograd.bump_version(self)
        with self.device.guard():
            self.array[...] = result.array
        self._node = result._node
        self.requires_grad = result.requires_grad
        return self

    def _write(self, update: Any, other: Any, name: str, divides: bool = False) -> Tensor:
        """Apply ``update(array, value)`` in place, unrecorded.

        The array is assigned back: the same array, unless it was a NumPy scalar, which
        has no memory to write. A float result is refused for an integer tensor (as
        PyTorch): ``divides`` says the op makes floats of integers.
        """
        if self.dtype.kind != "f":
            kind = other.dtype.kind if isinstance(other, TensorData) else type(other).__name__
            if divides or kind in ("f", "float"):
                result = other.dtype if isinstance(other, TensorData) and kind == "f" else "float32"
                raise TypeError(
                    f"{name}: the result is {result}, which a {self.dtype} tensor cannot hold; "
                    "convert it first, e.g. x = x.float()"
                )
        self._check_inplace()
        with self.device.guard():
            self.array = update(self.array, self._as_data(other))
        return self

    def add_(self, other: Any, alpha: builtins.float = 1.0) -> Tensor:
        """``self += alpha * other``, in place (also ``+=``).

        Under ``no_grad`` (or when nothing requires grad) the array is updated directly;
        otherwise the op is recorded in the graph. A leaf that requires grad may only be
        changed under ``no_grad``, as in PyTorch.

        Examples
        --------
        >>> import minitorch_accel as mta
        >>> w = mta.ones(2, requires_grad=True)
        >>> with mta.no_grad():
        ...     w -= 0.5 * mta.ones(2)
        >>> w
        tensor([0.5, 0.5], requires_grad=True)
        """
        self._check_same_device(other, "add_")
        if alpha != 1.0:
            other = other * alpha
        if self._records(other):
            return self._rebase(self._history(copy=False) + other)
        return self._write(_add_into, other, "add_")

    def sub_(self, other: Any, alpha: builtins.float = 1.0) -> Tensor:
        """``self -= alpha * other``, in place (also ``-=``); see :meth:`add_`."""
        self._check_same_device(other, "sub_")
        if alpha != 1.0:
            other = other * alpha
        if self._records(other):
            return self._rebase(self._history(copy=False) - other)
        return self._write(_sub_into, other, "sub_")

    def mul_(self, other: Any) -> Tensor:
        """``self *= other``, in place (also ``*=``); see :meth:`add_`."""
        self._check_same_device(other, "mul_")
        if self._records(other):
            return self._rebase(self._history(copy=True) * other)
        return self._write(_mul_into, other, "mul_")

    def div_(self, other: Any) -> Tensor:
        """``self /= other``, in place (also ``/=``); see :meth:`add_`."""
        self._check_same_device(other, "div_")
        if self._records(other):
            return self._rebase(self._history(copy=True) / other)
        return self._write(_div_into, other, "div_", divides=True)

    def __iadd__(self, other: Any) -> Tensor:
        return self.add_(other)

    def __isub__(self, other: Any) -> Tensor:
        return self.sub_(other)

    def __imul__(self, other: Any) -> Tensor:
        return self.mul_(other)

    def __itruediv__(self, other: Any) -> Tensor:
        return self.div_(other)

    def _as_data(self, value: Any) -> Any:
        """``value`` as something this tensor's array accepts (on its device)."""
        if isinstance(value, Tensor):
            return value.to(self.device).array
        if isinstance(value, np.ndarray) and self.device.type != "cpu":
            return self.device.backend.asarray(value, self.device)
        return value

    def __setitem__(self, index: Any, value: Any) -> None:
        from .ops.shape import IndexPut, raw_index

        if self._records(value):
            value = value if isinstance(value, Tensor) else Tensor(value, dtype=self.dtype)
            before = self._history(copy=False)
            self._rebase(IndexPut.apply(before, value.to(self.device), index=raw_index(index)))
            return
        self._check_inplace()
        value = self._as_data(value)
        with self.device.guard():
            self.array[raw_index(index)] = value

    def copy_(self, src: Tensor | Any) -> Tensor:
        """Copy ``src``'s values into this tensor, in place (recorded in the graph when
        ``src`` requires grad, as :meth:`add_`).

        As in PyTorch, ``src`` may be on another device (it is copied across, the one
        in-place op that moves data); ``add_`` and ``mul_`` refuse another device.
        """
        if self._records(src):
            self._history(copy=False)  # the checks only: the old values are not needed
            moved = src.to(self.device, dtype=self.dtype)
            if moved.shape != self.shape:
                moved = moved.expand(self.shape)
            return self._rebase(moved.clone())  # a node of its own, whose gradient is grad
        self._check_inplace()
        value = self._as_data(src)
        with self.device.guard():
            self.array[...] = value
        return self


def _add_into(array: Any, value: Any) -> Any:
    array += value
    return array


def _sub_into(array: Any, value: Any) -> Any:
    array -= value
    return array


def _mul_into(array: Any, value: Any) -> Any:
    array *= value
    return array


def _div_into(array: Any, value: Any) -> Any:
    array /= value
    return array


class ToDevice(Function):
    """The graph node of :meth:`Tensor.to` across devices: gradients travel back."""

    saves_inputs = False

    def backward(self, grad_output: Tensor) -> Tensor:
        """The gradient, moved back to the device the input came from."""
        return grad_output.to(self.device)


autograd._bind_tensor_factory(Tensor._make)

from .ops import elementwise as _E  # noqa: E402  (the ops need Tensor defined first)
from .ops import matmul as _M  # noqa: E402
from .ops import reduce as _R  # noqa: E402
from .ops import shape as _S  # noqa: E402
