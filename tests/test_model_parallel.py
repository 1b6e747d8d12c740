"""Model parallelism (split_model) and nn.DataParallel equal one device in float64."""

from __future__ import annotations

import copy
import threading
from typing import Any

import numpy as np
import pytest

import minitorch_accel as mta
from minitorch_accel import nn, optim
from minitorch_accel.backends import transfer_stats
from minitorch_accel.parallel import ModelParallel, split_model

ATOL = 1e-10


def deep_mlp(layers: int = 4, width: int = 6) -> nn.Sequential:
    """A float64 MLP of ``layers`` Linear layers with ReLUs between them."""
    mta.manual_seed(3)
    mods: list[nn.Module] = []
    for i in range(layers):
        mods.append(nn.Linear(5 if i == 0 else width, 3 if i == layers - 1 else width))
        if i < layers - 1:
            mods.append(nn.ReLU())
    return nn.Sequential(*mods).double()


def data(n: int = 9, seed: int = 0) -> tuple[mta.Tensor, mta.Tensor]:
    rng = np.random.default_rng(seed)
    return mta.tensor(rng.normal(size=(n, 5))), mta.tensor(rng.integers(0, 3, size=n))


def grads(model: nn.Module) -> list[np.ndarray]:
    return [p.grad.to("cpu").numpy() for p in model.parameters()]


def values(model: nn.Module) -> list[np.ndarray]:
    return [p.detach().to("cpu").numpy() for p in model.parameters()]


def assert_close(a: list[np.ndarray], b: list[np.ndarray]) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_allclose(x, y, rtol=0, atol=ATOL)


@pytest.mark.parametrize(
    "devices, boundaries",
    [
        (["cpu:1", "cpu:2"], None),
        (["cpu:1", "cpu:2"], [1]),  # uneven: one layer, then six
        (["cpu:1", "cpu:2", "cpu:3"], None),
        (["cpu:1", "cpu:2", "cpu:3"], [2, 3]),
        (["cpu:1", "cpu:2", "cpu:3", "cpu:4"], None),
        (["cpu:1", "cpu:2", "cpu:3", "cpu:4"], [1, 2, 6]),
        (["cpu:1", "cpu:1", "cpu:2"], [3, 5]),  # a device may repeat
    ],
)
@pytest.mark.parametrize("opt_name", ["sgd", "adam"])
def test_split_model_equals_one_device(
    devices: list[str], boundaries: list[int] | None, opt_name: str
) -> None:
    reference = deep_mlp()
    model = copy.deepcopy(reference)
    make: Any = (
        (lambda p: optim.SGD(p, lr=0.1, momentum=0.9))
        if opt_name == "sgd"
        else (lambda p: optim.Adam(p, lr=0.01))
    )
    ref_opt, opt = make(reference.parameters()), make(model.parameters())  # built before split
    split = split_model(model, devices, boundaries)
    assert len(split.stages) == len(devices)
    for stage, device in zip(split.stages, split.devices, strict=True):
        assert all(p.device is device for p in stage.parameters())
    for step in range(3):
        x, y = data(seed=step)
        ref_opt.zero_grad()
        opt.zero_grad()
        ref_out = reference(x)
        out = split(x)
        assert out.device is mta.Device(devices[-1])
        np.testing.assert_allclose(
            out.detach().to("cpu").numpy(), ref_out.detach().numpy(), atol=ATOL, rtol=0
        )
        nn.functional.cross_entropy(ref_out, y).backward()
        nn.functional.cross_entropy(out, y.to(split.output_device)).backward()
        assert_close(grads(split), grads(reference))
        ref_opt.step()
        opt.step()
        assert_close(values(split), values(reference))


def test_activation_copies_are_counted() -> None:
    split = split_model(deep_mlp(), ["cpu:1", "cpu:2", "cpu:3"], [2, 4])
    x = mta.randn(4, 5).double().to("cpu:1")
    transfer_stats.reset()
    out = split(x)
    forward = transfer_stats.as_dict()
    # two boundaries, each crossed by a (4, 6) float64 activation
    assert forward["device_to_device"] == 2 * 4 * 6 * 8
    out.sum().backward()
    assert transfer_stats.as_dict()["device_to_device"] == 2 * (2 * 4 * 6 * 8)


