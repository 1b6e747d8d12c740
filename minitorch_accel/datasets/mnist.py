"""MNIST and Fashion-MNIST as NumPy arrays, found on disk, downloaded, or embedded.

Where the files are looked for, in order (each file may be ``name.gz`` or ``name``):

1. ``root``, when given (the files directly in it);
2. ``$MINITORCH_ACCEL_DATA/<subdir>``, when that variable is set;
3. the user cache, ``$XDG_CACHE_HOME/minitorch_accel/<subdir>``
   (``~/.cache/minitorch_accel/<subdir>`` when ``XDG_CACHE_HOME`` is not set);
4. for Fashion-MNIST, ``/usr/share/datasets/fashion-mnist`` (Debian's
   ``dataset-fashion-mnist`` package).

``<subdir>`` is ``mnist`` or ``fashion-mnist``. When the files are in none of these
and ``download=True``, they are downloaded into the first of 1-3 that applies.
"""

from __future__ import annotations

import importlib.resources
import operator
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from ..core.factories import from_numpy
from ..core.tensor import Tensor
from . import download as _download
from .idx import read_idx

__all__ = ["MNIST", "FashionMNIST", "cache_dir", "find_files", "search_dirs"]

Transform = Callable[[npt.NDArray[np.uint8]], Any]

_SPLIT_FILES = {
    True: ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
    False: ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"),
}


def cache_dir() -> Path:
    """Return the user cache directory of minitorch_accel.

    ``$XDG_CACHE_HOME/minitorch_accel``, or ``~/.cache/minitorch_accel`` when
    ``XDG_CACHE_HOME`` is unset or empty. The directory is not created.
    """
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "minitorch_accel"


def search_dirs(
    subdir: str, root: str | os.PathLike[str] | None = None, extra: Sequence[str] = ()
) -> list[Path]:
    """Return the directories searched for a dataset, in order.

    Parameters
    ----------
    subdir : str
        The dataset's folder under the shared data directories (``"mnist"``).
    root : str or os.PathLike, optional
        A directory holding the files directly; searched first.
    extra : sequence of str
        System directories searched last.
    """
    dirs: list[Path] = []
    if root is not None:
        dirs.append(Path(root).expanduser())
    env = os.environ.get("MINITORCH_ACCEL_DATA")
    if env:
        dirs.append(Path(env).expanduser() / subdir)
    dirs.append(cache_dir() / subdir)
    dirs.extend(Path(d) for d in extra)
    return dirs


def find_files(stems: Sequence[str], dirs: Sequence[Path]) -> list[Path] | None:
    """Return the paths of all ``stems`` from the first directory that has every one.

    Each stem matches ``stem.gz`` or ``stem`` (compressed preferred). Returns None
    when no directory has them all.
    """
    for folder in dirs:
        found: list[Path] = []
        for stem in stems:
            hits = [folder / n for n in (stem + ".gz", stem) if (folder / n).is_file()]
            if not hits:
                break
            found.append(hits[0])
        else:
            return found
    return None


