"""The margin losses (:mod:`minitorch_accel.ops.margin_loss`) and their modules
(:mod:`minitorch_accel.nn.margin_loss`), against PyTorch and against NumPy.

- Values and gradients against PyTorch in float64 for every loss, setting and
  reduction, with random incoming gradients; 1-D inputs.
- The same against NumPy references written here from the formulas.
- Non-finite inputs and incoming gradients of 1 and inf: PyTorch's NaN, inf and 0.
- gradcheck and gradgradcheck in float64 away from the kinks, modules, errors.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import minitorch_accel as mta
from minitorch_accel import nn
from minitorch_accel.core.tensor import Tensor
from minitorch_accel.nn import functional as F
from minitorch_accel.utils.gradcheck import gradcheck, gradgradcheck

INF, NAN = math.inf, math.nan
GRID = [-INF, -2.0, -0.0, 0.0, 0.5, 2.0, INF, NAN]
REDUCTIONS = ("none", "sum", "mean")


@pytest.fixture(scope="module")
def torch() -> Any:
    """PyTorch, the oracle (the tests that need it skip where it is absent)."""
    return pytest.importorskip("torch")


def assert_same(ours: Any, theirs: Any, what: str) -> None:
    """Equal shapes; NaN, +inf, -inf at the same places; finite values close."""
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.shape == theirs.shape, f"{what}: shape {ours.shape} != {theirs.shape}"
    for test in (np.isnan, np.isposinf, np.isneginf):
        np.testing.assert_array_equal(test(ours), test(theirs), err_msg=f"{what}: {test.__name__}")
    finite = np.isfinite(theirs)
    np.testing.assert_allclose(ours[finite], theirs[finite], rtol=1e-10, atol=1e-12, err_msg=what)


def l1_distance(x: Any, y: Any) -> Any:
    return (x - y).abs().sum(-1)


# Each case: (id, name in F, kwargs, inputs maker (rng, nonfinite row or None) -> arrays,
# which arrays are differentiable). Integer arrays are targets.
def scores(rng: np.random.Generator, n: int = 5, c: int = 4) -> np.ndarray:
    return rng.uniform(-1.5, 1.5, (n, c))


def labels(rng: np.random.Generator, n: int = 5, c: int = 4) -> np.ndarray:
    return rng.integers(0, c, n)


def label_lists(rng: np.random.Generator, n: int = 5, c: int = 4) -> np.ndarray:
    out = np.full((n, c), -1)
    for i in range(n):
        k = int(rng.integers(0, c + 1))
        out[i, :k] = rng.permutation(c)[:k]
        out[i, min(k + 1, c - 1)] = int(rng.integers(0, c))  # after the -1: ignored
    out[0, :2] = [2, 2]  # a repeated class counts twice, as PyTorch
    return out


CASES: list[tuple[str, str, dict[str, Any], Callable[..., list[np.ndarray]]]] = [
    ("multi_margin", "multi_margin_loss", {}, lambda r: [scores(r), labels(r)]),
    (
        "multi_margin_p2",
        "multi_margin_loss",
        {"p": 2, "margin": 0.7},
        lambda r: [scores(r), labels(r)],
    ),
    (
        "multi_margin_weight",
        "multi_margin_loss",
        {"weight": np.array([0.5, 1.0, 2.0, 1.5]), "p": 2},
        lambda r: [scores(r), labels(r)],
    ),
    ("multilabel_margin", "multilabel_margin_loss", {}, lambda r: [scores(r), label_lists(r)]),
    (
        "multilabel_soft",
        "multilabel_soft_margin_loss",
        {"weight": np.array([0.5, 1.0, 2.0, 1.5])},
        lambda r: [scores(r), r.integers(0, 2, (5, 4)).astype(float)],
    ),
    ("triplet", "triplet_margin_loss", {}, lambda r: [scores(r) for _ in range(3)]),
    (
        "triplet_swap_p1",
        "triplet_margin_loss",
        {"swap": True, "p": 1.0, "margin": 2.0, "eps": 1e-3},
        lambda r: [scores(r) for _ in range(3)],
    ),
    (
        "triplet_distance",
        "triplet_margin_with_distance_loss",
        {"distance_function": l1_distance, "swap": True, "margin": 1.5},
        lambda r: [scores(r) for _ in range(3)],
    ),
    (
        "triplet_distance_default",
        "triplet_margin_with_distance_loss",
        {},
        lambda r: [scores(r) for _ in range(3)],
    ),
]


def run_both(
    torch: Any,
    name: str,
    kwargs: dict[str, Any],
    arrays: list[np.ndarray],
    reduction: str,
    incoming: Any,
) -> None:
    ours_in = [mta.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    theirs_in = [torch.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    ours_kw = {k: mta.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
    theirs_kw = {k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
    ours = getattr(F, name)(*ours_in, reduction=reduction, **ours_kw)
    theirs = getattr(torch.nn.functional, name)(*theirs_in, reduction=reduction, **theirs_kw)
    what = f"{name} {kwargs} {reduction}"
    assert_same(ours.detach().numpy(), theirs.detach().numpy(), what)
    g = np.broadcast_to(np.asarray(incoming, dtype=float), tuple(theirs.shape)).copy()
    ours.backward(mta.tensor(g))
    theirs.backward(torch.tensor(g))
    for k, (mine, their) in enumerate(zip(ours_in, theirs_in, strict=True)):
        if their.requires_grad and their.grad is not None:
            assert_same(mine.grad.numpy(), their.grad.numpy(), f"{what}: grad of arg {k}")


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_values_and_gradients_match_torch(torch: Any, case: Any, reduction: str) -> None:
    _, name, kwargs, make = case
    rng = np.random.default_rng(0)
    arrays = make(rng)
    incoming = rng.standard_normal(5) if reduction == "none" else rng.standard_normal()
    run_both(torch, name, kwargs, arrays, reduction, incoming)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_one_dimensional_inputs_match_torch(torch: Any, reduction: str) -> None:
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, 5)
    run_both(torch, "multi_margin_loss", {}, [x, np.array(3)], reduction, 1.5)
    run_both(torch, "multi_margin_loss", {"p": 2}, [x, np.array([1])], reduction, 1.5)
    run_both(torch, "multilabel_margin_loss", {}, [x, np.array([4, 0, -1, 2, 2])], reduction, 1.5)
    run_both(torch, "multilabel_soft_margin_loss", {}, [x, (x > 0).astype(float)], reduction, 1.5)
    run_both(torch, "triplet_margin_loss", {}, [x, x[::-1].copy(), -x], reduction, 1.5)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("incoming", [1.0, INF])
def test_non_finite_inputs_and_gradients_match_torch(
    torch: Any, case: Any, reduction: str, incoming: float
) -> None:
    """The grid's values in every column of the first input (the others finite)."""
    _, name, kwargs, _ = case
    rng = np.random.default_rng(2)
    n = len(GRID) * 4
    x = rng.uniform(-1, 1, (n, 4))
    for k, v in enumerate(GRID):
        x[4 * k : 4 * k + 4][np.arange(4), np.arange(4)] = v
    if name == "multi_margin_loss":
        arrays = [x, np.arange(n) % 3]
    elif name == "multilabel_margin_loss":
        arrays = [x, np.tile([[1, 3, -1, 0]], (n, 1))]
    elif name == "multilabel_soft_margin_loss":
        arrays = [x, rng.integers(0, 2, (n, 4)).astype(float)]
    else:
        arrays = [x, rng.uniform(-1, 1, (n, 4)), rng.uniform(-1, 1, (n, 4))]
    run_both(torch, name, kwargs, arrays, reduction, incoming)


