"""Sliding blocks, as ``torch.nn.functional.unfold`` and ``fold``: im2col and col2im.

:func:`unfold` copies every KH x KW block of an image (N, C, H, W) into one column of
an (N, C*KH*KW, L) tensor, ``L`` the number of block positions; this is the im2col of
a convolution (:func:`~minitorch_accel.ops.conv.im2col`, reused here), so a convolution
is ``weight.view(O, -1) @ unfold(x)``. :func:`fold` is its adjoint, col2im
(:func:`~minitorch_accel.ops.conv.col2im`): it adds each column entry back onto the
pixel it came from, so ``fold(unfold(x))`` is ``x`` times the number of blocks that
cover each pixel. Each is the other's backward, so gradients of every order work.
"""

from __future__ import annotations

from typing import Any

from ..backends.image_geometry import ConvGeometry, IntPair, conv_geometry, pair
from ..core.function import Function
from ..core.tensor import Tensor
from .conv import col2im, im2col


class Im2Col(Function):
    """(N, C, H, W) -> (N, C*KH*KW, L): every block of the image as a column."""

    saves_inputs = False  # backward needs no input's values

    def forward(self, x: Any, *, geo: ConvGeometry) -> Any:
        self.geo = geo
        n, c = geo.x_shape[:2]
        rows = c * geo.w_shape[2] * geo.w_shape[3]
        return im2col(self.xp, x, geo).reshape(n, rows, geo.out_hw[0] * geo.out_hw[1])

    def backward(self, grad: Tensor) -> Tensor:
        return Col2Im.apply(grad, geo=self.geo)


class Col2Im(Function):
    """(N, C*KH*KW, L) -> (N, C, H, W): each column entry added onto its pixel."""

    saves_inputs = False  # backward needs no input's values

    def forward(self, cols: Any, *, geo: ConvGeometry) -> Any:
        self.geo = geo
        return col2im(self.xp, cols, geo)

    def backward(self, grad: Tensor) -> Tensor:
        return Im2Col.apply(grad, geo=self.geo)


def _settings(
    op: str, kernel_size: IntPair, dilation: IntPair, padding: IntPair, stride: IntPair
) -> tuple[tuple[int, int], ...]:
    """The four settings as pairs, with PyTorch's checks (RuntimeError there)."""
    pairs = []
    for name, value in (
        ("kernel_size", kernel_size),
        ("dilation", dilation),
        ("padding", padding),
        ("stride", stride),
    ):
        if not isinstance(value, int) and len(value) != 2:
            raise ValueError(f"{op}: It is expected {name} equals to 2, but got size {len(value)}")
        pairs.append(pair(value, name))
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = pairs
    if min(kh, kw) <= 0:
        raise ValueError(
            f"{op}: kernel size should be greater than zero, but got kernel_height: {kh} "
            f"kernel_width: {kw}"
        )
    if min(sh, sw) <= 0:
        raise ValueError(
            f"{op}: stride should be greater than zero, but got stride_height: {sh} "
            f"stride_width: {sw}"
        )
    if min(dh, dw) <= 0:
        raise ValueError(
            f"{op}: dilation should be greater than zero, but got dilation_height: {dh} "
            f"dilation_width: {dw}"
        )
    if min(ph, pw) < 0:
        raise ValueError(
            f"{op}: padding should be non-negative, but got pad_height: {ph} pad_width: {pw}"
        )
    return tuple(pairs)


def _blocks(size: tuple[int, int], settings: tuple[tuple[int, int], ...]) -> tuple[int, int]:
    """The number of block positions along the height and the width (< 1: none fits)."""
    kernel, dilation, padding, stride = settings
    h, w = (
        (n + 2 * p - d * (k - 1) - 1) // s + 1
        for n, k, d, p, s in zip(size, kernel, dilation, padding, stride, strict=True)
    )
    return h, w


def _geometry(x_shape: tuple[int, ...], settings: tuple[tuple[int, int], ...]) -> ConvGeometry:
    """The convolution geometry whose im2col is this unfold: one group, a kernel that
    reads all ``C`` channels (validated already, so ``conv_geometry`` never raises).
    """
    (kh, kw), dilation, padding, stride = settings
    return conv_geometry(x_shape, (1, x_shape[1], kh, kw), stride, padding, dilation, 1)


