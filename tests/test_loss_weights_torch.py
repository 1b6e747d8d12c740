"""Class weights and class-probability targets for ``cross_entropy`` and ``nll_loss``
(:mod:`minitorch_accel.ops.weighted_loss`) and their modules, against PyTorch and
against NumPy references written here.

- Values and gradients (the input's; the target's and weight's for probability
  targets) against PyTorch in float64: weights, ignore_index, label smoothing, K-dim
  inputs, 1-D inputs, every reduction, random incoming gradients.
- The same against NumPy references of the formulas.
- Non-finite logits and incoming gradients of 1 and inf: PyTorch's NaN, inf and 0.
- gradcheck and gradgradcheck in float64; all-ignored batches; the unweighted path is
  still the fused node; modules (weight as a buffer); errors.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest

import minitorch_accel as mta
from minitorch_accel import nn
from minitorch_accel.core.tensor import Tensor
from minitorch_accel.nn import functional as F
from minitorch_accel.ops.loss import CrossEntropy
from minitorch_accel.utils.gradcheck import gradcheck, gradgradcheck

INF, NAN = math.inf, math.nan
GRID = [-INF, -2.0, -0.0, 0.0, 0.5, 2.0, INF, NAN]
REDUCTIONS = ("none", "sum", "mean")
SHAPES = ((5, 4), (4,), (3, 4, 2, 3))  # (N, C), (C,), (N, C, d1, d2)


@pytest.fixture(scope="module")
def torch() -> Any:
    """PyTorch, the oracle (the tests that need it skip where it is absent)."""
    return pytest.importorskip("torch")


def assert_same(ours: Any, theirs: Any, what: str, rtol: float = 1e-10) -> None:
    """Equal shapes; NaN, +inf, -inf at the same places; finite values close."""
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.shape == theirs.shape, f"{what}: shape {ours.shape} != {theirs.shape}"
    for test in (np.isnan, np.isposinf, np.isneginf):
        np.testing.assert_array_equal(test(ours), test(theirs), err_msg=f"{what}: {test.__name__}")
    finite = np.isfinite(theirs)
    np.testing.assert_allclose(ours[finite], theirs[finite], rtol=rtol, atol=1e-12, err_msg=what)


def classes_of(shape: tuple[int, ...]) -> int:
    return shape[0] if len(shape) == 1 else shape[1]


def label_shape(shape: tuple[int, ...]) -> tuple[int, ...]:
    return () if len(shape) == 1 else shape[:1] + shape[2:]


def draw(rng: np.random.Generator, shape: tuple[int, ...], ignore: bool) -> dict[str, Any]:
    """Logits, labels (one ignored when ``ignore``), probabilities, class weights."""
    c = classes_of(shape)
    labels = rng.integers(0, c, label_shape(shape))
    if ignore and labels.ndim:
        labels.reshape(-1)[1] = -100
    probs = rng.dirichlet(np.ones(c), size=max(1, labels.size)).reshape(*label_shape(shape), c)
    probs = np.moveaxis(probs, -1, 0 if len(shape) == 1 else 1)
    return {
        "x": 2 * rng.standard_normal(shape),
        "y": labels,
        "q": np.ascontiguousarray(probs),
        "w": rng.uniform(0.2, 2.0, c),
    }


def grad_out(rng: np.random.Generator, reduction: str, shape: tuple[int, ...]) -> np.ndarray:
    return rng.standard_normal(label_shape(shape) if reduction == "none" else ())


# ------------------------------------------------------------------ against PyTorch
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("smoothing", [0.0, 0.25])
def test_class_index_targets_match_torch(
    torch: Any, shape: tuple[int, ...], reduction: str, smoothing: float
) -> None:
    rng = np.random.default_rng(len(shape) + int(smoothing * 4))
    d, g = draw(rng, shape, ignore=True), None
    g = grad_out(rng, reduction, shape)
    for fn in ("cross_entropy", "nll_loss"):
        if fn == "nll_loss" and smoothing:
            continue
        extra = {"label_smoothing": smoothing} if fn == "cross_entropy" else {}
        xt = torch.tensor(d["x"], requires_grad=True)
        theirs = getattr(torch.nn.functional, fn)(
            xt, torch.tensor(d["y"]), weight=torch.tensor(d["w"]), reduction=reduction, **extra
        )
        theirs.backward(torch.tensor(g))
        xm = mta.tensor(d["x"], requires_grad=True)
        ours = getattr(F, fn)(
            xm, mta.tensor(d["y"]), reduction=reduction, weight=mta.tensor(d["w"]), **extra
        )
        ours.backward(mta.tensor(g))
        what = f"{fn} {shape} {reduction} s={smoothing}"
        assert_same(ours.detach().numpy(), theirs.detach().numpy(), what)
        assert_same(xm.grad.numpy(), xt.grad.numpy(), what + " grad")


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("smoothing", [0.0, 0.25])
@pytest.mark.parametrize("weighted", [False, True])
def test_probability_targets_match_torch(
    torch: Any, shape: tuple[int, ...], reduction: str, smoothing: float, weighted: bool
) -> None:
    rng = np.random.default_rng(7 + len(shape))
    d = draw(rng, shape, ignore=False)
    g = grad_out(rng, reduction, shape)
    xt, qt = (torch.tensor(d[k], requires_grad=True) for k in "xq")
    wt = torch.tensor(d["w"], requires_grad=True) if weighted else None
    theirs = torch.nn.functional.cross_entropy(
        xt, qt, weight=wt, reduction=reduction, label_smoothing=smoothing
    )
    theirs.backward(torch.tensor(g))
    xm, qm = (mta.tensor(d[k], requires_grad=True) for k in "xq")
    wm = mta.tensor(d["w"], requires_grad=True) if weighted else None
    ours = F.cross_entropy(xm, qm, reduction=reduction, label_smoothing=smoothing, weight=wm)
    ours.backward(mta.tensor(g))
    what = f"{shape} {reduction} s={smoothing} w={weighted}"
    assert_same(ours.detach().numpy(), theirs.detach().numpy(), what)
    assert_same(xm.grad.numpy(), xt.grad.numpy(), what + " grad input")
    assert_same(qm.grad.numpy(), qt.grad.numpy(), what + " grad target")
    if weighted:
        assert wm is not None and wt is not None
        assert_same(wm.grad.numpy(), wt.grad.numpy(), what + " grad weight")


def test_float32_and_promotion_match_torch(torch: Any) -> None:
    rng = np.random.default_rng(3)
    d = draw(rng, (6, 5), ignore=True)
    x32, w32 = d["x"].astype(np.float32), d["w"].astype(np.float32)
    theirs = torch.nn.functional.cross_entropy(
        torch.tensor(x32), torch.tensor(d["y"]), weight=torch.tensor(w32), label_smoothing=0.1
    )
    ours = F.cross_entropy(
        mta.tensor(x32),
        mta.tensor(d["y"]),
        reduction="mean",
        label_smoothing=0.1,
        weight=mta.tensor(w32),
    )
    assert ours.dtype == np.float32
    assert_same(ours.numpy(), theirs.numpy(), "float32", rtol=2e-6)
    # float32 logits against float64 probabilities compute in float64, as PyTorch
    theirs = torch.nn.functional.cross_entropy(torch.tensor(x32), torch.tensor(d["q"]))
    ours = F.cross_entropy(mta.tensor(x32), mta.tensor(d["q"]))
    assert ours.dtype == np.float64
    assert_same(ours.numpy(), theirs.numpy(), "promoted", rtol=1e-6)


# ------------------------------------------------------------------ against NumPy
def numpy_log_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def numpy_weighted_ce(
    x: np.ndarray, y: np.ndarray, w: np.ndarray, s: float, reduction: str
) -> np.ndarray:
    """Row by row, straight from the formulas in weighted_loss's docstring."""
    c = x.shape[1]
    rows = np.moveaxis(x, 1, -1).reshape(-1, c)
    logp = numpy_log_softmax(rows, 1)
    losses, total_weight = [], 0.0
    for lp, label in zip(logp, y.reshape(-1), strict=True):
        if label == -100:
            losses.append(0.0)
            continue
        nll = -w[label] * lp[label]
        smooth = -(w * lp).sum()
        losses.append((1 - s) * nll + (s / c) * smooth)
        total_weight += w[label]
    out = np.array(losses)
    if reduction == "none":
        return out.reshape(y.shape)
    return out.sum() if reduction == "sum" else out.sum() / total_weight


