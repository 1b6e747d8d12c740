"""Devices: parsing, virtual ``cpu:N`` devices, transfer accounting, and the error for a
missing GPU (simulated with a fake ``cupy`` module)."""

from __future__ import annotations

import pickle
import sys
import types
from typing import Any

import numpy as np
import pytest

import minitorch_accel as mta
from minitorch_accel.backends import Device, registry


# ------------------------------------------------------------------ parsing
@pytest.mark.parametrize(
    "name,type_,index,text",
    [
        ("cpu", "cpu", None, "cpu"),
        ("cpu:3", "cpu", 3, "cpu:3"),
        ("cuda", "cuda", 0, "cuda:0"),
        ("cuda:1", "cuda", 1, "cuda:1"),
        (" CPU:2 ", "cpu", 2, "cpu:2"),
    ],
)
def test_device_parsing(name: str, type_: str, index: int | None, text: str) -> None:
    dev = Device(name)
    assert (dev.type, dev.index, str(dev)) == (type_, index, text)
    assert repr(dev) == f"device('{text}')"
    assert Device(text) is dev and Device(dev) is dev
    assert dev == text and dev != "cpu:9"
    assert pickle.loads(pickle.dumps(dev)) is dev
    assert hash(dev) == hash(Device(text))


def test_cuda_means_cuda_zero() -> None:
    assert Device("cuda") is Device("cuda:0")


def test_host_and_virtual_devices() -> None:
    assert Device("cpu").is_host
    assert not Device("cpu:0").is_host and not Device("cuda").is_host
    assert Device("cpu:0") is not Device("cpu")
    assert mta.device("cpu:1") is Device("cpu:1")


@pytest.mark.parametrize("bad", ["", "cpu:", "cuda:x", "cpu:-1", "cuda:0:1", "cpu 1", "gpu!"])
def test_bad_device_names(bad: str) -> None:
    with pytest.raises(ValueError, match="invalid device .*expected 'cpu', 'cpu:N', 'cuda'"):
        Device(bad)


def test_device_must_be_a_string() -> None:
    with pytest.raises(TypeError, match="a device is a string like 'cpu' or 'cuda:0', got 3"):
        Device(3)  # type: ignore[arg-type]


def test_unknown_backend_and_missing_virtual_device() -> None:
    with pytest.raises(ValueError, match="unknown backend 'tpu'; registered: .*'cpu'"):
        mta.zeros(1, device="tpu")
    with pytest.raises(RuntimeError, match="device cpu:64 does not exist"):
        mta.zeros(1, device="cpu:64")


# ------------------------------------------------------------------ virtual devices
def test_ops_stay_on_their_device() -> None:
    x = mta.randn(2, 3, device="cpu:1")
    y = (x * 2 + 1).sum(0).exp()
    assert y.device == Device("cpu:1")
    assert (x @ x.T).device == Device("cpu:1")
    assert x[0].device == Device("cpu:1")


@pytest.mark.parametrize(
    "src,dst,counter",
    [
        ("cpu", "cpu:1", "host_to_device"),
        ("cpu:1", "cpu", "device_to_host"),
        ("cpu:1", "cpu:2", "device_to_device"),
    ],
)
def test_moving_copies_and_counts_bytes(
    src: str, dst: str, counter: str, transfers: mta.backends.TransferStats
) -> None:
    x = mta.tensor(np.arange(6, dtype=np.float32), device=src)
    transfers.reset()
    y = x.to(dst)
    assert y.device == Device(dst) and y.tolist() == x.tolist()
    assert not np.shares_memory(x.array, y.array)
    y[0] = 100.0
    assert x.tolist()[0] == 0.0
    assert getattr(transfers, counter) == 24
    assert transfers.total == 24 and transfers.copies == 1
    assert transfers.as_dict()[counter] == 24


def test_no_copy_to_the_same_device(transfers: mta.backends.TransferStats) -> None:
    x = mta.ones(4, device="cpu:1")
    assert x.to("cpu:1") is x
    assert transfers.total == 0


