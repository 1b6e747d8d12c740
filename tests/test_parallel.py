"""TowerTrainer: N towers give the single-device result of the whole batch.

Everything runs in float64 on virtual CPU devices (``cpu:N``), so every multi-device
path is checked on any machine; the GPU variants at the end need CuPy and a GPU.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

import minitorch_accel as mta
from minitorch_accel import nn, optim
from minitorch_accel.backends import Device
from minitorch_accel.nn.models import LeNet
from minitorch_accel.parallel import (
    PHASES,
    DeviceReducer,
    FlatLayout,
    StepTimings,
    TowerTrainer,
    format_table,
    shard_sizes,
    weighted_sum,
)

F = nn.functional
ATOL = 1e-10

OptimizerFactory = Callable[[Any], Any]
OPTIMIZERS: dict[str, OptimizerFactory] = {
    "sgd": lambda params: optim.SGD(params, lr=0.1),
    "sgd-momentum": lambda params: optim.SGD(
        params, lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-3
    ),
    "adam": lambda params: optim.Adam(params, lr=0.01, weight_decay=1e-3),
}


def cuda_count() -> int:
    """How many GPUs the ``cuda`` backend sees (0 without CuPy or a GPU)."""
    if "cuda" not in mta.backends.available():
        return 0
    return mta.backends.get("cuda").device_count()


def needs_lenet() -> None:
    """Skip unless the ops LeNet is made of can be imported."""
    for name in ("conv", "pool"):
        pytest.importorskip(f"minitorch_accel.ops.{name}", reason=f"LeNet needs ops.{name}")


def mlp(batchnorm: bool = False) -> nn.Sequential:
    """A small float64 classifier; with a BatchNorm1d layer when asked."""
    mta.manual_seed(7)
    layers: list[nn.Module] = [nn.Linear(5, 8)]
    if batchnorm:
        layers.append(nn.BatchNorm1d(8))
    layers += [nn.ReLU(), nn.Linear(8, 3)]
    return nn.Sequential(*layers).double()


def batch(rng: np.random.Generator, n: int) -> tuple[mta.Tensor, mta.Tensor]:
    """``n`` float64 samples of 5 features and their labels in 0..2."""
    x = mta.tensor(rng.normal(size=(n, 5)), dtype="float64")
    return x, mta.tensor(rng.integers(0, 3, size=n))


def single_device_step(model: Any, opt: Any, x: mta.Tensor, y: mta.Tensor) -> float:
    """The reference: one ordinary step on the whole batch."""
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return float(loss.item())


def timings(trainer: TowerTrainer[Any]) -> StepTimings:
    """The trainer's latest step timings (there must have been a step)."""
    assert trainer.last_timings is not None
    return trainer.last_timings


def values(tensors: Sequence[mta.Tensor | None]) -> list[np.ndarray]:
    """Host copies of the arrays of ``tensors`` (which must not be None)."""
    assert all(t is not None for t in tensors)
    return [np.array(t.detach().numpy(), copy=True) for t in tensors if t is not None]


def grad_of(param: mta.Tensor) -> np.ndarray:
    """The gradient of ``param`` as a host array."""
    assert param.grad is not None
    return param.grad.numpy()


def assert_same_model(got: Any, want: Any, atol: float = ATOL) -> None:
    """Parameters and buffers of two models agree within ``atol``."""
    got_state, want_state = got.state_dict(), want.state_dict()
    assert list(got_state) == list(want_state)
    for name in got_state:
        np.testing.assert_allclose(
            got_state[name].numpy(), want_state[name].numpy(), rtol=0, atol=atol, err_msg=name
        )


def optimizer_state(opt: Any, params: Sequence[mta.Tensor]) -> list[dict[str, Any]]:
    """The optimizer's state per parameter, as host arrays (plain values kept)."""
    out = []
    for p in params:
        entries = opt.state.get(p, {})
        out.append(
            {
                k: v.numpy().copy() if isinstance(v, mta.Tensor) else copy.deepcopy(v)
                for k, v in entries.items()
            }
        )
    return out


def assert_same_state(got: list[dict[str, Any]], want: list[dict[str, Any]]) -> None:
    assert [sorted(g) for g in got] == [sorted(w) for w in want]
    for g, w in zip(got, want, strict=True):
        for key in g:
            np.testing.assert_allclose(np.asarray(g[key]), np.asarray(w[key]), rtol=0, atol=ATOL)


