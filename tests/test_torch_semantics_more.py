"""Five places where minitorch_accel once differed silently from PyTorch.

1. Signed zeros: ``relu(-0.0)``, ``clamp(-0.0, min=0)``, ``hardtanh``, ``relu6`` and
   ``erf(-0.0)`` keep ``-0.0``; ``cumsum`` starts from ``+0.0``. Both tiers (the reference
   ops and the NumPy fast paths) give the same bits, gradients at zero are PyTorch's.
2. ``SequentialLR`` holding a ``ChainedScheduler`` (and the other way round) follows
   PyTorch's learning-rate trajectory.
3. MNIST / FashionMNIST have torchvision's ``data``, ``targets``, ``class_to_idx``.
4. ``DataLoader(shuffle=True)`` draws each epoch's seed from the global generator.
5. Writing into an ``expand()`` result raises PyTorch's RuntimeError.

Each is checked against PyTorch where it is installed and against a reference written
here (plain Python or NumPy) or a property that can fail.
"""

from __future__ import annotations

import gzip
import importlib.resources
import math
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import minitorch_accel as mta
from minitorch_accel.backends.numpy import fast_nn
from minitorch_accel.data import DataLoader, TensorDataset
from minitorch_accel.datasets import MNIST, FashionMNIST
from minitorch_accel.optim import SGD
from minitorch_accel.optim import lr_scheduler as S

