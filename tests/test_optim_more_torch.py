"""ConstantLR, MultiplicativeLR, PolynomialLR, CosineAnnealingWarmRestarts, CyclicLR,
ChainedScheduler, Rprop, ASGD and LBFGS: against torch.optim over 45 steps (rates,
momenta, float64 trajectories), against NumPy references written here, state dicts
saved mid-run, non-finite gradients, and PyTorch's argument checks."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from support.helpers import DEVICES

import minitorch_accel as mta
from minitorch_accel import optim
from minitorch_accel.core.tensor import Tensor
from minitorch_accel.optim import lr_scheduler as ours
from minitorch_accel.serialization import load, save

STEPS = 45


# ============================================================ schedulers
def _optimizer(lib: Any, kind: str = "SGD") -> Any:
    """A ``kind`` optimizer of ``lib`` (``minitorch_accel`` or ``torch``), two groups."""
    a, b = lib.zeros(2, requires_grad=True), lib.zeros(3, requires_grad=True)
    groups = [{"params": [a]}, {"params": [b], "lr": 0.3}]
    if kind == "SGD":
        return lib.optim.SGD(groups, lr=1.0, momentum=0.9)
    return getattr(lib.optim, kind)(groups, lr=1.0)


def _momenta(opt: Any) -> list[float]:
    return [g["betas"][0] if "betas" in g else g.get("momentum", 0.0) for g in opt.param_groups]


def _record(opt: Any, sched: Any, steps: int) -> list[list[float]]:
    """Each step's rates and momenta, then ``opt.step()`` and ``sched.step()``."""
    rows = []
    for _ in range(steps):
        rows.append(list(sched.get_last_lr()) + _momenta(opt))
        assert sched.get_last_lr() == [g["lr"] for g in opt.param_groups]
        opt.step()
        sched.step()
    return rows


class HalfEveryCycle:
    """A scale_fn that is a callable object: its attributes travel in state dicts."""

    def __init__(self) -> None:
        self.base = 0.5

    def __call__(self, x: float) -> float:
        return float(self.base ** (x - 1))


Builder = Callable[[Any, Any], Any]  # (lr_scheduler module, optimizer) -> scheduler
SCHEDULERS: dict[str, tuple[str, Builder]] = {
    "constant-default": ("SGD", lambda m, o: m.ConstantLR(o)),
    "constant": ("SGD", lambda m, o: m.ConstantLR(o, factor=0.25, total_iters=7)),
    "multiplicative": ("SGD", lambda m, o: m.MultiplicativeLR(o, lambda e: 0.95)),
    "multiplicative-per-group": (
        "SGD",
        lambda m, o: m.MultiplicativeLR(o, [lambda e: 0.9, lambda e: 1.0 - 0.01 * e]),
    ),
    "polynomial-default": ("SGD", lambda m, o: m.PolynomialLR(o)),
    "polynomial": ("SGD", lambda m, o: m.PolynomialLR(o, total_iters=30, power=0.9)),
    "polynomial-square": ("SGD", lambda m, o: m.PolynomialLR(o, total_iters=12, power=2.0)),
    "warm-restarts": ("SGD", lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=5)),
    "warm-restarts-mult": (
        "SGD",
        lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.01),
    ),
    "cyclic-triangular": (
        "SGD",
        lambda m, o: m.CyclicLR(o, 0.01, 0.1, step_size_up=5, step_size_down=3),
    ),
    "cyclic-triangular2": (
        "SGD",
        lambda m, o: m.CyclicLR(o, [0.01, 0.02], [0.1, 0.5], 4, mode="triangular2"),
    ),
    "cyclic-exp-range": (
        "SGD",
        lambda m, o: m.CyclicLR(
            o, 0.01, 0.1, 3, 6, mode="exp_range", gamma=0.97, base_momentum=[0.7, 0.75]
        ),
    ),
    "cyclic-scale-fn": (
        "SGD",
        lambda m, o: m.CyclicLR(o, 0.01, 0.1, 4, scale_fn=HalfEveryCycle(), scale_mode="cycle"),
    ),
    "cyclic-scale-fn-iterations": (
        "SGD",
        lambda m, o: m.CyclicLR(
            o, 0.01, 0.1, 4, scale_fn=lambda x: 1 / (1 + 0.05 * x), scale_mode="iterations"
        ),
    ),
    "cyclic-no-momentum": (
        "Adagrad",
        lambda m, o: m.CyclicLR(o, 0.01, 0.1, 2, 7, cycle_momentum=False),
    ),
    "cyclic-adam-beta1": (
        "Adam",
        lambda m, o: m.CyclicLR(o, 0.001, 0.01, 5, base_momentum=0.85, max_momentum=0.95),
    ),
    "chained-constant-exponential": (
        "SGD",
        lambda m, o: m.ChainedScheduler(
            [m.ConstantLR(o, factor=0.1, total_iters=5), m.ExponentialLR(o, gamma=0.9)]
        ),
    ),
    "chained-polynomial-multiplicative-cosine": (
        "SGD",
        lambda m, o: m.ChainedScheduler(
            [
                m.PolynomialLR(o, total_iters=40, power=0.5),
                m.MultiplicativeLR(o, lambda e: 0.99),
                m.CosineAnnealingLR(o, T_max=10),
            ],
            optimizer=o,
        ),
    ),
    "chained-constant-cyclic": (  # CyclicLR's step 0 uses the initial_lr set before it
        "SGD",
        lambda m, o: m.ChainedScheduler(
            [m.ConstantLR(o, factor=0.5, total_iters=6), m.CyclicLR(o, 0.01, 0.1, 4)]
        ),
    ),
    "sequential-constant-then-polynomial": (
        "SGD",
        lambda m, o: m.SequentialLR(
            o, [m.ConstantLR(o, 0.5, 3), m.PolynomialLR(o, total_iters=20, power=2.0)], [4]
        ),
    ),
}


