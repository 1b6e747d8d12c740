"""The Tensor's operators and op methods, each a one-line call of a function of
:mod:`minitorch_accel.ops`: arithmetic, comparisons, indexing, reductions, shape helpers,
math, sorting, dtype conversions and the in-place variants.

:func:`install_tensor_methods` puts them on :class:`~minitorch_accel.Tensor`: the core
package, below the ops, defines the Tensor without them.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..core.grad_mode import is_grad_enabled
from ..core.tensor import Tensor
from . import compare as _compare
from . import elementwise as _E
from . import index as _index
from . import matmul as _M
from . import reduce as _R
from . import scan as _scan
from . import shape as _S
from . import sort as _sort
from . import split as _split
from . import unary as _unary

#: PyTorch's legacy type names, returned by :meth:`TensorMethods.type`.
_TYPE_NAMES = {
    "float32": "FloatTensor",
    "float64": "DoubleTensor",
    "float16": "HalfTensor",
    "int64": "LongTensor",
    "int32": "IntTensor",
    "int16": "ShortTensor",
    "int8": "CharTensor",
    "uint8": "ByteTensor",
    "bool": "BoolTensor",
}


class TensorMethods:
    """PyTorch Tensor methods built on :mod:`minitorch_accel.ops` (a mixin of Tensor)."""

    __slots__ = ()

    # ------------------------------------------------------------ comparisons
    def eq(self: Any, other: Any) -> Tensor:
        """``self == other`` (see :func:`minitorch_accel.eq`)."""
        return _compare.eq(self, other)

    def ne(self: Any, other: Any) -> Tensor:
        """``self != other``."""
        return _compare.ne(self, other)

    def lt(self: Any, other: Any) -> Tensor:
        """``self < other``."""
        return _compare.lt(self, other)

    def le(self: Any, other: Any) -> Tensor:
        """``self <= other``."""
        return _compare.le(self, other)

    def gt(self: Any, other: Any) -> Tensor:
        """``self > other``."""
        return _compare.gt(self, other)

    def ge(self: Any, other: Any) -> Tensor:
        """``self >= other``."""
        return _compare.ge(self, other)

    # ------------------------------------------------------------ arithmetic and math
    def add(self: Any, other: Any, alpha: builtins.float = 1) -> Tensor:
        """``self + alpha * other``."""
        return self + (other * alpha if alpha != 1 else other)  # type: ignore[no-any-return]

    def sub(self: Any, other: Any, alpha: builtins.float = 1) -> Tensor:
        """``self - alpha * other``."""
        return self - (other * alpha if alpha != 1 else other)  # type: ignore[no-any-return]

    def mul(self: Any, other: Any) -> Tensor:
        """``self * other``."""
        return self * other  # type: ignore[no-any-return]

    def div(self: Any, other: Any) -> Tensor:
        """``self / other``."""
        return self / other  # type: ignore[no-any-return]

    def pow(self: Any, exponent: Any) -> Tensor:
        """``self ** exponent`` (see :func:`minitorch_accel.pow`)."""
        return _E.pow(self, exponent)

    def rsqrt(self: Any) -> Tensor:
        """See :func:`minitorch_accel.rsqrt`."""
        return _unary.rsqrt(self)

    def log1p(self: Any) -> Tensor:
        """See :func:`minitorch_accel.log1p`."""
        return _unary.log1p(self)

    def sin(self: Any) -> Tensor:
        """See :func:`minitorch_accel.sin`."""
        return _unary.sin(self)

    def cos(self: Any) -> Tensor:
        """See :func:`minitorch_accel.cos`."""
        return _unary.cos(self)

    def tan(self: Any) -> Tensor:
        """See :func:`minitorch_accel.tan`."""
        return _unary.tan(self)

    def sign(self: Any) -> Tensor:
        """See :func:`minitorch_accel.sign`."""
        return _unary.sign(self)

    def clip(self: Any, min: Any = None, max: Any = None) -> Tensor:
        """Same as :meth:`clamp`."""
        return self.clamp(min, max)  # type: ignore[no-any-return]

    def norm(self: Any, p: Any = 2, dim: Any = None, keepdim: bool = False) -> Tensor:
        """See :func:`minitorch_accel.norm`."""
        return _scan.norm(self, p, dim, keepdim)

    def cumsum(self: Any, dim: builtins.int, dtype: Any = None) -> Tensor:
        """See :func:`minitorch_accel.cumsum`."""
        return _scan.cumsum(self, dim, dtype)

    def cumprod(self: Any, dim: builtins.int, dtype: Any = None) -> Tensor:
        """See :func:`minitorch_accel.cumprod`."""
        return _scan.cumprod(self, dim, dtype)

    # ------------------------------------------------------------ shape
    def view_as(self: Any, other: Tensor) -> Tensor:
        """This tensor reshaped to ``other``'s shape."""
        return self.reshape(other.shape)  # type: ignore[no-any-return]

    def reshape_as(self: Any, other: Tensor) -> Tensor:
        """This tensor reshaped to ``other``'s shape."""
        return self.reshape(other.shape)  # type: ignore[no-any-return]

    def expand_as(self: Any, other: Tensor) -> Tensor:
        """This tensor broadcast to ``other``'s shape."""
        return self.expand(other.shape)  # type: ignore[no-any-return]

    def repeat(self: Any, *sizes: Any) -> Tensor:
        """See :func:`minitorch_accel.ops.split.repeat`."""
        return _split.repeat(self, *sizes)

    def unflatten(self: Any, dim: builtins.int, sizes: Sequence[builtins.int]) -> Tensor:
        """See :func:`minitorch_accel.ops.split.unflatten`."""
        return _split.unflatten(self, dim, sizes)

    def split(self: Any, split_size: Any, dim: builtins.int = 0) -> tuple[Tensor, ...]:
        """See :func:`minitorch_accel.split`."""
        return _split.split(self, split_size, dim)

    def chunk(self: Any, chunks: builtins.int, dim: builtins.int = 0) -> tuple[Tensor, ...]:
        """See :func:`minitorch_accel.chunk`."""
        return _split.chunk(self, chunks, dim)

    def t(self: Any) -> Tensor:
        """The transpose of a tensor with at most 2 dims (itself for 0 or 1 dims)."""
        if self.ndim > 2:
            raise ValueError(
                f"t() expects a tensor with at most 2 dims, got shape {self.shape}; use "
                "transpose(dim0, dim1) or .mT"
            )
        return self if self.ndim < 2 else self.transpose(0, 1)  # type: ignore[no-any-return]

    @property
    def mT(self: Any) -> Tensor:
        """The last two dims swapped (a batch of matrices transposed)."""
        if self.ndim < 2:
            raise ValueError(f"mT needs at least 2 dims, got shape {self.shape}")
        return self.transpose(-2, -1)  # type: ignore[no-any-return]

    # ------------------------------------------------------------ indexing
    def gather(self: Any, dim: builtins.int, index: Tensor) -> Tensor:
        """See :func:`minitorch_accel.gather`."""
        return _index.gather(self, dim, index)

    def scatter(
        self: Any, dim: builtins.int, index: Tensor, src: Any = None, value: Any = None
    ) -> Tensor:
        """See :func:`minitorch_accel.scatter` (``src`` a tensor, or ``value`` a number)."""
        return _index.scatter(self, dim, index, value if src is None else src)

    def index_select(self: Any, dim: builtins.int, index: Tensor) -> Tensor:
        """See :func:`minitorch_accel.index_select`."""
        return _index.index_select(self, dim, index)

    def masked_fill(self: Any, mask: Tensor, value: Any) -> Tensor:
        """See :func:`minitorch_accel.masked_fill`."""
        return _index.masked_fill(self, mask, value)

    # ------------------------------------------------------------ sorting and selection
    def sort(
        self: Any,
        dim: builtins.int = -1,
        descending: builtins.bool = False,
        stable: builtins.bool = True,
    ) -> Any:
        """See :func:`minitorch_accel.sort`: named ``(values, indices)``."""
        return _sort.sort(self, dim, descending, stable)

    def argsort(
        self: Any,
        dim: builtins.int = -1,
        descending: builtins.bool = False,
        stable: builtins.bool = True,
    ) -> Tensor:
        """See :func:`minitorch_accel.argsort`."""
        return _sort.argsort(self, dim, descending, stable)

    def topk(
        self: Any,
        k: builtins.int,
        dim: builtins.int = -1,
        largest: builtins.bool = True,
        sorted: builtins.bool = True,
    ) -> Any:
        """See :func:`minitorch_accel.topk`: named ``(values, indices)``."""
        return _sort.topk(self, k, dim, largest, sorted)

    def kthvalue(
        self: Any, k: builtins.int, dim: builtins.int = -1, keepdim: builtins.bool = False
    ) -> Any:
        """See :func:`minitorch_accel.kthvalue`: named ``(values, indices)``."""
        return _sort.kthvalue(self, k, dim, keepdim)

    def median(self: Any, dim: builtins.int | None = None, keepdim: builtins.bool = False) -> Any:
        """See :func:`minitorch_accel.median`: a tensor, or ``(values, indices)`` with a dim."""
        return _sort.median(self, dim, keepdim)

    def mode(self: Any, dim: builtins.int = -1, keepdim: builtins.bool = False) -> Any:
        """See :func:`minitorch_accel.mode`: named ``(values, indices)``."""
        return _sort.mode(self, dim, keepdim)

    # ------------------------------------------------------------ dtypes
    def int(self: Any) -> Tensor:
        """This tensor as int32."""
        return self.to(dtype=np.int32)  # type: ignore[no-any-return]

    def bool(self: Any) -> Tensor:
        """This tensor as bool."""
        return self.to(dtype=np.bool_)  # type: ignore[no-any-return]

    def bfloat16(self: Any) -> Tensor:
        """Not available: NumPy and CuPy have no bfloat16 arrays; raises a TypeError
        that says what to use instead.
        """
        raise TypeError(
            "bfloat16 is not available: NumPy and CuPy have no bfloat16 type. Use .half() "
            "(float16, with minitorch_accel.amp for loss scaling) or .float()"
        )

    def type(self: Any, dtype: Any = None) -> Any:
        """Without ``dtype``, PyTorch's type name (``"minitorch_accel.FloatTensor"``);
        with one, this tensor converted to it.
        """
        if dtype is None:
            name = _TYPE_NAMES.get(str(self.dtype), f"Tensor[{self.dtype}]")
            return f"minitorch_accel.{name}"
        return self.to(dtype=dtype)

    def type_as(self: Any, other: Tensor) -> Tensor:
        """This tensor with ``other``'s dtype."""
        return self.to(dtype=other.dtype)  # type: ignore[no-any-return]

    # ------------------------------------------------------------ in place
    # Each computes the result out of place and writes it with ``copy_``, the Tensor's
    # in-place primitive, through :func:`write_in_place`, so its checks apply to every
    # in-place method. Clamp, ReLU, sigmoid and tanh keep only their output or a mask for
    # backward (``saves_input=False``); masked_fill and scatter keep their input.
    def clamp_(self: Any, min: Any = None, max: Any = None) -> Tensor:
        """Clamp in place (see :func:`minitorch_accel.clamp`)."""
        return write_in_place(self, lambda t: t.clamp(min, max), "clamp_", saves_input=False)

    def clip_(self: Any, min: Any = None, max: Any = None) -> Tensor:
        """Same as :meth:`clamp_`."""
        return write_in_place(self, lambda t: t.clamp(min, max), "clip_", saves_input=False)

    def relu_(self: Any) -> Tensor:
        """:meth:`relu` in place."""
        return write_in_place(self, _E.relu, "relu_", saves_input=False)

    def sigmoid_(self: Any) -> Tensor:
        """:meth:`sigmoid` in place."""
        return write_in_place(self, _E.sigmoid, "sigmoid_", saves_input=False)

    def tanh_(self: Any) -> Tensor:
        """:meth:`tanh` in place."""
        return write_in_place(self, _E.tanh, "tanh_", saves_input=False)

    def masked_fill_(self: Any, mask: Tensor, value: Any) -> Tensor:
        """:meth:`masked_fill` in place."""
        return write_in_place(self, lambda t: t.masked_fill(mask, value), "masked_fill_")

    def scatter_(
        self: Any, dim: builtins.int, index: Tensor, src: Any = None, value: Any = None
    ) -> Tensor:
        """:meth:`scatter` in place."""
        return write_in_place(self, lambda t: t.scatter(dim, index, src, value), "scatter_")

    # ---------------------------------------------------------------- operators
    def __add__(self: Any, other: Any) -> Tensor:
        return _E.add(self, other)

    def __radd__(self: Any, other: Any) -> Tensor:
        return _E.add(other, self)

    def __sub__(self: Any, other: Any) -> Tensor:
        return _E.sub(self, other)

    def __rsub__(self: Any, other: Any) -> Tensor:
        return _E.sub(other, self)

    def __mul__(self: Any, other: Any) -> Tensor:
        return _E.mul(self, other)

    def __rmul__(self: Any, other: Any) -> Tensor:
        return _E.mul(other, self)

    def __truediv__(self: Any, other: Any) -> Tensor:
        return _E.div(self, other)

    def __rtruediv__(self: Any, other: Any) -> Tensor:
        return _E.div(_E.as_operand(other, self), self)

    def __pow__(self: Any, exponent: Any) -> Tensor:
        return _E.pow(self, exponent)

    def __rpow__(self: Any, base: Any) -> Tensor:
        return _E.pow(_E.as_operand(base, self), self)

    def __matmul__(self: Any, other: Tensor) -> Tensor:
        return _M.matmul(self, other)

    def __rmatmul__(self: Any, other: Tensor) -> Tensor:
        return _M.matmul(other, self)

    def __neg__(self: Any) -> Tensor:
        return _E.Neg.apply(self)

    def __abs__(self: Any) -> Tensor:
        return _E.abs(self)

    def __invert__(self: Any) -> Tensor:
        return _E.logical_not(self)

    def __eq__(self: Any, other: object) -> Tensor:  # type: ignore[override]
        return _E.eq(self, other)

    def __ne__(self: Any, other: object) -> Tensor:  # type: ignore[override]
        return _E.ne(self, other)

    def __lt__(self: Any, other: Any) -> Tensor:
        return _E.lt(self, other)

    def __le__(self: Any, other: Any) -> Tensor:
        return _E.le(self, other)

    def __gt__(self: Any, other: Any) -> Tensor:
        return _E.gt(self, other)

    def __ge__(self: Any, other: Any) -> Tensor:
        return _E.ge(self, other)

    def __getitem__(self: Any, index: Any) -> Tensor:
        return _S.getitem(self, index)

    # ---------------------------------------------------------------- math methods
    def exp(self: Any) -> Tensor:
        """See :func:`minitorch_accel.exp`."""
        return _E.exp(self)

    def log(self: Any) -> Tensor:
        """See :func:`minitorch_accel.log`."""
        return _E.log(self)

    def sqrt(self: Any) -> Tensor:
        """See :func:`minitorch_accel.sqrt`."""
        return _E.sqrt(self)

    def abs(self: Any) -> Tensor:
        """See :func:`minitorch_accel.abs`."""
        return _E.abs(self)

    def relu(self: Any) -> Tensor:
        """See :func:`minitorch_accel.relu`."""
        return _E.relu(self)

    def sigmoid(self: Any) -> Tensor:
        """See :func:`minitorch_accel.sigmoid`."""
        return _E.sigmoid(self)

    def tanh(self: Any) -> Tensor:
        """See :func:`minitorch_accel.tanh`."""
        return _E.tanh(self)

    def clamp(
        self: Any, min: builtins.float | None = None, max: builtins.float | None = None
    ) -> Tensor:
        """See :func:`minitorch_accel.clamp`."""
        return _E.clamp(self, min, max)

    def matmul(self: Any, other: Tensor) -> Tensor:
        """See :func:`minitorch_accel.matmul`."""
        return _M.matmul(self, other)

    def sum(self: Any, dim: Any = None, keepdim: builtins.bool = False) -> Tensor:
        """See :func:`minitorch_accel.sum`."""
        return _R.sum(self, dim, keepdim)

    def mean(self: Any, dim: Any = None, keepdim: builtins.bool = False) -> Tensor:
        """See :func:`minitorch_accel.mean`."""
        return _R.mean(self, dim, keepdim)

    def var(
        self: Any, dim: Any = None, keepdim: builtins.bool = False, correction: builtins.int = 1
    ) -> Tensor:
        """See :func:`minitorch_accel.var`."""
        return _R.var(self, dim, keepdim, correction)

    def max(
        self: Any, dim: builtins.int | Tensor | None = None, keepdim: builtins.bool = False
    ) -> Any:
        """See :func:`minitorch_accel.max`: a tensor, or ``(values, indices)`` with a dim."""
        return _R.max(self, dim, keepdim)

    def min(
        self: Any, dim: builtins.int | Tensor | None = None, keepdim: builtins.bool = False
    ) -> Any:
        """See :func:`minitorch_accel.min`: a tensor, or ``(values, indices)`` with a dim."""
        return _R.min(self, dim, keepdim)

    def amax(self: Any, dim: Any = (), keepdim: builtins.bool = False) -> Tensor:
        """See :func:`minitorch_accel.amax`."""
        return _R.amax(self, dim, keepdim)

    def amin(self: Any, dim: Any = (), keepdim: builtins.bool = False) -> Tensor:
        """See :func:`minitorch_accel.amin`."""
        return _R.amin(self, dim, keepdim)

    def argmax(
        self: Any, dim: builtins.int | None = None, keepdim: builtins.bool = False
    ) -> Tensor:
        """See :func:`minitorch_accel.argmax`."""
        return _R.argmax(self, dim, keepdim)

    def argmin(
        self: Any, dim: builtins.int | None = None, keepdim: builtins.bool = False
    ) -> Tensor:
        """See :func:`minitorch_accel.argmin`."""
        return _R.argmin(self, dim, keepdim)

    def logsumexp(self: Any, dim: Any = None, keepdim: builtins.bool = False) -> Tensor:
        """See :func:`minitorch_accel.logsumexp`."""
        return _R.logsumexp(self, dim, keepdim)

    def softmax(self: Any, dim: builtins.int = -1) -> Tensor:
        """See :func:`minitorch_accel.softmax`."""
        return _R.softmax(self, dim)

    def log_softmax(self: Any, dim: builtins.int = -1) -> Tensor:
        """See :func:`minitorch_accel.log_softmax`."""
        return _R.log_softmax(self, dim)

    def any(self: Any, dim: Any = None, keepdim: builtins.bool = False) -> Tensor:
        """See :func:`minitorch_accel.any`."""
        return _R.any(self, dim, keepdim)

    def all(self: Any, dim: Any = None, keepdim: builtins.bool = False) -> Tensor:
        """See :func:`minitorch_accel.all`."""
        return _R.all(self, dim, keepdim)

    # ---------------------------------------------------------------- shape methods
    def reshape(self: Any, *shape: Any) -> Tensor:
        """See :func:`minitorch_accel.reshape`."""
        return _S.reshape(self, *shape)

    def view(self: Any, *shape: Any) -> Tensor:
        """Same as :meth:`reshape` (which returns a view whenever NumPy can)."""
        return _S.reshape(self, *shape)

    def transpose(self: Any, dim0: builtins.int = -2, dim1: builtins.int = -1) -> Tensor:
        """See :func:`minitorch_accel.transpose`."""
        return _S.transpose(self, dim0, dim1)

    @property
    def T(self: Any) -> Tensor:
        """All dims reversed."""
        return _S.permute(self, *reversed(range(self.ndim)))

    def permute(self: Any, *dims: Any) -> Tensor:
        """See :func:`minitorch_accel.permute`."""
        return _S.permute(self, *dims)

    def expand(self: Any, *shape: Any) -> Tensor:
        """See :func:`minitorch_accel.expand`."""
        return _S.expand(self, *shape)

    def flatten(self: Any, start_dim: builtins.int = 0, end_dim: builtins.int = -1) -> Tensor:
        """See :func:`minitorch_accel.flatten`."""
        return _S.flatten(self, start_dim, end_dim)

    def squeeze(self: Any, dim: builtins.int | None = None) -> Tensor:
        """See :func:`minitorch_accel.squeeze`."""
        return _S.squeeze(self, dim)

    def unsqueeze(self: Any, dim: builtins.int) -> Tensor:
        """See :func:`minitorch_accel.unsqueeze`."""
        return _S.unsqueeze(self, dim)

    def __setitem__(self: Any, index: Any, value: Any) -> None:
        if self._records(value):
            value = value if isinstance(value, Tensor) else Tensor(value, dtype=self.dtype)
            before = self._history(copy=False)
            put = _S.IndexPut.apply(before, value.to(self.device), index=_S.raw_index(index))
            self._rebase(put)
            return
        self._check_inplace()
        value = self._as_data(value)
        with self.device.guard():
            self.array[_S.raw_index(index)] = value


