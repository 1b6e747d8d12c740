"""IDX reader/writer, the embedded MNIST sample, and where datasets look for files."""

from __future__ import annotations

import gzip
import hashlib
import importlib.resources
import os
import re
from pathlib import Path

import numpy as np
import pytest

from minitorch_accel.datasets import (
    MNIST,
    FashionMNIST,
    cache_dir,
    read_idx,
    search_dirs,
    write_idx,
)

SAMPLE_SHA256 = {
    "train-images-idx3-ubyte.gz": "33c099a3526bf5d4a4dc1439f10e36b02710a035da5748a0404097781207c3c4",  # noqa: E501
    "train-labels-idx1-ubyte.gz": "fa7a998c36312515c5ebb1830501495130a0c2d10cc1225b1f4070d6b86f77a2",  # noqa: E501
    "t10k-images-idx3-ubyte.gz": "ea5652f964d79cab8e187401b8d4d5d558356a0164450df6490148cd30d329d3",
    "t10k-labels-idx1-ubyte.gz": "939b9f5a187ac3bf8004f68ff51274dbc8aee9c6ffaa4a1a87ecd12945cea0d1",
}


@pytest.fixture(autouse=True)
def _isolated_data_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test sees the user's real cache or data directory."""
    monkeypatch.delenv("MINITORCH_ACCEL_DATA", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    monkeypatch.setattr(FashionMNIST, "extra_dirs", ())


def header(code: int, *dims: int) -> bytes:
    return bytes([0, 0, code, len(dims)]) + np.asarray(dims, dtype=">u4").tobytes()


def make_split(folder: Path, n: int, train: bool = True, gz: bool = True, label: int = 0) -> None:
    """Write n images whose first pixel is n (to tell directories apart) and labels."""
    folder.mkdir(parents=True, exist_ok=True)
    prefix = "train" if train else "t10k"
    suffix = ".gz" if gz else ""
    images = np.zeros((n, 28, 28), dtype=np.uint8)
    images[:, 0, 0] = n
    write_idx(folder / f"{prefix}-images-idx3-ubyte{suffix}", images)
    write_idx(folder / f"{prefix}-labels-idx1-ubyte{suffix}", np.full(n, label, dtype=np.uint8))


# --------------------------------------------------------------------------- IDX


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.int32, np.float32, np.float64])
@pytest.mark.parametrize("shape", [(7,), (3, 5), (2, 3, 4)])
@pytest.mark.parametrize("name", ["a-idx-ubyte", "a-idx-ubyte.gz"])
def test_idx_round_trip(tmp_path: Path, dtype: type, shape: tuple[int, ...], name: str) -> None:
    rng = np.random.default_rng(0)
    array: np.ndarray = (rng.standard_normal(shape) * 100).astype(dtype)
    path = tmp_path / name
    write_idx(path, array)
    with open(path, "rb") as f:
        is_gzip = f.read(2) == b"\x1f\x8b"
    assert is_gzip == name.endswith(".gz")
    back = read_idx(path)
    assert back.dtype == np.dtype(dtype) and back.dtype.isnative
    assert back.shape == shape
    np.testing.assert_array_equal(back, array)
    assert list(tmp_path.iterdir()) == [path]  # no temporary file left behind


def test_idx_layout_is_the_mnist_one(tmp_path: Path) -> None:
    path = tmp_path / "labels-idx1-ubyte"
    write_idx(path, np.array([7, 2, 1], dtype=np.uint8))
    assert path.read_bytes() == b"\x00\x00\x08\x01\x00\x00\x00\x03\x07\x02\x01"
    write_idx(path, np.array([[1, -2]], dtype=np.int32))
    assert path.read_bytes() == header(0x0C, 1, 2) + np.array([1, -2], ">i4").tobytes()


def test_gzip_detected_by_content_not_name(tmp_path: Path) -> None:
    data = np.arange(12, dtype=np.uint8).reshape(3, 4)
    zipped_no_suffix = tmp_path / "plain-name"
    write_idx(zipped_no_suffix, data, compress=True)
    np.testing.assert_array_equal(read_idx(zipped_no_suffix), data)
    plain_with_suffix = tmp_path / "looks-zipped.gz"
    write_idx(plain_with_suffix, data, compress=False)
    np.testing.assert_array_equal(read_idx(str(plain_with_suffix)), data)


def test_write_idx_rejects_what_idx_cannot_hold(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="int64"):
        write_idx(tmp_path / "x", np.zeros(3, dtype=np.int64))
    with pytest.raises(ValueError, match="0"):
        write_idx(tmp_path / "x", np.uint8(3))


def check_bad(path: Path, content: bytes, *patterns: str) -> str:
    path.write_bytes(content)
    with pytest.raises(ValueError, match=re.escape(str(path))) as info:
        read_idx(path)
    message = str(info.value)
    assert message.startswith(str(path) + ":"), message
    for pattern in patterns:
        assert re.search(pattern, message), (pattern, message)
    return message


