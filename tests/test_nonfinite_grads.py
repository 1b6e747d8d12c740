"""Gradients that are masked off, shared at ties, or meet NaN and infinity follow
PyTorch's rules: an element a backward masks off gets exactly 0 even from an infinite or
NaN incoming gradient (``where``, not ``grad * mask``), ties share a gradient as PyTorch
shares it, and ``sign``/``abs`` treat NaN as PyTorch does.

Each op is checked against a NumPy reference written here from PyTorch's formulas
(FunctionsManual.cpp), and against PyTorch itself where it is installed; the CPU's
bit-mask fast path of :class:`~minitorch_accel.ops.elementwise.MaskedGrad` against its
reference, bit for bit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import minitorch_accel as mta
import minitorch_accel.nn.functional as F
from minitorch_accel.backends.numpy import fast_nn
from minitorch_accel.ops.elementwise import MaskedGrad
from minitorch_accel.utils.gradcheck import gradcheck, gradgradcheck

INF, NAN = float("inf"), float("nan")
GRID = np.array([-INF, -2.0, -1.0, -0.0, 0.0, 0.5, 1.0, 2.0, INF, NAN])
INCOMING = [1.0, INF, NAN]


def _sgn0(x: np.ndarray) -> np.ndarray:
    """PyTorch's sign: 0 at NaN."""
    return np.nan_to_num(np.sign(x), nan=0.0)


def _shared(a: np.ndarray, b: np.ndarray, g: np.ndarray, loses: np.ndarray) -> np.ndarray:
    """PyTorch's maximum/minimum backward for one input: half at ties, 0 where it lost."""
    return np.where(loses, 0.0, np.where(a == b, g / 2, g))


# name -> (ours, NumPy reference of (x, g) -> grad of x, torch op or None)
UNARY: dict[str, tuple[Callable[[Any], Any], Callable[..., np.ndarray], str]] = {
    "abs": (lambda x: x.abs(), lambda x, g: g * _sgn0(x), "abs"),
    "sign": (lambda x: x.sign(), lambda x, g: np.zeros_like(g), "sign"),
    "clamp": (
        lambda x: x.clamp(-1.0, 1.0),
        lambda x, g: np.where((x >= -1.0) & (x <= 1.0), g, 0.0),
        "clamp(-1, 1)",
    ),
    "clamp_min": (lambda x: x.clamp(min=0.0), lambda x, g: np.where(x >= 0, g, 0.0), "clamp(0)"),
    "clamp_max": (
        lambda x: x.clamp(max=0.5),
        lambda x, g: np.where(x <= 0.5, g, 0.0),
        "clamp(max=0.5)",
    ),
    "maximum0": (
        lambda x: mta.maximum(x, mta.zeros_like(x)),
        lambda x, g: _shared(x, np.zeros_like(x), g, x < 0),
        "maximum",
    ),
    "minimum0": (
        lambda x: mta.minimum(x, mta.zeros_like(x)),
        lambda x, g: _shared(x, np.zeros_like(x), g, x > 0),
        "minimum",
    ),
    "where": (
        lambda x: mta.where(x > 0, x, x * 3.0),
        lambda x, g: np.where(x > 0, g, 0.0) + np.where(x > 0, 0.0, g) * 3.0,
        "where",
    ),
    "pow0": (lambda x: x**0, lambda x, g: np.zeros_like(g), "pow0"),
    "leaky_relu": (
        lambda x: F.leaky_relu(x, 0.1),
        lambda x, g: np.where(x > 0, g, g * 0.1),
        "leaky_relu",
    ),
}


def _torch_op(name: str) -> Callable[[Any], Any]:
    torch = pytest.importorskip("torch")
    ops: dict[str, Callable[[Any], Any]] = {
        "abs": torch.abs,
        "sign": torch.sign,
        "clamp(-1, 1)": lambda x: x.clamp(-1.0, 1.0),
        "clamp(0)": lambda x: x.clamp(min=0.0),
        "clamp(max=0.5)": lambda x: x.clamp(max=0.5),
        "maximum": lambda x: torch.maximum(x, torch.zeros_like(x)),
        "minimum": lambda x: torch.minimum(x, torch.zeros_like(x)),
        "where": lambda x: torch.where(x > 0, x, x * 3.0),
        "pow0": lambda x: x**0,
        "leaky_relu": lambda x: torch.nn.functional.leaky_relu(x, 0.1),
    }
    return ops[name]


