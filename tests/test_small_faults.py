"""Small faults: each one a clear error (or a documented behaviour) where a raw
exception, a silent acceptance or a misleading message used to be."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import minitorch_accel as mta
from minitorch_accel import nn, optim
from minitorch_accel.datasets import MNIST, write_idx


# ------------------------------------------------------------ zero-sized layers
@pytest.mark.parametrize(
    "make, message",
    [
        (
            lambda: nn.Conv2d(1, 2, 0),
            r"every kernel size >= 1, got Conv2d\(1, 2, kernel_size=\(0, 0\)\)",
        ),
        (lambda: nn.Conv2d(1, 2, (3, 0)), r"kernel_size=\(3, 0\)"),
        (lambda: nn.Conv2d(0, 2, 3), r"in_channels must be >= 1"),
        (
            lambda: nn.Conv1d(1, 2, 0),
            r"every kernel size >= 1, got Conv1d\(1, 2, kernel_size=0\)",
        ),
        (lambda: nn.Linear(0, 3), r"Linear: in_features must be at least 1, got 0"),
    ],
)
def test_zero_sized_layers_are_a_value_error(make, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=message):  # was ZeroDivisionError
        make()


def test_a_layer_with_no_outputs_still_builds() -> None:
    assert nn.Linear(3, 0).weight.shape == (0, 3)  # as in PyTorch


# ------------------------------------------------------------ in place, other device
@pytest.mark.parametrize("op", ["add_", "mul_"])
def test_in_place_ops_refuse_another_device(op: str) -> None:
    a, b = mta.zeros(3), mta.ones(3).to("cpu:1")
    with pytest.raises(
        RuntimeError, match=f"{op}: expected all tensors on the same device, got cpu and cpu:1"
    ):
        getattr(a, op)(b)  # used to be accepted, unlike a + b
    np.testing.assert_array_equal(a.numpy(), np.zeros(3))


def test_copy_across_devices_copies_as_in_pytorch() -> None:
    a, b = mta.zeros(3), mta.tensor([1.0, 2.0, 3.0]).to("cpu:1")
    a.copy_(b)
    assert a.device == mta.Device("cpu")
    np.testing.assert_array_equal(a.numpy(), [1.0, 2.0, 3.0])


# ------------------------------------------------------------ optimizer state dicts
def trained(optimizer: type, **kwargs: float) -> tuple[nn.Module, optim.Optimizer]:
    mta.manual_seed(0)
    model = nn.Linear(2, 2)
    opt = optimizer(model.parameters(), lr=0.1, **kwargs)
    model(mta.ones(1, 2)).sum().backward()
    opt.step()
    return model, opt


def test_an_adam_state_dict_is_refused_by_sgd() -> None:
    _, adam = trained(optim.Adam)
    model, sgd = trained(optim.SGD, momentum=0.9)
    with pytest.raises(ValueError, match="saved by a Adam optimizer and cannot be loaded into SGD"):
        sgd.load_state_dict(adam.state_dict())  # used to load, then step() raised KeyError
    # A state dict without the optimizer's name (written by hand, or by an older version)
    # is told apart by its hyper-parameters.
    anonymous = {k: v for k, v in adam.state_dict().items() if k != "optimizer"}
    with pytest.raises(ValueError) as caught:  # noqa: PT011  (the message is checked below)
        sgd.load_state_dict(anonymous)
    message = str(caught.value)
    assert "saved by Adam (by its hyper-parameters), not by SGD" in message
    assert "'betas'" in message and "'momentum'" in message
    with pytest.raises(ValueError, match="saved by SGD .*, not by Adam"):
        adam.load_state_dict({k: v for k, v in sgd.state_dict().items() if k != "optimizer"})
    sgd.load_state_dict(sgd.state_dict())  # its own kind still loads


def test_a_state_dict_from_a_scheduler_run_still_loads() -> None:
    model, sgd = trained(optim.SGD, momentum=0.9)
    optim.lr_scheduler.StepLR(sgd, step_size=1)  # adds "initial_lr" to the groups
    _, other = trained(optim.SGD, momentum=0.9)
    other.load_state_dict(sgd.state_dict())
    assert other.param_groups[0]["initial_lr"] == sgd.param_groups[0]["initial_lr"]
    for a, b in zip(other.state.values(), sgd.state.values(), strict=True):
        np.testing.assert_array_equal(a["momentum_buffer"].numpy(), b["momentum_buffer"].numpy())
    other.step()  # the momentum buffers it loaded are used: no KeyError


# ------------------------------------------------------------ module state dicts
@pytest.mark.parametrize("value, shown", [("abc", "str 'abc'"), (None, "NoneType None")])
def test_a_value_that_is_not_numbers_is_named(value: object, shown: str) -> None:
    model = nn.Linear(2, 2)
    with pytest.raises(
        RuntimeError, match=f"weight: expected a tensor or an array of numbers, got {shown}"
    ):
        model.load_state_dict({"weight": value, "bias": np.zeros(2, np.float32)})


@pytest.mark.parametrize("dtype", [np.float64, np.int64])
def test_other_numeric_dtypes_are_cast_as_pytorch_does(dtype: type) -> None:
    values = (np.arange(4).reshape(2, 2) / 3).astype(dtype) + dtype(1) / 3
    model = nn.Linear(2, 2)
    model.load_state_dict({"weight": values, "bias": np.zeros(2, dtype)})
    assert model.weight.dtype == np.float32
    np.testing.assert_array_equal(model.weight.detach().numpy(), values.astype(np.float32))
    torch = pytest.importorskip("torch")
    reference = torch.nn.Linear(2, 2)
    reference.load_state_dict(
        {"weight": torch.from_numpy(values), "bias": torch.from_numpy(np.zeros(2, dtype))}
    )
    assert reference.weight.dtype == torch.float32
    np.testing.assert_array_equal(model.weight.detach().numpy(), reference.weight.detach().numpy())


# ------------------------------------------------------------ datasets
def test_int32_labels_are_named_with_their_dtype(tmp_path: Path) -> None:
    write_idx(tmp_path / "t10k-images-idx3-ubyte.gz", np.zeros((3, 28, 28), np.uint8))
    write_idx(tmp_path / "t10k-labels-idx1-ubyte.gz", np.zeros(3, np.int32))
    with pytest.raises(
        ValueError, match=r"expected uint8 labels of shape \(N,\), got int32 \(3,\)"
    ):
        MNIST(root=tmp_path, train=False, download=False)


def test_idx_dimensions_whose_product_wraps_int64_are_refused(tmp_path: Path) -> None:
    from minitorch_accel.datasets import read_idx

    path = tmp_path / "wraps"  # 2**16 ** 4 = 2**64: 0 in int64 arithmetic
    path.write_bytes(bytes([0, 0, 8, 4]) + np.array([2**16] * 4, ">u4").tobytes())
    with pytest.raises(
        ValueError,
        match=r"truncated: header says 65536x65536x65536x65536 uint8 = 18446744073709551616 b",
    ):
        read_idx(path)


# ------------------------------------------------------------ the bench command
def test_bench_command(capsys: pytest.CaptureFixture[str]) -> None:
    from minitorch_accel.__main__ import main

    assert main(["bench", "--batch-size", "2", "--steps", "2", "--warmup", "0"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("LeNet training step on cpu, batch 2: ") and "ms/step (median of 2" in out
    assert main(["bench", "--device", "tpu"]) == 2
    assert "--device tpu: unknown backend 'tpu'" in capsys.readouterr().err
    assert main(["bench", "--steps", "0"]) == 2
    assert "argument --steps: must be >= 1, got 0" in capsys.readouterr().err
