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
from .legacy_constructor import legacy_arguments
from .tensor_data import TensorData

if TYPE_CHECKING:
    from ..ops.tensor_methods import TensorMethods
else:  # installed by minitorch_accel.ops.tensor_methods.install_tensor_methods(Tensor)
    TensorMethods = object


class Tensor(TensorData, TensorMethods):
    """An n-dimensional array on a device, with optional gradient tracking.

    Make tensors with :func:`~minitorch_accel.tensor` (which infers the dtype from the
    data and takes ``dtype=`` and ``requires_grad=``), :func:`~minitorch_accel.zeros`,
    :func:`~minitorch_accel.empty` and the other factories. Calling ``Tensor(...)``
    itself follows PyTorch's legacy ``torch.Tensor`` constructor (see
    :mod:`~minitorch_accel.core.legacy_constructor`):

    - ``Tensor()``: an empty tensor of the default dtype, shape ``(0,)``;
    - ``Tensor(*sizes)``, ``Tensor(Size)``, ``Tensor(size=sizes)``: a tensor of that
      shape and the default dtype. PyTorch leaves its memory uninitialized; here it
      holds zeros (never rely on either);
    - ``Tensor(sequence)``: the values (Python numbers, nested lists, one-element
      tensors), always as the default dtype (:func:`~minitorch_accel.get_default_dtype`),
      so ``Tensor([[3]])`` is float32, where ``tensor([[3]])`` is int64;
    - ``Tensor(ndarray)`` (NumPy or CuPy): the values as the default dtype, sharing the
      array's memory when it already has that dtype (as PyTorch). PyTorch refuses
      negative strides; here they work;
    - ``Tensor(tensor)``: an alias of ``tensor`` (the same storage, dtype, device and
      version counter; recorded by autograd, so gradients flow back to ``tensor``).

    Each form but the last takes ``device=`` (PyTorch's takes only CPU devices, this one
    any device). ``dtype=``, ``requires_grad=`` and ``Tensor(tensor, device=...)`` are
    refused, as in PyTorch: use :func:`~minitorch_accel.tensor`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> x = mta.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> (x * x).sum().backward()
    >>> x.grad
    tensor([2., 4., 6.])
    >>> mta.Tensor([[3]]).dtype, mta.tensor([[3]]).dtype
    (dtype('float32'), dtype('int64'))
    >>> mta.Tensor(2, 3).shape
    (2, 3)
    """

    __slots__ = ()

    def __init__(self, *args: Any, device: DeviceLike | None = None, **kwargs: Any) -> None:
        made = legacy_arguments(args, kwargs, device)
        if isinstance(made, Tensor):  # Tensor(tensor): an alias, recorded as PyTorch's
            from .function import Alias  # function.py imports this module: import on use

            alias = Alias.apply(made)
            dev, array, node = alias.device, alias.array, alias._node
            requires_grad = alias.requires_grad or made.requires_grad  # also under no_grad
            counter = alias._version_counter
        else:
            dev, array = made
            node, requires_grad, counter = None, False, versions.UNWRITTEN
            if _memory.enabled:
                _memory.record_tensor(array, dev, None)
        self.array = array
        self.device = dev
        self.grad = None
        self._node = node
        self._version_counter = counter
        self._hooks = None
        self.requires_grad = requires_grad

    @classmethod
    def _from_data(
        cls,
        data: Any,
        dtype: DTypeLike = None,
        device: DeviceLike | None = None,
        requires_grad: bool = False,
    ) -> Tensor:
        """A tensor on ``data`` as the package's own code needs it, where the public
        constructor follows PyTorch's legacy ``torch.Tensor``.

        A NumPy or CuPy array keeps its dtype and memory (converted or copied only if
        ``dtype`` or ``device`` asks); Python data takes the dtype that
        :func:`~minitorch_accel.tensor` infers; a Tensor is read through ``detach()``
        (the same storage and version counter when nothing changes). Always a plain
        ``Tensor``, outside the graph unless ``requires_grad``.

        Examples
        --------
        >>> import numpy as np
        >>> t = Tensor._from_data(np.arange(3))
        >>> t.dtype, Tensor._from_data([1, 2.5]).dtype
        (dtype('int64'), dtype('float32'))
        """
        source = data if isinstance(data, Tensor) else None
        if source is not None:
            device = source.device if device is None else device
            data = source.detach().to(device, dtype=dtype).array
        dev, array = to_array(data, dtype, device)
        out = Tensor._make(array, dev, False, None)
        if source is not None and array is source.array:  # the same storage: one counter
            out._version_counter = versions.version_counter(source)
        if requires_grad:
            out.requires_grad_(True)
        return out

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
        self._check_no_overlap()  # an expand() result: elements share memory
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

    def copy_(self, src: Tensor | Any, non_blocking: bool = False) -> Tensor:
        """Copy ``src``'s values into this tensor, in place; ``src`` broadcasts to this
        tensor's shape and is cast to its dtype.

        As in PyTorch, ``src`` may be on another device (it is copied across, the one
        in-place op that moves data; ``non_blocking`` as in :meth:`to`); ``add_`` and
        ``mul_`` refuse another device. Autograd records the copy when this tensor or
        ``src`` requires grad: the result requires grad, ``src`` gets the gradient
        (summed over broadcast dims, in its own dtype and device) and this tensor's
        former history a zero one, as PyTorch's ``CopyBackwards``. An integer tensor
        holds no gradient: a copy into it is never recorded.

        Examples
        --------
        >>> import minitorch_accel as mta
        >>> a = mta.ones(3, requires_grad=True)
        >>> x = (a * 2).copy_(mta.tensor([5.0, 6.0, 7.0]))
        >>> x.requires_grad, x.grad_fn is not None
        (True, True)
        >>> x.sum().backward()
        >>> a.grad
        tensor([0., 0., 0.])
        """
        if self._records(src) and self.dtype.kind == "f":
            from .function import Copy  # function.py imports this module: import on use

            history = self._history(copy=False)  # refuses a leaf that requires grad
            if not isinstance(src, Tensor):
                src = Tensor._from_data(src, dtype=self.dtype, device=self.device)
            moved = src.to(self.device, dtype=self.dtype, non_blocking=non_blocking)
            if moved.shape != self.shape:
                moved = moved.expand(self.shape)
            return self._rebase(Copy.apply(history, moved))
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