F = mta.nn.functional
SPECIAL = [-math.inf, -2.0, -0.0, 0.0, 0.5, 2.0, math.inf, math.nan]
FLOATS = ["float32", "float64"]


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal shapes, NaN at the same places, and elsewhere equal values of equal sign
    (so ``-0.0`` and ``0.0`` differ).
    """
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or not np.array_equal(np.isnan(a), np.isnan(b)):
        return False
    real = ~np.isnan(a)
    return bool(
        np.array_equal(a[real], b[real])
        and np.array_equal(np.signbit(a[real]), np.signbit(b[real]))
    )


# --------------------------------------------------------------------------- 1. signed zeros
# name -> (minitorch_accel function, the same function of torch's namespace or None)
def _inplace_relu(x: Any) -> Any:
    y = x.clone()
    out = y.relu_()
    assert out is y
    return y


def _relu_module_inplace(x: Any) -> Any:
    y = x.clone()
    out = mta.nn.ReLU(inplace=True)(y)
    assert out is y
    return y


KEEPS_SIGN: dict[str, Callable[[Any], Any]] = {
    "relu": lambda x: x.relu(),
    "F.relu": lambda x: F.relu(x),
    "nn.ReLU": lambda x: mta.nn.ReLU()(x),
    "relu_": _inplace_relu,
    "nn.ReLU(inplace)": _relu_module_inplace,
    "clamp(min=0)": lambda x: x.clamp(min=0.0),
    "clamp(max=0)": lambda x: x.clamp(max=0.0),
    "clamp(min=-0.0)": lambda x: x.clamp(min=-0.0),
    "clamp(max=-0.0)": lambda x: x.clamp(max=-0.0),
    "clamp(0, 0)": lambda x: x.clamp(0.0, 0.0),
    "clamp(min=nan)": lambda x: x.clamp(min=math.nan),
    "clamp(max=nan)": lambda x: x.clamp(max=math.nan),
    "clamp(1, -1)": lambda x: x.clamp(1.0, -1.0),
    "clamp_min": lambda x: x.clamp_min(0.0),
    "clamp_max": lambda x: x.clamp_max(0.0),
    "clamp_": lambda x: x.clone().clamp_(min=0.0),
    "hardtanh(0, 1)": lambda x: F.hardtanh(x, 0.0, 1.0),
    "hardtanh(-1, 0)": lambda x: F.hardtanh(x, -1.0, 0.0),
    "hardtanh": lambda x: F.hardtanh(x),
    "relu6": lambda x: F.relu6(x),
    "threshold(0, 5)": lambda x: F.threshold(x, 0.0, 5.0),
    "threshold(-1, 5)": lambda x: F.threshold(x, -1.0, 5.0),
    "erf": lambda x: x.erf(),
    "leaky_relu": lambda x: F.leaky_relu(x),
    "elu": lambda x: F.elu(x),
    "gelu": lambda x: F.gelu(x),
    "hardswish": lambda x: F.hardswish(x),
}


def _run(lib: Any, name: str, values: list[float], dtype: str) -> np.ndarray:
    if lib is mta:
        fn = KEEPS_SIGN[name]
        return fn(mta.tensor(values, dtype=dtype)).numpy()  # type: ignore[no-any-return]
    torch = lib
    tnf = torch.nn.functional
    torch_fns: dict[str, Callable[[Any], Any]] = {
        "relu": lambda x: x.relu(),
        "F.relu": lambda x: tnf.relu(x),
        "nn.ReLU": lambda x: torch.nn.ReLU()(x),
        "relu_": lambda x: x.clone().relu_(),
        "nn.ReLU(inplace)": lambda x: torch.nn.ReLU(inplace=True)(x.clone()),
        "clamp(min=0)": lambda x: x.clamp(min=0.0),
        "clamp(max=0)": lambda x: x.clamp(max=0.0),
        "clamp(min=-0.0)": lambda x: x.clamp(min=-0.0),
        "clamp(max=-0.0)": lambda x: x.clamp(max=-0.0),
        "clamp(0, 0)": lambda x: x.clamp(0.0, 0.0),
        "clamp(min=nan)": lambda x: x.clamp(min=math.nan),
        "clamp(max=nan)": lambda x: x.clamp(max=math.nan),
        "clamp(1, -1)": lambda x: x.clamp(1.0, -1.0),
        "clamp_min": lambda x: x.clamp_min(0.0),
        "clamp_max": lambda x: x.clamp_max(0.0),
        "clamp_": lambda x: x.clone().clamp_(min=0.0),
        "hardtanh(0, 1)": lambda x: tnf.hardtanh(x, 0.0, 1.0),
        "hardtanh(-1, 0)": lambda x: tnf.hardtanh(x, -1.0, 0.0),
        "hardtanh": lambda x: tnf.hardtanh(x),
        "relu6": lambda x: tnf.relu6(x),
        "threshold(0, 5)": lambda x: tnf.threshold(x, 0.0, 5.0),
        "threshold(-1, 5)": lambda x: tnf.threshold(x, -1.0, 5.0),
        "erf": lambda x: x.erf(),
        "leaky_relu": lambda x: tnf.leaky_relu(x),
        "elu": lambda x: tnf.elu(x),
        "gelu": lambda x: tnf.gelu(x),
        "hardswish": lambda x: tnf.hardswish(x),
    }
    return torch_fns[name](torch.tensor(values, dtype=getattr(torch, dtype))).numpy()  # type: ignore[no-any-return]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", sorted(KEEPS_SIGN))
def test_signed_zeros_and_specials_match_pytorch(name: str, dtype: str) -> None:
    torch = pytest.importorskip("torch")
    mine = _run(mta, name, SPECIAL, dtype)
    theirs = _run(torch, name, SPECIAL, dtype)
    zeros = [2, 3]  # -0.0 and 0.0: the bits must agree
    assert same_bits(mine[zeros], theirs[zeros]), (mine, theirs)
    compared = slice(None) if name != "gelu" else slice(1, -2)  # PyTorch: gelu(inf) is NaN
    np.testing.assert_allclose(mine[compared], theirs[compared], rtol=1e-6, atol=0, equal_nan=True)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("fast", [True, False])
def test_relu_and_clamp_keep_negative_zero_against_a_numpy_rule(dtype: str, fast: bool) -> None:
    """PyTorch's rule written here: ``low`` where ``x < low``, else ``x`` itself."""
    x = np.array(SPECIAL, dtype=dtype)
    expected = np.array([0.0 if v < 0 else v for v in x.tolist()], dtype=dtype)
    with mta.fast_paths(fast):
        got = mta.tensor(x).relu().numpy()
        clamped = mta.tensor(x).clamp(0.0, 1.0).numpy()
    assert same_bits(got, expected)
    assert np.signbit(got[2]) and not np.signbit(got[3])
    low_high = np.array([0.0 if v < 0 else (1.0 if v > 1 else v) for v in x.tolist()], dtype=dtype)
    assert same_bits(clamped, low_high)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize(
    "shape, layout",
    [
        ((7,), "c"),
        ((3, 5, 9), "c"),
        ((fast_nn.RELU_BLOCK + 37,), "c"),
        ((4, 6, 8, 8), "nhwc"),
        ((40, 50), "t"),
        ((2, 3, 4), "gap"),
    ],
)
def test_relu_fast_path_gives_the_reference_bits(
    dtype: str, shape: tuple[int, ...], layout: str
) -> None:
    """Every branch of the fast forward (one block, blocks, channels-last, transposed,
    memory with gaps) against the reference, with -0.0, 0.0, NaN and infinities mixed in.
    """
    rng = np.random.default_rng(0)
    base = rng.standard_normal(int(np.prod(shape)) * (2 if layout == "gap" else 1)).astype(dtype)
    base[::3] = -0.0
    base[1::7] = 0.0
    base[2::11] = np.nan
    base[5::13] = -np.inf
    if layout == "gap":
        array = base.reshape(*shape[:-1], shape[-1] * 2)[..., ::2]
    elif layout == "nhwc":
        n, c, h, w = shape
        array = base.reshape(n, h, w, c).transpose(0, 3, 1, 2)
    elif layout == "t":
        array = base.reshape(shape[::-1]).T
    else:
        array = base.reshape(shape)
    x = mta.from_numpy(array)
    with mta.fast_paths(True):
        fast = x.relu().numpy()
    with mta.fast_paths(False):
        reference = x.relu().numpy()
    numpy_rule = np.where(array < 0, array.dtype.type(0), array)
    assert same_bits(fast, reference)
    assert same_bits(reference, numpy_rule)


