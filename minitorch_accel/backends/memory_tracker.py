"""Counting the bytes behind tensors, per device and per category, and the memory cap.

Every array a tensor is made around passes through :meth:`MemoryTracker.record` (from
``Tensor._make`` and the Tensor constructor) while tracking is on; so do the raw arrays
an op saves for its backward (a ReLU mask, a convolution's im2col matrix). Views share
their buffer: the bytes counted are those of the buffer (the array at the end of the
``.base`` chain on NumPy, the pool allocation on CuPy), once, while at least one
recorded array refers to it. A weak reference to each recorded array tells when it is
released.

Each buffer carries a *category*: ``"parameters"``, ``"gradients"``,
``"optimizer state"``, ``"activations"`` or ``"other"``. It is the one set by the
innermost :meth:`MemoryTracker.category` block (the backward pass runs in
``"gradients"``, ``Optimizer.step`` in ``"optimizer state"``), else ``"activations"``
for what the graph keeps for backward, else ``"other"``; a :class:`Parameter` re-labels
its buffer ``"parameters"``.

With a limit set for a device (:meth:`MemoryTracker.set_limit`), the allocation that
would pass it raises :class:`~minitorch_accel.backends.oom.OutOfMemoryError`,
the GPU's error, before any tensor holds the array: earlier tensors are untouched.

Tracking is off by default (``MINITORCH_ACCEL_TRACK_MEMORY=1`` turns it on at import);
then ``Tensor._make`` pays one attribute test.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import os
import threading
import weakref
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from .oom import OutOfMemoryError

if TYPE_CHECKING:
    from .device import Device

#: The categories of :func:`minitorch_accel.memory.memory_summary`, in table order.
CATEGORIES = ("parameters", "gradients", "optimizer state", "activations", "other")


class _Phase(threading.local):
    category: str | None = None


@dataclasses.dataclass
class _Storage:
    """One buffer: how many recorded arrays refer to it, its size, device and category."""

    views: int
    nbytes: int
    device: Device
    category: str


@dataclasses.dataclass
class DeviceCounts:
    """The counters of one device (bytes)."""

    allocated: int = 0
    peak: int = 0
    limit: int | None = None
    by_category: dict[str, int] = dataclasses.field(
        default_factory=lambda: dict.fromkeys(CATEGORIES, 0)
    )
    #: ``by_category`` at the moment the peak was reached.
    peak_by_category: dict[str, int] = dataclasses.field(
        default_factory=lambda: dict.fromkeys(CATEGORIES, 0)
    )
    allocations: int = 0
    frees: int = 0


class MemoryTracker:
    """The process-wide record of the bytes held by tensors on each device."""

    def __init__(self) -> None:
        #: True while counting: explicitly enabled, or a limit is set somewhere.
        self.enabled = False
        self._requested = False
        self._lock = threading.RLock()
        self._phase = _Phase()
        self._arrays: dict[int, weakref.ReferenceType[Any]] = {}  # id(array) -> its ref
        self._refs: dict[int, tuple[int, int]] = {}  # id(ref) -> (id(array), buffer key)
        self._storages: dict[int, _Storage] = {}
        self._devices: dict[Device, DeviceCounts] = {}

    # ------------------------------------------------------------------ switches
    def enable(self, enabled: bool = True) -> None:
        """Count from now on (``True``) or stop counting (``False``; limits keep it on)."""
        with self._lock:
            self._requested = bool(enabled)
            self._update_enabled()

    def _update_enabled(self) -> None:
        self.enabled = self._requested or any(c.limit is not None for c in self._devices.values())

    def set_limit(self, device: Device, nbytes: int | None) -> None:
        """Cap ``device`` at ``nbytes`` counted bytes (None removes the cap)."""
        if nbytes is not None and (isinstance(nbytes, bool) or int(nbytes) != nbytes or nbytes < 0):
            raise ValueError(f"a memory limit is a number of bytes >= 0 or None, got {nbytes!r}")
        with self._lock:
            self.counts(device).limit = None if nbytes is None else int(nbytes)
            self._update_enabled()

    @contextlib.contextmanager
    def category(self, name: str | None) -> Iterator[None]:
        """Label what is allocated inside the block ``name`` (None: the default rule)."""
        if name is not None and name not in CATEGORIES:
            raise ValueError(f"unknown memory category {name!r}; expected one of {CATEGORIES}")
        previous = self._phase.category
        self._phase.category = name
        try:
            yield
        finally:
            self._phase.category = previous

    # ------------------------------------------------------------------ reading
    def counts(self, device: Device) -> DeviceCounts:
        """The counters of ``device`` (created empty on first use)."""
        found = self._devices.get(device)
        if found is None:
            found = self._devices[device] = DeviceCounts()
        return found

    def reset_peak(self, device: Device) -> None:
        """Start a new peak measurement from the bytes in use now."""
        with self._lock:
            c = self.counts(device)
            c.peak = c.allocated
            c.peak_by_category = dict(c.by_category)

    def category_of(self, array: Any) -> str | None:
        """The category of the buffer behind ``array``, or None if it is not counted."""
        key = _storage_key(array)[0]
        found = self._storages.get(key)
        return None if found is None else found.category

    # ------------------------------------------------------------------ recording
    def record_tensor(self, array: Any, device: Device, node: Any) -> None:
        """Count the array of a new tensor and, if ``node`` (its graph node) is given,
        the raw arrays the node saved for backward.
        """
        phase = self._phase.category
        self.record(array, device, phase or ("activations" if node is not None else "other"))
        if node is not None:
            kind = type(array)
            for value in vars(node).values():
                if isinstance(value, _SCALARS):  # most attributes: nothing to look into
                    continue
                for saved in _arrays_in(value, kind):
                    self.record(saved, device, phase or "activations")

    def record(self, array: Any, device: Device, category: str) -> None:
        """Count ``array`` (a new buffer, or one more view of a counted one).

        Raises
        ------
        OutOfMemoryError
            If a new buffer would take ``device`` past its limit.
        """
        with self._lock:
            if id(array) in self._arrays:
                return
            key, nbytes = _storage_key(array)
            storage = self._storages.get(key)
            if storage is None:
                counts = self.counts(device)
                if counts.limit is not None and counts.allocated + nbytes > counts.limit:
                    # Garbage in reference cycles (the frames of an earlier error's
                    # traceback) may still hold buffers: free it before calling the
                    # device full, as a GPU allocator empties its cache and retries.
                    gc.collect()
                    if counts.allocated + nbytes > counts.limit:
                        raise _over_limit(device, nbytes, counts)
                try:
                    ref = weakref.ref(array, self._release)
                except TypeError:  # an array type without weak references: not counted
                    return
                storage = self._storages[key] = _Storage(0, nbytes, device, category)
                counts.allocated += nbytes
                counts.allocations += 1
                counts.by_category[category] += nbytes
                if counts.allocated > counts.peak:
                    counts.peak = counts.allocated
                    counts.peak_by_category = dict(counts.by_category)
            else:
                try:
                    ref = weakref.ref(array, self._release)
                except TypeError:
                    return
            storage.views += 1
            self._arrays[id(array)] = ref
            self._refs[id(ref)] = (id(array), key)

    def relabel(self, array: Any, device: Device, category: str) -> None:
        """Count ``array`` under ``category`` from now on (recording it if new)."""
        with self._lock:
            self.record(array, device, category)
            storage = self._storages.get(_storage_key(array)[0])
            if storage is None or storage.category == category:
                return
            by_category = self.counts(storage.device).by_category
            by_category[storage.category] -= storage.nbytes
            by_category[category] += storage.nbytes
            storage.category = category

    def _release(self, ref: weakref.ReferenceType[Any]) -> None:
        with self._lock:
            found = self._refs.pop(id(ref), None)
            if found is None:
                return
            array_id, key = found
            if self._arrays.get(array_id) is ref:
                del self._arrays[array_id]
            storage = self._storages[key]
            storage.views -= 1
            if storage.views == 0:
                del self._storages[key]
                counts = self.counts(storage.device)
                counts.allocated -= storage.nbytes
                counts.by_category[storage.category] -= storage.nbytes
                counts.frees += 1


#: Node attribute types that never hold an array (skipped without a closer look).
_SCALARS = (type(None), bool, int, float, str)


def _storage_key(array: Any) -> tuple[int, int]:
    """``(id, bytes)`` of the buffer behind ``array``: the end of the ``.base`` chain of a
    NumPy array, the pool allocation of a CuPy one.
    """
    if isinstance(array, np.ndarray):
        root = array
        while isinstance(root.base, np.ndarray):
            root = root.base
        return id(root), int(root.nbytes)
    memory = getattr(getattr(array, "data", None), "mem", None)
    if memory is not None:
        return id(memory), int(memory.size)
    return id(array), int(array.nbytes)


def _arrays_in(value: Any, kind: type) -> Iterator[Any]:
    """The arrays of type ``kind`` in a node attribute: the value itself, the items of a
    tuple or list, or the fields of a dataclass (one level deep).
    """
    if isinstance(value, kind):
        yield value
    elif isinstance(value, (tuple, list)):
        yield from (v for v in value if isinstance(v, kind))
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            item = getattr(value, field.name)
            if isinstance(item, kind):
                yield item


def _over_limit(device: Device, nbytes: int, counts: DeviceCounts) -> OutOfMemoryError:
    limit = counts.limit or 0
    return OutOfMemoryError(
        str(device),
        requested=nbytes,
        free=max(limit - counts.allocated, 0),
        total=limit,
        allocated=counts.allocated,
        held=counts.allocated,
        limit=limit,
    )


#: The tracker of this process (on from the start with ``MINITORCH_ACCEL_TRACK_MEMORY=1``).
tracker = MemoryTracker()
tracker.enable(os.environ.get("MINITORCH_ACCEL_TRACK_MEMORY", "0") == "1")