def make_trainer(
    devices: Sequence[str], reduce: str = "host", opt_name: str = "sgd", batchnorm: bool = False
) -> tuple[TowerTrainer[nn.Sequential], Any, Any]:
    """A trainer over a fresh model, and a reference copy of that model and optimizer."""
    model = mlp(batchnorm)
    reference = copy.deepcopy(model)
    trainer = TowerTrainer(
        model, F.cross_entropy, OPTIMIZERS[opt_name](model.parameters()), devices, reduce
    )
    return trainer, reference, OPTIMIZERS[opt_name](reference.parameters())


# ---------------------------------------------------------------- the split
def test_shard_sizes_are_as_even_as_possible() -> None:
    assert shard_sizes(10, 3) == [4, 3, 3]
    assert shard_sizes(8, 4) == [2, 2, 2, 2]
    assert shard_sizes(5, 1) == [5]
    assert shard_sizes(3, 3) == [1, 1, 1]


def test_batch_smaller_than_the_towers_is_refused(rng: np.random.Generator) -> None:
    trainer, _, _ = make_trainer(["cpu:0", "cpu:1", "cpu:2"])
    with pytest.raises(ValueError, match="batch of 2 sample.*3 towers"):
        trainer.step(*batch(rng, 2))


# ---------------------------------------------------------------- equal to one device
@pytest.mark.parametrize("n_towers", [1, 2, 3, 4])
def test_one_step_equals_a_single_device_step(rng: np.random.Generator, n_towers: int) -> None:
    trainer, reference, ref_opt = make_trainer([f"cpu:{i}" for i in range(n_towers)])
    x, y = batch(rng, 10)  # 10 over 3 towers = 4, 3, 3; over 4 = 3, 3, 2, 2
    loss = trainer.step(x, y)
    want = single_device_step(reference, ref_opt, x, y)
    assert loss == pytest.approx(want, abs=ATOL)
    assert_same_model(trainer.model, reference)
    assert [t.samples for t in timings(trainer).towers] == shard_sizes(10, n_towers)


def test_master_gradients_are_the_whole_batch_gradients(rng: np.random.Generator) -> None:
    trainer, reference, _ = make_trainer(["cpu:0", "cpu:1", "cpu:2"])
    x, y = batch(rng, 11)
    trainer.step(x, y)
    F.cross_entropy(reference(x), y).backward()
    for got, want in zip(trainer.model.parameters(), reference.parameters(), strict=True):
        np.testing.assert_allclose(grad_of(got), grad_of(want), rtol=0, atol=ATOL)


class WithUnusedLayer(nn.Module):
    """The small classifier plus a layer its forward never uses."""

    def __init__(self) -> None:
        super().__init__()
        self.body = mlp()
        self.unused = nn.Linear(2, 2).double()

    def forward(self, x: mta.Tensor) -> mta.Tensor:
        out: mta.Tensor = self.body(x)
        return out


def test_frozen_and_unused_parameters(rng: np.random.Generator) -> None:
    """A frozen parameter travels with the values but not the gradients; a parameter
    the loss never reaches keeps ``grad=None``, as on one device."""
    model = WithUnusedLayer()
    model.body[0].weight.requires_grad_(False)
    reference = copy.deepcopy(model)

    def sgd(m: nn.Module) -> optim.SGD:
        return optim.SGD([p for p in m.parameters() if p.requires_grad], lr=0.1, momentum=0.9)

    trainer = TowerTrainer(model, F.cross_entropy, sgd(model), ["cpu:0", "cpu:1"])
    ref_opt = sgd(reference)
    assert trainer.grad_layout.numel == trainer.state_layout.numel - 8 * 5
    for n in (5, 6):
        x, y = batch(rng, n)
        trainer.step(x, y)
        single_device_step(reference, ref_opt, x, y)
    assert_same_model(model, reference)
    assert model.body[0].weight.grad is None and model.unused.weight.grad is None