@pytest.mark.parametrize("compress", [False, True])
def test_bad_magic(tmp_path: Path, compress: bool) -> None:
    content = b"\x01\x00\x08\x01\x00\x00\x00\x01\x05"
    check_bad(
        tmp_path / "f",
        gzip.compress(content) if compress else content,
        "bad magic number 0x01000801",
        "two zero bytes",
    )


@pytest.mark.parametrize("code", [0x00, 0x07, 0x0A, 0x0F, 0xFF])
def test_bad_type_code(tmp_path: Path, code: int) -> None:
    check_bad(tmp_path / "f", header(code, 1) + b"\x00" * 8, f"type code 0x{code:02X}")


def test_zero_dimensions_and_tiny_files(tmp_path: Path) -> None:
    check_bad(tmp_path / "f", header(0x08), "0 dimensions")
    check_bad(tmp_path / "f", b"", "0 bytes, too short")
    check_bad(tmp_path / "f", b"\x00\x00", "2 bytes, too short")


def test_truncated_header(tmp_path: Path) -> None:
    check_bad(
        tmp_path / "f", header(0x08, 4000, 28, 28)[:10], "truncated", "needs 16 bytes, file has 10"
    )


@pytest.mark.parametrize("gz", [False, True])
def test_truncated_data(tmp_path: Path, gz: bool) -> None:
    content = header(0x08, 4000, 28, 28) + b"\x00" * 1000
    name = "train-images-idx3-ubyte" + (".gz" if gz else "")
    message = check_bad(tmp_path / name, gzip.compress(content) if gz else content)
    assert message.endswith(
        "truncated: header says 4000x28x28 uint8 = 3136000 bytes of data, file has 1000"
    ), message


def test_truncated_wider_type(tmp_path: Path) -> None:
    check_bad(
        tmp_path / "f",
        header(0x0D, 2, 3) + b"\x00" * 20,
        r"truncated: header says 2x3 float32 = 24 bytes of data, file has 20",
    )


def test_trailing_bytes(tmp_path: Path) -> None:
    check_bad(
        tmp_path / "f",
        header(0x08, 3) + b"\x01\x02\x03\x04\x05",
        r"2 trailing bytes: header says 3 uint8 = 3 bytes of data, file has 5",
    )


