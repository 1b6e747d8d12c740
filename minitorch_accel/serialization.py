"""Checkpoints: :func:`save` and :func:`load` nested structures of tensors and numbers.

A checkpoint is one ``.npz`` file (a zip of ``.npy`` arrays): every tensor or NumPy
array is an entry, and one more entry holds JSON metadata describing the structure
(dicts, lists, tuples, numbers, strings...) with the name and version of the format.
It is read with ``numpy.load(..., allow_pickle=False)``, so loading a file from an
untrusted source never runs code, and it can be inspected with NumPy alone.

Saving writes a temporary file next to the target and renames it into place, so an
interrupted save (a full disk, a killed job) leaves the previous checkpoint intact.

A path ending in ``.safetensors`` (or ``format="safetensors"``) reads and writes the
safetensors format instead, for state dicts shared with PyTorch (see
:mod:`minitorch_accel.safetensors_format`).

Examples
--------
>>> import os, tempfile
>>> import minitorch_accel as mta
>>> from minitorch_accel.serialization import load, save
>>> path = os.path.join(tempfile.mkdtemp(), "ckpt.npz")
>>> save({"epoch": 3, "w": mta.tensor([1.0, 2.0])}, path)
>>> load(path)
{'epoch': 3, 'w': tensor([1., 2.])}
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import zipfile
import zlib
from collections import OrderedDict
from collections.abc import Mapping
from typing import IO, Any, Union

import numpy as np

from .atomic_write import atomic_write
from .backends import Device, DeviceLike
from .backends.host_limits import check_host_allocation
from .core.tensor import Tensor

FORMAT_NAME = "minitorch_accel.checkpoint"
FORMAT_VERSION = 1
META_KEY = "__minitorch_accel_meta__"
_ARRAY_KINDS = "biufc"  # bool, signed and unsigned ints, floats, complex: no objects

MapLocation = Union[DeviceLike, Mapping[str, DeviceLike], None]  # noqa: UP007


# ---------------------------------------------------------------------- saving
class _Encoder:
    """Turns an object into a JSON-ready node tree plus a dict of arrays."""

    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}
        self._memo: dict[int, str] = {}  # id(tensor or array) -> array entry name
        self._active: set[int] = set()  # containers being encoded (to catch cycles)

    def _store(self, obj: Any, array: np.ndarray, path: str) -> str:
        if array.dtype.kind not in _ARRAY_KINDS:
            raise TypeError(
                f"cannot save the array at {path}: its dtype {array.dtype} is not a number "
                "or bool type"
            )
        name = self._memo.get(id(obj))
        if name is None:
            name = f"a{len(self.arrays)}"
            self.arrays[name] = array
            self._memo[id(obj)] = name
        return name

    def encode(self, obj: Any, path: str) -> dict[str, Any]:  # noqa: C901  (one branch per value type of the format)
        if obj is None:
            return {"t": "none"}
        if isinstance(obj, np.generic):  # before float: np.float64 is a float subclass
            return {"t": "npscalar", "a": self._store(obj, np.asarray(obj), path)}
        if isinstance(obj, bool):
            return {"t": "bool", "v": obj}
        if isinstance(obj, int):
            return {"t": "int", "v": int(obj)}
        if isinstance(obj, float):
            return {"t": "float", "v": float(obj).hex()}
        if isinstance(obj, str):
            return {"t": "str", "v": obj}
        if isinstance(obj, Tensor):
            host = obj.device.backend.to_host(obj.array)  # a copy from a GPU; never moves obj
            name = self._store(obj, host, path)
            return {"t": "tensor", "a": name, "device": str(obj.device), "rg": obj.requires_grad}
        if isinstance(obj, np.ndarray):
            return {"t": "ndarray", "a": self._store(obj, obj, path)}
        if isinstance(obj, Device):
            return {"t": "device", "v": str(obj)}
        if isinstance(obj, (dict, list, tuple)):
            if id(obj) in self._active:
                raise ValueError(f"cannot save a structure that contains itself, at {path}")
            self._active.add(id(obj))
            try:
                return self._encode_container(obj, path)
            finally:
                self._active.discard(id(obj))
        raise TypeError(
            f"cannot save an object of type {type(obj).__name__} at {path}: checkpoints hold "
            "Tensors, NumPy arrays, numbers, strings, None, bools, devices, and dicts, lists "
            "and tuples of them"
        )

    def _encode_container(self, obj: Any, path: str) -> dict[str, Any]:
        if isinstance(obj, dict):
            items = []
            for key, value in obj.items():
                if key is not None and not isinstance(key, (str, int, float)):
                    raise TypeError(
                        f"cannot save the dict key {key!r} (a {type(key).__name__}) at {path}: "
                        "keys must be strings, numbers, bools or None"
                    )
                sub = f"{path}[{key!r}]"
                items.append([self.encode(key, sub), self.encode(value, sub)])
            kind = "odict" if isinstance(obj, OrderedDict) else "dict"
            return {"t": kind, "items": items}
        kind = "tuple" if isinstance(obj, tuple) else "list"
        return {"t": kind, "items": [self.encode(v, f"{path}[{i}]") for i, v in enumerate(obj)]}


def _format_of(path: str, format: str | None) -> str:
    if format is None:
        return "safetensors" if path.endswith(".safetensors") else "npz"
    if format not in ("npz", "safetensors"):
        raise ValueError(f"format must be 'npz' or 'safetensors', got {format!r}")
    return format


def save(obj: Any, path: str | os.PathLike[str] | IO[bytes], format: str | None = None) -> None:
    """Save ``obj`` to the file ``path`` as a checkpoint.

    Parameters
    ----------
    obj : object
        Tensors (from any device: they are copied to the host, and stay where they
        are), NumPy arrays and scalars, Python numbers, strings, None, bools and
        devices, nested in dicts, lists and tuples: a model's ``state_dict()``, an
        optimizer's ``state_dict()``, the epoch... A tensor that appears several times
        is stored once, and loads as one tensor.
    path : str, path-like or binary file
        The file to write (used as given; ``.npz`` is a good suffix). It is replaced
        only once the new checkpoint is completely written. An open binary file (as in
        ``torch.save(obj, open("x.pt", "wb"))``) is written at its position, directly.
    format : {"npz", "safetensors"}, optional
        The file format; by default ``"safetensors"`` for a path ending in
        ``.safetensors``, else ``"npz"``. A safetensors file holds a flat dict of
        tensors (a ``state_dict()``) that PyTorch reads with
        ``safetensors.torch.load_file``; it needs the ``safetensors`` package.

    Raises
    ------
    TypeError
        For an object that cannot be saved, naming where it is (e.g.
        ``obj['model']['scale']``), or a file opened in text mode.
    ValueError
        For a structure that contains itself.
    OSError
        When the file cannot be written (the previous file, if any, is unchanged); the
        message names ``path``.

    Notes
    -----
    The temporary file (``.<name>.<hash>.<random>.tmp`` beside ``path``) of a save that
    was killed is deleted by the next save to the same path.
    """
    sink: contextlib.AbstractContextManager[Any]
    if hasattr(path, "write"):  # an open file: written directly, at its position
        if isinstance(path, io.TextIOBase):
            raise TypeError("save needs a file opened in binary mode ('wb'), not text mode")
        name, sink = str(getattr(path, "name", "")), contextlib.nullcontext(path)
    else:  # a path: replaced only once the whole checkpoint is written
        name, sink = os.fspath(path), atomic_write(path)
    if _format_of(name, format) == "safetensors":
        from .safetensors_format import to_bytes

        data = to_bytes(obj)
        with sink as f:
            f.write(data)
        return
    encoder = _Encoder()
    root = encoder.encode(obj, "obj")
    meta = {"format": FORMAT_NAME, "version": FORMAT_VERSION, "root": root}
    blob = np.frombuffer(json.dumps(meta, separators=(",", ":")).encode("utf-8"), np.uint8)
    entries: dict[str, Any] = {META_KEY: blob, **encoder.arrays}
    with sink as f:
        np.savez(f, **entries)


# ---------------------------------------------------------------------- loading
class _Corrupt(Exception):  # noqa: N818  (private control flow, never escapes)
    """Raised inside :func:`load` for a file that is not a valid checkpoint."""


def _get(node: Any, name: str, kind: type | tuple[type, ...]) -> Any:
    if not isinstance(node, dict) or not isinstance(node.get(name), kind):
        raise _Corrupt(f"malformed metadata (expected a field {name!r} in {str(node)[:80]})")
    return node[name]


class _Decoder:
    """Rebuilds the object from the metadata tree and the arrays of an open ``.npz``."""

    def __init__(self, npz: Any, map_location: MapLocation) -> None:
        self._npz = npz
        self._map = map_location
        self._arrays: dict[str, np.ndarray] = {}
        self._tensors: dict[str, Tensor] = {}
        self._devices: dict[str, Device] = {}

    def _array(self, node: Any, where: str) -> np.ndarray:
        name = _get(node, "a", str)
        if name not in self._arrays:
            if name == META_KEY or name not in self._npz.files:
                raise _Corrupt(f"the metadata refers to an array {name!r} that is missing")
            _check_array_header(self._npz, name, where)
            array = self._npz[name]
            if array.dtype.kind not in _ARRAY_KINDS:
                raise _Corrupt(f"array {name!r} has the unsupported dtype {array.dtype}")
            self._arrays[name] = array
        return self._arrays[name]

    def _device(self, saved: str) -> Device:
        dev = self._devices.get(saved)
        if dev is None:
            dev = _resolve_device(saved, self._map)
            self._devices[saved] = dev
        return dev

    def decode(self, node: Any, where: str = "obj") -> Any:  # noqa: C901  (one branch per value type of the format)
        """The object of ``node``; ``where`` says where it is (``obj['model']``)."""
        kind = _get(node, "t", str)
        if kind == "none":
            return None
        if kind in ("bool", "int", "str"):
            value = _get(node, "v", {"bool": bool, "int": int, "str": str}[kind])
            return value
        if kind == "float":
            return float.fromhex(_get(node, "v", str))
        if kind == "tensor":
            name = _get(node, "a", str)
            if name not in self._tensors:
                array = self._array(node, where)
                dev = self._device(_get(node, "device", str))
                t = Tensor._from_data(array, device=dev)
                if _get(node, "rg", bool) and array.dtype.kind == "f":
                    t.requires_grad_(True)
                self._tensors[name] = t
            return self._tensors[name]
        if kind == "ndarray":
            return self._array(node, where)
        if kind == "npscalar":
            array = self._array(node, where)
            if array.ndim != 0:
                raise _Corrupt("a NumPy scalar entry holds an array")
            return array[()]
        if kind == "device":
            return Device(_get(node, "v", str))
        if kind in ("list", "tuple"):
            items = [
                self.decode(v, f"{where}[{i}]") for i, v in enumerate(_get(node, "items", list))
            ]
            return tuple(items) if kind == "tuple" else items
        if kind in ("dict", "odict"):
            out: dict[Any, Any] = OrderedDict() if kind == "odict" else {}
            for pair in _get(node, "items", list):
                if not isinstance(pair, list) or len(pair) != 2:
                    raise _Corrupt("malformed metadata (a dict item is not a key-value pair)")
                key = self.decode(pair[0], where)
                try:
                    hash(key)
                except TypeError:
                    raise _Corrupt(
                        f"a key of the dict at {where} is a {type(key).__name__}, which "
                        "cannot be a dict key"
                    ) from None
                out[key] = self.decode(pair[1], f"{where}[{key!r}]")
            return out
        raise _Corrupt(f"malformed metadata (unknown node type {kind!r})")


def _check_array_header(npz: Any, name: str, where: str) -> None:
    """Read an entry's ``.npy`` header and check what it declares against the entry's
    size and this process's memory, before NumPy allocates anything for it.
    """
    try:
        info = npz.zip.getinfo(f"{name}.npy")
    except (AttributeError, KeyError):
        return  # not a zip member NumPy reads lazily: nothing to check ahead
    with npz.zip.open(info) as member:
        version = np.lib.format.read_magic(member)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(member)
        elif version == (2, 0):
            shape, _, dtype = np.lib.format.read_array_header_2_0(member)
        else:
            return  # format 3.0 (UTF-8 field names): left to NumPy's own checks
        header_end = member.tell()
    if dtype.hasobject:
        return  # pickled objects: NumPy refuses them (allow_pickle=False)
    declared = math.prod(shape) * dtype.itemsize  # Python ints: no overflow
    stored = info.file_size - header_end
    what = f"the array at {where} (entry {name!r}, shape {tuple(shape)}, {dtype})"
    if declared != stored:
        raise _Corrupt(f"{what} declares {declared} bytes but the file holds {stored}")
    try:
        check_host_allocation(declared, what)
    except ValueError as exc:
        raise _Corrupt(str(exc)) from None


def _resolve_device(saved: str, map_location: MapLocation) -> Device:
    """Where a tensor saved from ``saved`` goes."""
    if isinstance(map_location, Mapping):
        if saved in map_location:
            return Device(map_location[saved])
    elif map_location is not None:
        return Device(map_location)
    try:  # default: back where it came from, when that device exists here
        dev = Device(saved)
        dev.backend  # noqa: B018  (resolving the backend checks that the device exists)
        return dev
    except (ValueError, RuntimeError, TypeError):
        return Device("cpu")


def _check_map_location(map_location: MapLocation) -> None:
    """Fail early (with the backend's own message) on a device that cannot be used."""
    if map_location is None:
        return
    targets = map_location.values() if isinstance(map_location, Mapping) else [map_location]
    for target in targets:
        Device(target).backend  # noqa: B018


def _describe_foreign(head: bytes) -> str:
    if not head:
        return "the file is empty"
    if head[:1] == b"\x80" or head[:1] in (b"(", b"]", b"}"):
        return (
            "it looks like a pickle file (for example from torch.save or pickle.dump); "
            "pickles are never loaded, because loading one can run arbitrary code"
        )
    if head.startswith(b"\x93NUMPY"):
        return "it is a single .npy array; read it with numpy.load"
    return "its contents are not a zip/.npz archive"


def load(
    path: str | os.PathLike[str] | IO[bytes],
    map_location: MapLocation = None,
    format: str | None = None,
    *,
    weights_only: bool | None = None,
) -> Any:
    """Load an object written by :func:`save` (or a safetensors file).

    Parameters
    ----------
    path : str, path-like or binary file
        The checkpoint file, or an open binary file (``torch.load(f)``) read from its
        position.
    map_location : str, Device or dict, optional
        Where loaded tensors go: a device for all of them (``"cpu"``, ``"cuda:0"``), or
        a dict from saved device names to devices (``{"cuda:1": "cuda:0"}``). By
        default each tensor goes back to the device it was saved from when that device
        exists here, else to the host. Tensors of a safetensors file were saved from
        ``"cpu"``.
    format : {"npz", "safetensors"}, optional
        By default ``"safetensors"`` for a path ending in ``.safetensors``, else
        ``"npz"``. A safetensors file loads as a dict of tensors (``requires_grad``
        False), ready for ``model.load_state_dict``.
    weights_only : bool, optional
        Accepted so that PyTorch's ``torch.load(path, weights_only=True)`` runs
        unchanged; every value reads the same. PyTorch's ``weights_only=False`` lets a
        pickle run code while loading; these files hold no pickles (they are read with
        ``allow_pickle=False``), so loading is always as restricted as PyTorch's
        ``weights_only=True``.

    Returns
    -------
    object
        The saved structure, with tensors (``requires_grad`` as saved), NumPy arrays and
        scalars, and Python values.

    Raises
    ------
    FileNotFoundError
        If there is no such file.
    TypeError
        If ``path`` is a file opened in text mode.
    ValueError
        If the file is not a checkpoint (random bytes, a pickle, a plain ``.npz``), is
        truncated or corrupt, holds an array whose header declares more data than the
        file holds or this process can allocate (checked before allocating), or was
        written by a newer format version; the message names the file (and the array).
    RuntimeError
        If ``map_location`` names a device that cannot be used here.
    """
    source, name = _source(path)
    _check_map_location(map_location)
    if _format_of(name, format) == "safetensors":
        from .safetensors_format import from_bytes

        try:
            return from_bytes(_read(source), _resolve_device("cpu", map_location))
        except ValueError as exc:
            raise ValueError(f"{name!r}: {exc}") from None
    head = _read(source, 8)
    if not head.startswith(b"PK"):
        raise ValueError(f"{name!r} is not a minitorch_accel checkpoint: {_describe_foreign(head)}")
    try:
        with np.load(source, allow_pickle=False) as npz:
            if META_KEY not in npz.files:
                raise _Corrupt(
                    "it is an .npz archive without minitorch_accel metadata (a plain "
                    "numpy.savez file?); read it with numpy.load"
                )
            meta = _read_meta(npz[META_KEY])
            return _Decoder(npz, map_location).decode(meta["root"])
    except RecursionError:
        raise ValueError(
            f"{name!r} is not a valid minitorch_accel checkpoint: its structure is nested "
            "too deeply to be read"
        ) from None
    except _Corrupt as exc:
        raise ValueError(f"{name!r} is not a valid minitorch_accel checkpoint: {exc}") from None
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, KeyError) as exc:
        raise ValueError(
            f"{name!r} is corrupt or truncated, it cannot be read as a minitorch_accel "
            f"checkpoint ({type(exc).__name__}: {exc})"
        ) from exc