def _torch_sequence(name: str, steps: int = STEPS) -> list[list[float]]:
    torch = pytest.importorskip("torch")
    kind, build = SCHEDULERS[name]
    opt = _optimizer(torch, kind)
    return _record(opt, build(torch.optim.lr_scheduler, opt), steps)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_scheduler_matches_torch(name: str) -> None:
    want = _torch_sequence(name)
    kind, build = SCHEDULERS[name]
    opt = _optimizer(mta, kind)
    got = _record(opt, build(ours, opt), STEPS)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_scheduler_state_dict_mid_run_continues_identically(name: str, tmp_path: Any) -> None:
    kind, build = SCHEDULERS[name]
    opt = _optimizer(mta, kind)
    full = _record(opt, build(ours, opt), STEPS)

    opt = _optimizer(mta, kind)
    sched = build(ours, opt)
    head = _record(opt, sched, 17)
    save({"opt": opt.state_dict(), "sched": sched.state_dict()}, tmp_path / "ckpt.npz")
    ckpt = load(tmp_path / "ckpt.npz")
    opt2 = _optimizer(mta, kind)  # PyTorch's order: build both, then load both
    sched2 = build(ours, opt2)
    opt2.load_state_dict(ckpt["opt"])
    sched2.load_state_dict(ckpt["sched"])
    rest = _record(opt2, sched2, STEPS - 17)
    np.testing.assert_array_equal(head + rest, full)


def test_cyclic_scale_fn_object_state_travels() -> None:
    opt = _optimizer(mta)
    fn = HalfEveryCycle()
    sched = ours.CyclicLR(opt, 0.01, 0.1, 4, scale_fn=fn)
    state = sched.state_dict()
    assert state["_scale_fn_custom"] == {"base": 0.5}
    fn.base = 0.9
    sched.load_state_dict(state)
    assert fn.base == 0.5
    plain = ours.CyclicLR(_optimizer(mta), 0.01, 0.1, 4, scale_fn=lambda x: 1.0)
    assert plain.state_dict()["_scale_fn_custom"] is None


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("t_mult", [1, 2, 3])
def test_warm_restarts_fractional_epochs_match_torch(t_mult: int) -> None:
    torch = pytest.importorskip("torch")
    iters = 7  # batches per epoch: step(epoch + i / iters) once per batch
    epochs = [e + i / iters for e in range(12) for i in range(iters)]
    epochs += [26, 3.5, 40.25, 0.0]  # jumps back and forth
    rows = []
    for lib, module in ((mta, ours), (torch, torch.optim.lr_scheduler)):
        opt = _optimizer(lib)
        sched = module.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=t_mult, eta_min=0.001)
        seq = []
        for k, epoch in enumerate(epochs):
            opt.step()
            sched.step(epoch)
            if k % 5 == 4:  # plain steps interleaved, from wherever the jumps left it
                sched.step()
            seq.append(list(sched.get_last_lr()) + [sched.T_cur, sched.T_i, sched.last_epoch])
        rows.append(seq)
    np.testing.assert_allclose(rows[0], rows[1], rtol=1e-12, atol=1e-15)