def _grad(op: Callable[[Any], Any], x: np.ndarray, g: np.ndarray, device: str = "cpu") -> Any:
    t = mta.tensor(x, device=device, requires_grad=True)
    op(t).backward(mta.tensor(g, device=device))
    assert t.grad is not None
    return t.grad.to("cpu").array


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal values, NaN where NaN, and the same sign of infinity."""
    return bool(np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True))


@pytest.mark.parametrize("incoming", INCOMING, ids=str)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_masked_and_shared_gradients_follow_pytorchs_formulas(name: str, incoming: float) -> None:
    ours, reference, _ = UNARY[name]
    g = np.full_like(GRID, incoming)
    with np.errstate(invalid="ignore"):
        expected = reference(GRID, g)
    assert _same(_grad(ours, GRID, g), expected), name


@pytest.mark.parametrize("incoming", INCOMING, ids=str)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_masked_and_shared_gradients_equal_pytorchs(name: str, incoming: float) -> None:
    torch_op = _torch_op(UNARY[name][2])
    import torch

    x = torch.tensor(GRID, requires_grad=True)
    torch_op(x).backward(torch.full_like(x, incoming))
    assert x.grad is not None
    g = np.full_like(GRID, incoming)
    assert _same(_grad(UNARY[name][0], GRID, g), x.grad.numpy()), name


def test_sign_and_abs_of_nan_follow_pytorch() -> None:
    x = mta.tensor(GRID)
    assert _same(x.sign().array, _sgn0(GRID))
    assert x.sign().array[-1] == 0.0  # PyTorch: sign(NaN) = 0 (NumPy gives NaN)
    assert _same(mta.tensor(GRID.astype(np.float32)).sign().array, _sgn0(GRID).astype(np.float32))
    assert mta.tensor([-3, 0, 4]).sign().tolist() == [-1, 0, 1]  # integers keep their dtype


def test_maximum_and_minimum_of_two_tensors_with_nan_and_ties() -> None:
    a = np.array([NAN, 1.0, 2.0, 1.0, NAN, -INF])
    b = np.array([1.0, NAN, 1.0, 1.0, NAN, -INF])
    for incoming in INCOMING:
        g = np.full_like(a, incoming)
        for op, a_loses, b_loses in (
            (mta.maximum, a < b, a > b),
            (mta.minimum, a > b, a < b),
        ):
            ta = mta.tensor(a, requires_grad=True)
            tb = mta.tensor(b, requires_grad=True)
            op(ta, tb).backward(mta.tensor(g))
            assert ta.grad is not None and tb.grad is not None
            with np.errstate(invalid="ignore"):
                assert _same(ta.grad.array, _shared(a, b, g, a_loses))
                assert _same(tb.grad.array, _shared(a, b, g, b_loses))


def _evenly(x: np.ndarray, g: float, largest: bool) -> np.ndarray:
    """PyTorch's evenly_distribute_backward (its CPU form): the gradient shared by the
    elements equal to the result (the NaNs if it is NaN), exactly 0 elsewhere."""
    value = np.max(x) if largest else np.min(x)
    hits = np.isnan(x) if np.isnan(value) else x == value
    return np.where(hits, g / hits.sum(), 0.0)


def _amax_grad(x: np.ndarray, g: float, dims: tuple[int, ...], largest: bool) -> np.ndarray:
    """PyTorch's amax/amin backward: grad / count * (x == result), a multiply."""
    value = (np.amax if largest else np.amin)(x, axis=dims, keepdims=True)
    hits = (x == value).astype(x.dtype)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.full(value.shape, g) / hits.sum(axis=dims, keepdims=True) * hits