@pytest.mark.parametrize("devices", [["cpu:1", "cpu:1"], ["cpu", "cpu:2", "cpu"]])
def test_a_device_may_repeat(rng: np.random.Generator, devices: list[str]) -> None:
    trainer, reference, ref_opt = make_trainer(devices, batchnorm=True)
    for n in (7, 9):
        x, y = batch(rng, n)
        trainer.step(x, y)
        single_device_step(reference, ref_opt, x, y)
    # with batch norm the towers see per-shard statistics: compare with a second trainer
    # on distinct devices, which must agree exactly
    other, _, _ = make_trainer([f"cpu:{i + 3}" for i in range(len(devices))], batchnorm=True)
    rng2 = np.random.default_rng(1234)
    for n in (7, 9):
        other.step(*batch(rng2, n))
    assert_same_model(trainer.model, other.model, atol=0.0)


@pytest.mark.parametrize("opt_name", ["sgd-momentum", "adam"])
@pytest.mark.parametrize("reduce", ["host", "device"])
def test_several_steps_agree(rng: np.random.Generator, opt_name: str, reduce: str) -> None:
    trainer, reference, ref_opt = make_trainer(["cpu:0", "cpu:1", "cpu:2"], reduce, opt_name)
    for n in (10, 7, 9, 12):
        x, y = batch(rng, n)
        assert trainer.step(x, y) == pytest.approx(
            single_device_step(reference, ref_opt, x, y), abs=ATOL
        )
    trainer.sync_to_host()
    assert_same_model(trainer.model, reference)
    params = list(trainer.model.parameters())
    assert_same_state(
        optimizer_state(trainer.optimizer, params),
        optimizer_state(ref_opt, list(reference.parameters())),
    )


def test_towers_in_sequence_equal_towers_in_threads(rng: np.random.Generator) -> None:
    model = mlp()
    twin = copy.deepcopy(model)
    devices = ["cpu:0", "cpu:1", "cpu:2"]
    threaded = TowerTrainer(model, F.cross_entropy, optim.SGD(model.parameters(), lr=0.1), devices)
    serial = TowerTrainer(
        twin, F.cross_entropy, optim.SGD(twin.parameters(), lr=0.1), devices, concurrent=False
    )
    for n in (10, 5):
        x, y = batch(rng, n)
        assert threaded.step(x, y) == serial.step(x, y)
    assert_same_model(model, twin, atol=0.0)


def test_summed_loss_gets_unit_weights(rng: np.random.Generator) -> None:
    model = mlp()
    reference = copy.deepcopy(model)

    def summed(out: mta.Tensor, y: mta.Tensor) -> mta.Tensor:
        return F.cross_entropy(out, y, reduction="sum")

    trainer = TowerTrainer(
        model,
        summed,
        optim.SGD(model.parameters(), lr=0.01),
        ["cpu:0", "cpu:1"],
        loss_reduction="sum",
    )
    x, y = batch(rng, 9)
    loss = trainer.step(x, y)
    ref_opt = optim.SGD(reference.parameters(), lr=0.01)
    want = summed(reference(x), y)
    want.backward()
    ref_opt.step()
    assert loss == pytest.approx(want.item(), abs=ATOL)
    assert_same_model(model, reference)


def test_lenet_one_step_equals_a_single_device_step(rng: np.random.Generator) -> None:
    needs_lenet()
    mta.manual_seed(3)
    model = LeNet().double()
    reference = copy.deepcopy(model)
    trainer = TowerTrainer(
        model,
        F.cross_entropy,
        optim.SGD(model.parameters(), lr=0.1, momentum=0.9),
        ["cpu:0", "cpu:1", "cpu:2"],
    )
    x = mta.tensor(rng.random((7, 1, 28, 28)), dtype="float64")
    y = mta.tensor(rng.integers(0, 10, size=7))
    trainer.step(x, y)
    single_device_step(reference, optim.SGD(reference.parameters(), lr=0.1, momentum=0.9), x, y)
    assert_same_model(model, reference)