def test_zeros_first_keeps_negative_zero_for_each_dtype() -> None:
    for dtype in (np.float16, np.float32, np.float64):
        first = fast_nn.zeros_first(dtype)
        if first is None:
            continue  # relu_forward runs the reference for this dtype
        x = np.full(1000, -0.0, dtype)
        zeros = np.zeros(1000, dtype)
        out = np.maximum(zeros, x) if first else np.maximum(x, zeros)
        assert np.signbit(out).all()


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", ["cumsum", "cumprod", "logcumsumexp"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_running_ops_start_as_pytorch(op: str, dim: int, dtype: str) -> None:
    torch = pytest.importorskip("torch")
    values = np.array(
        [[-0.0, -0.0, 1.0, -1.0], [0.0, -0.0, -0.0, 2.0], [-0.0, math.inf, -math.inf, -0.0]],
        dtype=dtype,
    )
    mine = getattr(mta.tensor(values), op)(dim).numpy()
    theirs = getattr(torch.tensor(values), op)(dim).numpy()
    zeros = theirs == 0
    assert np.array_equal(np.signbit(mine[zeros]), np.signbit(theirs[zeros])), (mine, theirs)
    rtol = 1e-6 if dtype == "float32" else 1e-14  # logcumsumexp rounds in another order
    np.testing.assert_allclose(mine, theirs, rtol=rtol, atol=0)