def _source(path: str | os.PathLike[str] | IO[bytes]) -> tuple[str | io.BytesIO, str]:
    """What :func:`load` reads (a path, or an open file's remaining bytes in memory) and
    the name its messages give.
    """
    if not hasattr(path, "read"):
        name = os.fspath(path)
        return name, name
    if isinstance(path, io.TextIOBase):
        raise TypeError("load needs a file opened in binary mode ('rb'), not text mode")
    return io.BytesIO(path.read()), str(getattr(path, "name", "<file object>"))


def _read(source: str | io.BytesIO, size: int = -1) -> bytes:
    """The first ``size`` bytes of ``source`` (all of them for -1)."""
    if isinstance(source, io.BytesIO):
        data = source.getvalue()
        return data if size < 0 else data[:size]
    with open(source, "rb") as f:
        return f.read(size)


def _read_meta(blob: np.ndarray) -> dict[str, Any]:
    if blob.dtype != np.uint8 or blob.ndim != 1:
        raise _Corrupt("the metadata entry is not JSON text")
    meta = json.loads(blob.tobytes().decode("utf-8"))
    if not isinstance(meta, dict) or meta.get("format") != FORMAT_NAME:
        raise _Corrupt("the metadata does not name the minitorch_accel checkpoint format")
    version = meta.get("version")
    if not isinstance(version, int) or version < 1:
        raise _Corrupt(f"the metadata has an invalid format version {version!r}")
    if version > FORMAT_VERSION:
        raise _Corrupt(
            f"it was written with checkpoint format version {version}, and this "
            f"minitorch_accel reads versions up to {FORMAT_VERSION}: upgrade minitorch_accel"
        )
    if "root" not in meta:
        raise _Corrupt("the metadata has no root object")
    return meta


__all__ = ["FORMAT_NAME", "FORMAT_VERSION", "load", "save"]