def test_state_dict_keys_and_parameters_are_the_models() -> None:
    model = deep_mlp(2)
    split = split_model(model, ["cpu:1", "cpu:2"])
    assert list(split.state_dict()) == ["module." + k for k in model.state_dict()]
    assert [id(p) for p in split.parameters()] == [id(p) for p in model.parameters()]


@pytest.mark.parametrize(
    "boundaries, message",
    [
        ([3], "must hold 2"),
        ([0, 3], "increase strictly"),
        ([4, 2], "increase strictly"),
        ([2, 7], "increase strictly"),
    ],
)
def test_bad_boundaries_are_refused(boundaries: list[int], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        split_model(deep_mlp(), ["cpu:1", "cpu:2", "cpu:3"], boundaries)


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="every device needs at least one layer"):
        split_model(deep_mlp(1), ["cpu:1", "cpu:2"])
    with pytest.raises(ValueError, match="list of devices"):
        split_model(deep_mlp(), "cpu:1")
    with pytest.raises(TypeError, match="Sequential-like"):
        ModelParallel(nn.Linear(2, 2), ["cpu:1"])


# ------------------------------------------------------------------ nn.DataParallel
@pytest.mark.parametrize(
    "devices",
    [["cpu:1", "cpu:2"], ["cpu:1", "cpu:2", "cpu:3"], ["cpu:1", "cpu:2", "cpu:3", "cpu:4"]],
)
@pytest.mark.parametrize("n", [12, 7, 2])
def test_data_parallel_equals_one_device(devices: list[str], n: int) -> None:
    reference = deep_mlp(3)
    model = copy.deepcopy(reference).to(devices[0])
    dp = nn.DataParallel(model, device_ids=devices)
    ref_opt = optim.SGD(reference.parameters(), lr=0.1, momentum=0.9)
    opt = optim.SGD(dp.parameters(), lr=0.1, momentum=0.9)
    for step in range(3):
        x, y = data(n, seed=step)
        ref_opt.zero_grad()
        opt.zero_grad()
        ref_loss = nn.functional.cross_entropy(reference(x), y)
        out = dp(x.to(devices[0]))
        assert out.shape == (n, 3) and out.device is mta.Device(devices[0])
        loss = nn.functional.cross_entropy(out, y.to(devices[0]))
        assert abs(loss.item() - ref_loss.item()) < ATOL
        ref_loss.backward()
        loss.backward()  # an ordinary backward: every replica's gradient, summed
        assert all(p.grad.device is mta.Device(devices[0]) for p in model.parameters())
        assert_close(grads(model), grads(reference))
        ref_opt.step()
        opt.step()
        assert_close(values(model), values(reference))


