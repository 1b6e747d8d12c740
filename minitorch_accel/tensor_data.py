"""What a tensor holds and how to read it back: the storage half of :class:`Tensor`.

:mod:`minitorch_accel.tensor` builds the Tensor (with its operators and math) on top
of :class:`TensorData`; nothing here knows about any op.
"""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Any, TypeVar, cast

import numpy as np

from . import autograd
from .autograd import Function, is_grad_enabled
from .backends import Device
from .backends.memory_tracker import tracker as _memory
from .convert import HOST

if TYPE_CHECKING:
    from .backends import Backend
    from .tensor import Tensor

_T = TypeVar("_T", bound="TensorData")


class TensorData:
    """What a tensor holds: its array, device, gradient and graph edge, and the ways to
    read them back (to NumPy, to Python, DLPack) or change them in place.

    :class:`~minitorch_accel.tensor.Tensor` adds the math; this base class knows no op.
    """

    __slots__ = ("data", "grad", "requires_grad", "device", "_node", "__weakref__")
    __array_priority__ = 1000  # so that ndarray + Tensor defers to Tensor.__radd__

    data: Any
    grad: Tensor | None
    requires_grad: bool
    device: Device
    _node: Function | None

    @classmethod
    def _make(
        cls: type[_T], data: Any, device: Device, requires_grad: bool, node: Function | None
    ) -> _T:
        """Wrap a backend array without any checks (the hot path of every op)."""
        if _memory.enabled:  # count its bytes (and those ``node`` saved); may raise OOM
            _memory.record_tensor(data, device, node)
        t = object.__new__(cls)
        t.data = data
        t.device = device
        t.requires_grad = requires_grad
        t.grad = None
        t._node = node
        return t

    # ---------------------------------------------------------------- properties
    @property
    def array(self) -> Any:
        """The backend array itself (a NumPy or CuPy array).

        Writes through it bypass autograd. Use it where code needs the raw array.

        Examples
        --------
        >>> import minitorch_accel as mta
        >>> type(mta.tensor([1.0, 2.0]).array).__name__
        'ndarray'
        """
        return self.data

    @array.setter
    def array(self, value: Any) -> None:
        self.data = value

    @property
    def shape(self) -> tuple[int, ...]:
        """The size of each dimension."""
        return tuple(self.data.shape)

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return int(self.data.ndim)

    @property
    def dtype(self) -> np.dtype[Any]:
        """The element type (a NumPy dtype, also for CuPy tensors)."""
        return self.data.dtype  # type: ignore[no-any-return]

    @property
    def size(self) -> int:
        """The number of elements (also :meth:`numel`)."""
        return int(self.data.size)

    def numel(self) -> int:
        """The number of elements."""
        return int(self.data.size)

    @property
    def nbytes(self) -> int:
        """Bytes held by the elements."""
        return int(self.data.nbytes)

    @property
    def grad_fn(self) -> Function | None:
        """The op that produced this tensor, or None for a leaf."""
        return self._node

    @property
    def is_leaf(self) -> bool:
        """True if the tensor was not produced by a recorded op."""
        return self._node is None

    @property
    def backend(self) -> Backend:
        """The backend of this tensor's device."""
        return self.device.backend

    @property
    def xp(self) -> Any:
        """The array module of this tensor (``numpy`` or ``cupy``)."""
        return self.device.backend.xp

    def requires_grad_(self: _T, requires_grad: bool = True) -> _T:
        """Set :attr:`requires_grad` in place and return self."""
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
        return self.device.backend.to_host(self.data)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        array = self.device.backend.to_host(self.data)
        return array if dtype is None else array.astype(dtype, copy=False)

    def item(self) -> Any:
        """The value of a one-element tensor as a Python number."""
        if self.size != 1:
            raise ValueError(
                f"item() needs a tensor with one element, this one has shape {self.shape}"
            )
        return self.device.backend.to_host(self.data).reshape(()).item()

    def tolist(self) -> Any:
        """The values as (nested) Python lists."""
        return self.device.backend.to_host(self.data).tolist()

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __bool__(self) -> bool:
        if self.size != 1:
            raise RuntimeError(
                f"the truth value of a tensor with shape {self.shape} is ambiguous; use "
                ".any() or .all()"
            )
        return bool(self.item())

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return int(self.data.shape[0])

    def __repr__(self) -> str:
        values = np.array2string(
            self.device.backend.to_host(self.data),
            separator=", ",
            prefix="tensor(",
            precision=4,
            threshold=200,
        )
        extras = []
        if self.device is not HOST:
            extras.append(f"device='{self.device}'")
        if self.dtype not in (np.float32, np.int64, np.bool_) or self.size == 0:
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
        PyTorch); see :mod:`minitorch_accel.dlpack`."""
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
        """The same data, cut off from the graph (shares memory)."""
        return autograd._make_tensor(self.data, self.device, False, None)

    # ---------------------------------------------------------------- in place
    def _check_inplace(self) -> None:
        if self.requires_grad and is_grad_enabled():
            raise RuntimeError(
                "in-place update of a tensor that requires grad: wrap it in "
                "`with minitorch_accel.no_grad():` (as optimizers do)"
            )

    def fill_(self: _T, value: builtins.float) -> _T:
        """Set every element to ``value``, in place."""
        self._check_inplace()
        with self.device.guard():
            self.data.fill(value)
        return self

    def zero_(self: _T) -> _T:
        """Set every element to zero, in place."""
        return self.fill_(0)

    def add_(self: _T, other: TensorData | builtins.float, alpha: builtins.float = 1.0) -> _T:
        """``self += alpha * other``, in place."""
        self._check_inplace()
        values = other.data if isinstance(other, TensorData) else other
        with self.device.guard():
            self.data += values if alpha == 1.0 else alpha * values
        return self

    def mul_(self: _T, other: TensorData | builtins.float) -> _T:
        """``self *= other``, in place."""
        self._check_inplace()
        with self.device.guard():
            self.data *= other.data if isinstance(other, TensorData) else other
        return self