def test_broken_gzip_stream(tmp_path: Path) -> None:
    good = gzip.compress(header(0x08, 1000) + bytes(range(256)) * 4)
    check_bad(tmp_path / "cut.gz", good[: len(good) // 2], "broken gzip stream")
    damaged = bytearray(good)
    damaged[-6] ^= 0xFF  # inside the CRC/length trailer
    check_bad(tmp_path / "crc.gz", bytes(damaged), "broken gzip stream")
    check_bad(tmp_path / "junk.gz", b"\x1f\x8b" + b"not deflate data", "broken gzip stream")


# ------------------------------------------------------------------ embedded sample


def test_sample_files_sha256() -> None:
    folder = importlib.resources.files("minitorch_accel.datasets") / "sample"
    for name, expected in SAMPLE_SHA256.items():
        assert hashlib.sha256((folder / name).read_bytes()).hexdigest() == expected, name
    assert "LeCun" in (folder / "NOTICE.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("train, n", [(True, 4000), (False, 1000)])
def test_sample_loads(train: bool, n: int) -> None:
    ds = MNIST(sample=True, train=train)
    images, labels = ds.arrays
    assert len(ds) == n
    assert images.shape == (n, 1, 28, 28) and images.dtype == np.float32
    assert labels.shape == (n,) and labels.dtype == np.int64
    assert images.min() == 0.0 and images.max() == 1.0
    assert 0.10 < images.mean() < 0.16  # MNIST's mean pixel is about 0.13
    np.testing.assert_array_equal(np.bincount(labels, minlength=10), np.full(10, n // 10))
    assert labels[:20].tolist() != sorted(labels[:20].tolist())  # shuffled, not by class
    assert len(ds.classes) == 10 and ds.classes[3] == "3 - three"


def test_sample_items_and_transform() -> None:
    ds = MNIST(sample=True, train=False)
    image, label = ds[5]
    assert image.shape == (1, 28, 28) and image.dtype == np.float32
    assert isinstance(label, int) and label == int(ds.arrays[1][5])
    np.testing.assert_array_equal(ds[-1][0], ds.arrays[0][-1])
    assert ds[np.int64(2)][1] == int(ds.arrays[1][2])
    with pytest.raises(IndexError, match="1000"):
        ds[1000]
    with pytest.raises(TypeError):
        ds[1.5]  # type: ignore[index]
    # a transform gets the raw (28, 28) uint8 image, as torchvision's gets a PIL image
    flipped = MNIST(sample=True, train=False, transform=lambda x: x[:, ::-1])
    assert flipped[5][0].shape == (28, 28) and flipped[5][0].dtype == np.uint8
    np.testing.assert_allclose(flipped[5][0] / np.float32(255), image[0, :, ::-1], rtol=1e-6)
    assert flipped[5][1] == label


def test_sample_normalize() -> None:
    raw = MNIST(sample=True, train=False).arrays[0]
    norm = MNIST(sample=True, train=False, normalize=True).arrays[0]
    np.testing.assert_allclose(norm, (raw - 0.1307) / 0.3081, rtol=1e-5, atol=1e-6)
    assert abs(float(norm.mean())) < 0.1 and 0.9 < float(norm.std()) < 1.1


def test_sample_needs_no_network_nor_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(MNIST, "mirrors", ("http://127.0.0.1:9/",))
    ds = MNIST(root=tmp_path / "nothing-here", sample=True)
    assert len(ds) == 4000 and not (tmp_path / "nothing-here").exists()


# -------------------------------------------------------------------- search order


def test_cache_dir_respects_xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert cache_dir() == tmp_path / "xdg-cache" / "minitorch_accel"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_dir() == tmp_path / "home" / ".cache" / "minitorch_accel"


def test_search_order_root_env_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, env = tmp_path / "root", tmp_path / "env"
    cache = tmp_path / "xdg-cache" / "minitorch_accel" / "mnist"
    make_split(cache, 3)
    assert len(MNIST(download=False)) == 3
    monkeypatch.setenv("MINITORCH_ACCEL_DATA", str(env))
    make_split(env / "mnist", 5, gz=False)  # uncompressed files are found too
    assert len(MNIST(download=False)) == 5
    make_split(root, 7)
    assert len(MNIST(root=root, download=False)) == 7
    assert len(MNIST(root=str(root), download=False)) == 7
    assert len(MNIST(download=False)) == 5  # root is only used when given
    assert search_dirs("mnist", root) == [root, env / "mnist", cache]


def test_split_files_are_looked_up_together(tmp_path: Path) -> None:
    root = tmp_path / "root"
    make_split(root, 4, train=False)
    assert len(MNIST(root=root, train=False, download=False)) == 4
    make_split(tmp_path / "xdg-cache" / "minitorch_accel" / "mnist", 6, train=True)
    (root / "t10k-labels-idx1-ubyte.gz").unlink()  # half a split: directory skipped
    with pytest.raises(FileNotFoundError) as info:
        MNIST(root=root, train=False, download=False)
    assert str(root) in str(info.value) and "download=True" in str(info.value)
    assert len(MNIST(root=root, train=True, download=False)) == 6


def test_fashion_uses_its_own_folder_and_system_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_split(tmp_path / "xdg-cache" / "minitorch_accel" / "mnist", 3)
    system = tmp_path / "usr-share-datasets-fashion-mnist"
    make_split(system, 9, gz=False, label=9)
    monkeypatch.setattr(FashionMNIST, "extra_dirs", (str(system),))
    ds = FashionMNIST(download=False, normalize=True)
    assert len(ds) == 9 and ds.classes[9] == "Ankle boot" and ds[0][1] == 9
    np.testing.assert_allclose(ds.arrays[0][0, 0, 1, 1], (0 - 0.2860) / 0.3530, rtol=1e-6)
    make_split(tmp_path / "xdg-cache" / "minitorch_accel" / "fashion-mnist", 2)
    assert len(FashionMNIST(download=False)) == 2  # the cache comes before the system dir


def test_inconsistent_files_are_rejected(tmp_path: Path) -> None:
    make_split(tmp_path, 4)
    write_idx(tmp_path / "train-labels-idx1-ubyte.gz", np.zeros(3, dtype=np.uint8))
    with pytest.raises(ValueError, match="has 4 images but .* has 3 labels"):
        MNIST(root=tmp_path, download=False)
    write_idx(tmp_path / "train-labels-idx1-ubyte.gz", np.array([0, 1, 10, 2], dtype=np.uint8))
    with pytest.raises(ValueError, match="label 10 out of range for 10 classes"):
        MNIST(root=tmp_path, download=False)
    write_idx(tmp_path / "train-images-idx3-ubyte.gz", np.zeros((4, 32, 32), dtype=np.uint8))
    with pytest.raises(ValueError, match=r"shape \(N, 28, 28\)"):
        MNIST(root=tmp_path, download=False)
    os.remove(tmp_path / "train-images-idx3-ubyte.gz")
    (tmp_path / "train-images-idx3-ubyte.gz").write_bytes(b"\x1f\x8b garbage")
    with pytest.raises(ValueError, match="train-images-idx3-ubyte.gz: broken gzip"):
        MNIST(root=tmp_path, download=False)
