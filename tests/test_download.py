"""Downloads from a local HTTP server: mirrors, SHA-256, broken transfers, no network."""

from __future__ import annotations

import gzip
import hashlib
import http.server
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from minitorch_accel.datasets import (
    IDX_FILES,
    MNIST,
    FashionMNIST,
    download_files,
    fetch_url,
    read_idx,
)


def idx_bytes(array: np.ndarray) -> bytes:
    head = bytes([0, 0, 8, array.ndim]) + np.asarray(array.shape, dtype=">u4").tobytes()
    return gzip.compress(head + array.astype(np.uint8).tobytes(), mtime=0)


def make_files(n: int = 6) -> dict[str, bytes]:
    rng = np.random.default_rng(1)
    files = {}
    for prefix, count in (("train", n), ("t10k", n // 2)):
        images = rng.integers(0, 256, (count, 28, 28), dtype=np.uint8)
        images[:, 0, 0] = 200  # the 29 KB-ish images compress badly: several chunks
        files[f"{prefix}-images-idx3-ubyte.gz"] = idx_bytes(images)
        files[f"{prefix}-labels-idx1-ubyte.gz"] = idx_bytes(np.arange(count) % 10)
    return files


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass
class Server:
    """A local server: ``routes`` maps a URL path to bytes; ``base`` is its URL."""

    base: str = ""
    routes: dict[str, bytes] = field(default_factory=dict)
    break_next: dict[str, int] = field(default_factory=dict)  # path -> transfers to cut
    ranges: bool = True  # honour Range requests
    # path -> "drip" (announce 1 MB, send a byte every 10 ms, forever), "endless" (no
    # Content-Length, zeros until the client hangs up), "nolength" (the body without
    # Content-Length, cut in the middle)
    behaviour: dict[str, str] = field(default_factory=dict)
    log: list[tuple[str, str | None]] = field(default_factory=list)  # (path, Range header)


@pytest.fixture
def server() -> Iterator[Server]:  # noqa: C901  (one branch per misbehaviour served)
    state = Server()

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            rng = self.headers.get("Range")
            state.log.append((self.path, rng))
            body = state.routes.get(self.path)
            kind = state.behaviour.get(self.path)
            if kind is not None:
                self.misbehave(kind, body or b"")
                return
            if body is None:
                self.send_error(404)
                return
            start = 0
            if rng and state.ranges:
                start = int(rng.removeprefix("bytes=").rstrip("-"))
                self.send_response(206)
                self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
            else:
                self.send_response(200)
            self.send_header("Content-Length", str(len(body) - start))
            self.end_headers()
            payload = body[start:]
            if state.break_next.get(self.path, 0) > 0:
                state.break_next[self.path] -= 1
                payload = payload[: len(payload) // 2]  # then the connection closes
            self.wfile.write(payload)

        def misbehave(self, kind: str, body: bytes) -> None:
            self.send_response(200)
            if kind == "drip":
                self.send_header("Content-Length", str(1 << 20))
            self.end_headers()
            try:
                if kind == "nolength":
                    self.wfile.write(body[: len(body) // 2])
                    self.close_connection = True
                    return
                while True:  # until the client goes away (or the server shuts down)
                    self.wfile.write(b"x" if kind == "drip" else bytes(1 << 16))
                    self.wfile.flush()
                    if kind == "drip":
                        time.sleep(0.01)
            except OSError:
                pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.base = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield state
    httpd.shutdown()
    httpd.server_close()
    thread.join()


def refused_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/"  # nothing listens there now: connection refused


def serve(server: Server, prefix: str, files: dict[str, bytes]) -> str:
    for name, data in files.items():
        server.routes[f"/{prefix}/{name}"] = data
    return f"{server.base}/{prefix}/"


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


FAST: dict[str, Any] = {"retry_delay": 0.0, "progress": False, "timeout": 5.0}


def test_download_success(server: Server, tmp_path: Path) -> None:
    files = make_files()
    mirror = serve(server, "m", files)
    table = {name: sha(data) for name, data in files.items()}
    paths = download_files(tmp_path / "new" / "dir", IDX_FILES, [mirror], table, **FAST)
    assert [p.name for p in paths] == list(IDX_FILES)
    for p in paths:
        assert p.read_bytes() == files[p.name]
        assert p.stat().st_mode & 0o777 == 0o644
    assert leftovers(tmp_path / "new" / "dir") == []
    assert read_idx(paths[0]).shape == (6, 28, 28)
    server.log.clear()
    download_files(tmp_path / "new" / "dir", IDX_FILES, [mirror], table, **FAST)
    assert server.log == []  # files already there with the right hash are kept


def test_sha_mismatch_then_next_mirror(server: Server, tmp_path: Path) -> None:
    files = make_files()
    bad = serve(server, "bad", {n: d[:-1] + b"X" for n, d in files.items()})
    good = serve(server, "good", files)
    table = {name: sha(data) for name, data in files.items()}
    paths = download_files(tmp_path, IDX_FILES, [bad, good], table, **FAST)
    assert all(p.read_bytes() == files[p.name] for p in paths)
    assert leftovers(tmp_path) == []
    first = IDX_FILES[0]
    assert [p for p, _ in server.log[:2]] == [f"/bad/{first}", f"/good/{first}"]
    # the mirror that worked is tried first for the next files
    assert [p for p, _ in server.log[2:]] == [f"/good/{n}" for n in IDX_FILES[1:]]


def test_sha_mismatch_everywhere_deletes_and_raises(server: Server, tmp_path: Path) -> None:
    name = IDX_FILES[1]
    url = serve(server, "m", {name: b"not the real file"}) + name
    with pytest.raises(RuntimeError, match=f"{url}: SHA-256 mismatch: got .*, expected {'0' * 64}"):
        fetch_url(url, tmp_path / name, "0" * 64, **FAST)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("ranges", [True, False])
def test_broken_transfer_is_retried(server: Server, tmp_path: Path, ranges: bool) -> None:
    files = make_files()
    name = IDX_FILES[0]
    url = serve(server, "m", {name: files[name]}) + name
    server.ranges = ranges
    server.break_next[f"/m/{name}"] = 2
    fetch_url(url, tmp_path / name, sha(files[name]), **FAST)
    assert (tmp_path / name).read_bytes() == files[name]
    assert leftovers(tmp_path) == []
    ranges_asked = [r for _, r in server.log]
    assert ranges_asked[0] is None and len(ranges_asked) == 3
    size = len(files[name])
    half = size // 2
    if ranges:  # resumed where the data stopped: half, then half of the rest
        assert ranges_asked[1:] == [f"bytes={half}-", f"bytes={half + (size - half) // 2}-"]
    else:  # the server ignores ranges: the client asks to resume, gets it all again
        assert ranges_asked[1:] == [f"bytes={half}-", f"bytes={half}-"]


def test_transfer_that_keeps_breaking_gives_up(server: Server, tmp_path: Path) -> None:
    files = make_files()
    name = IDX_FILES[2]
    flaky = serve(server, "flaky", files)
    good = serve(server, "good", files)
    server.break_next[f"/flaky/{name}"] = 99
    table = {n: sha(d) for n, d in files.items()}
    download_files(tmp_path, [name], [flaky, good], table, retries=2, **FAST)
    assert (tmp_path / name).read_bytes() == files[name]
    assert [p for p, _ in server.log] == [f"/flaky/{name}"] * 2 + [f"/good/{name}"]
    with pytest.raises(RuntimeError, match="transfer broken after .* gave up after 2 tries"):
        fetch_url(flaky + name, tmp_path / "x", retries=2, **FAST)
    assert not (tmp_path / "x").exists() and leftovers(tmp_path) == []


def test_http_404_tries_next_mirror(server: Server, tmp_path: Path) -> None:
    files = make_files()
    good = serve(server, "good", files)
    download_files(tmp_path, IDX_FILES[:1], [server.base + "/missing/", good], None, **FAST)
    assert (tmp_path / IDX_FILES[0]).read_bytes() == files[IDX_FILES[0]]


def test_no_network_message(tmp_path: Path) -> None:
    mirrors = [refused_url(), refused_url()]
    target = tmp_path / "data"
    with pytest.raises(RuntimeError) as info:
        download_files(target, IDX_FILES, mirrors, None, dataset="MNIST", hint="try X", **FAST)
    message = str(info.value)
    assert message.startswith("could not download MNIST: every mirror failed for")
    for url in mirrors:
        assert url + IDX_FILES[0] in message
    assert "refused" in message.lower()
    assert f"put them in {target.resolve()}" in message
    for name in IDX_FILES:
        assert f"\n  {name}" in message
    assert message.endswith("try X")
    assert leftovers(target) == []


def test_mnist_downloads_into_root(
    server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("MINITORCH_ACCEL_DATA", raising=False)
    files = make_files()
    monkeypatch.setattr(MNIST, "mirrors", (refused_url(), serve(server, "m", files)))
    monkeypatch.setattr(MNIST, "sha256", {n: sha(d) for n, d in files.items()})
    monkeypatch.setattr(MNIST, "sizes", {n: len(d) for n, d in files.items()})
    ds = MNIST(root=tmp_path / "root", train=False)
    assert len(ds) == 3 and ds.arrays[1].tolist() == [0, 1, 2]
    assert sorted(p.name for p in (tmp_path / "root").iterdir()) == sorted(IDX_FILES)
    server.log.clear()
    assert len(MNIST(root=tmp_path / "root")) == 6 and server.log == []  # now on disk


def test_download_goes_to_env_dir_then_cache(
    server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(FashionMNIST, "extra_dirs", ())
    files = make_files()
    monkeypatch.setattr(FashionMNIST, "mirrors", (serve(server, "f", files),))
    monkeypatch.setattr(FashionMNIST, "sha256", {n: sha(d) for n, d in files.items()})
    monkeypatch.setattr(FashionMNIST, "sizes", {n: len(d) for n, d in files.items()})
    monkeypatch.setenv("MINITORCH_ACCEL_DATA", str(tmp_path / "env"))
    assert len(FashionMNIST()) == 6
    assert (tmp_path / "env" / "fashion-mnist" / IDX_FILES[0]).is_file()
    monkeypatch.delenv("MINITORCH_ACCEL_DATA")
    assert len(FashionMNIST(train=False)) == 3
    assert (tmp_path / "cache" / "minitorch_accel" / "fashion-mnist" / IDX_FILES[3]).is_file()


def test_dataset_without_network_explains_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("MINITORCH_ACCEL_DATA", raising=False)
    monkeypatch.setattr(MNIST, "mirrors", (refused_url(),))
    with pytest.raises(RuntimeError) as info:
        MNIST()
    message = str(info.value)
    assert str(tmp_path / "cache" / "minitorch_accel" / "mnist") in message
    assert all(name in message for name in IDX_FILES)
    assert "MNIST(sample=True)" in message


def test_official_hash_tables_are_well_formed() -> None:
    from minitorch_accel.datasets import FASHION_MNIST_SHA256, MNIST_SHA256

    for table in (MNIST_SHA256, FASHION_MNIST_SHA256):
        assert sorted(table) == sorted(IDX_FILES)
        assert all(len(h) == 64 and int(h, 16) >= 0 for h in table.values())
    assert MNIST.sha256 is MNIST_SHA256 and FashionMNIST.sha256 is FASHION_MNIST_SHA256
    assert len(MNIST.mirrors) == 3 and len(FashionMNIST.mirrors) == 3


# ------------------------------------------------------------ faults of the server


def bounded(call: Any, seconds: float = 30) -> BaseException | None:
    """Run ``call()`` in a thread; fail the test if it is still running after
    ``seconds`` (a hang), else return what it raised."""
    raised: list[BaseException] = []

    def run() -> None:
        try:
            call()
        except BaseException as exc:
            raised.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still downloading after {seconds} s"
    return raised[0] if raised else None


def test_a_dripping_server_meets_the_deadline(server: Server, tmp_path: Path) -> None:
    # One byte every 10 ms never trips the per-read timeout: it used to run for ever.
    server.behaviour["/drip/f.gz"] = "drip"
    url = f"{server.base}/drip/f.gz"
    error = bounded(lambda: fetch_url(url, tmp_path / "f.gz", retries=1, deadline=1.0, **FAST))
    assert isinstance(error, RuntimeError)
    assert f"{url}: did not finish within 1 s (deadline=) after" in str(error)
    assert list(tmp_path.iterdir()) == []


def test_an_endless_body_stops_one_byte_past_the_size(server: Server, tmp_path: Path) -> None:
    # It used to fill the disk (2 GB in 8 s).
    server.behaviour["/endless/f.gz"] = "endless"
    url = f"{server.base}/endless/f.gz"
    error = bounded(lambda: fetch_url(url, tmp_path / "f.gz", size=100_000, **FAST))
    assert isinstance(error, RuntimeError)
    assert f"{url}: the server sent more than the expected 100000 bytes" in str(error)
    assert list(tmp_path.iterdir()) == []


def test_a_wrong_announced_size_is_refused(server: Server, tmp_path: Path) -> None:
    name = IDX_FILES[1]
    url = serve(server, "m", {name: make_files()[name]}) + name
    with pytest.raises(RuntimeError, match=r"the server announces \d+ bytes, expected 12"):
        fetch_url(url, tmp_path / name, size=12, **FAST)
    assert list(tmp_path.iterdir()) == []


def test_a_body_of_unknown_length_needs_a_checksum(server: Server, tmp_path: Path) -> None:
    # No Content-Length and cut in the middle: it used to be saved, truncated.
    files = make_files()
    name = IDX_FILES[0]
    serve(server, "cut", {name: files[name]})
    server.behaviour[f"/cut/{name}"] = "nolength"
    url = f"{server.base}/cut/{name}"
    with pytest.raises(RuntimeError, match="sent no Content-Length, so a truncated body"):
        fetch_url(url, tmp_path / name, **FAST)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(RuntimeError, match="SHA-256 mismatch"):  # with one: checked
        fetch_url(url, tmp_path / name, sha(files[name]), retries=1, **FAST)
    assert list(tmp_path.iterdir()) == []


def test_sigterm_removes_the_part_file(server: Server, tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys

    server.behaviour["/drip/f.gz"] = "drip"
    code = (
        "import sys; from minitorch_accel.datasets import fetch_url; "
        "fetch_url(sys.argv[1], sys.argv[2], progress=False)"
    )
    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=str(root))
    child = subprocess.Popen(
        [sys.executable, "-c", code, f"{server.base}/drip/f.gz", str(tmp_path / "f.gz")], env=env
    )
    try:
        for _ in range(3000):  # wait (at most 30 s) until the server has been asked
            if server.log:
                break
            time.sleep(0.01)
        assert server.log, "the server was not asked"
        assert list(tmp_path.glob(".f.gz.*.part")), "no download started"
        child.send_signal(signal.SIGTERM)
        assert child.wait(timeout=30) == 143
    finally:
        child.kill()
        child.wait()
    assert list(tmp_path.iterdir()) == []  # it used to stay behind


class _SigtermInDel:
    """Raises SIGTERM from ``__del__``, where Python prints and drops the handler's
    exception (as it does in the import system's weakref callbacks)."""

    def __del__(self) -> None:
        import signal

        signal.raise_signal(signal.SIGTERM)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_sigterm_whose_exception_is_dropped_still_ends_the_download(
    server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A SIGTERM that arrived inside an import's weakref callback once left the child
    # downloading from a dripping server for ever.
    import signal

    import minitorch_accel.datasets.download as download

    sent: list[int] = []
    real_tqdm = download.tqdm

    class Bar:
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            self.inner = real_tqdm(*args, **kwargs)

        def update(self, n: int) -> None:
            if not sent:
                sent.append(n)
                _SigtermInDel()  # dropped at once: its handler's SystemExit is swallowed

        def close(self) -> None:
            self.inner.close()

    monkeypatch.setattr(download, "tqdm", Bar)
    server.behaviour["/drip/f.gz"] = "drip"
    before = signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        with pytest.raises(SystemExit) as info:
            fetch_url(f"{server.base}/drip/f.gz", tmp_path / "f.gz", deadline=10.0, **FAST)
    finally:
        signal.signal(signal.SIGTERM, before)
    assert info.value.code == 143
    assert sent == [1]  # the signal came once, after the first byte
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["../evil.gz", "sub/f.gz", "..", "", "a\\b.gz"])
def test_file_names_cannot_leave_the_folder(name: str, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="may not be empty or contain '/'"):
        download_files(tmp_path / "d", [name], ["http://127.0.0.1:9/"], None, **FAST)
    assert not (tmp_path / "d").exists()


def test_fetch_into_a_missing_folder_creates_it(server: Server, tmp_path: Path) -> None:
    name = IDX_FILES[3]
    files = make_files()
    url = serve(server, "m", {name: files[name]}) + name
    fetch_url(url, tmp_path / "new" / "folder" / name, sha(files[name]), **FAST)
    assert (tmp_path / "new" / "folder" / name).read_bytes() == files[name]
