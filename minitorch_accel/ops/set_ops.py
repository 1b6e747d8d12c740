"""Set and counting ops: ``unique``, ``unique_consecutive``, ``searchsorted``,
``bucketize``, ``isin``, ``bincount``, ``histc``.

Their results are indices, counts or sets of values: none records a gradient (PyTorch
defines none either, except through ``unique``'s values, whose backward raises there).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.tensor import Tensor
from .shape import normalize_dim


def _wrap(like: Tensor, array: Any) -> Tensor:
    return Tensor._make(array, like.device, False, None)


def _unique_result(
    input: Tensor, values: Any, inverse: Any, counts: Any, want_inverse: bool, want_counts: bool
) -> Any:
    out: list[Tensor] = [_wrap(input, values)]
    if want_inverse:
        out.append(_wrap(input, inverse.astype(np.int64)))
    if want_counts:
        out.append(_wrap(input, counts.astype(np.int64)))
    return out[0] if len(out) == 1 else tuple(out)


def unique(
    input: Tensor,
    sorted: bool = True,
    return_inverse: bool = False,
    return_counts: bool = False,
    dim: int | None = None,
) -> Any:
    """The distinct values of ``input`` in ascending order (the distinct slices along
    ``dim`` if given); with ``return_inverse`` also where each element went (``input``'s
    shape), with ``return_counts`` how often each occurs.

    The values are always sorted (as PyTorch on the CPU). The result records no gradient
    (PyTorch's backward raises).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.unique(mta.tensor([3, 1, 3, 2]), return_inverse=True, return_counts=True)
    (tensor([1, 2, 3]), tensor([2, 0, 2, 1]), tensor([1, 1, 2]))
    """
    xp = input.xp
    with input.device.guard():
        if dim is None:
            values, inverse, counts = xp.unique(
                input.array, return_inverse=True, return_counts=True
            )
            inverse = inverse.reshape(input.shape)
        else:
            d = normalize_dim(dim, input.ndim, "unique")
            values, inverse, counts = xp.unique(
                input.array, return_inverse=True, return_counts=True, axis=d
            )
            inverse = inverse.reshape(-1)
    return _unique_result(input, values, inverse, counts, return_inverse, return_counts)


def unique_consecutive(
    input: Tensor,
    return_inverse: bool = False,
    return_counts: bool = False,
    dim: int | None = None,
) -> Any:
    """``input`` with each run of equal consecutive values (slices along ``dim``) kept
    once; ``return_inverse`` and ``return_counts`` as in :func:`unique`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.unique_consecutive(mta.tensor([1, 1, 2, 2, 1]), return_counts=True)
    (tensor([1, 2, 1]), tensor([2, 2, 1]))
    """
    xp = input.xp
    with input.device.guard():
        if dim is None:
            flat, d = input.array.reshape(-1), 0
        else:
            flat, d = input.array, normalize_dim(dim, input.ndim, "unique_consecutive")
        moved = xp.moveaxis(flat, d, 0)
        n = moved.shape[0]
        rows = moved.reshape(n, -1)
        changed = xp.ones(n, dtype=bool)
        if n > 1:
            changed[1:] = (rows[1:] != rows[:-1]).any(axis=1)
        starts = xp.nonzero(changed)[0]
        values = xp.moveaxis(moved[starts], 0, d)
        inverse = xp.cumsum(changed) - 1
        counts = xp.diff(xp.concatenate([starts, xp.asarray([n])]))
        if dim is None:
            inverse = inverse.reshape(input.shape)
    return _unique_result(input, values, inverse, counts, return_inverse, return_counts)


def searchsorted(
    sorted_sequence: Tensor,
    input: Tensor | float,
    *,
    out_int32: bool = False,
    right: bool = False,
    side: str | None = None,
    sorter: Tensor | None = None,
) -> Tensor:
    """For each value of ``input``, the index where inserting it into the last dim of
    ``sorted_sequence`` keeps it sorted: the first such index (``side="left"``), or the
    last (``right=True`` / ``side="right"``). A multi-dim ``sorted_sequence`` searches
    each row with the matching row of ``input``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.searchsorted(mta.tensor([1, 3, 5]), mta.tensor([3, 6]))
    tensor([1, 3])
    >>> mta.searchsorted(mta.tensor([1, 3, 5]), mta.tensor([3, 6]), right=True)
    tensor([2, 3])
    """
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"searchsorted: side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError(
                "searchsorted: side and right can't be set to opposites, got side of left "
                "while right was True"
            )
        right = side == "right"
    xp = sorted_sequence.xp
    is_scalar = not isinstance(input, Tensor)
    with sorted_sequence.device.guard():
        values = xp.asarray(input) if is_scalar else input.array  # type: ignore[union-attr]
        seq = sorted_sequence.array
        if sorter is not None:
            seq = xp.take_along_axis(seq, sorter.array, axis=-1)
        how = "right" if right else "left"
        if seq.ndim <= 1:
            found = xp.searchsorted(seq, values, side=how)
        else:
            if seq.shape[:-1] != values.shape[:-1]:
                raise RuntimeError(
                    "searchsorted: boundaries and input should have the same leading dims, "
                    f"got {tuple(seq.shape)} and {tuple(values.shape)}"
                )
            rows_seq = seq.reshape(-1, seq.shape[-1])
            rows_in = values.reshape(-1, values.shape[-1])
            found = xp.stack(
                [xp.searchsorted(s, v, side=how) for s, v in zip(rows_seq, rows_in, strict=True)]
            ).reshape(values.shape)
        found = xp.asarray(found).astype(np.int32 if out_int32 else np.int64)
    return _wrap(sorted_sequence, found)


def bucketize(
    input: Tensor | float, boundaries: Tensor, *, out_int32: bool = False, right: bool = False
) -> Tensor:
    """The bucket of each value of ``input`` between the sorted 1-d ``boundaries``:
    ``i`` with ``boundaries[i-1] < x <= boundaries[i]`` (with ``right=True``,
    ``boundaries[i-1] <= x < boundaries[i]``).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.bucketize(mta.tensor([1, 5, 9]), mta.tensor([1, 3, 5, 7]))
    tensor([0, 2, 4])
    """
    if not isinstance(boundaries, Tensor) or boundaries.ndim != 1:
        raise RuntimeError("bucketize: boundaries tensor must be 1 dimension")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def isin(
    elements: Tensor | float,
    test_elements: Tensor | float,
    *,
    assume_unique: bool = False,
    invert: bool = False,
) -> Tensor:
    """Whether each element of ``elements`` occurs in ``test_elements`` (a bool tensor of
    ``elements``' shape; ``invert=True`` for "does not occur"). Either may be a number.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.isin(mta.tensor([1, 2, 3]), mta.tensor([2, 9]))
    tensor([False,  True, False])
    """
    like = elements if isinstance(elements, Tensor) else test_elements
    if not isinstance(like, Tensor):
        raise TypeError("isin: elements or test_elements must be a Tensor")
    xp = like.xp
    with like.device.guard():
        values = elements.array if isinstance(elements, Tensor) else xp.asarray(elements)
        tests = (
            test_elements.array if isinstance(test_elements, Tensor) else xp.asarray(test_elements)
        )
        found = xp.isin(values, tests, assume_unique=assume_unique, invert=invert)
    return _wrap(like, xp.asarray(found))


def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """How often each value ``0..max(input)`` occurs in the 1-d non-negative integer
    ``input`` (at least ``minlength`` bins); with ``weights`` the sum of the weights of
    each value's positions (float32 and float16 weights keep their dtype, others give
    float64, as PyTorch). Records no gradient, as in PyTorch.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.bincount(mta.tensor([0, 2, 2]))
    tensor([1, 0, 2])
    """
    if input.ndim != 1 or input.dtype.kind not in "iu":
        raise RuntimeError(
            "bincount only supports 1-d non-negative integral inputs, got "
            f"{input.dtype} {tuple(input.shape)}"
        )
    if minlength < 0:
        raise RuntimeError(f"bincount: minlength should be >= 0, got {minlength}")
    xp = input.xp
    with input.device.guard():
        if input.numel() and bool((input.array < 0).any()):
            raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
        if weights is None:
            return _wrap(input, xp.bincount(input.array, minlength=minlength).astype(np.int64))
        if weights.shape != input.shape:
            raise RuntimeError("bincount: weights should be 1-d and have the same length as input")
        keep = weights.dtype if weights.dtype in (np.float32, np.float16) else np.float64
        counts = xp.bincount(
            input.array, weights=weights.array.astype(np.float64), minlength=minlength
        )
    return _wrap(input, counts.astype(keep))


def histc(input: Tensor, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:
    """A histogram of ``input`` with ``bins`` equal bins between ``min`` and ``max``
    (both 0: the data's own min and max); values outside are ignored. Floats only; the
    result has ``input``'s dtype and records no gradient.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.histc(mta.tensor([1.0, 2.0, 1.0]), bins=4, min=0, max=3)
    tensor([0., 2., 1., 0.])
    """
    if input.dtype.kind != "f":
        raise NotImplementedError(
            f"histc: not implemented for {input.dtype}; convert it with .float()"
        )
    if bins <= 0:
        raise RuntimeError(f"histc: bins must be > 0, but got {bins}")
    xp = input.xp
    with input.device.guard():
        data = input.array.reshape(-1)
        lo, hi = float(min), float(max)
        if lo == hi and data.size:
            lo, hi = float(data.min()), float(data.max())
        if lo == hi:
            lo, hi = lo - 1, hi + 1
        if not (np.isfinite(lo) and np.isfinite(hi)):
            raise RuntimeError(f"histc: range of [{lo}, {hi}] is not finite")
        if lo > hi:
            raise RuntimeError("histc: max must be larger than min")
        inside = data[(data >= lo) & (data <= hi)]
        position = ((inside - lo) * bins / (hi - lo)).astype(np.int64)
        position = xp.minimum(position, bins - 1)
        counts = xp.bincount(position, minlength=bins)
    return _wrap(input, counts.astype(input.dtype))