# ---------------------------------------------------------------- batch normalization
def test_batchnorm_towers_use_shard_statistics_and_average_buffers(
    rng: np.random.Generator,
) -> None:
    """Each tower normalizes with its own shard's statistics; the running statistics of
    the towers are averaged with the shard weights into the master."""
    trainer, reference, _ = make_trainer(["cpu:0", "cpu:1"], batchnorm=True)
    x, y = batch(rng, 7)  # shards of 4 and 3
    trainer.step(x, y)
    # Reference: the single-device model run on each shard separately.
    grads, buffers, weights = [], [], [4 / 7, 3 / 7]
    for start, stop in ((0, 4), (4, 7)):
        shard_model = copy.deepcopy(reference)
        F.cross_entropy(shard_model(x[start:stop]), y[start:stop]).backward()
        grads.append([grad_of(p) for p in shard_model.parameters()])
        buffers.append(dict(shard_model.named_buffers()))
    for i, (p0, p) in enumerate(
        zip(reference.parameters(), trainer.model.parameters(), strict=True)
    ):
        want_grad = weights[0] * grads[0][i] + weights[1] * grads[1][i]
        np.testing.assert_allclose(grad_of(p), want_grad, rtol=0, atol=ATOL)
        np.testing.assert_allclose(
            p.detach().numpy(), p0.detach().numpy() - 0.1 * want_grad, rtol=0, atol=ATOL
        )
    bn = trainer.model[1]
    for name in ("running_mean", "running_var"):
        want = sum(w * b[f"1.{name}"].numpy() for w, b in zip(weights, buffers, strict=True))
        np.testing.assert_allclose(getattr(bn, name).numpy(), want, rtol=0, atol=ATOL)
    assert bn.num_batches_tracked.dtype == np.int64
    assert int(bn.num_batches_tracked.item()) == 1
    # The running mean is exactly the whole batch's; the running variance is not (it
    # misses the spread between the shard means).
    whole = copy.deepcopy(reference)
    whole(x)
    np.testing.assert_allclose(bn.running_mean.numpy(), whole[1].running_mean.numpy(), atol=ATOL)
    assert np.abs(bn.running_var.numpy() - whole[1].running_var.numpy()).max() > 1e-4


def test_replicas_follow_train_and_eval(rng: np.random.Generator) -> None:
    trainer, reference, ref_opt = make_trainer(["cpu:0", "cpu:1"], batchnorm=True)
    trainer.model.eval()
    reference.eval()
    x, y = batch(rng, 8)
    trainer.step(x, y)  # eval mode: running statistics normalize, nothing is tracked
    single_device_step(reference, ref_opt, x, y)
    assert all(not r.training for r in trainer.replicas)
    assert_same_model(trainer.model, reference)
    assert int(trainer.model[1].num_batches_tracked.item()) == 0


# ---------------------------------------------------------------- failures
def fails_on(device: str) -> Callable[[mta.Tensor, mta.Tensor], mta.Tensor]:
    def loss_fn(out: mta.Tensor, y: mta.Tensor) -> mta.Tensor:
        if out.device == Device(device):
            raise ValueError(f"simulated failure on {out.device}")
        return F.cross_entropy(out, y)

    return loss_fn


@pytest.mark.parametrize("reduce", ["host", "device"])
def test_a_failing_tower_leaves_the_master_untouched(rng: np.random.Generator, reduce: str) -> None:
    trainer, reference, ref_opt = make_trainer(
        ["cpu:0", "cpu:1", "cpu:2"], reduce, "sgd-momentum", batchnorm=True
    )
    for n in (9, 10):
        x, y = batch(rng, n)
        trainer.step(x, y)
        single_device_step(reference, ref_opt, x, y)
    trainer.sync_to_host()
    params = list(trainer.model.parameters())
    before = values([*params, *trainer.model.buffers()])
    grads_before = values([p.grad for p in params]) if reduce == "host" else []
    state_before = optimizer_state(trainer.optimizer, params)

    trainer.loss_fn = fails_on("cpu:1")
    with pytest.raises(RuntimeError, match=r"tower 1 on device cpu:1 failed") as info:
        trainer.step(*batch(rng, 9))
    assert isinstance(info.value.__cause__, ValueError)
    assert "simulated failure" in str(info.value)

    trainer.sync_to_host()
    for got, want in zip(values([*params, *trainer.model.buffers()]), before, strict=True):
        np.testing.assert_array_equal(got, want)
    if reduce == "host":
        for got, want in zip(values([p.grad for p in params]), grads_before, strict=True):
            np.testing.assert_array_equal(got, want)
    assert_same_state(optimizer_state(trainer.optimizer, params), state_before)
    # and training goes on as if the failed step never happened
    trainer.loss_fn = F.cross_entropy
    other, _, _ = make_trainer(["cpu:3", "cpu:4", "cpu:5"], reduce, "sgd-momentum", True)
    rng2 = np.random.default_rng(1234)
    for n in (9, 10):
        other.step(*batch(rng2, n))
    x, y = batch(rng, 8)
    trainer.step(x, y)
    other.step(x, y)
    trainer.sync_to_host()
    other.sync_to_host()
    assert_same_model(trainer.model, other.model, atol=0.0)


