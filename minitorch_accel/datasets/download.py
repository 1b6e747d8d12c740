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
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path

from tqdm import tqdm

__all__ = [
    "FASHION_MNIST_MIRRORS",
    "FASHION_MNIST_SHA256",
    "IDX_FILES",
    "MNIST_MIRRORS",
    "MNIST_SHA256",
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


def _transfer(url: str, part: Path, timeout: float, progress: bool) -> str | None:
    """One HTTP request into ``part``, resuming it if it holds bytes.

    Returns None when the whole body arrived, else why the transfer broke.
    Raises _MirrorFailed when the server cannot be reached or refuses the file.
    """
    have = part.stat().st_size
    request = urllib.request.Request(url, headers={"User-Agent": _USER_AGENT})
    if have:
        request.add_header("Range", f"bytes={have}-")
    try:
        response = urllib.request.urlopen(request, timeout=timeout)
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and have:  # our range is no good: start again from zero
            part.write_bytes(b"")
            return "server refused to resume (HTTP 416)"
        raise _MirrorFailed(f"HTTP {exc.code} {exc.reason}") from exc
    except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
        raise _MirrorFailed(str(getattr(exc, "reason", exc))) from exc
    with response:
        start, mode = 0, "wb"
        match = _CONTENT_RANGE.match(response.headers.get("Content-Range", ""))
        if response.status == 206 and match and int(match.group(1)) == have:
            start, mode = have, "ab"
        length = response.headers.get("Content-Length")
        total = start + int(length) if length is not None and length.isdigit() else None
        got = start
        bar = tqdm(
            total=total,
            initial=start,
            unit="B",
            unit_scale=True,
            unit_divisor=1024,
            desc=url.rsplit("/", 1)[-1],
            disable=not progress,
            leave=False,
        )
        try:
            with open(part, mode) as f:
                while chunk := response.read(_CHUNK):
                    f.write(chunk)
                    got += len(chunk)
                    bar.update(len(chunk))
        except (OSError, http.client.HTTPException) as exc:
            return f"transfer broken after {got} bytes ({exc!r})"
        finally:
            bar.close()
    if total is not None and got != total:
        return f"transfer broken after {got} of {total} bytes"
    return None


def fetch_url(
    url: str,
    dest: str | os.PathLike[str],
    sha256: str | None = None,
    *,
    retries: int = 3,
    timeout: float = 30.0,
    retry_delay: float = 1.0,
    progress: bool = True,
) -> None:
    """Download one URL to ``dest``: verified, atomic, retried when the transfer breaks.

    Parameters
    ----------
    url : str
        What to fetch (``http://``, ``https://`` or anything urllib opens).
    dest : str or os.PathLike
        Final path. Bytes go to a temporary file in the same directory, which is
        renamed to ``dest`` only after the hash matched.
    sha256 : str, optional
        Expected SHA-256 (hex). None skips the check.
    retries : int, default 3
        Tries of a transfer that breaks part way (each resumes with an HTTP range
        request if the server allows it, else restarts).
    timeout : float, default 30.0
        Socket timeout in seconds.
    retry_delay : float, default 1.0
        Seconds to wait before try ``k + 1`` is ``retry_delay * k``.
    progress : bool, default True
        Show a tqdm progress bar in bytes.

    Raises
    ------
    RuntimeError
        If the server cannot be reached, answers with an HTTP error, the transfer
        keeps breaking, or the SHA-256 does not match. The message names the URL and
        the reason; the temporary file is deleted.
    """
    target = Path(dest)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
    os.close(fd)
    part = Path(tmp)
    try:
        reason: str | None = "no try made"
        for attempt in range(1, max(1, retries) + 1):
            reason = _transfer(url, part, timeout, progress)
            if reason is None:
                break
            if attempt < retries:
                time.sleep(retry_delay * attempt)
        else:
            raise _MirrorFailed(f"{reason}; gave up after {retries} tries")
        if sha256 is not None:
            actual = sha256_file(part)
            if actual != sha256.lower():
                raise _MirrorFailed(f"SHA-256 mismatch: got {actual}, expected {sha256.lower()}")
        os.chmod(part, 0o644)
        os.replace(part, target)
    except _MirrorFailed as exc:
        raise RuntimeError(f"{url}: {exc}") from exc
    finally:
        if part.exists():
            part.unlink()


def download_files(
    directory: str | os.PathLike[str],
    files: Sequence[str] = IDX_FILES,
    mirrors: Sequence[str] = MNIST_MIRRORS,
    sha256: Mapping[str, str] | None = None,
    *,
    dataset: str = "MNIST",
    hint: str | None = None,
    retries: int = 3,
    timeout: float = 30.0,
    retry_delay: float = 1.0,
    progress: bool = True,
) -> list[Path]:
    """Download ``files`` into ``directory``, each from the first mirror that delivers it.

    A file already in ``directory`` whose SHA-256 matches is kept. The mirror that
    delivered the previous file is tried first for the next one.

    Parameters
    ----------
    directory : str or os.PathLike
        Where the files go (created if needed).
    files : sequence of str
        File names, appended to each mirror's base URL.
    mirrors : sequence of str
        Base URLs ending with ``/``, tried in order.
    sha256 : mapping of str to str, optional
        Expected SHA-256 per file name. A file missing from the table is not checked.
    dataset : str, default "MNIST"
        Name used in messages.
    hint : str, optional
        Extra line appended to the error message (another way to get the data).
    retries, timeout, retry_delay, progress
        As in :func:`fetch_url`.

    Returns
    -------
    list of pathlib.Path
        The paths of the files, in the order of ``files``.

    Raises
    ------
    RuntimeError
        When every mirror failed for a file. The message lists each URL tried with
        its reason and says which files to put, by hand, in which directory.
    """
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
                    retries=retries,
                    timeout=timeout,
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
