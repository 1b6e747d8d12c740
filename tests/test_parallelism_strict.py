"""Model, pipeline, tensor parallelism and DataParallel on the strict stand-in for several
GPUs: every kernel must run on its tensors' own device, as CUDA requires."""

from __future__ import annotations

import copy
from collections.abc import Iterator

import numpy as np
import pytest
from support.strict_backend import registered

import minitorch_accel as mta
from minitorch_accel import nn, optim
from minitorch_accel.nn import functional as F
from minitorch_accel.parallel import Pipeline, TensorParallelMLP, split_model

DEVICES = ["strict:1", "strict:2", "strict:3"]


@pytest.fixture(scope="module", autouse=True)
def strict_backend() -> Iterator[None]:
    with registered():
        yield


def host(t: mta.Tensor) -> np.ndarray:
    return t.detach().to("cpu").numpy()


def model() -> nn.Sequential:
    mta.manual_seed(5)
    return nn.Sequential(
        nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 3)
    ).double()


def batch(seed: int) -> tuple[mta.Tensor, mta.Tensor]:
    rng = np.random.default_rng(seed)
    return mta.tensor(rng.standard_normal((10, 6))), mta.tensor(rng.integers(0, 3, 10))


def reference_steps(steps: int) -> nn.Sequential:
    ref = model()
    opt = optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    for step in range(steps):
        x, y = batch(step)
        opt.zero_grad()
        F.cross_entropy(ref(x), y).backward()
        opt.step()
    return ref


def assert_same(a: nn.Module, b: nn.Module) -> None:
    for p, q in zip(a.parameters(), b.parameters(), strict=True):
        np.testing.assert_allclose(host(p), host(q), rtol=0, atol=1e-10)


def train(net: nn.Module, params: nn.Module, out_device: str, steps: int = 2) -> None:
    opt = optim.SGD(params.parameters(), lr=0.1, momentum=0.9)
    for step in range(steps):
        x, y = batch(step)
        opt.zero_grad()
        F.cross_entropy(net(x), y.to(out_device)).backward()
        opt.step()


def test_split_model_on_strict_devices() -> None:
    net = model()
    split = split_model(net, DEVICES, [2, 4])
    train(split, net, DEVICES[-1])
    assert_same(net, reference_steps(2))


def test_data_parallel_on_strict_devices() -> None:
    net = model().to(DEVICES[0])
    train(nn.DataParallel(net, DEVICES), net, DEVICES[0])
    assert_same(net, reference_steps(2))


@pytest.mark.parametrize("schedule", ["gpipe", "1f1b"])
def test_pipeline_on_strict_devices(schedule: str) -> None:
    net = model()
    stages = split_model(net, DEVICES, [2, 4]).stages
    opt = optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    with Pipeline(stages, DEVICES, 4, schedule, F.cross_entropy, optimizer=opt) as pipe:
        for step in range(2):
            pipe.step(*batch(step))
        out = pipe(batch(5)[0])
    ref = reference_steps(2)
    assert_same(net, ref)
    np.testing.assert_allclose(host(out), host(ref(batch(5)[0])), rtol=0, atol=1e-10)


def test_tensor_parallel_on_strict_devices() -> None:
    net = model()
    mlp = TensorParallelMLP.from_layers(net[0], net[2], DEVICES)  # type: ignore[arg-type]
    tp = nn.Sequential(mlp, nn.ReLU(), copy.deepcopy(net[4]).to(DEVICES[0]))
    train(tp, tp, DEVICES[0])
    ref = reference_steps(2)
    w1 = np.concatenate([host(s.weight) for s in mlp.fc1.shards])
    np.testing.assert_allclose(w1, host(ref[0].weight), rtol=0, atol=1e-10)
    np.testing.assert_allclose(host(tp[2].weight), host(ref[4].weight), rtol=0, atol=1e-10)