def _reference_schedule(name: str, t: int) -> float:
    """Closed forms from the papers and PyTorch's documentation, base rate 1."""
    if name == "constant":
        return 0.25 if t < 7 else 1.0
    if name == "polynomial":
        return (1 - min(t, 30) / 30) ** 0.9
    if name == "warm-restarts-mult":  # periods 3, 6, 12, 24 starting at 0, 3, 9, 21
        start, period = 0, 3
        while t >= start + period:
            start, period = start + period, period * 2
        return 0.01 + (1 - 0.01) * (1 + math.cos(math.pi * (t - start) / period)) / 2
    cycle_pos = t % 8  # cyclic-triangular: 5 steps up, 3 down
    height = cycle_pos / 5 if cycle_pos <= 5 else (8 - cycle_pos) / 3
    return 0.01 + 0.09 * height


@pytest.mark.parametrize(
    "name", ["constant", "polynomial", "warm-restarts-mult", "cyclic-triangular"]
)
def test_scheduler_matches_closed_form(name: str) -> None:
    kind, build = SCHEDULERS[name]
    opt = _optimizer(mta, kind)
    got = [row[0] for row in _record(opt, build(ours, opt), STEPS)]
    want = [_reference_schedule(name, t) for t in range(STEPS)]
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize(
    "build, error, message",
    [
        (lambda m, o: m.ConstantLR(o, factor=1.5), ValueError, "between 0 and 1"),
        (lambda m, o: m.ConstantLR(o, factor=-0.1), ValueError, "between 0 and 1"),
        (lambda m, o: m.MultiplicativeLR(o, [lambda e: 1.0]), ValueError, "Expected 2 lr_lambdas"),
        (lambda m, o: m.MultiplicativeLR(o, 0.5), TypeError, "lr_lambda should be a function"),
        (lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=0), ValueError, "positive integer T_0"),
        (lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=2.5), ValueError, "integer T_0"),
        (lambda m, o: m.CosineAnnealingWarmRestarts(o, 2, T_mult=0), ValueError, "T_mult >= 1"),
        (
            lambda m, o: m.CosineAnnealingWarmRestarts(o, 2, eta_min="0"),
            ValueError,
            "float or int eta_min",
        ),
        (
            lambda m, o: m.CosineAnnealingWarmRestarts(o, 2).step(-1),
            ValueError,
            "non-negative epoch",
        ),
        (lambda m, o: m.CyclicLR(o, 0.1, 1.0, mode="sawtooth"), ValueError, "mode is invalid"),
        (
            lambda m, o: m.CyclicLR(o, [0.1], 1.0),
            ValueError,
            "base_lr must have the same length as optimizer.param_groups",
        ),
        (
            lambda m, o: m.CyclicLR(o, 0.1, [1.0, 2.0, 3.0]),
            ValueError,
            "max_lr must have the same length",
        ),
        (lambda m, o: m.ChainedScheduler([]), ValueError, "at least one scheduler"),
        (
            lambda m, o: m.ChainedScheduler([m.ReduceLROnPlateau(o)]),
            ValueError,
            "does not support `ReduceLROnPlateau`",
        ),
    ],
)
def test_scheduler_bad_arguments_like_torch(build: Builder, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        build(ours, _optimizer(mta))
    torch = pytest.importorskip("torch")
    with pytest.raises(error):
        build(torch.optim.lr_scheduler, _optimizer(torch))


def test_scheduler_errors_about_the_optimizer() -> None:
    with pytest.raises(ValueError, match="must support momentum or beta1"):
        ours.CyclicLR(_optimizer(mta, "Adagrad"), 0.01, 0.1)
    with pytest.raises(TypeError, match="is not an Optimizer"):
        ours.CyclicLR(object(), 0.01, 0.1)  # type: ignore[arg-type]
    a, b = _optimizer(mta), _optimizer(mta)
    with pytest.raises(ValueError, match="belong to the same optimizer"):
        ours.ChainedScheduler([ours.ConstantLR(a), ours.ConstantLR(b)])


# ============================================================ Rprop and ASGD
SHAPES = [(3, 4), (5,)]
OPT_STEPS = 30
OPTIMIZERS: dict[str, list[dict[str, Any]]] = {
    "Rprop": [
        {},
        {"lr": 0.05, "etas": (0.3, 1.5), "step_sizes": (1e-3, 0.2)},
        {"lr": 0.02, "step_sizes": (1e-4, 0.1), "maximize": True},
    ],
    "ASGD": [
        {},
        {"lr": 0.05, "lambd": 1e-3, "alpha": 0.6, "t0": 5.0, "weight_decay": 0.1},
        {"lr": 0.02, "t0": 0.0, "maximize": True},
    ],
}
CASES = [(name, c) for name, configs in OPTIMIZERS.items() for c in configs]


def _grad(p: np.ndarray, noise: np.ndarray) -> np.ndarray:
    """The gradient of a noisy quadratic at ``p``: the trajectory feeds back on itself."""
    return 0.5 * p + noise


def _trajectory(lib: Any, name: str, config: dict[str, Any], p0: Any, noise: Any) -> Any:
    params = [lib.tensor(p.copy(), requires_grad=True) for p in p0]
    opt = getattr(lib.optim, name)(
        [{"params": params[:1]}, {"params": params[1:], "lr": 0.03}], **config
    )
    out = []
    for step_noise in noise:
        for p, n in zip(params, step_noise, strict=True):
            p.grad = lib.tensor(_grad(p.detach().numpy(), n))
        opt.step()
        out.append(np.concatenate([p.detach().numpy().ravel() for p in params]))
    return np.array(out), opt, params


@pytest.fixture(params=["float32", "float64"])
def default_dtype(request: pytest.FixtureRequest) -> Any:
    """Both libraries' default dtype (ASGD keeps eta and mu in it)."""
    torch = pytest.importorskip("torch")
    old_ours, old_torch = mta.get_default_dtype(), torch.get_default_dtype()
    mta.set_default_dtype(np.dtype(request.param))
    torch.set_default_dtype(getattr(torch, request.param))
    yield request.param
    mta.set_default_dtype(old_ours)
    torch.set_default_dtype(old_torch)


@pytest.mark.parametrize("name, config", CASES, ids=str)
def test_optimizer_matches_torch_in_float64(
    name: str, config: dict[str, Any], default_dtype: str
) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    p0 = [rng.standard_normal(s) for s in SHAPES]
    noise = [[rng.standard_normal(s) for s in SHAPES] for _ in range(OPT_STEPS)]
    want, topt, tparams = _trajectory(torch, name, config, p0, noise)
    got, opt, params = _trajectory(mta, name, config, p0, noise)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    for p, tp in zip(params, tparams, strict=True):
        assert set(opt.state[p]) == set(topt.state[tp])
        for key, value in topt.state[tp].items():
            mine = opt.state[p][key]
            mine = mine.numpy() if hasattr(mine, "numpy") else mine
            np.testing.assert_allclose(mine, value.numpy(), rtol=1e-10, atol=1e-12, err_msg=key)


@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_non_finite_gradients_like_torch(name: str) -> None:
    torch = pytest.importorskip("torch")
    values = np.array([-np.inf, -2.0, -0.0, 0.0, 0.5, 2.0, np.inf, np.nan])
    p0 = np.linspace(-1.0, 1.0, values.size)
    grads = [values, values[::-1].copy(), np.ones_like(values)]
    results = []
    for lib in (mta, torch):
        p = lib.tensor(p0.copy(), requires_grad=True)
        opt = getattr(lib.optim, name)([p], lr=0.1)
        for g in grads:
            p.grad = lib.tensor(g.copy())
            opt.step()
        results.append(p.detach().numpy())
    np.testing.assert_array_equal(results[0], results[1])  # NaN where NaN, same infinities


def _rprop_reference(p: np.ndarray, grads: list[np.ndarray], lr: float) -> np.ndarray:
    """Rprop (Riedmiller and Braun; "Rprop-" as PyTorch's docs state it), one weight at
    a time, in plain Python."""
    p = p.astype(float).ravel().copy()
    size = [lr] * p.size
    prev = [0.0] * p.size
    for grad in grads:
        for i, g in enumerate(grad.ravel()):
            if g * prev[i] > 0:
                size[i] = min(size[i] * 1.2, 50.0)
            elif g * prev[i] < 0:
                size[i] = max(size[i] * 0.5, 1e-6)
                g = 0.0
            p[i] -= size[i] * (1 if g > 0 else -1 if g < 0 else 0)
            prev[i] = g
    return p


def _asgd_reference(
    p: np.ndarray, grads: list[np.ndarray], lr: float, lambd: float, alpha: float, t0: float
) -> tuple[np.ndarray, np.ndarray]:
    """ASGD as PyTorch's documentation states it: decayed steps, then the running mean
    of the weights from step t0 on."""
    p = p.copy()
    ax = np.zeros_like(p)
    eta, mu = lr, 1.0
    for t, g in enumerate(grads, start=1):
        p = p * (1 - lambd * eta) - eta * g
        ax = p.copy() if mu == 1 else ax + mu * (p - ax)
        eta = lr / (1 + lambd * lr * t) ** alpha
        mu = 1 / max(1, t - t0)
    return p, ax


def test_rprop_and_asgd_first_steps_match_numpy_references(default_dtype: str) -> None:
    rng = np.random.default_rng(4)
    p0 = rng.standard_normal((3, 2))
    grads = [rng.standard_normal((3, 2)) for _ in range(4)]
    grads.insert(2, -grads[1])  # every sign flips once
    grads[3][0, 0] = 0.0  # and a zero gradient
    p = mta.tensor(p0, requires_grad=True)
    opt = optim.Rprop([p], lr=0.1)
    for g in grads:
        p.grad = mta.tensor(g)
        opt.step()
    np.testing.assert_allclose(
        p.detach().numpy().ravel(), _rprop_reference(p0, grads, 0.1), rtol=1e-13
    )

    p = mta.tensor(p0, requires_grad=True)
    asgd = optim.ASGD([p], lr=0.1, lambd=0.01, alpha=0.6, t0=2)
    for g in grads:
        p.grad = mta.tensor(g)
        asgd.step()
    want_p, want_ax = _asgd_reference(p0, grads, 0.1, 0.01, 0.6, 2)
    rtol = 1e-13 if default_dtype == "float64" else 1e-6  # eta rounded to float32
    np.testing.assert_allclose(p.detach().numpy(), want_p, rtol=rtol)
    np.testing.assert_allclose(asgd.state[p]["ax"].numpy(), want_ax, rtol=rtol)


@pytest.mark.parametrize("name, config", [(n, c[1]) for n, c in OPTIMIZERS.items()], ids=str)
def test_state_dict_mid_run_continues_identically(
    name: str, config: dict[str, Any], tmp_path: Any
) -> None:
    rng = np.random.default_rng(3)
    p0 = rng.standard_normal(6)
    grads = [rng.standard_normal(6) for _ in range(20)]
    a = mta.tensor(p0, requires_grad=True)
    opt_a = getattr(optim, name)([a], **config)
    b = mta.tensor(p0, requires_grad=True)
    opt_b = getattr(optim, name)([b], **config)
    for g in grads[:10]:
        a.grad = b.grad = mta.tensor(g)
        opt_a.step()
        opt_b.step()
    save(opt_b.state_dict(), tmp_path / "opt.npz")
    b2 = mta.tensor(b.detach().numpy(), requires_grad=True)
    resumed = getattr(optim, name)([b2], lr=0.123)
    resumed.load_state_dict(load(tmp_path / "opt.npz"))
    for g in grads[10:]:
        a.grad = b2.grad = mta.tensor(g)
        opt_a.step()
        resumed.step()
    np.testing.assert_array_equal(a.detach().numpy(), b2.detach().numpy())


@pytest.mark.parametrize(
    "name, config, message",
    [
        ("Rprop", {"lr": -1.0}, "Invalid learning rate: -1.0"),
        ("Rprop", {"etas": (1.5, 1.2)}, "Invalid eta values: 1.5, 1.2"),
        ("Rprop", {"etas": (0.5, 0.9)}, "Invalid eta values: 0.5, 0.9"),
        ("ASGD", {"lr": -0.1}, "Invalid learning rate: -0.1"),
        ("ASGD", {"weight_decay": -1.0}, "Invalid weight_decay value: -1.0"),
        ("LBFGS", {"lr": -1.0}, "Invalid learning rate: -1.0"),
    ],
    ids=str,
)
def test_bad_hyper_parameters_like_torch(name: str, config: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        getattr(optim, name)([mta.zeros(2, requires_grad=True)], **config)
    torch = pytest.importorskip("torch")
    with pytest.raises(ValueError, match=message):
        getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)], **config)