REDUCTION_INPUTS = [
    np.array([1.0, 4.0, 2.0, 4.0]),
    np.array([1.0, NAN, 2.0, NAN]),
    np.array([[4.0, 4.0, 1.0], [1.0, -INF, 4.0]]),
    np.array([[-INF, -INF], [-INF, -INF]]),
]


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("incoming", INCOMING, ids=str)
@pytest.mark.parametrize("x", REDUCTION_INPUTS, ids=lambda x: str(x.tolist()))
def test_max_and_min_of_all_elements_share_the_gradient_at_ties(
    x: np.ndarray, incoming: float, largest: bool
) -> None:
    op = (lambda t: t.max()) if largest else (lambda t: t.min())
    got = _grad(op, x, np.array(incoming))
    with np.errstate(invalid="ignore"):
        assert _same(got, _evenly(x, incoming, largest))


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("incoming", INCOMING, ids=str)
@pytest.mark.parametrize("x", REDUCTION_INPUTS, ids=lambda x: str(x.tolist()))
def test_amax_and_amin_follow_pytorchs_formula(
    x: np.ndarray, incoming: float, largest: bool
) -> None:
    name = "amax" if largest else "amin"
    for dims in [(), *[(d,) for d in range(x.ndim)], tuple(range(x.ndim))]:
        for keepdim in (False, True):
            full = dims or tuple(range(x.ndim))
            t = mta.tensor(x, requires_grad=True)
            y = getattr(t, name)(dim=dims, keepdim=keepdim)
            value = (np.amax if largest else np.amin)(x, axis=full, keepdims=keepdim)
            assert y.shape == value.shape and _same(y.array, value)
            y.backward(mta.tensor(np.full(y.shape, incoming)))
            assert t.grad is not None
            assert _same(t.grad.array, _amax_grad(x, incoming, full, largest)), (dims, keepdim)


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("x", REDUCTION_INPUTS, ids=lambda x: str(x.tolist()))
def test_max_min_amax_amin_equal_pytorchs(x: np.ndarray, largest: bool) -> None:
    torch = pytest.importorskip("torch")
    names = ("max", "amax") if largest else ("min", "amin")
    for incoming in INCOMING:
        tt = torch.tensor(x, requires_grad=True)
        getattr(tt, names[0])().backward(torch.tensor(incoming, dtype=torch.float64))
        assert tt.grad is not None
        got = _grad(lambda t: getattr(t, names[0])(), x, np.array(incoming))
        assert _same(got, tt.grad.numpy())
        for dim in range(x.ndim):
            tt = torch.tensor(x, requires_grad=True)
            y = getattr(tt, names[1])(dim=dim)
            y.backward(torch.full_like(y, incoming))
            assert tt.grad is not None
            ours = mta.tensor(x, requires_grad=True)
            z = getattr(ours, names[1])(dim=dim)
            z.backward(mta.tensor(np.full(z.shape, incoming)))
            assert ours.grad is not None
            assert _same(ours.grad.array, tt.grad.numpy()) and _same(z.array, y.detach().numpy())


def test_amax_refuses_an_empty_dim() -> None:
    with pytest.raises(
        ValueError, match=r"amax: cannot reduce over a dim of size 0 \(shape \(2, 0\)\)"
    ):
        mta.zeros(2, 0).amax(dim=1)


def test_masked_gradients_have_exact_second_derivatives() -> None:
    rng = np.random.default_rng(0)
    x = rng.uniform(-2.0, 2.0, (4, 5))
    x = np.where(np.abs(np.abs(x) - 1.0) < 0.05, 0.3, x)  # away from clamp's kinks
    y = rng.uniform(-2.0, 2.0, (4, 5))
    cases: list[tuple[Callable[..., Any], list[np.ndarray]]] = [
        (lambda a: (a.clamp(-1.0, 1.0) ** 2) * a, [x]),
        (lambda a: mta.where(a > 0, a * a, a * a * a), [x]),
        (lambda a, b: mta.maximum(a, b) * a, [x, y]),
        (lambda a, b: mta.minimum(a, b) * b, [x, y]),
        (lambda a: a.amax(dim=1) * a.sum(1), [x]),
        (lambda a: a.max() * a, [x]),
    ]
    for fn, arrays in cases:
        inputs = [mta.tensor(a, requires_grad=True) for a in arrays]
        assert gradcheck(fn, inputs)
        assert gradgradcheck(fn, inputs)


def _channels_last(a: np.ndarray) -> np.ndarray:
    return a.transpose(0, 2, 3, 1).copy().transpose(0, 3, 1, 2)


