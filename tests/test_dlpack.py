"""DLPack exchange with NumPy and PyTorch: zero-copy both ways, and clear errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import minitorch_accel as mta
from minitorch_accel.core.dlpack import (
    DLDeviceType,
    dlpack_device,
    export_capsule,
    from_dlpack,
    to_dlpack,
)
from minitorch_accel.core.tensor import Tensor


class Exporter:
    """What ``Tensor.__dlpack__`` / ``__dlpack_device__`` do, on any Tensor."""

    def __init__(self, tensor: Tensor) -> None:
        self.tensor = tensor

    def __dlpack__(self, **kwargs: Any) -> Any:
        return export_capsule(self.tensor, **kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return dlpack_device(self.tensor)


class ClaimsDevice:
    """An object whose DLPack device is whatever the test says."""

    def __init__(self, device: tuple[int, int]) -> None:
        self.device = device

    def __dlpack__(self, **kwargs: Any) -> Any:
        raise AssertionError("not reached")

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.device


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "uint8", "bool"])
def test_from_numpy_shares_memory(dtype: str) -> None:
    a = np.zeros((2, 3), dtype=dtype)
    t = from_dlpack(a)
    a[1, 2] = 1
    assert t.device == mta.Device("cpu") and t.dtype == np.dtype(dtype) and t.shape == (2, 3)
    assert t.tolist()[1][2] == 1 and not t.requires_grad


def test_from_a_strided_view() -> None:
    a = np.arange(12.0).reshape(3, 4)
    t = from_dlpack(a[:, ::2].T)
    a[2, 2] = -1
    assert t.tolist() == [[0.0, 4.0, 8.0], [2.0, 6.0, -1.0]]


def test_export_to_numpy_shares_memory() -> None:
    t = mta.tensor([1.0, 2.0, 3.0])
    view = np.from_dlpack(Exporter(t))
    view[0] = 10.0
    assert t.tolist() == [10.0, 2.0, 3.0]
    assert dlpack_device(t) == (DLDeviceType.CPU, 0)
    assert dlpack_device(t.to("cpu:2")) == (DLDeviceType.CPU, 0)  # host memory too
    assert "dltensor" in repr(to_dlpack(t))


def test_tensor_in_tensor_out() -> None:
    t = mta.ones(2)
    assert from_dlpack(t) is t


def test_export_refuses_tensors_that_require_grad() -> None:
    t = mta.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"requires grad through DLPack.*detach\(\)"):
        export_capsule(t)
    np.testing.assert_array_equal(np.from_dlpack(Exporter(t.detach())), [1.0, 1.0])


def test_errors() -> None:
    with pytest.raises(TypeError, match="expects an object with __dlpack__ .* got list"):
        from_dlpack([1.0, 2.0])
    with pytest.raises(BufferError, match="DLPack device type 4 is not supported"):
        from_dlpack(ClaimsDevice((4, 0)))
    with pytest.raises(TypeError, match="unsupported dtype complex128"):
        from_dlpack(np.zeros(2, dtype=complex))


@pytest.mark.skipif("cuda" in mta.backends.available(), reason="checks the no-GPU error")
def test_gpu_memory_without_a_gpu() -> None:
    with pytest.raises(RuntimeError, match="device 'cuda' needs"):
        from_dlpack(ClaimsDevice((DLDeviceType.CUDA, 0)))


def test_with_pytorch() -> None:
    torch = pytest.importorskip("torch")
    source = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    t = from_dlpack(source)
    source[0, 0] = 42.0
    assert t.dtype == np.float32 and t.tolist()[0] == [42.0, 1.0, 2.0]
    mine = mta.tensor([[1.0, 2.0]], dtype=mta.float64)
    theirs = torch.from_dlpack(Exporter(mine))
    theirs.mul_(3)
    assert theirs.dtype == torch.float64 and mine.tolist() == [[3.0, 6.0]]
    with pytest.raises((BufferError, RuntimeError), match="require"):
        from_dlpack(torch.ones(2, requires_grad=True))


def test_tensor_protocol_methods() -> None:
    t: Any = mta.tensor([1.0, 2.0])
    assert t.__dlpack_device__() == (DLDeviceType.CPU, 0)
    np.from_dlpack(t)[1] = 5.0
    assert t.tolist() == [1.0, 5.0]
