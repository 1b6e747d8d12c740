"""More of PyTorch's surface (ops/torch_surface.py, the Tensor methods beside it, the
in-place and random ``nn.functional`` names, ``nn.RReLU``, ``nn.Buffer``,
``set_printoptions``).

Each name is compared with PyTorch itself (values, dtypes, shapes, gradients, warnings,
errors) and with a PyTorch-free check: a NumPy reference or a property that can fail.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import minitorch_accel as mta
import minitorch_accel.nn.functional as F
from minitorch_accel.core.tensor import Tensor
from minitorch_accel.utils.gradcheck import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")
TF = torch.nn.functional

NONFINITE = [-math.inf, -2.0, -0.0, 0.0, 0.5, 2.0, math.inf, math.nan]


def both(values: Any, dtype: Any = np.float64, grad: bool = False) -> tuple[Tensor, Any]:
    """The same values as a minitorch_accel tensor and a PyTorch tensor."""
    array = np.array(values, dtype=dtype)
    ours = mta.tensor(array, requires_grad=grad)
    theirs = torch.tensor(array, requires_grad=grad)
    return ours, theirs


def same(ours: Tensor, theirs: Any, rtol: float = 1e-12, atol: float = 0.0) -> None:
    """Equal values (NaN where NaN, signed zeros and infinities bit for bit), shape, dtype."""
    expected = theirs.detach().numpy()
    got = np.asarray(ours.detach())
    assert got.shape == expected.shape
    assert got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)
    finite = np.isfinite(expected)
    assert np.array_equal(np.isnan(got), np.isnan(expected))
    assert np.array_equal(
        got[~finite & ~np.isnan(expected)], expected[~finite & ~np.isnan(expected)]
    )


def check_grads(fn: Callable[..., Tensor], *arrays: np.ndarray) -> None:
    leaves = [mta.tensor(a, dtype=mta.float64, requires_grad=True) for a in arrays]
    assert gradcheck(fn, leaves)
    assert gradgradcheck(fn, leaves)


@pytest.fixture
def default_printoptions() -> Iterator[None]:
    yield
    mta.set_printoptions(profile="default")


# ------------------------------------------------------------------ conversion
def test_as_tensor_shares_numpy_memory_when_dtype_and_device_fit() -> None:
    for dtype in (np.float32, np.float64, np.int64):
        a = np.arange(4).astype(dtype)
        ours, theirs = mta.as_tensor(a), torch.as_tensor(a)
        a[0] = 9
        assert ours.tolist() == theirs.tolist() and ours.tolist()[0] == 9
        assert str(ours.dtype) == str(theirs.dtype).replace("torch.", "")
    a = np.arange(3.0)
    converted, theirs = mta.as_tensor(a, dtype=mta.float32), torch.as_tensor(a, dtype=torch.float32)
    a[0] = 7
    assert converted.tolist()[0] == theirs.tolist()[0] == 0.0  # a copy: a different dtype


def test_as_tensor_of_a_tensor_is_itself_when_nothing_changes() -> None:
    t = mta.ones(2, requires_grad=True)
    assert mta.as_tensor(t) is t and mta.as_tensor(t, dtype=mta.float32) is t
    converted = mta.as_tensor(t, dtype=mta.float64)
    assert converted is not t and converted.dtype == np.float64
    assert mta.as_tensor([1, 2]).dtype == torch.as_tensor([1, 2]).numpy().dtype


def test_asarray_copy_flags() -> None:
    a = np.arange(3)
    assert mta.asarray(a).array is a
    shared = mta.asarray(a, copy=False)
    a[1] = 5
    assert shared.tolist() == torch.asarray(a, copy=False).tolist()
    copied = mta.asarray(a, copy=True)
    a[2] = 8
    assert copied.tolist() == [0, 5, 2]
    with pytest.raises(ValueError, match="copy=False"):
        mta.asarray(a, dtype=mta.float32, copy=False)
    with pytest.raises(ValueError, match="copy=False"):
        mta.asarray([1.0, 2.0], copy=False)
    assert mta.asarray([1.0], requires_grad=True).requires_grad


def test_clone_detach_t_numel() -> None:
    x = mta.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    c = mta.clone(x)
    assert c.grad_fn is not None and c.tolist() == x.tolist()
    d = mta.detach(x)
    assert not d.requires_grad and np.shares_memory(d.array, x.array)
    assert mta.t(x).shape == torch.t(torch.zeros(1, 3)).shape
    assert mta.numel(x) == torch.numel(torch.zeros(1, 3)) == 3


# ------------------------------------------------------------------ predicates
DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"]


@pytest.mark.parametrize("name", DTYPES)
def test_dtype_predicates_match_pytorch(name: str) -> None:
    ours = mta.zeros(1, dtype=getattr(mta, name if name != "bool" else "bool_"))
    theirs = torch.zeros(1, dtype=getattr(torch, name))
    for pred in ("is_floating_point", "is_complex", "is_signed"):
        assert getattr(mta, pred)(ours) == getattr(torch, pred)(theirs)
        assert getattr(ours, pred)() == getattr(theirs, pred)()
    kind = np.dtype(name).kind
    assert mta.is_floating_point(ours) == (kind == "f")
    assert mta.is_signed(ours) == (kind in "if")


def test_is_nonzero_and_is_same_size() -> None:
    for values in ([0.0], [1.5], [math.nan], 3, [-0.0]):
        assert mta.is_nonzero(mta.tensor(values)) == torch.is_nonzero(torch.tensor(values))
    for bad in ([1, 2], []):
        with pytest.raises(RuntimeError) as ours:
            mta.tensor(bad).is_nonzero()
        with pytest.raises(RuntimeError) as theirs:
            torch.tensor(bad).is_nonzero()
        assert str(ours.value) == str(theirs.value)
    assert mta.is_same_size(mta.zeros(2, 3), mta.ones(2, 3))
    assert not mta.zeros(2, 3).is_same_size(mta.zeros(3, 2))
    assert mta.is_tensor(mta.nn.Parameter(mta.zeros(1))) and not mta.is_tensor(np.zeros(1))


def test_typename_matches_pytorch() -> None:
    for name in ("float32", "float64", "int64", "int32", "uint8", "bool"):
        ours = mta.typename(mta.zeros(1, dtype=np.dtype(name)))
        theirs = torch.typename(torch.zeros(1, dtype=getattr(torch, name)))
        assert ours.replace("minitorch_accel.", "torch.") == theirs
    assert mta.typename(3) == torch.typename(3) == "int"
    assert mta.typename(mta.nn.Linear).endswith("Linear")


# ------------------------------------------------------------------ finfo / iinfo
@pytest.mark.parametrize("name", ["float16", "float32", "float64"])
def test_finfo_matches_pytorch_and_numpy(name: str) -> None:
    ours, theirs = mta.finfo(np.dtype(name)), torch.finfo(getattr(torch, name))
    for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
    assert ours.eps == float(np.nextafter(np.dtype(name).type(1), np.dtype(name).type(2)) - 1)
    assert repr(ours) == repr(theirs)


def test_finfo_default_and_errors() -> None:
    assert mta.finfo().dtype == torch.finfo().dtype == "float32"
    with pytest.raises(TypeError):
        mta.finfo(mta.int32)


@pytest.mark.parametrize("name", ["int8", "int16", "int32", "int64", "uint8"])
def test_iinfo_matches_pytorch(name: str) -> None:
    ours, theirs = mta.iinfo(np.dtype(name)), torch.iinfo(getattr(torch, name))
    assert (ours.bits, ours.min, ours.max, ours.dtype) == (
        theirs.bits,
        theirs.min,
        theirs.max,
        theirs.dtype,
    )
    assert ours.max == 2 ** (ours.bits - (name[0] == "i")) - 1
    assert repr(ours) == repr(theirs)


def test_iinfo_refuses_bool_and_floats_as_pytorch() -> None:
    for ours_dt, theirs_dt in ((mta.bool_, torch.bool), (mta.float32, torch.float32)):
        with pytest.raises(TypeError, match="not supported by iinfo"):
            mta.iinfo(ours_dt)
        with pytest.raises(TypeError):
            torch.iinfo(theirs_dt)


# ------------------------------------------------------------------ the generator
def test_rng_state_restores_every_draw() -> None:
    mta.manual_seed(3)
    mta.rand(5)
    mta.randn(2, device="cpu:1")
    state = mta.get_rng_state()
    assert state.dtype == np.uint8 and state.ndim == 1
    first = [
        mta.rand(4).tolist(),
        mta.randn(3, device="cpu:1").tolist(),
        mta.normal(0.0, 1.0, (3,)).tolist(),
        mta.bernoulli(mta.full((6,), 0.5)).tolist(),
    ]
    mta.set_rng_state(state)
    again = [
        mta.rand(4).tolist(),
        mta.randn(3, device="cpu:1").tolist(),
        mta.normal(0.0, 1.0, (3,)).tolist(),
        mta.bernoulli(mta.full((6,), 0.5)).tolist(),
    ]
    assert first == again
    with pytest.raises(ValueError, match="get_rng_state"):
        mta.set_rng_state(mta.tensor([1, 2, 3], dtype=mta.uint8))  # not a state of ours
    with pytest.raises(TypeError):
        mta.set_rng_state(mta.zeros(3))


def test_initial_seed_and_seed() -> None:
    mta.manual_seed(1234)
    assert mta.initial_seed() == 1234
    a = mta.rand(3).tolist()
    s = mta.seed()
    assert mta.initial_seed() == s and 0 <= s < 2**63
    mta.manual_seed(1234)
    assert mta.rand(3).tolist() == a  # manual_seed after seed() restarts the same stream
    mta.manual_seed(0)


# ------------------------------------------------------------------ printing
def test_set_printoptions_changes_repr(default_printoptions: None) -> None:
    x = mta.tensor([1.23456789, 100.5])
    mta.set_printoptions(precision=2)
    assert "1.23" in repr(x) and "1.2346" not in repr(x)
    mta.set_printoptions(threshold=5, edgeitems=2)
    big = repr(mta.arange(100))
    tokens = big.replace("tensor(", "").replace(")", "").strip("[]").replace(" ", "").split(",")
    assert tokens == ["0", "1", "...", "98", "99"]
    mta.set_printoptions(sci_mode=True, precision=2, threshold=1000)
    assert "e+00" in repr(mta.tensor([1.5]))
    mta.set_printoptions(sci_mode=False)
    assert "e" not in repr(mta.tensor([1e-3])).replace("tensor", "")
    mta.set_printoptions(linewidth=20, precision=4)
    assert max(len(line) for line in repr(mta.arange(30)).splitlines()) <= 21
    mta.set_printoptions(profile="full")
    assert "..." not in repr(mta.arange(5000))
    mta.set_printoptions(profile="default")
    assert repr(x) == "tensor([  1.2346, 100.5   ])"
    with pytest.raises(ValueError, match="profile"):
        mta.set_printoptions(profile="tiny")


def test_printoptions_precision_matches_pytorch_digits(default_printoptions: None) -> None:
    values = [0.123456, 2.5]
    for precision in (1, 3, 6):
        mta.set_printoptions(precision=precision)
        torch.set_printoptions(precision=precision)
        try:
            ours = repr(mta.tensor(values)).split("[")[1].split("]")[0]
            theirs = repr(torch.tensor(values)).split("[")[1].split("]")[0]
            assert [float(v) for v in ours.split(",")] == [float(v) for v in theirs.split(",")]
        finally:
            torch.set_printoptions(profile="default")


# ------------------------------------------------------------------ switches
def test_deterministic_flags() -> None:
    try:
        mta.use_deterministic_algorithms(True, warn_only=True)
        assert mta.are_deterministic_algorithms_enabled()
        assert mta.is_deterministic_algorithms_warn_only_enabled()
        mta.use_deterministic_algorithms(False)
        assert not mta.are_deterministic_algorithms_enabled()
        assert not mta.is_deterministic_algorithms_warn_only_enabled()
        with pytest.raises(TypeError):
            mta.use_deterministic_algorithms("yes")  # type: ignore[arg-type]
    finally:
        mta.use_deterministic_algorithms(False)


def test_float32_matmul_precision_is_the_tf32_flag() -> None:
    settings = mta.backends.cuda.matmul
    before = settings.allow_tf32
    try:
        assert mta.get_float32_matmul_precision() == torch.get_float32_matmul_precision()
        for precision in ("high", "medium", "highest"):
            mta.set_float32_matmul_precision(precision)
            assert mta.get_float32_matmul_precision() == precision
            assert settings.allow_tf32 == (precision != "highest")
        settings.allow_tf32 = True  # as PyTorch: the flag and the precision agree
        assert mta.get_float32_matmul_precision() == "high"
        settings.allow_tf32 = False
        assert mta.get_float32_matmul_precision() == "highest"
        with pytest.raises(ValueError, match="highest"):
            mta.set_float32_matmul_precision("low")
    finally:
        settings.allow_tf32 = before
        mta.set_float32_matmul_precision("highest" if not before else "high")


def test_interop_threads() -> None:
    assert mta.get_num_interop_threads() >= 1
    mta.set_num_interop_threads(mta.get_num_interop_threads())
    with pytest.raises(ValueError, match="positive int"):
        mta.set_num_interop_threads(0)


# ------------------------------------------------------------------ making tensors
def test_scalar_tensor_and_range() -> None:
    for value in (3, 2.5, True):
        same(mta.scalar_tensor(value), torch.scalar_tensor(value))
    same(mta.scalar_tensor(2, dtype=mta.int64), torch.scalar_tensor(2, dtype=torch.int64))
    cases = [(0, 3), (1, 4, 1), (0, 1, 0.3), (5, 1, -1.5), (0.5, 2.5, 0.5)]
    for args in cases:
        with warnings.catch_warnings(record=True) as ours_w:
            warnings.simplefilter("always")
            ours = mta.range(*args)
        with warnings.catch_warnings(record=True) as theirs_w:
            warnings.simplefilter("always")
            theirs = torch.range(*args)
        same(ours, theirs, rtol=1e-6)
        assert [str(w.message) for w in ours_w] == [str(w.message) for w in theirs_w]
        assert ours_w[0].category is UserWarning
        start, end = args[0], args[1]
        step = args[2] if len(args) > 2 else 1
        expected, value = [], float(start)
        while (value <= end + 1e-9) if step > 0 else (value >= end - 1e-9):
            expected.append(value)  # end included
            value += step
        np.testing.assert_allclose(np.asarray(ours, dtype=np.float64), expected, rtol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same(mta.range(1, 4, dtype=mta.int64), torch.range(1, 4, dtype=torch.int64))
        with pytest.raises(ValueError, match="inconsistent with step sign"):
            mta.range(0, 3, -1)


def test_unravel_index_matches_pytorch_and_numpy() -> None:
    idx = [0, 4, 5, -1, -6, 7, -9]
    ours = mta.unravel_index(mta.tensor(idx), (2, 3))
    theirs = torch.unravel_index(torch.tensor(idx), (2, 3))
    for o, t in zip(ours, theirs, strict=True):
        same(o, t)
    in_range = [i for i in idx if -6 <= i < 6]
    reference = np.unravel_index(np.array(in_range) % 6, (2, 3))
    ours_in = mta.unravel_index(mta.tensor(in_range), (2, 3))
    assert [c.tolist() for c in ours_in] == [r.tolist() for r in reference]
    scalar = mta.unravel_index(mta.tensor(4), 6)
    assert [c.tolist() for c in scalar] == [
        t.tolist() for t in torch.unravel_index(torch.tensor(4), 6)
    ]
    with pytest.raises(TypeError, match="integer dtype"):
        mta.unravel_index(mta.tensor([1.0]), (2, 3))
    with pytest.raises(ValueError, match="negative"):
        mta.unravel_index(mta.tensor([1]), (2, -3))


# ------------------------------------------------------------------ random draws
def test_normal_forms_shapes_and_statistics() -> None:
    mta.manual_seed(0)
    m = mta.tensor([[0.0], [10.0]], dtype=mta.float64)
    s = mta.tensor([1.0, 2.0, 3.0], dtype=mta.float64)
    both_t = mta.normal(m, s)
    assert both_t.shape == torch.normal(torch.zeros(2, 1), torch.ones(3)).shape
    assert mta.normal(m, 2.0).shape == (2, 1) and mta.normal(1.0, s).shape == (3,)
    fixed = mta.normal(2.0, 3.0, (40000,))
    assert fixed.dtype == np.float32 and fixed.shape == torch.normal(2.0, 3.0, (4,)).shape[:0] + (
        40000,
    )
    assert abs(fixed.mean().item() - 2.0) < 0.06 and abs(fixed.std().item() - 3.0) < 0.06
    many = mta.normal(mta.full((40000,), -1.0), mta.full((40000,), 0.5))
    assert abs(many.mean().item() + 1.0) < 0.02 and abs(many.std().item() - 0.5) < 0.02
    zero_std = mta.normal(mta.tensor([1.5, -2.0]), 0.0)
    assert zero_std.tolist() == [1.5, -2.0]
    with pytest.raises(ValueError, match="std"):
        mta.normal(mta.zeros(2), -1.0)
    with pytest.raises(TypeError):
        mta.normal(0.0, 1.0)


@pytest.mark.parametrize("form", ["mean", "std", "both"])
def test_normal_gradient_is_zero_as_pytorch(form: str) -> None:
    m, tm = both([0.5, 1.0], grad=True)
    s, ts = both([1.0, 2.0], grad=True)
    args = {"mean": (m, 1.0), "std": (0.0, s), "both": (m, s)}[form]
    targs = {"mean": (tm, 1.0), "std": (0.0, ts), "both": (tm, ts)}[form]
    out, tout = mta.normal(*args), torch.normal(*targs)
    assert out.requires_grad == tout.requires_grad and (out.grad_fn is None) == (
        tout.grad_fn is None
    )
    out.backward(mta.tensor([1.0, math.inf], dtype=mta.float64))
    tout.backward(torch.tensor([1.0, math.inf], dtype=torch.float64))
    for ours, theirs in ((m, tm), (s, ts)):
        if theirs.grad is not None:
            same(ours.grad, theirs.grad)


def test_bernoulli_and_poisson() -> None:
    mta.manual_seed(1)
    p = mta.tensor([0.0, 1.0, 0.0, 1.0], dtype=mta.float64)
    assert mta.bernoulli(p).tolist() == [0.0, 1.0, 0.0, 1.0]
    draws = mta.bernoulli(mta.full((50000,), 0.3))
    assert set(draws.tolist()) <= {0.0, 1.0} and abs(draws.mean().item() - 0.3) < 0.01
    assert mta.bernoulli(mta.zeros(1000), 0.7).mean().item() == pytest.approx(0.7, abs=0.05)
    for bad in ([1.5], [-0.1], [math.nan]):
        with pytest.raises(ValueError, match="probabilities"):
            mta.bernoulli(mta.tensor(bad))
    rates = mta.poisson(mta.full((50000,), 4.0, dtype=mta.float64))
    assert rates.dtype == np.float64 and abs(rates.mean().item() - 4.0) < 0.05
    assert np.all(np.asarray(rates) == np.round(np.asarray(rates)))
    with pytest.raises(ValueError, match="invalid rates"):
        mta.poisson(mta.tensor([-1.0]))
    x, tx = both([0.2, 0.9], grad=True)
    for ours, theirs in (
        (mta.bernoulli(x), torch.bernoulli(tx)),
        (mta.poisson(x), torch.poisson(tx)),
    ):
        assert ours.requires_grad == theirs.requires_grad
        ours.sum().backward()
        theirs.sum().backward()
        same(x.grad, tx.grad)
        x.grad, tx.grad = None, None


# ------------------------------------------------------------------ elementwise
def test_rsub_matches_pytorch() -> None:
    a, ta = both([1.0, -2.0, math.inf], grad=True)
    b, tb = both([3.0, 0.5, math.inf], grad=True)
    out, tout = mta.rsub(a, b, alpha=2), torch.rsub(ta, tb, alpha=2)
    same(out, tout)
    out.sum().backward()
    tout.sum().backward()
    same(a.grad, ta.grad)
    same(b.grad, tb.grad)
    same(mta.rsub(mta.tensor([1, 2]), 10), torch.rsub(torch.tensor([1, 2]), 10))
    np.testing.assert_array_equal(
        np.asarray(mta.rsub(a, 5.0).detach()), 5.0 - np.asarray(a.detach())
    )


@pytest.mark.parametrize("name", ["fmax", "fmin"])
def test_fmax_fmin_values_and_gradients_match_pytorch(name: str) -> None:
    grid = np.array(np.meshgrid(NONFINITE, NONFINITE)).reshape(2, -1)
    a, ta = both(grid[0], grad=True)
    b, tb = both(grid[1], grad=True)
    out, tout = getattr(mta, name)(a, b), getattr(torch, name)(ta, tb)
    same(out, tout)
    reference = getattr(np, name)(grid[0], grid[1])
    np.testing.assert_array_equal(np.asarray(out.detach()), reference)
    for g in (1.0, math.inf):
        a.grad = b.grad = ta.grad = tb.grad = None
        getattr(mta, name)(a, b).backward(mta.full(out.shape, g, dtype=mta.float64))
        getattr(torch, name)(ta, tb).backward(torch.full(tout.shape, g, dtype=torch.float64))
        same(a.grad, ta.grad)
        same(b.grad, tb.grad)
    x, tx = both([1.0, math.nan])
    y, ty = both([2.0, 0.0])
    same(getattr(x, name)(y), getattr(tx, name)(ty))
    same(x.maximum(y), tx.maximum(ty))
    same(x.minimum(y), tx.minimum(ty))


@pytest.mark.parametrize("p", [0, 1, 2, 3.5, math.inf])
def test_dist_matches_pytorch_and_numpy(p: float) -> None:
    rng = np.random.default_rng(0)
    x0, y0 = rng.normal(size=(3, 4)), rng.normal(size=(4,))
    x, tx = both(x0, grad=True)
    y, ty = both(y0, grad=True)
    out, tout = mta.dist(x, y, p), torch.dist(tx, ty, p)
    same(out, tout, rtol=1e-12)
    diff = (x0 - y0).ravel()
    reference = np.count_nonzero(diff) if p == 0 else np.linalg.norm(diff, p)
    assert out.item() == pytest.approx(reference, rel=1e-12)
    if p != 0:  # PyTorch has no gradient for p=0 (its backward raises)
        out.backward()
        tout.backward()
        same(x.grad, tx.grad, rtol=1e-10)
        same(y.grad, ty.grad, rtol=1e-10)
    same(x.dist(y, p), tx.dist(ty, p))
    if p not in (0, math.inf):
        check_grads(lambda u, v: mta.dist(u, v, p), x0, y0)


# ------------------------------------------------------------------ shapes
def test_concat_select_narrow_copy_split_with_sizes_diagflat_msort() -> None:
    a0, b0 = np.arange(6.0).reshape(2, 3), -np.arange(3.0).reshape(1, 3)
    a, ta = both(a0)
    b, tb = both(b0)
    same(mta.concat([a, b]), torch.concat([ta, tb]))
    same(mta.concatenate([a, b], axis=0), torch.concatenate([ta, tb], axis=0))
    np.testing.assert_array_equal(np.asarray(mta.concatenate([a, b])), np.concatenate([a0, b0]))
    for dim, index in ((0, 1), (1, -1), (-1, 0)):
        same(mta.select(a, dim, index), torch.select(ta, dim, index))
        same(a.select(dim, index), ta.select(dim, index))
    view = a.select(0, 0)
    assert np.shares_memory(view.array, a.array)
    with pytest.raises(IndexError):
        a.select(0, 2)
    nc = mta.narrow_copy(a, 1, 1, 2)
    same(nc, torch.narrow_copy(ta, 1, 1, 2))
    assert not np.shares_memory(nc.array, a.array)
    same(a.narrow_copy(0, 1, 1), ta.narrow_copy(0, 1, 1))
    for ours, theirs in zip(
        mta.split_with_sizes(a, [1, 2], 1), torch.split_with_sizes(ta, [1, 2], 1), strict=True
    ):
        same(ours, theirs)
    assert [p.shape for p in a.split_with_sizes([2, 0])] == [(2, 3), (0, 3)]
    with pytest.raises(ValueError, match="do not add up"):
        mta.split_with_sizes(a, [1, 1], 1)
    for offset in (0, 1, -2):
        same(mta.diagflat(a, offset), torch.diagflat(ta, offset))
        np.testing.assert_array_equal(np.asarray(a.diagflat(offset)), np.diagflat(a0, offset))
    m0 = np.array([[3.0, math.nan, -0.0], [1.0, 2.0, 0.0], [-math.inf, 5.0, -1.0]])
    m, tm = both(m0)
    same(mta.msort(m), torch.msort(tm))
    same(m.msort(), tm.msort())


def test_select_and_diagflat_gradients() -> None:
    rng = np.random.default_rng(1)
    check_grads(lambda x: mta.select(x, 1, 2), rng.normal(size=(2, 3)))
    check_grads(lambda x: mta.diagflat(x, 1), rng.normal(size=(2, 2)))
    check_grads(lambda x: mta.msort(x), rng.normal(size=(4, 2)))
    check_grads(lambda x: mta.narrow_copy(x, 0, 1, 2), rng.normal(size=(4, 2)))


@pytest.mark.parametrize("increasing", [False, True])
@pytest.mark.parametrize("n", [None, 0, 1, 4])
def test_vander_matches_pytorch_and_numpy(n: int | None, increasing: bool) -> None:
    x0 = np.array([2.0, 0.0, -1.5, 3.0])
    x, tx = both(x0, grad=True)
    out, tout = mta.vander(x, n, increasing), torch.vander(tx, n, increasing)
    same(out, tout)
    np.testing.assert_array_equal(np.asarray(out.detach()), np.vander(x0, n, increasing))
    assert out.requires_grad == tout.requires_grad
    if out.requires_grad:  # PyTorch's vander backward raises (an in-place cumprod): vs calculus
        out.sum().backward()
        k = np.arange(x.shape[0] if n is None else n)
        expected = (k * np.where(k > 0, x0[:, None] ** np.maximum(k - 1, 0), 0.0)).sum(1)
        np.testing.assert_allclose(np.asarray(x.grad), expected, rtol=1e-12)
    same(mta.vander(mta.tensor([1, 2, 3]), n), torch.vander(torch.tensor([1, 2, 3]), n))
    with pytest.raises(ValueError, match="one-dimensional"):
        mta.vander(mta.zeros(2, 2))


def test_vander_gradcheck() -> None:
    check_grads(lambda x: mta.vander(x, 4), np.array([0.5, -1.2, 2.0]))


# ------------------------------------------------------------------ numerical routines
TRAPEZOID_CASES = [
    ((2, 5), None, None, -1),
    ((2, 5), "1d", None, -1),
    ((5, 3), "1d", None, 0),
    ((2, 5), "full", None, 1),
    ((2, 5), None, 0.25, -1),
    ((4,), None, 2.0, 0),
    ((3, 1), None, None, 1),
]


@pytest.mark.parametrize("shape,x_kind,dx,dim", TRAPEZOID_CASES)
def test_trapezoid_family_matches_pytorch_and_numpy(
    shape: tuple[int, ...], x_kind: str | None, dx: float | None, dim: int
) -> None:
    rng = np.random.default_rng(2)
    y0 = rng.normal(size=shape)
    n = shape[dim]
    x0 = None
    if x_kind == "1d":
        x0 = np.sort(rng.normal(size=n))
    elif x_kind == "full":
        x0 = np.sort(rng.normal(size=shape), axis=dim)
    y, ty = both(y0, grad=True)
    x = None if x0 is None else mta.tensor(x0)
    tx = None if x0 is None else torch.tensor(x0)
    kwargs: dict[str, Any] = {"dim": dim} if dx is None else {"dx": dx, "dim": dim}
    for ours_fn, theirs_fn in (
        (mta.trapezoid, torch.trapezoid),
        (mta.trapz, torch.trapz),
        (mta.cumulative_trapezoid, torch.cumulative_trapezoid),
    ):
        ours = ours_fn(y, x, **kwargs) if x is not None else ours_fn(y, **kwargs)
        theirs = theirs_fn(ty, tx, **kwargs) if tx is not None else theirs_fn(ty, **kwargs)
        same(ours, theirs, rtol=1e-12, atol=1e-15)
        y.grad, ty.grad = None, None
        ours.sum().backward()
        theirs.sum().backward()
        same(y.grad, ty.grad, rtol=1e-12, atol=1e-15)
    reference = (
        np.trapezoid(y0, x0, axis=dim)
        if x0 is not None
        else np.trapezoid(y0, dx=1.0 if dx is None else dx, axis=dim)
    )
    ours_value = mta.trapezoid(y, x, **kwargs) if x is not None else mta.trapezoid(y, **kwargs)
    np.testing.assert_allclose(np.asarray(ours_value.detach()), reference, rtol=1e-12, atol=1e-15)


def test_trapezoid_gradcheck_and_errors() -> None:
    x0 = np.array([0.0, 0.5, 2.0])
    check_grads(lambda y: mta.trapezoid(y, mta.tensor(x0)), np.array([[1.0, 2.0, -1.0]]))
    check_grads(lambda y: mta.cumulative_trapezoid(y, dx=0.5), np.array([1.0, 2.0, -1.0]))
    with pytest.raises(TypeError):
        mta.trapezoid(mta.zeros(3), mta.zeros(3), dx=1.0)


COV_CASES = [
    ("plain", 1, False, False),
    ("rows", 0, False, False),
    ("fweights", 1, True, False),
    ("aweights", 1, False, True),
    ("both", 2, True, True),
    ("vector", 1, False, False),
]


@pytest.mark.parametrize("case,correction,use_f,use_a", COV_CASES)
def test_cov_matches_pytorch_and_numpy(
    case: str, correction: int, use_f: bool, use_a: bool
) -> None:
    rng = np.random.default_rng(3)
    x0 = rng.normal(size=(5,)) if case == "vector" else rng.normal(size=(3, 5))
    f0 = np.array([1, 2, 1, 3, 1])
    a0 = np.array([0.5, 1.0, 2.0, 0.25, 1.5])
    x, tx = both(x0, grad=True)
    kwargs: dict[str, Any] = {"correction": correction}
    tkwargs: dict[str, Any] = {"correction": correction}
    if use_f:
        kwargs["fweights"], tkwargs["fweights"] = mta.tensor(f0), torch.tensor(f0)
    if use_a:
        kwargs["aweights"], tkwargs["aweights"] = mta.tensor(a0), torch.tensor(a0)
    out, tout = mta.cov(x, **kwargs), torch.cov(tx, **tkwargs)
    same(out, tout, rtol=1e-12, atol=1e-15)
    reference = np.cov(
        x0, ddof=correction, fweights=f0 if use_f else None, aweights=a0 if use_a else None
    )
    np.testing.assert_allclose(np.asarray(out.detach()), reference, rtol=1e-12)
    out.sum().backward()
    tout.sum().backward()
    same(x.grad, tx.grad, rtol=1e-10, atol=1e-14)
    same(x.cov(**kwargs), tx.cov(**tkwargs), rtol=1e-12, atol=1e-15)


def test_cov_errors_and_warning() -> None:
    with pytest.warns(UserWarning, match="degrees of freedom") as ours:
        out = mta.cov(mta.tensor([[1.0]]))
    with pytest.warns(UserWarning, match="degrees of freedom") as theirs:
        tout = torch.cov(torch.tensor([[1.0]]))
    same(out, tout)
    assert str(theirs[0].message).startswith(str(ours[0].message))
    with pytest.raises(TypeError, match="integral"):
        mta.cov(mta.zeros(2, 3), fweights=mta.ones(3))
    with pytest.raises(ValueError, match="negative"):
        mta.cov(mta.zeros(2, 3), aweights=mta.tensor([1.0, -1.0, 1.0]))
    with pytest.raises(ValueError, match="size 3"):
        mta.cov(mta.zeros(2, 3), fweights=mta.tensor([1, 1]))
    with pytest.raises(ValueError, match="two or fewer"):
        mta.cov(mta.zeros(2, 2, 2))


def test_corrcoef_matches_pytorch_and_numpy() -> None:
    rng = np.random.default_rng(4)
    x0 = rng.normal(size=(3, 6))
    x0[2] = -2 * x0[0] + 1  # perfectly anti-correlated rows: clipped to exactly -1
    x, tx = both(x0, grad=True)
    out, tout = mta.corrcoef(x), torch.corrcoef(tx)
    same(out, tout, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(np.asarray(out.detach()), np.corrcoef(x0), rtol=1e-12, atol=1e-15)
    assert np.all(np.abs(np.asarray(out.detach())) <= 1.0)
    out.sum().backward()
    tout.sum().backward()
    same(x.grad, tx.grad, rtol=1e-8, atol=1e-12)
    same(x.corrcoef(), tx.corrcoef(), rtol=1e-12, atol=1e-15)
    v, tv = both([1.0, 2.0, 4.0])
    same(mta.corrcoef(v), torch.corrcoef(tv))


# ------------------------------------------------------------------ windows
WINDOWS = ["hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"]
NUMPY_WINDOWS = {
    "hann_window": np.hanning,
    "hamming_window": np.hamming,
    "blackman_window": np.blackman,
    "bartlett_window": np.bartlett,
    "kaiser_window": lambda n: np.kaiser(n, 12.0),
}


@pytest.mark.parametrize("name", WINDOWS)
@pytest.mark.parametrize("length", [0, 1, 2, 5, 8])
def test_windows_match_pytorch_and_numpy(name: str, length: int) -> None:
    for periodic in (True, False):
        for dtype, tdtype, rtol in (
            (mta.float64, torch.float64, 1e-12),
            (mta.float32, torch.float32, 2e-6),
        ):
            ours = getattr(mta, name)(length, periodic, dtype=dtype)
            theirs = getattr(torch, name)(length, periodic, dtype=tdtype)
            same(ours, theirs, rtol=rtol, atol=rtol)
        symmetric = getattr(mta, name)(length, False, dtype=mta.float64)
        if length > 1:
            np.testing.assert_allclose(
                np.asarray(symmetric), NUMPY_WINDOWS[name](length), rtol=1e-12, atol=1e-15
            )
    assert getattr(mta, name)(4).dtype == np.float32
    assert getattr(mta, name)(3, requires_grad=True).requires_grad
    with pytest.raises(TypeError, match="floating point"):
        getattr(mta, name)(4, dtype=mta.int64)
    with pytest.raises(ValueError, match="non-negative"):
        getattr(mta, name)(-1)


def test_window_parameters_match_pytorch() -> None:
    same(
        mta.hamming_window(7, False, 0.5, 0.5, dtype=mta.float64),
        torch.hamming_window(7, False, 0.5, 0.5, dtype=torch.float64),
        rtol=1e-12,
        atol=1e-15,
    )
    same(
        mta.kaiser_window(9, True, 5.0, dtype=mta.float64),
        torch.kaiser_window(9, True, 5.0, dtype=torch.float64),
        rtol=1e-12,
    )


# ------------------------------------------------------------------ torch.* forms of F ops
def _arrays(rng: np.random.Generator, *shapes: tuple[int, ...]) -> list[np.ndarray]:
    return [rng.normal(size=s) for s in shapes]


def _top_level_cases() -> list[tuple[str, Callable[[np.random.Generator], tuple[Any, ...]]]]:
    def tensors(*shapes: tuple[int, ...]) -> Callable[[np.random.Generator], tuple[Any, ...]]:
        return lambda rng: tuple(_arrays(rng, *shapes))

    def with_args(
        shapes: tuple[tuple[int, ...], ...], *rest: Any
    ) -> Callable[[np.random.Generator], tuple[Any, ...]]:
        return lambda rng: (*_arrays(rng, *shapes), *rest)

    positive = lambda rng: (rng.uniform(0.1, 1, (3, 4)), rng.uniform(0.1, 1, (3, 4)))  # noqa: E731
    signs = lambda rng: (*_arrays(rng, (4,), (4,)), np.array([1.0, -1.0, 1.0, -1.0]))  # noqa: E731
    return [
        ("conv1d", with_args(((2, 3, 8), (4, 3, 3), (4,)), 2, 1)),
        ("conv2d", with_args(((1, 2, 6, 6), (3, 2, 3, 3), (3,)), 1, 1, 1, 1)),
        ("conv_transpose1d", with_args(((1, 2, 5), (2, 3, 3), (3,)), 2, 1, 1)),
        ("conv_transpose2d", with_args(((1, 2, 4, 4), (2, 3, 3, 3)), None, 2, 1)),
        ("max_pool1d", with_args(((2, 3, 9),), 3, 2, 1)),
        ("max_pool2d", with_args(((1, 2, 6, 6),), 2)),
        ("avg_pool1d", with_args(((2, 3, 9),), 3, 2, 1, False, False)),
        ("adaptive_avg_pool1d", with_args(((2, 3, 9),), 4)),
        (
            "layer_norm",
            lambda rng: (rng.normal(size=(2, 3, 4)), [4], *_arrays(rng, (4,), (4,)), 1e-5, True),
        ),
        ("group_norm", lambda rng: (rng.normal(size=(2, 4, 3)), 2, *_arrays(rng, (4,), (4,)))),
        ("pixel_shuffle", with_args(((1, 8, 2, 2),), 2)),
        ("pixel_unshuffle", with_args(((1, 2, 4, 4),), 2)),
        ("cosine_similarity", tensors((3, 4), (3, 4))),
        ("pairwise_distance", tensors((3, 4), (3, 4))),
        ("pdist", tensors((5, 3))),
        ("selu", tensors((3, 4))),
        ("celu", with_args(((3, 4),), 0.7)),
        ("prelu", tensors((2, 3, 4), (3,))),
        ("threshold", with_args(((3, 4),), 0.1, -2.0)),
        ("bilinear", tensors((3, 2), (3, 4), (5, 2, 4), (5,))),
        ("channel_shuffle", with_args(((1, 4, 2, 2),), 2)),
        ("rms_norm", lambda rng: (rng.normal(size=(2, 3, 4)), [4], rng.normal(size=4))),
        ("kl_div", lambda rng: (*positive(rng), 1)),
        (
            "binary_cross_entropy_with_logits",
            lambda rng: (*_arrays(rng, (3, 4)), rng.uniform(0, 1, (3, 4)), None, None, 2),
        ),
        ("poisson_nll_loss", lambda rng: (*positive(rng), True, False, 1e-8, 1)),
        (
            "cosine_embedding_loss",
            lambda rng: (*_arrays(rng, (4, 3), (4, 3)), np.array([1.0, -1.0, 1.0, -1.0]), 0.1, 0),
        ),
        (
            "hinge_embedding_loss",
            lambda rng: (*_arrays(rng, (4,)), np.array([1.0, -1.0, 1.0, -1.0]), 0.5, 2),
        ),
        ("margin_ranking_loss", lambda rng: (*signs(rng), 0.2, 1)),
        (
            "triplet_margin_loss",
            lambda rng: (*_arrays(rng, (4, 3), (4, 3), (4, 3)), 1.0, 2.0, 1e-6, True, 1),
        ),
    ]


@pytest.mark.parametrize(
    "name,make", _top_level_cases(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_top_level_functional_forms_match_pytorch(
    name: str, make: Callable[..., tuple[Any, ...]]
) -> None:
    args = make(np.random.default_rng(5))
    ours_args = [
        mta.tensor(a, requires_grad=True) if isinstance(a, np.ndarray) else a for a in args
    ]
    theirs_args = [
        torch.tensor(a, requires_grad=True) if isinstance(a, np.ndarray) else a for a in args
    ]
    ours, theirs = getattr(mta, name)(*ours_args), getattr(torch, name)(*theirs_args)
    same(ours, theirs, rtol=1e-10, atol=1e-12)
    ours.sum().backward()
    theirs.sum().backward()
    rtol = 1e-7 if name == "celu" else 1e-9  # PyTorch's celu backward uses a float32 1/alpha
    for o, t in zip(ours_args, theirs_args, strict=True):
        if isinstance(o, Tensor) and t.grad is not None:
            same(o.grad, t.grad, rtol=rtol, atol=1e-12)
        elif isinstance(o, Tensor):  # no gradient in PyTorch (a target): none or zeros here
            assert o.grad is None or not np.asarray(o.grad).any()


def test_top_level_norm_dropout_embedding_forms() -> None:
    rng = np.random.default_rng(6)
    x0, w0, b0 = rng.normal(size=(4, 3, 5)), rng.normal(size=3), rng.normal(size=3)
    x, tx = both(x0)
    w, tw = both(w0)
    b, tb = both(b0)
    for training in (True, False):
        rm, trm = both(np.zeros(3))
        rv, trv = both(np.ones(3))
        same(
            mta.batch_norm(x, w, b, rm, rv, training, 0.1, 1e-5, False),
            torch.batch_norm(tx, tw, tb, trm, trv, training, 0.1, 1e-5, False),
            rtol=1e-10,
            atol=1e-12,
        )
        same(rm, trm, rtol=1e-12)
        same(rv, trv, rtol=1e-12)
    same(
        mta.instance_norm(x, w, b, None, None, True, 0.1, 1e-5, False),
        torch.instance_norm(tx, tw, tb, None, None, True, 0.1, 1e-5, False),
        rtol=1e-10,
        atol=1e-12,
    )
    table, ttable = both(rng.normal(size=(5, 2)))
    idx = [[0, 4], [2, 2]]
    same(mta.embedding(table, mta.tensor(idx)), torch.embedding(ttable, torch.tensor(idx)))
    same(mta.embedding(table, mta.tensor(idx), 2), torch.embedding(ttable, torch.tensor(idx), 2))
    for name in ("dropout", "alpha_dropout", "feature_alpha_dropout"):
        same(getattr(mta, name)(x, 0.5, False), getattr(torch, name)(tx, 0.5, False))
    kept = mta.dropout(mta.ones(10000), 0.25, True)
    assert set(np.unique(np.asarray(kept)).tolist()) <= {0.0, float(np.float32(1 / 0.75))}
    assert abs((kept == 0).float().mean().item() - 0.25) < 0.03
    values, indices = mta.adaptive_max_pool1d(x, 2)
    tvalues, tindices = torch.adaptive_max_pool1d(tx, 2)
    same(values, tvalues)
    same(indices, tindices)
    with pytest.raises(ValueError, match="reduction is an int"):
        mta.kl_div(x, x, "mean")  # type: ignore[arg-type]


def test_kl_div_mean_is_over_every_element() -> None:
    rng = np.random.default_rng(7)
    a0, b0 = np.log(rng.uniform(0.1, 1, (4, 3))), rng.uniform(0.1, 1, (4, 3))
    for reduction in (0, 1, 2):
        for log_target in (False, True):
            target = np.log(b0) if log_target else b0
            ours = mta.kl_div(mta.tensor(a0), mta.tensor(target), reduction, log_target=log_target)
            theirs = torch.kl_div(
                torch.tensor(a0), torch.tensor(target), reduction, log_target=log_target
            )
            same(ours, theirs, rtol=1e-12)
    pointwise = b0 * (np.log(b0) - a0)
    assert mta.kl_div(mta.tensor(a0), mta.tensor(b0)).item() == pytest.approx(
        pointwise.mean(), rel=1e-12
    )


def test_pdist_gradcheck_and_numpy() -> None:
    rng = np.random.default_rng(8)
    x0 = rng.normal(size=(4, 3))
    for p in (1.0, 2.0, 3.0):
        rows, cols = np.triu_indices(4, 1)
        reference = np.linalg.norm(x0[rows] - x0[cols], ord=p, axis=1)
        np.testing.assert_allclose(np.asarray(F.pdist(mta.tensor(x0), p)), reference, rtol=1e-12)
        check_grads(lambda x, p=p: mta.pdist(x, p), x0)
    with pytest.raises(ValueError, match="2D"):
        mta.pdist(mta.zeros(3))


# ------------------------------------------------------------------ Tensor methods
def test_strides_offsets_pointers_match_pytorch() -> None:
    base0 = np.arange(24.0).reshape(2, 3, 4)
    ours, theirs = mta.tensor(base0), torch.tensor(base0)
    views: list[Callable[[Any], Any]] = [
        lambda t: t,
        lambda t: t.transpose(0, 2),
        lambda t: t[1],
        lambda t: t[:, 1:, ::2],
        lambda t: t[1, 2, 1:],
        lambda t: t.permute(2, 0, 1),
        lambda t: t[:, :1].expand(2, 5, 4),
        lambda t: t.view(6, 4)[2:],
    ]
    for view in views:
        o, t = view(ours), view(theirs)
        assert o.stride() == t.stride()
        assert o.storage_offset() == t.storage_offset()
        assert o.data_ptr() - ours.data_ptr() == t.data_ptr() - theirs.data_ptr()
        for d in range(o.ndim):
            assert o.stride(d) == t.stride(d) and o.stride(d - o.ndim) == t.stride(d - t.ndim)
        # a PyTorch-free check: the element at the computed offset is the first value
        flat = np.asarray(ours).ravel()
        assert flat[o.storage_offset()] == np.asarray(o).ravel()[0]
    assert ours.get_device() == theirs.get_device() == -1
    assert mta.zeros(1, device="cpu:1").get_device() == -1
    assert ours.itemsize == theirs.itemsize == 8
    assert mta.zeros(1, dtype=mta.int16).itemsize == 2


def test_unfold_matches_pytorch() -> None:
    rng = np.random.default_rng(9)
    x0 = rng.normal(size=(3, 7))
    for dim, size, step in ((1, 3, 2), (0, 2, 1), (-1, 7, 1), (1, 1, 3), (1, 0, 1)):
        x, tx = both(x0, grad=True)
        out, tout = x.unfold(dim, size, step), tx.unfold(dim, size, step)
        same(out, tout)
        if out.numel():
            g = rng.normal(size=out.shape)
            out.backward(mta.tensor(g))
            tout.backward(torch.tensor(g))
            same(x.grad, tx.grad, rtol=1e-12)
    same(mta.tensor(5.0).unfold(0, 1, 1), torch.tensor(5.0).unfold(0, 1, 1))
    windows = np.lib.stride_tricks.sliding_window_view(x0, 3, axis=1)[:, ::2]
    np.testing.assert_array_equal(np.asarray(mta.tensor(x0).unfold(1, 3, 2)), windows)
    check_grads(lambda t: t.unfold(1, 3, 2), x0)
    with pytest.raises(RuntimeError, match="maximum size"):
        mta.zeros(3).unfold(0, 4, 1)
    with pytest.raises(RuntimeError, match="step"):
        mta.zeros(3).unfold(0, 2, 0)


def test_sum_to_size_matches_pytorch() -> None:
    x0 = np.arange(24.0).reshape(2, 3, 4)
    x, tx = both(x0, grad=True)
    for size in ((1, 3, 1), (3, 4), (4,), (2, 1, 4), (1,), (2, 3, 4)):
        same(x.sum_to_size(*size), tx.sum_to_size(*size))
        same(x.sum_to_size(size), tx.sum_to_size(size))
    out, tout = x.sum_to_size(3, 1), tx.sum_to_size(3, 1)
    out.backward(mta.ones(3, 1, dtype=mta.float64))
    tout.backward(torch.ones(3, 1, dtype=torch.float64))
    same(x.grad, tx.grad)
    np.testing.assert_array_equal(
        np.asarray(x.sum_to_size(3, 1).detach()), x0.sum(axis=(0, 2))[:, None]
    )
    for bad in ((2,), (5, 4)):
        with pytest.raises(RuntimeError, match="not expandable"):
            x.sum_to_size(*bad)
        with pytest.raises(RuntimeError, match="not expandable"):
            tx.sum_to_size(*bad)


def test_legacy_new_matches_pytorch() -> None:
    ours, theirs = mta.zeros(2, dtype=mta.float64), torch.zeros(2, dtype=torch.float64)
    for args in ((), (2, 3), (mta.Size((2, 2)),), ([1, 2],), ((2, 3),), (np.array([1.5]),)):
        targs = tuple(torch.Size(a) if isinstance(a, mta.Size) else a for a in args)
        o, t = ours.new(*args), theirs.new(*targs)
        assert tuple(o.shape) == tuple(t.shape) and str(o.dtype) == str(t.dtype).replace(
            "torch.", ""
        )
        if args and not isinstance(args[0], (int, mta.Size)):
            assert o.tolist() == t.tolist()
    assert (
        mta.zeros(1, dtype=mta.int32).new([1.7]).tolist()
        == torch.zeros(1, dtype=torch.int32).new([1.7]).tolist()
    )
    assert ours.new(3, device="cpu:1").device == mta.device("cpu:1")


def test_conjugate_and_transposes() -> None:
    x0 = np.arange(6.0).reshape(2, 3)
    x, tx = both(x0)
    same(x.H, tx.H)
    same(x.mH, tx.mH)
    same(x.adjoint(), tx.adjoint())
    same(mta.zeros(4, 2, 3).mH, torch.zeros(4, 2, 3, dtype=torch.float32).mH)
    assert x.conj() is x and x.resolve_conj() is x and x.resolve_neg() is x
    assert tx.conj() is tx and not x.is_conj() and not x.is_neg()
    with pytest.raises(RuntimeError, match="2-D"):
        _ = mta.arange(3.0).H
    with pytest.raises(RuntimeError, match="matrices"):
        _ = mta.arange(3.0).mH
    with pytest.warns(UserWarning, match="deprecated on 0-D"):
        same(mta.tensor(1.0).H, torch.tensor(1.0))
    np.testing.assert_array_equal(np.asarray(x.H), x0.T)


def test_flags_where_prelu_hardshrink() -> None:
    x, tx = both(NONFINITE, grad=True)
    for name in ("is_inference", "is_shared", "is_pinned"):
        assert getattr(x, name)() == getattr(tx, name)() is False
    cond = [True, False] * 4
    same(x.where(mta.tensor(cond), 0.0), tx.where(torch.tensor(cond), 0.0))
    w, tw = both([0.25], grad=True)
    out, tout = x.prelu(w), tx.prelu(tw)
    same(out, tout)
    out.sum().backward()
    tout.sum().backward()
    same(x.grad, tx.grad)
    same(w.grad, tw.grad)
    same(x.hardshrink(0.75), tx.hardshrink(0.75))
    np.testing.assert_array_equal(
        np.asarray(x.detach().hardshrink()),
        np.where(np.abs(np.array(NONFINITE)) <= 0.5, 0.0, NONFINITE),
    )


def test_pin_memory_as_pytorch_without_an_accelerator() -> None:
    x = mta.ones(3)
    if "cuda" in mta.backends.available():
        pinned = x.pin_memory()
        assert pinned.is_pinned() and pinned.tolist() == x.tolist() and not x.is_pinned()
        assert pinned.pin_memory() is pinned
        return
    with pytest.raises(RuntimeError) as ours:
        x.pin_memory()
    with pytest.raises(RuntimeError) as theirs:
        torch.ones(3).pin_memory()
    assert str(ours.value) == str(theirs.value)


def test_post_accumulate_grad_hook_matches_pytorch() -> None:
    seen: list[tuple[str, list[float]]] = []
    x, tx = both([1.0, 2.0], grad=True)

    def recorder(tag: str) -> Callable[[Any], None]:
        return lambda leaf: seen.append((tag, leaf.grad.tolist()))

    handles = [x.register_post_accumulate_grad_hook(recorder("ours"))]
    handles.append(tx.register_post_accumulate_grad_hook(recorder("theirs")))
    for _ in range(2):
        (x * x).sum().backward()
        (tx * tx).sum().backward()
    assert [g for tag, g in seen if tag == "ours"] == [g for tag, g in seen if tag == "theirs"]
    assert [g for tag, g in seen if tag == "ours"] == [[2.0, 4.0], [4.0, 8.0]]  # after accumulating
    for h in handles:
        h.remove()
    (x * 3).sum().backward()
    assert len(seen) == 4
    y = x * 2
    with pytest.raises(RuntimeError, match="non-leaf"):
        y.register_post_accumulate_grad_hook(lambda t: None)
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        mta.zeros(2).register_post_accumulate_grad_hook(lambda t: None)
    z = mta.tensor([1.0], requires_grad=True)
    z.register_post_accumulate_grad_hook(lambda t: None)
    (gz,) = mta.autograd.grad((z * 5).sum(), [z])
    assert gz.tolist() == [5.0] and z.grad is None  # autograd.grad accumulates nothing


# ------------------------------------------------------------------ nn.functional
INPLACE = [
    ("relu_", ()),
    ("elu_", (0.7,)),
    ("selu_", ()),
    ("celu_", (0.7,)),
    ("leaky_relu_", (0.2,)),
    ("hardtanh_", (-0.5, 1.5)),
    ("threshold_", (0.25, -3.0)),
]


@pytest.mark.parametrize("name,args", INPLACE, ids=[n for n, _ in INPLACE])
def test_functional_inplace_forms_match_pytorch(name: str, args: tuple[Any, ...]) -> None:
    x, tx = both(NONFINITE)
    version = x._version
    out, tout = getattr(F, name)(x, *args), getattr(TF, name)(tx, *args)
    assert out is x and tout is tx
    same(x, tx)
    assert x._version > version
    plain = getattr(F, name.rstrip("_"))(mta.tensor(NONFINITE, dtype=mta.float64), *args)
    same(plain, tx)
    leaf = mta.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        getattr(F, name)(leaf, *args)
    a, ta = both([0.5, -1.0, 2.0], grad=True)
    h, th = a * 1.0, ta * 1.0
    getattr(F, name)(h, *args)
    getattr(TF, name)(th, *args)
    h.sum().backward()
    th.sum().backward()
    same(
        a.grad, ta.grad, rtol=1e-7 if name == "celu_" else 1e-12
    )  # PyTorch's celu: float32 1/alpha


def test_rrelu_eval_matches_pytorch_and_training_draws_slopes() -> None:
    for lower, upper in ((1 / 8, 1 / 3), (0.2, 0.2)):
        x, tx = both(NONFINITE, grad=True)
        out, tout = F.rrelu(x, lower, upper), TF.rrelu(tx, lower, upper)
        same(out, tout)
        out.backward(mta.tensor([1.0, 1.0, 1.0, 1.0, math.inf, 1.0, 1.0, 1.0], dtype=mta.float64))
        tout.backward(
            torch.tensor([1.0, 1.0, 1.0, 1.0, math.inf, 1.0, 1.0, 1.0], dtype=torch.float64)
        )
        same(x.grad, tx.grad)
    mta.manual_seed(5)
    x0 = np.concatenate([-np.linspace(0.5, 3, 2000), np.linspace(0.5, 3, 10)])
    x = mta.tensor(x0, requires_grad=True)
    out = F.rrelu(x, 0.1, 0.3, training=True)
    slopes = np.asarray(out.detach())[:2000] / x0[:2000]
    assert np.all((slopes >= 0.1) & (slopes < 0.3)) and np.ptp(slopes) > 0.15
    assert abs(slopes.mean() - 0.2) < 0.01
    np.testing.assert_array_equal(np.asarray(out.detach())[2000:], x0[2000:])
    out.sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad)[:2000], slopes, rtol=1e-12)
    assert np.all(np.asarray(x.grad)[2000:] == 1.0)
    t = torch.tensor(x0)
    theirs = TF.rrelu(t, 0.1, 0.3, training=True).numpy()[:2000] / x0[:2000]
    assert np.all((theirs >= 0.1) & (theirs <= 0.3))  # the same property holds for PyTorch's
    y = mta.tensor([-2.0, 3.0])
    assert F.rrelu_(y, 0.5, 0.5, training=True) is y and y.tolist() == [-1.0, 3.0]
    with pytest.raises(ValueError, match="lower"):
        F.rrelu(mta.zeros(2), 0.5, 0.1)


def test_rrelu_module() -> None:
    layer, tlayer = mta.nn.RReLU(0.1, 0.3), torch.nn.RReLU(0.1, 0.3)
    assert repr(layer) == repr(tlayer)
    assert repr(mta.nn.RReLU(inplace=True)) == repr(torch.nn.RReLU(inplace=True))
    x, tx = both(NONFINITE)
    same(layer.eval()(x), tlayer.eval()(tx))
    layer.train()
    out = layer(mta.full((500,), -1.0, dtype=mta.float64))
    assert np.ptp(np.asarray(out)) > 0  # random slopes in training mode
    assert mta.nn.RReLU(inplace=True)(x) is x


def test_gumbel_softmax_properties_and_straight_through_gradient() -> None:
    rng = np.random.default_rng(10)
    logits0 = rng.normal(size=(4, 5))
    mta.manual_seed(11)
    soft = F.gumbel_softmax(mta.tensor(logits0), tau=0.5)
    values = np.asarray(soft)
    assert np.all(values > 0) and np.allclose(values.sum(1), 1.0)
    tsoft = TF.gumbel_softmax(torch.tensor(logits0), tau=0.5)
    assert tuple(soft.shape) == tuple(tsoft.shape) and str(soft.dtype) == str(tsoft.dtype).replace(
        "torch.", ""
    )
    logits = mta.tensor(logits0, requires_grad=True)
    weights = mta.tensor(rng.normal(size=(4, 5)))
    state = mta.get_rng_state()
    hard = F.gumbel_softmax(logits, tau=0.7, hard=True, dim=1)
    mta.set_rng_state(state)
    soft_same = F.gumbel_softmax(logits, tau=0.7, hard=False, dim=1)
    hard_values = np.asarray(hard.detach())
    assert set(np.unique(hard_values).tolist()) == {0.0, 1.0} and np.all(hard_values.sum(1) == 1)
    assert np.array_equal(hard_values.argmax(1), np.asarray(soft_same.detach()).argmax(1))
    (g_hard,) = mta.autograd.grad((hard * weights).sum(), [logits])
    (g_soft,) = mta.autograd.grad((soft_same * weights).sum(), [logits])
    np.testing.assert_allclose(np.asarray(g_hard), np.asarray(g_soft), rtol=1e-12, atol=1e-15)
    t_logits = torch.tensor(logits0, requires_grad=True)
    t_hard = TF.gumbel_softmax(t_logits, tau=0.7, hard=True, dim=1)
    assert t_hard.sum(1).tolist() == hard.sum(1).tolist()
    # the argmax of a sample follows softmax(logits): frequencies over many draws
    probs0 = np.array([0.1, 0.2, 0.7])
    many = F.gumbel_softmax(mta.tensor(np.log(np.tile(probs0, (20000, 1)))), hard=True, dim=-1)
    freq = np.asarray(many).mean(0)
    np.testing.assert_allclose(freq, probs0, atol=0.015)
    dim0 = F.gumbel_softmax(mta.zeros(3, 2), hard=True, dim=0)
    assert np.asarray(dim0).sum(0).tolist() == [1.0, 1.0]


# ------------------------------------------------------------------ nn.Buffer
def test_buffer_registers_as_pytorch() -> None:
    class Ours(mta.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.count = mta.nn.Buffer(mta.zeros(2))
            self.scratch = mta.nn.Buffer(mta.ones(1), persistent=False)
            self.weight = mta.nn.Parameter(mta.ones(1))

    class Theirs(torch.nn.Module):  # type: ignore[misc,name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.count = torch.nn.Buffer(torch.zeros(2))
            self.scratch = torch.nn.Buffer(torch.ones(1), persistent=False)
            self.weight = torch.nn.Parameter(torch.ones(1))

    ours, theirs = Ours(), Theirs()
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    source = mta.zeros(3)
    buf = mta.nn.Buffer(source)
    assert np.shares_memory(buf.array, source.array) and buf.persistent
    assert isinstance(buf, Tensor) and not isinstance(buf, mta.nn.Parameter)
    ours.count = mta.nn.Buffer(mta.full((2,), 5.0))
    assert ours.state_dict()["count"].tolist() == [5.0, 5.0]
    ours.count = mta.ones(2)  # type: ignore[assignment]  # a plain tensor: still a buffer
    assert "count" in dict(ours.named_buffers())
    with pytest.raises(TypeError):
        mta.nn.Buffer([1.0, 2.0])  # type: ignore[arg-type]