def unfold(
    input: Tensor,
    kernel_size: IntPair,
    dilation: IntPair = 1,
    padding: IntPair = 0,
    stride: IntPair = 1,
) -> Tensor:
    """Every sliding block of an image as a column, as ``torch.nn.functional.unfold``.

    ``out[n, (c*KH + i)*KW + j, l] = x[n, c, bh*sh + i*dh - ph, bw*sw + j*dw - pw]`` for
    the block ``l = bh * LW + bw`` (zero outside the image): the im2col of a convolution.

    Parameters
    ----------
    input : Tensor
        (N, C, H, W), or (C, H, W) (then the output has no batch dim).
    kernel_size, dilation, padding, stride : int or (int, int)
        The block's size, the spacing of its taps, the zeros added on each side and the
        step between blocks.

    Returns
    -------
    Tensor
        (N, C*KH*KW, L) with ``L = LH * LW``, ``LH = (H + 2*ph - dh*(KH-1) - 1) // sh + 1``.

    Raises
    ------
    ValueError
        Input neither 3-D nor 4-D or with an empty channel or spatial dim, a setting of
        the wrong length or out of range, or no block fitting in the padded image
        (PyTorch raises RuntimeError).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> unfold(mta.arange(9.0).reshape(1, 1, 3, 3), 2).tolist()
    [[[0.0, 1.0, 3.0, 4.0], [1.0, 2.0, 4.0, 5.0], [3.0, 4.0, 6.0, 7.0], [4.0, 5.0, 7.0, 8.0]]]
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"unfold: input must be a Tensor, got {type(input).__name__}")
    settings = _settings("unfold", kernel_size, dilation, padding, stride)
    if input.ndim not in (3, 4) or 0 in input.shape[-3:]:
        raise ValueError(
            "unfold: Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and "
            f"other non-zero dimensions for input, but got: {list(input.shape)}"
        )
    blocks = _blocks((input.shape[-2], input.shape[-1]), settings)
    if min(blocks) < 1:
        (kh, kw), (dh, dw), (ph, pw), _ = settings
        raise ValueError(
            f"unfold: Given input with spatial size {tuple(input.shape[-2:])}, kernel_size="
            f"{(kh, kw)}, dilation={(dh, dw)}, padding={(ph, pw)}, calculated shape of the "
            f"array of sliding blocks as {blocks}, but its components must be at least one."
        )
    batched = input if input.ndim == 4 else input.unsqueeze(0)
    cols = Im2Col.apply(batched, geo=_geometry(batched.shape, settings))
    return cols if input.ndim == 4 else cols.squeeze(0)


def fold(
    input: Tensor,
    output_size: IntPair,
    kernel_size: IntPair,
    dilation: IntPair = 1,
    padding: IntPair = 0,
    stride: IntPair = 1,
) -> Tensor:
    """Add columns of blocks back into an image, as ``torch.nn.functional.fold``: the
    adjoint of :func:`unfold` (col2im). Where blocks overlap, their entries add up.

    Parameters
    ----------
    input : Tensor
        (N, C*KH*KW, L), or (C*KH*KW, L) (then the output has no batch dim), with ``L``
        the number of blocks that fit in ``output_size`` (as :func:`unfold` counts them).
    output_size : int or (int, int)
        (H, W) of the image.
    kernel_size, dilation, padding, stride : int or (int, int)
        As :func:`unfold`.

    Returns
    -------
    Tensor
        (N, C, H, W).

    Raises
    ------
    ValueError
        Input neither 2-D nor 3-D or with an empty non-batch dim, a channel dim not
        divisible by ``KH*KW``, ``L`` not the number of blocks, settings out of range
        (PyTorch raises RuntimeError).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> fold(mta.ones(1, 4, 4), (3, 3), 2).tolist()
    [[[[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]]]
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"fold: input must be a Tensor, got {type(input).__name__}")
    out_hw = pair(output_size, "output_size")
    settings = _settings("fold", kernel_size, dilation, padding, stride)
    if input.ndim not in (2, 3) or 0 in input.shape[-2:]:
        raise ValueError(
            "fold: Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch "
            f"size and non-zero dimensions for input, but got: {list(input.shape)}"
        )
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = settings
    rows, n_blocks = input.shape[-2:]
    if rows % (kh * kw):
        raise ValueError(
            "fold: Expected size of input's dimension 1 to be divisible by the product of "
            f"kernel_size, but got input.size(1)={rows} and kernel_size={(kh, kw)}."
        )
    lh, lw = _blocks(out_hw, settings)
    if min(lh, lw) < 1 or lh * lw != n_blocks:
        raise ValueError(
            f"fold: Given output_size={out_hw}, kernel_size={(kh, kw)}, dilation={(dh, dw)}, "
            f"padding={(ph, pw)}, stride={(sh, sw)}, expected size of input's dimension 2 "
            f"to match the calculated number of sliding blocks {lh} * {lw} = "
            f"{lh * lw}, but got input.size(2)={n_blocks}."
        )
    batched = input if input.ndim == 3 else input.unsqueeze(0)
    x_shape = (batched.shape[0], rows // (kh * kw), *out_hw)
    image = Col2Im.apply(batched, geo=_geometry(x_shape, settings))
    return image if input.ndim == 3 else image.squeeze(0)


__all__ = ["Col2Im", "Im2Col", "fold", "unfold"]