def _bits(a: np.ndarray) -> bytes:
    """The bytes of ``a`` in logical (C) order: equal bits, NaN payloads included."""
    return np.ascontiguousarray(a).tobytes()


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_masked_grad_fast_path_equals_its_reference_bit_for_bit(dtype: Any, threads: int) -> None:
    rng = np.random.default_rng(1)
    g = rng.standard_normal((8, 6, 37, 41)).astype(dtype)
    g.reshape(-1)[::7] = np.inf
    g.reshape(-1)[::11] = np.nan
    g.reshape(-1)[::13] = -np.inf
    g.reshape(-1)[::17] = -0.0
    keep = rng.random(g.shape) > 0.5
    previous = mta.get_num_threads()
    mta.set_num_threads(threads)
    try:
        for grad, mask in (
            (g, keep),  # C order
            (_channels_last(g), _channels_last(keep)),
            (g, keep[:1]),  # broadcasting: the reference
            (g[:, :, ::2], keep[:, :, ::2]),  # gaps in memory: the reference
        ):
            expected = np.where(mask, grad, dtype(0))
            got = MaskedGrad.apply(mta.tensor(grad), keep=mask).array
            assert got.shape == expected.shape
            assert _bits(got) == _bits(expected)
            out = np.empty(grad.size, dtype)
            fast_nn.masked_grad_into(
                np.ravel(grad), np.ravel(np.broadcast_to(mask, grad.shape)), out
            )
            assert out.tobytes() == _bits(expected)
    finally:
        mta.set_num_threads(previous)


NORM_PS = [2, 1, 3, 1.5, 0.5, INF]


def _norm_grad(x: np.ndarray, p: float) -> np.ndarray:
    """PyTorch's vector-norm gradient of all of ``x`` (linalg_vector_norm_backward)."""
    a = np.abs(x)
    n = np.max(a) if p == INF else np.sum(a**p) ** (1 / p)
    if p == INF:
        hits = a == n
        return np.sign(x) * hits / hits.sum()
    if p == 1:
        return np.sign(x)
    if n == 0:
        return np.zeros_like(x)
    with np.errstate(divide="ignore"):
        scaled = np.where(x == 0, 0.0, np.sign(x) * a ** (p - 1))
    return scaled / n ** (p - 1)


@pytest.mark.parametrize("p", NORM_PS, ids=str)
@pytest.mark.parametrize(
    "x", [np.zeros(4), np.array([0.0, 1.0, -2.0, 0.0]), np.array([3.0, -3.0, 1.0])], ids=str
)
def test_norm_gradient_is_pytorchs_at_zero_vectors_zero_elements_and_ties(
    x: np.ndarray, p: float
) -> None:
    got = _grad(lambda t: t.norm(p), x, np.array(1.0))
    assert np.allclose(got, _norm_grad(x, p), rtol=1e-12, atol=0), (got, _norm_grad(x, p))
    assert np.isfinite(got).all()


@pytest.mark.parametrize("p", NORM_PS, ids=str)
@pytest.mark.parametrize(
    "x", [np.zeros(4), np.array([0.0, 1.0, -2.0, 0.0]), np.array([3.0, -3.0, 1.0])], ids=str
)
def test_norm_gradient_equals_pytorchs(x: np.ndarray, p: float) -> None:
    torch = pytest.importorskip("torch")
    t = torch.tensor(x, requires_grad=True)
    t.norm(p).backward()
    assert t.grad is not None
    got = _grad(lambda u: u.norm(p), x, np.array(1.0))
    assert np.allclose(got, t.grad.numpy(), rtol=1e-12, atol=0)


@pytest.mark.parametrize("p", [2, 1, 3, 1.5, 0.5, INF], ids=str)
def test_norm_over_dims_has_exact_first_and_second_derivatives(p: float) -> None:
    rng = np.random.default_rng(2)
    x = rng.uniform(0.5, 2.0, (3, 4)) * rng.choice([-1.0, 1.0], (3, 4))
    for dim, keepdim in ((None, False), (1, False), (0, True), ((0, 1), False)):
        t = mta.tensor(x, requires_grad=True)

        def fn(a: Any, dim: Any = dim, keepdim: bool = keepdim) -> Any:
            return a.norm(p, dim, keepdim) * 1.5

        assert gradcheck(fn, [t])
        if p != INF:
            assert gradgradcheck(fn, [t])
