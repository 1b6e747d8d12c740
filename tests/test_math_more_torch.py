"""The elementwise math of :mod:`minitorch_accel.ops.math_more` and
:mod:`minitorch_accel.ops.bitwise` against PyTorch, NumPy and finite differences.

- Values and dtypes against PyTorch for int8/int16/int32/int64/uint8/bool/float16/
  float32/float64 inputs; on the special grid (infinities, NaN, signed zeros) NaN, inf
  and zeros (their sign included) must be PyTorch's exactly.
- float64 gradients against PyTorch's on that grid, with incoming gradients of 1 and of
  inf; PyTorch is called one element at a time there (its vectorized CPU paths may
  differ from its per-element code at NaN, and which runs depends on the CPU).
- The integer-division family (``//``, ``%``, ``fmod``) against a NumPy/Python
  reference written here; bitwise ops and shifts against Python's int arithmetic.
- First and second derivatives against float64 finite differences (no PyTorch).
- Error messages for dtypes PyTorch refuses.
"""

from __future__ import annotations

import math
import operator
import warnings
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
import pytest

import minitorch_accel as mta
from minitorch_accel.core.tensor import Tensor
from minitorch_accel.utils.gradcheck import gradcheck, gradgradcheck

INF, NAN = math.inf, math.nan
GRID = [-INF, -2.0, -0.0, 0.0, 0.5, 2.0, INF, NAN]
#: Values inside the domains of asin, acos, atanh, logit, erfinv (and a few edges).
UNIT = [-1.0, -0.75, -0.0, 0.0, 0.25, 0.5, 1.0, 1.5]
INT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8]
FLOAT_DTYPES = [np.float16, np.float32, np.float64]
ALL_DTYPES = [*INT_DTYPES, np.bool_, *FLOAT_DTYPES]


def torch_mod() -> Any:
    return pytest.importorskip("torch")


def to_torch(x: np.ndarray, requires_grad: bool = False) -> Any:
    torch = torch_mod()
    return torch.tensor(x, requires_grad=requires_grad)


def host(t: Any) -> np.ndarray:
    """Values of one of our tensors or a torch tensor as a NumPy array."""
    if isinstance(t, Tensor):
        return np.asarray(t.detach())
    return np.asarray(t.detach().numpy())


def assert_same(ours: np.ndarray, theirs: np.ndarray, what: str) -> None:
    """One dtype and shape; NaN, inf and zeros (infinities and zeros with their sign)
    exactly PyTorch's;
    finite values within a few units in the last place."""
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape, (
        what,
        ours.dtype,
        theirs.dtype,
    )
    if ours.dtype.kind != "f":
        np.testing.assert_array_equal(ours, theirs, err_msg=what)
        return
    special = ~np.isfinite(theirs) | (theirs == 0)
    np.testing.assert_array_equal(ours[special], theirs[special], err_msg=what)
    signed = special & ~np.isnan(theirs)  # a NaN's sign bit is nobody's contract
    np.testing.assert_array_equal(np.signbit(ours[signed]), np.signbit(theirs[signed]), what)
    rtol = {np.float16: 2e-3, np.float32: 2e-6, np.float64: 1e-9}[ours.dtype.type]
    np.testing.assert_allclose(ours[~special], theirs[~special], rtol=rtol, atol=0, err_msg=what)


def sample(dtype: Any, seed: int = 0) -> np.ndarray:
    """Random values of ``dtype`` with negatives (except uint8) and zeros."""
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.integers(0, 2, 12).astype(bool)
    if np.dtype(dtype).kind in "iu":
        low = 0 if dtype == np.uint8 else -9
        return rng.integers(low, 10, 12).astype(dtype)
    return np.concatenate([rng.uniform(-3, 3, 8), GRID[:4]]).astype(dtype)


