"""Checkpoints: round trips of tensors, arrays and nested structures, devices, atomic
writes, and every kind of broken or foreign file."""

from __future__ import annotations

import json
import math
import os
import pickle
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.helpers import cuda_available

import minitorch_accel as mta
from minitorch_accel.core.tensor import Tensor
from minitorch_accel.optim import Adam
from minitorch_accel.serialization import FORMAT_NAME, FORMAT_VERSION, META_KEY, load, save

GPU = pytest.param(
    "cuda",
    marks=pytest.mark.gpu,
)


def same(a: Any, b: Any) -> bool:
    """Equal values *and* types, recursively (so 1 vs True or a list vs a tuple differ)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and str(a) == str(b))
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        keys_a, keys_b = list(a), list(b)
        return same(keys_a, keys_b) and all(same(a[k], b[k]) for k in keys_a)
    if isinstance(a, Tensor):
        return same(np.asarray(a), np.asarray(b)) and a.device is b.device
    if isinstance(a, (np.ndarray, np.generic)):
        return a.dtype == b.dtype and np.shape(a) == np.shape(b) and np.array_equal(a, b)
    return bool(a == b)


def round_trip(obj: Any, tmp_path: Path, **kw: Any) -> Any:
    save(obj, tmp_path / "ckpt.npz")
    return load(tmp_path / "ckpt.npz", **kw)


def rewrite(path: Path, change: Any = None, **extra: Any) -> None:
    """Rewrite a checkpoint with its metadata edited by ``change`` and extra entries."""
    with np.load(path) as z:
        entries = {k: z[k] for k in z.files}
    meta = json.loads(entries[META_KEY].tobytes())
    if change is not None:
        change(meta)
    entries[META_KEY] = np.frombuffer(json.dumps(meta).encode(), np.uint8)
    entries.update(extra)
    with open(path, "wb") as f:
        np.savez(f, **entries)


# ---------------------------------------------------------------- round trips
@pytest.mark.parametrize(
    "dtype", ["float16", "float32", "float64", "int32", "int64", "uint8", "bool"]
)
def test_tensors_of_every_dtype(dtype: str, tmp_path: Path, rng: np.random.Generator) -> None:
    values = (rng.standard_normal((3, 4)) * 10).astype(dtype)
    obj = {"t": mta.tensor(values), "scalar": mta.tensor(values[0, 0]), "empty": mta.zeros(0, 2)}
    back = round_trip(obj, tmp_path)
    assert same(back, obj) and back["t"].dtype == np.dtype(dtype)


def test_numpy_arrays_and_scalars(tmp_path: Path, rng: np.random.Generator) -> None:
    obj = [
        rng.standard_normal((4, 5)).T,  # not contiguous
        np.arange(6, dtype=np.int8).reshape(2, 3),
        np.array([1 + 2j], dtype=np.complex64),
        np.array(True),
        np.float32(1.5),
        np.int64(-7),
        np.bool_(False),
        np.float64(0.1),
    ]
    back = round_trip(obj, tmp_path)
    assert same(back, obj)
    assert type(back[7]) is np.float64 and type(back[4]) is np.float32


def test_nested_python_values(tmp_path: Path) -> None:
    obj = {
        "a": [1, 2.5, "x", None, True, (3, (4,))],
        1: {"deep": {2.5: [False, -0.0]}},
        None: "key None",
        False: "key False",
        "floats": [float("nan"), float("inf"), -float("inf"), 1 / 3, 5e-324],
        "big": 2**70,
        "unicode": 'héllo ✓ \x00 "quoted"',
        "ordered": OrderedDict([("z", 1), ("a", 2)]),
        "device": mta.Device("cpu:3"),
        "empty": [[], (), {}],
    }
    back = round_trip(obj, tmp_path)
    assert same(back, obj)
    assert isinstance(back["ordered"], OrderedDict) and back["device"] is mta.Device("cpu:3")


json_like = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=3)
        | st.tuples(children, children)
        | st.dictionaries(st.text(max_size=3) | st.integers(), children, max_size=3)
    ),
    max_leaves=12,
)


@settings(max_examples=30, deadline=None)
@given(obj=json_like)
def test_any_nested_structure_round_trips(obj: Any, tmp_path_factory: Any) -> None:
    assert same(round_trip(obj, tmp_path_factory.mktemp("h")), obj)


def test_requires_grad_and_shared_tensors(tmp_path: Path) -> None:
    w = mta.tensor([1.0, 2.0], requires_grad=True)
    back = round_trip({"w": w, "again": [w], "count": mta.tensor([3])}, tmp_path)
    assert back["w"].requires_grad and back["w"].is_leaf
    assert not back["count"].requires_grad
    assert back["again"][0] is back["w"]  # stored once, loaded as one tensor
    with np.load(tmp_path / "ckpt.npz") as z:
        assert sorted(z.files) == sorted([META_KEY, "a0", "a1"])


def test_optimizer_state_round_trip(tmp_path: Path) -> None:
    w = mta.tensor([1.0, -2.0, 0.5], requires_grad=True)
    opt = Adam([w], lr=0.1, amsgrad=True)
    for _ in range(2):
        w.grad = mta.tensor([0.5, 0.1, -1.0])
        opt.step()
    state = opt.state_dict()
    back = round_trip({"optimizer": state, "epoch": 2}, tmp_path)
    assert same(back["optimizer"], state) and back["epoch"] == 2
    assert back["optimizer"]["param_groups"][0]["betas"] == (0.9, 0.999)


def test_plain_numpy_reads_the_format(tmp_path: Path) -> None:
    path = tmp_path / "model.ckpt"  # any name: no suffix is added
    save({"w": mta.ones(2)}, path)
    assert os.listdir(tmp_path) == ["model.ckpt"]
    with np.load(path, allow_pickle=False) as z:
        meta = json.loads(z[META_KEY].tobytes())
        assert (meta["format"], meta["version"]) == (FORMAT_NAME, FORMAT_VERSION)
        assert z["a0"].tolist() == [1.0, 1.0]


# ---------------------------------------------------------------- devices
@pytest.mark.parametrize("device", ["cpu:1", GPU])
def test_tensors_return_to_their_device(device: str, tmp_path: Path) -> None:
    t = mta.tensor([1.0, 2.0], device=device)
    back = round_trip([t], tmp_path)
    assert t.device is mta.Device(device)  # saving did not move it
    assert back[0].device is mta.Device(device) and back[0].tolist() == [1.0, 2.0]
    host = load(tmp_path / "ckpt.npz", map_location="cpu")[0]
    assert host.device is mta.Device("cpu") and host.tolist() == [1.0, 2.0]


def test_map_location_device_and_dict(tmp_path: Path) -> None:
    obj = [mta.ones(1, device="cpu:1"), mta.ones(1, device="cpu:2"), mta.ones(1)]
    moved = round_trip(obj, tmp_path, map_location=mta.Device("cpu:4"))
    assert [t.device for t in moved] == [mta.Device("cpu:4")] * 3
    mapped = load(tmp_path / "ckpt.npz", map_location={"cpu:1": "cpu:7"})
    assert [str(t.device) for t in mapped] == ["cpu:7", "cpu:2", "cpu"]


def test_missing_saved_device_falls_back_to_the_host(tmp_path: Path) -> None:
    save({"w": mta.ones(2)}, tmp_path / "ckpt.npz")

    def to_missing_gpu(meta: dict[str, Any]) -> None:
        meta["root"]["items"][0][1]["device"] = "cuda:63"

    rewrite(tmp_path / "ckpt.npz", to_missing_gpu)
    assert load(tmp_path / "ckpt.npz")["w"].device is mta.Device("cpu")


@pytest.mark.skipif(cuda_available(), reason="checks the error without a GPU")
def test_map_location_to_a_missing_gpu(tmp_path: Path) -> None:
    save([mta.ones(1)], tmp_path / "ckpt.npz")
    with pytest.raises(RuntimeError, match="cuda"):
        load(tmp_path / "ckpt.npz", map_location="cuda:0")


# ---------------------------------------------------------------- atomic writes
class FailingFile:
    """A file whose writes fail, as on a full disk, once ``limit`` bytes went through."""

    def __init__(self, f: Any, limit: int, written: list[int]) -> None:
        self._f, self._limit, self._written = f, limit, written

    def write(self, data: Any) -> int:
        room = self._limit - sum(self._written)
        if len(data) > room:
            self._written.append(self._f.write(bytes(data)[: max(room, 0)]))
            raise OSError(28, "No space left on device")
        self._written.append(self._f.write(data))
        return self._written[-1]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._f, name)

    def __enter__(self) -> FailingFile:
        return self

    def __exit__(self, *exc: Any) -> None:
        self._f.close()


def test_an_interrupted_save_keeps_the_previous_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "ckpt.npz"
    save({"w": mta.tensor([1.0, 2.0]), "epoch": 1}, path)
    before = path.read_bytes()
    written: list[int] = []

    def open_failing(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        f = open(file, mode, *args, **kwargs)  # noqa: SIM115  (returned to the caller)
        return FailingFile(f, 5000, written) if "x" in mode else f

    from minitorch_accel import atomic_write

    monkeypatch.setattr(atomic_write, "open", open_failing, raising=False)
    with pytest.raises(OSError, match=f"cannot write {str(path)!r}: No space left on device"):
        save({"w": mta.zeros(10_000), "epoch": 2}, path)
    assert sum(written) == 5000  # the new checkpoint was half written when it failed
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert load(path)["epoch"] == 1
    assert os.listdir(tmp_path) == ["ckpt.npz"]  # no temporary file left behind


def test_a_failed_save_of_an_unsupported_object_writes_nothing(tmp_path: Path) -> None:
    with pytest.raises(TypeError):
        save({"model": {"layers": [1, object()]}}, tmp_path / "ckpt.npz")
    assert os.listdir(tmp_path) == []


# ---------------------------------------------------------------- unsupported objects
@pytest.mark.parametrize(
    "obj, error, message",
    [
        ({"model": {"layers": [1, object()]}}, TypeError, r"obj\['model'\]\['layers'\]\[1\]"),
        ({"s": {1, 2}}, TypeError, r"type set at obj\['s'\]"),
        ([np.array([None, 1], dtype=object)], TypeError, r"obj\[0\]: its dtype object"),
        ({(1, 2): 3}, TypeError, r"dict key \(1, 2\) \(a tuple\) at obj"),
        ({"c": 1 + 2j}, TypeError, r"type complex at obj\['c'\]"),
    ],
)
def test_unsupported_objects_name_their_key_path(
    obj: Any, error: type, message: str, tmp_path: Path
) -> None:
    with pytest.raises(error, match=message):
        save(obj, tmp_path / "ckpt.npz")


def test_a_structure_that_contains_itself(tmp_path: Path) -> None:
    loop: list[Any] = [1]
    loop.append({"back": loop})
    with pytest.raises(ValueError, match=r"contains itself, at obj\[1\]\['back'\]"):
        save(loop, tmp_path / "ckpt.npz")


# ---------------------------------------------------------------- broken and foreign files
_EVIL_RAN: list[bool] = []


def _evil() -> None:
    _EVIL_RAN.append(True)


class Evil:
    def __reduce__(self) -> Any:
        return (_evil, ())


def write_foreign(kind: str, path: Path, rng: np.random.Generator) -> None:
    if kind == "random bytes":
        path.write_bytes(rng.bytes(2000))
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "pickle":
        path.write_bytes(pickle.dumps({"w": Evil()}))
    elif kind == "npy":
        np.save(path.with_suffix(".npy"), np.zeros(3))
        path.with_suffix(".npy").rename(path)
    elif kind == "plain npz":
        with open(path, "wb") as f:
            np.savez(f, w=np.zeros(3))
    elif kind == "torch.save":
        torch = pytest.importorskip("torch")
        torch.save({"w": torch.zeros(3)}, path)


@pytest.mark.parametrize(
    "kind, message",
    [
        ("random bytes", "not a minitorch_accel checkpoint: its contents are not a zip"),
        ("empty", "the file is empty"),
        ("pickle", "looks like a pickle file"),
        ("npy", "single .npy array"),
        ("plain npz", "without minitorch_accel metadata"),
        ("torch.save", "without minitorch_accel metadata"),
    ],
)
def test_foreign_files(kind: str, message: str, tmp_path: Path, rng: np.random.Generator) -> None:
    path = tmp_path / "foreign.npz"
    write_foreign(kind, path, rng)
    with pytest.raises(ValueError, match=message) as info:
        load(path)
    assert str(path) in str(info.value)
    assert not _EVIL_RAN


@pytest.mark.parametrize("keep", [0.5, 0.95, 30 / 80_000])
def test_truncated_files(keep: float, tmp_path: Path) -> None:
    path = tmp_path / "ckpt.npz"
    save({"w": mta.ones(10_000, dtype=np.float64)}, path)
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])
    with pytest.raises(ValueError, match="corrupt or truncated") as info:
        load(path)
    assert str(path) in str(info.value)


def test_flipped_bytes_are_detected(tmp_path: Path) -> None:
    path = tmp_path / "ckpt.npz"
    save({"w": mta.ones(10_000, dtype=np.float64)}, path)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF  # inside the array's data
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="corrupt or truncated.*CRC"):
        load(path)


def set_format(meta: dict[str, Any]) -> None:
    meta["format"] = "someone.else"


def set_version(meta: dict[str, Any]) -> None:
    meta["version"] = FORMAT_VERSION + 1


def point_to_missing(meta: dict[str, Any]) -> None:
    meta["root"]["items"][0][1]["a"] = "a9"


def unknown_node(meta: dict[str, Any]) -> None:
    meta["root"]["items"][0][1] = {"t": "lambda", "v": "os.system"}


def drop_field(meta: dict[str, Any]) -> None:
    del meta["root"]["items"][0][1]["device"]


@pytest.mark.parametrize(
    "change, message",
    [
        (set_format, "does not name the minitorch_accel checkpoint format"),
        (set_version, f"format version {FORMAT_VERSION + 1}.*upgrade"),
        (point_to_missing, "array 'a9' that is missing"),
        (unknown_node, "unknown node type 'lambda'"),
        (drop_field, "expected a field 'device'"),
    ],
)
def test_tampered_metadata(change: Any, message: str, tmp_path: Path) -> None:
    path = tmp_path / "ckpt.npz"
    save({"w": mta.ones(2)}, path)
    rewrite(path, change)
    with pytest.raises(ValueError, match=message):
        load(path)


def test_metadata_that_is_not_json(tmp_path: Path) -> None:
    path = tmp_path / "ckpt.npz"
    with open(path, "wb") as f:
        entries: dict[str, Any] = {META_KEY: np.frombuffer(b"{not json", np.uint8)}
        np.savez(f, **entries)
    with pytest.raises(ValueError, match="corrupt or truncated.*JSONDecodeError"):
        load(path)


def test_pickled_array_entries_are_never_unpickled(tmp_path: Path) -> None:
    path = tmp_path / "ckpt.npz"
    save({"w": np.zeros(2)}, path)
    evil = np.empty(1, dtype=object)
    evil[0] = Evil()
    rewrite(path, lambda meta: None, a0=evil)  # np.savez pickles object arrays
    with pytest.raises(ValueError, match="corrupt or truncated.*allow_pickle"):
        load(path)
    assert not _EVIL_RAN


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        load(tmp_path / "nope.npz")


# ------------------------------------------------------------------ leftovers


KILLED_SAVE = """
import os, signal, sys
import numpy as np
from minitorch_accel.serialization import save
def savez_then_die(f, **entries):
    f.write(b"PK" + bytes(1 << 16))  # part of the archive is written...
    f.flush()
    os.kill(os.getpid(), signal.SIGKILL)  # ...when the job is killed