@pytest.mark.parametrize("dtype", FLOATS)
def test_cumsum_is_a_running_sum_from_positive_zero(dtype: str) -> None:
    """The reference: Python's running sum started from 0.0, element by element."""
    rows = [[-0.0], [-0.0, -0.0, 3.0], [1.0, -1.0, -0.0], [-0.0, math.nan, 1.0]]
    for row in rows:
        total, expected = 0.0, []
        for v in row:
            total += v
            expected.append(total)
        got = mta.tensor(row, dtype=dtype).cumsum(0).numpy()
        assert same_bits(got, np.array(expected, dtype=dtype)), (row, got)


def test_erf_keeps_the_sign_of_zero_as_math_erf() -> None:
    got = mta.tensor([-0.0, 0.0, -0.3, 0.3], dtype="float64").erf().numpy()
    expected = np.array([math.erf(v) for v in (-0.0, 0.0, -0.3, 0.3)])
    assert same_bits(got[:2], expected[:2])
    np.testing.assert_allclose(got, expected, rtol=1e-14, atol=0)


GRAD_OPS = [
    "relu",
    "clamp(min=0)",
    "clamp(max=0)",
    "clamp(0, 0)",
    "hardtanh(0, 1)",
    "relu6",
    "threshold(0, 5)",
]


@pytest.mark.parametrize("incoming", [1.0, math.inf])
@pytest.mark.parametrize("name", GRAD_OPS)
def test_gradients_at_signed_zeros_match_pytorch(name: str, incoming: float) -> None:
    torch = pytest.importorskip("torch")
    x = mta.tensor(SPECIAL, dtype="float64", requires_grad=True)
    KEEPS_SIGN[name](x).backward(mta.full((len(SPECIAL),), incoming, dtype="float64"))
    t = torch.tensor(SPECIAL, dtype=torch.float64, requires_grad=True)
    t_fns = {"relu": lambda v: v.relu(), "clamp(min=0)": lambda v: v.clamp(min=0.0),
             "clamp(max=0)": lambda v: v.clamp(max=0.0), "clamp(0, 0)": lambda v: v.clamp(0.0, 0.0),
             "hardtanh(0, 1)": lambda v: torch.nn.functional.hardtanh(v, 0.0, 1.0),
             "relu6": lambda v: torch.nn.functional.relu6(v),
             "threshold(0, 5)": lambda v: torch.nn.functional.threshold(v, 0.0, 5.0)}  # fmt: skip
    t_fns[name](t).backward(torch.full((len(SPECIAL),), incoming, dtype=torch.float64))
    assert x.grad is not None and t.grad is not None
    compared = slice(None)
    if name in ("hardtanh(0, 1)", "relu6"):
        # PyTorch's hardtanh gradient at NaN depends on the tensor's size (its vector
        # loop gives 0, its scalar loop the gradient); ours passes it, as the scalar loop
        compared = slice(0, -1)
    assert same_bits(x.grad.numpy()[compared], t.grad.numpy()[compared]), (x.grad, t.grad)


def test_relu_and_clamp_gradients_at_zero_against_the_rules() -> None:
    """relu's gradient is 0 at both zeros; clamp's is 1 at its bound (inside ``[lo, hi]``)."""
    x = mta.tensor([-0.0, 0.0, 1.0], dtype="float64", requires_grad=True)
    x.relu().sum().backward()
    assert x.grad is not None and x.grad.tolist() == [0.0, 0.0, 1.0]
    y = mta.tensor([-0.0, 0.0, -1.0], dtype="float64", requires_grad=True)
    y.clamp(min=0.0).sum().backward()
    assert y.grad is not None and y.grad.tolist() == [1.0, 1.0, 0.0]


# --------------------------------------------------------------------------- 2. schedulers
def _trajectory(lib: str, build: Callable[[Any, Any], Any], steps: int = 20) -> list[float]:
    if lib == "torch":
        torch = pytest.importorskip("torch")
        sched, opt = (
            torch.optim.lr_scheduler,
            torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0),
        )
    else:
        sched, opt = S, SGD([mta.nn.Parameter(mta.zeros(1))], lr=1.0)
    scheduler = build(sched, opt)
    lrs = [opt.param_groups[0]["lr"]]
    for _ in range(steps):
        opt.step()
        scheduler.step()
        lrs.append(opt.param_groups[0]["lr"])
    return lrs