# ------------------------------------------------------------------ NumPy references
def numpy_multi_margin(x: np.ndarray, y: np.ndarray, p: int, margin: float, w: Any) -> np.ndarray:
    out = np.zeros(len(x))
    for i, (row, label) in enumerate(zip(x, y, strict=True)):
        for j, v in enumerate(row):
            z = margin - row[label] + v
            if j != label and z > 0:
                out[i] += z**p * (1.0 if w is None else w[label])
    return out / x.shape[1]


def numpy_multilabel_margin(x: np.ndarray, t: np.ndarray) -> np.ndarray:
    out = np.zeros(len(x))
    for i, (row, lst) in enumerate(zip(x, t, strict=True)):
        listed = list(lst[: list(lst).index(-1)] if -1 in lst else lst)
        for j in listed:
            for k in range(len(row)):
                if k not in listed:
                    out[i] += max(0.0, 1 - (row[j] - row[k]))
    return out / x.shape[1]


def numpy_triplet(
    a: Any, p: Any, n: Any, margin: float, norm: float, eps: float, swap: bool
) -> Any:
    def dist(u: np.ndarray, v: np.ndarray) -> np.ndarray:
        return (np.abs(u - v + eps) ** norm).sum(-1) ** (1 / norm)

    d_neg = np.minimum(dist(a, n), dist(p, n)) if swap else dist(a, n)
    return np.maximum(margin + dist(a, p) - d_neg, 0)