# ============================================================ LBFGS
def _rosenbrock(lib: Any, w: Any) -> Any:
    r, s = w[1] - w[0] * w[0], 1 - w[0]
    return 100 * (r * r) + s * s


def _least_squares(lib: Any, params: list[Any]) -> Any:
    rng = np.random.default_rng(7)
    x, y = lib.tensor(rng.standard_normal((8, 3))), lib.tensor(rng.standard_normal((8, 2)))
    weight, bias = params
    err = x @ weight + bias - y
    return (err * err).sum() / 8


LBFGS_CASES: dict[str, tuple[Callable[[Any, Any], Any], list[np.ndarray], dict[str, Any]]] = {
    "rosenbrock-fixed-step": (
        lambda lib, ps: _rosenbrock(lib, ps[0]),
        [np.array([-1.2, 1.0])],
        {"lr": 0.5, "max_iter": 2, "history_size": 3},
    ),
    "rosenbrock-strong-wolfe": (
        lambda lib, ps: _rosenbrock(lib, ps[0]),
        [np.array([-1.2, 1.0])],
        {"lr": 0.8, "max_iter": 3, "history_size": 3, "line_search_fn": "strong_wolfe"},
    ),
    "least-squares-fixed-step": (
        _least_squares,
        [np.full((3, 2), 0.5), np.zeros(2)],
        {"lr": 0.1, "max_iter": 2, "history_size": 3},
    ),
    "least-squares-strong-wolfe": (
        _least_squares,
        [np.full((3, 2), 0.5), np.zeros(2)],
        {"max_iter": 4, "line_search_fn": "strong_wolfe", "tolerance_grad": 1e-12},
    ),
}