def test_data_parallel_output_device_tuple_outputs_and_no_grad() -> None:
    class Two(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = nn.Linear(5, 2).double()

        def forward(self, x: mta.Tensor) -> tuple[mta.Tensor, mta.Tensor]:
            h = self.lin(x)
            return h, h * 2

    mta.manual_seed(1)
    module = Two().to("cpu:1")
    dp = nn.DataParallel(module, ["cpu:1", "cpu:2"], output_device="cpu:3")
    x, _ = data(5)
    a, b = dp(x)
    assert a.device is mta.Device("cpu:3") and b.shape == (5, 2)
    np.testing.assert_allclose(
        b.detach().to("cpu").numpy(), 2 * module(x.to("cpu:1"))[0].detach().to("cpu").numpy()
    )
    with mta.no_grad():
        assert not dp(x)[0].requires_grad


def test_data_parallel_keeps_batchnorm_updates_of_device_0_only() -> None:
    mta.manual_seed(2)
    model = nn.Sequential(nn.Linear(5, 4), nn.BatchNorm1d(4)).double().to("cpu:1")
    reference = copy.deepcopy(model)
    dp = nn.DataParallel(model, ["cpu:1", "cpu:2"])
    x, _ = data(8)
    dp(x)
    reference(x[:4].to("cpu:1"))  # the replica on device_ids[0] normalized the first shard
    bn, ref_bn = model[1], reference[1]
    np.testing.assert_allclose(
        bn.running_mean.to("cpu").numpy(), ref_bn.running_mean.to("cpu").numpy(), atol=ATOL
    )


def test_data_parallel_failure_names_the_device_and_changes_nothing() -> None:
    class FailsOnDevice2(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bn = nn.BatchNorm1d(5).double()

        def forward(self, x: mta.Tensor) -> mta.Tensor:
            out = self.bn(x)
            if x.device is mta.Device("cpu:2"):
                raise ValueError("boom")
            return out

    module = FailsOnDevice2().to("cpu:1")
    before = [b.to("cpu").numpy().copy() for b in module.buffers()]
    dp = nn.DataParallel(module, ["cpu:1", "cpu:2"])
    with pytest.raises(RuntimeError, match=r"tower 1 on device cpu:2 failed during forward.*boom"):
        dp(data(6)[0])
    for b, value in zip(module.buffers(), before, strict=True):
        np.testing.assert_array_equal(b.to("cpu").numpy(), value)


def test_data_parallel_refuses_a_module_elsewhere() -> None:
    with pytest.raises(ValueError, match=r"device_ids\[0\] \(cpu:1\).*on cpu"):
        nn.DataParallel(nn.Linear(2, 2), ["cpu:1", "cpu:2"])


def test_nn_imports_nothing_from_parallel() -> None:
    """Layering: nn sits below parallel, so no file of nn imports it (nn.DataParallel is
    reached by importlib at first use)."""
    import ast
    from pathlib import Path

    from minitorch_accel.parallel.data_parallel import DataParallel

    assert nn.DataParallel is DataParallel
    for path in Path(nn.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""] + [a.name for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            assert not any("parallel" in n for n in names), (path, names)


def test_data_parallel_close_leaves_no_thread() -> None:
    before = set(threading.enumerate())
    dp = nn.DataParallel(nn.Linear(5, 2).to("cpu:1"), ["cpu:1", "cpu:5"])
    started = set(threading.enumerate()) - before
    assert sorted(t.name for t in started) == ["data-parallel-0-cpu:1", "data-parallel-1-cpu:5"]
    dp(mta.randn(4, 5))
    dp.close()
    assert not any(t.is_alive() for t in started)


def test_port_of_the_pytorch_data_parallel_tutorial(capsys: Any) -> None:
    """The structure of PyTorch's "Optional: Data Parallelism" tutorial, with ``torch``
    renamed and the devices ``cpu:1``, ``cpu:2``: each replica sees its share."""
    import minitorch_accel as torch

    nn_ = torch.nn
    input_size, output_size, batch_size, data_size = 5, 2, 30, 100
    device = torch.Device("cpu:1")

    class Model(nn_.Module):
        def __init__(self, input_size: int, output_size: int) -> None:
            super().__init__()
            self.fc = nn_.Linear(input_size, output_size)

        def forward(self, input: torch.Tensor) -> torch.Tensor:
            output = self.fc(input)
            print("\tIn Model: input size", tuple(input.shape), "output size", tuple(output.shape))
            return output

    model = Model(input_size, output_size)
    model = nn_.DataParallel(model.to(device), device_ids=["cpu:1", "cpu:2"])
    data = torch.randn(data_size, input_size)
    outside = []
    for start in range(0, data_size, batch_size):
        input = data[start : start + batch_size].to(device)
        output = model(input)
        outside.append((tuple(input.shape), tuple(output.shape)))
        print("Outside: input size", tuple(input.shape), "output_size", tuple(output.shape))
    assert outside == [((30, 5), (30, 2))] * 3 + [((10, 5), (10, 2))]
    inside = [line for line in capsys.readouterr().out.splitlines() if "In Model" in line]
    assert sorted(inside) == sorted(
        ["\tIn Model: input size (15, 5) output size (15, 2)"] * 6
        + ["\tIn Model: input size (5, 5) output size (5, 2)"] * 2
    )
