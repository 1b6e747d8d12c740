"""The Tensor: a backend array, the device it lives on, and its place in the graph.

Operators and methods delegate to the functions of :mod:`minitorch_accel.ops`; this file
holds what a tensor *is* (data, device, dtype, gradient, graph edge), how tensors are
made, and how they move between devices.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from . import autograd
from .autograd import Function, is_grad_enabled, run_backward
from .backends import Device, DeviceLike
from .convert import DTypeLike, as_dtype, move_array, to_array

if TYPE_CHECKING:
    from .backends import Backend

HOST = Device("cpu")


class Tensor:
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

    __slots__ = ("data", "grad", "requires_grad", "device", "_node", "__weakref__")
    __array_priority__ = 1000  # so that ndarray + Tensor defers to Tensor.__radd__

    data: Any
    grad: Tensor | None
    requires_grad: bool
    device: Device
    _node: Function | None

    def __init__(
        self,
        data: Any,
        dtype: DTypeLike = None,
        device: DeviceLike | None = None,
        requires_grad: bool = False,
    ) -> None:
        if isinstance(data, Tensor):
            device = data.device if device is None else device
            data = data.detach().to(device, dtype=dtype).data
        dev, array = to_array(data, dtype, device)
        self.data = array
        self.device = dev
        self.grad = None
        self._node = None
        self.requires_grad = False
        if requires_grad:
            self.requires_grad_(True)

    @classmethod
    def _make(cls, data: Any, device: Device, requires_grad: bool, node: Function | None) -> Tensor:
        """Wrap a backend array without any checks (the hot path of every op)."""
        t = object.__new__(cls)
        t.data = data
        t.device = device
        t.requires_grad = requires_grad
        t.grad = None
        t._node = node
        return t

    # ---------------------------------------------------------------- properties
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

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
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

    def __iter__(self) -> Iterator[Tensor]:
        for i in range(len(self)):
            yield self[i]

    __hash__ = object.__hash__

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
        ``non_blocking=True`` lets a GPU copy overlap with other work.
        """
        out = self
        if dtype is not None and as_dtype(dtype) != self.dtype:
            from .ops.elementwise import Cast

            out = Cast.apply(out, dtype=as_dtype(dtype))
        if device is not None:
            dst = Device(device)
            if dst is not out.device:
                data = move_array(out.data, out.device, dst, non_blocking)
                if out.requires_grad and is_grad_enabled():
                    node = ToDevice.__new__(ToDevice)
                    node.device, node.xp = out.device, out.xp
                    node.inputs, node.needs_input_grad = (out,), (True,)
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
            self, stream=stream, max_version=max_version, dl_device=dl_device, copy=copy
        )

    def __dlpack_device__(self) -> tuple[int, int]:
        """The DLPack device type and index of the data."""
        from .dlpack import dlpack_device

        return dlpack_device(self)

    # ---------------------------------------------------------------- autograd
    def detach(self) -> Tensor:
        """The same data, cut off from the graph (shares memory)."""
        return Tensor._make(self.data, self.device, False, None)

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

    def max(self, dim: int | None = None, keepdim: bool = False) -> Tensor:
        """See :func:`minitorch_accel.max`."""
        return _R.max(self, dim, keepdim)

    def min(self, dim: int | None = None, keepdim: bool = False) -> Tensor:
        """See :func:`minitorch_accel.min`."""
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
        return bool(self.xp.any(self.data))

    def all(self) -> bool:
        """True if every element is non-zero."""
        return bool(self.xp.all(self.data))

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

    # ---------------------------------------------------------------- in place
    def _check_inplace(self) -> None:
        if self.requires_grad and is_grad_enabled():
            raise RuntimeError(
                "in-place update of a tensor that requires grad: wrap it in "
                "`with minitorch_accel.no_grad():` (as optimizers do)"
            )

    def __setitem__(self, index: Any, value: Any) -> None:
        from .ops.shape import raw_index

        self._check_inplace()
        self.data[raw_index(index)] = self._as_data(value)

    def copy_(self, src: Tensor | Any) -> Tensor:
        """Copy ``src``'s values into this tensor, in place (under ``no_grad``)."""
        self._check_inplace()
        self.data[...] = self._as_data(src)
        return self

    def _as_data(self, value: Any) -> Any:
        """``value`` as something this tensor's array accepts (on its device)."""
        if isinstance(value, Tensor):
            return value.to(self.device).data
        if isinstance(value, np.ndarray) and self.device.type != "cpu":
            return self.device.backend.asarray(value, self.device)
        return value

    def fill_(self, value: builtins.float) -> Tensor:
        """Set every element to ``value``, in place."""
        self._check_inplace()
        self.data.fill(value)
        return self

    def zero_(self) -> Tensor:
        """Set every element to zero, in place."""
        return self.fill_(0)

    def add_(self, other: Tensor | builtins.float, alpha: builtins.float = 1.0) -> Tensor:
        """``self += alpha * other``, in place."""
        self._check_inplace()
        values = other.data if isinstance(other, Tensor) else other
        self.data += values if alpha == 1.0 else alpha * values
        return self

    def mul_(self, other: Tensor | builtins.float) -> Tensor:
        """``self *= other``, in place."""
        self._check_inplace()
        self.data *= other.data if isinstance(other, Tensor) else other
        return self


class ToDevice(Function):
    """The graph node of :meth:`Tensor.to` across devices: gradients travel back."""

    def backward(self, grad_output: Tensor) -> Tensor:
        return grad_output.to(self.device)


autograd._bind_tensor_factory(Tensor._make)

from .ops import elementwise as _E  # noqa: E402  (the ops need Tensor defined first)
from .ops import matmul as _M  # noqa: E402
from .ops import reduce as _R  # noqa: E402
from .ops import shape as _S  # noqa: E402
