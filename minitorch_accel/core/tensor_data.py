"""What a tensor holds and how to read it back: the storage half of :class:`Tensor`.

:mod:`minitorch_accel.core.tensor` builds the Tensor (with its operators and math) on top
of :class:`TensorData`; nothing here knows about any op.
"""

from __future__ import annotations

import builtins
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, cast, overload

import numpy as np

from ..backends import Device
from ..backends.memory_tracker import tracker as _memory
from .convert import HOST
from .grad_mode import is_grad_enabled
from .printoptions import format_values
from .size import Size
from .versions import UNWRITTEN, RemovableHandle, VersionCounter, bump_version, version_counter

if TYPE_CHECKING:
    from ..backends import Backend
    from .function import Function
    from .tensor import Tensor

_T = TypeVar("_T", bound="TensorData")


def _plain_tensor(array: Any, device: Device) -> Tensor:
    """A Tensor (never a Parameter) on ``array``, outside the graph."""
    from .tensor import Tensor  # tensor.py builds on this module: import on use

    return Tensor._make(array, device, False, None)


class TensorData:
    """What a tensor holds: its array, device, gradient and graph edge, and the ways to
    read them back (to NumPy, to Python, DLPack) or change them in place.

    :class:`~minitorch_accel.core.tensor.Tensor` adds the math; this base class knows no op.
    """

    __slots__ = (
        "array",
        "grad",
        "requires_grad",
        "device",
        "_node",
        "_version_counter",
        "_hooks",
        "__weakref__",
    )
    __array_priority__ = 1000  # so that ndarray + Tensor defers to Tensor.__radd__

    array: Any
    """The backend array itself (a NumPy or CuPy array); writes through it bypass autograd."""
    grad: Tensor | None
    requires_grad: bool
    device: Device
    _node: Function | None
    _version_counter: VersionCounter  # shared with views and detach(), not .data
    _hooks: list[Callable[[Tensor], Tensor | None]] | None  # a leaf's register_hook()s

    @classmethod
    def _make(
        cls: type[_T], data: Any, device: Device, requires_grad: bool, node: Function | None
    ) -> _T:
        """Wrap a backend array without any checks (the hot path of every op)."""
        if isinstance(data, np.generic):  # NumPy's 0-d results are scalars, with no
            data = np.asarray(data)  # memory to write in place or to share with views
        if _memory.enabled:  # count its bytes (and those ``node`` saved); may raise OOM
            _memory.record_tensor(data, device, node)
        t = object.__new__(cls)
        t.array = data
        t.device = device
        t.requires_grad = requires_grad
        t.grad = None
        t._node = node
        t._version_counter = UNWRITTEN
        t._hooks = None
        return t

    # ---------------------------------------------------------------- properties
    @property
    def data(self) -> Tensor:
        """This tensor's values as a new leaf Tensor that shares the storage, cut off from
        the graph (PyTorch's ``.data``).

        Writes through ``.data`` change this tensor's values but are invisible to
        autograd: ``.data`` has a version counter of its own, so backward cannot notice
        them (prefer :meth:`detach`, which shares the counter). For the raw NumPy or
        CuPy array use :attr:`array`. Assigning a Tensor to ``.data`` makes this tensor
        hold that tensor's array (any shape or dtype).

        Examples
        --------
        >>> import minitorch_accel as mta
        >>> w = mta.tensor([1.0, 2.0], requires_grad=True)
        >>> d = w.data
        >>> d.requires_grad, d.is_leaf
        (False, True)
        >>> d.mul_(10)
        tensor([10., 20.])
        >>> w
        tensor([10., 20.], requires_grad=True)
        """
        return _plain_tensor(self.array, self.device)

    @data.setter
    def data(self, value: TensorData) -> None:
        if not isinstance(value, TensorData):
            raise TypeError(
                f"can only assign a Tensor to .data, got {type(value).__name__}; to replace "
                "the raw backend array assign to .array"
            )
        self.array = value.array
        self.device = value.device

    @property
    def shape(self) -> Size:
        """The size of each dimension (a :class:`~minitorch_accel.core.size.Size`, a tuple)."""
        return Size(self.array.shape)

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return int(self.array.ndim)

    @property
    def dtype(self) -> np.dtype[Any]:
        """The element type (a NumPy dtype, also for CuPy tensors)."""
        return self.array.dtype  # type: ignore[no-any-return]

    @overload
    def size(self, dim: None = None) -> Size: ...

    @overload
    def size(self, dim: int) -> int: ...

    def size(self, dim: int | None = None) -> Size | int:
        """The shape (a :class:`~minitorch_accel.core.size.Size`), or the size of ``dim``.

        Examples
        --------
        >>> import minitorch_accel as mta
        >>> x = mta.zeros(2, 3)
        >>> x.size(), x.size(1), x.size(-2)
        ((2, 3), 3, 2)
        """
        shape = self.array.shape
        if dim is None:
            return Size(shape)
        n = len(shape)
        if not -n <= dim < n:
            raise IndexError(
                f"size: dim {dim} is out of range for a tensor with {n} dimension(s) "
                f"(expected {-n}..{n - 1})"
            )
        return int(shape[dim])

    def dim(self) -> int:
        """The number of dimensions (as :attr:`ndim`)."""
        return int(self.array.ndim)

    def ndimension(self) -> int:
        """The number of dimensions (as :attr:`ndim`)."""
        return int(self.array.ndim)

    def numel(self) -> int:
        """The number of elements."""
        return int(self.array.size)

    def nelement(self) -> int:
        """The number of elements (as :meth:`numel`)."""
        return int(self.array.size)

    def element_size(self) -> int:
        """Bytes per element."""
        return int(self.array.itemsize)

    @property
    def nbytes(self) -> int:
        """Bytes held by the elements."""
        return int(self.array.nbytes)

    @property
    def grad_fn(self) -> Function | None:
        """The op that produced this tensor, or None for a leaf."""
        return self._node

    @property
    def is_leaf(self) -> bool:
        """True if the tensor was not produced by a recorded op: it requires no grad,
        or it requires grad and was made by the user (its gradient lands in ``.grad``).

        Examples
        --------
        >>> import minitorch_accel as mta
        >>> w = mta.ones(2, requires_grad=True)
        >>> w.is_leaf, (w * 2).is_leaf
        (True, False)
        """
        return self._node is None

    @property
    def _version(self) -> int:
        """How many times this tensor's storage was modified in place (PyTorch's
        ``_version``): shared with its views and :meth:`detach`, not with ``.data``.
        """
        return self._version_counter.value

    def register_hook(self, hook: Callable[[Tensor], Tensor | None]) -> RemovableHandle:
        """Call ``hook(grad)`` each time backward computes this tensor's gradient.

        The hook sees the gradient summed over every use of the tensor; if it returns a
        Tensor, that replaces the gradient (for the ``.grad`` of a leaf and for what
        flows further back). Returns a handle whose ``remove()`` takes the hook away.

        Examples
        --------
        >>> import minitorch_accel as mta
        >>> x = mta.tensor([1.0, 2.0], requires_grad=True)
        >>> handle = x.register_hook(lambda g: g * 10)
        >>> (x * x).sum().backward()
        >>> x.grad
        tensor([20., 40.])
        """
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._node is None:
            self._hooks = [*(self._hooks or ()), hook]
            owner: Any = self
            attribute = "_hooks"
        else:
            self._node._register_tensor_hook(hook)
            owner, attribute = self._node, "tensor_hooks"

        def remove() -> None:
            hooks = getattr(owner, attribute, None) or []
            setattr(owner, attribute, [h for h in hooks if h is not hook] or None)

        return RemovableHandle(remove)

    def retain_grad(self) -> None:
        """Keep this non-leaf tensor's gradient in ``.grad`` after backward (leaves
        keep theirs anyway). It accumulates over backward calls, like a leaf's.

        Examples
        --------
        >>> import minitorch_accel as mta
        >>> x = mta.tensor([1.0, 2.0], requires_grad=True)
        >>> y = x * 3
        >>> y.retain_grad()
        >>> (y * y).sum().backward()
        >>> y.grad
        tensor([ 6., 12.])
        """
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on a tensor that has requires_grad=False")
        if self._node is not None:
            self._node.retained_output = weakref.ref(cast("Tensor", self))

    @property
    def retains_grad(self) -> bool:
        """True for a non-leaf tensor whose gradient :meth:`retain_grad` keeps."""
        node = self._node
        return (
            node is not None
            and node.retained_output is not None
            and (node.retained_output() is self)
        )

    @property
    def backend(self) -> Backend:
        """The backend of this tensor's device."""
        return self.device.backend

    @property
    def xp(self) -> Any:
        """The array module of this tensor (``numpy`` or ``cupy``)."""
        return self.device.backend.xp

    @property
    def is_cpu(self) -> bool:
        """True if the tensor lives on a CPU device (``"cpu"`` or a virtual ``"cpu:N"``).

        Examples
        --------
        >>> import minitorch_accel as mta
        >>> x = mta.zeros(2, device="cpu:1")
        >>> x.is_cpu, x.is_cuda, x.is_xpu
        (True, False, False)
        """
        return self.backend.name == "cpu"  # the backend's name is the device type's

    @property
    def is_cuda(self) -> bool:
        """True if the tensor lives on a CUDA GPU (a ``"cuda"`` or ``"cuda:N"`` device).

        Examples
        --------
        >>> import minitorch_accel as mta
        >>> mta.ones(3).is_cuda
        False
        """
        return self.backend.name == "cuda"

    @property
    def is_xpu(self) -> bool:
        """True if the tensor lives on an Intel XPU: never here, there is no XPU backend
        (PyTorch scripts test it beside :attr:`is_cuda`).

        Examples
        --------
        >>> import minitorch_accel as mta
        >>> mta.ones(3).is_xpu
        False
        """
        return self.backend.name == "xpu"

    def requires_grad_(self: _T, requires_grad: bool = True) -> _T:
        """Set :attr:`requires_grad` in place and return self.

        Examples
        --------
        >>> import minitorch_accel as mta
        >>> mta.zeros(2).requires_grad_().requires_grad
        True
        """
        if requires_grad and self.dtype.kind != "f":
            raise RuntimeError(
                f"only floating-point tensors can require gradients, this one is {self.dtype}"
                "; convert it first, e.g. x.float()"
            )
        if not requires_grad and self._node is not None:
            raise RuntimeError("requires_grad can only be turned off on leaf tensors; use detach()")
        self.requires_grad = bool(requires_grad)
        return self

    # ---------------------------------------------------------------- conversion
    def numpy(self) -> np.ndarray:
        """The values as a NumPy array (a copy from the GPU; shares memory on the CPU)."""
        if self.requires_grad:
            raise RuntimeError(
                "can't call numpy() on a tensor that requires grad; use .detach().numpy()"
            )
        return self.device.backend.to_host(self.array)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        array = self.device.backend.to_host(self.array)
        return array if dtype is None else array.astype(dtype, copy=False)

    def item(self) -> Any:
        """The value of a one-element tensor as a Python number."""
        if self.numel() != 1:
            raise ValueError(
                f"item() needs a tensor with one element, this one has shape {self.shape}"
            )
        return self.device.backend.to_host(self.array).reshape(()).item()

    def tolist(self) -> Any:
        """The values as (nested) Python lists."""
        return self.device.backend.to_host(self.array).tolist()

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        """A one-element integer (or bool) tensor as a Python index, as in PyTorch.

        Examples
        --------
        >>> import minitorch_accel as mta
        >>> ["a", "b", "c"][mta.tensor([0.1, 0.9, 0.3]).argmax()]
        'b'
        """
        if self.numel() != 1 or self.dtype.kind not in "iub":
            raise TypeError(
                "only integer tensors of a single element can be converted to an index; "
                f"this one has dtype {self.dtype} and shape {self.shape}"
            )
        return int(self.item())

    def __bool__(self) -> bool:
        if self.numel() != 1:
            raise RuntimeError(
                f"the truth value of a tensor with shape {self.shape} is ambiguous; use "
                ".any() or .all()"
            )
        return bool(self.item())

    def __format__(self, format_spec: str) -> str:
        """A 0-d tensor formats as its Python number (``f"{loss:.4f}"``), as in PyTorch;
        other tensors accept only the empty spec (their ``str``).

        Examples
        --------
        >>> import minitorch_accel as mta
        >>> "{:+.2f} x".format(mta.tensor([1.5, -2.0]).view(-1)[1])
        '-2.00 x'
        """
        if self.ndim == 0:
            return format(self.item(), format_spec)
        return object.__format__(self, format_spec)

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return int(self.array.shape[0])

    def __repr__(self) -> str:
        values = format_values(self.device.backend.to_host(self.array), "tensor(")
        extras = []
        if self.device is not HOST:
            extras.append(f"device='{self.device}'")
        if self.dtype not in (np.float32, np.int64, np.bool_) or self.numel() == 0:
            extras.append(f"dtype={self.dtype}")
        if self._node is not None:
            extras.append(f"grad_fn={self._node!r}")
        elif self.requires_grad:
            extras.append("requires_grad=True")
        return "tensor(" + ", ".join([values, *extras]) + ")"

    # ---------------------------------------------------------------- DLPack
    def __dlpack__(
        self,
        *,
        stream: Any = None,
        max_version: tuple[int, int] | None = None,
        dl_device: Any = None,
        copy: bool | None = None,
    ) -> Any:
        """Export the data as a DLPack capsule (zero-copy exchange with NumPy, CuPy,
        PyTorch); see :mod:`minitorch_accel.dlpack`.
        """
        from .dlpack import export_capsule

        return export_capsule(
            cast("Tensor", self),
            stream=stream,
            max_version=max_version,
            dl_device=dl_device,
            copy=copy,
        )

    def __dlpack_device__(self) -> tuple[int, int]:
        """The DLPack device type and index of the data."""
        from .dlpack import dlpack_device

        return dlpack_device(cast("Tensor", self))

    # ---------------------------------------------------------------- autograd
    def detach(self) -> Tensor:
        """The same data, cut off from the graph: shares the memory and the version
        counter, so in-place changes to it are still seen by backward.
        """
        out = _plain_tensor(self.array, self.device)
        out._version_counter = version_counter(cast("Tensor", self))
        return out

    # ---------------------------------------------------------------- in place
    def _check_inplace(self) -> None:
        """Call before every in-place write that is not recorded in the graph: refuse it
        where autograd needs the graph or where elements share memory
        (:meth:`_check_no_overlap`), else bump the version counter, so that backward
        notices that saved values changed.
        """
        self._check_no_overlap()
        if self.requires_grad and is_grad_enabled():
            if self._node is None:
                raise RuntimeError(
                    "a leaf Variable that requires grad is being used in an in-place "
                    "operation. Wrap the update in `with minitorch_accel.no_grad():` (as "
                    "optimizers do)"
                )
            raise RuntimeError(
                "this in-place operation cannot be recorded in the graph of a tensor that "
                "requires grad; use its out-of-place form (y = y.op(...)), or one of the "
                "recorded ones: +=, -=, *=, /=, add_, sub_, mul_, div_, copy_, y[i] = v"
            )
        bump_version(cast("Tensor", self))

    def _check_no_overlap(self) -> None:
        """Refuse, with PyTorch's RuntimeError, an in-place write (``add_``, ``x[i] = v``,
        ``copy_``, ...) into a tensor of which several elements are one memory location:
        an :meth:`expand` result (a dim of stride 0). NumPy's error would be a
        ValueError about a read-only array; ``clone()`` first gives each element its own.
        """
        array = self.array
        strides = getattr(array, "strides", ())
        if any(s == 0 and n > 1 for s, n in zip(strides, array.shape, strict=False)):
            raise RuntimeError(
                "unsupported operation: more than one element of the written-to tensor "
                "refers to a single memory location. Please clone() the tensor before "
                "performing the operation."
            )

    def fill_(self: _T, value: builtins.float) -> _T:
        """Set every element to ``value``, in place."""
        self._check_inplace()
        with self.device.guard():
            self.array.fill(value)
        return self

    def zero_(self: _T) -> _T:
        """Set every element to zero, in place."""
        return self.fill_(0)

    def _check_same_device(self, other: Any, name: str) -> None:
        """Refuse an in-place ``name`` with an operand on another device."""
        if isinstance(other, TensorData) and other.device != self.device:
            raise RuntimeError(
                f"{name}: expected all tensors on the same device, got {self.device} and "
                f"{other.device}; move them with .to(device) first"
            )
