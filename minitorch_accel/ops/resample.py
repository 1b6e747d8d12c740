"""Resizing images, as ``torch.nn.functional.interpolate``, and the pixel shuffles.

Resizing is separable: along one spatial dim, output position ``i`` reads the input at
a few source positions (its *taps*) and adds them up with weights. Taps and weights
depend only on the two sizes, so they are computed once, on the host, as short index
and weight arrays (:func:`nearest_taps`, :func:`linear_taps`, :func:`cubic_taps`), and
the resize along that dim is ::

    out = sum over taps k of index_select(x, dim, index_k) * weight_k

a composition of differentiable ops, so gradients of every order come from them: the
gradient of ``index_select`` adds each output's gradient (times the weight) back onto
the position it was read from, which is PyTorch's backward (nearest: each input pixel
gets the sum of the gradients of the outputs copied from it). The dims are resized last
one first (width, then height, then depth), the order in which PyTorch's CPU kernel
nests them, so the same products and sums are formed and NaN and infinities come out
where PyTorch's do (an infinite input times a zero weight is NaN there too).

Source positions follow PyTorch (``aten/src/ATen/native/UpSample.h``), with ``scale``
the input size over the output size, or ``1 / scale_factor`` when the caller gave a
scale factor (and ``recompute_scale_factor`` is not True), or ``(in - 1) / (out - 1)``
with ``align_corners=True``:

- ``nearest``: ``floor(i * scale)``, clipped to the last input position (OpenCV's rule);
- ``nearest-exact``: ``floor((i + 0.5) * scale)`` (Pillow's and scikit-image's);
- ``linear``: ``src = scale * (i + 0.5) - 0.5`` clipped at 0 (``scale * i`` with
  ``align_corners``), read at ``floor(src)`` and the next position (the last one at the
  edge) with weights ``1 - frac`` and ``frac``;
- ``cubic``: four positions around ``floor(src)``, clipped into the input, with Keys'
  cubic convolution weights (``A = -0.75``).

Where we differ from PyTorch, whose code paths disagree among themselves:

- The nearest positions are computed in float32 with PyTorch's two shortcuts (an output
  of the input's size copies it, one of twice the size repeats each pixel twice,
  whatever the scale factor), as PyTorch's backward, its GPU kernels and its CPU forward
  of 4-D inputs with ``OH + OW <= 128`` do. Its CPU forward of 3-D and 5-D inputs and of
  larger 4-D outputs skips the shortcuts and computes in the input's precision, so with
  a scale factor that keeps or doubles the size, and at a few sizes where rounding lands
  on a pixel boundary, it reads another pixel than its own backward sends the gradient
  to. Here forward and backward use the positions above.
- Bicubic resizing to the input's own size: PyTorch's backward copies the gradient,
  even where a scale factor made its forward sample elsewhere; here the gradient is the
  derivative of the forward (the same when ``size`` is given, except that an infinite
  gradient meets the zero weights of the neighbouring taps: NaN, not inf).
- Linear and cubic weights are computed in the input's precision (float32 for
  float16); in float64 PyTorch forms ``scale * (i + 0.5) - 0.5`` with a fused
  multiply-add, so its weights may differ from these in the last bit.

:func:`pixel_shuffle` and :func:`pixel_unshuffle` move pixels between the channel dim
and the two spatial dims: a reshape, a permutation and a reshape.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core.tensor import Tensor
from .index import index_select

Taps = list[tuple[np.ndarray, np.ndarray | None]]
"""A resize along one dim: (source positions, weights or None) per tap, each (out,)."""

_INTERPOLATING = "linear | bilinear | bicubic | trilinear"
_ALL_MODES = "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"
_MODE_DIMS = {"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5}
_CUBIC_A = -0.75  # Keys' cubic convolution parameter, as PyTorch


def source_scale(
    in_size: int, out_size: int, align_corners: bool, scale_factor: float | None, real: Any
) -> Any:
    """The step in input positions per output position, in the float type ``real``
    (PyTorch's ``area_pixel_compute_scale``).
    """
    if align_corners:
        return real(in_size - 1) / real(out_size - 1) if out_size > 1 else real(0)
    if scale_factor is not None and scale_factor > 0:
        return real(1.0 / scale_factor)
    return real(in_size) / real(out_size)


def nearest_taps(in_size: int, out_size: int, scale_factor: float | None, exact: bool) -> Taps:
    """The one source position of each output position (float32 arithmetic, as PyTorch).

    Examples
    --------
    >>> nearest_taps(3, 7, None, exact=False)[0][0].tolist()
    [0, 0, 0, 1, 1, 2, 2]
    >>> nearest_taps(3, 7, None, exact=True)[0][0].tolist()
    [0, 0, 1, 1, 1, 2, 2]
    """
    i = np.arange(out_size)
    if not exact and out_size in (in_size, 2 * in_size):  # PyTorch's shortcuts
        return [(i if out_size == in_size else i // 2, None)]
    scale = source_scale(in_size, out_size, False, scale_factor, np.float32)
    if exact:  # (i + 0.5) * scale is formed in double, then rounded to float
        position = ((i + 0.5) * np.float64(scale)).astype(np.float32)
    else:
        position = i.astype(np.float32) * scale
    return [(np.minimum(np.floor(position).astype(np.int64), in_size - 1), None)]


def _source_position(
    in_size: int,
    out_size: int,
    align_corners: bool,
    scale_factor: float | None,
    real: Any,
    cubic: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """``(floor(src), src - floor(src))`` of each output position, as PyTorch's
    ``area_pixel_compute_source_index`` and ``guard_index_and_lambda``: a negative ``src``
    reads position 0 (except for the cubic taps), the floor is clipped to the last input
    position and the fraction to [0, 1].
    """
    i = np.arange(out_size)
    scale = source_scale(in_size, out_size, align_corners, scale_factor, real)
    if align_corners:
        src = scale * i.astype(real)
    else:  # (i + 0.5) * scale - 0.5 is formed in double, then rounded to ``real``
        src = (np.float64(scale) * (i + 0.5) - 0.5).astype(real)
        src = src if cubic else np.maximum(src, real(0))
    left = np.minimum(np.floor(src.astype(np.float32)).astype(np.int64), in_size - 1)
    return left, np.clip(src - left.astype(real), real(0), real(1))


def linear_taps(
    in_size: int, out_size: int, align_corners: bool, scale_factor: float | None, real: Any
) -> Taps:
    """Two source positions per output position and their weights ``1 - frac``, ``frac``.

    Examples
    --------
    >>> (left, w_left), (right, w_right) = linear_taps(2, 4, False, None, np.float64)
    >>> left.tolist(), right.tolist(), w_right.tolist()
    ([0, 0, 0, 1], [1, 1, 1, 1], [0.0, 0.25, 0.75, 0.25])
    """
    if out_size == in_size:  # a copy, as PyTorch's (weights 1 and 0: inf * 0 is NaN there too)
        i = np.arange(out_size)
        return [(i, np.ones(out_size, real)), (i, np.zeros(out_size, real))]
    left, frac = _source_position(in_size, out_size, align_corners, scale_factor, real)
    right = left + (left < in_size - 1)
    return [(left, real(1) - frac), (right, frac)]


def cubic_taps(
    in_size: int, out_size: int, align_corners: bool, scale_factor: float | None, real: Any
) -> Taps:
    """Four source positions ``floor(src) - 1 .. floor(src) + 2`` (clipped into the input)
    per output position, with Keys' cubic convolution weights of ``frac``.

    Examples
    --------
    >>> taps = cubic_taps(4, 4, True, None, np.float64)
    >>> [index.tolist() for index, _ in taps][1:3], [w.tolist()[1] for _, w in taps]
    ([[0, 1, 2, 3], [1, 2, 3, 3]], [0.0, 1.0, 0.0, 0.0])
    """
    left, t = _source_position(in_size, out_size, align_corners, scale_factor, real, True)
    a = real(_CUBIC_A)

    def near(x: np.ndarray) -> Any:  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x: np.ndarray) -> Any:  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    weights = [far(t + 1), near(t), near(1 - t), far(2 - t)]
    return [(np.clip(left + k - 1, 0, in_size - 1), w) for k, w in enumerate(weights)]


def resample_dim(x: Tensor, dim: int, taps: Taps) -> Tensor:
    """``sum over taps of index_select(x, dim, index) * weight``: ``x`` resized along
    ``dim`` (weights broadcast along the dims after it).
    """
    out = None
    with x.device.guard():
        for index, weight in taps:
            picked = index_select(x, dim, Tensor._from_data(index, device=x.device))
            if weight is not None:
                shape = (-1,) + (1,) * (x.ndim - 1 - dim)
                weights = weight.astype(x.dtype).reshape(shape)
                picked = picked * Tensor._from_data(weights, device=x.device)
            out = picked if out is None else out + picked
    assert out is not None
    return out


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer))


def _sizes_and_scales(
    input: Tensor, size: Any, scale_factor: Any, recompute_scale_factor: bool | None
) -> tuple[list[int], list[float | None]]:
    """The output size of every spatial dim and the scale factor the positions use
    (None: ``in / out``), with PyTorch's checks and messages.
    """
    dim = input.ndim - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is None and scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if size is not None:
        sizes = list(size) if isinstance(size, Sequence) else [size] * dim
        if isinstance(size, Sequence) and len(sizes) != dim:
            raise ValueError(
                "Input and output must have the same number of spatial dimensions, but got "
                f"input with spatial dimensions of {list(input.shape[2:])} and output size of "
                f"{size}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                "output size in (o1, o2, ...,oK) format."
            )
        if not all(_is_int(s) for s in sizes):
            raise TypeError(
                "expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                f"Tuple[int, int, int], but got size with types {[type(s) for s in sizes]}"
            )
        return [int(s) for s in sizes], [None] * dim
    factors = list(scale_factor) if isinstance(scale_factor, Sequence) else [scale_factor] * dim
    if isinstance(scale_factor, Sequence) and len(factors) != dim:
        raise ValueError(
            "Input and scale_factor must have the same number of spatial dimensions, but "
            f"got input with spatial dimensions of {list(input.shape[2:])} and scale_factor "
            f"of shape {scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) "
            "format and scale_factor in (s1, s2, ...,sK) format."
        )
    if not all(isinstance(s, (int, float, np.number)) for s in factors):
        raise TypeError(f"scale_factor must be a float or a tuple of floats, got {scale_factor!r}")
    sizes = [int(n * float(s)) for n, s in zip(input.shape[2:], factors, strict=True)]
    kept: list[float | None] = [None if recompute_scale_factor else float(s) for s in factors]
    return sizes, kept


def _check_mode(input: Tensor, mode: str, antialias: bool) -> None:
    """PyTorch's errors for a mode that does not fit the input, or is not implemented."""
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
        raise ValueError(
            "Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and "
            "requires a 4-D tensor as input"
        )
    known = mode in ("nearest", "nearest-exact", "area", "lanczos", *_MODE_DIMS)
    if not known or input.ndim not in (3, 4, 5):
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for "
            f"the modes: {_ALL_MODES} (got {mode})"
        )
    if mode in ("bicubic", "lanczos") and input.ndim != 4:
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for "
            f"the modes: {_ALL_MODES} (got {mode})"
        )
    if mode in _MODE_DIMS and input.ndim != _MODE_DIMS[mode]:
        raise NotImplementedError(
            f"Got {input.ndim}D input, but {mode} mode needs {_MODE_DIMS[mode]}D input"
        )
    if mode in ("area", "lanczos") or antialias:
        what = f"mode={mode!r}" if not antialias else "antialias=True"
        hint = " (for 'area' use adaptive_avg_pool2d(input, size))" if mode == "area" else ""
        raise NotImplementedError(
            f"interpolate: {what} is not implemented here; use 'nearest', 'nearest-exact', "
            f"'linear', 'bilinear', 'bicubic' or 'trilinear'{hint}"
        )