# ------------------------------------------------------------------ unary values and dtypes
#: name -> (ours, torch's); each is called on one tensor.
UNARY: dict[str, tuple[Callable[[Any], Any], Callable[[Any, Any], Any]]] = {
    "floor": (mta.floor, lambda T, x: T.floor(x)),
    "ceil": (mta.ceil, lambda T, x: T.ceil(x)),
    "round": (mta.round, lambda T, x: T.round(x)),
    "round_2": (lambda x: mta.round(x, decimals=2), lambda T, x: T.round(x, decimals=2)),
    "round_-1": (lambda x: mta.round(x, decimals=-1), lambda T, x: T.round(x, decimals=-1)),
    "trunc": (mta.trunc, lambda T, x: T.trunc(x)),
    "fix": (mta.fix, lambda T, x: T.fix(x)),
    "frac": (mta.frac, lambda T, x: T.frac(x)),
    "sign": (mta.sign, lambda T, x: T.sign(x)),
    "sgn": (mta.sgn, lambda T, x: T.sgn(x)),
    "signbit": (mta.signbit, lambda T, x: T.signbit(x)),
    "square": (mta.square, lambda T, x: T.square(x)),
    "reciprocal": (mta.reciprocal, lambda T, x: T.reciprocal(x)),
    "rsqrt": (mta.rsqrt, lambda T, x: T.rsqrt(x)),
    "log2": (mta.log2, lambda T, x: T.log2(x)),
    "log10": (mta.log10, lambda T, x: T.log10(x)),
    "log1p": (mta.log1p, lambda T, x: T.log1p(x)),
    "expm1": (mta.expm1, lambda T, x: T.expm1(x)),
    "exp2": (mta.exp2, lambda T, x: T.exp2(x)),
    "sin": (mta.sin, lambda T, x: T.sin(x)),
    "sinh": (mta.sinh, lambda T, x: T.sinh(x)),
    "cosh": (mta.cosh, lambda T, x: T.cosh(x)),
    "asin": (mta.asin, lambda T, x: T.asin(x)),
    "acos": (mta.acos, lambda T, x: T.acos(x)),
    "atan": (mta.atan, lambda T, x: T.atan(x)),
    "asinh": (mta.asinh, lambda T, x: T.asinh(x)),
    "acosh": (mta.acosh, lambda T, x: T.acosh(x)),
    "atanh": (mta.atanh, lambda T, x: T.atanh(x)),
    "erfc": (mta.erfc, lambda T, x: T.erfc(x)),
    "erfinv": (mta.erfinv, lambda T, x: T.erfinv(x)),
    "logit": (mta.logit, lambda T, x: T.logit(x)),
    "logit_eps": (lambda x: mta.logit(x, eps=0.1), lambda T, x: T.logit(x, eps=0.1)),
    "nan_to_num": (mta.nan_to_num, lambda T, x: T.nan_to_num(x)),
    "nan_to_num_args": (
        lambda x: mta.nan_to_num(x, nan=1.5, posinf=7.0, neginf=-3.0),
        lambda T, x: T.nan_to_num(x, nan=1.5, posinf=7.0, neginf=-3.0),
    ),
    "isnan": (mta.isnan, lambda T, x: T.isnan(x)),
    "isinf": (mta.isinf, lambda T, x: T.isinf(x)),
    "isfinite": (mta.isfinite, lambda T, x: T.isfinite(x)),
    "isposinf": (mta.isposinf, lambda T, x: T.isposinf(x)),
    "isneginf": (mta.isneginf, lambda T, x: T.isneginf(x)),
    "isreal": (mta.isreal, lambda T, x: T.isreal(x)),
    "logical_not": (mta.logical_not, lambda T, x: T.logical_not(x)),
    "bitwise_not": (mta.bitwise_not, lambda T, x: T.bitwise_not(x)),
    "invert": (operator.invert, lambda T, x: ~x),
    "positive": (mta.positive, lambda T, x: T.positive(x)),
    "clamp_min": (lambda x: mta.clamp_min(x, 0.5), lambda T, x: T.clamp_min(x, 0.5)),
    "clamp_max": (lambda x: mta.clamp_max(x, 1), lambda T, x: T.clamp_max(x, 1)),
}


def run_both(ours: Callable[[], Any], theirs: Callable[[], Any]) -> tuple[Any, Any]:
    """Both results, or both exceptions (PyTorch's first: where it raises, ours must)."""
    try:
        expected = theirs()
    except (RuntimeError, TypeError, NotImplementedError) as exc:
        with pytest.raises((TypeError, ValueError, RuntimeError)):
            ours()
        return None, exc
    return ours(), expected


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", list(UNARY))
def test_unary_values_and_dtypes_match_torch(name: str, dtype: Any) -> None:
    """Random values of every dtype, and the special grid for floats: the dtype, the
    values, and the dtypes where PyTorch raises (ours must raise too)."""
    torch = torch_mod()
    ours_fn, theirs_fn = UNARY[name]
    arrays = [sample(dtype)]
    if np.dtype(dtype).kind == "f":
        arrays += [np.array(GRID, dtype), np.array(UNIT, dtype)]
    for x in arrays:
        ours, theirs = run_both(
            partial(ours_fn, mta.tensor(x)), partial(theirs_fn, torch, to_torch(x))
        )
        if ours is None:
            continue
        if x.size and np.dtype(dtype).kind == "f":  # one element at a time (see the docstring)
            theirs = torch.cat([theirs_fn(torch, to_torch(x[i : i + 1])) for i in range(x.size)])
        assert_same(host(ours), host(theirs), f"{name} {x.tolist()}")