def test_against_numpy_references() -> None:
    rng = np.random.default_rng(4)
    x, y, t = scores(rng, 6), labels(rng, 6), label_lists(rng, 6)
    w = np.array([0.5, 1.0, 2.0, 1.5])
    for p, margin, weight in [(1, 1.0, None), (2, 0.5, w)]:
        ours = F.multi_margin_loss(
            mta.tensor(x),
            mta.tensor(y),
            p,
            margin,
            None if weight is None else mta.tensor(weight),
            "none",
        )
        np.testing.assert_allclose(ours.numpy(), numpy_multi_margin(x, y, p, margin, weight))
    ours = F.multilabel_margin_loss(mta.tensor(x), mta.tensor(t), "none")
    np.testing.assert_allclose(ours.numpy(), numpy_multilabel_margin(x, t))
    q = rng.integers(0, 2, x.shape).astype(float)
    soft = -(q * np.log(1 / (1 + np.exp(-x))) + (1 - q) * np.log(1 / (1 + np.exp(x))))
    ours = F.multilabel_soft_margin_loss(mta.tensor(x), mta.tensor(q), mta.tensor(w), "none")
    np.testing.assert_allclose(ours.numpy(), (soft * w).mean(1))
    a, pos, neg = scores(rng, 6), scores(rng, 6), scores(rng, 6)
    for norm, swap in [(2.0, False), (1.0, True), (3.0, True)]:
        ours = F.triplet_margin_loss(
            mta.tensor(a), mta.tensor(pos), mta.tensor(neg), 1.2, norm, 1e-6, swap, "none"
        )
        expected = numpy_triplet(a, pos, neg, 1.2, norm, 1e-6, swap)
        np.testing.assert_allclose(ours.numpy(), expected, rtol=1e-12)


# ------------------------------------------------------------------ derivatives
def nudged_scores(rng: np.random.Generator) -> np.ndarray:
    """Scores whose pairwise differences stay away from the hinges' kinks (0, +-1, +-margin)."""
    return rng.permutation(4)[None, :] * 0.37 + np.arange(3)[:, None] * 0.11 + 0.05


@pytest.mark.parametrize(
    "fn",
    [
        lambda x, y, t, b, c: F.multi_margin_loss(x, y, reduction="none"),
        lambda x, y, t, b, c: F.multi_margin_loss(x, y, 2, 0.8, mta.tensor([1.0, 2, 3, 4])),
        lambda x, y, t, b, c: F.multilabel_margin_loss(x, t, "none") ** 2,
        lambda x, y, t, b, c: F.multilabel_soft_margin_loss(x, b, reduction="sum"),
        lambda x, y, t, b, c: F.triplet_margin_loss(x, b, c, margin=4.0, swap=True),
        lambda x, y, t, b, c: F.triplet_margin_with_distance_loss(
            x, b, c, distance_function=l1_distance, margin=4.0, reduction="none"
        ),
    ],
    ids=[
        "multi_margin",
        "multi_margin_p2_weight",
        "multilabel_margin",
        "multilabel_soft",
        "triplet_swap",
        "triplet_distance",
    ],
)
def test_gradcheck_and_gradgradcheck(fn: Callable[..., Tensor]) -> None:
    rng = np.random.default_rng(6)
    x = mta.tensor(nudged_scores(rng), requires_grad=True)
    y, t = mta.tensor([0, 3, 1]), mta.tensor([[1, 2, -1, 0]] * 3)
    b = mta.tensor(rng.uniform(0.2, 0.8, (3, 4)), requires_grad=True)
    c = mta.tensor(rng.uniform(-3, -2, (3, 4)), requires_grad=True)

    def f(xx: Tensor, bb: Tensor, cc: Tensor) -> Tensor:
        return fn(xx, y, t, bb, cc)

    assert gradcheck(f, [x, b, c])
    assert gradgradcheck(f, [x, b, c])


