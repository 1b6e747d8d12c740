"""Optimizers (SGD, Adam, AdamW) against plain NumPy formulas and torch.optim; param
groups, state dicts, zero_grad, shared gradients, fast paths; gradient clipping."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from support.helpers import DEVICES

import minitorch_accel as mta
from minitorch_accel.backends.fast_paths import table
from minitorch_accel.core.tensor import Tensor
from minitorch_accel.optim import SGD, Adam, AdamW, Optimizer, clip_grad_norm_, clip_grad_value_
from minitorch_accel.optim.optimizer import required
from minitorch_accel.serialization import load, save

SHAPES = [(3, 4), (5,)]


def make_params(
    rng: np.random.Generator, dtype: Any = np.float64, device: str = "cpu"
) -> list[Tensor]:
    return [
        mta.tensor(rng.standard_normal(s), dtype=dtype, device=device, requires_grad=True)
        for s in SHAPES
    ]


def grad_sequence(rng: np.random.Generator, steps: int = 5) -> list[list[np.ndarray]]:
    return [[rng.standard_normal(s) for s in SHAPES] for _ in range(steps)]


def run(opt: Optimizer, params: list[Tensor], grads: list[list[np.ndarray]]) -> None:
    for step_grads in grads:
        for p, g in zip(params, step_grads, strict=True):
            p.grad = mta.tensor(g, dtype=p.dtype, device=p.device)
        opt.step()


def host(t: Tensor | None) -> np.ndarray:
    assert t is not None
    return np.asarray(t.detach())


# ---------------------------------------------------------------- plain-NumPy references
def ref_sgd(
    p0: np.ndarray,
    grads: list[np.ndarray],
    lr: float,
    momentum: float = 0.0,
    dampening: float = 0.0,
    nesterov: bool = False,
    weight_decay: float = 0.0,
    maximize: bool = False,
) -> np.ndarray:
    p, buf = p0.copy(), None
    for g in grads:
        d = (-g if maximize else g) + weight_decay * p
        if momentum:
            buf = d.copy() if buf is None else momentum * buf + (1 - dampening) * d
            d = d + momentum * buf if nesterov else buf
        p = p - lr * d
    return np.asarray(p)


def ref_adam(
    p0: np.ndarray,
    grads: list[np.ndarray],
    lr: float,
    betas: tuple[float, float] = (0.9, 0.999),
    eps: float = 1e-8,
    weight_decay: float = 0.0,
    amsgrad: bool = False,
    decoupled: bool = False,
    maximize: bool = False,
) -> np.ndarray:
    p = p0.copy()
    m, v, vmax = np.zeros_like(p), np.zeros_like(p), np.zeros_like(p)
    for t, g in enumerate(grads, start=1):
        g = -g if maximize else g
        if decoupled:
            p = p * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * p
        m = betas[0] * m + (1 - betas[0]) * g
        v = betas[1] * v + (1 - betas[1]) * g * g
        vmax = np.maximum(vmax, v)
        m_hat = m / (1 - betas[0] ** t)
        v_hat = (vmax if amsgrad else v) / (1 - betas[1] ** t)
        p = p - lr * m_hat / (np.sqrt(v_hat) + eps)
    return np.asarray(p)


SGD_CONFIGS = [
    {"lr": 0.1},
    {"lr": 0.1, "momentum": 0.9},
    {"lr": 0.05, "momentum": 0.8, "dampening": 0.3},
    {"lr": 0.05, "momentum": 0.9, "nesterov": True},
    {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01},
    {"lr": 0.1, "momentum": 0.5, "dampening": 0.1, "weight_decay": 0.1, "maximize": True},
    {"lr": 0.1, "weight_decay": 0.2},
    {"lr": 0.1, "maximize": True},
]
ADAM_CONFIGS = [
    {"lr": 0.01},
    {"lr": 0.1, "betas": (0.8, 0.99), "eps": 1e-6},
    {"lr": 0.01, "amsgrad": True},
    {"lr": 0.01, "weight_decay": 0.1},
    {"lr": 0.01, "weight_decay": 0.1, "amsgrad": True, "maximize": True},
]


@pytest.mark.parametrize("config", SGD_CONFIGS, ids=str)
@pytest.mark.parametrize("device", DEVICES)
def test_sgd_matches_numpy_formulas(
    config: dict[str, Any], device: str, rng: np.random.Generator
) -> None:
    params = make_params(rng, device=device)
    start = [host(p).copy() for p in params]
    grads = grad_sequence(rng)
    run(SGD(params, **config), params, grads)
    for i, p in enumerate(params):
        expected = ref_sgd(start[i], [g[i] for g in grads], **config)
        np.testing.assert_allclose(host(p), expected, rtol=1e-12, atol=1e-12)


def test_sgd_momentum_by_hand() -> None:
    w = mta.tensor([1.0], dtype=np.float64, requires_grad=True)
    opt = SGD([w], lr=0.1, momentum=0.9)
    seen = []
    for g in (1.0, 2.0, -1.0):
        w.grad = mta.tensor([g], dtype=np.float64)
        opt.step()
        seen.append(w.item())
    # buf: 1 -> 0.9 + 2 = 2.9 -> 2.61 - 1 = 1.61 ; w: 0.9 -> 0.61 -> 0.449
    np.testing.assert_allclose(seen, [0.9, 0.61, 0.449], rtol=1e-12)
    np.testing.assert_allclose(host(opt.state[w]["momentum_buffer"]), [1.61], rtol=1e-12)


@pytest.mark.parametrize("config", ADAM_CONFIGS, ids=str)
@pytest.mark.parametrize("cls", [Adam, AdamW])
@pytest.mark.parametrize("device", DEVICES)
def test_adam_matches_numpy_formulas(
    config: dict[str, Any], cls: type, device: str, rng: np.random.Generator
) -> None:
    params = make_params(rng, device=device)
    start = [host(p).copy() for p in params]
    grads = grad_sequence(rng)
    run(cls(params, **config), params, grads)
    decoupled = cls is AdamW
    ref_config = dict(config)
    if decoupled:
        ref_config.setdefault("weight_decay", 1e-2)
    for i, p in enumerate(params):
        expected = ref_adam(start[i], [g[i] for g in grads], decoupled=decoupled, **ref_config)
        np.testing.assert_allclose(host(p), expected, rtol=1e-10, atol=1e-12)


def test_adam_first_step_by_hand() -> None:
    # Step 1 of Adam moves every weight by lr * sign(g) (up to eps): m_hat = g, v_hat = g^2.
    w = mta.tensor([1.0, -2.0, 3.0], dtype=np.float64, requires_grad=True)
    w.grad = mta.tensor([0.5, -4.0, 1e-3], dtype=np.float64)
    Adam([w], lr=0.1, eps=0.0).step()
    np.testing.assert_allclose(host(w), [0.9, -1.9, 2.9], rtol=1e-12)


@pytest.mark.parametrize(
    "name, config",
    [("SGD", c) for c in SGD_CONFIGS]
    + [("Adam", c) for c in ADAM_CONFIGS]
    + [("AdamW", {"lr": 0.01}), ("AdamW", {"lr": 0.05, "weight_decay": 0.3, "amsgrad": True})],
    ids=str,
)
def test_matches_torch_optim(name: str, config: dict[str, Any], rng: np.random.Generator) -> None:
    torch = pytest.importorskip("torch")
    params = make_params(rng)
    theirs = [torch.tensor(host(p), requires_grad=True) for p in params]
    grads = grad_sequence(rng)
    run({"SGD": SGD, "Adam": Adam, "AdamW": AdamW}[name](params, **config), params, grads)
    opt = getattr(torch.optim, name)(theirs, **config)
    for step_grads in grads:
        for t, g in zip(theirs, step_grads, strict=True):
            t.grad = torch.tensor(g)
        opt.step()
    for p, t in zip(params, theirs, strict=True):
        np.testing.assert_allclose(host(p), t.detach().numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_float32_params_stay_float32_on_their_device(device: str, rng: np.random.Generator) -> None:
    params = make_params(rng, np.float32, device)
    opt = Adam(params, lr=0.01, amsgrad=True)
    run(opt, params, grad_sequence(rng, 2))
    for p in params:
        assert p.dtype == np.float32 and p.device == mta.Device(device)
        for name in ("exp_avg", "exp_avg_sq", "max_exp_avg_sq"):
            buf = opt.state[p][name]
            assert buf.dtype == np.float32 and buf.device is p.device


def test_param_groups_use_their_own_hyper_parameters(rng: np.random.Generator) -> None:
    a, b = make_params(rng)
    a0, b0 = host(a).copy(), host(b).copy()
    groups: list[dict[str, Any]] = [{"params": [a]}, {"params": b, "lr": 0.01, "momentum": 0.5}]
    opt = SGD(groups, lr=0.1)
    assert opt.param_groups[1]["nesterov"] is False  # filled from the defaults
    grads = grad_sequence(rng, 3)
    run(opt, [a, b], grads)
    np.testing.assert_allclose(host(a), ref_sgd(a0, [g[0] for g in grads], 0.1), rtol=1e-12)
    expected_b = ref_sgd(b0, [g[1] for g in grads], 0.01, momentum=0.5)
    np.testing.assert_allclose(host(b), expected_b, rtol=1e-12)


def test_add_param_group_and_parameters_without_grad(rng: np.random.Generator) -> None:
    a, b = make_params(rng)
    b0 = host(b).copy()
    opt = Adam([a], lr=0.1)
    opt.add_param_group({"params": [b], "lr": 0.5})
    assert opt.param_groups[1]["lr"] == 0.5 and opt.param_groups[1]["betas"] == (0.9, 0.999)
    a.grad = mta.ones_like(a)
    opt.step()  # b has no gradient: untouched, and no state made for it
    np.testing.assert_array_equal(host(b), b0)
    assert b not in opt.state and a in opt.state
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [a]})


def test_step_closure_runs_with_grad_enabled() -> None:
    w = mta.tensor([2.0], dtype=np.float64, requires_grad=True)
    opt = SGD([w], lr=0.25)

    def closure() -> Tensor:
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    with mta.no_grad():
        loss = opt.step(closure)
    assert loss.item() == 4.0
    assert w.item() == pytest.approx(2.0 - 0.25 * 4.0)


def test_zero_grad_never_writes_into_a_gradient() -> None:
    a = mta.tensor([1.0, 2.0], requires_grad=True)
    b = mta.tensor([3.0, 4.0], requires_grad=True)
    (a + b).sum().backward()
    shared = a.grad
    assert shared is not None
    opt = SGD([a, b], lr=0.1)
    opt.zero_grad(set_to_none=False)
    assert a.grad is not shared and host(a.grad).tolist() == [0.0, 0.0]
    assert host(shared).tolist() == [1.0, 1.0]
    opt.zero_grad()
    assert a.grad is None and b.grad is None


@pytest.mark.parametrize(
    "make",
    [
        lambda ps: SGD(ps, lr=0.1, momentum=0.9, weight_decay=0.1, maximize=True),
        lambda ps: SGD(ps, lr=0.1, momentum=0.9, dampening=0.5),
        lambda ps: Adam(ps, lr=0.1, weight_decay=0.1, amsgrad=True, maximize=True),
    ],
)
def test_shared_gradient_is_read_only(make: Callable[[list[Tensor]], Optimizer]) -> None:
    a = mta.tensor([1.0, -2.0], dtype=np.float64, requires_grad=True)
    b = mta.tensor([0.5, 3.0], dtype=np.float64, requires_grad=True)
    shared = mta.tensor([0.25, -1.0], dtype=np.float64)
    opt = make([a, b])
    for _ in range(3):
        a.grad = b.grad = shared
        opt.step()
    np.testing.assert_array_equal(host(shared), [0.25, -1.0])


def test_backend_fast_step_replaces_the_update(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[Any, ...]] = []

    def fast_sgd(device: Any, group: dict[str, Any], params: Any, grads: Any, states: Any) -> None:
        calls.append((device, group["lr"], group["momentum"], len(params), states))
        for param, grad in zip(params, grads, strict=True):
            param -= 2 * group["lr"] * grad  # a recognizably different update

    monkeypatch.setitem(table("cpu"), "SGD", fast_sgd)
    w = mta.tensor([1.0], device="cpu:5", requires_grad=True)
    w.grad = mta.tensor([1.0], device="cpu:5")
    opt = SGD([w], lr=0.1, momentum=0.9)
    opt.step()
    assert calls == [(mta.Device("cpu:5"), 0.1, 0.9, 1, [{}])]
    assert w.item() == pytest.approx(0.8)
    with mta.fast_paths(False):  # the reference: 0.8 - 0.1 * 1.0
        opt.step()
    assert len(calls) == 1
    assert w.item() == pytest.approx(0.7)


# ---------------------------------------------------------------- state dicts
@pytest.mark.parametrize(
    "make",
    [
        lambda ps: SGD(ps, lr=0.1, momentum=0.9, nesterov=True),
        lambda ps: Adam(ps, lr=0.01, amsgrad=True),
        lambda ps: AdamW([{"params": ps[:1]}, {"params": ps[1:], "lr": 0.1}], lr=0.01),
    ],
)
@pytest.mark.parametrize("through_file", [False, True])
def test_state_dict_round_trip_continues_identically(
    make: Callable[[list[Tensor]], Optimizer],
    through_file: bool,
    rng: np.random.Generator,
    tmp_path: Any,
) -> None:
    params = make_params(rng)
    opt = make(params)
    grads = grad_sequence(rng, 6)
    run(opt, params, grads[:3])
    copies = [mta.tensor(host(p), dtype=np.float64, requires_grad=True) for p in params]
    state = opt.state_dict()
    assert sorted(state["state"]) == [0, 1]
    if through_file:
        save(state, tmp_path / "opt.npz")
        state = load(tmp_path / "opt.npz")
    resumed = make(copies)
    resumed.load_state_dict(state)
    run(opt, params, grads[3:])
    run(resumed, copies, grads[3:])
    for p, c in zip(params, copies, strict=True):
        np.testing.assert_array_equal(host(p), host(c))
    for key, value in opt.state[params[0]].items():  # buffers are copies, not shared
        if isinstance(value, Tensor):
            assert resumed.state[copies[0]][key] is not value


def test_load_state_dict_moves_state_to_the_parameter_device(rng: np.random.Generator) -> None:
    src = make_params(rng, np.float64)
    opt = SGD(src, lr=0.1, momentum=0.9)
    run(opt, src, grad_sequence(rng, 1))
    dst = make_params(rng, np.float32, "cpu:2")
    resumed = SGD(dst, lr=0.1, momentum=0.9)
    resumed.load_state_dict(opt.state_dict())
    buf = resumed.state[dst[0]]["momentum_buffer"]
    assert buf.device == mta.Device("cpu:2") and buf.dtype == np.float32
    np.testing.assert_allclose(host(buf), host(opt.state[src[0]]["momentum_buffer"]), rtol=1e-6)


def test_load_state_dict_errors(rng: np.random.Generator) -> None:
    params = make_params(rng)
    opt = SGD(params, lr=0.1, momentum=0.9)
    run(opt, params, grad_sequence(rng, 1))
    state = opt.state_dict()
    with pytest.raises(ValueError, match=r"has 1 parameter group\(s\), but this optimizer has 2"):
        SGD([{"params": params[:1]}, {"params": params[1:]}], lr=0.1).load_state_dict(state)
    with pytest.raises(ValueError, match="doesn't match the size"):
        SGD(params[:1], lr=0.1).load_state_dict(
            {"state": {}, "param_groups": [{**state["param_groups"][0], "params": [0, 1]}]}
        )
    wrong = make_params(rng)[::-1]  # shapes swapped
    with pytest.raises(ValueError, match=r"'momentum_buffer' of parameter 0 has shape \(3, 4\)"):
        SGD(wrong, lr=0.1, momentum=0.9).load_state_dict(state)
    bad = {"state": {7: {}}, "param_groups": state["param_groups"]}
    with pytest.raises(ValueError, match="parameter 7"):
        SGD(params, lr=0.1).load_state_dict(bad)
    with pytest.raises(ValueError, match="'state' and 'param_groups'"):
        opt.load_state_dict({"state": {}})


# ---------------------------------------------------------------- argument checks
@pytest.mark.parametrize(
    "make, message",
    [
        (lambda p: SGD(p, lr=-1), "Invalid learning rate: -1"),
        (lambda p: SGD(p, lr=0.1, momentum=-0.5), "Invalid momentum value: -0.5"),
        (lambda p: SGD(p, lr=0.1, weight_decay=-1e-4), "Invalid weight_decay value"),
        (lambda p: SGD(p, lr=0.1, nesterov=True), "Nesterov momentum requires"),
        (lambda p: SGD(p, momentum=0.9, dampening=0.1, nesterov=True), "zero dampening"),
        (lambda p: Adam(p, lr=-0.1), "Invalid learning rate: -0.1"),
        (lambda p: Adam(p, eps=-1.0), "Invalid epsilon value: -1.0"),
        (lambda p: Adam(p, betas=(1.0, 0.9)), "Invalid beta parameter at index 0: 1.0"),
        (lambda p: Adam(p, betas=(0.9, -0.1)), "Invalid beta parameter at index 1"),
        (lambda p: AdamW(p, weight_decay=-1), "Invalid weight_decay value: -1"),
        (lambda p: SGD([], lr=0.1), "empty parameter list"),
        (lambda p: SGD([p[0], p[0]], lr=0.1), "appears twice"),
        (lambda p: SGD([{"params": p}, {"params": p}], lr=0.1), "more than one parameter group"),
        (lambda p: SGD([p[0] * 2], lr=0.1), "non-leaf"),
        (lambda p: Optimizer(p, {"lr": required}), "required optimization parameter lr"),
    ],
)
def test_invalid_arguments(
    make: Callable[[list[Tensor]], Any], message: str, rng: np.random.Generator
) -> None:
    with pytest.raises(ValueError, match=message):
        make(make_params(rng))


def test_invalid_parameter_containers(rng: np.random.Generator) -> None:
    p = make_params(rng)[0]
    with pytest.raises(TypeError, match="single Tensor"):
        SGD(p, lr=0.1)
    with pytest.raises(TypeError, match="ordering of tensors in sets"):
        SGD([{"params": {p}}], lr=0.1)
    with pytest.raises(TypeError, match=r"params\[1\] is a ndarray"):
        SGD([p, np.zeros(3)], lr=0.1)  # type: ignore[arg-type]


def test_gradient_with_wrong_shape_or_device() -> None:
    w = mta.zeros(3, requires_grad=True)
    opt = SGD([w], lr=0.1)
    w.grad = mta.zeros(4)
    with pytest.raises(RuntimeError, match=r"shape \(3,\) has a gradient of shape \(4,\)"):
        opt.step()
    w.grad = mta.zeros(3, device="cpu:1")
    with pytest.raises(RuntimeError, match="parameter on cpu has its gradient on cpu:1"):
        opt.step()


def test_trains_a_module_when_nn_is_there(rng: np.random.Generator) -> None:
    nn = pytest.importorskip("minitorch_accel.nn")
    if not hasattr(nn, "Linear"):
        pytest.skip("minitorch_accel.nn has no Linear yet")
    mta.manual_seed(0)
    model = nn.Linear(3, 1)
    x = mta.tensor(rng.standard_normal((32, 3)), dtype=np.float32)
    y = x @ mta.tensor([[1.0], [-2.0], [0.5]]) + 0.3
    opt = Adam(model.parameters(), lr=0.05)
    losses = []
    for _ in range(150):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 1e-3 * losses[0]


# ---------------------------------------------------------------- clipping
def test_clip_grad_norm_scales_to_max_norm(rng: np.random.Generator) -> None:
    params = make_params(rng)
    grads = grad_sequence(rng, 1)[0]
    for p, g in zip(params, grads, strict=True):
        p.grad = mta.tensor(g)
    total = math.sqrt(sum(float((g**2).sum()) for g in grads))
    norm = clip_grad_norm_(params, max_norm=0.5)
    assert norm.shape == () and norm.item() == pytest.approx(total, rel=1e-12)
    for p, g in zip(params, grads, strict=True):
        np.testing.assert_allclose(host(p.grad), g * 0.5 / (total + 1e-6), rtol=1e-12)


def test_clip_grad_norm_below_max_and_inf_norm(rng: np.random.Generator) -> None:
    w = mta.tensor([1.0, 1.0, 1.0], dtype=np.float64, requires_grad=True)
    w.grad = mta.tensor([0.1, -0.3, 0.2], dtype=np.float64)
    assert clip_grad_norm_(w, max_norm=10.0).item() == pytest.approx(math.sqrt(0.14))
    np.testing.assert_allclose(host(w.grad), [0.1, -0.3, 0.2])
    norm = clip_grad_norm_([w], max_norm=0.15, norm_type=math.inf)
    assert norm.item() == pytest.approx(0.3)
    np.testing.assert_allclose(host(w.grad), [0.05, -0.15, 0.1], rtol=1e-5)
    w.grad = mta.tensor([3.0, -4.0, 0.0], dtype=np.float64)
    assert clip_grad_norm_([w], 100.0, norm_type=1).item() == pytest.approx(7.0)
    assert clip_grad_norm_([w], 100.0, norm_type=3).item() == pytest.approx(91 ** (1 / 3))


def test_clip_grad_norm_with_a_shared_gradient() -> None:
    a = mta.tensor([1.0, 2.0], dtype=np.float64, requires_grad=True)
    b = mta.tensor([3.0, 4.0], dtype=np.float64, requires_grad=True)
    shared = mta.tensor([3.0, 4.0], dtype=np.float64)
    a.grad = b.grad = shared
    norm = clip_grad_norm_([a, b], max_norm=1.0)
    assert norm.item() == pytest.approx(5.0 * math.sqrt(2))  # counted once per parameter
    np.testing.assert_array_equal(host(shared), [3.0, 4.0])  # never scaled in place
    assert a.grad is b.grad
    expected = np.array([3.0, 4.0]) / (5.0 * math.sqrt(2) + 1e-6)
    np.testing.assert_allclose(host(a.grad), expected)


def test_clip_grad_norm_across_devices() -> None:
    a = mta.zeros(2, device="cpu:1", requires_grad=True)
    b = mta.zeros(1, device="cpu:2", dtype=np.float64, requires_grad=True)
    a.grad = mta.tensor([3.0, 0.0], device="cpu:1")
    b.grad = mta.tensor([4.0], device="cpu:2", dtype=np.float64)
    norm = clip_grad_norm_([a, b], max_norm=2.5)
    assert norm.device is mta.Device("cpu:1") and norm.item() == pytest.approx(5.0)
    assert a.grad.device is a.device and a.grad.dtype == np.float32
    assert b.grad.device is b.device and b.grad.dtype == np.float64
    np.testing.assert_allclose(host(a.grad), [1.5, 0.0], rtol=1e-6)
    np.testing.assert_allclose(host(b.grad), [2.0], rtol=1e-6)


def test_clip_grad_norm_errors_and_empty() -> None:
    w = mta.zeros(2, requires_grad=True)
    assert clip_grad_norm_([w], 1.0).item() == 0.0  # no gradient at all
    w.grad = mta.tensor([float("inf"), 1.0])
    with pytest.raises(RuntimeError, match="non-finite"):
        clip_grad_norm_([w], 1.0, error_if_nonfinite=True)
    with pytest.raises(ValueError, match="norm_type must be positive"):
        clip_grad_norm_([w], 1.0, norm_type=0)


def test_clip_grad_norm_matches_torch(rng: np.random.Generator) -> None:
    torch = pytest.importorskip("torch")
    params = make_params(rng)
    theirs = [torch.tensor(host(p), requires_grad=True) for p in params]
    for p, t, g in zip(params, theirs, grad_sequence(rng, 1)[0], strict=True):
        p.grad, t.grad = mta.tensor(g), torch.tensor(g)
    for norm_type in (2.0, 1.0, math.inf):
        ours = clip_grad_norm_(params, 0.7, norm_type=norm_type)
        ref = torch.nn.utils.clip_grad_norm_(theirs, 0.7, norm_type=norm_type)
        assert ours.item() == pytest.approx(ref.item(), rel=1e-10)
        for p, t in zip(params, theirs, strict=True):
            np.testing.assert_allclose(host(p.grad), t.grad.numpy(), rtol=1e-10)


def test_clip_grad_value_replaces_gradients() -> None:
    a = mta.zeros(3, requires_grad=True)
    b = mta.zeros(3, requires_grad=True)
    shared = mta.tensor([-5.0, 0.5, 2.0])
    a.grad = b.grad = shared
    clip_grad_value_([a, b], 1.0)
    assert host(a.grad).tolist() == [-1.0, 0.5, 1.0]
    assert a.grad is b.grad and host(shared).tolist() == [-5.0, 0.5, 2.0]
    with pytest.raises(ValueError, match="non-negative"):
        clip_grad_value_([a], -1.0)
