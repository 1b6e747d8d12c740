"""Layers that resize or rearrange images, as ``torch.nn``'s: :class:`Upsample` (with
:class:`UpsamplingNearest2d` and :class:`UpsamplingBilinear2d`), :class:`PixelShuffle`,
:class:`PixelUnshuffle`, :class:`Unfold`, :class:`Fold` and :class:`AdaptiveMaxPool2d`.

Each holds its settings and calls the function of the same name in
:mod:`~minitorch_accel.ops.resample`, :mod:`~minitorch_accel.ops.fold` or
:mod:`~minitorch_accel.ops.adaptive_max`; none has parameters.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..backends.image_geometry import IntPair
from ..core.tensor import Tensor
from ..ops.adaptive_max import OptionalPair, adaptive_max_pool2d
from ..ops.fold import fold, unfold
from ..ops.resample import interpolate, pixel_shuffle, pixel_unshuffle
from .module import Module


class Upsample(Module):
    """Resize (N, C, [D, [H,]] W) images to ``size`` or by ``scale_factor``; see
    :func:`~minitorch_accel.ops.resample.interpolate` for the modes.

    Parameters
    ----------
    size : int or tuple of int, optional
        The output's spatial size.
    scale_factor : float or tuple of float, optional
        Multiplier of the spatial size (stored as floats, as PyTorch; 0 means None).
    mode : str
        ``"nearest"``, ``"nearest-exact"``, ``"linear"``, ``"bilinear"``, ``"bicubic"``
        or ``"trilinear"``.
    align_corners : bool, optional
        For the interpolating modes only.
    recompute_scale_factor : bool, optional
        As :func:`~minitorch_accel.ops.resample.interpolate`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> layer = nn.Upsample(scale_factor=2, mode="bilinear")
    >>> layer
    Upsample(scale_factor=2.0, mode='bilinear')
    >>> layer(mta.ones(1, 3, 4, 5)).shape
    (1, 3, 8, 10)
    """

    def __init__(
        self,
        size: int | Sequence[int] | None = None,
        scale_factor: float | Sequence[float] | None = None,
        mode: str = "nearest",
        align_corners: bool | None = None,
        recompute_scale_factor: bool | None = None,
    ) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        self.scale_factor: float | tuple[float, ...] | None
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(factor) for factor in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None  # type: ignore[arg-type]
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        """``input`` resized (see :func:`~minitorch_accel.ops.resample.interpolate`)."""
        return interpolate(
            input,
            self.size,
            self.scale_factor,
            self.mode,
            self.align_corners,
            recompute_scale_factor=self.recompute_scale_factor,
        )

    def extra_repr(self) -> str:
        """The scale factor (or the size) and the mode, as PyTorch prints them."""
        if self.scale_factor is not None:
            info = f"scale_factor={self.scale_factor!r}"
        else:
            info = f"size={self.size!r}"
        return f"{info}, mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """:class:`Upsample` with ``mode="nearest"`` for (N, C, H, W) images.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> nn.UpsamplingNearest2d(scale_factor=2)(mta.tensor([[[[1.0, 2.0]]]])).tolist()
    [[[[1.0, 1.0, 2.0, 2.0], [1.0, 1.0, 2.0, 2.0]]]]
    """

    def __init__(
        self,
        size: int | tuple[int, int] | None = None,
        scale_factor: float | tuple[float, float] | None = None,
    ) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """:class:`Upsample` with ``mode="bilinear"`` and ``align_corners=True`` for
    (N, C, H, W) images.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> nn.UpsamplingBilinear2d(size=(1, 4))(mta.tensor([[[[0.0, 3.0]]]])).tolist()
    [[[[0.0, 1.0, 2.0, 3.0]]]]
    """

    def __init__(
        self,
        size: int | tuple[int, int] | None = None,
        scale_factor: float | tuple[float, float] | None = None,
    ) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


class PixelShuffle(Module):
    """(*, C * r * r, H, W) -> (*, C, H * r, W * r) with ``r = upscale_factor``; see
    :func:`~minitorch_accel.ops.resample.pixel_shuffle`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> layer = nn.PixelShuffle(3)
    >>> layer, layer(mta.ones(1, 18, 4, 4)).shape
    (PixelShuffle(upscale_factor=3), (1, 2, 12, 12))
    """

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Tensor) -> Tensor:
        """``input`` with its channels moved into the spatial dims."""
        return pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        """The factor, as PyTorch prints it."""
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """(*, C, H * r, W * r) -> (*, C * r * r, H, W) with ``r = downscale_factor``; see
    :func:`~minitorch_accel.ops.resample.pixel_unshuffle`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> layer = nn.PixelUnshuffle(2)
    >>> layer, layer(mta.ones(1, 1, 4, 6)).shape
    (PixelUnshuffle(downscale_factor=2), (1, 4, 2, 3))
    """

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: Tensor) -> Tensor:
        """``input`` with its pixels moved into the channel dim."""
        return pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        """The factor, as PyTorch prints it."""
        return f"downscale_factor={self.downscale_factor}"


class Unfold(Module):
    """Every sliding block of an image as a column, (N, C, H, W) -> (N, C*KH*KW, L); see
    :func:`~minitorch_accel.ops.fold.unfold`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> layer = nn.Unfold(kernel_size=(2, 3), padding=1)
    >>> layer
    Unfold(kernel_size=(2, 3), dilation=1, padding=1, stride=1)
    >>> layer(mta.ones(2, 5, 3, 4)).shape
    (2, 30, 16)
    """

    def __init__(
        self,
        kernel_size: IntPair,
        dilation: IntPair = 1,
        padding: IntPair = 0,
        stride: IntPair = 1,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:
        """The blocks of ``input`` as columns."""
        return unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        """The settings, as PyTorch prints them."""
        return (
            f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
            f"padding={self.padding}, stride={self.stride}"
        )


class Fold(Module):
    """Add columns of blocks back into an image, ``(N, C*KH*KW, L) -> (N, C, *output_size)``;
    the adjoint of :class:`Unfold`; see :func:`~minitorch_accel.ops.fold.fold`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> layer = nn.Fold(output_size=(4, 5), kernel_size=2)
    >>> layer
    Fold(output_size=(4, 5), kernel_size=2, dilation=1, padding=0, stride=1)
    >>> layer(mta.ones(1, 12, 12)).shape
    (1, 3, 4, 5)
    """

    def __init__(
        self,
        output_size: IntPair,
        kernel_size: IntPair,
        dilation: IntPair = 1,
        padding: IntPair = 0,
        stride: IntPair = 1,
    ) -> None:
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:
        """The image the columns of ``input`` add up to."""
        return fold(
            input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride
        )

    def extra_repr(self) -> str:
        """The settings, as PyTorch prints them."""
        return (
            f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
            f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}"
        )


class AdaptiveMaxPool2d(Module):
    """Max-pool to a fixed output size whatever the input size; see
    :func:`~minitorch_accel.ops.adaptive_max.adaptive_max_pool2d`.

    Parameters
    ----------
    output_size : int or (int or None, int or None)
        None keeps the input's size along that dim.
    return_indices : bool
        Also return the flat index of each maximum.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> layer = nn.AdaptiveMaxPool2d((1, None))
    >>> layer, layer(mta.ones(2, 3, 5, 7)).shape
    (AdaptiveMaxPool2d(output_size=(1, None)), (2, 3, 1, 7))
    """

    def __init__(self, output_size: OptionalPair, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def forward(self, input: Tensor) -> Tensor | tuple[Tensor, Tensor]:
        """``input`` pooled (and the indices, with ``return_indices``)."""
        return adaptive_max_pool2d(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        """The output size, as PyTorch prints it."""
        return f"output_size={self.output_size}"


__all__ = [
    "AdaptiveMaxPool2d",
    "Fold",
    "PixelShuffle",
    "PixelUnshuffle",
    "Unfold",
    "Upsample",
    "UpsamplingBilinear2d",
    "UpsamplingNearest2d",
]
