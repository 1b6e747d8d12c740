"""Fetch dataset files from public mirrors, check their SHA-256, write them atomically.

MNIST's original site often refuses downloads, so every dataset has several
mirrors, tried in turn. Each file is streamed into a temporary file in the
destination directory (with a progress bar), a broken transfer is resumed with
an HTTP ``Range`` request (or restarted when the server ignores ranges) a small
number of times, the SHA-256 is compared with the official value, and only then
is the file renamed into place. Nothing half-downloaded or unverified is ever
left under the final name.

The mirror lists and hash tables are module constants; every function also takes
them as arguments, so tests (or a local mirror) can replace them.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import re
import signal
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tqdm import tqdm

__all__ = [
    "FASHION_MNIST_MIRRORS",
    "FASHION_MNIST_SHA256",
    "FASHION_MNIST_SIZES",
    "IDX_FILES",
    "MNIST_MIRRORS",
    "MNIST_SHA256",
    "MNIST_SIZES",
    "download_files",
    "fetch_url",
    "sha256_file",
]

#: The four files of MNIST and of Fashion-MNIST (the same names for both).
IDX_FILES: tuple[str, ...] = (
    "train-images-idx3-ubyte.gz",
    "train-labels-idx1-ubyte.gz",
    "t10k-images-idx3-ubyte.gz",
    "t10k-labels-idx1-ubyte.gz",
)

MNIST_MIRRORS: tuple[str, ...] = (
    "https://ossci-datasets.s3.amazonaws.com/mnist/",
    "https://storage.googleapis.com/cvdf-datasets/mnist/",
    "http://yann.lecun.com/exdb/mnist/",
)

FASHION_MNIST_MIRRORS: tuple[str, ...] = (
    "https://fashion-mnist.s3-website.eu-central-1.amazonaws.com/",
    "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/",
    "https://raw.githubusercontent.com/zalandoresearch/fashion-mnist/master/data/fashion/",
)

# SHA-256 of the official .gz files. The values agree across TensorFlow Datasets'
# url_checksums (mnist.txt, fashion_mnist.txt) and several independent projects;
# sizes in bytes for reference: MNIST 9912422, 28881, 1648877, 4542;
# Fashion-MNIST 26421880, 29515, 4422102, 5148.
MNIST_SHA256: dict[str, str] = {
    "train-images-idx3-ubyte.gz": "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609",  # noqa: E501
    "train-labels-idx1-ubyte.gz": "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c",  # noqa: E501
    "t10k-images-idx3-ubyte.gz": "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6",
    "t10k-labels-idx1-ubyte.gz": "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6",
}

FASHION_MNIST_SHA256: dict[str, str] = {
    "train-images-idx3-ubyte.gz": "3aede38d61863908ad78613f6a32ed271626dd12800ba2636569512369268a84",  # noqa: E501
    "train-labels-idx1-ubyte.gz": "a04f17134ac03560a47e3764e11b92fc97de4d1bfaf8ba1a3aa29af54cc90845",  # noqa: E501
    "t10k-images-idx3-ubyte.gz": "346e55b948d973a97e58d2351dde16a484bd415d4595297633bb08f03db6a073",
    "t10k-labels-idx1-ubyte.gz": "67da17c76eaffca5446c3361aaab5c3cd6d1c2608764d35dfb1850b086bf8dd5",
}

#: Sizes in bytes of the official .gz files (a download stops at one byte more).
MNIST_SIZES: dict[str, int] = {
    "train-images-idx3-ubyte.gz": 9912422,
    "train-labels-idx1-ubyte.gz": 28881,
    "t10k-images-idx3-ubyte.gz": 1648877,
    "t10k-labels-idx1-ubyte.gz": 4542,
}

FASHION_MNIST_SIZES: dict[str, int] = {
    "train-images-idx3-ubyte.gz": 26421880,
    "train-labels-idx1-ubyte.gz": 29515,
    "t10k-images-idx3-ubyte.gz": 4422102,
    "t10k-labels-idx1-ubyte.gz": 5148,
}

_USER_AGENT = "minitorch_accel-dataset-downloader/0.1"
_CHUNK = 1 << 16
_CONTENT_RANGE = re.compile(r"bytes (\d+)-\d+/(\d+|\*)")


class _MirrorFailed(Exception):  # noqa: N818  (private control flow, never escapes)
    """This URL cannot deliver the file; the reason is the message."""


def sha256_file(path: str | os.PathLike[str]) -> str:
    """Return the SHA-256 of a file as 64 lowercase hex digits.

    Parameters
    ----------
    path : str or os.PathLike
        The file to hash; read in chunks, so any size works.
    """
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class _Progress:
    """One file's download in progress: the ``.part`` file, its running SHA-256, its
    byte count, the size it must not exceed, the moment it must be done by and the
    SIGTERM guard whose signal ends it.
    """

    def __init__(
        self, part: Path, size: int | None, deadline: float, guard: _RaiseOnSigterm
    ) -> None:
        self.part, self.size, self.guard = part, size, guard
        self.end = time.monotonic() + deadline
        self.deadline = deadline
        self.restart()

    def restart(self) -> None:
        self.part.write_bytes(b"")
        self.digest, self.got = hashlib.sha256(), 0

    def check(self) -> None:
        """Raise on a SIGTERM (:meth:`_RaiseOnSigterm.check`) or a passed deadline."""
        self.guard.check()
        if time.monotonic() > self.end:
            raise _MirrorFailed(
                f"did not finish within {self.deadline:g} s (deadline=) after {self.got} bytes"
            )


def _transfer(  # noqa: C901  (one check per way a download can go wrong, in order)
    url: str, state: _Progress, timeout: float, progress: bool, known: bool
) -> str | None:
    """One HTTP request appended to ``state.part``, resuming it if it holds bytes.

    Returns None when the whole body arrived, else why the transfer broke.
    Raises _MirrorFailed when the server cannot be reached, refuses the file, sends
    more than the expected size, runs past the deadline, or sends a body whose end
    cannot be recognized (no Content-Length, not chunked) while nothing else
    (``known``: a SHA-256 or a size) can tell a complete file from a truncated one.
    """
    state.check()
    have = state.got
    request = urllib.request.Request(url, headers={"User-Agent": _USER_AGENT})
    if have:
        request.add_header("Range", f"bytes={have}-")
    try:
        response = urllib.request.urlopen(request, timeout=timeout)
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and have:  # our range is no good: start again from zero
            state.restart()
            return "server refused to resume (HTTP 416)"
        raise _MirrorFailed(f"HTTP {exc.code} {exc.reason}") from exc
    except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
        raise _MirrorFailed(str(getattr(exc, "reason", exc))) from exc
    with response:
        match = _CONTENT_RANGE.match(response.headers.get("Content-Range", ""))
        if not (response.status == 206 and match and int(match.group(1)) == have):
            state.restart()  # the server sends the whole file again
        length = response.headers.get("Content-Length")
        total = state.got + int(length) if length is not None and length.isdigit() else None
        if total is None and not known and not getattr(response, "chunked", False):
            raise _MirrorFailed(
                "the server sent no Content-Length, so a truncated body cannot be told from "
                "a complete one; pass sha256= (or size=) to download it"
            )
        if total is not None and state.size is not None and total != state.size:
            raise _MirrorFailed(f"the server announces {total} bytes, expected {state.size}")
        bar = tqdm(
            total=total,
            initial=state.got,
            unit="B",
            unit_scale=True,
            unit_divisor=1024,
            desc=url.rsplit("/", 1)[-1],
            disable=not progress,
            leave=False,
        )
        try:
            with open(state.part, "ab") as f:
                # read1: what has arrived (up to a chunk), so the deadline is checked
                # between reads even when a server drips one byte at a time
                while chunk := response.read1(_CHUNK):
                    f.write(chunk)
                    state.digest.update(chunk)
                    state.got += len(chunk)
                    bar.update(len(chunk))
                    if state.size is not None and state.got > state.size:
                        raise _MirrorFailed(
                            f"the server sent more than the expected {state.size} bytes"
                        )
                    state.check()
        except (OSError, http.client.HTTPException) as exc:
            return f"transfer broken after {state.got} bytes ({exc!r})"
        finally:
            bar.close()
    if total is not None and state.got != total:
        return f"transfer broken after {state.got} of {total} bytes"
    if state.size is not None and state.got != state.size:
        return f"transfer broken after {state.got} of {state.size} bytes"
    return None


class _RaiseOnSigterm:
    """While downloading in the main thread, SIGTERM raises ``SystemExit(143)`` (instead
    of ending the process at once), so that the ``.part`` file is removed.

    The handler also records the signal, and :meth:`check` (called between reads)
    raises again: a handler that runs inside a ``__del__`` or a weakref callback (the
    import system has some) has its exception printed and dropped by Python, and the
    download would otherwise go on.
    """

    def __enter__(self) -> _RaiseOnSigterm:
        self.previous: Any = None
        self.received: int | None = None
        if (
            threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
        ):
            self.previous = signal.signal(signal.SIGTERM, self._handle)
        return self

    def _handle(self, signum: int, frame: Any) -> None:
        self.received = signum
        raise SystemExit(128 + signum)

    def check(self) -> None:
        """Raise ``SystemExit(128 + signum)`` if the signal came (even if dropped)."""
        if self.received is not None:
            raise SystemExit(128 + self.received)

    def __exit__(self, *exc: object) -> None:
        if self.previous is not None:
            signal.signal(signal.SIGTERM, self.previous)


def fetch_url(
    url: str,
    dest: str | os.PathLike[str],
    sha256: str | None = None,
    *,
    size: int | None = None,
    retries: int = 3,
    timeout: float = 30.0,
    deadline: float = 1800.0,
    retry_delay: float = 1.0,
    progress: bool = True,
) -> None:
    """Download one URL to ``dest``: verified, atomic, retried when the transfer breaks.

    Parameters
    ----------
    url : str
        What to fetch (``http://``, ``https://`` or anything urllib opens).
    dest : str or os.PathLike
        Final path (its folder is created if needed). Bytes go to a temporary
        ``.part`` file in the same folder, renamed to ``dest`` only after the checks
        passed, and removed on every failure (SIGTERM included).
    sha256 : str, optional
        Expected SHA-256 (hex), computed while the bytes arrive. None skips the check.
    size : int, optional
        Expected size in bytes: a server announcing another size is refused, and the
        transfer stops at ``size + 1`` bytes instead of filling the disk.
    retries : int, default 3
        Tries of a transfer that breaks part way (each resumes with an HTTP range
        request if the server allows it, else restarts).
    timeout : float, default 30.0
        Socket timeout in seconds (for each read).
    deadline : float, default 1800.0
        Seconds the whole download (every try) may take; checked between reads, so a
        server sending one byte a second is given up on too.
    retry_delay : float, default 1.0
        Seconds to wait before try ``k + 1`` is ``retry_delay * k``.
    progress : bool, default True
        Show a tqdm progress bar in bytes.

    Raises
    ------
    RuntimeError
        If the server cannot be reached, answers with an HTTP error, the transfer
        keeps breaking, is too large or too slow, cannot be checked for completeness
        (no Content-Length, no ``sha256`` and no ``size``), or the SHA-256 does not
        match. The message names the URL and the reason.

    Examples
    --------
    >>> fetch_url("http://127.0.0.1:9/x.gz", "x.gz", retries=1)  # doctest: +SKIP
    Traceback (most recent call last):
    RuntimeError: http://127.0.0.1:9/x.gz: [Errno 111] Connection refused
    """
    target = Path(dest)
    target.parent.mkdir(parents=True, exist_ok=True)
    known = sha256 is not None or size is not None
    with _RaiseOnSigterm() as guard:
        fd, tmp = tempfile.mkstemp(
            dir=target.parent, prefix=f".{target.name[:40]}.", suffix=".part"
        )
        os.close(fd)
        part = Path(tmp)
        try:
            state = _Progress(part, size, deadline, guard)
            reason: str | None = "no try made"
            for attempt in range(1, max(1, retries) + 1):
                reason = _transfer(url, state, timeout, progress, known)
                if reason is None:
                    break
                if attempt < retries:
                    time.sleep(retry_delay * attempt)
            else:
                raise _MirrorFailed(f"{reason}; gave up after {retries} tries")
            if sha256 is not None:
                actual = state.digest.hexdigest()
                if actual != sha256.lower():
                    raise _MirrorFailed(
                        f"SHA-256 mismatch: got {actual}, expected {sha256.lower()}"
                    )
            guard.check()
            os.chmod(part, 0o644)
            os.replace(part, target)
        except _MirrorFailed as exc:
            raise RuntimeError(f"{url}: {exc}") from exc
        finally:
            if part.exists():
                part.unlink()


def _check_name(name: str) -> None:
    """A file name from a mirror list must stay inside the download folder."""
    if not name or "/" in name or "\\" in name or name in (".", "..") or ".." in name:
        raise ValueError(
            f"download_files: file name {name!r} may not be empty or contain '/', '\\' "
            "or '..': names are joined to the download folder and to each mirror's URL"
        )


def download_files(
    directory: str | os.PathLike[str],
    files: Sequence[str] = IDX_FILES,
    mirrors: Sequence[str] = MNIST_MIRRORS,
    sha256: Mapping[str, str] | None = None,
    *,
    sizes: Mapping[str, int] | None = None,
    dataset: str = "MNIST",
    hint: str | None = None,
    retries: int = 3,
    timeout: float = 30.0,
    deadline: float = 1800.0,
    retry_delay: float = 1.0,
    progress: bool = True,
) -> list[Path]:
    r"""Download ``files`` into ``directory``, each from the first mirror that delivers it.

    A file already in ``directory`` whose SHA-256 matches is kept. The mirror that
    delivered the previous file is tried first for the next one.

    Parameters
    ----------
    directory : str or os.PathLike
        Where the files go (created if needed).
    files : sequence of str
        File names, appended to each mirror's base URL (no ``/``, ``\\`` or ``..``).
    mirrors : sequence of str
        Base URLs ending with ``/``, tried in order.
    sha256 : mapping of str to str, optional
        Expected SHA-256 per file name. A file missing from the table is not checked.
    sizes : mapping of str to int, optional
        Expected size in bytes per file name (see ``size`` in :func:`fetch_url`).
    dataset : str, default "MNIST"
        Name used in messages.
    hint : str, optional
        Extra line appended to the error message (another way to get the data).
    retries, timeout, deadline, retry_delay, progress
        As in :func:`fetch_url` (``deadline`` is per file).

    Returns
    -------
    list of pathlib.Path
        The paths of the files, in the order of ``files``.

    Raises
    ------
    RuntimeError
        When every mirror failed for a file. The message lists each URL tried with
        its reason and says which files to put, by hand, in which directory.
    ValueError
        For a file name that would leave the folder.
    """
    for name in files:
        _check_name(name)
    folder = Path(directory).expanduser().resolve()
    folder.mkdir(parents=True, exist_ok=True)
    table = dict(sha256 or {})
    order = list(mirrors)
    paths: list[Path] = []
    for name in files:
        target = folder / name
        expected = table.get(name)
        if target.is_file() and (expected is None or sha256_file(target) == expected):
            paths.append(target)
            continue
        failures: list[str] = []
        for base in order:
            try:
                fetch_url(
                    base + name,
                    target,
                    expected,
                    size=(sizes or {}).get(name),
                    retries=retries,
                    timeout=timeout,
                    deadline=deadline,
                    retry_delay=retry_delay,
                    progress=progress,
                )
            except RuntimeError as exc:
                failures.append(str(exc))
                continue
            order.remove(base)
            order.insert(0, base)
            break
        else:
            tried = "\n".join(f"  {line}" for line in failures) or "  (no mirror given)"
            wanted = "\n".join(f"  {f}" for f in files)
            message = (
                f"could not download {dataset}: every mirror failed for {name}:\n{tried}\n"
                f"Download these files by hand and put them in {folder}/ :\n{wanted}"
            )
            raise RuntimeError(message + (f"\n{hint}" if hint else ""))
        paths.append(target)
    return paths