# ------------------------------------------------------------------ unary float64 gradients
#: name -> (ours, torch's, the inputs): the differentiable unary ops.
UNARY_GRAD = [
    (n, GRID if n not in ("asin", "acos", "atanh", "logit", "logit_eps", "erfinv") else UNIT)
    for n in [
        "floor", "ceil", "round", "round_2", "trunc", "frac", "sign", "sgn", "square",
        "reciprocal", "log2", "log10", "expm1", "exp2", "sinh", "cosh", "asin", "acos",
        "atan", "asinh", "acosh", "atanh", "erfc", "erfinv", "logit", "logit_eps",
        "nan_to_num", "clamp_min", "clamp_max",
    ]
]  # fmt: skip


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("incoming", [1.0, INF], ids=["grad=1", "grad=inf"])
@pytest.mark.parametrize("name,points", UNARY_GRAD, ids=[n for n, _ in UNARY_GRAD])
def test_unary_gradients_match_torch_at_special_points(
    name: str, points: list[float], incoming: float
) -> None:
    torch = torch_mod()
    ours_fn, theirs_fn = UNARY[name]
    values = points + [-1.0, 1.0, -0.5, 0.75, 3.0]
    x = mta.tensor(values, dtype=mta.float64, requires_grad=True)
    y = ours_fn(x)
    y.backward(mta.full_like(y, incoming))
    assert x.grad is not None
    expected = []
    for v in values:
        t = torch.tensor([v], dtype=torch.float64, requires_grad=True)
        out = theirs_fn(torch, t)
        out.backward(torch.full_like(out, incoming))
        expected.append(t.grad.numpy(force=True))  # force: sgn's gradient is a ZeroTensor
    assert_same(host(x.grad), np.concatenate(expected), f"{name} gradient")


# ------------------------------------------------------------------ binary values, gradients
#: name -> (ours, torch's); each called on two tensors.
BINARY: dict[str, tuple[Callable[[Any, Any], Any], Callable[[Any, Any, Any], Any]]] = {
    "copysign": (mta.copysign, lambda T, a, b: T.copysign(a, b)),
    "atan2": (mta.atan2, lambda T, a, b: T.atan2(a, b)),
    "arctan2": (mta.arctan2, lambda T, a, b: T.arctan2(a, b)),
    "hypot": (mta.hypot, lambda T, a, b: T.hypot(a, b)),
    "logaddexp": (mta.logaddexp, lambda T, a, b: T.logaddexp(a, b)),
    "logaddexp2": (mta.logaddexp2, lambda T, a, b: T.logaddexp2(a, b)),
    "xlogy": (mta.xlogy, lambda T, a, b: T.xlogy(a, b)),
    "heaviside": (mta.heaviside, lambda T, a, b: T.heaviside(a, b)),
    "lerp_0.3": (lambda a, b: mta.lerp(a, b, 0.3), lambda T, a, b: T.lerp(a, b, 0.3)),
    "lerp_0.8": (lambda a, b: mta.lerp(a, b, 0.8), lambda T, a, b: T.lerp(a, b, 0.8)),
    "remainder": (mta.remainder, lambda T, a, b: T.remainder(a, b)),
    "fmod": (mta.fmod, lambda T, a, b: T.fmod(a, b)),
    "floor_divide": (mta.floor_divide, lambda T, a, b: T.floor_divide(a, b)),
    "true_divide": (mta.true_divide, lambda T, a, b: T.true_divide(a, b)),
    "float_power": (mta.float_power, lambda T, a, b: T.float_power(a, b)),
    "bitwise_and": (mta.bitwise_and, lambda T, a, b: T.bitwise_and(a, b)),
    "bitwise_or": (mta.bitwise_or, lambda T, a, b: T.bitwise_or(a, b)),
    "bitwise_xor": (mta.bitwise_xor, lambda T, a, b: T.bitwise_xor(a, b)),
    "logical_and": (mta.logical_and, lambda T, a, b: T.logical_and(a, b)),
    "logical_or": (mta.logical_or, lambda T, a, b: T.logical_or(a, b)),
    "logical_xor": (mta.logical_xor, lambda T, a, b: T.logical_xor(a, b)),
    "isclose": (mta.isclose, lambda T, a, b: T.isclose(a, b)),
    "isclose_nan": (
        lambda a, b: mta.isclose(a, b, rtol=0.1, atol=0.5, equal_nan=True),
        lambda T, a, b: T.isclose(a, b, rtol=0.1, atol=0.5, equal_nan=True),
    ),
}
BINARY_GRAD = ["copysign", "atan2", "hypot", "logaddexp", "logaddexp2", "xlogy", "lerp_0.3",
               "lerp_0.8", "remainder", "fmod", "float_power", "true_divide"]  # fmt: skip