def _chained_then_step(s: Any, opt: Any) -> Any:
    chain = s.ChainedScheduler(
        [s.ConstantLR(opt, factor=0.5, total_iters=3), s.ExponentialLR(opt, gamma=0.9)]
    )
    return s.SequentialLR(opt, [chain, s.StepLR(opt, step_size=2, gamma=0.5)], milestones=[5])


def _chain_of_sequential(s: Any, opt: Any) -> Any:
    warm = s.LinearLR(opt, start_factor=0.25, total_iters=3)
    seq = s.SequentialLR(opt, [warm, s.StepLR(opt, step_size=2, gamma=0.5)], milestones=[4])
    return s.ChainedScheduler([seq, s.ExponentialLR(opt, gamma=0.9)])


def _sequential_in_sequential(s: Any, opt: Any) -> Any:
    inner = s.SequentialLR(
        opt,
        [s.ConstantLR(opt, factor=0.5, total_iters=2), s.ExponentialLR(opt, gamma=0.9)],
        milestones=[3],
    )
    return s.SequentialLR(opt, [inner, s.StepLR(opt, step_size=3, gamma=0.5)], milestones=[6])


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize(
    "build", [_chained_then_step, _chain_of_sequential, _sequential_in_sequential]
)
def test_nested_schedulers_follow_pytorch_exactly(build: Callable[[Any, Any], Any]) -> None:
    assert _trajectory("mta", build) == _trajectory("torch", build)


