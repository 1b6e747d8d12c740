"""Padding, as ``torch.nn.functional.pad``: four ways to make a tensor larger.

``pad=(left, right, top, bottom, front, back)`` widens the last dim first, then the one
before it, and so on. A negative width crops instead. The modes fill the border with:

- ``"constant"``: ``value`` (any number of trailing dims);
- ``"reflect"``: the input mirrored at its edge, the edge itself not repeated
  (``[1, 2, 3]`` padded by 2 on the left starts ``3, 2, 1, 2, 3``);
- ``"replicate"``: copies of the edge value;
- ``"circular"``: the input wrapped around, as if it were periodic (negative widths
  crop first, and what is left is wrapped, as in PyTorch).

Both halves are compositions of differentiable ops, so gradients of every order come
from them. Constant padding is a slice (the negative widths) followed by
:class:`~minitorch_accel.ops.shape.Pad`. The other modes read, along each padded dim, the
input at one source position per output position (:func:`source_positions`) with
:func:`~minitorch_accel.ops.index.index_select`; its gradient adds each output's
gradient back to its source, so an input value read several times collects all of them,
as in PyTorch's ``reflection_pad``/``replication_pad`` backward.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..core.function import on_input_device
from ..core.tensor import Tensor
from .index import index_select
from .shape import Pad

MODES = ("constant", "reflect", "replicate", "circular")

_SUPPORTED = (
    "Supported combinations for non-constant padding:\n"
    "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
    "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
    "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"
)


def source_positions(mode: str, size: int, left: int, right: int) -> np.ndarray:
    """The input position each output position reads along one dim of ``size``
    padded by ``left`` and ``right`` (either may be negative: a crop).

    Output position ``j`` stands at input position ``i = j - left``; ``reflect`` folds
    ``i`` back at both ends of the input (``-1 -> 1``, ``size -> size - 2``),
    ``replicate`` clips it to the nearest end. ``circular`` crops first and wraps what
    is left (PyTorch's order): ``i`` is taken modulo the cropped length.

    Examples
    --------
    >>> source_positions("reflect", 4, 2, 1).tolist()
    [2, 1, 0, 1, 2, 3, 2]
    >>> source_positions("replicate", 3, 2, 0).tolist()
    [0, 0, 0, 1, 2]
    >>> source_positions("circular", 3, 1, 2).tolist()
    [2, 0, 1, 2, 0, 1]
    >>> source_positions("circular", 5, 2, -1).tolist()  # wraps [0, 1, 2, 3]
    [2, 3, 0, 1, 2, 3]
    """
    if mode == "circular":
        start, kept = max(-left, 0), size - max(-left, 0) - max(-right, 0)
        if kept <= 0:
            return np.arange(0)
        return start + np.arange(-max(left, 0), kept + max(right, 0)) % kept
    i = np.arange(-left, size + right)
    if mode == "reflect":
        last = size - 1
        return last - np.abs(last - np.abs(i))  # type: ignore[no-any-return]
    return np.clip(i, 0, size - 1)


def _widths(input: Tensor, pad: Sequence[int]) -> list[tuple[int, int]]:
    """``pad`` as ``(before, after)`` per padded dim, the last dim first; checks its form."""
    if isinstance(pad, (str, bytes)) or not isinstance(pad, Sequence):
        raise TypeError(f"pad: pad must be a tuple of ints, got {type(pad).__name__}")
    for width in pad:
        if not isinstance(width, (int, np.integer)) or isinstance(width, bool):
            raise TypeError(f"pad: pad must be a tuple of ints, got {width!r} in {tuple(pad)}")
    if len(pad) % 2:
        raise ValueError(f"pad: padding length must be divisible by 2, got {tuple(pad)}")
    if len(pad) > 2 * input.ndim:
        raise ValueError(
            "pad: padding length should be less than or equal to two times the input "
            f"dimension but got padding length {len(pad)} and input of dimension {input.ndim}"
        )
    return [(int(pad[k]), int(pad[k + 1])) for k in range(0, len(pad), 2)]


def _check_border_mode(
    input: Tensor, mode: str, widths: list[tuple[int, int]], value: float | None
) -> None:
    """PyTorch's rules for reflect, replicate and circular padding."""
    if value is not None and value != 0:
        raise ValueError(f'pad: padding mode "{mode}" doesn\'t take in value argument')
    k = len(widths)
    if input.ndim not in (k + 1, k + 2) or k > 3:
        raise NotImplementedError(
            f"pad: padding size {2 * k} is not supported for {input.ndim}D input tensor in "
            f"{mode} mode.\n{_SUPPORTED}"
        )
    if mode != "circular" and 0 in input.shape[-(k + 1) :]:  # all but a batch dim
        raise ValueError(
            f"pad: expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 batch "
            f"size and other non-zero dimensions for input, but got: {input.shape}"
        )
    for i, (left, right) in enumerate(widths):
        dim = input.ndim - 1 - i
        size, out = input.shape[dim], input.shape[dim] + left + right
        if mode == "reflect" and not (left < size and right < size):
            raise ValueError(
                "pad: padding size should be less than the corresponding input dimension, "
                f"but got: padding ({left}, {right}) at dimension {dim} of input "
                f"{input.shape} (reflect mode mirrors the input without its edge)"
            )
        kept = size - max(-left, 0) - max(-right, 0)  # what circular mode wraps
        if mode == "circular" and max(left, right) > kept:
            raise ValueError(
                f"pad: padding ({left}, {right}) at dimension {dim} of input {input.shape} "
                f"causes wrapping around more than once (circular mode wraps the {kept} "
                "elements left after cropping)"
            )
        if out < (0 if mode == "circular" else 1):
            raise ValueError(
                f"pad: input (size {size} at dimension {dim}) is too small for padding "
                f"({left}, {right}): calculated output size {out}"
            )


def _constant(input: Tensor, widths: list[tuple[int, int]], value: float | None) -> Tensor:
    """Crop the negative widths with a slice, then pad the positive ones with ``value``."""
    crop = [slice(None)] * input.ndim
    grow = [(0, 0)] * input.ndim
    for i, (left, right) in enumerate(widths):
        dim = input.ndim - 1 - i
        size = input.shape[dim]
        if size + left + right < 0:
            raise ValueError(
                f"pad: the input size {size}, plus negative padding {left} and {right} "
                "resulted in a negative output size, which is invalid. Check dimension "
                f"{dim} of your input."
            )
        crop[dim] = slice(max(-left, 0), size - max(-right, 0))
        grow[dim] = (max(left, 0), max(right, 0))
    cropped = input[tuple(crop)] if any(min(w) < 0 for w in widths) else input
    return Pad.apply(cropped, widths=tuple(grow), value=0.0 if value is None else value)


@on_input_device
def pad(
    input: Tensor, pad: Sequence[int], mode: str = "constant", value: float | None = None
) -> Tensor:
    """Pad (or, with negative widths, crop) the last dims of ``input``, as
    ``torch.nn.functional.pad``.

    Parameters
    ----------
    input : Tensor
    pad : tuple of int
        ``(left, right)`` for the last dim, then ``(top, bottom)`` for the one before,
        ``(front, back)`` before that... An even number of ints, at most two per dim.
        Negative widths remove elements instead.
    mode : {"constant", "reflect", "replicate", "circular"}
        What fills the border (see the module's introduction). The three border modes
        pad the last 1, 2 or 3 dims of an input with one or two dims more (the channel
        and an optional batch dim), as PyTorch's.
    value : float, optional
        The fill of ``"constant"`` mode (default 0); the other modes refuse one.

    Returns
    -------
    Tensor
        A new tensor whose padded dims have grown by ``left + right``.

    Raises
    ------
    ValueError
        For an odd-length ``pad``, more widths than dims, an unknown ``mode``, a
        ``value`` in a border mode, reflect padding not smaller than its dim, circular
        padding larger than what is left of its dim after cropping, an empty channel or
        spatial dim in reflect and replicate mode, or a result with a negative size
        (in reflect and replicate mode, an empty one: PyTorch accepts a few of those
        in 2-D). PyTorch raises RuntimeError for these (NotImplementedError for an
        unknown mode).
    NotImplementedError
        For a border mode on a number of dims PyTorch does not pad.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.ops.pad import pad
    >>> x = mta.tensor([[1.0, 2.0, 3.0]])
    >>> pad(x, (2, 1), mode="reflect").tolist()
    [[3.0, 2.0, 1.0, 2.0, 3.0, 2.0]]
    >>> pad(x, (1, -1), value=9.0).tolist()
    [[9.0, 1.0, 2.0]]
    """
    if mode not in MODES:
        raise ValueError(f"pad: unrecognised padding mode {mode!r}; expected one of {MODES}")
    widths = _widths(input, pad)
    if mode == "constant":
        return _constant(input, widths, value)
    _check_border_mode(input, mode, widths, value)
    out = input
    for i, (left, right) in enumerate(widths):
        if left == right == 0:
            continue
        dim = input.ndim - 1 - i
        positions = source_positions(mode, input.shape[dim], left, right)
        index = Tensor._make(input.xp.asarray(positions), input.device, False, None)
        out = index_select(out, dim, index)
    return out if out is not input else input.clone()


__all__ = ["pad", "source_positions"]
