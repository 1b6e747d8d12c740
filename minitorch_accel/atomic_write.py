"""Write a file atomically: into a temporary file beside it, renamed into place.

An interrupted write (a full disk, a killed job) leaves the previous file intact, and
the temporary file it leaves behind is removed by the next write of the same target.
A writer holds an exclusive lock (``flock``) on its temporary file while it writes;
a temporary file of the same target that nobody holds a lock on belongs to a writer
that died, and is deleted. Temporary names stay within the 255 bytes a file name may
have, whatever the length of the target's name.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

try:
    import fcntl
except ImportError:  # not on POSIX: stale files are not detected
    fcntl = None  # type: ignore[assignment]

__all__ = ["atomic_write", "remove_stale_temps", "temp_prefix"]

_KEEP = 100  # characters of the target's name kept in the temporary name


def temp_prefix(target: str | os.PathLike[str]) -> str:
    """The start of every temporary name for ``target``: a dot, up to 100 characters of
    its name and a hash of the whole name (so truncated names stay distinct).

    Examples
    --------
    >>> temp_prefix("/runs/model.npz")
    '.model.npz.0469109c.'
    >>> len(temp_prefix("x" * 249)) + len("0123456789ab.tmp") <= 255
    True
    """
    name = Path(target).name
    digest = hashlib.sha256(name.encode("utf-8", "surrogateescape")).hexdigest()[:8]
    return f".{name[:_KEEP]}.{digest}."


def remove_stale_temps(target: str | os.PathLike[str]) -> list[Path]:
    """Delete the temporary files of ``target`` left by writers that died; return them."""
    folder = Path(target).parent
    prefix = temp_prefix(target)
    removed: list[Path] = []
    if fcntl is None:
        return removed
    try:
        candidates = [p for p in folder.iterdir() if p.name.startswith(prefix)]
    except OSError:
        return removed
    for path in candidates:
        if not path.name.endswith(".tmp"):
            continue
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a live writer holds it
        except OSError:
            continue
        else:
            with contextlib.suppress(OSError):
                path.unlink()
                removed.append(path)
        finally:
            os.close(fd)
    return removed


@contextlib.contextmanager
def atomic_write(target: str | os.PathLike[str], mode: int = 0o644) -> Iterator[BinaryIO]:
    """Open a temporary file beside ``target`` for writing; on a clean exit, flush it
    to disk and rename it to ``target``; on an error, delete it.

    Errors name ``target`` (never the temporary file).

    Examples
    --------
    >>> import tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "a.bin")
    >>> with atomic_write(path) as f:
    ...     _ = f.write(b"hello")
    >>> open(path, "rb").read()
    b'hello'
    """
    target = os.fspath(target)
    directory = os.path.dirname(os.path.abspath(target))
    remove_stale_temps(target)
    tmp = os.path.join(directory, f"{temp_prefix(target)}{secrets.token_hex(6)}.tmp")
    try:
        f = open(tmp, "xb")  # noqa: SIM115 - closed below, before the rename
    except OSError as exc:
        raise _naming(exc, target) from None
    try:
        with f:
            if fcntl is not None:
                fcntl.flock(f.fileno(), fcntl.LOCK_EX)
            yield f
            f.flush()
            os.fsync(f.fileno())
            os.chmod(tmp, mode)
            os.replace(tmp, target)  # still locked: no cleaner can take it meanwhile
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        if isinstance(exc, OSError):
            raise _naming(exc, target) from None
        raise
    _sync_directory(directory)


def _naming(exc: OSError, target: str) -> OSError:
    """``exc`` said about ``target`` (a message naming a temporary file misleads)."""
    message = f"cannot write {target!r}: {exc.strerror or exc}"
    return type(exc)(exc.errno, message) if exc.errno else OSError(message)


def _sync_directory(directory: str) -> None:
    """Make the rename durable (POSIX); a no-op where directories cannot be opened."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)