def test_gradients_flow_back_through_to(transfers: mta.backends.TransferStats) -> None:
    x = mta.tensor([1.0, 2.0], requires_grad=True)
    y = x.to("cpu:1")
    assert y.requires_grad and y.grad_fn is not None
    z = (y * y).to("cpu:2").sum()
    z.backward()
    assert x.grad is not None and x.grad.device == Device("cpu")
    assert x.grad.tolist() == [2.0, 4.0]
    # forward: cpu -> cpu:1 (8 bytes), cpu:1 -> cpu:2 (8); backward: the way back
    assert transfers.host_to_device == 8
    assert transfers.device_to_device == 16
    assert transfers.device_to_host == 8


def test_to_under_no_grad_is_not_recorded() -> None:
    x = mta.ones(2, requires_grad=True)
    with mta.no_grad():
        y = x.to("cpu:1")
    assert not y.requires_grad and y.grad_fn is None


def test_per_device_random_streams_are_reproducible() -> None:
    mta.manual_seed(5)
    a0, a1 = mta.randn(4).tolist(), mta.randn(4, device="cpu:1").tolist()
    mta.manual_seed(5)
    b1, b0 = mta.randn(4, device="cpu:1").tolist(), mta.randn(4).tolist()
    assert (a0, a1) == (b0, b1)
    assert a0 != a1


# ------------------------------------------------------------------ missing CUDA
@pytest.fixture
def fresh_cuda(monkeypatch: pytest.MonkeyPatch) -> Device:
    """The ``cuda`` device with its backend forgotten, so the next use builds it again."""
    dev = Device("cuda")
    monkeypatch.delitem(registry._instances, "cuda", raising=False)
    monkeypatch.setattr(dev, "_backend", None)
    return dev


def fake_cupy(get_device_count: Any) -> types.ModuleType:
    module = types.ModuleType("cupy")
    runtime = types.SimpleNamespace(getDeviceCount=get_device_count)
    module.cuda = types.SimpleNamespace(runtime=runtime)  # type: ignore[attr-defined]
    return module


def test_cuda_without_cupy(monkeypatch: pytest.MonkeyPatch, fresh_cuda: Device) -> None:
    monkeypatch.setitem(sys.modules, "cupy", None)  # makes `import cupy` fail
    with pytest.raises(RuntimeError, match=r"needs CuPy, which is not installed.*pip install"):
        mta.zeros(2, device="cuda")
    with pytest.raises(RuntimeError, match="needs CuPy"):
        mta.ones(2).to("cuda:0")
    assert "cuda" not in mta.backends.available()


class CUDARuntimeError(Exception):
    pass


def test_cuda_without_a_driver(monkeypatch: pytest.MonkeyPatch, fresh_cuda: Device) -> None:
    def no_driver() -> int:
        raise CUDARuntimeError("cudaErrorInsufficientDriver: CUDA driver version is too old")

    monkeypatch.setitem(sys.modules, "cupy", fake_cupy(no_driver))
    with pytest.raises(
        RuntimeError,
        match=r"needs a working CUDA driver and GPU: CuPy is installed .*CUDARuntimeError",
    ):
        mta.zeros(2, device="cuda")


def test_cuda_without_a_gpu(monkeypatch: pytest.MonkeyPatch, fresh_cuda: Device) -> None:
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy(lambda: 0))
    with pytest.raises(RuntimeError, match="needs a CUDA GPU: CuPy is installed but found no"):
        mta.tensor([1.0], device="cuda:0")
    assert mta.backends.available() == ["cpu"]


def test_manual_seed_works_without_cuda(
    monkeypatch: pytest.MonkeyPatch, fresh_cuda: Device
) -> None:
    monkeypatch.setitem(sys.modules, "cupy", None)
    mta.manual_seed(1)
    first = mta.rand(3).tolist()
    mta.manual_seed(1)
    assert mta.rand(3).tolist() == first


# ------------------------------------------------------------------ real GPU
@pytest.mark.gpu
def test_round_trip_to_cuda(transfers: mta.backends.TransferStats) -> None:
    x = mta.tensor(np.arange(4, dtype=np.float32), requires_grad=True)
    y = x.to("cuda")
    assert y.device == Device("cuda:0") and type(y.array).__module__.startswith("cupy")
    (y * y).sum().backward()
    assert x.grad is not None and x.grad.device == Device("cpu")
    assert x.grad.tolist() == [0.0, 2.0, 4.0, 6.0]
    assert transfers.host_to_device == 16 and transfers.device_to_host == 16
    with pytest.raises(RuntimeError, match="cpu and cuda:0"):
        x + y
