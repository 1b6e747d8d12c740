"""Are the ranks training the same model? Names, shapes and dtypes compared once.

Broadcast and all-reduce only see flat buffers: two different models with the same
total size would exchange (and average) unrelated numbers without any error. Before
the first exchange, each rank hashes the list of its tensors' names, shapes and dtypes
and the ranks compare the hashes (one small collective). Only when they differ do the
ranks exchange the whole lists, to name the first difference.
"""

from __future__ import annotations

import contextlib
import hashlib
import weakref
from typing import Any

from . import comm

Entry = tuple[str, tuple[int, ...], str]

# model -> the digest every rank agreed on; a model checked once is not checked again
# (until its tensors change, which changes its digest).
_agreed: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()


def describe(model: Any) -> list[Entry]:
    """``(kind 'name', shape, dtype)`` of every parameter and buffer of ``model``.

    Examples
    --------
    >>> from minitorch_accel import nn
    >>> describe(nn.Linear(3, 2))
    [("parameter 'weight'", (2, 3), 'float32'), ("parameter 'bias'", (2,), 'float32')]
    """
    entries: list[Entry] = []
    for kind, named in (("parameter", "named_parameters"), ("buffer", "named_buffers")):
        for name, t in getattr(model, named)() if hasattr(model, named) else []:
            entries.append((f"{kind} '{name}'", tuple(int(n) for n in t.shape), str(t.dtype)))
    return entries


def first_difference(mine: list[Entry], theirs: list[Entry], me: int, other: int) -> str:
    """In words, the first entry where two ranks' descriptions differ.

    Examples
    --------
    >>> from minitorch_accel import nn
    >>> first_difference(describe(nn.Linear(3, 2)), describe(nn.Linear(3, 4)), 0, 1)
    "parameter 'weight' is float32 (2, 3) on rank 0 but float32 (4, 3) on rank 1"
    """
    for a, b in zip(mine, theirs, strict=False):
        if a[0] != b[0]:
            return f"rank {me} has {a[0]} where rank {other} has {b[0]}"
        if a[1:] != b[1:]:
            return f"{a[0]} is {a[2]} {a[1]} on rank {me} but {b[2]} {b[1]} on rank {other}"
    if len(mine) != len(theirs):
        longer, rank_of_longer = (mine, me) if len(mine) > len(theirs) else (theirs, other)
        extra = longer[min(len(mine), len(theirs))][0]
        return (
            f"rank {me} has {len(mine)} tensors and rank {other} has {len(theirs)}; "
            f"the first one only rank {rank_of_longer} has is {extra}"
        )
    return "no difference"


def check_same_model(model: Any) -> None:
    """Raise ``ValueError`` on every rank if the ranks' models differ in their
    parameters' or buffers' names, shapes or dtypes.

    The first call for a model costs one small collective (a hash from every rank);
    later calls for the same, unchanged model cost none. :func:`broadcast_parameters`,
    :func:`allreduce_gradients` and :class:`DistributedTrainer` call it for you.

    Examples
    --------
    >>> from minitorch_accel import nn
    >>> check_same_model(nn.Linear(3, 2))  # one process: nothing to compare
    """
    if comm.world_size() == 1:
        return
    entries = describe(model)
    digest = hashlib.sha256(repr(entries).encode()).hexdigest()
    try:
        if _agreed.get(model) == digest:
            return
    except TypeError:  # not weak-referenceable: check every time
        pass
    digests = comm.allgather_object(digest)
    if len(set(digests)) > 1:
        everyone = comm.allgather_object(entries)
        other = next(r for r, d in enumerate(digests) if d != digests[0])
        difference = first_difference(everyone[0], everyone[other], 0, other)
        raise ValueError(
            f"the ranks' models differ: {difference}. Every rank must build the same "
            "model (same layers, in the same order, with the same sizes and dtype) before "
            "broadcast_parameters, allreduce_gradients or DistributedTrainer"
        )
    with contextlib.suppress(TypeError):
        _agreed[model] = digest