def pairs(dtype: Any) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of grid values (floats), or of random values (integers and bool)."""
    if np.dtype(dtype).kind == "f":
        a, b = np.meshgrid(np.array(GRID), np.array(GRID + [-0.75, 3.0, 1.0]), indexing="ij")
        return a.ravel().astype(dtype), b.ravel().astype(dtype)
    return sample(dtype, 1), sample(dtype, 2)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", list(BINARY))
def test_binary_values_and_dtypes_match_torch(name: str, dtype: Any) -> None:
    torch = torch_mod()
    ours_fn, theirs_fn = BINARY[name]
    a, b = pairs(dtype)
    if np.dtype(dtype).kind in "iu" and name in ("remainder", "fmod", "floor_divide"):
        b = np.where(b == 0, 1, b).astype(dtype)  # a zero divisor raises (tested below)
    ours, theirs = run_both(
        lambda: ours_fn(mta.tensor(a), mta.tensor(b)),
        lambda: theirs_fn(torch, to_torch(a), to_torch(b)),
    )
    if ours is None:
        return
    if np.dtype(dtype).kind == "f":
        parts = [
            theirs_fn(torch, to_torch(a[i : i + 1]), to_torch(b[i : i + 1])) for i in range(a.size)
        ]
        theirs = torch.cat(parts)
    assert_same(host(ours), host(theirs), name)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("incoming", [1.0, INF], ids=["grad=1", "grad=inf"])
@pytest.mark.parametrize("name", BINARY_GRAD)
def test_binary_gradients_match_torch_at_special_points(name: str, incoming: float) -> None:
    torch = torch_mod()
    ours_fn, theirs_fn = BINARY[name]
    a, b = pairs(np.float64)
    x, y = (mta.tensor(v, requires_grad=True) for v in (a, b))
    out = ours_fn(x, y)
    out.backward(mta.full_like(out, incoming))
    expected: list[list[np.ndarray]] = [[], []]
    for i in range(a.size):
        ta, tb = (torch.tensor(v[i : i + 1], requires_grad=True) for v in (a, b))
        r = theirs_fn(torch, ta, tb)
        r.backward(torch.full_like(r, incoming))
        for k, t in enumerate((ta, tb)):
            expected[k].append(np.zeros(1) if t.grad is None else t.grad.numpy())
    for k, t in enumerate((x, y)):
        assert t.grad is not None
        assert_same(host(t.grad), np.concatenate(expected[k]), f"{name} gradient {k}")


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_lerp_with_a_tensor_weight_matches_torch() -> None:
    torch = torch_mod()
    a, b = pairs(np.float64)
    w = np.resize(np.array([0.0, 0.3, 0.5, 0.8, 1.0, -1.0, 2.0, NAN, INF]), a.size)
    ours_in = [mta.tensor(v, requires_grad=True) for v in (a, b, w)]
    theirs_in = [torch.tensor(v, requires_grad=True) for v in (a, b, w)]
    g = np.resize(np.array([1.0, 2.0, -1.0]), a.size)
    mta.lerp(*ours_in).backward(mta.tensor(g))
    parts = []
    for i in range(a.size):  # one element at a time (see the module docstring)
        one = [t[i : i + 1] for t in theirs_in]
        parts.append(torch.lerp(*one))
    torch.cat(parts).backward(torch.tensor(g))
    assert_same(host(mta.lerp(*ours_in)), host(torch.cat(parts)), "lerp values")
    for o, t in zip(ours_in, theirs_in, strict=True):
        assert o.grad is not None
        assert_same(host(o.grad), t.grad.numpy(), "lerp gradient")


def test_scalar_operands_and_result_dtypes_match_torch() -> None:
    torch = torch_mod()
    cases: list[Callable[[Any], Any]] = [
        lambda m: m.tensor([True, False]) & 1,
        lambda m: m.tensor([1, 6]) & True,
        lambda m: m.tensor([5, -7], dtype=m.int8) | 3,
        lambda m: m.tensor([7, -7]) // 2.5,
        lambda m: m.tensor([7, -7]) % -2,
        lambda m: m.tensor([7.0, -7.0]) % 2,
        lambda m: 7 // m.tensor([2, -2]),
        lambda m: 7 % m.tensor([2, -3]),
        lambda m: 1 << m.tensor([1, 3]),
        lambda m: 64 >> m.tensor([1, 3]),
        lambda m: m.fmod(m.tensor([5, -5], dtype=m.int16), 3),
        lambda m: m.copysign(m.tensor([1, 2]), -1),
        lambda m: m.xlogy(2, m.tensor([1.0, 4.0])),
        lambda m: m.xlogy(m.tensor([1.0, 0.0]), 3),
        lambda m: m.clamp_min(m.tensor([1, -2]), 0.5),
        lambda m: m.clamp_min(m.tensor([True, False]), 0),
        lambda m: m.float_power(m.tensor([1, 2]), m.tensor([2.0, 0.5], dtype=m.float16)),
        lambda m: m.float_power(2, m.tensor([1.0, 3.0])),
        lambda m: m.true_divide(m.tensor([1, 2]), 2),
        lambda m: m.tensor([1.5, 2.5], dtype=m.float16).round(),
    ]
    for make in cases:
        ours, theirs = make(mta), make(torch)
        assert_same(host(ours), host(theirs), "scalar case")


# ------------------------------------------------------------ integer division: a reference
def py_floor_divide(a: int, b: int) -> int:
    return a // b  # Python's ints floor, the rule PyTorch follows


def py_fmod(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return (a - q * b) if (a >= 0) == (b >= 0) else (a + q * b)


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda d: np.dtype(d).name)
def test_integer_division_matches_python_integers(dtype: Any) -> None:
    """``//``, ``%`` and fmod of every pair from a small range against Python's own
    integer arithmetic (floor division, remainder with the divisor's sign, and C's
    truncating fmod), wrapped to the dtype."""
    low = 0 if dtype == np.uint8 else -9
    values = np.arange(low, 10)
    a, b = np.meshgrid(values, values[values != 0], indexing="ij")
    a, b = a.ravel(), b.ravel()
    x, y = mta.tensor(a.astype(dtype)), mta.tensor(b.astype(dtype))
    refs = {
        "floor_divide": [py_floor_divide(int(p), int(q)) for p, q in zip(a, b, strict=True)],
        "remainder": [int(p) % int(q) for p, q in zip(a, b, strict=True)],
        "fmod": [py_fmod(int(p), int(q)) for p, q in zip(a, b, strict=True)],
    }
    results = {"floor_divide": x // y, "remainder": x % y, "fmod": mta.fmod(x, y)}
    for name, ref in refs.items():
        assert results[name].dtype == np.dtype(dtype), name
        np.testing.assert_array_equal(host(results[name]), np.array(ref).astype(dtype), name)


def test_float_division_follows_pytorch_formulas() -> None:
    """The float kernels against a reference written with Python's math module, element
    by element: fmod-based floor division and remainder, signed zeros included."""
    a, b = pairs(np.float64)
    floor_ref, rem_ref = [], []
    for p, q in zip(a.tolist(), b.tolist(), strict=True):
        if q == 0:
            with np.errstate(all="ignore"):
                floor_ref.append(float(np.float64(p) / np.float64(q)))  # IEEE a / b
            rem_ref.append(NAN)
            continue
        if math.isnan(p) or math.isnan(q) or math.isinf(p):
            floor_ref.append(NAN)
            rem_ref.append(NAN)
            continue
        mod = math.fmod(p, q)
        div = (p - mod) / q
        if mod != 0 and (q < 0) != (mod < 0):
            div -= 1
        if div == 0:
            floor_ref.append(math.copysign(0.0, p / q))
        else:
            floor_ref.append(float(math.floor(div)) + (1.0 if div - math.floor(div) > 0.5 else 0))
        rem_ref.append(mod + q if mod != 0 and (q < 0) != (mod < 0) else mod)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x, y = mta.tensor(a), mta.tensor(b)
        for ours, ref in ((x // y, floor_ref), (x % y, rem_ref)):
            got, want = host(ours), np.array(ref)
            np.testing.assert_array_equal(got, want)
            signed = ~np.isnan(want)
            np.testing.assert_array_equal(np.signbit(got[signed]), np.signbit(want[signed]))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_div_rounding_floor_is_floor_divide_bit_for_bit(dtype: Any) -> None:
    """``div(rounding_mode="floor")`` and ``//`` are one computation, as in PyTorch: in
    float16 NumPy's own ``floor_divide`` rounds differently, so neither may use it.
    """
    a, b = pairs(np.float64)
    rng = np.random.default_rng(4)
    a = np.concatenate([a, rng.standard_normal(2000) * 100]).astype(dtype)
    b = np.concatenate([b, rng.standard_normal(2000)]).astype(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x, y = mta.tensor(a), mta.tensor(b)
        by_div, by_floor = host(mta.div(x, y, rounding_mode="floor")), host(x // y)
    np.testing.assert_array_equal(by_div.view(np.uint8), by_floor.view(np.uint8))
    torch = torch_mod()
    theirs = torch.div(torch.tensor(a), torch.tensor(b), rounding_mode="floor").numpy()
    np.testing.assert_array_equal(by_div, theirs)


@pytest.mark.parametrize("op", ["floor_divide", "remainder", "fmod"])
def test_integer_division_by_zero_raises_as_torch(op: str) -> None:
    torch = torch_mod()
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        getattr(torch, op)(torch.tensor([1, 2]), torch.tensor([1, 0]))
    for dtype in INT_DTYPES:
        with pytest.raises(ZeroDivisionError, match="ZeroDivisionError: " + op):
            getattr(mta, op)(mta.tensor([1, 2], dtype=dtype), mta.tensor([1, 0], dtype=dtype))
    with pytest.raises(RuntimeError, match="by zero"):  # also a RuntimeError, as PyTorch's
        getattr(mta, op)(mta.tensor([1, 2]), 0)


def test_floor_divide_has_no_derivative_as_torch() -> None:
    torch = torch_mod()
    t = torch.tensor([3.0], requires_grad=True)
    x = mta.tensor([3.0], requires_grad=True)
    assert (t // 2).requires_grad and (x // 2).requires_grad
    with pytest.raises(RuntimeError, match="not implemented"):
        (t // 2).sum().backward()
    with pytest.raises(RuntimeError, match="derivative of FloorDivide is not implemented"):
        (x // 2).sum().backward()
    with pytest.raises(RuntimeError, match="derivative of Heaviside is not implemented"):
        mta.heaviside(x, mta.tensor([0.5])).sum().backward()


# ------------------------------------------------------------------ bitwise and shifts
@pytest.mark.parametrize("dtype", [*INT_DTYPES, np.bool_], ids=lambda d: np.dtype(d).name)
def test_bitwise_operators_match_python_and_torch(dtype: Any) -> None:
    a, b = sample(dtype, 3), sample(dtype, 4)
    x, y = mta.tensor(a), mta.tensor(b)
    tx, ty = to_torch(a), to_torch(b)
    for op in (operator.and_, operator.or_, operator.xor):
        ref = [op(int(p), int(q)) for p, q in zip(a, b, strict=True)]
        assert_same(host(op(x, y)), host(op(tx, ty)), op.__name__)
        np.testing.assert_array_equal(host(op(x, y)), np.array(ref).astype(dtype))
    assert_same(host(~x), host(~tx), "invert")
    z = x.clone()
    z &= y
    assert_same(host(z), host(tx & ty), "&=")
    z = x.clone()
    z ^= y
    z |= x
    assert_same(host(z), host((tx ^ ty) | tx), "^=, |=")


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda d: np.dtype(d).name)
def test_shifts_match_torch_including_counts_out_of_range(dtype: Any) -> None:
    low = 0 if dtype == np.uint8 else -100
    a = np.resize(np.array([low, -1 if low else 1, 1, 3, 100]), 20).astype(dtype)
    bits = np.dtype(dtype).itemsize * 8
    counts = np.array([0, 1, 3, bits - 1, bits, bits + 1, 70] + ([] if low == 0 else [-1, -3]))
    b = np.resize(counts, 20).astype(dtype)
    for op in (operator.lshift, operator.rshift):
        assert_same(
            host(op(mta.tensor(a), mta.tensor(b))), host(op(to_torch(a), to_torch(b))), str(op)
        )
        for s in (1, 2):
            assert_same(host(op(mta.tensor(a), s)), host(op(to_torch(a), s)), f"{op} {s}")


def test_invert_of_integers_is_bitwise_and_of_floats_an_error() -> None:
    """Audit entries A3 and C2: ``~`` is bitwise NOT for integers (it was logical NOT),
    logical NOT for bools, and refused for floats, as in PyTorch."""
    assert (~mta.tensor([1, 0, -3])).tolist() == [-2, -1, 2]
    assert (~mta.tensor([1, 0], dtype=mta.uint8)).tolist() == [254, 255]
    assert (~mta.tensor([True, False])).tolist() == [False, True]
    with pytest.raises(TypeError, match="only defined for integer and bool tensors, got float32"):
        ~mta.tensor([1.0, 0.0])


# ------------------------------------------------------------------ allclose, equal
def test_allclose_and_equal_match_torch() -> None:
    torch = torch_mod()
    a = np.array([1.0, 2.0, INF, NAN])
    for b, kwargs in [
        (np.array([1.0, 2.0 + 1e-6, INF, NAN]), {"equal_nan": True}),
        (np.array([1.0, 2.0 + 1e-6, INF, NAN]), {}),
        (np.array([1.0, 2.1, INF, NAN]), {"rtol": 0.1, "equal_nan": True}),
        (np.array([1.0, 2.0, -INF, NAN]), {"equal_nan": True}),
    ]:
        assert mta.allclose(mta.tensor(a), mta.tensor(b), **kwargs) == torch.allclose(
            to_torch(a), to_torch(b), **kwargs
        )
    for p, q in [([1, 2], [1.0, 2.0]), ([1], [[1]]), ([1.0, NAN], [1.0, NAN]), ([1, 2], [1, 3])]:
        assert mta.equal(mta.tensor(p), mta.tensor(q)) == torch.equal(
            torch.tensor(p), torch.tensor(q)
        )


# ------------------------------------------------------------------ finite differences (no torch)
DIFFERENTIABLE: list[tuple[str, Callable[..., Tensor], list[tuple[float, float]]]] = [
    ("frac", mta.frac, [(0.1, 0.9)]),
    ("square", mta.square, [(-2, 2)]),
    ("reciprocal", mta.reciprocal, [(0.5, 2)]),
    ("log2", mta.log2, [(0.5, 3)]),
    ("log10", mta.log10, [(0.5, 3)]),
    ("expm1", mta.expm1, [(-2, 2)]),
    ("exp2", mta.exp2, [(-2, 2)]),
    ("sinh", mta.sinh, [(-2, 2)]),
    ("cosh", mta.cosh, [(-2, 2)]),
    ("asin", mta.asin, [(-0.8, 0.8)]),
    ("acos", mta.acos, [(-0.8, 0.8)]),
    ("atan", mta.atan, [(-2, 2)]),
    ("asinh", mta.asinh, [(-2, 2)]),
    ("acosh", mta.acosh, [(1.2, 3)]),
    ("atanh", mta.atanh, [(-0.8, 0.8)]),
    ("erfc", mta.erfc, [(-3, 3)]),
    ("erfinv", mta.erfinv, [(-0.9, 0.9)]),
    ("logit", mta.logit, [(0.1, 0.9)]),
    ("logit_eps", lambda x: mta.logit(x, eps=0.05), [(0.1, 0.9)]),
    ("nan_to_num", mta.nan_to_num, [(-2, 2)]),
    ("copysign", lambda x, y: mta.copysign(x, y), [(0.2, 2), (-2, -0.2)]),
    ("atan2", mta.atan2, [(-2, 2), (0.5, 2)]),
    ("hypot", mta.hypot, [(-2, 2), (0.5, 2)]),
    ("lerp", mta.lerp, [(-2, 2), (-2, 2), (0.1, 0.9)]),
    ("lerp_scalar", lambda x, y: mta.lerp(x, y, 0.7), [(-2, 2), (-2, 2)]),
    ("logaddexp", mta.logaddexp, [(-3, 3), (-3, 3)]),
    ("logaddexp2", mta.logaddexp2, [(-3, 3), (-3, 3)]),
    ("xlogy", mta.xlogy, [(-2, 2), (0.5, 3)]),
    ("remainder", mta.remainder, [(0.1, 0.9), (1.2, 1.8)]),
    ("fmod", mta.fmod, [(-0.9, -0.1), (1.2, 1.8)]),
    ("float_power", mta.float_power, [(0.5, 2), (-1, 2)]),
]


@pytest.mark.parametrize("name,fn,ranges", DIFFERENTIABLE, ids=[d[0] for d in DIFFERENTIABLE])
def test_first_and_second_derivatives_against_finite_differences(
    name: str, fn: Callable[..., Tensor], ranges: list[tuple[float, float]]
) -> None:
    rng = np.random.default_rng(7)
    inputs = [mta.tensor(rng.uniform(lo, hi, (2, 3)), requires_grad=True) for lo, hi in ranges]
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


@pytest.mark.parametrize("name", ["floor", "ceil", "round", "trunc", "sign", "sgn"])
def test_rounding_has_an_exact_zero_gradient(name: str) -> None:
    x = mta.tensor([-1.5, 0.3, 2.5], dtype=mta.float64, requires_grad=True)
    getattr(mta, name)(x).backward(mta.tensor([INF, NAN, 1.0], dtype=mta.float64))
    assert x.grad is not None and x.grad.tolist() == [0.0, 0.0, 0.0]


def test_erfc_and_erfinv_are_accurate_far_out() -> None:
    """Against Python's math.erfc (an independent implementation), where ``1 - erf``
    would have lost every digit; erfinv inverts erf to a few ulps."""
    x = np.array([-5.0, -2.5, -1.0, 0.3, 1.9, 2.0, 2.1, 4.0, 8.0, 20.0, 26.0])
    want = np.array([math.erfc(v) for v in x])
    np.testing.assert_allclose(host(mta.erfc(mta.tensor(x))), want, rtol=1e-13)
    y = np.array([-0.999999, -0.7, -0.1, 1e-8, 0.3, 0.7, 0.71, 0.99, 1 - 1e-12])
    back = np.array([math.erf(v) for v in host(mta.erfinv(mta.tensor(y)))])
    np.testing.assert_allclose(back, y, rtol=1e-15, atol=0)


# ------------------------------------------------------------------ tensor methods, in place
def test_tensor_methods_and_in_place_variants() -> None:
    x = mta.tensor([-1.5, 0.25, 2.5])
    assert x.floor().tolist() == [-2.0, 0.0, 2.0] and x.ceil().tolist() == [-1.0, 1.0, 3.0]
    assert x.round().tolist() == [-2.0, 0.0, 2.0] and x.trunc().tolist() == [-1.0, 0.0, 2.0]
    assert x.frac().tolist() == [-0.5, 0.25, 0.5] and x.square().tolist() == [2.25, 0.0625, 6.25]
    for name in ["floor_", "ceil_", "round_", "trunc_", "frac_", "square_", "reciprocal_"]:
        y = x.clone()
        assert getattr(y, name)() is y
        assert y.tolist() == getattr(x, name[:-1])().tolist(), name
    i = mta.tensor([7, -7])
    i //= 2
    assert i.tolist() == [3, -4]
    i %= 3
    assert i.tolist() == [0, 2]
    i <<= 2
    assert i.tolist() == [0, 8]
    i >>= 1
    assert i.tolist() == [0, 4]
    with pytest.raises(TypeError, match="float32, which a int64 tensor cannot hold"):
        i.reciprocal_()


# ------------------------------------------------------------------ errors
F, I, BOOL = mta.tensor([1.0]), mta.tensor([1]), mta.tensor([True])
ERRORS: list[tuple[Callable[[], Any], type, str]] = [
    (lambda: F & F, TypeError, "not defined for float32"),
    (lambda: BOOL << BOOL, TypeError, "bitwise_left_shift: not defined for bool"),
    (lambda: I << 1.5, TypeError, "not defined for float32"),
    (lambda: BOOL // BOOL, TypeError, "floor_divide: not defined for bool"),
    (lambda: BOOL % BOOL, TypeError, "remainder: not defined for bool"),
    (lambda: mta.floor(BOOL), TypeError, "floor: not defined for bool"),
    (lambda: mta.round(I, decimals=1), TypeError, "decimals=1 is not defined for int64"),
    (lambda: mta.frac(I), TypeError, "frac: defined for float tensors only"),
    (lambda: mta.positive(BOOL), TypeError, "not defined for bool"),
    (lambda: mta.hypot(F, 1.0), TypeError, "hypot: expected Tensors"),
    (lambda: mta.hypot(I, I), TypeError, "float tensors only"),
    (lambda: mta.lerp(F, F.double(), 0.5), TypeError, "float32 and float64"),
    (lambda: mta.isclose(I, F), TypeError, "dtypes int64 and float32"),
    (lambda: mta.isclose(F, F, rtol=-1), ValueError, "rtol and atol must be >= 0"),
    (lambda: mta.logical_xor(I, 0), TypeError, "logical_xor: expected Tensors"),
    (lambda: mta.ones(2, dtype=mta.int64) & mta.ones(3, dtype=mta.int64), ValueError, "shapes"),
    (lambda: mta.atan2(mta.ones(2), mta.ones(3)), ValueError, r"atan2: shapes \(2,\) and \(3,\)"),
]


@pytest.mark.parametrize("call,error,message", ERRORS, ids=[e[2] for e in ERRORS])
def test_errors_name_the_problem(call: Callable[[], Any], error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        call()
