"""RMSprop, Adagrad, Adadelta, Adamax, NAdam and RAdam: against torch.optim over 50 steps
with every option, against plain NumPy formulas written here, state dicts, bad input."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from support.helpers import DEVICES

import minitorch_accel as mta
from minitorch_accel import optim
from minitorch_accel.core.tensor import Tensor
from minitorch_accel.serialization import load, save

SHAPES = [(3, 4), (5,)]
STEPS = 50

CONFIGS: dict[str, list[dict[str, Any]]] = {
    "RMSprop": [
        {},
        {"lr": 0.01, "alpha": 0.9, "eps": 1e-6},
        {"lr": 0.01, "momentum": 0.9},
        {"lr": 0.01, "centered": True},
        {"lr": 0.005, "momentum": 0.5, "centered": True, "weight_decay": 0.1},
        {"lr": 0.01, "weight_decay": 0.2, "maximize": True},
    ],
    "Adagrad": [
        {},
        {"lr": 0.1, "lr_decay": 0.05},
        {"lr": 0.1, "initial_accumulator_value": 0.5, "eps": 1e-6},
        {"lr": 0.1, "weight_decay": 0.1, "lr_decay": 0.01, "maximize": True},
    ],
    "Adadelta": [
        {},
        {"lr": 0.5, "rho": 0.8, "eps": 1e-5},
        {"lr": 1.0, "weight_decay": 0.1},
        {"lr": 1.0, "maximize": True},
    ],
    "Adamax": [
        {},
        {"lr": 0.01, "betas": (0.8, 0.99), "eps": 1e-6},
        {"lr": 0.01, "weight_decay": 0.1},
        {"lr": 0.01, "maximize": True},
    ],
    "NAdam": [
        {},
        {"lr": 0.01, "betas": (0.8, 0.99), "momentum_decay": 1e-2},
        {"lr": 0.01, "weight_decay": 0.1},
        {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True},
        {"lr": 0.01, "maximize": True, "eps": 1e-6},
    ],
    "RAdam": [
        {},
        {"lr": 0.01, "betas": (0.8, 0.9)},  # rho_t > 5 from step 6: both branches run
        {"lr": 0.01, "weight_decay": 0.1},
        {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True},
        {"lr": 0.01, "maximize": True, "eps": 1e-6},
    ],
}
CASES = [(name, config) for name, configs in CONFIGS.items() for config in configs]


def _noise(rng: np.random.Generator) -> list[list[np.ndarray]]:
    return [[rng.standard_normal(s) for s in SHAPES] for _ in range(STEPS)]


def _grad(p: np.ndarray, noise: np.ndarray) -> np.ndarray:
    """The gradient of a noisy quadratic at ``p``: the trajectory feeds back on itself."""
    return 0.5 * p + noise


def _ours(name: str, config: dict[str, Any], p0: list[np.ndarray], noise: Any) -> list[Any]:
    params = [mta.tensor(p, requires_grad=True) for p in p0]
    opt = getattr(optim, name)(
        [{"params": params[:1]}, {"params": params[1:], "lr": 0.02}], **config
    )
    for step_noise in noise:
        for p, n in zip(params, step_noise, strict=True):
            p.grad = mta.tensor(_grad(p.array, n))
        opt.step()
    return [p.detach().numpy() for p in params]


@pytest.mark.parametrize("name, config", CASES, ids=str)
def test_matches_torch_optim_over_50_steps(name: str, config: dict[str, Any]) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    p0 = [rng.standard_normal(s) for s in SHAPES]
    noise = _noise(rng)
    theirs = [torch.tensor(p, requires_grad=True) for p in p0]
    opt = getattr(torch.optim, name)(
        [{"params": theirs[:1]}, {"params": theirs[1:], "lr": 0.02}], **config
    )
    for step_noise in noise:
        for t, n in zip(theirs, step_noise, strict=True):
            t.grad = torch.tensor(_grad(t.detach().numpy(), n))
        opt.step()
    for got, want in zip(_ours(name, config, p0, noise), theirs, strict=True):
        np.testing.assert_allclose(got, want.detach().numpy(), rtol=1e-6, atol=1e-6)


# ---------------------------------------------------------------- plain-NumPy references
def _ref(  # noqa: C901  (one branch per rule, each written out)
    name: str, c: dict[str, Any], p: np.ndarray, grads: list[np.ndarray]
) -> np.ndarray:
    """The update rules as their papers and PyTorch's documentation state them, written
    apart from the package (one loop per rule, no shared code)."""
    p = p.copy()
    lr, wd, sign = c.get("lr"), c.get("weight_decay", 0.0), -1.0 if c.get("maximize") else 1.0
    z = np.zeros_like(p)
    m, v, u, mu_prod = z.copy(), z.copy(), z.copy(), 1.0
    if name == "Adagrad":
        v = np.full_like(p, c.get("initial_accumulator_value", 0.0))
    b1, b2 = c.get("betas", (0.9, 0.999))
    for t, grad in enumerate(grads, start=1):
        g = sign * grad
        if wd and not c.get("decoupled_weight_decay"):
            g = g + wd * p
        elif wd:
            p = p * (1 - lr * wd)
        if name == "RMSprop":
            a, eps, mom = c.get("alpha", 0.99), c.get("eps", 1e-8), c.get("momentum", 0.0)
            v = a * v + (1 - a) * g**2
            m = a * m + (1 - a) * g
            denom = np.sqrt(v - m**2 if c.get("centered") else v) + eps
            u = mom * u + g / denom
            p = p - lr * u
        elif name == "Adagrad":
            v = v + g**2
            p = p - lr / (1 + (t - 1) * c.get("lr_decay", 0.0)) * g / (np.sqrt(v) + c["eps"])
        elif name == "Adadelta":
            rho, eps = c.get("rho", 0.9), c.get("eps", 1e-6)
            v = rho * v + (1 - rho) * g**2
            dx = np.sqrt(u + eps) / np.sqrt(v + eps) * g
            u = rho * u + (1 - rho) * dx**2
            p = p - lr * dx
        elif name == "Adamax":
            m = b1 * m + (1 - b1) * g
            u = np.maximum(b2 * u, np.abs(g) + c.get("eps", 1e-8))
            p = p - lr / (1 - b1**t) * m / u
        elif name == "NAdam":
            psi = c.get("momentum_decay", 4e-3)
            mu_t = b1 * (1 - 0.5 * 0.96 ** (t * psi))
            mu_next = b1 * (1 - 0.5 * 0.96 ** ((t + 1) * psi))
            mu_prod *= mu_t
            m = b1 * m + (1 - b1) * g
            v = b2 * v + (1 - b2) * g**2
            m_hat = mu_next * m / (1 - mu_prod * mu_next) + (1 - mu_t) * g / (1 - mu_prod)
            p = p - lr * m_hat / (np.sqrt(v / (1 - b2**t)) + c.get("eps", 1e-8))
        elif name == "RAdam":
            m = b1 * m + (1 - b1) * g
            v = b2 * v + (1 - b2) * g**2
            m_hat = m / (1 - b1**t)
            rho_inf = 2 / (1 - b2) - 1
            rho = rho_inf - 2 * t * b2**t / (1 - b2**t)
            if rho > 5:
                ell = math.sqrt(1 - b2**t) / (np.sqrt(v) + c.get("eps", 1e-8))
                r = math.sqrt(
                    (rho - 4) * (rho - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho)
                )
                p = p - lr * m_hat * r * ell
            else:
                p = p - lr * m_hat
    return p


_DEFAULT_LR = {"RMSprop": 1e-2, "Adagrad": 1e-2, "Adadelta": 1.0, "Adamax": 2e-3}
_DEFAULT_LR |= {"NAdam": 2e-3, "RAdam": 1e-3}


def _with_defaults(name: str, config: dict[str, Any]) -> dict[str, Any]:
    """``config`` plus the defaults :func:`_ref` does not assume (PyTorch's)."""
    full = {"lr": _DEFAULT_LR[name], **config}
    if name == "Adagrad":
        full.setdefault("eps", 1e-10)
    return full


@pytest.mark.parametrize("name, config", CASES, ids=str)
def test_matches_numpy_reference(name: str, config: dict[str, Any]) -> None:
    rng = np.random.default_rng(1)
    p0 = rng.standard_normal((4, 3))
    grads = [rng.standard_normal((4, 3)) for _ in range(STEPS)]
    p = mta.tensor(p0, requires_grad=True)
    opt = getattr(optim, name)([p], **config)
    for g in grads:
        p.grad = mta.tensor(g)
        opt.step()
    want = _ref(name, _with_defaults(name, config), p0, grads)
    np.testing.assert_allclose(p.detach().numpy(), want, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", list(CONFIGS))
def test_float32_on_each_device(name: str, device: str) -> None:
    rng = np.random.default_rng(2)
    p0, g = rng.standard_normal(5), rng.standard_normal(5)
    p = mta.tensor(p0, dtype=np.float32, device=device, requires_grad=True)
    opt = getattr(optim, name)([p], **CONFIGS[name][-1])
    for _ in range(3):
        p.grad = mta.tensor(g, dtype=np.float32, device=device)
        opt.step()
    assert p.dtype == np.float32 and p.device == mta.Device(device)
    for value in opt.state[p].values():
        if isinstance(value, Tensor):
            assert value.dtype == np.float32 and value.device == mta.Device(device)
    want = _ref(name, _with_defaults(name, CONFIGS[name][-1]), p0, [g] * 3)
    np.testing.assert_allclose(p.detach().cpu().numpy(), want, rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------- state dicts
@pytest.mark.parametrize("name, config", [(n, c[-1]) for n, c in CONFIGS.items()], ids=str)
def test_state_dict_round_trip_continues_identically(
    name: str, config: dict[str, Any], tmp_path: Any
) -> None:
    rng = np.random.default_rng(3)
    p0 = rng.standard_normal(6)
    grads = [rng.standard_normal(6) for _ in range(8)]
    a = mta.tensor(p0, requires_grad=True)
    opt_a = getattr(optim, name)([a], **config)
    b = mta.tensor(p0, requires_grad=True)
    opt_b = getattr(optim, name)([b], **config)
    for g in grads[:4]:
        a.grad = b.grad = mta.tensor(g)
        opt_a.step()
        opt_b.step()
    save(opt_b.state_dict(), tmp_path / "opt.npz")
    b2 = mta.tensor(b.detach().numpy(), requires_grad=True)
    resumed = getattr(optim, name)([b2], lr=0.123)
    resumed.load_state_dict(load(tmp_path / "opt.npz"))
    assert resumed.param_groups[0]["lr"] == opt_a.param_groups[0]["lr"]
    for g in grads[4:]:
        a.grad = b2.grad = mta.tensor(g)
        opt_a.step()
        resumed.step()
    np.testing.assert_array_equal(a.detach().numpy(), b2.detach().numpy())


def test_state_names_follow_torch() -> None:
    torch = pytest.importorskip("torch")
    options = {"RMSprop": {"momentum": 0.9, "centered": True}}
    for name in CONFIGS:
        ours = mta.tensor(np.ones(3), requires_grad=True)
        theirs = torch.ones(3, dtype=torch.float64, requires_grad=True)
        opt = getattr(optim, name)([ours], **options.get(name, {}))
        topt = getattr(torch.optim, name)([theirs], **options.get(name, {}))
        ours.grad, theirs.grad = mta.tensor(np.ones(3)), torch.ones(3, dtype=torch.float64)
        opt.step()
        topt.step()
        assert set(opt.state[ours]) == set(topt.state[theirs]), name
        saved = {k for k in opt.state_dict()["param_groups"][0] if k != "params"}
        their_keys = set(topt.state_dict()["param_groups"][0])
        assert saved <= their_keys, (name, saved - their_keys)


def test_adagrad_state_exists_from_the_start() -> None:
    p = mta.tensor(np.ones(3), requires_grad=True)
    opt = optim.Adagrad([p], initial_accumulator_value=0.25)
    assert opt.state[p]["step"] == 0
    np.testing.assert_array_equal(opt.state[p]["sum"].numpy(), np.full(3, 0.25))


@pytest.mark.parametrize(
    "saver, loader",
    [("RMSprop", "Adam"), ("Adam", "RAdam"), ("NAdam", "SGD"), ("Adagrad", "Adadelta")],
)
def test_state_dict_of_another_optimizer_is_refused(saver: str, loader: str) -> None:
    p = mta.tensor(np.ones(3), requires_grad=True)
    src = getattr(optim, saver)([p], lr=0.1)
    p.grad = mta.tensor(np.ones(3))
    src.step()
    dst = getattr(optim, loader)([p], lr=0.1)
    with pytest.raises(ValueError, match=f"saved by a {saver} optimizer.*into {loader}"):
        dst.load_state_dict(src.state_dict())


def test_adam_and_adamw_state_dicts_mix() -> None:
    p = mta.tensor(np.ones(3), requires_grad=True)
    src = optim.AdamW([p], lr=0.1)
    p.grad = mta.tensor(np.ones(3))
    src.step()
    dst = optim.Adam([p])
    dst.load_state_dict(src.state_dict())
    assert dst.param_groups[0]["decoupled_weight_decay"] is True


def test_unnamed_state_dict_missing_hyper_parameters_is_refused() -> None:
    p = mta.tensor(np.ones(3), requires_grad=True)
    state = optim.SGD([p], lr=0.1).state_dict()
    del state["optimizer"]
    with pytest.raises(
        ValueError, match=r"saved by SGD .*, not by RMSprop: .* where RMSprop has \['alpha'"
    ):
        optim.RMSprop([p]).load_state_dict(state)


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "name, config, message",
    [
        ("RMSprop", {"lr": -1.0}, "Invalid learning rate: -1.0"),
        ("RMSprop", {"momentum": -0.1}, "Invalid momentum value"),
        ("RMSprop", {"alpha": -0.1}, "Invalid alpha value"),
        ("Adagrad", {"lr_decay": -1.0}, "Invalid lr_decay value"),
        ("Adagrad", {"initial_accumulator_value": -1.0}, "Invalid initial_accumulator_value"),
        ("Adadelta", {"rho": 1.5}, "Invalid rho value: 1.5"),
        ("Adamax", {"betas": (1.0, 0.9)}, "Invalid beta parameter at index 0"),
        ("NAdam", {"momentum_decay": -1.0}, "Invalid momentum_decay value"),
        ("RAdam", {"eps": -1.0}, "Invalid epsilon value"),
        ("RAdam", {"weight_decay": -1.0}, "Invalid weight_decay value"),
    ],
    ids=str,
)
def test_bad_hyper_parameters(name: str, config: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        getattr(optim, name)([mta.zeros(2, requires_grad=True)], **config)


@pytest.mark.parametrize("name", list(CONFIGS))
def test_skips_parameters_without_gradient_and_closure(name: str) -> None:
    a = mta.tensor(np.ones(2), requires_grad=True)
    b = mta.tensor(np.ones(2), requires_grad=True)
    opt = getattr(optim, name)([a, b], lr=0.1)

    def closure() -> Tensor:
        opt.zero_grad()
        loss = (a * a).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert float(loss.item()) == 2.0
    assert b.grad is None and (b.detach().numpy() == 1.0).all()
    assert (a.detach().numpy() < 1.0).all()
