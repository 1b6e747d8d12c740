"""Shapes of 2-D convolution and pooling, validated: pure Python, shared by the ops'
reference code and the backends' fast paths.

:func:`conv_geometry` and :func:`pool_geometry` check a call's shapes and
hyper-parameters (the error messages name them) and return a frozen record with the
output shape; both are cached by their arguments, since a training step asks for the
same few geometries over and over. :func:`window` is the strided view that holds one
kernel tap of every window.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

Array = Any
"""A NumPy or CuPy ndarray (the backends share no common static type)."""

IntPair = int | tuple[int, int]
"""An int used for both spatial dimensions, or an (height, width) pair."""

_CHANNELS_LAST_MIN = 8  # channels per group from which channels-last cols copy faster


def pair(value: IntPair, name: str) -> tuple[int, int]:
    """Return ``value`` as an (height, width) pair of ints; ``name`` is used in errors."""
    if isinstance(value, int):
        return (value, value)
    if len(value) != 2:
        raise ValueError(f"{name} must be an int or a pair of ints, got {value!r}")
    return (int(value[0]), int(value[1]))


def window(x: Array, i: int, j: int, stride: tuple[int, int], out_hw: tuple[int, int]) -> Array:
    """The view ``x[:, :, i::sh, j::sw]`` cut to ``out_hw``: offset (i, j) of every window."""
    (sh, sw), (oh, ow) = stride, out_hw
    return x[:, :, i : i + sh * (oh - 1) + 1 : sh, j : j + sw * (ow - 1) + 1 : sw]


@dataclass(frozen=True)
class ConvGeometry:
    """Shapes and hyper-parameters of one 2-D convolution, validated."""

    x_shape: tuple[int, int, int, int]
    w_shape: tuple[int, int, int, int]
    stride: tuple[int, int]
    padding: tuple[int, int]
    dilation: tuple[int, int]
    groups: int
    #: K ordered (c, kh, kw), the weight's own memory order, instead of (kh, kw, c):
    #: the GPU's im2col kernel writes either, and this order needs no weight reordering
    #: (the CPU's strided im2col copies whole channel runs, so it keeps (kh, kw, c)).
    channel_major_k: bool = False

    @functools.cached_property
    def out_hw(self) -> tuple[int, int]:
        """Output height and width."""
        (_, _, h, w), (_, _, kh, kw) = self.x_shape, self.w_shape
        (sh, sw), (ph, pw), (dh, dw) = self.stride, self.padding, self.dilation
        return (
            (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1,
            (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1,
        )

    @functools.cached_property
    def rows(self) -> int:
        """GEMM rows M = N * OH * OW."""
        oh, ow = self.out_hw
        return self.x_shape[0] * oh * ow

    @property
    def channels_last(self) -> bool:  # not cached: tests change the threshold
        """Whether ``cols`` is (M, K) channels-last rather than (K, M) kernel-major."""
        return self.w_shape[1] >= _CHANNELS_LAST_MIN

    @functools.cached_property
    def y_shape(self) -> tuple[int, int, int, int]:
        """Output shape (N, O, OH, OW)."""
        return (self.x_shape[0], self.w_shape[0], *self.out_hw)


def conv_geometry(
    x_shape: tuple[int, ...],
    w_shape: tuple[int, ...],
    stride: IntPair,
    padding: IntPair,
    dilation: IntPair,
    groups: int,
    channel_major_k: bool = False,
) -> ConvGeometry:
    """Validate a conv2d call and return its :class:`ConvGeometry`.

    Raises
    ------
    ValueError
        Non-4-D input or weight, channel mismatch, groups not dividing the channels,
        stride or dilation <= 0, negative padding, or a kernel larger than the padded
        input; the message names the shapes.

    Notes
    -----
    The result is cached by its arguments: a training step asks for the same few
    geometries over and over (forward, three gradients, every step).
    """
    return _conv_geometry(
        tuple(x_shape),
        tuple(w_shape),
        hashable(stride),
        hashable(padding),
        hashable(dilation),
        groups,
        channel_major_k,
    )


def hashable(value: Any) -> Any:
    """``value`` with lists made tuples, so that it can key a cache."""
    return tuple(value) if isinstance(value, list) else value


@functools.lru_cache(maxsize=256)
def _conv_geometry(
    x_shape: tuple[int, ...],
    w_shape: tuple[int, ...],
    stride: IntPair,
    padding: IntPair,
    dilation: IntPair,
    groups: int,
    channel_major_k: bool,
) -> ConvGeometry:
    where = f"conv2d: input {tuple(x_shape)}, weight {tuple(w_shape)}"
    if len(x_shape) != 4 or len(w_shape) != 4:
        raise ValueError(f"{where}: input and weight must be 4-D (N, C, H, W), (O, C/g, KH, KW)")
    s, p, d = pair(stride, "stride"), pair(padding, "padding"), pair(dilation, "dilation")
    if min(s) <= 0 or min(d) <= 0:
        raise ValueError(f"{where}: stride {s} and dilation {d} must be positive")
    if min(p) < 0:
        raise ValueError(f"{where}: padding {p} must not be negative")
    if groups <= 0 or x_shape[1] % groups or w_shape[0] % groups:
        raise ValueError(
            f"{where}: groups={groups} must divide in_channels {x_shape[1]} "
            f"and out_channels {w_shape[0]}"
        )
    if x_shape[1] != w_shape[1] * groups:
        raise ValueError(
            f"{where}: input has {x_shape[1]} channels, the weight expects "
            f"{w_shape[1]} x groups={groups} = {w_shape[1] * groups}"
        )
    geo = ConvGeometry(
        tuple(x_shape),  # type: ignore[arg-type]
        tuple(w_shape),  # type: ignore[arg-type]
        s,
        p,
        d,
        groups,
        channel_major_k,
    )
    for axis in (0, 1):
        padded_size = x_shape[2 + axis] + 2 * p[axis]
        reach = d[axis] * (w_shape[2 + axis] - 1) + 1
        if reach > padded_size:
            raise ValueError(
                f"{where}: kernel reach {reach} (dilation {d}) is larger than "
                f"the padded input size {padded_size}"
            )
    return geo


@dataclass(frozen=True)
class PoolGeometry:
    """Shapes and hyper-parameters of one 2-D pooling, validated."""

    x_shape: tuple[int, int, int, int]
    kernel: tuple[int, int]
    stride: tuple[int, int]
    padding: tuple[int, int]

    @functools.cached_property
    def out_hw(self) -> tuple[int, int]:
        """Output height and width (floor mode, as PyTorch's default)."""
        h, w = self.x_shape[2:]
        return tuple(  # type: ignore[return-value]
            (size + 2 * p - k) // s + 1
            for size, k, s, p in zip((h, w), self.kernel, self.stride, self.padding, strict=True)
        )

    @functools.cached_property
    def y_shape(self) -> tuple[int, int, int, int]:
        """Output shape (N, C, OH, OW)."""
        return (*self.x_shape[:2], *self.out_hw)

    @functools.cached_property
    def tiles(self) -> bool:
        """True when windows neither overlap nor leave gaps nor touch padding."""
        return self.stride == self.kernel and self.padding == (0, 0)


def pool_geometry(
    name: str,
    x_shape: tuple[int, ...],
    kernel_size: IntPair,
    stride: IntPair | None,
    padding: IntPair,
) -> PoolGeometry:
    """Validate a pooling call and return its :class:`PoolGeometry`.

    ``stride`` defaults to ``kernel_size``. Raises ValueError for non-4-D input, kernel
    or stride <= 0, padding < 0 or more than half the kernel, or a kernel larger than
    the padded input.
    """
    return _pool_geometry(
        name, tuple(x_shape), hashable(kernel_size), hashable(stride), hashable(padding)
    )


@functools.lru_cache(maxsize=256)
def _pool_geometry(
    name: str,
    x_shape: tuple[int, ...],
    kernel_size: IntPair,
    stride: IntPair | None,
    padding: IntPair,
) -> PoolGeometry:
    k = pair(kernel_size, "kernel_size")
    s = k if stride is None else pair(stride, "stride")
    p = pair(padding, "padding")
    where = f"{name}: input {tuple(x_shape)}, kernel_size {k}, stride {s}, padding {p}"
    if len(x_shape) != 4:
        raise ValueError(f"{where}: input must be 4-D (N, C, H, W)")
    if min(k) <= 0 or min(s) <= 0:
        raise ValueError(f"{where}: kernel_size and stride must be positive")
    if min(p) < 0 or p[0] > k[0] // 2 or p[1] > k[1] // 2:
        raise ValueError(f"{where}: padding must be >= 0 and at most half the kernel size")
    if any(kk > size + 2 * pp for kk, size, pp in zip(k, x_shape[2:], p, strict=True)):
        raise ValueError(f"{where}: kernel is larger than the padded input")
    return PoolGeometry(tuple(x_shape), k, s, p)  # type: ignore[arg-type]
