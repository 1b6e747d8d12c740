"""More of PyTorch's Tensor methods, each a one-line call of a function of
:mod:`minitorch_accel.ops`: comparisons, shape helpers, math, indexing, sorting,
dtype conversions and the in-place variants.

:class:`~minitorch_accel.tensor.Tensor` inherits them from :class:`TensorMethods`. The
ops are imported inside each method because they import the Tensor class themselves.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from .tensor import Tensor

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
        from .ops.compare import eq

        return eq(self, other)

    def ne(self: Any, other: Any) -> Tensor:
        """``self != other``."""
        from .ops.compare import ne

        return ne(self, other)

    def lt(self: Any, other: Any) -> Tensor:
        """``self < other``."""
        from .ops.compare import lt

        return lt(self, other)

    def le(self: Any, other: Any) -> Tensor:
        """``self <= other``."""
        from .ops.compare import le

        return le(self, other)

    def gt(self: Any, other: Any) -> Tensor:
        """``self > other``."""
        from .ops.compare import gt

        return gt(self, other)

    def ge(self: Any, other: Any) -> Tensor:
        """``self >= other``."""
        from .ops.compare import ge

        return ge(self, other)

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
        from .ops.elementwise import pow

        return pow(self, exponent)

    def rsqrt(self: Any) -> Tensor:
        """See :func:`minitorch_accel.rsqrt`."""
        from .ops.unary import rsqrt

        return rsqrt(self)

    def log1p(self: Any) -> Tensor:
        """See :func:`minitorch_accel.log1p`."""
        from .ops.unary import log1p

        return log1p(self)

    def sin(self: Any) -> Tensor:
        """See :func:`minitorch_accel.sin`."""
        from .ops.unary import sin

        return sin(self)

    def cos(self: Any) -> Tensor:
        """See :func:`minitorch_accel.cos`."""
        from .ops.unary import cos

        return cos(self)

    def tan(self: Any) -> Tensor:
        """See :func:`minitorch_accel.tan`."""
        from .ops.unary import tan

        return tan(self)

    def sign(self: Any) -> Tensor:
        """See :func:`minitorch_accel.sign`."""
        from .ops.unary import sign

        return sign(self)

    def clip(self: Any, min: Any = None, max: Any = None) -> Tensor:
        """Same as :meth:`clamp`."""
        return self.clamp(min, max)  # type: ignore[no-any-return]

    def norm(self: Any, p: Any = 2, dim: Any = None, keepdim: bool = False) -> Tensor:
        """See :func:`minitorch_accel.norm`."""
        from .ops.scan import norm

        return norm(self, p, dim, keepdim)

    def cumsum(self: Any, dim: builtins.int, dtype: Any = None) -> Tensor:
        """See :func:`minitorch_accel.cumsum`."""
        from .ops.scan import cumsum

        return cumsum(self, dim, dtype)

    def cumprod(self: Any, dim: builtins.int, dtype: Any = None) -> Tensor:
        """See :func:`minitorch_accel.cumprod`."""
        from .ops.scan import cumprod

        return cumprod(self, dim, dtype)

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
        from .ops.split import repeat

        return repeat(self, *sizes)

    def unflatten(self: Any, dim: builtins.int, sizes: Sequence[builtins.int]) -> Tensor:
        """See :func:`minitorch_accel.ops.split.unflatten`."""
        from .ops.split import unflatten

        return unflatten(self, dim, sizes)

    def split(self: Any, split_size: Any, dim: builtins.int = 0) -> tuple[Tensor, ...]:
        """See :func:`minitorch_accel.split`."""
        from .ops.split import split

        return split(self, split_size, dim)

    def chunk(self: Any, chunks: builtins.int, dim: builtins.int = 0) -> tuple[Tensor, ...]:
        """See :func:`minitorch_accel.chunk`."""
        from .ops.split import chunk

        return chunk(self, chunks, dim)

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
        from .ops.index import gather

        return gather(self, dim, index)

    def scatter(
        self: Any, dim: builtins.int, index: Tensor, src: Any = None, value: Any = None
    ) -> Tensor:
        """See :func:`minitorch_accel.scatter` (``src`` a tensor, or ``value`` a number)."""
        from .ops.index import scatter

        return scatter(self, dim, index, value if src is None else src)

    def index_select(self: Any, dim: builtins.int, index: Tensor) -> Tensor:
        """See :func:`minitorch_accel.index_select`."""
        from .ops.index import index_select

        return index_select(self, dim, index)

    def masked_fill(self: Any, mask: Tensor, value: Any) -> Tensor:
        """See :func:`minitorch_accel.masked_fill`."""
        from .ops.index import masked_fill

        return masked_fill(self, mask, value)

    # ------------------------------------------------------------ sorting and selection
    def sort(
        self: Any,
        dim: builtins.int = -1,
        descending: builtins.bool = False,
        stable: builtins.bool = True,
    ) -> Any:
        """See :func:`minitorch_accel.sort`: named ``(values, indices)``."""
        from .ops.sort import sort

        return sort(self, dim, descending, stable)

    def argsort(
        self: Any,
        dim: builtins.int = -1,
        descending: builtins.bool = False,
        stable: builtins.bool = True,
    ) -> Tensor:
        """See :func:`minitorch_accel.argsort`."""
        from .ops.sort import argsort

        return argsort(self, dim, descending, stable)

    def topk(
        self: Any,
        k: builtins.int,
        dim: builtins.int = -1,
        largest: builtins.bool = True,
        sorted: builtins.bool = True,
    ) -> Any:
        """See :func:`minitorch_accel.topk`: named ``(values, indices)``."""
        from .ops.sort import topk

        return topk(self, k, dim, largest, sorted)

    def kthvalue(
        self: Any, k: builtins.int, dim: builtins.int = -1, keepdim: builtins.bool = False
    ) -> Any:
        """See :func:`minitorch_accel.kthvalue`: named ``(values, indices)``."""
        from .ops.sort import kthvalue

        return kthvalue(self, k, dim, keepdim)

    def median(self: Any, dim: builtins.int | None = None, keepdim: builtins.bool = False) -> Any:
        """See :func:`minitorch_accel.median`: a tensor, or ``(values, indices)`` with a dim."""
        from .ops.sort import median

        return median(self, dim, keepdim)

    def mode(self: Any, dim: builtins.int = -1, keepdim: builtins.bool = False) -> Any:
        """See :func:`minitorch_accel.mode`: named ``(values, indices)``."""
        from .ops.sort import mode

        return mode(self, dim, keepdim)

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
    # Each computes the result out of place and writes it with ``copy_`` (or ``add_``),
    # the Tensor's in-place primitives, so their checks apply to every in-place method.
    def clamp_(self: Any, min: Any = None, max: Any = None) -> Tensor:
        """Clamp in place (see :func:`minitorch_accel.clamp`)."""
        return _write(self, self.clamp(min, max), "clamp_")

    def clip_(self: Any, min: Any = None, max: Any = None) -> Tensor:
        """Same as :meth:`clamp_`."""
        return _write(self, self.clamp(min, max), "clip_")

    def masked_fill_(self: Any, mask: Tensor, value: Any) -> Tensor:
        """:meth:`masked_fill` in place."""
        return _write(self, self.masked_fill(mask, value), "masked_fill_")

    def scatter_(
        self: Any, dim: builtins.int, index: Tensor, src: Any = None, value: Any = None
    ) -> Tensor:
        """:meth:`scatter` in place."""
        return _write(self, self.scatter(dim, index, src, value), "scatter_")


def _write(target: Any, result: Tensor, op: str) -> Tensor:
    """Copy ``result`` into ``target`` (an in-place op's last step), refusing a result
    whose dtype ``target`` cannot hold without losing it (float into int, as PyTorch).
    """
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