@pytest.mark.parametrize("reduce", ["host", "device"])
def test_a_hung_tower_times_out_and_leaves_the_master_untouched(
    rng: np.random.Generator, reduce: str
) -> None:
    import threading

    trainer, _, _ = make_trainer(["cpu:0", "cpu:1"], reduce, "sgd-momentum", batchnorm=True)
    trainer.timeout = 0.5
    trainer.step(*batch(rng, 8))
    trainer.sync_to_host()
    params = list(trainer.model.parameters())
    before = values([*params, *trainer.model.buffers()])
    state_before = optimizer_state(trainer.optimizer, params)
    release = threading.Event()

    def hangs_on_cpu1(out: mta.Tensor, y: mta.Tensor) -> mta.Tensor:
        if out.device == Device("cpu:1"):
            release.wait(60)  # a device that never answers
        return F.cross_entropy(out, y)

    trainer.loss_fn = hangs_on_cpu1
    outcome: list[BaseException] = []

    def step() -> None:
        try:
            trainer.step(*batch(rng, 8))
        except BaseException as exc:
            outcome.append(exc)

    runner = threading.Thread(target=step, daemon=True)
    runner.start()
    runner.join(30)  # without a deadline the step blocked forever
    assert not runner.is_alive(), "TowerTrainer.step still blocked after 30 s"
    assert len(outcome) == 1 and isinstance(outcome[0], RuntimeError)
    assert "tower 1 on device cpu:1 did not finish forward/backward within 0.5 s" in str(outcome[0])
    with pytest.raises(RuntimeError, match="tower 1 on device cpu:1 still runs the step"):
        trainer.step(*batch(rng, 8))
    trainer.sync_to_host()
    for got, want in zip(values([*params, *trainer.model.buffers()]), before, strict=True):
        np.testing.assert_array_equal(got, want)
    assert_same_state(optimizer_state(trainer.optimizer, params), state_before)
    release.set()  # the tower comes back: its late results are dropped, training goes on
    trainer.loss_fn = F.cross_entropy
    trainer.step(*batch(rng, 8))
    trainer.close()


def test_timeout_needs_threads() -> None:
    model = mlp()
    with pytest.raises(ValueError, match="timeout must be a number of seconds > 0"):
        TowerTrainer(
            model,
            F.cross_entropy,
            optim.SGD(model.parameters(), lr=0.1),
            ["cpu:0"],
            concurrent=False,
            timeout=1.0,
        )


def test_a_loss_that_is_not_a_scalar_is_refused(rng: np.random.Generator) -> None:
    model = mlp()
    trainer = TowerTrainer(
        model, lambda out, y: out, optim.SGD(model.parameters(), lr=0.1), ["cpu:0", "cpu:1"]
    )
    with pytest.raises(RuntimeError, match="tower 0 on device cpu:0") as info:
        trainer.step(*batch(rng, 4))
    assert isinstance(info.value.__cause__, TypeError)
    assert "one-element Tensor" in str(info.value)


# ---------------------------------------------------------------- reduce="device"
def test_device_reduction_equals_host_reduction(rng: np.random.Generator) -> None:
    devices = ["cpu:0", "cpu:1", "cpu:2"]
    on_host, _, _ = make_trainer(devices, "host", "sgd-momentum", batchnorm=True)
    on_devices, _, _ = make_trainer(devices, "device", "sgd-momentum", batchnorm=True)
    assert on_devices._reducer is not None and on_devices._reducer.method == "copy"
    for step, n in enumerate((10, 7, 9)):
        x, y = batch(rng, n)
        for trainer in (on_host, on_devices):
            trainer.optimizer.param_groups[0]["lr"] = 0.05 / (step + 1)  # a schedule
        assert on_host.step(x, y) == on_devices.step(x, y)
    master = dict(on_devices.model.named_parameters())["0.weight"].detach().numpy().copy()
    state = on_devices.state_dict()  # syncs first
    assert not np.array_equal(master, state["0.weight"].numpy())
    assert_same_model(on_devices.model, on_host.model, atol=0.0)
    params = list(on_devices.model.parameters())
    assert_same_state(
        optimizer_state(on_devices.optimizer, params),
        optimizer_state(on_host.optimizer, list(on_host.model.parameters())),
    )
    assert all(
        state["momentum_buffer"].device.is_host for state in on_devices.optimizer.state.values()
    )