def _lbfgs_run(lib: Any, case: str, steps: int, opt_params: Any = None) -> Any:
    loss_fn, p0, config = LBFGS_CASES[case]
    params = opt_params or [lib.tensor(p.copy(), requires_grad=True) for p in p0]
    opt = lib.optim.LBFGS(params, **config)
    calls = [0]

    def closure() -> Any:
        calls[0] += 1
        opt.zero_grad()
        loss = loss_fn(lib, params)
        loss.backward()
        return loss

    rows = []
    for _ in range(steps):
        loss = float(opt.step(closure).detach())
        flat = np.concatenate([p.detach().numpy().ravel() for p in params])
        rows.append(np.concatenate([flat, [loss, calls[0]]]))
    return np.array(rows), opt, params, closure


@pytest.mark.parametrize("case", list(LBFGS_CASES))
def test_lbfgs_matches_torch_in_float64(case: str) -> None:
    torch = pytest.importorskip("torch")
    want, topt, tparams, _ = _lbfgs_run(torch, case, 25)
    got, opt, params, _ = _lbfgs_run(mta, case, 25)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)  # incl. loss, closure calls
    state, tstate = opt.state[params[0]], topt.state[tparams[0]]
    assert set(state) == set(tstate)
    for key in ("func_evals", "n_iter", "t", "H_diag", "prev_loss"):
        np.testing.assert_allclose(float(state[key]), float(tstate[key]), rtol=1e-8, err_msg=key)
    assert len(state["old_dirs"]) == len(tstate["old_dirs"])