def numpy_probability_ce(
    x: np.ndarray, q: np.ndarray, w: np.ndarray, s: float, reduction: str
) -> np.ndarray:
    c = x.shape[1]
    logp = numpy_log_softmax(x, 1)
    target = (1 - s) * q + s / c
    per_row = -(w.reshape(1, c, *[1] * (x.ndim - 2)) * target * logp).sum(1)
    if reduction == "none":
        return per_row
    return per_row.sum() if reduction == "sum" else per_row.mean()


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", [(5, 4), (3, 4, 2, 3)], ids=str)
def test_against_numpy_references(reduction: str, shape: tuple[int, ...]) -> None:
    d = draw(np.random.default_rng(11), shape, ignore=True)
    x, y, q, w = (mta.tensor(d[k]) for k in "xyqw")
    for s in (0.0, 0.3):
        ours = F.cross_entropy(x, y, reduction=reduction, label_smoothing=s, weight=w).numpy()
        np.testing.assert_allclose(ours, numpy_weighted_ce(d["x"], d["y"], d["w"], s, reduction))
        ours = F.cross_entropy(x, q, reduction=reduction, label_smoothing=s, weight=w).numpy()
        np.testing.assert_allclose(ours, numpy_probability_ce(d["x"], d["q"], d["w"], s, reduction))
    log_probs = numpy_log_softmax(d["x"], 1)
    ours = F.nll_loss(mta.tensor(log_probs), y, reduction=reduction, weight=w).numpy()
    via_ce = numpy_weighted_ce(d["x"], d["y"], d["w"], 0.0, reduction)
    np.testing.assert_allclose(ours, via_ce)