def write_in_place(
    target: Any, compute: Callable[[Tensor], Tensor], op: str, saves_input: bool = True
) -> Tensor:
    """Make ``target`` hold ``compute(target)``: the steps of an in-place op.

    ``compute`` runs out of place and ``copy_`` writes its result (recorded by autograd,
    with its checks and version counter). While autograd records, an op that keeps its
    input for backward (``saves_input``) reads a copy of ``target``: writing the result
    must not change what it saved. A result whose dtype ``target`` cannot hold without
    losing it (float into int) is refused, as in PyTorch.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> x = mta.tensor([-1.0, 2.0])
    >>> write_in_place(x, lambda t: t * 2, "double_") is x, x.tolist()
    (True, [-2.0, 4.0])
    """
    copy = saves_input and is_grad_enabled() and target.requires_grad and target.grad_fn is not None
    result = compute(target.clone() if copy else target)
    if result.dtype.kind == "f" and target.dtype.kind != "f":
        raise TypeError(
            f"{op}: the result is {result.dtype}, which a {target.dtype} tensor cannot hold; "
            "convert it first, e.g. x = x.float()"
        )
    if result.shape != target.shape:
        raise ValueError(
            f"{op}: the result has shape {result.shape}, this tensor {target.shape}: an in-place "
            "op cannot change the shape"
        )
    return target.copy_(result)  # type: ignore[no-any-return]


def install_tensor_methods(tensor_class: type) -> None:
    """Give ``tensor_class`` (the core :class:`~minitorch_accel.core.tensor.Tensor`) every
    method of :class:`TensorMethods`: its operators (``+``, ``@``, ``[]``, ...) and the
    methods that call an op.

    The core package defines the Tensor without them, since it sits below the ops; the
    package's ``__init__`` calls this once, right after importing the ops. The type
    checker sees them through ``TensorMethods``, which the core names as a base class
    only for type checking.
    """
    for name, value in vars(TensorMethods).items():
        if callable(value) or isinstance(value, property):
            setattr(tensor_class, name, value)