def test_load_state_dict_reaches_every_replica(rng: np.random.Generator) -> None:
    trainer, reference, ref_opt = make_trainer(["cpu:0", "cpu:1"], "device", "adam")
    fresh = mlp()
    for p in fresh.parameters():
        p.array *= 0.5
    trainer.load_state_dict(fresh.state_dict())
    reference.load_state_dict(fresh.state_dict())
    for replica in trainer.replicas:
        assert_same_model(replica, fresh, atol=0.0)
    x, y = batch(rng, 6)
    trainer.step(x, y)
    single_device_step(reference, ref_opt, x, y)
    trainer.sync_to_host()
    assert_same_model(trainer.model, reference)


def test_device_reducer_averages_with_weights() -> None:
    devices = [Device("cpu:0"), Device("cpu:1"), Device("cpu:0")]
    flats = [np.full(3, 1.0), np.full(3, 2.0), np.full(3, 4.0)]
    averaged, seconds = DeviceReducer(devices).all_reduce(flats, [0.5, 0.25, 0.25])
    for out in averaged:
        np.testing.assert_allclose(out, np.full(3, 2.0))
    assert averaged[0] is not averaged[2]  # one device, two towers: two private buffers
    assert sorted(seconds) == ["average", "broadcast", "gather"]


def test_nccl_is_chosen_only_for_distinct_gpus() -> None:
    reducer = DeviceReducer([Device("cpu:0"), Device("cpu:1")])
    assert reducer.method == "copy"
    assert "no all-reduce between devices" in (reducer.reason or "")
    with pytest.raises(RuntimeError, match="cannot all-reduce with NCCL: the 'cpu' backend has no"):
        DeviceReducer([Device("cpu:0"), Device("cpu:1")], use_nccl=True)


# ---------------------------------------------------------------- flat buffers and bytes
def test_flat_layout_round_trip() -> None:
    arrays = [np.arange(6.0).reshape(2, 3), np.array(7, dtype=np.int64), np.ones(2)]
    layout = FlatLayout([a.shape for a in arrays], [a.dtype for a in arrays], np.dtype("f8"))
    assert layout.numel == 9 and layout.nbytes == 72
    flat = layout.pack(arrays, np)
    out = layout.unpack(flat)
    assert out[0].base is flat  # a view, not a copy
    assert out[1].dtype == np.int64 and int(out[1]) == 7
    for got, want in zip(out, arrays, strict=True):
        np.testing.assert_array_equal(got, want)
    zeros = layout.pack([None, arrays[1], None], np)
    assert zeros.tolist() == [0.0] * 6 + [7.0, 0.0, 0.0]


def test_weighted_sum_is_an_average_not_a_sum() -> None:
    flats = [np.array([1.0, 2.0]), np.array([3.0, 6.0])]
    np.testing.assert_allclose(weighted_sum(flats, [0.75, 0.25]), [1.5, 3.0])


def test_bytes_moved_per_step_are_one_flat_buffer_per_device(
    rng: np.random.Generator, transfers: mta.backends.TransferStats
) -> None:
    trainer, _, _ = make_trainer(["cpu:0", "cpu:1", "cpu:2"], batchnorm=True)
    n_params = sum(p.numel() for p in trainer.model.parameters())
    n_buffers = sum(b.numel() for b in trainer.model.buffers())
    assert trainer.state_layout.nbytes == 8 * (n_params + n_buffers)
    transfers.reset()  # building the replicas moved bytes too
    x, y = batch(rng, 10)
    trainer.step(x, y)
    t = timings(trainer)
    batch_bytes = x.nbytes + y.nbytes
    assert t.host_to_device == 3 * trainer.state_layout.nbytes + batch_bytes
    assert t.device_to_host == 3 * trainer.grad_layout.nbytes
    assert t.device_to_device == 0
    assert transfers.copies == 3 + 3 * 2 + 3  # params, x and y shards, gradients