def test_unit_weights_equal_the_unweighted_fused_loss() -> None:
    d = draw(np.random.default_rng(2), (6, 5), ignore=True)
    x, y = mta.tensor(d["x"]), mta.tensor(d["y"])
    for reduction, s in itertools.product(REDUCTIONS, (0.0, 0.2)):
        plain = F.cross_entropy(x, y, reduction=reduction, label_smoothing=s).numpy()
        ones = mta.ones(5, dtype=mta.float64)
        weighted = F.cross_entropy(x, y, weight=ones, reduction=reduction, label_smoothing=s)
        np.testing.assert_allclose(weighted.numpy(), plain, rtol=1e-12)


# ------------------------------------------------------------------ non-finite
@pytest.mark.parametrize("target_kind", ["index", "probability"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("incoming", [1.0, INF])
def test_non_finite_logits_and_gradients_match_torch(
    torch: Any, target_kind: str, reduction: str, incoming: float
) -> None:
    """Each grid value beside finite logits, in a row of each label; weights and
    smoothing on; one row ignored."""
    rows = [[v, 0.5, -1.0] for v in GRID] + [[1.0, v, 2.0] for v in GRID]
    x = np.array(rows)
    labels = np.array([k % 3 for k in range(len(rows))])
    labels[3] = -100
    weight = np.array([0.5, 2.0, 1.5])
    q = np.random.default_rng(0).dirichlet(np.ones(3), size=len(rows))
    target = labels if target_kind == "index" else q
    for fn, smoothing in (("cross_entropy", 0.0), ("cross_entropy", 0.2), ("nll_loss", 0.0)):
        if fn == "nll_loss" and target_kind == "probability":
            continue
        extra = {"label_smoothing": smoothing} if fn == "cross_entropy" else {}
        if target_kind == "probability":
            extra["ignore_index"] = -100
        xt = torch.tensor(x, requires_grad=True)
        theirs = getattr(torch.nn.functional, fn)(
            xt, torch.tensor(target), weight=torch.tensor(weight), reduction=reduction, **extra
        )
        g = np.full(theirs.shape, incoming)
        theirs.backward(torch.tensor(g))
        xm = mta.tensor(x, requires_grad=True)
        ours = getattr(F, fn)(
            xm, mta.tensor(target), reduction=reduction, weight=mta.tensor(weight), **extra
        )
        ours.backward(mta.tensor(g))
        what = f"{fn} {target_kind} {reduction} s={smoothing} incoming={incoming}"
        assert_same(ours.detach().numpy(), theirs.detach().numpy(), what)
        assert_same(xm.grad.numpy(), xt.grad.numpy(), what + " grad")


@pytest.mark.parametrize("smoothing", [0.0, 0.3])
def test_every_row_ignored_gives_torch_nan_and_zero_gradients(torch: Any, smoothing: float) -> None:
    x, y, w = np.ones((3, 4)), np.full(3, -100), np.arange(1.0, 5.0)
    for reduction in REDUCTIONS:
        xt = torch.tensor(x, requires_grad=True)
        theirs = torch.nn.functional.cross_entropy(
            xt,
            torch.tensor(y),
            weight=torch.tensor(w),
            reduction=reduction,
            label_smoothing=smoothing,
        )
        theirs.sum().backward()
        xm = mta.tensor(x, requires_grad=True)
        ours = F.cross_entropy(
            xm, mta.tensor(y), reduction=reduction, label_smoothing=smoothing, weight=mta.tensor(w)
        )
        ours.sum().backward()
        assert_same(ours.detach().numpy(), theirs.detach().numpy(), reduction)
        assert_same(xm.grad.numpy(), xt.grad.numpy(), reduction + " grad")
    assert math.isnan(F.nll_loss(mta.tensor(x), mta.tensor(y), weight=mta.tensor(w)).item())


def test_empty_batch_of_probabilities_is_nan_for_mean(torch: Any) -> None:
    theirs = torch.nn.functional.cross_entropy(torch.zeros(0, 4), torch.zeros(0, 4))
    ours = F.cross_entropy(mta.zeros(0, 4), mta.zeros(0, 4))
    assert math.isnan(ours.item()) and math.isnan(theirs.item())


# ------------------------------------------------------------------ derivatives
@pytest.mark.parametrize("kind", ["index", "probability"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_gradcheck_and_gradgradcheck(kind: str, reduction: str) -> None:
    d = draw(np.random.default_rng(5), (3, 4, 2), ignore=True)
    w = mta.tensor(d["w"])
    x = mta.tensor(d["x"], requires_grad=True)
    if kind == "index":
        y = mta.tensor(d["y"])

        def fn(a: Tensor) -> Tensor:
            return F.cross_entropy(a, y, reduction=reduction, label_smoothing=0.2, weight=w)

        def nll(a: Tensor) -> Tensor:
            return F.nll_loss(a, y, reduction=reduction, weight=w) ** 2

        assert gradcheck(nll, [x]) and gradgradcheck(nll, [x])
        assert gradcheck(fn, [x]) and gradgradcheck(fn, [x])
        return
    q = mta.tensor(d["q"], requires_grad=True)
    wg = mta.tensor(d["w"], requires_grad=True)

    def prob(a: Tensor, b: Tensor, c: Tensor) -> Tensor:
        return F.cross_entropy(a, b, reduction=reduction, label_smoothing=0.2, weight=c)

    assert gradcheck(prob, [x, q, wg]) and gradgradcheck(prob, [x, q, wg])


def test_weight_gets_no_gradient_with_class_indices() -> None:
    w = mta.tensor([1.0, 2.0], requires_grad=True)
    x = mta.tensor([[0.5, -0.5]], requires_grad=True)
    F.cross_entropy(x, mta.tensor([1]), weight=w).backward()
    assert w.grad is None and x.grad is not None


def test_the_unweighted_path_is_still_the_fused_node() -> None:
    x = mta.zeros(3, 4, requires_grad=True)
    assert isinstance(F.cross_entropy(x, mta.tensor([0, 1, 2])).grad_fn, CrossEntropy)
    weighted = F.cross_entropy(x, mta.tensor([0, 1, 2]), weight=mta.ones(4))
    assert not isinstance(weighted.grad_fn, CrossEntropy)


# ------------------------------------------------------------------ modules
def test_modules_match_torch_and_keep_the_weight_as_a_buffer(torch: Any) -> None:
    d = draw(np.random.default_rng(9), (5, 4), ignore=True)
    settings = {"ignore_index": -100, "reduction": "sum", "label_smoothing": 0.1}
    ours = nn.CrossEntropyLoss(mta.tensor(d["w"]), **settings)
    theirs = torch.nn.CrossEntropyLoss(torch.tensor(d["w"]), **settings)
    got = ours(mta.tensor(d["x"]), mta.tensor(d["y"])).item()
    assert_same(got, theirs(torch.tensor(d["x"]), torch.tensor(d["y"])).item(), "module")
    assert sorted(ours.state_dict()) == sorted(theirs.state_dict()) == ["weight"]
    assert ours.to("cpu:1").weight.device == mta.device("cpu:1")
    nll, nll_t = nn.NLLLoss(mta.tensor(d["w"])), torch.nn.NLLLoss(torch.tensor(d["w"]))
    got = nll(mta.tensor(d["x"]), mta.tensor(d["y"])).item()
    assert_same(got, nll_t(torch.tensor(d["x"]), torch.tensor(d["y"])).item(), "NLLLoss")
    assert sorted(nll.state_dict()) == ["weight"]
    assert nn.CrossEntropyLoss().state_dict() == {}


# ------------------------------------------------------------------ errors
X, Y = mta.zeros(3, 4), mta.tensor([0, 1, 2])
ERRORS = [
    (lambda: F.cross_entropy(X, Y, weight=mta.ones(3)), ValueError, r"one value for each of the 4"),
    (lambda: F.nll_loss(X, Y, weight=mta.ones(4, 1)), ValueError, r"got shape \(4, 1\)"),
    (lambda: F.cross_entropy(X, Y, weight=mta.tensor([1, 1, 1, 1])), TypeError, "floating point"),
    (lambda: F.nll_loss(X, Y, weight=[1.0] * 4), TypeError, "weight must be a Tensor"),
    (
        lambda: F.cross_entropy(X, Y, weight=mta.ones(4, device="cpu:1")),
        RuntimeError,
        "input is on cpu but weight on cpu:1",
    ),
    (lambda: F.cross_entropy(X, Y, None, None, -100, None, 0), TypeError, "got int"),
    (lambda: F.nll_loss(X, Y, "sum"), TypeError, "the third argument is weight, as in PyTorch"),
    (
        lambda: F.cross_entropy(X, mta.zeros(3, 4), ignore_index=0),
        ValueError,
        "ignore_index is not supported for class-probability targets",
    ),
    (
        lambda: F.cross_entropy(X, mta.zeros(3, 4), weight=mta.ones(3)),
        ValueError,
        "one value for each of the 4",
    ),
    (lambda: F.cross_entropy(X, mta.zeros(3)), TypeError, "integer tensor, got float32"),
    (
        lambda: F.cross_entropy(X, mta.tensor([0, 9, 1]), weight=mta.ones(4)),
        IndexError,
        "label 9 is out of range for 4 classes",
    ),
    (lambda: nn.CrossEntropyLoss(label_smoothing=2.0), ValueError, r"label_smoothing must be in"),
]


@pytest.mark.parametrize("call,error,message", ERRORS)
def test_errors(call: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        call()


# ------------------------------------------------------------------ PyTorch's argument order
def test_arguments_in_pytorchs_positional_order() -> None:
    """``weight`` third, then ``size_average``, ``ignore_index``, ``reduce``,
    ``reduction``, ``label_smoothing``: a positional call means what it means in PyTorch.
    """
    d = draw(np.random.default_rng(7), (6, 5), ignore=True)
    x, y, w = mta.tensor(d["x"]), mta.tensor(d["y"]), mta.tensor(d["w"])
    y = mta.where(y == -100, 1, y)  # class 1 is ignored below
    by_name = F.cross_entropy(x, y, weight=w, ignore_index=1, reduction="sum", label_smoothing=0.1)
    by_place = F.cross_entropy(x, y, w, None, 1, None, "sum", 0.1)
    assert by_place.item() == by_name.item()
    logp = F.log_softmax(x, 1)
    assert F.nll_loss(logp, y, w, None, 1, None, "sum").item() == (
        F.nll_loss(logp, y, weight=w, ignore_index=1, reduction="sum").item()
    )


@pytest.mark.parametrize(
    "size_average,reduce,meaning",
    [(None, False, "none"), (False, None, "sum"), (False, True, "sum"), (True, None, "mean")],
)
def test_deprecated_size_average_and_reduce_mean_what_they_mean_in_pytorch(
    size_average: bool | None, reduce: bool | None, meaning: str
) -> None:
    d = draw(np.random.default_rng(8), (6, 5), ignore=False)
    x, y = mta.tensor(d["x"]), mta.tensor(d["y"])
    with pytest.warns(UserWarning, match=f"deprecated; use reduction='{meaning}'"):
        legacy = F.cross_entropy(x, y, size_average=size_average, reduce=reduce)
    np.testing.assert_array_equal(legacy.numpy(), F.cross_entropy(x, y, reduction=meaning).numpy())
    with pytest.warns(UserWarning, match="size_average and reduce are deprecated"):
        legacy = F.nll_loss(x, y, size_average=size_average, reduce=reduce)
    np.testing.assert_array_equal(legacy.numpy(), F.nll_loss(x, y, reduction=meaning).numpy())


@pytest.mark.parametrize("tier", [True, False])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_an_ignored_row_with_nan_or_inf_logits_counts_for_nothing(
    tier: bool, reduction: str
) -> None:
    """PyTorch skips ignored rows, so their NaN or infinite logits do not reach the loss
    (a row multiplied by a 0/1 mask would give NaN: 0 * nan); the loss is that of the
    batch without them. Their gradient is PyTorch's: 0 from ``nll_loss``; from
    ``cross_entropy`` the log-softmax backward's ``softmax * 0``, which is NaN where
    the softmax is (non-finite logits) and 0 elsewhere, whatever the incoming gradient.
    """
    logits = np.array(
        [[NAN, 0.0, 1.0], [1.0, 2.0, 0.5], [INF, -INF, 0.0], [0.2, 0.1, 3.0], [1.0, 0.0, 2.0]]
    )
    labels = np.array([-100, 1, -100, 2, -100])
    kept, ignored = [1, 3], [0, 2, 4]
    for smoothing in (0.0, 0.2):
        with mta.fast_paths(tier):
            x = mta.tensor(logits, requires_grad=True)
            loss = F.cross_entropy(
                x, mta.tensor(labels), reduction=reduction, label_smoothing=smoothing
            )
            (loss * 1e308 * 10).sum().backward()  # an infinite incoming gradient
            x_kept = mta.tensor(logits[kept], requires_grad=True)
            expected = F.cross_entropy(
                x_kept, mta.tensor(labels[kept]), reduction=reduction, label_smoothing=smoothing
            )
            (expected * 1e308 * 10).sum().backward()
        assert x.grad is not None and x_kept.grad is not None
        got, want = loss.detach().numpy(), expected.detach().numpy()
        if reduction == "none":
            np.testing.assert_array_equal(got[ignored], 0.0)
            got = got[kept]
        np.testing.assert_allclose(got, want, rtol=1e-12)
        grad = x.grad.numpy()
        softmax_nan = np.isnan(F.softmax(mta.tensor(logits), 1).numpy())
        np.testing.assert_array_equal(np.isnan(grad[ignored]), softmax_nan[ignored])
        np.testing.assert_array_equal(grad[4], 0.0)
        np.testing.assert_array_equal(grad[kept], x_kept.grad.numpy())
    logp = mta.tensor(logits, requires_grad=True)
    out = F.nll_loss(logp, mta.tensor(labels), reduction=reduction)
    out.sum().backward()
    assert np.isfinite(out.detach().numpy()).all()
    assert logp.grad is not None
    np.testing.assert_array_equal(logp.grad.numpy()[ignored], 0.0)


def test_an_ignored_nan_row_matches_pytorch(torch: Any) -> None:
    logits = np.array([[NAN, 0.0], [1.0, 2.0], [INF, 0.0], [0.5, 1.0]])
    labels = np.array([-100, 1, -100, -100])
    for name in ("cross_entropy", "nll_loss"):
        x, xt = mta.tensor(logits, requires_grad=True), torch.tensor(logits, requires_grad=True)
        ours = getattr(F, name)(x, mta.tensor(labels))
        theirs = getattr(torch.nn.functional, name)(xt, torch.tensor(labels))
        ours.backward()
        theirs.backward()
        assert_same(ours.item(), theirs.item(), name)
        assert_same(x.grad.numpy(), xt.grad.numpy(), f"{name} grad")  # type: ignore[union-attr]
