"""Tensor parallelism: Column/RowParallelLinear and the MLP block equal one device."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import minitorch_accel as mta
from minitorch_accel import nn, optim
from minitorch_accel.backends import transfer_stats
from minitorch_accel.parallel import ColumnParallelLinear, RowParallelLinear, TensorParallelMLP

ATOL = 1e-10


def devices(n: int) -> list[str]:
    return [f"cpu:{i + 1}" for i in range(n)]


def batch(n: int = 6, features: int = 5, seed: int = 0) -> mta.Tensor:
    return mta.tensor(np.random.default_rng(seed).normal(size=(n, features)))


def host(t: mta.Tensor) -> np.ndarray:
    return t.detach().to("cpu").numpy()


@pytest.mark.parametrize("n_dev", [2, 3, 4])
@pytest.mark.parametrize("out_features", [8, 7])  # 7: uneven shards
def test_column_parallel_equals_linear(n_dev: int, out_features: int) -> None:
    mta.manual_seed(0)
    reference = nn.Linear(5, out_features).double()
    layer = ColumnParallelLinear.from_linear(reference, devices(n_dev))
    x = batch()
    x_ref, x_tp = x.clone().requires_grad_(), x.clone().requires_grad_()
    out = layer(x_tp)
    np.testing.assert_allclose(host(out), host(reference(x_ref)), atol=ATOL, rtol=0)
    (reference(x_ref) ** 2).sum().backward()
    (out**2).sum().backward()
    np.testing.assert_allclose(host(x_tp.grad), host(x_ref.grad), atol=ATOL, rtol=0)
    w = np.concatenate([host(s.weight.grad) for s in layer.shards])
    b = np.concatenate([host(s.bias.grad) for s in layer.shards])
    np.testing.assert_allclose(w, host(reference.weight.grad), atol=ATOL, rtol=0)
    np.testing.assert_allclose(b, host(reference.bias.grad), atol=ATOL, rtol=0)
    assert [s.weight.device for s in layer.shards] == [mta.Device(d) for d in devices(n_dev)]


@pytest.mark.parametrize("n_dev", [2, 3, 4])
@pytest.mark.parametrize("in_features", [8, 5])
def test_row_parallel_equals_linear(n_dev: int, in_features: int) -> None:
    mta.manual_seed(0)
    reference = nn.Linear(in_features, 3).double()
    layer = RowParallelLinear.from_linear(reference, devices(n_dev))
    x = batch(features=in_features)
    x_ref, x_tp = x.clone().requires_grad_(), x.clone().requires_grad_()
    out = layer(x_tp)
    np.testing.assert_allclose(host(out), host(reference(x_ref)), atol=ATOL, rtol=0)
    (reference(x_ref) ** 2).sum().backward()
    (out**2).sum().backward()
    np.testing.assert_allclose(host(x_tp.grad), host(x_ref.grad), atol=ATOL, rtol=0)
    w = np.concatenate([host(s.weight.grad) for s in layer.shards], axis=1)
    np.testing.assert_allclose(w, host(reference.weight.grad), atol=ATOL, rtol=0)
    np.testing.assert_allclose(host(layer.bias.grad), host(reference.bias.grad), atol=ATOL, rtol=0)


def test_constructors_draw_the_weights_nn_linear_draws() -> None:
    mta.manual_seed(4)
    reference = nn.Sequential(nn.Linear(5, 12), nn.ReLU(), nn.Linear(12, 3))
    mta.manual_seed(4)
    mlp = TensorParallelMLP(5, 12, 3, devices(3))
    x = batch().float()
    np.testing.assert_allclose(host(mlp(x)), host(reference(x)), atol=1e-6, rtol=0)


@pytest.mark.parametrize("n_dev", [2, 4])
def test_mlp_block_training_equals_one_device(n_dev: int) -> None:
    mta.manual_seed(1)
    reference = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 3)).double()
    mlp = TensorParallelMLP.from_layers(reference[0], reference[2], devices(n_dev))  # type: ignore[arg-type]
    ref_opt = optim.SGD(reference.parameters(), lr=0.1, momentum=0.9)
    opt = optim.SGD(mlp.parameters(), lr=0.1, momentum=0.9)
    y = mta.tensor(np.random.default_rng(3).integers(0, 3, size=6))
    for step in range(3):
        x = batch(seed=step)
        ref_opt.zero_grad()
        opt.zero_grad()
        ref_loss = nn.functional.cross_entropy(reference(x), y)
        ref_loss.backward()
        ref_opt.step()
        transfer_stats.reset()
        loss = nn.functional.cross_entropy(mlp(x.to(devices(n_dev)[0])), y.to(devices(n_dev)[0]))
        loss.backward()
        moved = transfer_stats.as_dict()["device_to_device"]
        opt.step()
        assert abs(loss.item() - ref_loss.item()) < ATOL
        # forward: the input to n-1 devices, their partial sums back; backward: the output
        # gradient to them (the input needs no gradient here); the hidden layer stays put
        assert moved == (n_dev - 1) * 6 * (5 + 3 + 3) * 8
    w1 = np.concatenate([host(s.weight) for s in mlp.fc1.shards])
    w2 = np.concatenate([host(s.weight) for s in mlp.fc2.shards], axis=1)
    np.testing.assert_allclose(w1, host(reference[0].weight), atol=ATOL, rtol=0)
    np.testing.assert_allclose(w2, host(reference[2].weight), atol=ATOL, rtol=0)
    np.testing.assert_allclose(host(mlp.fc2.bias), host(reference[2].bias), atol=ATOL, rtol=0)


def test_gather_output_false_returns_slices_and_row_checks_them() -> None:
    layer = ColumnParallelLinear(5, 6, devices(2), gather_output=False)
    parts = layer(batch().float())
    assert isinstance(parts, list) and [p.device for p in parts] == [
        mta.Device("cpu:1"),
        mta.Device("cpu:2"),
    ]
    row = RowParallelLinear(6, 2, devices(3), input_is_parallel=True)
    with pytest.raises(ValueError, match="list of 3 per-device tensors"):
        row(parts)
    with pytest.raises(ValueError, match="3 output features cannot be split over 4 devices"):
        ColumnParallelLinear(5, 3, devices(4))


def test_copy_of_a_model_holds_separate_shards() -> None:
    mlp = TensorParallelMLP(4, 8, 2, devices(2))
    clone = copy.deepcopy(mlp)
    assert clone.fc1.shards[1].weight is not mlp.fc1.shards[1].weight
    assert clone.fc1.shards[1].weight.device is mta.Device("cpu:2")