def test_bytes_moved_with_device_reduction(rng: np.random.Generator) -> None:
    trainer, _, _ = make_trainer(["cpu:0", "cpu:1", "cpu:2", "cpu:1"], "device")
    x, y = batch(rng, 8)
    trainer.step(x, y)
    t = timings(trainer)
    grads = trainer.grad_layout.nbytes
    assert t.host_to_device == x.nbytes + y.nbytes
    assert t.device_to_host == 0
    # cpu:1 and cpu:2 copy to tower 0 and receive the average back; tower 3 sits on
    # cpu:1, which is not tower 0's device either
    assert t.device_to_device == 2 * 3 * grads
    trainer.sync_to_host()
    assert mta.backends.transfer_stats.device_to_host >= trainer.state_layout.nbytes


# ---------------------------------------------------------------- timings
def test_timings_cover_every_phase(rng: np.random.Generator) -> None:
    trainer, _, _ = make_trainer(["cpu:0", "cpu:1"])
    for n in (6, 6):
        trainer.step(*batch(rng, n))
    t = timings(trainer)
    assert tuple(t.phases) == PHASES
    assert all(seconds >= 0.0 for seconds in t.phases.values())
    assert t.phases["forward"] > 0.0 and t.phases["backward"] > 0.0
    assert t.total >= t.phases["forward"] + t.phases["backward"]
    assert [tower.device for tower in t.towers] == ["cpu:0", "cpu:1"]
    summary = trainer.timings_summary()
    assert "cpu:0, cpu:1" in summary and "(2 step(s))" in summary
    for name in PHASES:
        assert name in summary
    trainer.reset_timings()
    assert "(0 step(s))" in trainer.timings_summary()


def test_format_table_pads_columns() -> None:
    assert format_table(["a", "bb"], [["100", "2"]]).splitlines() == [
        "a   | bb",
        "----+---",
        "100 | 2",
    ]


# ---------------------------------------------------------------- bad input
def test_bad_arguments_are_refused(rng: np.random.Generator) -> None:
    model = mlp()
    opt = optim.SGD(model.parameters(), lr=0.1)
    with pytest.raises(ValueError, match="reduce must be 'host' or 'device'"):
        TowerTrainer(model, F.cross_entropy, opt, ["cpu:0"], reduce="gpu")
    with pytest.raises(ValueError, match="devices must be a non-empty list"):
        TowerTrainer(model, F.cross_entropy, opt, [])
    with pytest.raises(ValueError, match="devices must be a non-empty list"):
        TowerTrainer(model, F.cross_entropy, opt, "cpu:0")
    with pytest.raises(ValueError, match="loss_reduction must be"):
        TowerTrainer(model, F.cross_entropy, opt, ["cpu:0"], loss_reduction="max")
    stranger = optim.SGD([*model.parameters(), mta.zeros(2, requires_grad=True)], lr=0.1)
    with pytest.raises(ValueError, match="not in the model"):
        TowerTrainer(model, F.cross_entropy, stranger, ["cpu:0"])
    trainer = TowerTrainer(model, F.cross_entropy, opt, ["cpu:0", "cpu:1"])
    x, y = batch(rng, 6)
    with pytest.raises(ValueError, match="inputs have 6 samples but targets 5"):
        trainer.step(x, y[:5])


def test_the_master_must_live_on_the_host() -> None:
    model = mlp().to("cpu:3")
    with pytest.raises(ValueError, match=r"0.weight is on cpu:3; move the model"):
        TowerTrainer(model, F.cross_entropy, optim.SGD(model.parameters(), lr=0.1), ["cpu:0"])


def test_mixed_dtypes_are_refused() -> None:
    model = mlp()
    model[2].float()
    with pytest.raises(ValueError, match="one flat buffer of one dtype.*float64.*float32"):
        TowerTrainer(model, F.cross_entropy, optim.SGD(model.parameters(), lr=0.1), ["cpu:0"])


def test_missing_gpu_is_named() -> None:
    if cuda_count() > 0:
        pytest.skip("this machine has a GPU")
    model = mlp()
    with pytest.raises(RuntimeError, match="cuda"):
        TowerTrainer(model, F.cross_entropy, optim.SGD(model.parameters(), lr=0.1), ["cuda:0"])