np.savez = savez_then_die
save({"w": np.zeros(3)}, sys.argv[1])
"""


def temp_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_a_killed_save_leaves_nothing_after_the_next_save(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    target = tmp_path / "ckpt.npz"
    save({"w": np.ones(3)}, target)
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", KILLED_SAVE, str(target)], env=env)
        assert done.returncode == -9
    # each killed save removed the one before it left (they used to stay forever)
    assert len(temp_files(tmp_path)) == 1
    np.testing.assert_array_equal(load(target)["w"], np.ones(3))  # the old one is intact
    save({"w": np.full(3, 2.0)}, target)
    assert temp_files(tmp_path) == []
    np.testing.assert_array_equal(load(target)["w"], np.full(3, 2.0))


def test_a_temp_file_being_written_is_not_removed(tmp_path: Path) -> None:
    import fcntl

    from minitorch_accel.atomic_write import temp_prefix

    target = tmp_path / "ckpt.npz"
    busy = tmp_path / f"{temp_prefix(target)}0123456789ab.tmp"
    with open(busy, "wb") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)  # another process saving right now
        save({"w": np.ones(2)}, target)
        assert busy.exists()
    save({"w": np.ones(2)}, target)  # the writer is gone: now it is stale
    assert not busy.exists()


def test_a_249_character_name_saves(tmp_path: Path) -> None:
    target = tmp_path / ("x" * 245 + ".npz")  # 249 characters: legal (up to 255)
    save({"w": np.arange(3)}, target)
    np.testing.assert_array_equal(load(target)["w"], np.arange(3))
    assert temp_files(tmp_path) == []


def test_save_errors_name_the_target(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a folder")
    target = tmp_path / "file" / "ckpt.npz"
    with pytest.raises(OSError) as caught:  # noqa: PT011  (the message is checked below)
        save({"w": np.ones(2)}, target)
    message = str(caught.value)
    assert f"cannot write {str(target)!r}" in message and ".tmp" not in message


def test_metadata_nested_5000_deep_is_a_clean_error(tmp_path: Path) -> None:
    path = tmp_path / "deep.npz"
    root = '{"t":"list","items":[' * 5000 + '{"t":"none"}' + "]}" * 5000  # text: json.dumps
    text = f'{{"format":"{FORMAT_NAME}","version":{FORMAT_VERSION},"root":{root}}}'  # would recurse
    with open(path, "wb") as f:
        np.savez(f, **{META_KEY: np.frombuffer(text.encode(), np.uint8)})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="its structure is nested too deeply"):  # RecursionError
        load(path)


def test_a_list_as_a_dict_key_is_a_clean_error(tmp_path: Path) -> None:
    path = tmp_path / "key.npz"
    save({"w": 1}, path)
    key = {"t": "list", "items": [{"t": "int", "v": 1}]}
    root = {
        "t": "dict",
        "items": [[{"t": "str", "v": "model"}, {"t": "dict", "items": [[key, {"t": "none"}]]}]],
    }
    rewrite(path, lambda meta: meta.__setitem__("root", root))
    with pytest.raises(
        ValueError, match=r"a key of the dict at obj\['model'\] is a list"
    ):  # TypeError
        load(path)
