"""The Tensor: a backend array, the device it lives on, and its place in the graph.

What a tensor holds, and reading it back, is :class:`~minitorch_accel.core.tensor_data.TensorData`;
this file adds how tensors are made, how they move between devices, backward, and the
operators and methods, which delegate to the functions of :mod:`minitorch_accel.ops`.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..backends import Device, DeviceLike
from ..backends.memory_tracker import tracker as _memory
from . import versions
from .convert import HOST, DTypeLike, as_dtype, move_array, to_array
from .grad_mode import is_grad_enabled
from .tensor_data import TensorData

if TYPE_CHECKING:
    from ..ops.tensor_methods import TensorMethods
else:  # installed by minitorch_accel.ops.tensor_methods.install_tensor_methods(Tensor)
    TensorMethods = object


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
        self._version_counter = versions.UNWRITTEN
        if source is not None and array is source.array:  # the same storage: one counter
            self._version_counter = versions.version_counter(source)
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
        """This tensor on another device and/or with another dtype.

        Returns ``self`` when nothing changes. Differentiable, except a cast to an
        integer or bool dtype, which cuts the graph as in PyTorch: its result has
        ``requires_grad=False``. Moving between two devices copies the
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
            from .function import Cast  # function.py imports this module: import on use

            target = as_dtype(dtype)
            # integers and bools carry no gradient: the cast of a tensor that requires
            # grad to one is not recorded
            source = out if target.kind == "f" or not out.requires_grad else out.detach()
            out = Cast.apply(source, dtype=target)
        if device is not None:
            dst = Device(device)
            if dst is not out.device:
                data = move_array(out.array, out.device, dst, non_blocking)
                if out.requires_grad and is_grad_enabled():
                    from .function import ToDevice  # imports this module: on use

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
        from .function import Clone  # function.py imports this module: import on use

        return Clone.apply(self)

    def backward(
        self,
        gradient: Tensor | None = None,
        retain_graph: bool | None = None,
        create_graph: bool = False,
        inputs: Tensor | Sequence[Tensor] | None = None,
    ) -> None:
        """Accumulate d(self)/d(leaf) into the ``.grad`` of every leaf that requires grad
        (or of ``inputs`` only).

        Parameters
        ----------
        gradient : Tensor, optional
            d(loss)/d(self); required unless ``self`` has one element.
        retain_graph : bool, optional
            Keep the graph so backward can run through it again (default:
            ``create_graph``). Otherwise it is freed as the walk goes.
        create_graph : bool
            Record the backward pass, so gradients can be differentiated again.
        inputs : Tensor or sequence of Tensor, optional
            Accumulate into the ``.grad`` of these tensors only (leaves or not; one
            that ``self`` does not depend on keeps its ``.grad``), as PyTorch.

        Examples
        --------
        >>> import minitorch_accel as mta
        >>> x, y = mta.ones(2, requires_grad=True), mta.ones(2, requires_grad=True)
        >>> (x * y).sum().backward(inputs=[x])
        >>> x.grad, y.grad
        (tensor([1., 1.]), None)
        """
        from .backward import _seed_gradient, backward_into, run_backward  # on use

        seed = _seed_gradient(self, gradient)
        keep = create_graph if retain_graph is None else retain_graph
        if inputs is not None:
            backward_into([self], [seed], inputs, keep, create_graph)
            return
        run_backward([self], [seed], keep, create_graph)

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
            before._version_counter = versions.version_counter(self)
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
        versions.bump_version(self)
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

    def div_(self, other: Any, *, rounding_mode: str | None = None) -> Tensor:
        """``self /= other``, in place (also ``/=``); see :meth:`add_`.

        ``rounding_mode="trunc"`` or ``"floor"`` rounds the quotient (see
        :meth:`div`); an integer tensor may then be divided in place.

        Examples
        --------
        >>> import minitorch_accel as mta
        >>> mta.tensor([7, -7]).div_(2, rounding_mode="floor")
        tensor([ 3, -4])
        """
        self._check_same_device(other, "div_")
        if rounding_mode is not None:
            if self._records(other):
                history = self._history(copy=False)
                return self._rebase(history.div(other, rounding_mode=rounding_mode))
            result = self.div(other, rounding_mode=rounding_mode)
            return self._write(_assign, result.to(self.device).array, "div_")
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
        if isinstance(value, np.ndarray) and not self.device.shares_host_memory:
            return self.device.backend.asarray(value, self.device)
        return value

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


def _assign(array: Any, value: Any) -> Any:
    if value.dtype.kind == "f" and array.dtype.kind != "f":
        raise TypeError(
            f"div_: the result is {value.dtype}, which a {array.dtype} tensor cannot hold; "
            "convert it first, e.g. x = x.float()"
        )
    array[...] = value
    return array
