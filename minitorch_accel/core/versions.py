"""Version counters: how autograd notices that a tensor saved for backward was modified
in place (the check PyTorch makes, with the same error).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .tensor import Tensor


class VersionCounter:
    """How many times a storage has been written in place through the Tensor API.

    One counter per storage: a tensor, its views (reshape, indexing, transpose, ...) and
    :meth:`~minitorch_accel.Tensor.detach` share it; ``.data`` gets a new one, so writes
    through ``.data`` stay invisible to autograd, as in PyTorch. A :class:`Function`
    remembers the value for each tensor it saves for backward; backward compares.

    A new tensor starts with the shared, never-bumped ``UNWRITTEN`` (version 0) and gets
    a counter of its own from :func:`version_counter` at its first in-place write or
    view: most tensors are never written, and making a counter for each would cost every
    op.
    """

    __slots__ = ("value", "has_views")

    def __init__(self) -> None:
        self.value = 0
        self.has_views = False  # a view op shared it: history cannot be rebased in place


UNWRITTEN = VersionCounter()


def version_counter(t: Tensor) -> VersionCounter:
    """``t``'s own version counter, made on first need (replacing ``UNWRITTEN``)."""
    counter = t._version_counter
    if counter is UNWRITTEN:
        counter = t._version_counter = VersionCounter()
        node = t._node
        if node is not None and node.saves_output:  # node saved t's values: let it watch
            node._out_version = (counter, 0)
    return counter


def bump_version(t: Tensor) -> None:
    """Record an in-place write to ``t``'s storage (and so to its views')."""
    version_counter(t).value += 1


def _shared_counter(base: Tensor) -> VersionCounter:
    """``base``'s version counter, marked as shared by a view."""
    counter = version_counter(base)
    counter.has_views = True
    return counter


class RemovableHandle:
    """What :meth:`~minitorch_accel.Tensor.register_hook` returns: ``remove()`` takes the
    hook away again (as PyTorch's ``RemovableHandle``).
    """

    def __init__(self, remove: Callable[[], None]) -> None:
        self._remove = remove

    def remove(self) -> None:
        """Unregister the hook (doing it twice is harmless)."""
        self._remove()