def test_lbfgs_reaches_the_rosenbrock_minimum() -> None:
    got, *_ = _lbfgs_run(mta, "rosenbrock-strong-wolfe", 25)
    np.testing.assert_allclose(got[-1, :2], [1.0, 1.0], atol=1e-4)


@pytest.mark.parametrize("case", ["rosenbrock-strong-wolfe", "least-squares-fixed-step"])
def test_lbfgs_state_dict_mid_run_continues_identically(case: str, tmp_path: Any) -> None:
    full, *_ = _lbfgs_run(mta, case, 12)
    head, opt, params, closure = _lbfgs_run(mta, case, 6)
    save(opt.state_dict(), tmp_path / "lbfgs.npz")
    resumed_params = [mta.tensor(p.detach().numpy(), requires_grad=True) for p in params]
    tail, resumed, *_ = _lbfgs_run(mta, case, 0, resumed_params)
    resumed.load_state_dict(load(tmp_path / "lbfgs.npz"))
    loss_fn = LBFGS_CASES[case][0]

    def resumed_closure() -> Any:
        resumed.zero_grad()
        loss = loss_fn(mta, resumed_params)
        loss.backward()
        return loss

    for row in full[6:]:
        resumed.step(resumed_closure)
        flat = np.concatenate([p.detach().numpy().ravel() for p in resumed_params])
        np.testing.assert_array_equal(flat, row[: flat.size])
    opt.step(closure)  # the live state went on without being disturbed by the copy
    np.testing.assert_array_equal(
        np.concatenate([p.detach().numpy().ravel() for p in params]), full[6, : flat.size]
    )