# ------------------------------------------------------------------ modules
MODULES = [
    ("MultiMarginLoss", {"p": 2, "margin": 0.5, "reduction": "sum"}, "labels"),
    ("MultiLabelMarginLoss", {"reduction": "none"}, "lists"),
    ("MultiLabelSoftMarginLoss", {}, "binary"),
    ("TripletMarginLoss", {"margin": 0.5, "p": 1.0, "swap": True}, "triplet"),
    ("TripletMarginWithDistanceLoss", {"margin": 0.5, "swap": True}, "triplet"),
]


@pytest.mark.parametrize("name,kwargs,kind", MODULES, ids=[m[0] for m in MODULES])
def test_modules_match_torch(torch: Any, name: str, kwargs: dict[str, Any], kind: str) -> None:
    rng = np.random.default_rng(8)
    x = scores(rng)
    second = {
        "labels": labels(rng),
        "lists": label_lists(rng),
        "binary": rng.integers(0, 2, x.shape).astype(float),
        "triplet": scores(rng),
    }[kind]
    arrays = [x, second] + ([scores(rng)] if kind == "triplet" else [])
    ours = getattr(nn, name)(**kwargs)(*(mta.tensor(a) for a in arrays))
    theirs = getattr(torch.nn, name)(**kwargs)(*(torch.tensor(a) for a in arrays))
    assert_same(ours.numpy(), theirs.numpy(), name)


def test_weights_are_buffers_as_in_torch(torch: Any) -> None:
    for name in ("MultiMarginLoss", "MultiLabelSoftMarginLoss"):
        ours = getattr(nn, name)(weight=mta.ones(4))
        theirs = getattr(torch.nn, name)(weight=torch.ones(4))
        assert sorted(ours.state_dict()) == sorted(theirs.state_dict()) == ["weight"]
        assert ours.to("cpu:1").weight.device == mta.device("cpu:1")


# ------------------------------------------------------------------ errors
X, Y = mta.zeros(3, 4), mta.tensor([0, 1, 2])
ERRORS = [
    (lambda: F.multi_margin_loss(X, Y, p=3), ValueError, "only p == 1 and p == 2"),
    (
        lambda: F.multi_margin_loss(X, mta.tensor([0, 4, 1])),
        IndexError,
        r"labels must be in \[0, 3\]",
    ),
    (
        lambda: F.multi_margin_loss(X, Y, weight=mta.ones(3)),
        ValueError,
        "one value for each of the 4",
    ),
    (
        lambda: F.multi_margin_loss(X, mta.tensor([0, 1])),
        ValueError,
        r"needs a target of shape \(3,\)",
    ),
    (lambda: F.multi_margin_loss(X, Y.float()), TypeError, "integer tensor"),
    (lambda: F.multi_margin_loss(X, Y, reduction="avg"), ValueError, "reduction must be one of"),
    (lambda: F.multilabel_margin_loss(X, mta.full((3, 4), -2)), IndexError, r"\[-1, 3\]"),
    (lambda: F.multilabel_margin_loss(X, Y), ValueError, r"needs a target of shape \(3, 4\)"),
    (lambda: F.multilabel_soft_margin_loss(X, mta.zeros(3, 5)), ValueError, "differ"),
    (lambda: F.triplet_margin_loss(X, X, mta.zeros(4)), ValueError, "same number of dims"),
    (
        lambda: F.triplet_margin_with_distance_loss(X, X, X, margin=0.0),
        ValueError,
        "margin must be > 0",
    ),
    (lambda: nn.TripletMarginLoss(margin=-1.0), ValueError, "margin must be > 0"),
    (lambda: F.multi_margin_loss(X, mta.tensor([0, 1, 2], device="cpu:1")), RuntimeError, "cpu:1"),
]


@pytest.mark.parametrize("call,error,message", ERRORS)
def test_errors(call: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        call()