class _IDXImageDataset:
    """Images and labels from a pair of IDX files, held as NumPy arrays."""

    name: ClassVar[str]
    subdir: ClassVar[str]
    mirrors: ClassVar[Sequence[str]]
    sha256: ClassVar[dict[str, str]]
    sizes: ClassVar[dict[str, int]] = {}
    extra_dirs: ClassVar[tuple[str, ...]] = ()
    mean: ClassVar[float]
    std: ClassVar[float]
    classes: ClassVar[tuple[str, ...]]
    hint: ClassVar[str | None] = None

    images: npt.NDArray[np.float32]
    labels: npt.NDArray[np.int64]

    def __init__(
        self,
        root: str | os.PathLike[str] | None,
        train: bool,
        download: bool,
        transform: Transform | None,
        normalize: bool,
        files: Sequence[Path] | None = None,
        target_transform: Callable[[int], Any] | None = None,
    ) -> None:
        self.train = bool(train)
        self.transform = transform
        self.target_transform = target_transform
        self.normalize = bool(normalize)
        if files is None:
            files = self._locate(root, download)
        self.files = tuple(files)
        raw_images, raw_labels = read_idx(files[0]), read_idx(files[1])
        self._check(raw_images, raw_labels)
        self._set_images(raw_images)
        self.labels = raw_labels.astype(np.int64)

    def _set_images(self, raw_images: npt.NDArray[np.uint8]) -> None:
        self.raw_images = raw_images  # what a transform gets: (28, 28) uint8, as PIL gives
        images = raw_images.astype(np.float32).reshape(-1, 1, 28, 28)
        images /= np.float32(255.0)
        if self.normalize:
            images -= np.float32(self.mean)
            images /= np.float32(self.std)
        self.images = images

    @property
    def data(self) -> Tensor:
        """All images as torchvision's ``data``: a uint8 tensor (N, 28, 28) sharing
        memory with :attr:`raw_images` (what a transform gets).

        Writing into it changes what a transform gets but not the float :attr:`arrays`
        (computed once; torchvision has none). Assigning a new (N, 28, 28) uint8 tensor or
        array, as torchvision users do to take a subset, replaces both.
        """
        return from_numpy(self.raw_images)

    @data.setter
    def data(self, value: Any) -> None:
        raw = np.asarray(value.numpy() if isinstance(value, Tensor) else value)
        if raw.ndim != 3 or raw.shape[1:] != (28, 28) or raw.dtype != np.uint8:
            raise ValueError(
                f"{self.name}.data must be uint8 of shape (N, 28, 28), got {raw.dtype} {raw.shape}"
            )
        self._set_images(raw)

    @property
    def targets(self) -> Tensor:
        """All labels as torchvision's ``targets``: an int64 tensor (N,) sharing memory
        with ``arrays[1]``. Assigning a new (N,) tensor or array of integers replaces it.
        """
        return from_numpy(self.labels)

    @targets.setter
    def targets(self, value: Any) -> None:
        labels = np.asarray(value.numpy() if isinstance(value, Tensor) else value)
        if labels.ndim != 1 or labels.dtype.kind not in "iu":
            raise ValueError(
                f"{self.name}.targets must be integers of shape (N,), got {labels.dtype} "
                f"{labels.shape}"
            )
        self.labels = labels.astype(np.int64, copy=False)

    @property
    def class_to_idx(self) -> dict[str, int]:
        """``{class name: label}``, as torchvision's."""
        return {name: i for i, name in enumerate(self.classes)}

    def _locate(self, root: str | os.PathLike[str] | None, download: bool) -> list[Path]:
        stems = _SPLIT_FILES[self.train]
        dirs = search_dirs(self.subdir, root, self.extra_dirs)
        found = find_files(stems, dirs)
        if found is not None:
            return found
        where = "\n".join(f"  {d}" for d in dirs)
        if not download:
            raise FileNotFoundError(
                f"{self.name} files {stems[0]}[.gz] and {stems[1]}[.gz] not found in:\n{where}\n"
                "Pass download=True to fetch them, or put them in one of these directories."
            )
        target = dirs[0]  # root if given, else $MINITORCH_ACCEL_DATA/<subdir>, else the cache
        _download.download_files(
            target,
            _download.IDX_FILES,
            self.mirrors,
            self.sha256,
            sizes=self.sizes,
            dataset=self.name,
            hint=self.hint,
        )
        found = find_files(stems, [target])
        assert found is not None  # download_files raised otherwise
        return found

    def _check(self, images: npt.NDArray[Any], labels: npt.NDArray[Any]) -> None:
        img, lab = (str(p) for p in self.files[:2])
        if images.ndim != 3 or images.shape[1:] != (28, 28) or images.dtype != np.uint8:
            raise ValueError(
                f"{img}: expected uint8 images of shape (N, 28, 28), "
                f"got {images.dtype} {images.shape}"
            )
        if labels.ndim != 1 or labels.dtype != np.uint8:
            raise ValueError(
                f"{lab}: expected uint8 labels of shape (N,), got {labels.dtype} {labels.shape}"
            )
        if len(images) != len(labels):
            raise ValueError(f"{img} has {len(images)} images but {lab} has {len(labels)} labels")
        if len(labels) and int(labels.max()) >= len(self.classes):
            raise ValueError(
                f"{lab}: label {int(labels.max())} out of range for {len(self.classes)} classes"
            )

    @property
    def arrays(self) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]:
        """``(images, labels)``: all images, float32 (N, 1, 28, 28), and labels, int64 (N,)."""
        return self.images, self.labels

    def __len__(self) -> int:
        """Number of images."""
        return len(self.labels)

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        """Return ``(image, label)``.

        Without a transform, ``image`` is the float32 (1, 28, 28) array of ``arrays``
        (normalized if asked). With one, it is ``transform(raw)`` where ``raw`` is the
        (28, 28) uint8 image, the array of the PIL image torchvision would pass, so
        ``transforms.ToTensor()`` gives (1, 28, 28) float32 in [0, 1]. ``label`` is an
        int, or ``target_transform(label)``.
        """
        i = operator.index(index)
        n = len(self.labels)
        if not -n <= i < n:
            raise IndexError(f"index {i} out of range for {self.name} of {n} images")
        label: Any = int(self.labels[i])
        if self.target_transform is not None:
            label = self.target_transform(label)
        if self.transform is not None:
            return self.transform(self.raw_images[i]), label
        return self.images[i], label

    def __repr__(self) -> str:
        split = "train" if self.train else "test"
        return f"{type(self).__name__}(split={split!r}, n={len(self)}, normalize={self.normalize})"


