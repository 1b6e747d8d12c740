"""Work on a second device runs on that device: training, optimizers, towers, on the
``strict`` stand-in (see ``support/strict_xp.py``, ``support/strict_devices.py``).

On a machine with several GPUs, CuPy launches every kernel on its *current* device.
Code that works on ``cuda:1`` tensors without entering ``cupy.cuda.Device(1)`` runs on
GPU 0 instead: it fails where the GPUs cannot reach each other's memory, and elsewhere
it quietly reads across the bus and leaves its results on GPU 0. The stand-in's arrays
refuse any op away from their device, so each test below fails at the first such call;
on a one-GPU machine (all these sessions had) the bug would be invisible.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from support.strict_backend import registered
from support.strict_devices import StrictDevice, current_device
from support.strict_xp import STRICT, StrictArray

import minitorch_accel as mta
from minitorch_accel import nn, optim
from minitorch_accel.amp import GradScaler, autocast
from minitorch_accel.data import DataLoader, TensorDataset
from minitorch_accel.nn import functional as F
from minitorch_accel.nn.models import LeNet
from minitorch_accel.optim import clip_grad_norm_, clip_grad_value_
from minitorch_accel.parallel import TowerTrainer

DEV = "strict:2"


@pytest.fixture(scope="module", autouse=True)
def strict_backend() -> Iterator[None]:
    """Register the ``strict`` backend for this module, and remove it afterwards."""
    with registered():
        yield


def host(t: mta.Tensor) -> np.ndarray:
    return t.detach().to("cpu").numpy()


def device_of(t: mta.Tensor) -> int:
    assert isinstance(t.array, StrictArray)
    return int(t.array._dev)


# ------------------------------------------------------------------ the double itself
def test_the_stand_in_refuses_work_away_from_an_arrays_device() -> None:
    with StrictDevice(1):
        a = STRICT.ones(3)
        assert current_device() == 1 and (a + 1)._dev == 1
    assert current_device() == 0
    with pytest.raises(ValueError, match=r"resides \(1\) is different from the current device"):
        a + 1
    with pytest.raises(ValueError, match="resides"):
        STRICT.sum(a)
    with pytest.raises(ValueError, match="resides"):
        a[0] = 2.0
    moved = a.copy()  # explicit copies cross devices, onto the current one
    assert moved._dev == 0 and a.get().tolist() == [1.0, 1.0, 1.0]
    assert a.T._dev == 1  # a view launches nothing


# ------------------------------------------------------------------ training on device 2
def train_lenet(
    device: str, make_opt: Callable[[Any], optim.Optimizer], steps: int = 2
) -> tuple[list[float], list[np.ndarray]]:
    mta.manual_seed(0)
    model = nn.Sequential(LeNet(), nn.Dropout(0.0)).to(device)
    opt = make_opt(model.parameters())
    rng = np.random.default_rng(0)
    x = mta.tensor(rng.random((6, 1, 28, 28)), dtype=mta.float32, device=device)
    y = mta.tensor([3, 1, -100, 7, 0, 9], device=device)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        for half in (slice(0, 3), slice(3, 6)):  # two backwards accumulate into .grad
            loss = F.cross_entropy(model(x[half]), y[half], ignore_index=-100)
            loss.backward()
        clip_grad_norm_(model.parameters(), max_norm=1.0)
        clip_grad_value_(model.parameters(), 0.5)
        opt.step()
        losses.append(loss.item())
    return losses, [host(p) for p in model.parameters()]


@pytest.mark.parametrize(
    "make_opt",
    [
        lambda p: optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-3),
        lambda p: optim.Adam(p, lr=1e-3, amsgrad=True),
        lambda p: optim.AdamW(p, lr=1e-3),
    ],
    ids=["sgd", "adam", "adamw"],
)
def test_lenet_trains_on_the_second_device_as_on_the_cpu(
    make_opt: Callable[[Any], optim.Optimizer],
) -> None:
    with mta.fast_paths(False):  # the stand-in has no fast paths: the CPU's reference code
        expected = train_lenet("cpu", make_opt)
    found = train_lenet(DEV, make_opt)
    np.testing.assert_allclose(found[0], expected[0], rtol=1e-5)
    for f, e in zip(found[1], expected[1], strict=True):
        np.testing.assert_allclose(f, e, rtol=1e-4, atol=1e-6)


def test_batchnorm_eval_and_state_dicts_on_the_second_device() -> None:
    mta.manual_seed(1)
    model = nn.Sequential(
        nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 3)
    )
    reference = copy.deepcopy(model)
    model.to(DEV)
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    ref_opt = optim.SGD(reference.parameters(), lr=0.1, momentum=0.9)
    x = mta.randn(5, 1, 8, 8)
    y = mta.tensor([0, 1, 2, 1, 0])
    for m, o, xx, yy in ((model, opt, x.to(DEV), y.to(DEV)), (reference, ref_opt, x, y)):
        F.cross_entropy(m(xx), yy).backward()
        o.step()
        m.eval()
    np.testing.assert_allclose(host(model(x.to(DEV))), host(reference(x)), rtol=1e-5, atol=1e-6)
    # a CPU state dict loads into the device model, and an optimizer state follows
    model.load_state_dict(reference.state_dict())
    opt.load_state_dict(ref_opt.state_dict())
    assert all(device_of(t) == 2 for t in model.state_dict().values())
    buf = opt.state[next(iter(model.parameters()))]["momentum_buffer"]
    assert device_of(buf) == 2


def test_autocast_and_grad_scaler_on_the_second_device() -> None:
    w = mta.tensor(
        np.linspace(-1, 1, 12).reshape(4, 3), dtype=mta.float32, device=DEV, requires_grad=True
    )
    x = mta.ones(2, 4, device=DEV)
    opt = optim.SGD([w], lr=0.1)
    scaler = GradScaler(init_scale=1024.0)
    with autocast():
        loss = (x @ w).float().sum()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    assert w.grad is not None and device_of(w.grad) == 2
    np.testing.assert_allclose(host(w), np.linspace(-1, 1, 12).reshape(4, 3) - 0.2, rtol=1e-3)


def test_tensor_work_outside_ops_runs_on_the_tensors_device() -> None:
    x = mta.arange(6, dtype=mta.float32, device=DEV).reshape(2, 3)
    x[0, 1] = 7.0
    x.add_(mta.ones(2, 3, device=DEV), alpha=2.0).mul_(0.5).clamp(0, 4)
    assert (x > 1).any() and not (x > 100).all()
    assert x.argmax().item() == 1 and x.logsumexp(1).shape == (2,)
    assert device_of(mta.where(x > 2, 1.0, 0.0)) == 2
    moved = x.to("strict:1")
    assert device_of(moved) == 1 and device_of(moved + 1) == 1
    np.testing.assert_array_equal(host(moved), host(x))


def test_data_loader_delivers_to_the_second_device() -> None:
    images = np.arange(40, dtype=np.float32).reshape(10, 4)
    loader = DataLoader(TensorDataset(images, np.arange(10)), batch_size=4, device=DEV)
    for xb, yb in loader:
        assert device_of(xb) == 2 and device_of(yb) == 2
        np.testing.assert_array_equal(host(xb * 1), images[host(yb)])


@pytest.mark.parametrize("reduce", ["host", "device"])
def test_towers_on_three_devices_match_one_model(reduce: str) -> None:
    mta.manual_seed(3)
    model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
    reference = copy.deepcopy(model)
    trainer = TowerTrainer(
        model,
        F.cross_entropy,
        optim.SGD(model.parameters(), lr=0.1),
        ["strict:1", "strict:2", "strict:3"],
        reduce,
    )
    ref_opt = optim.SGD(reference.parameters(), lr=0.1)
    rng = np.random.default_rng(0)
    for _ in range(2):
        x = mta.tensor(rng.standard_normal((9, 6)), dtype=mta.float32)
        y = mta.tensor(rng.integers(0, 3, 9))
        trainer.step(x, y)
        ref_opt.zero_grad()
        F.cross_entropy(reference(x), y).backward()
        ref_opt.step()
    trainer.sync_to_host()  # "device": the parameters live on the towers until then
    for p, q in zip(model.parameters(), reference.parameters(), strict=True):
        np.testing.assert_allclose(host(p), host(q), rtol=1e-5, atol=1e-6)


def test_fit_evaluate_and_resume_on_the_second_device(tmp_path: Any) -> None:
    from minitorch_accel.train import FitConfig, evaluate, fit

    rng = np.random.default_rng(4)
    data = TensorDataset(
        rng.standard_normal((24, 1, 8, 8)).astype(np.float32), rng.integers(0, 3, 24)
    )
    results = []
    for device in ("cpu", DEV):
        mta.manual_seed(5)
        model = nn.Sequential(
            nn.Conv2d(1, 2, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(18, 3)
        )
        opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        loader = DataLoader(data, batch_size=8, shuffle=True, seed=1)
        first = FitConfig(1, device, progress=False, checkpoint=tmp_path / f"{device}.ckpt")
        history = fit(model, loader, opt, nn.CrossEntropyLoss(), first, val_loader=loader)
        then = FitConfig(2, device, progress=False, resume=tmp_path / f"{device}.ckpt")
        history = fit(model, loader, opt, nn.CrossEntropyLoss(), then)
        scores = evaluate(model, loader, nn.CrossEntropyLoss(), device=device)
        last = history.last()
        results.append((last["train_loss"], last["val_loss"], scores["loss"], scores["accuracy"]))
    np.testing.assert_allclose(results[1], results[0], rtol=1e-5)
