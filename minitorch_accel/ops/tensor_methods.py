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
from . import activation_more as _AM
from . import bitwise as _bit
from . import compare as _compare
from . import elementwise as _E
from . import index as _index
from . import index_more as _IM
from . import linalg as _LA
from . import math_more as _mm
from . import matmul as _M
from . import products as _P
from . import random_fill as _rf
from . import reduce as _R
from . import reduce_more as _RM
from . import sampling as _sampling
from . import scan as _scan
from . import set_ops as _set
from . import shape as _S
from . import shape_more as _SM
from . import sort as _sort
from . import split as _split
from . import torch_surface as _TS
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
    def add(self: Any, other: Any, alpha: Any = 1) -> Tensor:
        """``self + alpha * other`` (see :func:`minitorch_accel.add`)."""
        return _E.add(self, other, alpha=alpha)

    def sub(self: Any, other: Any, alpha: Any = 1) -> Tensor:
        """``self - alpha * other`` (see :func:`minitorch_accel.sub`)."""
        return _E.sub(self, other, alpha=alpha)

    def mul(self: Any, other: Any) -> Tensor:
        """``self * other``."""
        return self * other  # type: ignore[no-any-return]

    def div(self: Any, other: Any, *, rounding_mode: builtins.str | None = None) -> Tensor:
        """``self / other`` (see :func:`minitorch_accel.div`)."""
        return _E.div(self, other, rounding_mode=rounding_mode)

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

    # elementwise math of ops/math_more.py and ops/bitwise.py
    def floor(self: Any) -> Tensor:
        """See :func:`minitorch_accel.floor`."""
        return _mm.floor(self)

    def ceil(self: Any) -> Tensor:
        """See :func:`minitorch_accel.ceil`."""
        return _mm.ceil(self)

    def round(self: Any, decimals: builtins.int = 0) -> Tensor:
        """See :func:`minitorch_accel.round`."""
        return _mm.round(self, decimals=decimals)

    def trunc(self: Any) -> Tensor:
        """See :func:`minitorch_accel.trunc`."""
        return _mm.trunc(self)

    def fix(self: Any) -> Tensor:
        """See :func:`minitorch_accel.fix`."""
        return _mm.fix(self)

    def frac(self: Any) -> Tensor:
        """See :func:`minitorch_accel.frac`."""
        return _mm.frac(self)

    def sgn(self: Any) -> Tensor:
        """See :func:`minitorch_accel.sgn`."""
        return _mm.sgn(self)

    def signbit(self: Any) -> Tensor:
        """See :func:`minitorch_accel.signbit`."""
        return _mm.signbit(self)

    def copysign(self: Any, other: Any) -> Tensor:
        """See :func:`minitorch_accel.copysign`."""
        return _mm.copysign(self, other)

    def positive(self: Any) -> Tensor:
        """See :func:`minitorch_accel.positive`."""
        return _mm.positive(self)

    def square(self: Any) -> Tensor:
        """See :func:`minitorch_accel.square`."""
        return _mm.square(self)

    def reciprocal(self: Any) -> Tensor:
        """See :func:`minitorch_accel.reciprocal`."""
        return _mm.reciprocal(self)

    def log2(self: Any) -> Tensor:
        """See :func:`minitorch_accel.log2`."""
        return _mm.log2(self)

    def log10(self: Any) -> Tensor:
        """See :func:`minitorch_accel.log10`."""
        return _mm.log10(self)

    def expm1(self: Any) -> Tensor:
        """See :func:`minitorch_accel.expm1`."""
        return _mm.expm1(self)

    def exp2(self: Any) -> Tensor:
        """See :func:`minitorch_accel.exp2`."""
        return _mm.exp2(self)

    def sinh(self: Any) -> Tensor:
        """See :func:`minitorch_accel.sinh`."""
        return _mm.sinh(self)

    def cosh(self: Any) -> Tensor:
        """See :func:`minitorch_accel.cosh`."""
        return _mm.cosh(self)

    def asin(self: Any) -> Tensor:
        """See :func:`minitorch_accel.asin`."""
        return _mm.asin(self)

    def acos(self: Any) -> Tensor:
        """See :func:`minitorch_accel.acos`."""
        return _mm.acos(self)

    def atan(self: Any) -> Tensor:
        """See :func:`minitorch_accel.atan`."""
        return _mm.atan(self)

    def asinh(self: Any) -> Tensor:
        """See :func:`minitorch_accel.asinh`."""
        return _mm.asinh(self)

    def acosh(self: Any) -> Tensor:
        """See :func:`minitorch_accel.acosh`."""
        return _mm.acosh(self)

    def atanh(self: Any) -> Tensor:
        """See :func:`minitorch_accel.atanh`."""
        return _mm.atanh(self)

    def atan2(self: Any, other: Any) -> Tensor:
        """See :func:`minitorch_accel.atan2`."""
        return _mm.atan2(self, other)

    def arctan2(self: Any, other: Any) -> Tensor:
        """See :func:`minitorch_accel.atan2`."""
        return _mm.atan2(self, other)

    def hypot(self: Any, other: Tensor) -> Tensor:
        """See :func:`minitorch_accel.hypot`."""
        return _mm.hypot(self, other)

    def erf(self: Any) -> Tensor:
        """See :func:`minitorch_accel.erf`."""
        return _mm.erf(self)

    def erfc(self: Any) -> Tensor:
        """See :func:`minitorch_accel.erfc`."""
        return _mm.erfc(self)

    def erfinv(self: Any) -> Tensor:
        """See :func:`minitorch_accel.erfinv`."""
        return _mm.erfinv(self)

    def lerp(self: Any, end: Tensor, weight: Any) -> Tensor:
        """See :func:`minitorch_accel.lerp`."""
        return _mm.lerp(self, end, weight)

    def logaddexp(self: Any, other: Tensor) -> Tensor:
        """See :func:`minitorch_accel.logaddexp`."""
        return _mm.logaddexp(self, other)

    def logaddexp2(self: Any, other: Tensor) -> Tensor:
        """See :func:`minitorch_accel.logaddexp2`."""
        return _mm.logaddexp2(self, other)

    def logit(self: Any, eps: builtins.float | None = None) -> Tensor:
        """See :func:`minitorch_accel.logit`."""
        return _mm.logit(self, eps)

    def xlogy(self: Any, other: Any) -> Tensor:
        """See :func:`minitorch_accel.xlogy`."""
        return _mm.xlogy(self, other)

    def heaviside(self: Any, values: Tensor) -> Tensor:
        """See :func:`minitorch_accel.heaviside`."""
        return _mm.heaviside(self, values)

    def clamp_min(self: Any, min: Any) -> Tensor:
        """See :func:`minitorch_accel.clamp_min`."""
        return _mm.clamp_min(self, min)

    def clamp_max(self: Any, max: Any) -> Tensor:
        """See :func:`minitorch_accel.clamp_max`."""
        return _mm.clamp_max(self, max)

    def float_power(self: Any, exponent: Any) -> Tensor:
        """See :func:`minitorch_accel.float_power`."""
        return _mm.float_power(self, exponent)

    def true_divide(self: Any, other: Any) -> Tensor:
        """See :func:`minitorch_accel.true_divide`."""
        return _mm.true_divide(self, other)

    def nan_to_num(
        self: Any, nan: builtins.float = 0.0, posinf: Any = None, neginf: Any = None
    ) -> Tensor:
        """See :func:`minitorch_accel.nan_to_num`."""
        return _mm.nan_to_num(self, nan, posinf, neginf)

    def floor_divide(self: Any, other: Any) -> Tensor:
        """See :func:`minitorch_accel.floor_divide`."""
        return _bit.floor_divide(self, other)

    def remainder(self: Any, other: Any) -> Tensor:
        """See :func:`minitorch_accel.remainder`."""
        return _bit.remainder(self, other)

    def fmod(self: Any, other: Any) -> Tensor:
        """See :func:`minitorch_accel.fmod`."""
        return _bit.fmod(self, other)

    def bitwise_and(self: Any, other: Any) -> Tensor:
        """See :func:`minitorch_accel.bitwise_and`."""
        return _bit.bitwise_and(self, other)

    def bitwise_or(self: Any, other: Any) -> Tensor:
        """See :func:`minitorch_accel.bitwise_or`."""
        return _bit.bitwise_or(self, other)

    def bitwise_xor(self: Any, other: Any) -> Tensor:
        """See :func:`minitorch_accel.bitwise_xor`."""
        return _bit.bitwise_xor(self, other)

    def bitwise_not(self: Any) -> Tensor:
        """See :func:`minitorch_accel.bitwise_not`."""
        return _bit.bitwise_not(self)

    def bitwise_left_shift(self: Any, other: Any) -> Tensor:
        """See :func:`minitorch_accel.bitwise_left_shift`."""
        return _bit.bitwise_left_shift(self, other)

    def bitwise_right_shift(self: Any, other: Any) -> Tensor:
        """See :func:`minitorch_accel.bitwise_right_shift`."""
        return _bit.bitwise_right_shift(self, other)

    def logical_and(self: Any, other: Tensor) -> Tensor:
        """See :func:`minitorch_accel.logical_and`."""
        return _bit.logical_and(self, other)

    def logical_or(self: Any, other: Tensor) -> Tensor:
        """See :func:`minitorch_accel.logical_or`."""
        return _bit.logical_or(self, other)

    def logical_xor(self: Any, other: Tensor) -> Tensor:
        """See :func:`minitorch_accel.logical_xor`."""
        return _bit.logical_xor(self, other)

    def logical_not(self: Any) -> Tensor:
        """See :func:`minitorch_accel.logical_not`."""
        return _bit.logical_not(self)

    def isnan(self: Any) -> Tensor:
        """See :func:`minitorch_accel.isnan`."""
        return _bit.isnan(self)

    def isinf(self: Any) -> Tensor:
        """See :func:`minitorch_accel.isinf`."""
        return _bit.isinf(self)

    def isfinite(self: Any) -> Tensor:
        """See :func:`minitorch_accel.isfinite`."""
        return _bit.isfinite(self)

    def isposinf(self: Any) -> Tensor:
        """See :func:`minitorch_accel.isposinf`."""
        return _bit.isposinf(self)

    def isneginf(self: Any) -> Tensor:
        """See :func:`minitorch_accel.isneginf`."""
        return _bit.isneginf(self)

    def isreal(self: Any) -> Tensor:
        """See :func:`minitorch_accel.isreal`."""
        return _bit.isreal(self)

    def isclose(
        self: Any,
        other: Tensor,
        rtol: builtins.float = 1e-05,
        atol: builtins.float = 1e-08,
        equal_nan: builtins.bool = False,
    ) -> Tensor:
        """See :func:`minitorch_accel.isclose`."""
        return _bit.isclose(self, other, rtol, atol, equal_nan)

    def allclose(
        self: Any,
        other: Tensor,
        rtol: builtins.float = 1e-05,
        atol: builtins.float = 1e-08,
        equal_nan: builtins.bool = False,
    ) -> builtins.bool:
        """See :func:`minitorch_accel.allclose`."""
        return _bit.allclose(self, other, rtol, atol, equal_nan)

    def equal(self: Any, other: Tensor) -> builtins.bool:
        """See :func:`minitorch_accel.equal`."""
        return _bit.equal(self, other)

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

    def cumsum_(self: Any, dim: builtins.int, dtype: Any = None) -> Tensor:
        """:meth:`cumsum` in place."""
        return write_in_place(self, lambda t: _scan.cumsum(t, dim, dtype), "cumsum_")

    def cumprod_(self: Any, dim: builtins.int, dtype: Any = None) -> Tensor:
        """:meth:`cumprod` in place."""
        return write_in_place(self, lambda t: _scan.cumprod(t, dim, dtype), "cumprod_")

    def logcumsumexp(self: Any, dim: builtins.int) -> Tensor:
        """See :func:`minitorch_accel.logcumsumexp`."""
        return _RM.logcumsumexp(self, dim)

    def cummax(self: Any, dim: builtins.int) -> Any:
        """See :func:`minitorch_accel.cummax`: named ``(values, indices)``."""
        return _RM.cummax(self, dim)

    def cummin(self: Any, dim: builtins.int) -> Any:
        """See :func:`minitorch_accel.cummin`: named ``(values, indices)``."""
        return _RM.cummin(self, dim)

    def diff(
        self: Any,
        n: builtins.int = 1,
        dim: builtins.int = -1,
        prepend: Tensor | None = None,
        append: Tensor | None = None,
    ) -> Tensor:
        """See :func:`minitorch_accel.diff`."""
        return _RM.diff(self, n, dim, prepend, append)

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
        self: Any,
        dim: builtins.int,
        index: Tensor,
        src: Any = None,
        value: Any = None,
        *,
        reduce: builtins.str | None = None,
    ) -> Tensor:
        """See :func:`minitorch_accel.scatter` (``src`` a tensor, or ``value`` a number)."""
        return _index.scatter(self, dim, index, value if src is None else src, reduce)

    def index_select(self: Any, dim: builtins.int, index: Tensor) -> Tensor:
        """See :func:`minitorch_accel.index_select`."""
        return _index.index_select(self, dim, index)

    def masked_fill(self: Any, mask: Tensor, value: Any) -> Tensor:
        """See :func:`minitorch_accel.masked_fill`."""
        return _index.masked_fill(self, mask, value)

    def scatter_add(self: Any, dim: builtins.int, index: Tensor, src: Tensor) -> Tensor:
        """See :func:`minitorch_accel.scatter_add`."""
        return _IM.scatter_add(self, dim, index, src)

    def scatter_reduce(
        self: Any,
        dim: builtins.int,
        index: Tensor,
        src: Tensor,
        reduce: builtins.str,
        *,
        include_self: builtins.bool = True,
    ) -> Tensor:
        """See :func:`minitorch_accel.scatter_reduce`."""
        return _IM.scatter_reduce(self, dim, index, src, reduce, include_self=include_self)

    def index_add(
        self: Any, dim: builtins.int, index: Tensor, source: Tensor, *, alpha: Any = 1
    ) -> Tensor:
        """See :func:`minitorch_accel.index_add`."""
        return _IM.index_add(self, dim, index, source, alpha=alpha)

    def index_fill(self: Any, dim: builtins.int, index: Tensor, value: Any) -> Tensor:
        """See :func:`minitorch_accel.index_fill`."""
        return _IM.index_fill(self, dim, index, value)

    def index_copy(self: Any, dim: builtins.int, index: Tensor, source: Tensor) -> Tensor:
        """See :func:`minitorch_accel.index_copy`."""
        return _IM.index_copy(self, dim, index, source)

    def index_put(
        self: Any, indices: Any, values: Any, accumulate: builtins.bool = False
    ) -> Tensor:
        """See :func:`minitorch_accel.index_put`."""
        return _IM.index_put(self, indices, values, accumulate)

    def take(self: Any, index: Tensor) -> Tensor:
        """See :func:`minitorch_accel.take`."""
        return _IM.take(self, index)

    def take_along_dim(self: Any, indices: Tensor, dim: builtins.int | None = None) -> Tensor:
        """See :func:`minitorch_accel.take_along_dim`."""
        return _IM.take_along_dim(self, indices, dim)

    def masked_select(self: Any, mask: Tensor) -> Tensor:
        """See :func:`minitorch_accel.masked_select`."""
        return _IM.masked_select(self, mask)

    def masked_scatter(self: Any, mask: Tensor, source: Tensor) -> Tensor:
        """See :func:`minitorch_accel.masked_scatter`."""
        return _IM.masked_scatter(self, mask, source)

    def nonzero(self: Any, *, as_tuple: builtins.bool = False) -> Any:
        """See :func:`minitorch_accel.nonzero`."""
        return _IM.nonzero(self, as_tuple=as_tuple)

    def argwhere(self: Any) -> Tensor:
        """See :func:`minitorch_accel.argwhere`."""
        return _IM.argwhere(self)

    def repeat_interleave(
        self: Any, repeats: Any = None, dim: builtins.int | None = None, *, output_size: Any = None
    ) -> Tensor:
        """See :func:`minitorch_accel.repeat_interleave`."""
        return _IM.repeat_interleave(self, repeats, dim, output_size=output_size)

    def unique(
        self: Any,
        sorted: builtins.bool = True,
        return_inverse: builtins.bool = False,
        return_counts: builtins.bool = False,
        dim: builtins.int | None = None,
    ) -> Any:
        """See :func:`minitorch_accel.unique`."""
        return _set.unique(self, sorted, return_inverse, return_counts, dim)

    def unique_consecutive(
        self: Any,
        return_inverse: builtins.bool = False,
        return_counts: builtins.bool = False,
        dim: builtins.int | None = None,
    ) -> Any:
        """See :func:`minitorch_accel.unique_consecutive`."""
        return _set.unique_consecutive(self, return_inverse, return_counts, dim)

    def bincount(self: Any, weights: Tensor | None = None, minlength: builtins.int = 0) -> Tensor:
        """See :func:`minitorch_accel.bincount`."""
        return _set.bincount(self, weights, minlength)

    def histc(
        self: Any, bins: builtins.int = 100, min: builtins.float = 0, max: builtins.float = 0
    ) -> Tensor:
        """See :func:`minitorch_accel.histc`."""
        return _set.histc(self, bins, min, max)

    def multinomial(
        self: Any,
        num_samples: builtins.int,
        replacement: builtins.bool = False,
        *,
        generator: Any = None,
    ) -> Tensor:
        """See :func:`minitorch_accel.multinomial`."""
        return _sampling.multinomial(self, num_samples, replacement, generator=generator)

    # ------------------------------------------------------------ new tensors like this one
    def new_tensor(
        self: Any, data: Any, dtype: Any = None, device: Any = None, requires_grad: Any = False
    ) -> Tensor:
        """A new leaf tensor of ``data``, with this tensor's dtype and device by default."""
        return _SM.new_tensor(self, data, dtype, device, requires_grad)

    def new_zeros(
        self: Any, *size: Any, dtype: Any = None, device: Any = None, requires_grad: Any = False
    ) -> Tensor:
        """Zeros of ``size``, with this tensor's dtype and device by default."""
        return _SM.new_full(self, size, 0, dtype, device, requires_grad)

    def new_ones(
        self: Any, *size: Any, dtype: Any = None, device: Any = None, requires_grad: Any = False
    ) -> Tensor:
        """Ones of ``size``, with this tensor's dtype and device by default."""
        return _SM.new_full(self, size, 1, dtype, device, requires_grad)

    def new_empty(
        self: Any, *size: Any, dtype: Any = None, device: Any = None, requires_grad: Any = False
    ) -> Tensor:
        """An uninitialised tensor of ``size`` (zeros here), this tensor's dtype and device."""
        return _SM.new_full(self, size, 0, dtype, device, requires_grad)

    def new_full(
        self: Any,
        size: Any,
        fill_value: Any,
        *,
        dtype: Any = None,
        device: Any = None,
        requires_grad: Any = False,
    ) -> Tensor:
        """``fill_value`` in ``size``, with this tensor's dtype and device by default."""
        return _SM.new_full(self, (size,), fill_value, dtype, device, requires_grad)

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

    def nanmedian(
        self: Any, dim: builtins.int | None = None, keepdim: builtins.bool = False
    ) -> Any:
        """See :func:`minitorch_accel.nanmedian`: a tensor, or ``(values, indices)``."""
        return _RM.nanmedian(self, dim, keepdim)

    def quantile(
        self: Any,
        q: Any,
        dim: builtins.int | None = None,
        keepdim: builtins.bool = False,
        *,
        interpolation: str = "linear",
    ) -> Tensor:
        """See :func:`minitorch_accel.quantile`."""
        return _RM.quantile(self, q, dim, keepdim, interpolation=interpolation)

    def nanquantile(
        self: Any,
        q: Any,
        dim: builtins.int | None = None,
        keepdim: builtins.bool = False,
        *,
        interpolation: str = "linear",
    ) -> Tensor:
        """See :func:`minitorch_accel.nanquantile`."""
        return _RM.nanquantile(self, q, dim, keepdim, interpolation=interpolation)

    # ------------------------------------------------------------ dtypes
    def int(self: Any) -> Tensor:
        """This tensor as int32."""
        return self.to(dtype=np.int32)  # type: ignore[no-any-return]

    def bool(self: Any) -> Tensor:
        """This tensor as bool."""
        return self.to(dtype=np.bool_)  # type: ignore[no-any-return]

    def short(self: Any) -> Tensor:
        """This tensor as int16."""
        return self.to(dtype=np.int16)  # type: ignore[no-any-return]

    def char(self: Any) -> Tensor:
        """This tensor as int8."""
        return self.to(dtype=np.int8)  # type: ignore[no-any-return]

    def byte(self: Any) -> Tensor:
        """This tensor as uint8."""
        return self.to(dtype=np.uint8)  # type: ignore[no-any-return]

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

    # elementwise math of ops/math_more.py and ops/bitwise.py, in place
    def floor_(self: Any) -> Tensor:
        """:meth:`floor` in place."""
        return write_in_place(self, _mm.floor, "floor_", saves_input=False)

    def ceil_(self: Any) -> Tensor:
        """:meth:`ceil` in place."""
        return write_in_place(self, _mm.ceil, "ceil_", saves_input=False)

    def round_(self: Any, decimals: builtins.int = 0) -> Tensor:
        """:meth:`round` in place."""
        return write_in_place(self, lambda t: _mm.round(t, decimals), "round_", saves_input=False)

    def trunc_(self: Any) -> Tensor:
        """:meth:`trunc` in place."""
        return write_in_place(self, _mm.trunc, "trunc_", saves_input=False)

    def fix_(self: Any) -> Tensor:
        """:meth:`fix` in place."""
        return write_in_place(self, _mm.fix, "fix_", saves_input=False)

    def frac_(self: Any) -> Tensor:
        """:meth:`frac` in place."""
        return write_in_place(self, _mm.frac, "frac_", saves_input=False)

    def sign_(self: Any) -> Tensor:
        """:meth:`sign` in place."""
        return write_in_place(self, _unary.sign, "sign_", saves_input=False)

    def sgn_(self: Any) -> Tensor:
        """:meth:`sgn` in place."""
        return write_in_place(self, _mm.sgn, "sgn_", saves_input=False)

    def square_(self: Any) -> Tensor:
        """:meth:`square` in place."""
        return write_in_place(self, _mm.square, "square_")

    def reciprocal_(self: Any) -> Tensor:
        """:meth:`reciprocal` in place."""
        return write_in_place(self, _mm.reciprocal, "reciprocal_", saves_input=False)

    def log2_(self: Any) -> Tensor:
        """:meth:`log2` in place."""
        return write_in_place(self, _mm.log2, "log2_")

    def log10_(self: Any) -> Tensor:
        """:meth:`log10` in place."""
        return write_in_place(self, _mm.log10, "log10_")

    def expm1_(self: Any) -> Tensor:
        """:meth:`expm1` in place."""
        return write_in_place(self, _mm.expm1, "expm1_", saves_input=False)

    def exp2_(self: Any) -> Tensor:
        """:meth:`exp2` in place."""
        return write_in_place(self, _mm.exp2, "exp2_", saves_input=False)

    def sinh_(self: Any) -> Tensor:
        """:meth:`sinh` in place."""
        return write_in_place(self, _mm.sinh, "sinh_")

    def cosh_(self: Any) -> Tensor:
        """:meth:`cosh` in place."""
        return write_in_place(self, _mm.cosh, "cosh_")

    def asin_(self: Any) -> Tensor:
        """:meth:`asin` in place."""
        return write_in_place(self, _mm.asin, "asin_")

    def acos_(self: Any) -> Tensor:
        """:meth:`acos` in place."""
        return write_in_place(self, _mm.acos, "acos_")

    def atan_(self: Any) -> Tensor:
        """:meth:`atan` in place."""
        return write_in_place(self, _mm.atan, "atan_")

    def asinh_(self: Any) -> Tensor:
        """:meth:`asinh` in place."""
        return write_in_place(self, _mm.asinh, "asinh_")

    def acosh_(self: Any) -> Tensor:
        """:meth:`acosh` in place."""
        return write_in_place(self, _mm.acosh, "acosh_")

    def atanh_(self: Any) -> Tensor:
        """:meth:`atanh` in place."""
        return write_in_place(self, _mm.atanh, "atanh_")

    def erfc_(self: Any) -> Tensor:
        """:meth:`erfc` in place."""
        return write_in_place(self, _mm.erfc, "erfc_")

    def erfinv_(self: Any) -> Tensor:
        """:meth:`erfinv` in place."""
        return write_in_place(self, _mm.erfinv, "erfinv_", saves_input=False)

    def logit_(self: Any, eps: builtins.float | None = None) -> Tensor:
        """:meth:`logit` in place."""
        return write_in_place(self, lambda t: _mm.logit(t, eps), "logit_")

    def nan_to_num_(
        self: Any, nan: builtins.float = 0.0, posinf: Any = None, neginf: Any = None
    ) -> Tensor:
        """:meth:`nan_to_num` in place."""
        fill = lambda t: _mm.nan_to_num(t, nan, posinf, neginf)  # noqa: E731
        return write_in_place(self, fill, "nan_to_num_", saves_input=False)

    def clamp_min_(self: Any, min: Any) -> Tensor:
        """:meth:`clamp_min` in place."""
        return write_in_place(
            self, lambda t: _mm.clamp_min(t, min), "clamp_min_", saves_input=False
        )

    def clamp_max_(self: Any, max: Any) -> Tensor:
        """:meth:`clamp_max` in place."""
        return write_in_place(
            self, lambda t: _mm.clamp_max(t, max), "clamp_max_", saves_input=False
        )

    def copysign_(self: Any, other: Any) -> Tensor:
        """:meth:`copysign` in place."""
        return write_in_place(
            self, lambda t: _mm.copysign(t, other), "copysign_", saves_input=False
        )

    def atan2_(self: Any, other: Any) -> Tensor:
        """:meth:`atan2` in place."""
        return write_in_place(self, lambda t: _mm.atan2(t, other), "atan2_")

    def arctan2_(self: Any, other: Any) -> Tensor:
        """:meth:`atan2` in place."""
        return write_in_place(self, lambda t: _mm.atan2(t, other), "arctan2_")

    def hypot_(self: Any, other: Tensor) -> Tensor:
        """:meth:`hypot` in place."""
        return write_in_place(self, lambda t: _mm.hypot(t, other), "hypot_")

    def lerp_(self: Any, end: Tensor, weight: Any) -> Tensor:
        """:meth:`lerp` in place."""
        return write_in_place(self, lambda t: _mm.lerp(t, end, weight), "lerp_")

    def xlogy_(self: Any, other: Any) -> Tensor:
        """:meth:`xlogy` in place."""
        return write_in_place(self, lambda t: _mm.xlogy(t, other), "xlogy_")

    def float_power_(self: Any, exponent: Any) -> Tensor:
        """:meth:`float_power` in place (the tensor must be float64, as in PyTorch)."""
        if self.dtype != np.float64:
            raise TypeError(
                f"float_power_: the result is float64, which a {self.dtype} tensor cannot hold "
                "(as in PyTorch); use x = x.float_power(...)"
            )
        return write_in_place(self, lambda t: _mm.float_power(t, exponent), "float_power_")

    def true_divide_(self: Any, other: Any) -> Tensor:
        """:meth:`true_divide` in place."""
        return write_in_place(self, lambda t: _mm.true_divide(t, other), "true_divide_")

    def floor_divide_(self: Any, other: Any) -> Tensor:
        """:meth:`floor_divide` in place (also ``//=``)."""
        return write_in_place(self, lambda t: _bit.floor_divide(t, other), "floor_divide_")

    def remainder_(self: Any, other: Any) -> Tensor:
        """:meth:`remainder` in place (also ``%=``)."""
        return write_in_place(self, lambda t: _bit.remainder(t, other), "remainder_")

    def fmod_(self: Any, other: Any) -> Tensor:
        """:meth:`fmod` in place."""
        return write_in_place(self, lambda t: _bit.fmod(t, other), "fmod_")

    def bitwise_and_(self: Any, other: Any) -> Tensor:
        """:meth:`bitwise_and` in place (also ``&=``)."""
        return write_in_place(self, lambda t: _bit.bitwise_and(t, other), "bitwise_and_")

    def bitwise_or_(self: Any, other: Any) -> Tensor:
        """:meth:`bitwise_or` in place (also ``|=``)."""
        return write_in_place(self, lambda t: _bit.bitwise_or(t, other), "bitwise_or_")

    def bitwise_xor_(self: Any, other: Any) -> Tensor:
        """:meth:`bitwise_xor` in place (also ``^=``)."""
        return write_in_place(self, lambda t: _bit.bitwise_xor(t, other), "bitwise_xor_")

    def bitwise_not_(self: Any) -> Tensor:
        """:meth:`bitwise_not` in place."""
        return write_in_place(self, _bit.bitwise_not, "bitwise_not_")

    def bitwise_left_shift_(self: Any, other: Any) -> Tensor:
        """:meth:`bitwise_left_shift` in place (also ``<<=``)."""
        shift = lambda t: _bit.bitwise_left_shift(t, other)  # noqa: E731
        return write_in_place(self, shift, "bitwise_left_shift_")

    def bitwise_right_shift_(self: Any, other: Any) -> Tensor:
        """:meth:`bitwise_right_shift` in place (also ``>>=``)."""
        shift = lambda t: _bit.bitwise_right_shift(t, other)  # noqa: E731
        return write_in_place(self, shift, "bitwise_right_shift_")

    def logical_and_(self: Any, other: Tensor) -> Tensor:
        """:meth:`logical_and` in place (the tensor keeps its dtype: 1 or 0)."""
        return write_in_place(self, lambda t: _bit.logical_and(t, other), "logical_and_")

    def logical_or_(self: Any, other: Tensor) -> Tensor:
        """:meth:`logical_or` in place."""
        return write_in_place(self, lambda t: _bit.logical_or(t, other), "logical_or_")

    def logical_xor_(self: Any, other: Tensor) -> Tensor:
        """:meth:`logical_xor` in place."""
        return write_in_place(self, lambda t: _bit.logical_xor(t, other), "logical_xor_")

    def logical_not_(self: Any) -> Tensor:
        """:meth:`logical_not` in place."""
        return write_in_place(self, _bit.logical_not, "logical_not_")

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
        self: Any,
        dim: builtins.int,
        index: Tensor,
        src: Any = None,
        value: Any = None,
        *,
        reduce: builtins.str | None = None,
    ) -> Tensor:
        """:meth:`scatter` in place."""
        return write_in_place(
            self, lambda t: t.scatter(dim, index, src, value, reduce=reduce), "scatter_"
        )

    def scatter_add_(self: Any, dim: builtins.int, index: Tensor, src: Tensor) -> Tensor:
        """:meth:`scatter_add` in place."""
        return write_in_place(self, lambda t: t.scatter_add(dim, index, src), "scatter_add_")

    def scatter_reduce_(
        self: Any,
        dim: builtins.int,
        index: Tensor,
        src: Tensor,
        reduce: builtins.str,
        *,
        include_self: builtins.bool = True,
    ) -> Tensor:
        """:meth:`scatter_reduce` in place."""
        return write_in_place(
            self,
            lambda t: t.scatter_reduce(dim, index, src, reduce, include_self=include_self),
            "scatter_reduce_",
        )

    def index_add_(
        self: Any, dim: builtins.int, index: Tensor, source: Tensor, *, alpha: Any = 1
    ) -> Tensor:
        """:meth:`index_add` in place."""
        return write_in_place(
            self, lambda t: t.index_add(dim, index, source, alpha=alpha), "index_add_"
        )

    def index_fill_(self: Any, dim: builtins.int, index: Tensor, value: Any) -> Tensor:
        """:meth:`index_fill` in place."""
        return write_in_place(self, lambda t: t.index_fill(dim, index, value), "index_fill_")

    def index_copy_(self: Any, dim: builtins.int, index: Tensor, source: Tensor) -> Tensor:
        """:meth:`index_copy` in place."""
        return write_in_place(self, lambda t: t.index_copy(dim, index, source), "index_copy_")

    def index_put_(
        self: Any, indices: Any, values: Any, accumulate: builtins.bool = False
    ) -> Tensor:
        """:meth:`index_put` in place."""
        return write_in_place(
            self, lambda t: t.index_put(indices, values, accumulate), "index_put_"
        )

    def masked_scatter_(self: Any, mask: Tensor, source: Tensor) -> Tensor:
        """:meth:`masked_scatter` in place."""
        return write_in_place(self, lambda t: t.masked_scatter(mask, source), "masked_scatter_")

    def tril_(self: Any, diagonal: builtins.int = 0) -> Tensor:
        """:meth:`tril` in place."""
        return write_in_place(self, lambda t: t.tril(diagonal), "tril_", saves_input=False)

    def triu_(self: Any, diagonal: builtins.int = 0) -> Tensor:
        """:meth:`triu` in place."""
        return write_in_place(self, lambda t: t.triu(diagonal), "triu_", saves_input=False)

    # PyTorch's remaining elementwise, math and random in-place methods (the out-of-place
    # functions they write are in ops/math_more.py, the random fills in ops/random_fill.py),
    # and the out-of-place methods and aliases they needed.
    def neg(self: Any) -> Tensor:
        """``-self`` (see :func:`minitorch_accel.neg`)."""
        return _E.neg(self)

    def negative(self: Any) -> Tensor:
        """Same as :meth:`neg`."""
        return _E.neg(self)

    def absolute(self: Any) -> Tensor:
        """Same as :meth:`abs`."""
        return _E.abs(self)

    def divide(self: Any, other: Any, *, rounding_mode: builtins.str | None = None) -> Tensor:
        """Same as :meth:`div`."""
        return _E.div(self, other, rounding_mode=rounding_mode)

    def multiply(self: Any, other: Any) -> Tensor:
        """Same as :meth:`mul`."""
        return _E.mul(self, other)

    def subtract(self: Any, other: Any, *, alpha: Any = 1) -> Tensor:
        """Same as :meth:`sub`."""
        return _E.sub(self, other, alpha=alpha)

    def arcsin(self: Any) -> Tensor:
        """Same as :meth:`asin`."""
        return _mm.asin(self)

    def arccos(self: Any) -> Tensor:
        """Same as :meth:`acos`."""
        return _mm.acos(self)

    def arctan(self: Any) -> Tensor:
        """Same as :meth:`atan`."""
        return _mm.atan(self)

    def arcsinh(self: Any) -> Tensor:
        """Same as :meth:`asinh`."""
        return _mm.asinh(self)

    def arccosh(self: Any) -> Tensor:
        """Same as :meth:`acosh`."""
        return _mm.acosh(self)

    def arctanh(self: Any) -> Tensor:
        """Same as :meth:`atanh`."""
        return _mm.atanh(self)

    def greater(self: Any, other: Any) -> Tensor:
        """Same as :meth:`gt`."""
        return _compare.gt(self, other)

    def greater_equal(self: Any, other: Any) -> Tensor:
        """Same as :meth:`ge`."""
        return _compare.ge(self, other)

    def less(self: Any, other: Any) -> Tensor:
        """Same as :meth:`lt`."""
        return _compare.lt(self, other)

    def less_equal(self: Any, other: Any) -> Tensor:
        """Same as :meth:`le`."""
        return _compare.le(self, other)

    def not_equal(self: Any, other: Any) -> Tensor:
        """Same as :meth:`ne`."""
        return _compare.ne(self, other)

    def conj_physical(self: Any) -> Tensor:
        """See :func:`minitorch_accel.conj_physical` (this tensor itself: no complex dtypes)."""
        return _mm.conj_physical(self)

    def sinc(self: Any) -> Tensor:
        """See :func:`minitorch_accel.sinc`."""
        return _mm.sinc(self)

    def deg2rad(self: Any) -> Tensor:
        """See :func:`minitorch_accel.deg2rad`."""
        return _mm.deg2rad(self)

    def rad2deg(self: Any) -> Tensor:
        """See :func:`minitorch_accel.rad2deg`."""
        return _mm.rad2deg(self)

    def addcmul(self: Any, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
        """See :func:`minitorch_accel.addcmul`."""
        return _mm.addcmul(self, tensor1, tensor2, value=value)

    def addcdiv(self: Any, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
        """See :func:`minitorch_accel.addcdiv`."""
        return _mm.addcdiv(self, tensor1, tensor2, value=value)

    def renorm(self: Any, p: Any, dim: builtins.int, maxnorm: Any) -> Tensor:
        """See :func:`minitorch_accel.renorm`."""
        return _mm.renorm(self, p, dim, maxnorm)

    def gcd(self: Any, other: Tensor) -> Tensor:
        """See :func:`minitorch_accel.gcd`."""
        return _mm.gcd(self, other)

    def lcm(self: Any, other: Tensor) -> Tensor:
        """See :func:`minitorch_accel.lcm`."""
        return _mm.lcm(self, other)

    def ldexp(self: Any, other: Tensor) -> Tensor:
        """See :func:`minitorch_accel.ldexp`."""
        return _mm.ldexp(self, other)

    def nextafter(self: Any, other: Tensor) -> Tensor:
        """See :func:`minitorch_accel.nextafter`."""
        return _mm.nextafter(self, other)

    def igamma(self: Any, other: Tensor) -> Tensor:
        """See :func:`minitorch_accel.igamma`."""
        return _mm.igamma(self, other)

    def igammac(self: Any, other: Tensor) -> Tensor:
        """See :func:`minitorch_accel.igammac`."""
        return _mm.igammac(self, other)

    def lgamma(self: Any) -> Tensor:
        """See :func:`minitorch_accel.lgamma`."""
        return _mm.lgamma(self)

    def digamma(self: Any) -> Tensor:
        """See :func:`minitorch_accel.digamma`."""
        return _mm.digamma(self)

    def polygamma(self: Any, n: builtins.int) -> Tensor:
        """See :func:`minitorch_accel.polygamma` (``n`` first there, as in PyTorch)."""
        return _mm.polygamma(n, self)

    def mvlgamma(self: Any, p: builtins.int) -> Tensor:
        """See :func:`minitorch_accel.mvlgamma`."""
        return _mm.mvlgamma(self, p)

    def i0(self: Any) -> Tensor:
        """See :func:`minitorch_accel.i0`."""
        return _mm.i0(self)

    def bernoulli(self: Any, p: Any = None, *, generator: Any = None) -> Tensor:
        """See :func:`minitorch_accel.bernoulli` (this tensor holds the probabilities)."""
        return _TS.bernoulli(self, p, generator=generator)

    def abs_(self: Any) -> Tensor:
        """:meth:`abs` in place (integers too)."""
        return write_in_place(self, _E.abs, "abs_", saves_input=False)

    def absolute_(self: Any) -> Tensor:
        """Same as :meth:`abs_`."""
        return write_in_place(self, _E.abs, "absolute_", saves_input=False)

    def neg_(self: Any) -> Tensor:
        """:meth:`neg` in place (integers too)."""
        return write_in_place(self, _E.neg, "neg_", saves_input=False)

    def negative_(self: Any) -> Tensor:
        """Same as :meth:`neg_`."""
        return write_in_place(self, _E.neg, "negative_", saves_input=False)

    def exp_(self: Any) -> Tensor:
        """:meth:`exp` in place."""
        return write_in_place(self, _E.exp, "exp_", saves_input=False)

    def log_(self: Any) -> Tensor:
        """:meth:`log` in place."""
        return write_in_place(self, _E.log, "log_")

    def log1p_(self: Any) -> Tensor:
        """:meth:`log1p` in place."""
        return write_in_place(self, _unary.log1p, "log1p_")

    def sqrt_(self: Any) -> Tensor:
        """:meth:`sqrt` in place."""
        return write_in_place(self, _E.sqrt, "sqrt_", saves_input=False)

    def rsqrt_(self: Any) -> Tensor:
        """:meth:`rsqrt` in place."""
        return write_in_place(self, _unary.rsqrt, "rsqrt_")

    def sin_(self: Any) -> Tensor:
        """:meth:`sin` in place."""
        return write_in_place(self, _unary.sin, "sin_")

    def cos_(self: Any) -> Tensor:
        """:meth:`cos` in place."""
        return write_in_place(self, _unary.cos, "cos_")

    def tan_(self: Any) -> Tensor:
        """:meth:`tan` in place."""
        return write_in_place(self, _unary.tan, "tan_")

    def arcsin_(self: Any) -> Tensor:
        """Same as :meth:`asin_`."""
        return write_in_place(self, _mm.asin, "arcsin_")

    def arccos_(self: Any) -> Tensor:
        """Same as :meth:`acos_`."""
        return write_in_place(self, _mm.acos, "arccos_")

    def arctan_(self: Any) -> Tensor:
        """Same as :meth:`atan_`."""
        return write_in_place(self, _mm.atan, "arctan_")

    def arcsinh_(self: Any) -> Tensor:
        """Same as :meth:`asinh_`."""
        return write_in_place(self, _mm.asinh, "arcsinh_")

    def arccosh_(self: Any) -> Tensor:
        """Same as :meth:`acosh_`."""
        return write_in_place(self, _mm.acosh, "arccosh_")

    def arctanh_(self: Any) -> Tensor:
        """Same as :meth:`atanh_`."""
        return write_in_place(self, _mm.atanh, "arctanh_")

    def erf_(self: Any) -> Tensor:
        """:meth:`erf` in place."""
        return write_in_place(self, _mm.erf, "erf_")

    def lgamma_(self: Any) -> Tensor:
        """:meth:`lgamma` in place."""
        return write_in_place(self, _mm.lgamma, "lgamma_")

    def digamma_(self: Any) -> Tensor:
        """:meth:`digamma` in place."""
        return write_in_place(self, _mm.digamma, "digamma_")

    def polygamma_(self: Any, n: builtins.int) -> Tensor:
        """:meth:`polygamma` in place."""
        return write_in_place(self, lambda t: _mm.polygamma(n, t), "polygamma_")

    def mvlgamma_(self: Any, p: builtins.int) -> Tensor:
        """:meth:`mvlgamma` in place."""
        return write_in_place(self, lambda t: _mm.mvlgamma(t, p), "mvlgamma_")

    def i0_(self: Any) -> Tensor:
        """:meth:`i0` in place."""
        return write_in_place(self, _mm.i0, "i0_")

    def sinc_(self: Any) -> Tensor:
        """:meth:`sinc` in place."""
        return write_in_place(self, _mm.sinc, "sinc_")

    def deg2rad_(self: Any) -> Tensor:
        """:meth:`deg2rad` in place."""
        return write_in_place(self, _mm.deg2rad, "deg2rad_")

    def rad2deg_(self: Any) -> Tensor:
        """:meth:`rad2deg` in place."""
        return write_in_place(self, _mm.rad2deg, "rad2deg_")

    def conj_physical_(self: Any) -> Tensor:
        """:meth:`conj_physical` in place: no change (there are no complex dtypes)."""
        return write_in_place(self, _mm.conj_physical, "conj_physical_", saves_input=False)

    def pow_(self: Any, exponent: Any) -> Tensor:
        """:meth:`pow` in place."""
        return write_in_place(self, lambda t: _E.pow(t, exponent), "pow_")

    def divide_(self: Any, other: Any, *, rounding_mode: builtins.str | None = None) -> Tensor:
        """Same as :meth:`div_`."""
        return self.div_(other, rounding_mode=rounding_mode)  # type: ignore[no-any-return]

    def multiply_(self: Any, other: Any) -> Tensor:
        """Same as :meth:`mul_`."""
        return self.mul_(other)  # type: ignore[no-any-return]

    def subtract_(self: Any, other: Any, *, alpha: Any = 1) -> Tensor:
        """Same as :meth:`sub_`."""
        return self.sub_(other, alpha=alpha)  # type: ignore[no-any-return]

    def heaviside_(self: Any, values: Tensor) -> Tensor:
        """:meth:`heaviside` in place."""
        step = lambda t: _mm.heaviside(t, values)  # noqa: E731
        return write_in_place(self, step, "heaviside_", saves_input=False)

    def gcd_(self: Any, other: Tensor) -> Tensor:
        """:meth:`gcd` in place."""
        return write_in_place(self, lambda t: _mm.gcd(t, other), "gcd_", saves_input=False)

    def lcm_(self: Any, other: Tensor) -> Tensor:
        """:meth:`lcm` in place."""
        return write_in_place(self, lambda t: _mm.lcm(t, other), "lcm_", saves_input=False)

    def ldexp_(self: Any, other: Tensor) -> Tensor:
        """:meth:`ldexp` in place."""
        return write_in_place(self, lambda t: _mm.ldexp(t, other), "ldexp_")

    def nextafter_(self: Any, other: Tensor) -> Tensor:
        """:meth:`nextafter` in place."""
        step = lambda t: _mm.nextafter(t, other)  # noqa: E731
        return write_in_place(self, step, "nextafter_", saves_input=False)

    def igamma_(self: Any, other: Tensor) -> Tensor:
        """:meth:`igamma` in place."""
        return write_in_place(self, lambda t: _mm.igamma(t, other), "igamma_")

    def igammac_(self: Any, other: Tensor) -> Tensor:
        """:meth:`igammac` in place."""
        return write_in_place(self, lambda t: _mm.igammac(t, other), "igammac_")

    def addcmul_(self: Any, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
        """:meth:`addcmul` in place."""
        fused = lambda t: _mm.addcmul(t, tensor1, tensor2, value=value)  # noqa: E731
        return write_in_place(self, fused, "addcmul_")

    def addcdiv_(self: Any, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
        """:meth:`addcdiv` in place."""
        fused = lambda t: _mm.addcdiv(t, tensor1, tensor2, value=value)  # noqa: E731
        return write_in_place(self, fused, "addcdiv_")

    def addmm_(self: Any, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        """:meth:`addmm` in place."""
        fused = lambda t: _P.addmm(t, mat1, mat2, beta=beta, alpha=alpha)  # noqa: E731
        return write_in_place(self, fused, "addmm_")

    def addmv_(self: Any, mat: Tensor, vec: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        """:meth:`addmv` in place."""
        fused = lambda t: _P.addmv(t, mat, vec, beta=beta, alpha=alpha)  # noqa: E731
        return write_in_place(self, fused, "addmv_")

    def addr_(self: Any, vec1: Tensor, vec2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        """:meth:`addr` in place."""
        fused = lambda t: _P.addr(t, vec1, vec2, beta=beta, alpha=alpha)  # noqa: E731
        return write_in_place(self, fused, "addr_")

    def addbmm_(self: Any, b1: Tensor, b2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        """:meth:`addbmm` in place."""
        fused = lambda t: _P.addbmm(t, b1, b2, beta=beta, alpha=alpha)  # noqa: E731
        return write_in_place(self, fused, "addbmm_")

    def baddbmm_(self: Any, b1: Tensor, b2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        """:meth:`baddbmm` in place."""
        fused = lambda t: _P.baddbmm(t, b1, b2, beta=beta, alpha=alpha)  # noqa: E731
        return write_in_place(self, fused, "baddbmm_")

    def renorm_(self: Any, p: Any, dim: builtins.int, maxnorm: Any) -> Tensor:
        """:meth:`renorm` in place."""
        return write_in_place(self, lambda t: _mm.renorm(t, p, dim, maxnorm), "renorm_")

    # the comparisons in place keep this tensor's dtype (1 or 0), with gradient 0
    def eq_(self: Any, other: Any) -> Tensor:
        """:meth:`eq` in place (1 or 0 in this tensor's dtype)."""
        test = lambda t: _mm.compared_in_place("eq", t, other)  # noqa: E731
        return write_in_place(self, test, "eq_", saves_input=False)

    def ne_(self: Any, other: Any) -> Tensor:
        """:meth:`ne` in place."""
        test = lambda t: _mm.compared_in_place("ne", t, other)  # noqa: E731
        return write_in_place(self, test, "ne_", saves_input=False)

    def lt_(self: Any, other: Any) -> Tensor:
        """:meth:`lt` in place."""
        test = lambda t: _mm.compared_in_place("lt", t, other)  # noqa: E731
        return write_in_place(self, test, "lt_", saves_input=False)

    def le_(self: Any, other: Any) -> Tensor:
        """:meth:`le` in place."""
        test = lambda t: _mm.compared_in_place("le", t, other)  # noqa: E731
        return write_in_place(self, test, "le_", saves_input=False)

    def gt_(self: Any, other: Any) -> Tensor:
        """:meth:`gt` in place."""
        test = lambda t: _mm.compared_in_place("gt", t, other)  # noqa: E731
        return write_in_place(self, test, "gt_", saves_input=False)

    def ge_(self: Any, other: Any) -> Tensor:
        """:meth:`ge` in place."""
        test = lambda t: _mm.compared_in_place("ge", t, other)  # noqa: E731
        return write_in_place(self, test, "ge_", saves_input=False)

    def greater_(self: Any, other: Any) -> Tensor:
        """Same as :meth:`gt_`."""
        test = lambda t: _mm.compared_in_place("gt", t, other)  # noqa: E731
        return write_in_place(self, test, "greater_", saves_input=False)

    def greater_equal_(self: Any, other: Any) -> Tensor:
        """Same as :meth:`ge_`."""
        test = lambda t: _mm.compared_in_place("ge", t, other)  # noqa: E731
        return write_in_place(self, test, "greater_equal_", saves_input=False)

    def less_(self: Any, other: Any) -> Tensor:
        """Same as :meth:`lt_`."""
        test = lambda t: _mm.compared_in_place("lt", t, other)  # noqa: E731
        return write_in_place(self, test, "less_", saves_input=False)

    def less_equal_(self: Any, other: Any) -> Tensor:
        """Same as :meth:`le_`."""
        test = lambda t: _mm.compared_in_place("le", t, other)  # noqa: E731
        return write_in_place(self, test, "less_equal_", saves_input=False)

    def not_equal_(self: Any, other: Any) -> Tensor:
        """Same as :meth:`ne_`."""
        test = lambda t: _mm.compared_in_place("ne", t, other)  # noqa: E731
        return write_in_place(self, test, "not_equal_", saves_input=False)

    # random fills (ops/random_fill.py): from the device's generator or ``generator``
    def uniform_(
        self: Any, from_: builtins.float = 0.0, to: builtins.float = 1.0, *, generator: Any = None
    ) -> Tensor:
        """Samples of ``U[from_, to)`` (see :func:`~minitorch_accel.ops.random_fill.uniform_`)."""
        return _rf.uniform_(self, from_, to, generator=generator)

    def normal_(
        self: Any, mean: builtins.float = 0.0, std: builtins.float = 1.0, *, generator: Any = None
    ) -> Tensor:
        """Samples of N(mean, std**2) (see :func:`~minitorch_accel.ops.random_fill.normal_`)."""
        return _rf.normal_(self, mean, std, generator=generator)

    def bernoulli_(self: Any, p: Any = 0.5, *, generator: Any = None) -> Tensor:
        """1 with probability ``p``, else 0 (see :func:`.random_fill.bernoulli_`)."""
        return _rf.bernoulli_(self, p, generator=generator)

    def random_(
        self: Any, from_: Any = _rf.UNSET, to: Any = _rf.UNSET, *, generator: Any = None
    ) -> Tensor:
        """Whole numbers, uniformly (see :func:`~minitorch_accel.ops.random_fill.random_`)."""
        return _rf.random_(self, from_, to, generator=generator)

    def exponential_(self: Any, lambd: builtins.float = 1.0, *, generator: Any = None) -> Tensor:
        """Exponential samples of rate ``lambd`` (see :func:`.random_fill.exponential_`)."""
        return _rf.exponential_(self, lambd, generator=generator)

    def cauchy_(
        self: Any,
        median: builtins.float = 0.0,
        sigma: builtins.float = 1.0,
        *,
        generator: Any = None,
    ) -> Tensor:
        """Cauchy samples (see :func:`~minitorch_accel.ops.random_fill.cauchy_`)."""
        return _rf.cauchy_(self, median, sigma, generator=generator)

    def log_normal_(
        self: Any, mean: builtins.float = 1.0, std: builtins.float = 2.0, *, generator: Any = None
    ) -> Tensor:
        """``exp(N(mean, std**2))`` samples (see :func:`.random_fill.log_normal_`)."""
        return _rf.log_normal_(self, mean, std, generator=generator)

    def geometric_(self: Any, p: builtins.float, *, generator: Any = None) -> Tensor:
        """Trials to the first success (see :func:`.random_fill.geometric_`)."""
        return _rf.geometric_(self, p, generator=generator)

    # ------------------------------------------------------------ more of PyTorch's surface
    # (the torch_surface helper: predicates, layout, aliases; ops/torch_surface.py)
    def maximum(self: Any, other: Tensor) -> Tensor:
        """See :func:`minitorch_accel.maximum`."""
        return _E.maximum(self, other)

    def minimum(self: Any, other: Tensor) -> Tensor:
        """See :func:`minitorch_accel.minimum`."""
        return _E.minimum(self, other)

    def fmax(self: Any, other: Tensor) -> Tensor:
        """See :func:`minitorch_accel.fmax`."""
        return _TS.fmax(self, other)

    def fmin(self: Any, other: Tensor) -> Tensor:
        """See :func:`minitorch_accel.fmin`."""
        return _TS.fmin(self, other)

    def is_floating_point(self: Any) -> builtins.bool:
        """See :func:`minitorch_accel.is_floating_point`."""
        return _TS.is_floating_point(self)

    def is_signed(self: Any) -> builtins.bool:
        """See :func:`minitorch_accel.is_signed`."""
        return _TS.is_signed(self)

    def is_complex(self: Any) -> builtins.bool:
        """See :func:`minitorch_accel.is_complex`."""
        return _TS.is_complex(self)

    def is_nonzero(self: Any) -> builtins.bool:
        """See :func:`minitorch_accel.is_nonzero`."""
        return _TS.is_nonzero(self)

    def is_same_size(self: Any, other: Tensor) -> builtins.bool:
        """See :func:`minitorch_accel.is_same_size`."""
        return _TS.is_same_size(self, other)

    def is_inference(self: Any) -> builtins.bool:
        """False: tensors made under :func:`~minitorch_accel.inference_mode` are not
        marked here (it works as ``no_grad``), where PyTorch returns True for them.
        """
        return False

    def is_shared(self: Any) -> builtins.bool:
        """False: there is no ``share_memory_`` here (no tensor lives in shared memory)."""
        return False

    def is_pinned(self: Any) -> builtins.bool:
        """True for a tensor :meth:`pin_memory` made (page-locked host memory)."""
        return _TS.is_pinned_array(self.array)

    def pin_memory(self: Any) -> Tensor:
        """A copy in page-locked host memory, from which GPU copies run asynchronously
        (a CPU tensor only). Without a GPU backend that can pin memory it raises
        RuntimeError, as PyTorch does without an accelerator.
        """
        return _TS.pin_memory(self)

    def data_ptr(self: Any) -> builtins.int:
        """The address of the first element (bytes, as PyTorch)."""
        return _TS.data_address(self.array)

    def stride(self: Any, dim: builtins.int | None = None) -> Any:
        """The steps between neighbours of each dim, in elements (one dim's with
        ``dim``): the backend array's strides divided by the element size.

        Examples
        --------
        >>> import minitorch_accel as mta
        >>> x = mta.zeros(2, 3)
        >>> x.stride(), x.t().stride(), x.stride(-1)
        ((3, 1), (1, 3), 1)
        """
        strides = _TS.strides_in_elements(self.array)
        if dim is None:
            return strides
        return strides[_S.normalize_dim(dim, builtins.max(self.ndim, 1), "stride")]

    def storage_offset(self: Any) -> builtins.int:
        """How many elements this view starts after its storage's start.

        Examples
        --------
        >>> import minitorch_accel as mta
        >>> mta.arange(6).view(2, 3)[1, 1:].storage_offset()
        4
        """
        return _TS.storage_offset_of(self.array)

    def get_device(self: Any) -> builtins.int:
        """The GPU index, or -1 on the CPU (also for the virtual ``cpu:N``)."""
        return -1 if self.is_cpu else builtins.int(self.device.index or 0)

    @property
    def itemsize(self: Any) -> builtins.int:
        """Bytes per element (as :meth:`element_size`)."""
        return builtins.int(self.array.itemsize)

    def select(self: Any, dim: builtins.int, index: builtins.int) -> Tensor:
        """See :func:`minitorch_accel.select`."""
        return _TS.select(self, dim, index)

    def unfold(
        self: Any, dimension: builtins.int, size: builtins.int, step: builtins.int
    ) -> Tensor:
        """Every window of ``size`` elements along ``dimension``, ``step`` apart: that dim
        becomes the window count and a last dim of ``size`` is added. A copy here
        (PyTorch returns a view); the gradient is the same.

        Examples
        --------
        >>> import minitorch_accel as mta
        >>> mta.arange(5).unfold(0, 2, 2)
        tensor([[0, 1],
                [2, 3]])
        """
        return _TS.unfold(self, dimension, size, step)

    def narrow_copy(
        self: Any, dim: builtins.int, start: builtins.int, length: builtins.int
    ) -> Tensor:
        """See :func:`minitorch_accel.narrow_copy`."""
        return _TS.narrow_copy(self, dim, start, length)

    def split_with_sizes(
        self: Any, split_sizes: Sequence[builtins.int], dim: builtins.int = 0
    ) -> tuple[Tensor, ...]:
        """See :func:`minitorch_accel.split_with_sizes`."""
        return _TS.split_with_sizes(self, split_sizes, dim)

    def diagflat(self: Any, offset: builtins.int = 0) -> Tensor:
        """See :func:`minitorch_accel.diagflat`."""
        return _TS.diagflat(self, offset)

    def dist(self: Any, other: Tensor, p: Any = 2) -> Tensor:
        """See :func:`minitorch_accel.dist`."""
        return _TS.dist(self, other, p)

    def msort(self: Any) -> Tensor:
        """See :func:`minitorch_accel.msort`."""
        return _TS.msort(self)

    def where(self: Any, condition: Tensor, y: Any) -> Tensor:
        """``self`` where ``condition`` holds, else ``y`` (``where(condition, self, y)``)."""
        return _E.where(condition, self, y)

    def sum_to_size(self: Any, *size: Any) -> Tensor:
        """Sum the broadcast dims away, down to ``size`` (to which this tensor must be
        expandable): the reverse of :meth:`expand`.

        Examples
        --------
        >>> import minitorch_accel as mta
        >>> mta.ones(2, 3).sum_to_size(1, 3)
        tensor([[2., 2., 2.]])
        """
        return _TS.sum_to_size(self, *size)

    def new(self: Any, *args: Any, device: Any = None) -> Tensor:
        """PyTorch's legacy ``x.new(...)``: ``new()`` empty, ``new(*sizes)`` zeros of that
        shape (PyTorch leaves them uninitialized), ``new(data)`` the values, each with
        this tensor's dtype and (unless ``device``) device.

        Examples
        --------
        >>> import minitorch_accel as mta
        >>> x = mta.zeros(1, dtype=mta.float64)
        >>> x.new(2, 3).shape, x.new([1, 2]).dtype, x.new().shape
        ((2, 3), dtype('float64'), (0,))
        """
        return _TS.legacy_new(self, args, device)

    @property
    def H(self: Any) -> Tensor:  # noqa: N802  (PyTorch's name)
        """The conjugate transpose of a matrix (a 0-d tensor unchanged, with PyTorch's
        deprecation warning); for real tensors the transpose.
        """
        return _TS.conj_transpose(self)

    @property
    def mH(self: Any) -> Tensor:  # noqa: N802  (PyTorch's name)
        """The conjugate transpose of the last two dims (of a batch of matrices)."""
        return _TS.adjoint(self)

    def adjoint(self: Any) -> Tensor:
        """See :attr:`mH`."""
        return _TS.adjoint(self)

    def conj(self: Any) -> Tensor:
        """The complex conjugate: ``self`` itself, as PyTorch for a real tensor (tensors
        here are never complex).
        """
        return self  # type: ignore[no-any-return]

    def resolve_conj(self: Any) -> Tensor:
        """``self``: there are no lazy conjugate views here (see :meth:`is_conj`)."""
        return self  # type: ignore[no-any-return]

    def resolve_neg(self: Any) -> Tensor:
        """``self``: there are no lazy negative views here (see :meth:`is_neg`)."""
        return self  # type: ignore[no-any-return]

    def is_conj(self: Any) -> builtins.bool:
        """False: :meth:`conj` never returns a lazy view here."""
        return False

    def is_neg(self: Any) -> builtins.bool:
        """False: no op returns a lazy negative view here."""
        return False

    def cov(
        self: Any,
        *,
        correction: builtins.int = 1,
        fweights: Tensor | None = None,
        aweights: Tensor | None = None,
    ) -> Tensor:
        """See :func:`minitorch_accel.cov`."""
        return _TS.cov(self, correction=correction, fweights=fweights, aweights=aweights)

    def corrcoef(self: Any) -> Tensor:
        """See :func:`minitorch_accel.corrcoef`."""
        return _TS.corrcoef(self)

    def prelu(self: Any, weight: Tensor) -> Tensor:
        """See :func:`minitorch_accel.prelu`."""
        return _AM.prelu(self, weight)

    def hardshrink(self: Any, lambd: builtins.float = 0.5) -> Tensor:
        """See :func:`minitorch_accel.nn.functional.hardshrink`."""
        return _AM.hardshrink(self, lambd)

    def register_post_accumulate_grad_hook(self: Any, hook: Callable[[Tensor], None]) -> Any:
        """Call ``hook(self)`` after backward has accumulated this leaf's gradient into
        ``.grad`` (for optimizers that step inside backward). Returns a handle whose
        ``remove()`` takes the hook away. Leaves that require grad only, as PyTorch.

        Examples
        --------
        >>> import minitorch_accel as mta
        >>> w = mta.ones(2, requires_grad=True)
        >>> seen = []
        >>> handle = w.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.tolist()))
        >>> (w * 3).sum().backward()
        >>> seen
        [[3.0, 3.0]]
        """
        return _TS.register_post_accumulate_grad_hook(self, hook)

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
        return _E.mul(_E.div(1, self), other)  # PyTorch's: reciprocal(self) * other

    def __pow__(self: Any, exponent: Any) -> Tensor:
        return _E.pow(self, exponent)

    def __rpow__(self: Any, base: Any) -> Tensor:
        return _E.pow(base, self)

    def __matmul__(self: Any, other: Tensor) -> Tensor:
        return _M.matmul(self, other)

    def __rmatmul__(self: Any, other: Tensor) -> Tensor:
        return _M.matmul(other, self)

    def __neg__(self: Any) -> Tensor:
        return _E.Neg.apply(self)

    def __abs__(self: Any) -> Tensor:
        return _E.abs(self)

    def __invert__(self: Any) -> Tensor:
        return _bit.bitwise_not(self)

    def __and__(self: Any, other: Any) -> Tensor:
        return _bit.bitwise_and(self, other)

    def __rand__(self: Any, other: Any) -> Tensor:
        return _bit.bitwise_and(other, self)

    def __iand__(self: Any, other: Any) -> Tensor:
        return self.bitwise_and_(other)  # type: ignore[no-any-return]

    def __or__(self: Any, other: Any) -> Tensor:
        return _bit.bitwise_or(self, other)

    def __ror__(self: Any, other: Any) -> Tensor:
        return _bit.bitwise_or(other, self)

    def __ior__(self: Any, other: Any) -> Tensor:
        return self.bitwise_or_(other)  # type: ignore[no-any-return]

    def __xor__(self: Any, other: Any) -> Tensor:
        return _bit.bitwise_xor(self, other)

    def __rxor__(self: Any, other: Any) -> Tensor:
        return _bit.bitwise_xor(other, self)

    def __ixor__(self: Any, other: Any) -> Tensor:
        return self.bitwise_xor_(other)  # type: ignore[no-any-return]

    def __lshift__(self: Any, other: Any) -> Tensor:
        return _bit.bitwise_left_shift(self, other)

    def __rlshift__(self: Any, other: Any) -> Tensor:
        return _bit.bitwise_left_shift(other, self)

    def __ilshift__(self: Any, other: Any) -> Tensor:
        return self.bitwise_left_shift_(other)  # type: ignore[no-any-return]

    def __rshift__(self: Any, other: Any) -> Tensor:
        return _bit.bitwise_right_shift(self, other)

    def __rrshift__(self: Any, other: Any) -> Tensor:
        return _bit.bitwise_right_shift(other, self)

    def __irshift__(self: Any, other: Any) -> Tensor:
        return self.bitwise_right_shift_(other)  # type: ignore[no-any-return]

    def __floordiv__(self: Any, other: Any) -> Tensor:
        return _bit.floor_divide(self, other)

    def __rfloordiv__(self: Any, other: Any) -> Tensor:
        return _bit.floor_divide(other, self)

    def __ifloordiv__(self: Any, other: Any) -> Tensor:
        return self.floor_divide_(other)  # type: ignore[no-any-return]

    def __mod__(self: Any, other: Any) -> Tensor:
        return _bit.remainder(self, other)

    def __rmod__(self: Any, other: Any) -> Tensor:
        return _bit.remainder(other, self)

    def __imod__(self: Any, other: Any) -> Tensor:
        return self.remainder_(other)  # type: ignore[no-any-return]

    # Anything but a Tensor, a number or an array gives NotImplemented, so that Python
    # falls back to identity as PyTorch does: ``t == [1, 2]`` is False, ``t < [1]`` a
    # TypeError.
    def __eq__(self: Any, other: object) -> Any:
        return _E.eq(self, other) if _compare.comparable(other) else NotImplemented

    def __ne__(self: Any, other: object) -> Any:
        return _E.ne(self, other) if _compare.comparable(other) else NotImplemented

    def __lt__(self: Any, other: Any) -> Any:
        return _E.lt(self, other) if _compare.comparable(other) else NotImplemented

    def __le__(self: Any, other: Any) -> Any:
        return _E.le(self, other) if _compare.comparable(other) else NotImplemented

    def __gt__(self: Any, other: Any) -> Any:
        return _E.gt(self, other) if _compare.comparable(other) else NotImplemented

    def __ge__(self: Any, other: Any) -> Any:
        return _E.ge(self, other) if _compare.comparable(other) else NotImplemented

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

    def clamp(self: Any, min: Any = None, max: Any = None) -> Tensor:
        """See :func:`minitorch_accel.clamp`."""
        return _E.clamp(self, min, max)

    def matmul(self: Any, other: Tensor) -> Tensor:
        """See :func:`minitorch_accel.matmul`."""
        return _M.matmul(self, other)

    # products and linear algebra (ops/products.py, ops/linalg.py)
    def mm(self: Any, mat2: Tensor) -> Tensor:
        """See :func:`minitorch_accel.mm`."""
        return _P.mm(self, mat2)

    def bmm(self: Any, mat2: Tensor) -> Tensor:
        """See :func:`minitorch_accel.bmm`."""
        return _P.bmm(self, mat2)

    def mv(self: Any, vec: Tensor) -> Tensor:
        """See :func:`minitorch_accel.mv`."""
        return _P.mv(self, vec)

    def dot(self: Any, other: Tensor) -> Tensor:
        """See :func:`minitorch_accel.dot`."""
        return _P.dot(self, other)

    def vdot(self: Any, other: Tensor) -> Tensor:
        """See :func:`minitorch_accel.vdot`."""
        return _P.vdot(self, other)

    def inner(self: Any, other: Tensor) -> Tensor:
        """See :func:`minitorch_accel.inner`."""
        return _P.inner(self, other)

    def outer(self: Any, vec2: Tensor) -> Tensor:
        """See :func:`minitorch_accel.outer`."""
        return _P.outer(self, vec2)

    def ger(self: Any, vec2: Tensor) -> Tensor:
        """See :func:`minitorch_accel.outer`."""
        return _P.outer(self, vec2)

    def addmm(self: Any, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        """See :func:`minitorch_accel.addmm`."""
        return _P.addmm(self, mat1, mat2, beta=beta, alpha=alpha)

    def addmv(self: Any, mat: Tensor, vec: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        """See :func:`minitorch_accel.addmv`."""
        return _P.addmv(self, mat, vec, beta=beta, alpha=alpha)

    def addr(self: Any, vec1: Tensor, vec2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        """See :func:`minitorch_accel.addr`."""
        return _P.addr(self, vec1, vec2, beta=beta, alpha=alpha)

    def baddbmm(self: Any, b1: Tensor, b2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        """See :func:`minitorch_accel.baddbmm`."""
        return _P.baddbmm(self, b1, b2, beta=beta, alpha=alpha)

    def addbmm(self: Any, b1: Tensor, b2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        """See :func:`minitorch_accel.addbmm`."""
        return _P.addbmm(self, b1, b2, beta=beta, alpha=alpha)

    def kron(self: Any, other: Tensor) -> Tensor:
        """See :func:`minitorch_accel.kron`."""
        return _P.kron(self, other)

    def cross(self: Any, other: Tensor, dim: builtins.int | None = None) -> Tensor:
        """See :func:`minitorch_accel.cross`."""
        return _P.cross(self, other, dim)

    def det(self: Any) -> Tensor:
        """See :func:`minitorch_accel.linalg.det`."""
        return _LA.det(self)

    def logdet(self: Any) -> Tensor:
        """See :func:`minitorch_accel.logdet`."""
        return _LA.logdet(self)

    def slogdet(self: Any) -> Any:
        """See :func:`minitorch_accel.linalg.slogdet`."""
        return _LA.slogdet(self)

    def inverse(self: Any) -> Tensor:
        """See :func:`minitorch_accel.linalg.inv`."""
        return _LA.inv(self)

    def pinverse(self: Any, rcond: builtins.float = 1e-15) -> Tensor:
        """See :func:`minitorch_accel.linalg.pinv` (``rcond`` is its ``rtol``)."""
        return _LA.pinverse(self, rcond)

    def matrix_power(self: Any, n: builtins.int) -> Tensor:
        """See :func:`minitorch_accel.linalg.matrix_power`."""
        return _LA.matrix_power(self, n)

    def cholesky(self: Any, upper: builtins.bool = False) -> Tensor:
        """See :func:`minitorch_accel.linalg.cholesky`."""
        return _LA.cholesky(self, upper=upper)

    def sum(
        self: Any, dim: Any = None, keepdim: builtins.bool = False, *, dtype: Any = None
    ) -> Tensor:
        """See :func:`minitorch_accel.sum`."""
        return _R.sum(self, dim, keepdim, dtype=dtype)

    def mean(
        self: Any, dim: Any = None, keepdim: builtins.bool = False, *, dtype: Any = None
    ) -> Tensor:
        """See :func:`minitorch_accel.mean`."""
        return _R.mean(self, dim, keepdim, dtype=dtype)

    def var(
        self: Any,
        dim: Any = None,
        unbiased: builtins.bool | None = None,
        keepdim: builtins.bool = False,
        *,
        correction: builtins.float | None = None,
    ) -> Tensor:
        """See :func:`minitorch_accel.var`: ``(dim, unbiased, keepdim)`` or ``correction=``."""
        return _R.var(self, dim, unbiased, keepdim, correction=correction)

    def std(
        self: Any,
        dim: Any = None,
        unbiased: builtins.bool | None = None,
        keepdim: builtins.bool = False,
        *,
        correction: builtins.float | None = None,
    ) -> Tensor:
        """See :func:`minitorch_accel.std`: ``(dim, unbiased, keepdim)`` or ``correction=``."""
        return _R.std(self, dim, unbiased, keepdim, correction=correction)

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

    def softmax(self: Any, dim: builtins.int, dtype: Any = None) -> Tensor:
        """See :func:`minitorch_accel.softmax` (``dim`` required, as PyTorch's method)."""
        return _R.softmax(self, dim, dtype=dtype)

    def log_softmax(self: Any, dim: builtins.int, dtype: Any = None) -> Tensor:
        """See :func:`minitorch_accel.log_softmax` (``dim`` required, as PyTorch's method)."""
        return _R.log_softmax(self, dim, dtype=dtype)

    def any(self: Any, dim: Any = None, keepdim: builtins.bool = False) -> Tensor:
        """See :func:`minitorch_accel.any`."""
        return _R.any(self, dim, keepdim)

    def all(self: Any, dim: Any = None, keepdim: builtins.bool = False) -> Tensor:
        """See :func:`minitorch_accel.all`."""
        return _R.all(self, dim, keepdim)

    def prod(
        self: Any,
        dim: builtins.int | None = None,
        keepdim: builtins.bool = False,
        *,
        dtype: Any = None,
    ) -> Tensor:
        """See :func:`minitorch_accel.prod`."""
        return _RM.prod(self, dim, keepdim, dtype)

    def nansum(
        self: Any, dim: Any = None, keepdim: builtins.bool = False, *, dtype: Any = None
    ) -> Tensor:
        """See :func:`minitorch_accel.nansum`."""
        return _RM.nansum(self, dim, keepdim, dtype=dtype)

    def nanmean(
        self: Any, dim: Any = None, keepdim: builtins.bool = False, *, dtype: Any = None
    ) -> Tensor:
        """See :func:`minitorch_accel.nanmean`."""
        return _RM.nanmean(self, dim, keepdim, dtype=dtype)

    def count_nonzero(self: Any, dim: Any = None) -> Tensor:
        """See :func:`minitorch_accel.count_nonzero`."""
        return _RM.count_nonzero(self, dim)

    def aminmax(
        self: Any, *, dim: builtins.int | None = None, keepdim: builtins.bool = False
    ) -> Any:
        """See :func:`minitorch_accel.aminmax`: named ``(min, max)``."""
        return _RM.aminmax(self, dim=dim, keepdim=keepdim)

    # ---------------------------------------------------------------- shape methods
    def reshape(self: Any, *shape: Any) -> Tensor:
        """See :func:`minitorch_accel.reshape`."""
        return _S.reshape(self, *shape)

    def view(self: Any, *shape: Any) -> Tensor:
        """See :func:`minitorch_accel.ops.shape.view`: always a view, or an error."""
        return _S.view(self, *shape)

    def contiguous(self: Any) -> Tensor:
        """See :func:`minitorch_accel.ops.shape.contiguous`."""
        return _S.contiguous(self)

    def is_contiguous(self: Any) -> builtins.bool:
        """See :func:`minitorch_accel.ops.shape.is_contiguous`."""
        return _S.is_contiguous(self)

    def flip(self: Any, *dims: Any) -> Tensor:
        """See :func:`minitorch_accel.flip` (``dims`` as varargs or one sequence)."""
        return _SM.flip(self, dims[0] if len(dims) == 1 else dims)

    def fliplr(self: Any) -> Tensor:
        """See :func:`minitorch_accel.fliplr`."""
        return _SM.fliplr(self)

    def flipud(self: Any) -> Tensor:
        """See :func:`minitorch_accel.flipud`."""
        return _SM.flipud(self)

    def roll(self: Any, shifts: Any, dims: Any = None) -> Tensor:
        """See :func:`minitorch_accel.roll`."""
        return _SM.roll(self, shifts, dims)

    def rot90(self: Any, k: builtins.int = 1, dims: Any = (0, 1)) -> Tensor:
        """See :func:`minitorch_accel.rot90`."""
        return _SM.rot90(self, k, dims)

    def tril(self: Any, diagonal: builtins.int = 0) -> Tensor:
        """See :func:`minitorch_accel.tril`."""
        return _SM.tril(self, diagonal)

    def triu(self: Any, diagonal: builtins.int = 0) -> Tensor:
        """See :func:`minitorch_accel.triu`."""
        return _SM.triu(self, diagonal)

    def diag(self: Any, diagonal: builtins.int = 0) -> Tensor:
        """See :func:`minitorch_accel.diag`."""
        return _SM.diag(self, diagonal)

    def diagonal(
        self: Any, offset: builtins.int = 0, dim1: builtins.int = 0, dim2: builtins.int = 1
    ) -> Tensor:
        """See :func:`minitorch_accel.diagonal`."""
        return _SM.diagonal(self, offset, dim1, dim2)

    def diag_embed(
        self: Any, offset: builtins.int = 0, dim1: builtins.int = -2, dim2: builtins.int = -1
    ) -> Tensor:
        """See :func:`minitorch_accel.diag_embed`."""
        return _SM.diag_embed(self, offset, dim1, dim2)

    def trace(self: Any) -> Tensor:
        """See :func:`minitorch_accel.trace`."""
        return _SM.trace(self)

    def movedim(self: Any, source: Any, destination: Any) -> Tensor:
        """See :func:`minitorch_accel.movedim`."""
        return _SM.movedim(self, source, destination)

    def moveaxis(self: Any, source: Any, destination: Any) -> Tensor:
        """See :func:`minitorch_accel.moveaxis`."""
        return _SM.movedim(self, source, destination)

    def swapaxes(self: Any, axis0: builtins.int, axis1: builtins.int) -> Tensor:
        """See :func:`minitorch_accel.swapaxes`."""
        return _SM.swapaxes(self, axis0, axis1)

    def swapdims(self: Any, dim0: builtins.int, dim1: builtins.int) -> Tensor:
        """See :func:`minitorch_accel.swapdims`."""
        return _SM.swapdims(self, dim0, dim1)

    def narrow(self: Any, dim: builtins.int, start: Any, length: builtins.int) -> Tensor:
        """See :func:`minitorch_accel.narrow`."""
        return _SM.narrow(self, dim, start, length)

    def ravel(self: Any) -> Tensor:
        """See :func:`minitorch_accel.ravel`."""
        return _SM.ravel(self)

    def tile(self: Any, *dims: Any) -> Tensor:
        """See :func:`minitorch_accel.tile` (``dims`` as varargs or one sequence)."""
        return _SM.tile(
            self, dims[0] if len(dims) == 1 and not isinstance(dims[0], builtins.int) else dims
        )

    def broadcast_to(self: Any, size: Any) -> Tensor:
        """See :func:`minitorch_accel.broadcast_to`."""
        return _SM.broadcast_to(self, size)

    def tensor_split(
        self: Any, indices_or_sections: Any, dim: builtins.int = 0
    ) -> tuple[Tensor, ...]:
        """See :func:`minitorch_accel.tensor_split`."""
        return _split.tensor_split(self, indices_or_sections, dim)

    def unbind(self: Any, dim: builtins.int = 0) -> tuple[Tensor, ...]:
        """See :func:`minitorch_accel.unbind`."""
        return _split.unbind(self, dim)

    def vsplit(self: Any, indices_or_sections: Any) -> tuple[Tensor, ...]:
        """See :func:`minitorch_accel.vsplit`."""
        return _split.vsplit(self, indices_or_sections)

    def hsplit(self: Any, indices_or_sections: Any) -> tuple[Tensor, ...]:
        """See :func:`minitorch_accel.hsplit`."""
        return _split.hsplit(self, indices_or_sections)

    def dsplit(self: Any, indices_or_sections: Any) -> tuple[Tensor, ...]:
        """See :func:`minitorch_accel.dsplit`."""
        return _split.dsplit(self, indices_or_sections)

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

    def squeeze(self: Any, dim: Any = None) -> Tensor:
        """See :func:`minitorch_accel.squeeze`."""
        return _S.squeeze(self, dim)

    def unsqueeze(self: Any, dim: builtins.int) -> Tensor:
        """See :func:`minitorch_accel.unsqueeze`."""
        return _S.unsqueeze(self, dim)

    def __setitem__(self: Any, index: Any, value: Any) -> None:
        if self._records(value):
            if not isinstance(value, Tensor):
                value = Tensor._from_data(value, dtype=self.dtype)
            before = self._history(copy=False)
            put = _S.IndexPut.apply(before, value.to(self.device), index=_S.raw_index(index))
            self._rebase(put)
            return
        self._check_inplace()
        value = self._as_data(value)
        with self.device.guard():
            self.array[_S.raw_index(index)] = value

    # In-place shape/view changes, the graph-cutting detach_, and the rest of PyTorch's
    # in-place methods (see minitorch_accel.ops.inplace_shape). Not here: set_ (a
    # tensor's storage is its array) and the sparse ones (no sparse tensors).
    def unsqueeze_(self: Any, dim: builtins.int) -> Tensor:
        """:meth:`unsqueeze` in place: the same tensor gets the new shape (see
        :func:`~minitorch_accel.ops.inplace_shape.view_in_place`).

        Examples
        --------
        >>> import minitorch_accel as mta
        >>> x = mta.zeros(2, 3)
        >>> x.unsqueeze_(0) is x, x.shape
        (True, (1, 2, 3))
        """
        from . import inplace_shape as _IS

        return _IS.view_in_place(self, lambda t: _S.unsqueeze(t, dim), "unsqueeze_")

    def squeeze_(self: Any, dim: Any = None) -> Tensor:
        """:meth:`squeeze` in place (``dim`` an int, a tuple of ints or None)."""
        from . import inplace_shape as _IS

        return _IS.view_in_place(self, lambda t: _S.squeeze(t, dim), "squeeze_")

    def t_(self: Any) -> Tensor:
        """:meth:`t` in place (at most 2 dims)."""
        from . import inplace_shape as _IS

        return _IS.t_(self)

    def transpose_(self: Any, dim0: builtins.int, dim1: builtins.int) -> Tensor:
        """:meth:`transpose` in place."""
        from . import inplace_shape as _IS

        return _IS.view_in_place(self, lambda t: _S.transpose(t, dim0, dim1), "transpose_")

    def swapaxes_(self: Any, axis0: builtins.int, axis1: builtins.int) -> Tensor:
        """:meth:`swapaxes` in place (as :meth:`transpose_`)."""
        from . import inplace_shape as _IS

        return _IS.view_in_place(self, lambda t: _S.transpose(t, axis0, axis1), "swapaxes_")

    def swapdims_(self: Any, dim0: builtins.int, dim1: builtins.int) -> Tensor:
        """:meth:`swapdims` in place (as :meth:`transpose_`)."""
        from . import inplace_shape as _IS

        return _IS.view_in_place(self, lambda t: _S.transpose(t, dim0, dim1), "swapdims_")

    def detach_(self: Any) -> Tensor:
        """See :func:`minitorch_accel.ops.inplace_shape.detach_`."""
        from . import inplace_shape as _IS

        return _IS.detach_(self)

    def resize_(self: Any, *sizes: Any, memory_format: Any = None) -> Tensor:
        """See :func:`minitorch_accel.ops.inplace_shape.resize_` (always row-major:
        ``memory_format`` is accepted and ignored).
        """
        from . import inplace_shape as _IS

        return _IS.resize_(self, *sizes)

    def resize_as_(self: Any, tensor: Tensor, memory_format: Any = None) -> Tensor:
        """:meth:`resize_` to ``tensor``'s shape."""
        from . import inplace_shape as _IS

        return _IS.resize_(self, tuple(tensor.shape))

    def as_strided_(
        self: Any,
        size: Sequence[builtins.int],
        stride: Sequence[builtins.int],
        storage_offset: Any = None,
    ) -> Tensor:
        """See :func:`minitorch_accel.ops.inplace_shape.as_strided_`."""
        from . import inplace_shape as _IS

        return _IS.as_strided_(self, size, stride, storage_offset)

    def share_memory_(self: Any) -> Tensor:
        """Return this tensor: PyTorch moves a CPU tensor's storage into shared memory
        for its worker processes; here memory stays where it is (the DataLoader's
        workers send batches back through pipes).

        Examples
        --------
        >>> import minitorch_accel as mta
        >>> x = mta.zeros(2)
        >>> x.share_memory_() is x
        True
        """
        return self  # type: ignore[no-any-return]

    def fill_diagonal_(self: Any, fill_value: Any, wrap: builtins.bool = False) -> Tensor:
        """See :func:`minitorch_accel.ops.inplace_shape.fill_diagonal_`."""
        from . import inplace_shape as _IS

        return _IS.fill_diagonal_(self, fill_value, wrap)

    def put_(self: Any, index: Tensor, source: Tensor, accumulate: builtins.bool = False) -> Tensor:
        """See :func:`minitorch_accel.ops.inplace_shape.put_`."""
        from . import inplace_shape as _IS

        return _IS.put_(self, index, source, accumulate)

    def index_reduce_(
        self: Any,
        dim: builtins.int,
        index: Tensor,
        source: Tensor,
        reduce: builtins.str,
        *,
        include_self: builtins.bool = True,
    ) -> Tensor:
        """See :func:`minitorch_accel.ops.inplace_shape.index_reduce_`."""
        from . import inplace_shape as _IS

        return _IS.index_reduce_(self, dim, index, source, reduce, include_self)

    def apply_(self: Any, callable: Callable[[Any], Any]) -> Tensor:
        """See :func:`minitorch_accel.ops.inplace_shape.apply_` (CPU only)."""
        from . import inplace_shape as _IS

        return _IS.apply_(self, callable)

    def map_(self: Any, tensor: Tensor, callable: Callable[[Any, Any], Any]) -> Tensor:
        """See :func:`minitorch_accel.ops.inplace_shape.map_` (CPU only)."""
        from . import inplace_shape as _IS

        return _IS.map_(self, tensor, callable)

    def map2_(self: Any, x: Tensor, y: Tensor, callable: Callable[[Any, Any, Any], Any]) -> Tensor:
        """See :func:`minitorch_accel.ops.inplace_shape.map2_` (CPU only)."""
        from . import inplace_shape as _IS

        return _IS.map2_(self, x, y, callable)


def write_in_place(
    target: Any, compute: Callable[[Tensor], Tensor], op: str, saves_input: bool = True
) -> Tensor:
    """Make ``target`` hold ``compute(target)``: the steps of an in-place op.

    ``compute`` runs out of place and ``copy_`` writes its result (recorded by autograd,
    with its checks and version counter). While autograd records, an op that keeps its
    input for backward (``saves_input``) reads a copy of ``target``: writing the result
    must not change what it saved. That is known before the op when ``target`` has a
    history; when only an argument requires grad, the op runs again on a copy (the
    plain case, where nothing records, runs once on ``target``). A result whose dtype
    ``target`` cannot hold without losing it (float into int) is refused, as in PyTorch.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> x = mta.tensor([-1.0, 2.0])
    >>> write_in_place(x, lambda t: t * 2, "double_") is x, x.tolist()
    (True, [-2.0, 4.0])
    """
    records = saves_input and is_grad_enabled()
    copy = records and target.requires_grad and target.grad_fn is not None
    result = compute(target.clone() if copy else target)
    if records and not copy and result.requires_grad:  # an argument requires grad
        result = compute(target.clone())
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
