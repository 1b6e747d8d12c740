"""Shape ops built from the basic ones: ``split``, ``chunk``, ``repeat``, ``unflatten``,
``tensor_split``, ``unbind``, ``vsplit``/``hsplit``/``dsplit``.

Each is a few calls to slicing, ``reshape`` and ``expand``, so its gradient comes
from theirs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.tensor import Tensor
from .shape import normalize_dim


def split(
    tensor: Tensor, split_size_or_sections: int | Sequence[int], dim: int = 0
) -> tuple[Tensor, ...]:
    """Pieces along ``dim``: of ``split_size`` each (the last may be smaller), or of the
    listed sizes (which must add up to the dim's size).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> [p.tolist() for p in mta.split(mta.arange(5), 2)]
    [[0, 1], [2, 3], [4]]
    """
    d = normalize_dim(dim, tensor.ndim, "split")
    n = tensor.shape[d]
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        if step <= 0:
            raise ValueError(f"split: split_size must be positive, got {step}")
        sizes = [min(step, n - start) for start in range(0, n, step)] or [0]
    else:
        sizes = [int(s) for s in split_size_or_sections]
        if sum(sizes) != n or min(sizes, default=0) < 0:
            raise ValueError(f"split: sections {sizes} do not add up to the size {n} of dim {dim}")
    pieces, start = [], 0
    for size in sizes:
        pieces.append(tensor[(slice(None),) * d + (slice(start, start + size),)])
        start += size
    return tuple(pieces)


def chunk(tensor: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """At most ``chunks`` pieces along ``dim``, each ``ceil(size / chunks)`` long (the
    last may be shorter, and fewer pieces come back when the size is small), as PyTorch.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> [p.tolist() for p in mta.chunk(mta.arange(5), 3)]
    [[0, 1], [2, 3], [4]]
    """
    if chunks <= 0:
        raise ValueError(f"chunk: chunks must be positive, got {chunks}")
    n = tensor.shape[normalize_dim(dim, tensor.ndim, "chunk")]
    return split(tensor, max(-(-n // chunks), 1), dim)


def repeat(tensor: Tensor, *sizes: Any) -> Tensor:
    """Tile the tensor ``sizes[i]`` times along each dim (extra leading sizes add dims),
    as ``Tensor.repeat`` (NumPy's ``tile``). The result has memory of its own, as in
    PyTorch: writing into it in place changes neither the input nor other copies.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.tensor([1, 2]).repeat(2, 2).tolist()
    [[1, 2, 1, 2], [1, 2, 1, 2]]
    >>> x = mta.tensor([1.0, 2.0])
    >>> y = x.repeat(2).div_(2)
    >>> x.tolist(), y.tolist()
    ([1.0, 2.0], [0.5, 1.0, 0.5, 1.0])
    """
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    if len(sizes) < tensor.ndim:
        raise ValueError(
            f"repeat: {len(sizes)} sizes given for a tensor with {tensor.ndim} dims; give "
            "at least one per dim"
        )
    out = tensor.reshape((1,) * (len(sizes) - tensor.ndim) + tuple(tensor.shape))
    for d, times in enumerate(sizes):
        if times == 1:
            continue
        shape = out.shape
        # a new axis of ``times`` copies in front of dim d, merged into it
        tiled = out.unsqueeze(d).expand(*shape[:d], int(times), *shape[d:])
        out = tiled.reshape(*shape[:d], int(times) * shape[d], *shape[d + 1 :])
    # A reshape that merged an expanded dim copied into memory of its own (with a
    # version counter of its own); otherwise ``out`` is still a view of the input, maybe
    # with stride 0 (the same element seen several times, read-only): copy it.
    if out is tensor or out._version_counter.has_views:
        return out.clone()
    return out


def unflatten(tensor: Tensor, dim: int, sizes: Sequence[int]) -> Tensor:
    """Split dim ``dim`` into several of ``sizes`` (one may be -1).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.zeros(2, 12).unflatten(1, (3, 4)).shape
    (2, 3, 4)
    """
    d = normalize_dim(dim, tensor.ndim, "unflatten")
    shape = tensor.shape
    return tensor.reshape(*shape[:d], *sizes, *shape[d + 1 :])


def tensor_split(
    input: Tensor, indices_or_sections: int | Sequence[int] | Tensor, dim: int = 0
) -> tuple[Tensor, ...]:
    """Views of ``input`` along ``dim``: ``n`` pieces as equal as possible (the first
    ``size % n`` one longer), or cut before each of the listed indices.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> [p.tolist() for p in mta.tensor_split(mta.arange(5), 3)]
    [[0, 1], [2, 3], [4]]
    >>> [p.tolist() for p in mta.tensor_split(mta.arange(5), [1, 4])]
    [[0], [1, 2, 3], [4]]
    """
    d = normalize_dim(dim, input.ndim, "tensor_split")
    n = input.shape[d]
    cuts: Any = indices_or_sections
    if isinstance(cuts, Tensor):
        cuts = cuts.tolist()
    if isinstance(cuts, int):
        if cuts <= 0:
            raise RuntimeError(
                f"tensor_split: number of sections must be larger than 0, got {cuts}"
            )
        small, extra = divmod(n, cuts)
        bounds = [i * small + min(i, extra) for i in range(cuts + 1)]
    else:
        bounds = [0, *[int(c) for c in cuts], n]
    pieces = []
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        lo, hi = min(max(lo + n if lo < 0 else lo, 0), n), min(max(hi + n if hi < 0 else hi, 0), n)
        pieces.append(input[(slice(None),) * d + (slice(lo, max(lo, hi)),)])
    return tuple(pieces)


def unbind(input: Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    """The slices of ``input`` along ``dim``, that dim removed (views).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> [r.tolist() for r in mta.unbind(mta.tensor([[1, 2], [3, 4]]), 1)]
    [[1, 3], [2, 4]]
    """
    d = normalize_dim(dim, input.ndim, "unbind")
    return tuple(input[(slice(None),) * d + (i,)] for i in range(input.shape[d]))


def _split_along(op: str, input: Tensor, sections: Any, dim: int, least: int) -> tuple[Tensor, ...]:
    if input.ndim < least:
        raise RuntimeError(
            f"torch.{op} requires a tensor with at least {least} dimension, but got a tensor "
            f"with {input.ndim} dimensions!"
        )
    if isinstance(sections, int) and input.shape[dim] % sections:
        raise RuntimeError(
            f"torch.{op} attempted to split along dimension {dim}, but the size of the "
            f"dimension {input.shape[dim]} is not divisible by the split_size {sections}!"
        )
    return tensor_split(input, sections, dim)


def vsplit(input: Tensor, indices_or_sections: int | Sequence[int]) -> tuple[Tensor, ...]:
    """:func:`tensor_split` along dim 0; an int must divide the size.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> [p.shape for p in mta.vsplit(mta.zeros(4, 2), 2)]
    [(2, 2), (2, 2)]
    """
    return _split_along("vsplit", input, indices_or_sections, 0, 2)


def hsplit(input: Tensor, indices_or_sections: int | Sequence[int]) -> tuple[Tensor, ...]:
    """:func:`tensor_split` along dim 1 (dim 0 for 1-d); an int must divide the size.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> [p.shape for p in mta.hsplit(mta.zeros(2, 4), [1])]
    [(2, 1), (2, 3)]
    """
    dim = 1 if input.ndim >= 2 else 0
    return _split_along("hsplit", input, indices_or_sections, dim, 1)


def dsplit(input: Tensor, indices_or_sections: int | Sequence[int]) -> tuple[Tensor, ...]:
    """:func:`tensor_split` along dim 2; an int must divide the size.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> [p.shape for p in mta.dsplit(mta.zeros(1, 2, 4), 2)]
    [(1, 2, 2), (1, 2, 2)]
    """
    return _split_along("dsplit", input, indices_or_sections, 2, 3)