class MNIST(_IDXImageDataset):
    """The MNIST handwritten digits: 60,000 training and 10,000 test images, 28x28.

    Parameters
    ----------
    root : str or os.PathLike, optional
        Directory holding the four IDX files (``.gz`` or not). Searched before the
        shared locations listed in the module docstring; downloads go here if given.
    train : bool, default True
        The training split, else the test split.
    download : bool, default True
        Download the files from public mirrors (SHA-256 checked) when not found. When
        no mirror answers (no network), the error says so and points to
        ``sample=True``.
    transform : callable, optional
        Applied by ``__getitem__`` to each raw (28, 28) uint8 image, as torchvision
        applies it to a PIL image (e.g. :mod:`minitorch_accel.transforms`); the
        DataLoader then loads sample by sample.
    normalize : bool, default False
        Standardize the pixels of ``arrays`` with MNIST's mean 0.1307 and std 0.3081
        (else they stay in [0, 1]); a transform gets the raw image either way.
    sample : bool, default False
        Use the embedded 5,000-image sample (4,000 train / 1,000 test, real MNIST
        digits shipped inside the package): no network, no files, ``root`` ignored.
    target_transform : callable, optional
        Applied by ``__getitem__`` to each int label.

    Attributes
    ----------
    arrays : tuple of numpy.ndarray
        ``(images, labels)``: float32 (N, 1, 28, 28) and int64 (N,).
    classes : tuple of str
        The class names, indexed by label.
    data, targets : Tensor
        torchvision's names: uint8 (N, 28, 28) and int64 (N,), sharing memory with
        ``raw_images`` and ``arrays[1]``.
    class_to_idx : dict
        ``{class name: label}``.
    train : bool
        Whether this is the training split.
    files : tuple of pathlib.Path
        The image and label files read.

    Examples
    --------
    >>> ds = MNIST(sample=True)
    >>> len(ds), ds.arrays[0].shape
    (4000, (4000, 1, 28, 28))
    >>> image, label = ds[0]
    >>> image.shape, type(label)
    ((1, 28, 28), <class 'int'>)
    >>> ds.data.shape, ds.data.dtype, ds.targets.dtype, ds.class_to_idx["3 - three"]
    ((4000, 28, 28), dtype('uint8'), dtype('int64'), 3)
    """

    name = "MNIST"
    subdir = "mnist"
    mirrors: ClassVar[Sequence[str]] = _download.MNIST_MIRRORS
    sha256: ClassVar[dict[str, str]] = _download.MNIST_SHA256
    sizes: ClassVar[dict[str, int]] = _download.MNIST_SIZES
    mean = 0.1307
    std = 0.3081
    classes: ClassVar[tuple[str, ...]] = (
        "0 - zero",
        "1 - one",
        "2 - two",
        "3 - three",
        "4 - four",
        "5 - five",
        "6 - six",
        "7 - seven",
        "8 - eight",
        "9 - nine",
    )
    hint = "Or use MNIST(sample=True): 5,000 real digits embedded in the package, no download."

    def __init__(
        self,
        root: str | os.PathLike[str] | None = None,
        train: bool = True,
        download: bool = True,
        transform: Transform | None = None,
        normalize: bool = False,
        sample: bool = False,
        *,
        target_transform: Callable[[int], Any] | None = None,
    ) -> None:
        self.sample = bool(sample)
        if not sample:
            super().__init__(
                root, train, download, transform, normalize, target_transform=target_transform
            )
            return
        package = importlib.resources.files(__package__ or "minitorch_accel.datasets")
        stems = _SPLIT_FILES[bool(train)]
        with (
            importlib.resources.as_file(package / "sample" / f"{stems[0]}.gz") as images,
            importlib.resources.as_file(package / "sample" / f"{stems[1]}.gz") as labels,
        ):
            super().__init__(
                None,
                train,
                False,
                transform,
                normalize,
                files=(images, labels),
                target_transform=target_transform,
            )


