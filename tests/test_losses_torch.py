"""The losses that reduce a per-element term (:mod:`minitorch_accel.ops.pointwise_loss`)
and their modules (:mod:`minitorch_accel.nn.loss`), against PyTorch and against NumPy.

- Values and gradients (the input's, and the target's and weight's where PyTorch gives
  them) against PyTorch for every loss and reduction, in float32 and float64, on
  several shapes, with random incoming gradients.
- The first six against NumPy references written here from the formulas, gradients at
  the kinks included (L1 at 0, smooth L1 and Huber at the boundary, BCE's clamp), on
  every device.
- Non-finite inputs and incoming gradients of 1 and inf: PyTorch's NaN, inf and 0, bit
  pattern for bit pattern.
- gradcheck and gradgradcheck in float64 away from the kinks, the modules, the errors.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from support.helpers import to_host

import minitorch_accel as mta
from minitorch_accel.core.tensor import Tensor
from minitorch_accel.nn import loss as nn_loss
from minitorch_accel.ops import pointwise_loss as PL
from minitorch_accel.utils.gradcheck import gradcheck, gradgradcheck

INF, NAN = math.inf, math.nan
GRID = [-INF, -2.0, -1.0, -0.0, 0.0, 0.5, 1.0, 2.0, INF, NAN]
REDUCTIONS = ("none", "mean", "sum")


@pytest.fixture(scope="module")
def torch() -> Any:
    """PyTorch, the oracle (the tests that need it skip where it is absent)."""
    return pytest.importorskip("torch")


# ------------------------------------------------------------------ comparing results
def assert_same(ours: np.ndarray, theirs: np.ndarray, dtype: str, what: str) -> None:
    """Equal shapes; NaN, +inf and -inf at the same places; finite values close."""
    assert ours.shape == theirs.shape, f"{what}: shape {ours.shape} != {theirs.shape}"
    for test in (np.isnan, np.isposinf, np.isneginf):
        np.testing.assert_array_equal(test(ours), test(theirs), err_msg=f"{what}: {test.__name__}")
    finite = np.isfinite(theirs)
    rtol, atol = (1e-10, 1e-12) if dtype == "float64" else (2e-5, 2e-6)
    np.testing.assert_allclose(ours[finite], theirs[finite], rtol=rtol, atol=atol, err_msg=what)


def cast(a: np.ndarray, dtype: str) -> np.ndarray:
    """Float arrays in ``dtype``; integer arrays (class-like targets) as they are."""
    return a.astype(dtype) if a.dtype.kind == "f" else a


def nudge(values: np.ndarray, kinks: tuple[float, ...], gap: float = 0.05) -> np.ndarray:
    """``values`` moved at least ``gap`` away from each kink (for finite differences)."""
    out = values.copy()
    for k in kinks:
        near = np.abs(out - k) < gap
        out[near] = k + np.where(out[near] >= k, gap, -gap)
    return out


@dataclass(frozen=True)
class Case:
    """One loss with one setting: ours and PyTorch's, how to draw valid inputs (away from
    kinks), and which inputs PyTorch differentiates (we compare gradients there)."""

    id: str
    ours: Callable[..., Tensor]  # (*tensors, reduction)
    theirs: Callable[..., Any]  # (torch.nn.functional, *tensors, reduction)
    make: Callable[[np.random.Generator, tuple[int, ...]], list[np.ndarray]]
    grads: tuple[bool, ...]
    shapes: tuple[tuple[int, ...], ...] = ((7,), (3, 4), (2, 3, 4))
    reductions: tuple[str, ...] = REDUCTIONS


def run_both(
    torch: Any, case: Case, arrays: list[np.ndarray], reduction: str, dtype: str, incoming: Any
) -> None:
    """Run ``case`` here and in PyTorch, backward with ``incoming`` (a number or an
    array of the output's shape), and compare the outputs and the gradients."""
    ours_in = [
        mta.tensor(cast(a, dtype), requires_grad=g) for a, g in zip(arrays, case.grads, strict=True)
    ]
    theirs_in = [
        torch.tensor(cast(a, dtype), requires_grad=g)
        for a, g in zip(arrays, case.grads, strict=True)
    ]
    with warnings.catch_warnings():  # kl_div's "mean" warns in both
        warnings.simplefilter("ignore")
        ours = case.ours(*ours_in, reduction)
        theirs = case.theirs(torch.nn.functional, *theirs_in, reduction)
    what = f"{case.id} {dtype} reduction={reduction}"
    assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch."), what
    assert_same(to_host(ours), theirs.detach().numpy(), dtype, f"{what}: value")
    grad_out = np.broadcast_to(np.asarray(incoming, dtype=dtype), ours.shape).copy()
    ours.backward(mta.tensor(grad_out))
    theirs.backward(torch.tensor(grad_out))
    for k, (mine, their) in enumerate(zip(ours_in, theirs_in, strict=True)):
        if case.grads[k]:
            assert_same(mine.grad.numpy(), their.grad.numpy(), dtype, f"{what}: grad of arg {k}")


# ------------------------------------------------------------------ the cases
def pair(kinks: tuple[float, ...] = (0.0,)) -> Callable[..., list[np.ndarray]]:
    """An input and a target whose difference stays away from ``kinks``."""

    def make(rng: np.random.Generator, shape: tuple[int, ...]) -> list[np.ndarray]:
        target = rng.uniform(-2, 2, shape)
        return [target + nudge(rng.uniform(-3, 3, shape), kinks), target]

    return make


def with_weight(make: Callable[..., list[np.ndarray]], last_dim_only: bool = False) -> Any:
    """``make``'s arrays and a positive weight (of the last dim only: broadcast)."""

    def out(rng: np.random.Generator, shape: tuple[int, ...]) -> list[np.ndarray]:
        return [*make(rng, shape), rng.uniform(0.1, 2.0, shape[-1:] if last_dim_only else shape)]

    return out


def probabilities(rng: np.random.Generator, shape: tuple[int, ...]) -> list[np.ndarray]:
    return [rng.uniform(0.02, 0.98, shape), rng.uniform(0, 1, shape)]


def logits(rng: np.random.Generator, shape: tuple[int, ...]) -> list[np.ndarray]:
    return [3 * rng.standard_normal(shape), rng.uniform(0, 1, shape)]


def logits_weighted(rng: np.random.Generator, shape: tuple[int, ...]) -> list[np.ndarray]:
    per_class = shape[-1:]
    return [*logits(rng, shape), rng.uniform(0.1, 2, per_class), rng.uniform(0.5, 3, per_class)]


def log_probs(rng: np.random.Generator, shape: tuple[int, ...]) -> list[np.ndarray]:
    return [rng.uniform(-4, 0, shape), rng.uniform(0.05, 1, shape)]


def log_log(rng: np.random.Generator, shape: tuple[int, ...]) -> list[np.ndarray]:
    return [rng.uniform(-4, 0, shape), rng.uniform(-4, 0, shape)]


def signs(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return np.where(rng.uniform(size=shape) < 0.5, -1, 1)


def soft_margin(rng: np.random.Generator, shape: tuple[int, ...]) -> list[np.ndarray]:
    return [2 * rng.standard_normal(shape), signs(rng, shape).astype(np.float64)]


def rows(rng: np.random.Generator, shape: tuple[int, ...]) -> list[np.ndarray]:
    return [rng.standard_normal(shape), rng.standard_normal(shape), signs(rng, shape[:-1])]


def ranking(rng: np.random.Generator, shape: tuple[int, ...]) -> list[np.ndarray]:
    a, target = rng.standard_normal(shape), signs(rng, shape).astype(np.float64)
    gap = nudge(rng.uniform(-2, 2, shape), (0.3,))  # -target (a - b) + 0.3 away from 0
    return [a, a - target * (0.3 - gap), target]


def hinge(rng: np.random.Generator, shape: tuple[int, ...]) -> list[np.ndarray]:
    return [nudge(rng.uniform(-1, 3, shape), (0.0, 1.0)), signs(rng, shape)]


def counts(rng: np.random.Generator, shape: tuple[int, ...]) -> list[np.ndarray]:
    return [rng.standard_normal(shape), rng.poisson(2.0, shape).astype(np.float64)]


def rates(rng: np.random.Generator, shape: tuple[int, ...]) -> list[np.ndarray]:
    # targets at 0.3 (no Stirling term) and > 1 (with one); away from 1, its step
    return [rng.uniform(0.2, 3, shape), rng.choice([0.3, 2.0, 3.0, 4.5], shape)]


def gaussian(rng: np.random.Generator, shape: tuple[int, ...]) -> list[np.ndarray]:
    return [rng.standard_normal(shape), rng.standard_normal(shape), rng.uniform(0.2, 2, shape)]


def gaussian_rows(rng: np.random.Generator, shape: tuple[int, ...]) -> list[np.ndarray]:
    return [rng.standard_normal(shape), rng.standard_normal(shape), rng.uniform(0.2, 2, shape[:-1])]


CASES = [
    Case(
        "l1",
        lambda x, y, r: PL.l1_loss(x, y, r),
        lambda F, x, y, r: F.l1_loss(x, y, reduction=r),
        pair(),
        (True, True),
    ),
    Case(
        "l1_weight",
        lambda x, y, w, r: PL.l1_loss(x, y, r, weight=w),
        lambda F, x, y, w, r: F.l1_loss(x, y, reduction=r, weight=w),
        with_weight(pair()),
        (True, True, True),
    ),
    Case(
        "smooth_l1",
        lambda x, y, r: PL.smooth_l1_loss(x, y, r, beta=0.7),
        lambda F, x, y, r: F.smooth_l1_loss(x, y, reduction=r, beta=0.7),
        pair((-0.7, 0.7)),
        (True, True),
    ),
    Case(
        "smooth_l1_beta0",
        lambda x, y, r: PL.smooth_l1_loss(x, y, r, beta=0.0),
        lambda F, x, y, r: F.smooth_l1_loss(x, y, reduction=r, beta=0.0),
        pair(),
        (True, True),
    ),
    Case(
        "huber",
        lambda x, y, r: PL.huber_loss(x, y, r, delta=1.3),
        lambda F, x, y, r: F.huber_loss(x, y, reduction=r, delta=1.3),
        pair((-1.3, 1.3)),
        (True, True),
    ),
    Case(
        "huber_weight",
        lambda x, y, w, r: PL.huber_loss(x, y, r, weight=w),
        lambda F, x, y, w, r: F.huber_loss(x, y, reduction=r, weight=w),
        with_weight(pair((-1.0, 1.0))),
        (True, True, True),
    ),
    Case(
        "bce",
        lambda x, y, r: PL.binary_cross_entropy(x, y, reduction=r),
        lambda F, x, y, r: F.binary_cross_entropy(x, y, reduction=r),
        probabilities,
        (True, True),
    ),
    Case(
        "bce_weight",
        lambda x, y, w, r: PL.binary_cross_entropy(x, y, w, r),
        lambda F, x, y, w, r: F.binary_cross_entropy(x, y, w, reduction=r),
        with_weight(probabilities, last_dim_only=True),
        (True, True, False),
    ),
    Case(
        "bce_logits",
        lambda x, y, r: PL.binary_cross_entropy_with_logits(x, y, reduction=r),
        lambda F, x, y, r: F.binary_cross_entropy_with_logits(x, y, reduction=r),
        logits,
        (True, True),
    ),
    Case(
        "bce_logits_weights",
        lambda x, y, w, p, r: PL.binary_cross_entropy_with_logits(x, y, w, r, pos_weight=p),
        lambda F, x, y, w, p, r: F.binary_cross_entropy_with_logits(
            x, y, w, reduction=r, pos_weight=p
        ),
        logits_weighted,
        (True, True, False, False),
    ),
    Case(
        "kl_div",
        lambda x, y, r: PL.kl_div(x, y, r),
        lambda F, x, y, r: F.kl_div(x, y, reduction=r),
        log_probs,
        (True, True),
        reductions=(*REDUCTIONS, "batchmean"),
    ),
    Case(
        "kl_div_log_target",
        lambda x, y, r: PL.kl_div(x, y, r, log_target=True),
        lambda F, x, y, r: F.kl_div(x, y, reduction=r, log_target=True),
        log_log,
        (True, True),
        reductions=(*REDUCTIONS, "batchmean"),
    ),
    Case(
        "soft_margin",
        lambda x, y, r: PL.soft_margin_loss(x, y, r),
        lambda F, x, y, r: F.soft_margin_loss(x, y, reduction=r),
        soft_margin,
        (True, False),
    ),
    Case(
        "cosine_embedding",
        lambda a, b, y, r: PL.cosine_embedding_loss(a, b, y, 0.2, r),
        lambda F, a, b, y, r: F.cosine_embedding_loss(a, b, y, 0.2, reduction=r),
        rows,
        (True, True, False),
        shapes=((5, 3), (4,)),
    ),
    Case(
        "margin_ranking",
        lambda a, b, y, r: PL.margin_ranking_loss(a, b, y, 0.3, r),
        lambda F, a, b, y, r: F.margin_ranking_loss(a, b, y, 0.3, reduction=r),
        ranking,
        (True, True, True),
    ),
    Case(
        "hinge_embedding",
        lambda x, y, r: PL.hinge_embedding_loss(x, y, reduction=r),
        lambda F, x, y, r: F.hinge_embedding_loss(x, y, reduction=r),
        hinge,
        (True, False),
    ),
    Case(
        "poisson_nll",
        lambda x, y, r: PL.poisson_nll_loss(x, y, reduction=r),
        lambda F, x, y, r: F.poisson_nll_loss(x, y, reduction=r),
        counts,
        (True, True),
    ),
    Case(
        "poisson_nll_rates_full",
        lambda x, y, r: PL.poisson_nll_loss(x, y, False, True, reduction=r),
        lambda F, x, y, r: F.poisson_nll_loss(x, y, False, True, reduction=r),
        rates,
        (True, True),
    ),
    Case(
        "gaussian_nll",
        lambda x, y, v, r: PL.gaussian_nll_loss(x, y, v, reduction=r),
        lambda F, x, y, v, r: F.gaussian_nll_loss(x, y, v, reduction=r),
        gaussian,
        (True, True, True),
    ),
    Case(
        "gaussian_nll_per_row_full",
        lambda x, y, v, r: PL.gaussian_nll_loss(x, y, v, full=True, reduction=r),
        lambda F, x, y, v, r: F.gaussian_nll_loss(x, y, v, full=True, reduction=r),
        gaussian_rows,
        (True, True, True),
    ),
    Case(
        "gaussian_nll_float_var",
        lambda x, y, r: PL.gaussian_nll_loss(x, y, 0.7, reduction=r),
        lambda F, x, y, r: F.gaussian_nll_loss(x, y, 0.7, reduction=r),
        pair(),
        (True, True),
    ),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_values_and_gradients_match_torch(torch: Any, case: Case, dtype: str) -> None:
    rng = np.random.default_rng(0)
    for shape in case.shapes:
        arrays = case.make(rng, shape)
        for reduction in case.reductions:
            rows_only = case.id.startswith("cosine")  # one loss per row
            out_shape = () if reduction != "none" else shape[:-1] if rows_only else shape
            incoming = rng.standard_normal(out_shape)
            run_both(torch, case, arrays, reduction, dtype, incoming)


# ------------------------------------------------------------------ non-finite values
def grid_pairs() -> tuple[np.ndarray, np.ndarray]:
    """Every (input, target) pair of :data:`GRID` values, as two vectors."""
    x, y = zip(*itertools.product(GRID, GRID), strict=True)
    return np.array(x), np.array(y)


def grid_of(case_id: str) -> list[np.ndarray]:
    """Inputs made of :data:`GRID` values for the case ``case_id``."""
    x, y = grid_pairs()
    n = len(x)
    tiled = np.resize
    special: dict[str, Callable[[], list[np.ndarray]]] = {
        "l1_weight": lambda: [x, y, tiled(np.array([0.5, 2.0, 0.0]), n)],
        "huber_weight": lambda: [x, y, tiled(np.array([0.5, 2.0, 0.0]), n)],
        "bce_logits_weights": lambda: [
            x.reshape(25, 4),
            y.reshape(25, 4),
            np.ones(4),
            np.array([0.5, 1.0, 2.0, 0.0]),
        ],
        "soft_margin": lambda: [x, y],
        "cosine_embedding": lambda: [
            np.stack([x, np.full(n, 0.5)], 1),
            np.stack([np.full(n, 2.0), y], 1),
            tiled(np.array([1, -1, 0]), n),
        ],
        "margin_ranking": lambda: [
            np.concatenate([x, x]),
            np.concatenate([y, y]),
            np.repeat([1.0, -1.0], n),
        ],
        "hinge_embedding": lambda: [np.array(GRID * 3), np.repeat([1.0, -1.0, 0.0], len(GRID))],
        "gaussian_nll": lambda: [x, y, tiled(np.array([0.0, 0.5, 2.0, INF, NAN]), n)],
        "gaussian_nll_per_row_full": lambda: [
            x.reshape(10, 10),
            y.reshape(10, 10),
            np.array([0.0, 0.5, 2.0, INF, NAN, 1e-9, 1.0, 3.0, 1e-7, 0.25]),
        ],
    }
    return special[case_id]() if case_id in special else [x, y]


NONFINITE_CASES = [c for c in CASES if not c.id.startswith("bce") or c.id.startswith("bce_logits")]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", NONFINITE_CASES, ids=[c.id for c in NONFINITE_CASES])
def test_non_finite_inputs_and_gradients_match_torch(torch: Any, case: Case, dtype: str) -> None:
    """Inputs and targets from -inf, -2, -0.0, 0, 0.5, 2, inf and NaN, incoming
    gradients of 1 and inf: NaN, inf and 0 where PyTorch has them."""
    arrays = grid_of(case.id)
    for reduction, incoming in itertools.product(case.reductions, (1.0, INF)):
        run_both(torch, case, arrays, reduction, dtype, incoming)


def test_bce_at_0_and_1_and_in_the_clamp_region_matches_torch(torch: Any) -> None:
    """Probabilities of exactly 0 and 1, and so small that log clamps at -100: PyTorch's
    losses (at most 100), its finite input gradients and its infinite target gradients."""
    case = next(c for c in CASES if c.id == "bce_weight")
    for dtype, tiny in (("float64", 1e-300), ("float32", 1e-44)):
        probs = [0.0, tiny, 1e-20, 0.3, 0.5, 1.0 - 1e-7, 1.0]
        x, y = (np.array(v) for v in zip(*itertools.product(probs, [0.0, 0.25, 1.0]), strict=True))
        arrays = [x.reshape(7, 3), y.reshape(7, 3), np.array([0.5, 1.0, 2.0])]
        for reduction, incoming in itertools.product(REDUCTIONS, (1.0, INF)):
            run_both(torch, case, arrays, reduction, dtype, incoming)


def test_xlogy_matches_torch(torch: Any) -> None:
    """KL divergence's ``x log(y)`` (0 where x is 0, unless y is NaN) on its own, with
    unrelated x and y."""
    x, y = grid_pairs()
    for incoming in (1.0, INF):
        ours_x, ours_y = mta.tensor(x, requires_grad=True), mta.tensor(y, requires_grad=True)
        their_x, their_y = torch.tensor(x, requires_grad=True), torch.tensor(y, requires_grad=True)
        ours, theirs = PL.XLogY.apply(ours_x, ours_y), torch.xlogy(their_x, their_y)
        assert_same(to_host(ours), theirs.detach().numpy(), "float64", "xlogy")
        ours.backward(mta.full(ours.shape, incoming, dtype=mta.float64))
        theirs.backward(torch.full(theirs.shape, incoming, dtype=torch.float64))
        assert_same(ours_x.grad.numpy(), their_x.grad.numpy(), "float64", "xlogy grad x")
        assert_same(ours_y.grad.numpy(), their_y.grad.numpy(), "float64", "xlogy grad y")


def kink_inputs(case_id: str) -> list[np.ndarray]:
    """Inputs exactly at each loss's kinks: a difference of 0 and of +-beta / delta, a
    margin term of exactly 0."""
    if case_id not in ("margin_ranking", "hinge_embedding"):
        step = {"smooth_l1": 0.7, "huber": 1.3}.get(case_id, 1.0)
        d = np.array([0.0, -0.0, step, -step, 2 * step, 0.5 * step])
        arrays = [d, np.zeros(6)]  # input - target is d exactly
        return [*arrays, np.linspace(0.5, 2, 6)] if case_id.endswith("weight") else arrays
    if case_id == "margin_ranking":  # -target (a - b) + 0.3 == 0 for the first four
        target = np.array([1.0, -1.0, 1.0, -1.0, 1.0, -1.0])
        return [0.3 * target, np.zeros(6), target]
    assert case_id == "hinge_embedding"  # margin - input == 0 where the target is -1
    return [np.array([1.0, 1.0, 0.0, 2.0]), np.array([-1, 1, -1, -1])]


KINK_IDS = ("l1", "l1_weight", "smooth_l1", "smooth_l1_beta0", "huber", "huber_weight")
KINK_CASES = [c for c in CASES if c.id in (*KINK_IDS, "margin_ranking", "hinge_embedding")]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", KINK_CASES, ids=[c.id for c in KINK_CASES])
def test_gradients_at_the_kinks_match_torch(torch: Any, case: Case, dtype: str) -> None:
    """The side each kink takes: sign(0) = 0 for L1, the linear side from |d| = beta on,
    a clamp at exactly 0 that passes the gradient."""
    for reduction in REDUCTIONS:
        run_both(torch, case, kink_inputs(case.id), reduction, dtype, 1.0)


# ------------------------------------------------------------------ NumPy references
def log_sigmoid_ref(x: np.ndarray) -> np.ndarray:
    return -np.logaddexp(0.0, -x)


def reduce_ref(term: np.ndarray, reduction: str, batch: int = 1) -> np.ndarray:
    if reduction == "none":
        return term
    if reduction == "batchmean":
        return np.asarray(term.sum() / batch)
    return np.asarray(term.sum() if reduction == "sum" else term.mean())


# each: (ours, (x, y) -> (term, d term / dx, d term / dy)), written from the formulas
NUMPY_REFERENCES: dict[str, tuple[Callable[..., Tensor], Callable[..., Any]]] = {
    "l1": (
        lambda x, y, r: PL.l1_loss(x, y, r),
        lambda x, y: (np.abs(x - y), np.sign(x - y), -np.sign(x - y)),
    ),
    "smooth_l1": (
        lambda x, y, r: PL.smooth_l1_loss(x, y, r, beta=0.7),
        lambda x, y: (
            np.where(np.abs(x - y) < 0.7, 0.5 * (x - y) ** 2 / 0.7, np.abs(x - y) - 0.35),
            np.clip((x - y) / 0.7, -1, 1),
            -np.clip((x - y) / 0.7, -1, 1),
        ),
    ),
    "smooth_l1_beta0": (
        lambda x, y, r: PL.smooth_l1_loss(x, y, r, beta=0.0),
        lambda x, y: (np.abs(x - y), np.sign(x - y), -np.sign(x - y)),
    ),
    "huber": (
        lambda x, y, r: PL.huber_loss(x, y, r, delta=1.3),
        lambda x, y: (
            np.where(np.abs(x - y) < 1.3, 0.5 * (x - y) ** 2, 1.3 * (np.abs(x - y) - 0.65)),
            np.clip(x - y, -1.3, 1.3),
            -np.clip(x - y, -1.3, 1.3),
        ),
    ),
    "bce": (
        lambda x, y, r: PL.binary_cross_entropy(x, y, reduction=r),
        lambda x, y: (
            -(y * np.maximum(np.log(x), -100) + (1 - y) * np.maximum(np.log(1 - x), -100)),
            (x - y) / np.maximum(x * (1 - x), float(np.float32(1e-12))),  # a C float
            np.log(1 - x) - np.log(x),
        ),
    ),
    "bce_logits": (
        lambda x, y, r: PL.binary_cross_entropy_with_logits(x, y, reduction=r),
        lambda x, y: (
            -(y * log_sigmoid_ref(x) + (1 - y) * log_sigmoid_ref(-x)),
            1 / (1 + np.exp(-x)) - y,
            -x,
        ),
    ),
    "kl_div": (
        lambda x, y, r: PL.kl_div(x, y, r),
        lambda x, y: (y * (np.log(y) - x), -y, np.log(y) + 1 - x),
    ),
    "kl_div_log_target": (
        lambda x, y, r: PL.kl_div(x, y, r, log_target=True),
        lambda x, y: (np.exp(y) * (y - x), -np.exp(y), np.exp(y) * (y - x + 1)),
    ),
}


def reference_inputs(case_id: str, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(3, 4) inputs with the kinks hit exactly: a difference of 0 and of +-beta / delta,
    and for BCE probabilities of 0, 1 and in the clamp region."""
    if case_id == "bce":
        x = np.array([[0.0, 1.0, 1e-50, 1.0], [0.3, 0.7, 0.5, 0.9], [0.1, 1e-50, 0.0, 0.6]])
        return x, np.array([[0.0, 1.0, 1.0, 0.0], [0.2, 0.9, 0.5, 1.0], [0.0, 0.0, 1.0, 0.4]])
    if case_id == "bce_logits":
        return 4 * rng.standard_normal((3, 4)), rng.uniform(0, 1, (3, 4))
    if case_id.startswith("kl_div"):
        return rng.uniform(-3, 0, (3, 4)), rng.uniform(0.05, 1, (3, 4))
    step = {"smooth_l1": 0.7, "huber": 1.3}.get(case_id, 0.5)
    d = np.array([[0.0, step, -step, 2.5], [-3.0, 0.25, 0.0, step], [-step, 1.0, -1.5, 0.0]])
    y = rng.uniform(-2, 2, (3, 4))
    y[np.abs(d) == step] = 0.0  # input - target is then exactly +-step
    return y + d, y


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case_id", list(NUMPY_REFERENCES))
def test_first_six_against_numpy_references_at_the_kinks(
    case_id: str, dtype: str, device: str
) -> None:
    ours, reference = NUMPY_REFERENCES[case_id]
    x, y = reference_inputs(case_id, np.random.default_rng(3))
    x, y = x.astype(dtype), y.astype(dtype)
    term, grad_x, grad_y = (
        np.asarray(a, np.float64) for a in reference(x.astype(np.float64), y.astype(np.float64))
    )
    reductions = (*REDUCTIONS, "batchmean") if case_id.startswith("kl") else REDUCTIONS
    for reduction in reductions:
        a = mta.tensor(x, device=device, requires_grad=True)
        b = mta.tensor(y, device=device, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = ours(a, b, reduction)
        expected = reduce_ref(term, reduction, batch=x.shape[0])
        rtol = 1e-12 if dtype == "float64" else 2e-6
        np.testing.assert_allclose(to_host(out), expected, rtol=rtol, atol=rtol)
        out.sum().backward()
        scale = {"mean": 1 / x.size, "batchmean": 1 / x.shape[0]}.get(reduction, 1.0)
        np.testing.assert_allclose(to_host(a.grad), grad_x * scale, rtol=rtol, atol=rtol)
        np.testing.assert_allclose(to_host(b.grad), grad_y * scale, rtol=rtol, atol=rtol)


def test_weights_against_numpy() -> None:
    rng = np.random.default_rng(4)
    x, y = rng.uniform(0.05, 0.95, (3, 4)), rng.uniform(0, 1, (3, 4))
    w, p = rng.uniform(0.5, 2, 4), rng.uniform(0.5, 3, 4)
    xt, yt, wt, pt = (mta.tensor(a) for a in (x, y, w, p))
    bce = -(y * np.log(x) + (1 - y) * np.log(1 - x))
    np.testing.assert_allclose(
        to_host(PL.binary_cross_entropy(xt, yt, wt, "none")), w * bce, rtol=1e-12
    )
    logit = 3 * x - 1.5
    expected = -w * (p * y * log_sigmoid_ref(logit) + (1 - y) * log_sigmoid_ref(-logit))
    out = PL.binary_cross_entropy_with_logits(mta.tensor(logit), yt, wt, "none", pos_weight=pt)
    np.testing.assert_allclose(to_host(out), expected, rtol=1e-12)
    # l1 divides by the sum of the weights, Huber by the number of terms (PyTorch's rules)
    w_full = rng.uniform(0.5, 2, (3, 4))
    l1 = PL.l1_loss(xt, yt, weight=mta.tensor(w_full))
    np.testing.assert_allclose(l1.item(), (w_full * np.abs(x - y)).sum() / w_full.sum(), rtol=1e-12)
    huber = PL.huber_loss(xt * 4, yt, weight=mta.tensor(w_full))
    d = 4 * x - y
    ref = np.where(np.abs(d) < 1, 0.5 * d * d, np.abs(d) - 0.5)
    np.testing.assert_allclose(huber.item(), (w_full * ref).mean(), rtol=1e-12)


def test_smooth_l1_with_beta_0_is_l1() -> None:
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 5))
    x[0, :2] = 0.0  # differences of exactly 0: gradient 0
    for reduction in REDUCTIONS:
        a1, a2 = mta.tensor(x, requires_grad=True), mta.tensor(x, requires_grad=True)
        zeros = mta.zeros(4, 5, dtype=mta.float64)
        smooth, l1 = PL.smooth_l1_loss(a1, zeros, reduction, 0.0), PL.l1_loss(a2, zeros, reduction)
        np.testing.assert_array_equal(to_host(smooth), to_host(l1))
        smooth.sum().backward()
        l1.sum().backward()
        np.testing.assert_array_equal(a1.grad.numpy(), a2.grad.numpy())
        assert a1.grad.numpy()[0, :2].tolist() == [0.0, 0.0]


def test_huber_is_delta_times_smooth_l1() -> None:
    x = mta.tensor(np.linspace(-3, 3, 25))
    zeros = mta.zeros(25, dtype=mta.float64)
    huber = PL.huber_loss(x, zeros, "none", delta=0.8)
    np.testing.assert_allclose(
        to_host(huber), 0.8 * to_host(PL.smooth_l1_loss(x, zeros, "none", 0.8))
    )


def test_bce_with_logits_is_stable_where_the_naive_formula_overflows() -> None:
    x = mta.tensor([-200.0, 200.0, -30.0])  # float32: exp(200) overflows, sigmoid rounds to 0/1
    y = mta.tensor([1.0, 0.0, 1.0])
    stable = PL.binary_cross_entropy_with_logits(x, y, reduction="none")
    np.testing.assert_allclose(to_host(stable), [200.0, 200.0, 30.0], rtol=1e-6)
    naive = PL.binary_cross_entropy(mta.sigmoid(x), y, reduction="none")
    assert to_host(naive)[:2].tolist() == [100.0, 100.0]  # clamped: the logits version is not


# ------------------------------------------------------------------ gradcheck
GRADCHECK: list[tuple[Case, tuple[int, ...]]] = [(case, ()) for case in CASES] + [
    (next(c for c in CASES if c.id == "bce_weight"), (2,)),
    (next(c for c in CASES if c.id == "bce_logits_weights"), (2, 3)),
    (next(c for c in CASES if c.id == "soft_margin"), (1,)),
]


@pytest.mark.parametrize(
    "case,extra", GRADCHECK, ids=[c.id + "".join(f"+{k}" for k in e) for c, e in GRADCHECK]
)
def test_gradcheck_and_gradgradcheck(case: Case, extra: tuple[int, ...]) -> None:
    """First and second derivatives in float64 against finite differences, away from the
    kinks; ``extra`` are inputs PyTorch does not differentiate (weights, the soft margin
    target) that get gradients here."""
    arrays = case.make(np.random.default_rng(1), (3, 4))
    differentiable = [g or k in extra for k, g in enumerate(case.grads)]
    reduction = "none" if case.id != "kl_div" else "batchmean"
    leaves = [
        mta.tensor(a, requires_grad=True) if d else mta.tensor(a)
        for a, d in zip(arrays, differentiable, strict=True)
    ]

    def fn(*xs: Tensor) -> Tensor:
        return case.ours(*xs, reduction)

    assert gradcheck(fn, leaves)
    assert gradgradcheck(fn, leaves)


# ------------------------------------------------------------------ modules
MODULES = [
    ("L1Loss", {}, 2),
    ("L1Loss", {"reduction": "sum"}, 2),
    ("SmoothL1Loss", {"beta": 0.5}, 2),
    ("HuberLoss", {"delta": 0.5, "reduction": "none"}, 2),
    ("BCELoss", {}, 2),
    ("BCEWithLogitsLoss", {"reduction": "sum"}, 2),
    ("KLDivLoss", {"reduction": "batchmean", "log_target": True}, 2),
    ("SoftMarginLoss", {}, 2),
    ("CosineEmbeddingLoss", {"margin": 0.1}, 3),
    ("MarginRankingLoss", {"margin": 0.2}, 3),
    ("HingeEmbeddingLoss", {"margin": 2.0}, 2),
    ("PoissonNLLLoss", {"log_input": False, "full": True}, 2),
    ("GaussianNLLLoss", {"full": True}, 3),
]


def module_inputs(name: str, rng: np.random.Generator) -> list[np.ndarray]:
    shape = (4, 3)
    if name == "BCELoss":
        return probabilities(rng, shape)
    if name in ("CosineEmbeddingLoss",):
        return rows(rng, shape)
    if name == "MarginRankingLoss":
        return ranking(rng, shape)
    if name in ("SoftMarginLoss",):
        return soft_margin(rng, shape)
    if name == "HingeEmbeddingLoss":
        return hinge(rng, shape)
    if name == "PoissonNLLLoss":
        return rates(rng, shape)
    if name == "GaussianNLLLoss":
        return gaussian(rng, shape)
    if name == "KLDivLoss":
        return log_log(rng, shape)
    return logits(rng, shape)


@pytest.mark.parametrize("name,kwargs,arity", MODULES, ids=[f"{m[0]}-{m[1]}" for m in MODULES])
def test_modules_match_torch(torch: Any, name: str, kwargs: dict[str, Any], arity: int) -> None:
    arrays = module_inputs(name, np.random.default_rng(6))
    ours_module = getattr(nn_loss, name)(**kwargs)
    theirs_module = getattr(torch.nn, name)(**kwargs)
    ours_in = [mta.tensor(a, requires_grad=k == 0) for k, a in enumerate(arrays)]
    theirs_in = [torch.tensor(a, requires_grad=k == 0) for k, a in enumerate(arrays)]
    ours, theirs = ours_module(*ours_in), theirs_module(*theirs_in)
    assert_same(to_host(ours), theirs.detach().numpy(), "float64", name)
    ours.sum().backward()
    theirs.sum().backward()
    assert_same(ours_in[0].grad.numpy(), theirs_in[0].grad.numpy(), "float64", name + " grad")
    for key, value in kwargs.items():
        assert f"{key}={value!r}" in repr(ours_module)
    assert list(ours_module.state_dict()) == list(theirs_module.state_dict())


def test_weight_buffers_move_and_save_as_pytorch_does(torch: Any) -> None:
    w, p = np.array([1.0, 2.0, 0.5]), np.array([3.0, 1.0, 1.0])
    ours = nn_loss.BCEWithLogitsLoss(weight=mta.tensor(w), pos_weight=mta.tensor(p))
    theirs = torch.nn.BCEWithLogitsLoss(weight=torch.tensor(w), pos_weight=torch.tensor(p))
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["weight", "pos_weight"]
    ours.to(dtype=mta.float32)
    assert ours.weight.dtype == np.float32 and ours.pos_weight.dtype == np.float32
    x, y = np.random.default_rng(7).standard_normal((5, 3)), np.ones((5, 3))
    value = ours(mta.tensor(x, dtype=mta.float32), mta.tensor(y, dtype=mta.float32))
    expected = theirs.float()(
        torch.tensor(x, dtype=torch.float32), torch.tensor(y, dtype=torch.float32)
    )
    np.testing.assert_allclose(value.item(), expected.item(), rtol=1e-6)
    bce = nn_loss.BCELoss(weight=mta.tensor(w))
    assert list(bce.state_dict()) == list(torch.nn.BCELoss(weight=torch.tensor(w)).state_dict())


def test_kl_div_mean_warns_as_pytorch(torch: Any) -> None:
    x, y = mta.tensor([[-1.0, -0.5]]), mta.tensor([[0.4, 0.6]])
    with pytest.warns(UserWarning, match="batchmean"):
        ours = PL.kl_div(x, y)
    with pytest.warns(UserWarning, match="batchmean"):
        theirs = torch.nn.functional.kl_div(torch.tensor(x.numpy()), torch.tensor(y.numpy()))
    np.testing.assert_allclose(ours.item(), theirs.item(), rtol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the other reductions do not warn
        PL.kl_div(x, y, "batchmean")
        nn_loss.KLDivLoss("sum")(x, y)


# ------------------------------------------------------------------ errors
def t(*values: Any, dtype: Any = None) -> Tensor:
    return mta.tensor(list(values), dtype=dtype)


ERRORS: list[tuple[str, Callable[[], Any], type[Exception], str]] = [
    (
        "shape",
        lambda: PL.l1_loss(mta.zeros(3, 1), mta.zeros(3)),
        ValueError,
        r"l1_loss: input shape \(3, 1\) and target shape \(3,\) differ",
    ),
    (
        "shape bce",
        lambda: PL.binary_cross_entropy(mta.zeros(2), mta.zeros(3)),
        ValueError,
        r"input shape \(2,\) and target shape \(3,\)",
    ),
    (
        "reduction",
        lambda: PL.huber_loss(mta.zeros(2), mta.zeros(2), "avg"),
        ValueError,
        r"huber_loss: reduction must be one of .*'avg'",
    ),
    (
        "kl reduction",
        lambda: PL.kl_div(mta.zeros(2), mta.zeros(2), "batch"),
        ValueError,
        r"kl_div: reduction",
    ),
    (
        "module reduction",
        lambda: nn_loss.SoftMarginLoss(reduction="avg"),
        ValueError,
        r"SoftMarginLoss: reduction",
    ),
    (
        "int input",
        lambda: PL.l1_loss(t(1, 2), t(1.0, 2.0)),
        TypeError,
        r"l1_loss: input must be floating point, got int64",
    ),
    (
        "int target bce",
        lambda: PL.binary_cross_entropy(t(0.5, 0.5), t(0, 1)),
        TypeError,
        r"binary_cross_entropy: target must be floating point, got int64",
    ),
    (
        "int target logits",
        lambda: PL.binary_cross_entropy_with_logits(t(0.5), t(1)),
        TypeError,
        r"target must be floating point",
    ),
    (
        "int target kl",
        lambda: PL.kl_div(t(0.5), t(1), "sum"),
        TypeError,
        r"kl_div: target must be floating point",
    ),
    (
        "not a tensor",
        lambda: PL.soft_margin_loss(t(0.5), [1.0]),
        TypeError,
        r"soft_margin_loss: target must be a Tensor, got list",
    ),
    (
        "beta",
        lambda: PL.smooth_l1_loss(t(0.5), t(1.0), beta=-1.0),
        ValueError,
        r"beta must be >= 0, got -1.0",
    ),
    (
        "delta",
        lambda: PL.huber_loss(t(0.5), t(1.0), delta=0.0),
        ValueError,
        r"delta must be > 0, got 0.0",
    ),
    ("module delta", lambda: nn_loss.HuberLoss(delta=-1.0), ValueError, r"HuberLoss: delta"),
    (
        "bce input",
        lambda: PL.binary_cross_entropy(t(0.5, 1.5), t(0.0, 1.0)),
        RuntimeError,
        r"all elements of input should be between 0 and 1",
    ),
    (
        "bce nan",
        lambda: PL.binary_cross_entropy(t(NAN), t(0.0)),
        RuntimeError,
        r"all elements of input should be between 0 and 1",
    ),
    (
        "bce target",
        lambda: PL.binary_cross_entropy(t(0.5), t(-0.1)),
        RuntimeError,
        r"all elements of target should be between 0 and 1",
    ),
    (
        "bce weight",
        lambda: PL.binary_cross_entropy(mta.zeros(4, 3), mta.zeros(4, 3), mta.ones(4)),
        ValueError,
        r"weight of shape \(4,\) does not broadcast to the input's shape \(4, 3\)",
    ),
    (
        "pos_weight",
        lambda: PL.binary_cross_entropy_with_logits(
            mta.zeros(4, 3), mta.zeros(4, 3), pos_weight=mta.ones(4)
        ),
        ValueError,
        r"pos_weight of shape \(4,\) does not broadcast",
    ),
    (
        "pos_weight grows",
        lambda: PL.binary_cross_entropy_with_logits(
            mta.zeros(3), mta.zeros(3), pos_weight=mta.ones(2, 3)
        ),
        ValueError,
        r"pos_weight of shape \(2, 3\) does not broadcast to the input's shape \(3,\)",
    ),
    (
        "l1 weight",
        lambda: PL.l1_loss(mta.zeros(4, 3), mta.zeros(4, 3), weight=mta.ones(3)),
        ValueError,
        r"input shape \(4, 3\) and weight shape \(3,\) differ",
    ),
    (
        "cosine",
        lambda: PL.cosine_embedding_loss(mta.zeros(4, 3), mta.zeros(4, 3), mta.ones(3)),
        ValueError,
        r"inputs of shape \(4, 3\) do not fit a target of shape \(3,\)",
    ),
    (
        "cosine inputs",
        lambda: PL.cosine_embedding_loss(mta.zeros(4, 3), mta.zeros(4, 2), mta.ones(4)),
        ValueError,
        r"input1 shape \(4, 3\) and input2 shape \(4, 2\) differ",
    ),
    (
        "ranking",
        lambda: PL.margin_ranking_loss(mta.zeros(3), mta.zeros(3), mta.ones(1)),
        ValueError,
        r"input1 shape \(3,\) and target shape \(1,\) differ",
    ),
    (
        "var negative",
        lambda: PL.gaussian_nll_loss(mta.zeros(2), mta.zeros(2), t(1.0, -1.0)),
        ValueError,
        r"var has negative entries",
    ),
    (
        "var float negative",
        lambda: PL.gaussian_nll_loss(mta.zeros(2), mta.zeros(2), -1.0),
        ValueError,
        r"var must be >= 0, got -1.0",
    ),
    (
        "var shape",
        lambda: PL.gaussian_nll_loss(mta.zeros(4, 3), mta.zeros(4, 3), mta.ones(3)),
        ValueError,
        r"var of shape \(3,\) does not fit the input's shape \(4, 3\)",
    ),
]


@pytest.mark.parametrize("name,call,error,message", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors(name: str, call: Callable[[], Any], error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        call()


def test_mixed_devices_are_refused() -> None:
    with pytest.raises(RuntimeError, match=r"input is on cpu but target on cpu:1"):
        PL.l1_loss(mta.zeros(2), mta.zeros(2, device="cpu:1"))


def test_integer_targets_where_pytorch_takes_them(torch: Any) -> None:
    """l1, smooth L1, Huber, soft margin, hinge and Poisson take an integer target (as
    PyTorch), converted to the input's dtype."""
    x = np.array([0.5, -1.5, 2.0])
    y = np.array([1, -1, 3])
    F = torch.nn.functional
    pairs: list[tuple[Callable[..., Tensor], Any]] = [
        (PL.l1_loss, F.l1_loss),
        (PL.smooth_l1_loss, F.smooth_l1_loss),
        (PL.huber_loss, F.huber_loss),
        (PL.soft_margin_loss, F.soft_margin_loss),
        (PL.hinge_embedding_loss, F.hinge_embedding_loss),
        (PL.poisson_nll_loss, F.poisson_nll_loss),
    ]
    for ours, theirs in pairs:
        value = ours(mta.tensor(x, dtype=mta.float32), mta.tensor(y))
        expected = theirs(torch.tensor(x, dtype=torch.float32), torch.tensor(y))
        assert value.dtype == np.float32
        np.testing.assert_allclose(value.item(), expected.item(), rtol=1e-6)


def test_two_float_dtypes_compute_in_the_wider() -> None:
    x, y = mta.tensor([0.25, 0.5], dtype=mta.float32), mta.tensor([0.0, 1.0], dtype=mta.float64)
    for loss in (PL.l1_loss, PL.binary_cross_entropy, PL.kl_div, PL.soft_margin_loss):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert loss(x, y).dtype == np.float64


def test_outputs_stay_on_the_device(device: str) -> None:
    x = mta.tensor([[0.2, 0.7], [0.9, 0.4]], device=device, requires_grad=True)
    y = mta.tensor([[0.0, 1.0], [1.0, 0.0]], device=device)
    for loss in (
        PL.l1_loss(x, y),
        PL.binary_cross_entropy(x, y, mta.ones(2, device=device)),
        PL.binary_cross_entropy_with_logits(x, y, pos_weight=mta.ones(2, device=device)),
        PL.kl_div(x.log(), y, "batchmean"),
        PL.cosine_embedding_loss(x, y, mta.tensor([1, -1], device=device)),
        PL.gaussian_nll_loss(x, y, mta.ones(2, device=device)),
        PL.gaussian_nll_loss(x, y, 0.5),
    ):
        assert loss.device == mta.Device(device)
        loss.backward()
        assert x.grad is not None and x.grad.device == mta.Device(device)
