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


class Tensor(TensorData):
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
        if isinstance(data, Tensor):
            device = data.device if device is None else device
            data = data.detach().to(device, dtype=dtype).data
        dev, array = to_array(data, dtype, device)
        if _memory.enabled:
            _memory.record_tensor(array, dev, None)
        self.data = array
        self.device = dev
        self.grad = None
        self._node = None
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
        with self.device.guard():
            return bool(self.xp.any(self.data))

    def all(self) -> bool:
        """True if every element is non-zero."""
        with self.device.guard():
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

    # ---------------------------------------------------------------- in place (graph-aware)
    def _as_data(self, value: Any) -> Any:
        """``value`` as something this tensor's array accepts (on its device)."""
        if isinstance(value, Tensor):
            return value.to(self.device).data
        if isinstance(value, np.ndarray) and self.device.type != "cpu":
            return self.device.backend.asarray(value, self.device)
        return value

    def __setitem__(self, index: Any, value: Any) -> None:
        from .ops.shape import raw_index

        self._check_inplace()
        value = self._as_data(value)
        with self.device.guard():
            self.data[raw_index(index)] = value

    def copy_(self, src: Tensor | Any) -> Tensor:
        """Copy ``src``'s values into this tensor, in place (under ``no_grad``)."""
        self._check_inplace()
        value = self._as_data(src)
        with self.device.guard():
            self.data[...] = value
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