def test_lbfgs_stops_at_once_when_already_optimal() -> None:
    w = mta.tensor(np.ones(2), requires_grad=True)
    opt = optim.LBFGS([w])
    calls = []

    def closure() -> Any:
        calls.append(1)
        opt.zero_grad()
        loss = ((w - 1.0) * (w - 1.0)).sum()
        loss.backward()
        return loss

    assert float(opt.step(closure)) == 0.0
    assert len(calls) == 1 and w.detach().numpy().tolist() == [1.0, 1.0]


def test_lbfgs_bad_use() -> None:
    a, b = mta.zeros(2, requires_grad=True), mta.zeros(2, requires_grad=True)
    with pytest.raises(ValueError, match="doesn't support per-parameter options"):
        optim.LBFGS([{"params": [a]}, {"params": [b]}])
    with pytest.raises(ValueError, match="line_search_fn must be None or 'strong_wolfe'"):
        optim.LBFGS([a], line_search_fn="armijo")
    with pytest.raises(TypeError, match="needs a closure"):
        optim.LBFGS([a]).step()
    c = mta.zeros(2, requires_grad=True, device="cpu:1")
    with pytest.raises(ValueError, match="every parameter on one device"):
        optim.LBFGS([a, c])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ["Rprop", "ASGD", "LBFGS"])
def test_float32_on_each_device(name: str, device: str) -> None:
    rng = np.random.default_rng(5)
    p0 = rng.standard_normal(5)
    results = []
    for dev, dtype in ((device, np.float32), ("cpu", np.float64)):
        p = mta.tensor(p0, dtype=dtype, device=dev, requires_grad=True)
        opt = getattr(optim, name)([p], lr=0.1)

        def closure(p: Any = p, opt: Any = opt) -> Any:
            opt.zero_grad()
            loss = ((p - 1.0) * (p - 1.0)).sum()
            loss.backward()
            return loss

        for _ in range(3):
            opt.step(closure)
        assert p.dtype == dtype and p.device == mta.Device(dev)
        for value in opt.state[p].values():
            for v in value if isinstance(value, list) else [value]:
                if isinstance(v, Tensor):
                    assert v.dtype == dtype and v.device == mta.Device(dev)
        results.append(p.detach().cpu().numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-5, atol=1e-5)