# ---------------------------------------------------------------- GPUs
def gpu_devices(kind: str) -> list[str]:
    count = cuda_count()
    if count == 0:
        pytest.skip("needs CuPy and a CUDA GPU")
    if kind == "repeated":
        return ["cuda:0", "cuda:0"]
    if count < 2:
        pytest.skip(f"needs two GPUs, this machine has {count}")
    return [f"cuda:{i}" for i in range(count)]


@pytest.mark.gpu
@pytest.mark.parametrize("kind", ["repeated", "every-gpu"])
@pytest.mark.parametrize("reduce", ["host", "device"])
def test_gpu_towers_equal_a_single_device_step(
    rng: np.random.Generator, kind: str, reduce: str
) -> None:
    devices = gpu_devices(kind)
    trainer, reference, ref_opt = make_trainer(devices, reduce, "sgd-momentum")
    for n in (9, 12):
        x, y = batch(rng, n)
        assert trainer.step(x, y) == pytest.approx(
            single_device_step(reference, ref_opt, x, y), abs=ATOL
        )
    trainer.sync_to_host()
    assert_same_model(trainer.model, reference)
    t = timings(trainer)
    if reduce == "host":
        assert t.device_to_host == len(devices) * trainer.grad_layout.nbytes
    for replica, device in zip(trainer.replicas, devices, strict=True):
        assert next(replica.parameters()).device is Device(device)


@pytest.mark.gpu
def test_gpu_failure_names_the_device(rng: np.random.Generator) -> None:
    devices = gpu_devices("repeated")
    trainer, _, _ = make_trainer(devices, "host", "sgd-momentum")
    trainer.step(*batch(rng, 6))
    params = list(trainer.model.parameters())
    before = values(params)

    def loss_fn(out: mta.Tensor, y: mta.Tensor) -> mta.Tensor:
        raise MemoryError("simulated out of memory")

    trainer.loss_fn = loss_fn
    with pytest.raises(RuntimeError, match="tower 0 on device cuda:0 failed.*out of memory"):
        trainer.step(*batch(rng, 6))
    for got, want in zip(values(params), before, strict=True):
        np.testing.assert_array_equal(got, want)


@pytest.mark.gpu
def test_nccl_all_reduce_path() -> None:
    """The NCCL call sequence (scale, grouped all-reduce, wait) on the GPUs present; with
    one GPU, a one-rank communicator (the sum of one buffer is that buffer)."""
    count = cuda_count()
    if count == 0:
        pytest.skip("needs CuPy and a CUDA GPU")
    from cupy.cuda import nccl

    if not nccl.available:
        pytest.skip("CuPy was built without NCCL")
    import cupy

    devices = [Device(f"cuda:{i}") for i in range(count)]
    reducer = DeviceReducer(devices)
    if count == 1:
        assert reducer.method == "copy" and "single tower" in (reducer.reason or "")
        communicator = devices[0].backend.device_communicator(devices)  # one rank
        reducer._communicator, reducer.method = communicator, communicator.name
    assert reducer.method == "nccl"
    weights = [1.0 / count] * count
    flats = []
    for i, device in enumerate(devices):
        with cupy.cuda.Device(device.index):
            flats.append(cupy.full(5, float(i + 1)))
    averaged, _ = reducer.all_reduce(flats, weights)
    for out in averaged:
        np.testing.assert_allclose(cupy.asnumpy(out), np.full(5, (count + 1) / 2))


@pytest.mark.slow
# ---------------------------------------------------------------- the example
def test_the_mnist_example_runs(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    needs_lenet()
    import importlib.util
    import pathlib
    import sys

    path = pathlib.Path(__file__).parents[1] / "examples" / "mnist_multi_gpu.py"
    spec = importlib.util.spec_from_file_location("mnist_multi_gpu", path)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    plot = tmp_path / "phases.png"
    argv = ["mnist_multi_gpu.py", "--devices", "cpu:0,cpu:1", "--batch-size", "8"]
    monkeypatch.setattr(sys, "argv", [*argv, "--steps", "1", "--plot", str(plot)])
    example.main()
    out = capsys.readouterr().out
    for text in (
        "cpu:0 alone",
        "2 towers, reduce=host",
        "2 towers, reduce=device",
        "speed-up",
        "efficiency",
        "broadcast",
    ):
        assert text in out
    if importlib.util.find_spec("matplotlib") is not None:
        assert plot.stat().st_size > 0