def test_sequential_of_a_chain_against_the_closed_form() -> None:
    """ConstantLR(0.5, 3 epochs) with ExponentialLR(0.9) chained, both stepped from epoch 0
    (so gamma applies once at once), then StepLR(2, 0.5) restarted at the milestone 5.
    """
    got = _trajectory("mta", _chained_then_step)
    expected = [0.9 ** (t + 1) * (0.5 if t < 3 else 1.0) for t in range(5)]
    expected += [0.5 ** ((t - 5) // 2) for t in range(5, 21)]
    np.testing.assert_allclose(got, expected, rtol=1e-13, atol=0)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("lib", ["mta", "torch"])
def test_a_chain_after_a_milestone_raises_not_implemented(lib: str) -> None:
    def build(s: Any, opt: Any) -> Any:
        chain = s.ChainedScheduler(
            [s.ConstantLR(opt, factor=0.5, total_iters=3), s.ExponentialLR(opt, gamma=0.9)]
        )
        return s.SequentialLR(opt, [s.StepLR(opt, step_size=2, gamma=0.5), chain], milestones=[3])

    assert len(_trajectory(lib, build, steps=2)) == 3  # works until the milestone
    with pytest.raises(NotImplementedError):
        _trajectory(lib, build, steps=3)


def test_nested_state_dict_round_trip() -> None:
    opt = SGD([mta.nn.Parameter(mta.zeros(1))], lr=1.0)
    sched = _chained_then_step(S, opt)
    for _ in range(4):
        sched.step()
    state, lr_at_save = sched.state_dict(), opt.param_groups[0]["lr"]
    rest = []
    for _ in range(5):
        sched.step()
        rest.append(opt.param_groups[0]["lr"])
    opt2 = SGD([mta.nn.Parameter(mta.zeros(1))], lr=1.0)
    sched2 = _chained_then_step(S, opt2)
    sched2.load_state_dict(state)
    opt2.param_groups[0]["lr"] = lr_at_save  # the optimizer's own state dict holds it
    again = []
    for _ in range(5):
        sched2.step()
        again.append(opt2.param_groups[0]["lr"])
    assert again == rest


# --------------------------------------------------------------------------- 3. datasets
def test_mnist_sample_has_torchvision_attributes() -> None:
    ds = MNIST(sample=True, train=False)
    data, targets = ds.data, ds.targets
    assert isinstance(data, mta.Tensor) and isinstance(targets, mta.Tensor)
    assert tuple(data.shape) == (len(ds), 28, 28) and data.dtype == np.uint8
    assert tuple(targets.shape) == (len(ds),) and targets.dtype == np.int64
    assert np.shares_memory(data.numpy(), ds.raw_images)
    assert np.shares_memory(targets.numpy(), ds.arrays[1])
    assert ds.train is False and MNIST(sample=True).train is True
    assert ds.class_to_idx == {name: i for i, name in enumerate(ds.classes)}
    for i in (0, 7, len(ds) - 1):
        image, label = ds[i]
        np.testing.assert_array_equal(
            image[0], data.numpy()[i].astype(np.float32) / np.float32(255)
        )
        assert label == int(targets[i])


def test_mnist_data_and_targets_can_be_replaced_by_a_subset() -> None:
    ds = MNIST(sample=True, train=False, normalize=True)
    keep = np.flatnonzero(ds.targets.numpy() == 3)[:10]
    images = ds.data.numpy()[keep].copy()
    ds.data = ds.data[mta.tensor(keep)]
    ds.targets = ds.targets[mta.tensor(keep)]
    assert len(ds) == 10 and set(ds.targets.tolist()) == {3}
    expected = (images[4].astype(np.float32) / np.float32(255) - np.float32(ds.mean)) / np.float32(
        ds.std
    )
    np.testing.assert_allclose(ds[4][0][0], expected, rtol=1e-6)
    with pytest.raises(ValueError, match=r"uint8 of shape \(N, 28, 28\)"):
        ds.data = mta.zeros(3, 28, 28)
    with pytest.raises(ValueError, match="integers of shape"):
        ds.targets = mta.zeros(3)


def test_fashion_mnist_has_the_same_attributes(tmp_path: Path) -> None:
    """Fashion-MNIST from IDX files in ``root`` (the embedded MNIST sample, copied)."""
    package = importlib.resources.files("minitorch_accel.datasets") / "sample"
    for stem in ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"):
        with importlib.resources.as_file(package / f"{stem}.gz") as path:
            shutil.copy(path, tmp_path / f"{stem}.gz")
    ds = FashionMNIST(root=tmp_path, train=False, download=False)
    with gzip.open(tmp_path / "t10k-labels-idx1-ubyte.gz") as f:
        labels = np.frombuffer(f.read()[8:], dtype=np.uint8)
    np.testing.assert_array_equal(ds.targets.numpy(), labels)
    assert ds.data.dtype == np.uint8 and tuple(ds.data.shape) == (len(labels), 28, 28)
    assert ds.class_to_idx["Ankle boot"] == 9 and ds.train is False


# --------------------------------------------------------------------------- 4. DataLoader
def _dataset() -> TensorDataset:
    return TensorDataset(np.zeros((30, 2), np.float32), np.arange(30))


def _epoch(loader: DataLoader) -> list[int]:
    return [int(i) for _, y in loader for i in y.tolist()]


@pytest.mark.parametrize("num_workers", [0, 1])
def test_manual_seed_after_building_the_loader_repeats_the_order(num_workers: int) -> None:
    loader = DataLoader(_dataset(), batch_size=4, shuffle=True, num_workers=num_workers)
    assert loader.generator is None
    mta.manual_seed(11)
    first = _epoch(loader)
    mta.manual_seed(11)
    again = _epoch(loader)
    assert first == again and sorted(first) == list(range(30))
    assert _epoch(loader) != first  # the next epoch draws a new seed


def test_two_epochs_differ_and_a_generator_or_seed_is_independent_of_manual_seed() -> None:
    mta.manual_seed(0)
    loader = DataLoader(_dataset(), batch_size=4, shuffle=True)
    assert _epoch(loader) != _epoch(loader)
    orders = []
    for global_seed in (1, 2):
        mta.manual_seed(global_seed)
        with_gen = DataLoader(
            _dataset(), batch_size=4, shuffle=True, generator=np.random.default_rng(5)
        )
        with_seed = DataLoader(_dataset(), batch_size=4, shuffle=True, seed=5)
        orders.append((_epoch(with_gen), _epoch(with_gen), _epoch(with_seed)))
    assert orders[0] == orders[1]
    assert orders[0][0] != orders[0][1]


def test_pytorch_has_the_same_semantics() -> None:
    torch = pytest.importorskip("torch")
    ds = torch.utils.data.TensorDataset(torch.arange(30))
    loader = torch.utils.data.DataLoader(ds, batch_size=4, shuffle=True)

    def epoch() -> list[int]:
        return [int(i) for (b,) in loader for i in b]

    torch.manual_seed(11)
    first = epoch()
    torch.manual_seed(11)
    assert epoch() == first
    assert epoch() != first


# --------------------------------------------------------------------------- 5. expanded writes
# In-place writes PyTorch refuses on an expanded tensor; ``fill_``, ``zero_``,
# ``masked_fill_`` and ``x[i] = v`` it performs (every row sees the write): those raise
# the same error here, where the expanded memory is read-only.
TORCH_REFUSES = {"add_", "mul_", "+=", "copy_", "clamp_", "relu_"}
WRITES: dict[str, Callable[[Any, Any], Any]] = {
    "add_": lambda x, lib: x.add_(1),
    "mul_": lambda x, lib: x.mul_(2),
    "+=": lambda x, lib: x.__iadd__(1),
    "setitem": lambda x, lib: x.__setitem__(0, 1.0),
    "copy_": lambda x, lib: x.copy_(lib.ones(4, 3)),
    "fill_": lambda x, lib: x.fill_(1.0),
    "zero_": lambda x, lib: x.zero_(),
    "clamp_": lambda x, lib: x.clamp_(0.5, 1.0),
    "relu_": lambda x, lib: x.relu_(),
    "masked_fill_": lambda x, lib: x.masked_fill_(lib.ones(4, 3, dtype=lib.bool), 1.0),
}
MESSAGE = (
    r"more than one element of the written-to tensor refers to a single memory location.*clone\(\)"
)


@pytest.mark.parametrize("grad", [False, True])
@pytest.mark.parametrize("name", sorted(WRITES))
def test_writing_into_an_expanded_tensor_raises_pytorchs_error(name: str, grad: bool) -> None:
    base = mta.full((1, 3), -1.0, requires_grad=grad)
    x = (base * 1.0).expand(4, 3)
    with pytest.raises(RuntimeError, match=MESSAGE):
        WRITES[name](x, mta)
    np.testing.assert_array_equal(x.detach().numpy(), np.full((4, 3), -1.0))  # unchanged
    y = x.detach().clone()
    WRITES[name](y, mta)  # clone() is the way out
    assert not np.array_equal(y.detach().numpy(), x.detach().numpy())


@pytest.mark.parametrize("name", sorted(WRITES))
def test_pytorch_raises_the_same_error(name: str) -> None:
    torch = pytest.importorskip("torch")
    x = torch.zeros(1, 3).expand(4, 3)
    if name not in TORCH_REFUSES:
        WRITES[name](x, torch)  # PyTorch writes the one row all rows share
        assert bool((x == x[0]).all())
        return
    with pytest.raises(RuntimeError, match=MESSAGE):
        WRITES[name](x, torch)


def test_relu_inplace_on_an_expanded_tensor_raises_and_a_size_one_expand_is_writable() -> None:
    x = mta.zeros(1, 3).expand(4, 3)
    with pytest.raises(RuntimeError, match=MESSAGE):
        F.relu(x, inplace=True)
    y = mta.zeros(1, 3).expand(1, 3)  # no element shares memory with another
    y.add_(1)
    assert y.tolist() == [[1.0, 1.0, 1.0]]
