"""Decompression bombs and crafted headers: refused with a clear error before the
memory is allocated, even under a tight address-space limit (``ulimit -v``)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import zipfile
import zlib
from pathlib import Path

import numpy as np
import pytest

from minitorch_accel.datasets import read_idx
from minitorch_accel.serialization import FORMAT_NAME, FORMAT_VERSION, META_KEY, load

ROOT = Path(__file__).resolve().parents[1]
BOMB_BYTES = 512 << 20  # what the files below decompress to
HEADROOM = 128 << 20  # the child may allocate this much beyond what it has mapped


def zeros_stream(n: int, chunk: int = 1 << 24) -> list[bytes]:
    block = bytes(chunk)
    return [block] * (n // chunk) + [bytes(n % chunk)]


def idx_bomb(path: Path) -> None:
    """A 0.5 MB .gz whose honest header declares 512 MiB of uint8 images."""
    gz = zlib.compressobj(1, zlib.DEFLATED, 31)  # wbits 31: a gzip stream
    side = 1 << 13  # 8192 x 8192 x 8 = 512 MiB
    header = bytes([0, 0, 8, 3]) + np.array([8, side, side], dtype=">u4").tobytes()
    with open(path, "wb") as f:
        f.write(gz.compress(header))
        for block in zeros_stream(BOMB_BYTES):
            f.write(gz.compress(block))
        f.write(gz.flush())


def npy_bytes(array: np.ndarray) -> bytes:
    out = io.BytesIO()
    np.lib.format.write_array(out, array)
    return out.getvalue()


def meta_entry() -> bytes:
    root = {"t": "dict", "items": [[{"t": "str", "v": "w"}, {"t": "ndarray", "a": "a0"}]]}
    meta = {"format": FORMAT_NAME, "version": FORMAT_VERSION, "root": root}
    return npy_bytes(np.frombuffer(json.dumps(meta).encode(), np.uint8))


def checkpoint_bomb(path: Path, declared: tuple[int, ...], data: int) -> None:
    """A checkpoint whose entry ``a0`` declares ``declared`` float32 values and holds
    ``data`` zero bytes (deflated)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        z.writestr(f"{META_KEY}.npy", meta_entry())
        with z.open("a0.npy", "w", force_zip64=True) as member:
            header = io.BytesIO()
            np.lib.format.write_array_header_1_0(
                header, {"descr": "<f4", "fortran_order": False, "shape": declared}
            )
            member.write(header.getvalue())  # the magic string, then the header
            for block in zeros_stream(data):
                member.write(block)


LIMITED = """
import os, resource, sys
from minitorch_accel.datasets import read_idx
from minitorch_accel.serialization import load
with open("/proc/self/statm") as f:
    mapped = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
resource.setrlimit(resource.RLIMIT_AS, (mapped + int(sys.argv[3]), resource.RLIM_INFINITY))
try:
    (read_idx if sys.argv[1] == "idx" else load)(sys.argv[2])
except ValueError as exc:
    print("ValueError:", exc)
    sys.exit(3)
"""


def run_limited(kind: str, path: Path) -> subprocess.CompletedProcess[str]:
    if not Path("/proc/self/statm").exists():
        pytest.skip("needs /proc/self/statm (Linux) to set a limit above the mapped memory")
    env = dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    return subprocess.run(
        [sys.executable, "-c", LIMITED, kind, str(path), str(HEADROOM)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


@pytest.mark.slow
def test_an_idx_bomb_is_refused_under_a_memory_limit(tmp_path: Path) -> None:
    # It used to decompress the whole file in memory and die with a bare MemoryError.
    path = tmp_path / "train-images-idx3-ubyte.gz"
    idx_bomb(path)
    assert path.stat().st_size < 4 << 20
    done = run_limited("idx", path)
    assert done.returncode == 3, done.stderr[-2000:]
    assert f"ValueError: {path}: 8x8192x8192 uint8 needs {BOMB_BYTES} bytes, more than" in (
        done.stdout
    )
    assert "MemoryError" not in done.stderr


@pytest.mark.slow
def test_a_checkpoint_bomb_is_refused_under_a_memory_limit(tmp_path: Path) -> None:
    path = tmp_path / "bomb.npz"
    checkpoint_bomb(path, (BOMB_BYTES // 4,), BOMB_BYTES)
    assert path.stat().st_size < 4 << 20
    done = run_limited("checkpoint", path)
    assert done.returncode == 3, done.stderr[-2000:]
    assert f"{str(path)!r} is not a valid minitorch_accel checkpoint: the array at obj['w']" in (
        done.stdout
    )
    assert f"needs {BOMB_BYTES} bytes, more than this process can allocate" in done.stdout


def test_a_checkpoint_header_declaring_1e12_values_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "crafted.npz"
    checkpoint_bomb(path, (10**12,), 64)
    with pytest.raises(ValueError) as caught:  # noqa: PT011  (the whole message is compared below)
        load(path)
    assert str(caught.value) == (
        f"{str(path)!r} is not a valid minitorch_accel checkpoint: the array at obj['w'] "
        "(entry 'a0', shape (1000000000000,), float32) declares 4000000000000 bytes but "
        "the file holds 64"
    )


def test_an_idx_header_larger_than_memory_is_refused_before_reading(tmp_path: Path) -> None:
    # 2**32-1 cubed bytes: far more than any machine; the old int64 product wrapped.
    path = tmp_path / "huge.gz"
    dims = np.array([2**32 - 1] * 3, dtype=">u4").tobytes()
    path.write_bytes(zlib.compress(bytes([0, 0, 8, 3]) + dims, wbits=31))  # type: ignore[call-arg]
    with pytest.raises(ValueError, match=r"4294967295x4294967295x4294967295 uint8 needs \d+ bytes"):
        read_idx(path)
