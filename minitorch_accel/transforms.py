"""Per-sample image transforms, as ``torchvision.transforms``.

A dataset given ``transform=`` calls it on each image in ``__getitem__`` (so a
:class:`~minitorch_accel.data.DataLoader` with workers runs them in parallel)::

    transform = transforms.Compose([
        transforms.ToTensor(),                       # (28, 28) uint8 -> (1, 28, 28) float32
        transforms.Normalize((0.1307,), (0.3081,)),  # per channel: (x - mean) / std
    ])
    train = datasets.MNIST("../data", train=True, download=True, transform=transform)

Images enter as NumPy arrays laid out as a PIL image is, ``(H, W)`` or ``(H, W, C)``
(a PIL image works too: it is read with ``numpy.asarray``), and leave
:class:`ToTensor` as tensors ``(C, H, W)``. The random transforms draw from the host's
generator, which :func:`minitorch_accel.manual_seed` seeds (and each DataLoader worker
seeds with its own seed).

Examples
--------
>>> import numpy as np
>>> image = np.full((2, 2), 255, np.uint8)
>>> Compose([ToTensor(), Normalize((0.5,), (0.5,))])(image)
tensor([[[1., 1.],
         [1., 1.]]])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .core.factories import host_generator
from .core.tensor import Tensor

__all__ = ["Compose", "Lambda", "Normalize", "RandomCrop", "RandomHorizontalFlip", "ToTensor"]


class Compose:
    """Apply ``transforms`` one after the other.

    Parameters
    ----------
    transforms : list of callables

    Examples
    --------
    >>> Compose([Lambda(lambda x: x + 1), Lambda(lambda x: x * 10)])(1)
    20
    """

    def __init__(self, transforms: Sequence[Callable[[Any], Any]]) -> None:
        self.transforms = list(transforms)

    def __call__(self, image: Any) -> Any:
        """Apply each transform in turn."""
        for transform in self.transforms:
            image = transform(image)
        return image

    def __repr__(self) -> str:
        inner = "".join(f"\n    {t!r}" for t in self.transforms)
        return f"{type(self).__name__}({inner}\n)"


class ToTensor:
    """An image ``(H, W)`` or ``(H, W, C)`` as a tensor ``(C, H, W)``; uint8 pixels are
    scaled to float32 in [0, 1], other dtypes keep their values (as torchvision).

    Raises
    ------
    TypeError
        For something that is not an image array (or a PIL image).
    ValueError
        For an array that is not 2- or 3-dimensional.

    Examples
    --------
    >>> import numpy as np
    >>> t = ToTensor()(np.zeros((28, 28), np.uint8))
    >>> t.shape, t.dtype
    ((1, 28, 28), dtype('float32'))
    """

    def __call__(self, pic: Any) -> Tensor:
        """The image as a float32 tensor, channels first, scaled to [0, 1]."""
        if isinstance(pic, Tensor):
            raise TypeError("ToTensor: the image is already a tensor; leave ToTensor out")
        if not isinstance(pic, np.ndarray):
            if not hasattr(pic, "__array_interface__"):
                raise TypeError(
                    f"ToTensor: pic should be a NumPy array or PIL image, got {type(pic)}"
                )
            pic = np.asarray(pic)
        if pic.ndim not in (2, 3):
            raise ValueError(
                f"ToTensor: pic should be 2 or 3 dimensional (H, W) or (H, W, C), got {pic.ndim} "
                f"dimensions (shape {pic.shape})"
            )
        chw = pic[None] if pic.ndim == 2 else pic.transpose(2, 0, 1)
        if chw.dtype == np.uint8:
            chw = chw.astype(np.float32) / np.float32(255.0)
        return Tensor._from_data(np.ascontiguousarray(chw))

    def __repr__(self) -> str:
        return "ToTensor()"


class Normalize:
    """Standardize each channel of a tensor ``(..., C, H, W)``:
    ``out[c] = (x[c] - mean[c]) / std[c]``.

    Parameters
    ----------
    mean, std : sequence of float
        One value per channel (or one for all).
    inplace : bool, default False
        Overwrite the input tensor's values.

    Raises
    ------
    ValueError
        If a ``std`` is zero, or the lengths do not match the channels.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> Normalize((0.5, 0.0), (0.5, 2.0))(mta.ones(2, 1, 1))
    tensor([[[1. ]],
    <BLANKLINE>
            [[0.5]]])
    """

    def __init__(self, mean: Sequence[float], std: Sequence[float], inplace: bool = False) -> None:
        self.mean = [float(m) for m in mean]
        self.std = [float(s) for s in std]
        if any(s == 0 for s in self.std):
            raise ValueError(f"Normalize: std {self.std} has a zero, leading to division by zero")
        self.inplace = inplace

    def __call__(self, tensor: Tensor) -> Tensor:
        """The normalized tensor."""
        if not isinstance(tensor, Tensor):
            raise TypeError(
                f"Normalize: input should be a tensor (C, H, W), got {type(tensor).__name__}; "
                "put ToTensor() before it"
            )
        if tensor.ndim < 3:
            raise ValueError(
                f"Normalize: expected a tensor image of shape (..., C, H, W), got {tensor.shape}"
            )
        channels = tensor.shape[-3]
        for name, values in (("mean", self.mean), ("std", self.std)):
            if len(values) not in (1, channels):
                raise ValueError(
                    f"Normalize: {len(values)} {name} value(s) for an image of {channels} channels"
                )
        xp, x = tensor.xp, tensor.array
        mean = xp.asarray(self.mean, dtype=x.dtype).reshape(-1, 1, 1)
        std = xp.asarray(self.std, dtype=x.dtype).reshape(-1, 1, 1)
        if self.inplace:
            x -= mean
            x /= std
            return tensor
        return Tensor._from_data((x - mean) / std, device=tensor.device)

    def __repr__(self) -> str:
        return f"Normalize(mean={self.mean}, std={self.std})"


class Lambda:
    """Wrap a function as a transform.

    Examples
    --------
    >>> Lambda(lambda x: x * 2)(21)
    42
    """

    def __init__(self, lambd: Callable[[Any], Any]) -> None:
        if not callable(lambd):
            raise TypeError(f"Lambda: argument should be callable, got {type(lambd).__name__}")
        self.lambd = lambd

    def __call__(self, image: Any) -> Any:
        """``lambd(image)``."""
        return self.lambd(image)

    def __repr__(self) -> str:
        return "Lambda()"


def _hw_axes(image: Any) -> tuple[int, int]:
    """The height and width axes: the last two of a tensor ``(..., H, W)``, the first two
    of an array laid out as an image ``(H, W)`` / ``(H, W, C)``.
    """
    if isinstance(image, Tensor):
        return image.ndim - 2, image.ndim - 1
    if isinstance(image, np.ndarray) and image.ndim in (2, 3):
        return 0, 1
    raise TypeError(
        f"expected a tensor (..., H, W) or an image array (H, W[, C]), got {type(image).__name__}"
        + (f" of shape {image.shape}" if hasattr(image, "shape") else "")
    )


class RandomCrop:
    """Crop a random ``size`` window, after optional padding.

    Parameters
    ----------
    size : int or (int, int)
        ``(height, width)`` of the crop (an int: a square).
    padding : int or sequence of int, optional
        Pad every border by ``padding``, or ``(left/right, top/bottom)``, or
        ``(left, top, right, bottom)``, before cropping.
    pad_if_needed : bool, default False
        Pad an image smaller than ``size`` up to it instead of failing.
    fill : float, default 0
        The value of constant padding.
    padding_mode : {"constant", "edge", "reflect", "symmetric"}, default "constant"

    Raises
    ------
    ValueError
        If the (padded) image is smaller than ``size``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> RandomCrop(24, padding=2)(mta.zeros(1, 28, 28)).shape
    (1, 24, 24)
    """

    def __init__(
        self,
        size: int | Sequence[int],
        padding: int | Sequence[int] | None = None,
        pad_if_needed: bool = False,
        fill: float = 0,
        padding_mode: str = "constant",
    ) -> None:
        self.size = (int(size), int(size)) if isinstance(size, int) else tuple(int(s) for s in size)
        if len(self.size) != 2:
            raise ValueError(f"RandomCrop size should be an int or (height, width), got {size!r}")
        if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
            raise ValueError(f"RandomCrop padding_mode {padding_mode!r} is unknown")
        self.padding = padding
        self.pad_if_needed = pad_if_needed
        self.fill = fill
        self.padding_mode = padding_mode

    def _pad(self, x: Any, h_axis: int, left: int, top: int, right: int, bottom: int) -> Any:
        widths = [(0, 0)] * x.ndim
        widths[h_axis], widths[h_axis + 1] = (top, bottom), (left, right)
        if self.padding_mode == "constant":
            return np.pad(x, widths, mode="constant", constant_values=self.fill)
        mode: Any = self.padding_mode
        return np.pad(x, widths, mode=mode)

    def __call__(self, image: Any) -> Any:
        """A random crop of ``image``."""
        h_axis, w_axis = _hw_axes(image)
        x = image.numpy() if isinstance(image, Tensor) else image
        if self.padding is not None:
            p = [self.padding] * 4 if isinstance(self.padding, int) else list(self.padding)
            if len(p) == 2:
                p = [p[0], p[1], p[0], p[1]]
            x = self._pad(x, h_axis, *p)
        th, tw = self.size
        if self.pad_if_needed:
            dh, dw = max(th - x.shape[h_axis], 0), max(tw - x.shape[w_axis], 0)
            x = self._pad(x, h_axis, dw, dh, dw, dh) if dh or dw else x
        h, w = x.shape[h_axis], x.shape[w_axis]
        if h < th or w < tw:
            raise ValueError(
                f"RandomCrop: required crop size {self.size} is larger than the input image "
                f"size {(h, w)}; pass pad_if_needed=True or padding"
            )
        rng = host_generator()
        top, left = int(rng.integers(0, h - th + 1)), int(rng.integers(0, w - tw + 1))
        index = [slice(None)] * x.ndim
        index[h_axis], index[w_axis] = slice(top, top + th), slice(left, left + tw)
        out = np.ascontiguousarray(x[tuple(index)])
        return Tensor._from_data(out, device=image.device) if isinstance(image, Tensor) else out

    def __repr__(self) -> str:
        return f"RandomCrop(size={self.size}, padding={self.padding})"


class RandomHorizontalFlip:
    """Mirror the image left to right with probability ``p``.

    Examples
    --------
    >>> import numpy as np
    >>> RandomHorizontalFlip(p=1.0)(np.array([[1, 2, 3]]))
    array([[3, 2, 1]])
    """

    def __init__(self, p: float = 0.5) -> None:
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"RandomHorizontalFlip: p should be in [0, 1], got {p}")
        self.p = p

    def __call__(self, image: Any) -> Any:
        """``image`` flipped left to right with probability ``p``."""
        _, w_axis = _hw_axes(image)
        if not host_generator().random() < self.p:
            return image
        if isinstance(image, Tensor):
            flipped = image.xp.flip(image.array, axis=w_axis)
            return Tensor._from_data(image.xp.ascontiguousarray(flipped), device=image.device)
        return np.ascontiguousarray(np.flip(image, axis=w_axis))

    def __repr__(self) -> str:
        return f"RandomHorizontalFlip(p={self.p})"