class FashionMNIST(_IDXImageDataset):
    """Fashion-MNIST (Zalando): 60,000 + 10,000 28x28 images of 10 clothing types.

    A drop-in replacement for MNIST that is harder to classify. Also found in
    ``/usr/share/datasets/fashion-mnist`` (Debian package ``dataset-fashion-mnist``).

    Parameters
    ----------
    root : str or os.PathLike, optional
        Directory holding the four IDX files (``.gz`` or not), searched first.
    train : bool, default True
        The training split, else the test split.
    download : bool, default True
        Download the files from public mirrors (SHA-256 checked) when not found.
    transform : callable, optional
        Applied by ``__getitem__`` to each raw (28, 28) uint8 image (see :class:`MNIST`).
    normalize : bool, default False
        Standardize ``arrays`` with Fashion-MNIST's mean 0.2860 and std 0.3530.
    target_transform : callable, optional
        Applied by ``__getitem__`` to each int label.

    Attributes
    ----------
    arrays : tuple of numpy.ndarray
        ``(images, labels)``: float32 (N, 1, 28, 28) and int64 (N,).
    classes : tuple of str
        ``("T-shirt/top", "Trouser", ..., "Ankle boot")``, indexed by label.
    data, targets : Tensor
        torchvision's names: uint8 (N, 28, 28) and int64 (N,), sharing memory with
        ``raw_images`` and ``arrays[1]``.
    class_to_idx : dict
        ``{class name: label}``.
    train : bool
        Whether this is the training split.
    """

    name = "Fashion-MNIST"
    subdir = "fashion-mnist"
    mirrors: ClassVar[Sequence[str]] = _download.FASHION_MNIST_MIRRORS
    sha256: ClassVar[dict[str, str]] = _download.FASHION_MNIST_SHA256
    sizes: ClassVar[dict[str, int]] = _download.FASHION_MNIST_SIZES
    extra_dirs: ClassVar[tuple[str, ...]] = ("/usr/share/datasets/fashion-mnist",)
    mean = 0.2860
    std = 0.3530
    classes: ClassVar[tuple[str, ...]] = (
        "T-shirt/top",
        "Trouser",
        "Pullover",
        "Dress",
        "Coat",
        "Sandal",
        "Shirt",
        "Sneaker",
        "Bag",
        "Ankle boot",
    )
    hint = "Or install Debian's dataset-fashion-mnist package (/usr/share/datasets/fashion-mnist)."

    def __init__(
        self,
        root: str | os.PathLike[str] | None = None,
        train: bool = True,
        download: bool = True,
        transform: Transform | None = None,
        normalize: bool = False,
        *,
        target_transform: Callable[[int], Any] | None = None,
    ) -> None:
        super().__init__(
            root, train, download, transform, normalize, target_transform=target_transform
        )