def _check_sizes(input: Tensor, sizes: list[int]) -> None:
    """PyTorch's check of the input's and the output's sizes (RuntimeError there)."""
    names = "DHW"[3 - len(sizes) :]
    if min(input.shape[2:]) <= 0 or min(sizes) <= 0:
        given = ", ".join(f"{n}: {s}" for n, s in zip(names, input.shape[2:], strict=True))
        wanted = ", ".join(f"{n}: {s}" for n, s in zip(names, sizes, strict=True))
        sep = " and output" if len(sizes) == 1 else " output"
        raise ValueError(
            "Input and output sizes should be greater than 0, but got input "
            f"({given}){sep} ({wanted})"
        )
    if input.shape[1] == 0:
        raise ValueError(
            f"Non-empty {input.ndim}D data tensor expected but got a tensor with sizes "
            f"{list(input.shape)}"
        )


def interpolate(
    input: Tensor,
    size: int | Sequence[int] | None = None,
    scale_factor: float | Sequence[float] | None = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Tensor:
    """Resize the spatial dims of (N, C, [D, [H,]] W) images, as
    ``torch.nn.functional.interpolate``.

    Parameters
    ----------
    input : Tensor
        3-D (N, C, W), 4-D (N, C, H, W) or 5-D (N, C, D, H, W).
    size : int or tuple of int, optional
        The output's spatial size (one int for every spatial dim).
    scale_factor : float or tuple of float, optional
        Multiplier of the spatial size: the output size is ``floor(in * scale_factor)``.
        Exactly one of ``size`` and ``scale_factor`` is given.
    mode : str
        ``"nearest"`` (default), ``"nearest-exact"`` (any number of spatial dims),
        ``"linear"`` (3-D), ``"bilinear"`` (4-D), ``"bicubic"`` (4-D), ``"trilinear"``
        (5-D); see the module's introduction for the source positions of each.
    align_corners : bool, optional
        For the interpolating modes only (default False): True maps the centres of the
        corner pixels onto each other, False their outer edges.
    recompute_scale_factor : bool, optional
        True: use ``scale_factor`` only for the output size, and place the samples by
        ``in / out`` as if that size had been given.
    antialias : bool
        Only False: anti-aliased downsampling is not implemented here.

    Returns
    -------
    Tensor
        ``(N, C, *size)``, with ``input``'s dtype and device.

    Raises
    ------
    ValueError
        ``align_corners`` with a nearest mode, both or neither of ``size`` and
        ``scale_factor``, tuples of the wrong length, an empty output or input, or
        ``antialias`` with a mode that has none (PyTorch raises RuntimeError for the
        empty sizes).
    NotImplementedError
        A mode that does not fit the number of dims, an unknown mode; ``"area"``,
        ``"lanczos"`` and ``antialias=True``, which are not implemented here.
    TypeError
        A non-integer size, or an integer input with an interpolating mode (PyTorch
        accepts uint8 there).

    Notes
    -----
    Nearest modes take any dtype (PyTorch refuses int64). Where PyTorch's own code paths
    disagree (nearest positions, bicubic to the same size), the module's introduction
    says which one this follows.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> x = mta.tensor([[[1.0, 2.0, 4.0]]])
    >>> interpolate(x, scale_factor=2).tolist()
    [[[1.0, 1.0, 2.0, 2.0, 4.0, 4.0]]]
    >>> interpolate(x, size=5, mode="linear", align_corners=True).tolist()
    [[[1.0, 1.5, 2.0, 3.0, 4.0]]]
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"interpolate: input must be a Tensor, got {type(input).__name__}")
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError(
                "align_corners option can only be set with the interpolating modes: "
                + _INTERPOLATING
            )
    elif align_corners is None:
        align_corners = False
    sizes, factors = _sizes_and_scales(input, size, scale_factor, recompute_scale_factor)
    _check_mode(input, mode, antialias)
    _check_sizes(input, sizes)
    if mode not in ("nearest", "nearest-exact") and input.dtype.kind != "f":
        raise TypeError(
            f"interpolate: mode {mode!r} needs a floating-point input, got {input.dtype}"
        )
    real = np.float64 if input.dtype == np.float64 else np.float32
    out = input
    for dim in reversed(range(2, input.ndim)):  # width first, as PyTorch's kernel nests them
        n_in, n_out, factor = input.shape[dim], sizes[dim - 2], factors[dim - 2]
        if mode in ("nearest", "nearest-exact"):
            taps = nearest_taps(n_in, n_out, factor, exact=mode == "nearest-exact")
        elif mode == "bicubic":
            taps = cubic_taps(n_in, n_out, bool(align_corners), factor, real)
        else:
            taps = linear_taps(n_in, n_out, bool(align_corners), factor, real)
        out = resample_dim(out, dim, taps)
    return out


def upsample(
    input: Tensor,
    size: int | Sequence[int] | None = None,
    scale_factor: float | Sequence[float] | None = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
) -> Tensor:
    """Deprecated name of :func:`interpolate`, kept as PyTorch keeps it (with its warning).

    Examples
    --------
    >>> import warnings
    >>> import minitorch_accel as mta
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     upsample(mta.ones(1, 1, 2), scale_factor=2).shape
    (1, 1, 4)
    """
    warnings.warn(
        "`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(
    input: Tensor,
    size: int | Sequence[int] | None = None,
    scale_factor: float | Sequence[float] | None = None,
) -> Tensor:
    """Deprecated: ``interpolate(input, size, scale_factor, mode="nearest")``.

    Examples
    --------
    >>> import warnings
    >>> import minitorch_accel as mta
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     upsample_nearest(mta.ones(1, 1, 2, 2), 3).shape
    (1, 1, 3, 3)
    """
    warnings.warn(
        "`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(
    input: Tensor,
    size: int | Sequence[int] | None = None,
    scale_factor: float | Sequence[float] | None = None,
) -> Tensor:
    """Deprecated: ``interpolate(input, size, scale_factor, mode="bilinear",
    align_corners=True)``.

    Examples
    --------
    >>> import warnings
    >>> import minitorch_accel as mta
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     upsample_bilinear(mta.tensor([[[[0.0, 3.0]]]]), (1, 4)).tolist()
    [[[[0.0, 1.0, 2.0, 3.0]]]]
    """
    warnings.warn(
        "`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def _check_factor(op: str, name: str, factor: Any, input: Tensor) -> int:
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: input must be a Tensor, got {type(input).__name__}")
    if not _is_int(factor) or isinstance(factor, bool):
        raise TypeError(
            f"{op}(): argument '{name}' (position 2) must be int, not {type(factor).__name__}"
        )
    if factor <= 0:
        raise ValueError(f"{op} expects a positive {name}, but got {factor}")
    if input.ndim < 3:
        raise ValueError(
            f"{op} expects input to have at least 3 dimensions, but got input with "
            f"{input.ndim} dimension(s)"
        )
    return int(factor)


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C * r * r, H, W) -> (*, C, H * r, W * r), as ``torch.nn.functional.pixel_shuffle``
    (``r = upscale_factor``): ``out[..., c, h * r + i, w * r + j] = input[..., c * r * r +
    i * r + j, h, w]``. Used after a convolution to upsample (sub-pixel convolution).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> pixel_shuffle(mta.arange(4.0).reshape(1, 4, 1, 1), 2).tolist()
    [[[[0.0, 1.0], [2.0, 3.0]]]]
    """
    r = _check_factor("pixel_shuffle", "upscale_factor", upscale_factor, input)
    *batch, c, h, w = input.shape
    if c % (r * r):
        raise ValueError(
            "pixel_shuffle expects its input's 'channel' dimension to be divisible by the "
            f"square of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}"
        )
    n = len(batch)
    x = input.reshape(*batch, c // (r * r), r, r, h, w)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return x.reshape(*batch, c // (r * r), h * r, w * r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H * r, W * r) -> (*, C * r * r, H, W), the inverse of :func:`pixel_shuffle`,
    as ``torch.nn.functional.pixel_unshuffle`` (``r = downscale_factor``).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> pixel_unshuffle(mta.arange(4.0).reshape(1, 1, 2, 2), 2).flatten().tolist()
    [0.0, 1.0, 2.0, 3.0]
    """
    r = _check_factor("pixel_unshuffle", "downscale_factor", downscale_factor, input)
    *batch, c, h, w = input.shape
    for name, dim, n_pixels in (("height", -2, h), ("width", -1, w)):
        if n_pixels % r:
            raise ValueError(
                f"pixel_unshuffle expects {name} to be divisible by downscale_factor, but "
                f"input.size({dim})={n_pixels} is not divisible by {r}"
            )
    n = len(batch)
    x = input.reshape(*batch, c, h // r, r, w // r, r)
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return x.reshape(*batch, c * r * r, h // r, w // r)


__all__ = [
    "cubic_taps",
    "interpolate",
    "linear_taps",
    "nearest_taps",
    "pixel_shuffle",
    "pixel_unshuffle",
    "resample_dim",
    "source_scale",
    "upsample",
    "upsample_bilinear",
    "upsample_nearest",
]
