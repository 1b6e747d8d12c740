"""save/load in the safetensors format: round trips, a state dict trained here loading
into PyTorch and back, bad input, and the .npz default left unchanged."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import minitorch_accel as mta
from minitorch_accel import nn
from minitorch_accel.serialization import load, save

safetensors_numpy = pytest.importorskip("safetensors.numpy")


def _model() -> nn.Module:
    mta.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))


def test_round_trip_by_suffix_and_by_argument(tmp_path: Path) -> None:
    model = _model()
    state = model.state_dict()
    save(state, tmp_path / "model.safetensors")
    raw = safetensors_numpy.load_file(str(tmp_path / "model.safetensors"))  # a real file
    assert set(raw) == set(state)
    loaded = load(tmp_path / "model.safetensors")
    assert list(loaded) == sorted(state) or set(loaded) == set(state)
    for name, value in state.items():
        assert loaded[name].dtype == value.dtype and not loaded[name].requires_grad
        np.testing.assert_array_equal(loaded[name].numpy(), value.detach().numpy())
    other = _model()
    for p in other.parameters():
        p.array[...] = 0
    other.load_state_dict(loaded)
    x = mta.randn(5, 4)
    np.testing.assert_array_equal(other(x).detach().numpy(), model(x).detach().numpy())
    save(
        {"w": np.arange(6, dtype=np.int16).reshape(2, 3)}, tmp_path / "w.bin", format="safetensors"
    )
    back = load(tmp_path / "w.bin", format="safetensors")
    assert back["w"].dtype == np.int16 and back["w"].shape == (2, 3)


def test_map_location(tmp_path: Path) -> None:
    save({"w": mta.ones(2)}, tmp_path / "w.safetensors")
    assert load(tmp_path / "w.safetensors", map_location="cpu:1")["w"].device == mta.Device("cpu:1")


def test_bad_input(tmp_path: Path) -> None:
    opt = mta.optim.SGD(_model().parameters(), lr=0.1, momentum=0.9)
    with pytest.raises(TypeError, match="entry 'state' is a dict.*npz checkpoint"):
        save(opt.state_dict(), tmp_path / "opt.safetensors")
    with pytest.raises(TypeError, match="dict of tensors"):
        save([mta.ones(2)], tmp_path / "list.safetensors")
    with pytest.raises(TypeError, match="names are strings"):
        save({1: mta.ones(2)}, tmp_path / "key.safetensors")
    with pytest.raises(ValueError, match="format must be 'npz' or 'safetensors'"):
        save({"w": mta.ones(2)}, tmp_path / "w.pt", format="pickle")
    (tmp_path / "junk.safetensors").write_bytes(b"\x00" * 64)
    with pytest.raises(ValueError, match="junk.safetensors.*not a valid safetensors file"):
        load(tmp_path / "junk.safetensors")
    assert not list(tmp_path.glob(".*.tmp"))  # failed saves leave no temporary file


def test_npz_stays_the_default(tmp_path: Path) -> None:
    save({"w": mta.ones(2), "epoch": 3}, tmp_path / "ckpt.npz")
    assert load(tmp_path / "ckpt.npz")["epoch"] == 3
    save({"w": mta.ones(2)}, tmp_path / "w.safetensors")
    with pytest.raises(ValueError, match="not a minitorch_accel checkpoint"):
        load(tmp_path / "w.safetensors", format="npz")


def test_trained_here_loads_into_pytorch_and_back(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    from safetensors.torch import load_file, save_file

    model = _model()
    opt = mta.optim.Adam(model.parameters(), lr=0.05)
    x = mta.randn(16, 4)
    y = mta.tensor(np.arange(16) % 2)
    for _ in range(5):  # trained here
        opt.zero_grad()
        nn.CrossEntropyLoss()(model(x), y).backward()
        opt.step()
    save(model.state_dict(), tmp_path / "ours.safetensors")

    theirs = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
    theirs.load_state_dict(load_file(str(tmp_path / "ours.safetensors")))
    with torch.no_grad():
        out = theirs(torch.from_numpy(x.numpy())).numpy()
    np.testing.assert_allclose(out, model(x).detach().numpy(), rtol=1e-6, atol=1e-6)

    with torch.no_grad():  # changed in PyTorch, then read back here
        for p in theirs.parameters():
            p.mul_(2.0)
    save_file(theirs.state_dict(), str(tmp_path / "theirs.safetensors"))
    back = _model()
    back.load_state_dict(load(tmp_path / "theirs.safetensors"))
    with torch.no_grad():
        want = theirs(torch.from_numpy(x.numpy())).numpy()
    np.testing.assert_allclose(back(x).detach().numpy(), want, rtol=1e-6, atol=1e-6)


def test_missing_package_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import builtins

    real_import = builtins.__import__

    def no_safetensors(name: str, *args: Any, **kwargs: Any) -> Any:
        level = args[3] if len(args) > 3 else kwargs.get("level", 0)
        if name.startswith("safetensors") and level == 0:
            raise ImportError("No module named 'safetensors'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_safetensors)
    with pytest.raises(ImportError, match=r"minitorch_accel\[interop\]"):
        save({"w": mta.ones(2)}, tmp_path / "w.safetensors")
