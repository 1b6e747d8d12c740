"""How many bytes this process may still allocate on the host, to refuse a file whose
header declares more (a decompression bomb, a crafted checkpoint) before allocating.

The limit is the smaller of the machine's physical memory and what ``RLIMIT_AS`` (the
address-space limit of ``ulimit -v``, of batch schedulers and of containers) leaves
above what the process already maps. Either may be unknown on some systems; then it
does not count.
"""

from __future__ import annotations

import os

__all__ = ["check_host_allocation", "host_memory_limit"]


def _address_space_left() -> int | None:
    try:
        import resource
    except ImportError:  # not on POSIX
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return None
    used = 0
    try:
        with open("/proc/self/statm") as f:
            used = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        pass
    return max(0, int(soft) - used)


def _physical_memory() -> int | None:
    try:
        return int(os.sysconf("SC_PHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return None


def host_memory_limit() -> int | None:
    """Bytes this process may still allocate, as far as can be told (None: unknown).

    Examples
    --------
    >>> limit = host_memory_limit()
    >>> limit is None or limit > 0
    True
    """
    known = [n for n in (_address_space_left(), _physical_memory()) if n is not None]
    return min(known) if known else None


def check_host_allocation(nbytes: int, what: str) -> None:
    """Raise ``ValueError`` naming ``what`` when ``nbytes`` exceed :func:`host_memory_limit`.

    Examples
    --------
    >>> check_host_allocation(10**30, "x.idx: shape (10**15, 10**15)")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: x.idx: shape (10**15, 10**15) needs 1000...000 bytes, more than this process ...
    """
    limit = host_memory_limit()
    if limit is not None and nbytes > limit:
        raise ValueError(
            f"{what} needs {nbytes} bytes, more than this process can allocate "
            f"({limit} bytes: the smaller of the physical memory and the address-space "
            "limit, ulimit -v); the file is damaged or crafted, or needs a larger machine"
        )
