"""transforms (Compose, ToTensor, Normalize, Lambda, RandomCrop, RandomHorizontalFlip)
against NumPy references, and datasets taking transform / target_transform / root /
download as torchvision's do."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import minitorch_accel as mta
from minitorch_accel import datasets, transforms
from minitorch_accel.core.tensor import Tensor
from minitorch_accel.data import DataLoader


def test_to_tensor_layouts_and_scaling() -> None:
    rng = np.random.default_rng(0)
    gray = rng.integers(0, 256, (5, 7), dtype=np.uint8)
    color = rng.integers(0, 256, (5, 7, 3), dtype=np.uint8)
    t = transforms.ToTensor()(gray)
    assert isinstance(t, Tensor) and t.shape == (1, 5, 7) and t.dtype == np.float32
    np.testing.assert_array_equal(t.numpy()[0], gray.astype(np.float32) / np.float32(255))
    c = transforms.ToTensor()(color)
    assert c.shape == (3, 5, 7)
    np.testing.assert_array_equal(c.numpy()[2], color[:, :, 2] / np.float32(255))
    floats = rng.random((4, 4, 2)).astype(np.float64)
    f = transforms.ToTensor()(floats)  # not uint8: values kept, as torchvision
    assert f.dtype == np.float64 and f.shape == (2, 4, 4)
    np.testing.assert_array_equal(f.numpy(), floats.transpose(2, 0, 1))


def test_to_tensor_errors() -> None:
    with pytest.raises(ValueError, match=r"2 or 3 dimensional .*shape \(2, 2, 2, 2\)"):
        transforms.ToTensor()(np.zeros((2, 2, 2, 2), np.uint8))
    with pytest.raises(TypeError, match="NumPy array or PIL image"):
        transforms.ToTensor()([[1, 2]])
    with pytest.raises(TypeError, match="already a tensor"):
        transforms.ToTensor()(mta.zeros(1, 2, 2))


def test_normalize_per_channel() -> None:
    rng = np.random.default_rng(1)
    x = rng.random((3, 4, 5)).astype(np.float32)
    mean, std = (0.1, 0.2, 0.3), (0.5, 1.0, 2.0)
    got = transforms.Normalize(mean, std)(mta.tensor(x))
    want = (x - np.float32(mean).reshape(3, 1, 1)) / np.float32(std).reshape(3, 1, 1)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
    batch = mta.tensor(np.stack([x, x]))  # (N, C, H, W) works too
    np.testing.assert_allclose(transforms.Normalize(mean, std)(batch).numpy()[1], want, rtol=1e-6)
    t = mta.tensor(x.copy())
    assert transforms.Normalize(mean, std, inplace=True)(t) is t
    np.testing.assert_allclose(t.numpy(), want, rtol=1e-6)


def test_normalize_errors() -> None:
    with pytest.raises(ValueError, match="division by zero"):
        transforms.Normalize((0.0,), (0.0,))
    with pytest.raises(TypeError, match="put ToTensor"):
        transforms.Normalize((0.5,), (0.5,))(np.zeros((1, 2, 2)))
    with pytest.raises(ValueError, match="2 mean value.*3 channels"):
        transforms.Normalize((0.5, 0.5), (1.0,))(mta.zeros(3, 2, 2))


def test_compose_and_lambda() -> None:
    pipeline = transforms.Compose(
        [
            transforms.ToTensor(),
            transforms.Lambda(lambda t: t * 2),
            transforms.Normalize((1.0,), (2.0,)),
        ]
    )
    image = np.array([[0, 255]], np.uint8)
    np.testing.assert_allclose(pipeline(image).numpy(), [[[-0.5, 0.5]]])
    assert "ToTensor()" in repr(pipeline) and "Normalize" in repr(pipeline)
    with pytest.raises(TypeError, match="callable"):
        transforms.Lambda(3)  # type: ignore[arg-type]


def _all_windows(x: np.ndarray, th: int, tw: int, axes: tuple[int, int]) -> list[np.ndarray]:
    h, w = x.shape[axes[0]], x.shape[axes[1]]
    out = []
    for top in range(h - th + 1):
        for left in range(w - tw + 1):
            idx = [slice(None)] * x.ndim
            idx[axes[0]], idx[axes[1]] = slice(top, top + th), slice(left, left + tw)
            out.append(x[tuple(idx)])
    return out


def test_random_crop_is_a_window_of_the_padded_image_and_covers_them() -> None:
    x = np.arange(2 * 5 * 6, dtype=np.float32).reshape(2, 5, 6)
    padded = np.pad(x, [(0, 0), (1, 1), (1, 1)], constant_values=-1)
    windows = _all_windows(padded, 4, 4, (1, 2))
    crop = transforms.RandomCrop(4, padding=1, fill=-1)
    mta.manual_seed(0)
    seen = set()
    for _ in range(300):
        out = crop(mta.tensor(x)).numpy()
        matches = [k for k, win in enumerate(windows) if np.array_equal(win, out)]
        assert matches, "the crop is not a window of the padded image"
        seen.add(matches[0])
    assert len(seen) == len(windows)  # every position is drawn (16 windows, 300 draws)


def test_random_crop_arrays_modes_and_errors() -> None:
    image = np.arange(16, dtype=np.uint8).reshape(4, 4)
    out = transforms.RandomCrop((2, 3))(image)
    assert out.shape == (2, 3) and any(
        np.array_equal(out, w) for w in _all_windows(image, 2, 3, (0, 1))
    )
    reflect = transforms.RandomCrop(6, padding=1, padding_mode="reflect")(image)
    np.testing.assert_array_equal(reflect, np.pad(image, 1, mode="reflect"))
    grown = transforms.RandomCrop(6, pad_if_needed=True)(image)  # torchvision pads both sides
    assert any(np.array_equal(grown, w) for w in _all_windows(np.pad(image, 2), 6, 6, (0, 1)))
    with pytest.raises(
        ValueError, match=r"crop size \(5, 5\) is larger than the input image size \(4, 4\)"
    ):
        transforms.RandomCrop(5)(image)
    with pytest.raises(TypeError, match="expected a tensor"):
        transforms.RandomCrop(2)([1, 2])


def test_random_horizontal_flip() -> None:
    image = np.arange(6).reshape(2, 3)
    np.testing.assert_array_equal(transforms.RandomHorizontalFlip(1.0)(image), image[:, ::-1])
    assert transforms.RandomHorizontalFlip(0.0)(image) is image
    t = mta.tensor(np.arange(6.0).reshape(1, 2, 3))
    np.testing.assert_array_equal(
        transforms.RandomHorizontalFlip(1.0)(t).numpy(), t.numpy()[:, :, ::-1]
    )
    mta.manual_seed(1)
    flips = sum(transforms.RandomHorizontalFlip(0.3)(image)[0, 0] == 2 for _ in range(2000))
    assert 450 < flips < 750  # binomial(2000, 0.3): mean 600, sd 20
    with pytest.raises(ValueError, match=r"p should be in \[0, 1\]"):
        transforms.RandomHorizontalFlip(1.5)


def test_seeded_random_transforms_repeat() -> None:
    crop = transforms.Compose(
        [transforms.RandomCrop(3, padding=2), transforms.RandomHorizontalFlip()]
    )
    image = np.arange(25, dtype=np.uint8).reshape(5, 5)
    mta.manual_seed(5)
    first = [crop(image) for _ in range(10)]
    mta.manual_seed(5)
    again = [crop(image) for _ in range(10)]
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a, b)


# ---------------------------------------------------------------- datasets
MNIST_TRANSFORM = transforms.Compose(
    [transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))]
)


def test_mnist_with_torchvision_style_transform_equals_normalize() -> None:
    plain = datasets.MNIST(sample=True, train=False, normalize=True)
    ds = datasets.MNIST(
        sample=True, train=False, transform=MNIST_TRANSFORM, target_transform=lambda y: y + 10
    )
    image, label = ds[3]
    assert isinstance(image, Tensor) and image.shape == (1, 28, 28) and image.dtype == np.float32
    np.testing.assert_allclose(image.numpy(), plain.arrays[0][3], rtol=1e-5, atol=1e-6)
    assert label == int(plain.arrays[1][3]) + 10
    x, y = next(iter(DataLoader(ds, batch_size=16)))
    assert x.shape == (16, 1, 28, 28) and y.dtype == np.int64
    np.testing.assert_allclose(x.numpy(), plain.arrays[0][:16], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(y.numpy(), plain.arrays[1][:16] + 10)


def test_fashion_mnist_takes_target_transform(tmp_path: Any) -> None:
    from minitorch_accel.datasets import write_idx

    images = np.random.default_rng(0).integers(0, 256, (3, 28, 28), dtype=np.uint8)
    write_idx(tmp_path / "t10k-images-idx3-ubyte", images)
    write_idx(tmp_path / "t10k-labels-idx1-ubyte", np.array([1, 2, 3], np.uint8))
    ds = datasets.FashionMNIST(
        str(tmp_path),
        train=False,
        download=False,
        transform=transforms.ToTensor(),
        target_transform=lambda y: -y,
    )
    image, label = ds[1]
    np.testing.assert_array_equal(image.numpy()[0], images[1] / np.float32(255))
    assert label == -2


def test_mnist_root_download_signature_without_network(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``datasets.MNIST(root, train=True, download=True, transform=...)`` as in the
    PyTorch example: with no network, a clear error pointing to the embedded sample."""
    from minitorch_accel.datasets import download as dl

    def offline(*args: Any, **kwargs: Any) -> Any:
        raise dl._MirrorFailed("<urlopen error [Errno -3] Temporary failure in name resolution>")

    monkeypatch.setattr(dl, "_transfer", offline)
    monkeypatch.setattr(dl.time, "sleep", lambda s: None, raising=False)
    monkeypatch.setenv("MINITORCH_ACCEL_DATA", str(tmp_path / "shared"))
    with pytest.raises(RuntimeError, match=r"sample=True"):
        datasets.MNIST(str(tmp_path / "data"), train=True, download=True, transform=MNIST_TRANSFORM)
