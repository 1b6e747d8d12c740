"""PyTorch's elementwise, math and random in-place Tensor methods (``exp_``, ``lgamma_``,
``addcmul_``, ``eq_``, ``normal_`` ...) and the out-of-place functions they write
(``sinc``, ``deg2rad``, ``lgamma``, ``igamma`` ...).

- Values against PyTorch in float32 and float64 on random values and on the special
  grid (infinities, NaN, signed zeros): bit for bit where the op is exact (``abs_``,
  ``neg_``, ``sqrt_``, the degree conversions, the comparisons, ``gcd_`` ...), else
  within the tolerances of :data:`TOLERANCE`; NaN, inf and zeros (with their sign)
  always exactly PyTorch's.
- The method returns the tensor itself, a view taken before sees the new values, the
  dtype is kept (a comparison writes 1.0/0.0 into a float tensor).
- float64 gradients through the in-place op on a non-leaf (``y = x * 1; y.exp_()``)
  against PyTorch's, incoming gradients of 1 and of inf; an in-place op on a tensor
  another op saved makes backward raise; a leaf that requires grad is refused.
- Against references written here with NumPy and ``math`` (no PyTorch): ``math.lgamma``,
  ``np.i0``, ``np.sinc``, series for digamma and polygamma, closed forms of the
  incomplete gamma, and float64 finite differences (first and second order).
- The random fills: dtype, support, mean and variance of a 200,000-sample draw within 6
  standard errors (seeded, so deterministic), ``manual_seed`` and ``generator=``
  reproducibility, and PyTorch's checks of the parameters.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import minitorch_accel as mta
from minitorch_accel.core.tensor import Tensor
from minitorch_accel.utils.gradcheck import gradcheck, gradgradcheck

INF, NAN = math.inf, math.nan
GRID = [-INF, -2.0, -0.0, 0.0, 0.5, 2.0, INF, NAN]
FLOATS = [np.float32, np.float64]


def torch_mod() -> Any:
    return pytest.importorskip("torch")


def host(t: Any) -> np.ndarray:
    """One of our tensors or a torch tensor as a NumPy array."""
    if isinstance(t, Tensor):
        return np.asarray(t.detach())
    return np.asarray(t.detach().numpy())


#: (rtol, atol) by float dtype for the ops that are not exact. float32: a few units in the
#: last place; float64: PyTorch's kernels and ours agree to 1e-12 (relative), the
#: incomplete gamma to 1e-9 (PyTorch's own error near a = x = 40 is 5e-10).
TOLERANCE = {np.float32: (4e-6, 1e-7), np.float64: (1e-12, 1e-14)}
LOOSE = {"igamma_": {np.float32: (2e-5, 1e-7), np.float64: (1e-9, 1e-15)}}
LOOSE["igammac_"] = LOOSE["igamma_"]
#: erf (ops/activation.py's ``erf_array``) is within 1e-11 of PyTorch's near +-1.
LOOSE["erf_"] = {np.float32: TOLERANCE[np.float32], np.float64: (1e-10, 1e-14)}


def assert_same(
    ours: np.ndarray,
    theirs: np.ndarray,
    exact: bool,
    tol: tuple[float, float],
    what: str,
    zero_sign: bool = True,
) -> None:
    """One dtype and shape; NaN, inf and zeros (with their sign unless ``zero_sign`` is
    False) exactly PyTorch's; the other values bit for bit when ``exact``, else within
    ``tol``.

    ``zero_sign=False`` for gradients through the in-place methods: they write with
    ``copy_``, whose backward gives the overwritten values a zero gradient (PyTorch's
    ``CopyBackwards``), and ``0 + -0`` is ``+0`` where PyTorch's own in-place kernel
    passes ``-0``.
    """
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape, (
        what,
        ours.dtype,
        theirs.dtype,
    )
    if ours.dtype.kind != "f" or exact:
        np.testing.assert_array_equal(ours, theirs, err_msg=what)  # NaN equals NaN here
        if ours.dtype.kind == "f":
            known = ~np.isnan(theirs)
            np.testing.assert_array_equal(np.signbit(ours[known]), np.signbit(theirs[known]), what)
        return
    special = ~np.isfinite(theirs) | (theirs == 0)
    np.testing.assert_array_equal(ours[special], theirs[special], err_msg=what)
    signed = special & ~np.isnan(theirs) & (np.isinf(theirs) | zero_sign)
    np.testing.assert_array_equal(np.signbit(ours[signed]), np.signbit(theirs[signed]), what)
    rtol, atol = tol
    np.testing.assert_allclose(ours[~special], theirs[~special], rtol=rtol, atol=atol, err_msg=what)


# ------------------------------------------------------------------ unary in-place methods
#: name -> (torch's name, arguments, exact, values the random part draws from)
UNARY: dict[str, tuple[str, tuple[Any, ...], bool, tuple[float, float]]] = {
    "abs_": ("abs_", (), True, (-5, 5)),
    "absolute_": ("absolute_", (), True, (-5, 5)),
    "neg_": ("neg_", (), True, (-5, 5)),
    "negative_": ("negative_", (), True, (-5, 5)),
    "exp_": ("exp_", (), False, (-20, 20)),
    "log_": ("log_", (), False, (0.01, 50)),
    "log1p_": ("log1p_", (), False, (-0.9, 50)),
    "sqrt_": ("sqrt_", (), False, (0, 50)),  # torch's float32 sqrt may be 1 ulp off (its SIMD path)
    "rsqrt_": ("rsqrt_", (), False, (0.01, 50)),
    "sin_": ("sin_", (), False, (-6, 6)),
    "cos_": ("cos_", (), False, (-6, 6)),
    "tan_": ("tan_", (), False, (-1.5, 1.5)),
    "arcsin_": ("arcsin_", (), False, (-1, 1)),
    "arccos_": ("arccos_", (), False, (-1, 1)),
    "arctan_": ("arctan_", (), False, (-10, 10)),
    "arcsinh_": ("arcsinh_", (), False, (-10, 10)),
    "arccosh_": ("arccosh_", (), False, (1, 10)),
    "arctanh_": ("arctanh_", (), False, (-0.99, 0.99)),
    "erf_": ("erf_", (), False, (-4, 4)),
    "lgamma_": ("lgamma_", (), False, (-6.5, 40)),
    "digamma_": ("digamma_", (), False, (-6.5, 40)),
    "polygamma_1": ("polygamma_", (1,), False, (-6.5, 40)),
    "polygamma_2": ("polygamma_", (2,), False, (-6.5, 40)),
    "polygamma_4": ("polygamma_", (4,), False, (0.1, 40)),
    "mvlgamma_1": ("mvlgamma_", (1,), False, (0.1, 40)),
    "mvlgamma_3": ("mvlgamma_", (3,), False, (1.1, 40)),
    "i0_": ("i0_", (), False, (-30, 30)),
    "sinc_": ("sinc_", (), False, (-5, 5)),
    "deg2rad_": ("deg2rad_", (), True, (-720, 720)),
    "rad2deg_": ("rad2deg_", (), True, (-7, 7)),
    "conj_physical_": ("conj_physical_", (), True, (-5, 5)),
}


def method_name(name: str) -> str:
    return UNARY[name][0]


def unary_values(name: str, dtype: Any, seed: int = 0) -> np.ndarray:
    low, high = UNARY[name][3]
    rng = np.random.default_rng(seed)
    return np.concatenate([GRID, rng.uniform(low, high, 40)]).astype(dtype)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("dtype", FLOATS, ids=["float32", "float64"])
@pytest.mark.parametrize("name", list(UNARY))
def test_unary_in_place_matches_torch(name: str, dtype: Any) -> None:
    torch = torch_mod()
    method, args, exact, _ = UNARY[name]
    x = unary_values(name, dtype)
    y = mta.tensor(x)
    view = y[1:]
    assert getattr(y, method)(*args) is y
    expected = getattr(torch.tensor(x), method)(*args)
    tol = LOOSE.get(method, TOLERANCE)[dtype]
    assert_same(host(y), host(expected), exact, tol, name)
    np.testing.assert_array_equal(host(view), host(y)[1:])  # the storage is shared


#: The unary ops' values from references written without PyTorch (float64).
def _lgamma_reference(v: float) -> float:
    if math.isnan(v):
        return NAN
    try:
        return math.lgamma(v)
    except ValueError:  # a pole
        return INF


def _digamma_reference(v: float) -> float:
    """``digamma(v + N) - sum_{k<N} 1/(v + k)``, Stirling's series at ``v + N`` (N = 30)."""
    shifted = v + 30
    tail = math.log(shifted) - 1 / (2 * shifted) - 1 / (12 * shifted**2) + 1 / (120 * shifted**4)
    tail -= 1 / (252 * shifted**6)
    return tail - math.fsum(1 / (v + k) for k in range(30))


def _polygamma_reference(n: int, v: float) -> float:
    """``(-1)**(n+1) n! sum_k (v + k)**-(n+1)``: 2000 terms, then the integral tail."""
    last = v + 2000
    total = math.fsum((v + k) ** -(n + 1) for k in range(2000))
    total += last**-n / n + last ** -(n + 1) / 2 + (n + 1) * last ** -(n + 2) / 12
    return (-1) ** (n + 1) * math.factorial(n) * total


def _mvlgamma_reference(v: float, p: int) -> float:
    return p * (p - 1) / 4 * math.log(math.pi) + math.fsum(math.lgamma(v - i / 2) for i in range(p))


NUMPY_UNARY: dict[str, tuple[Callable[[np.ndarray], np.ndarray], float]] = {
    "abs_": (np.abs, 0.0),
    "absolute_": (np.abs, 0.0),
    "neg_": (np.negative, 0.0),
    "negative_": (np.negative, 0.0),
    "exp_": (np.exp, 1e-15),
    "log_": (np.log, 1e-15),
    "log1p_": (np.log1p, 1e-15),
    "sqrt_": (np.sqrt, 0.0),
    "rsqrt_": (lambda x: 1 / np.sqrt(x), 1e-15),
    "sin_": (np.sin, 1e-15),
    "cos_": (np.cos, 1e-15),
    "tan_": (np.tan, 1e-15),
    "arcsin_": (np.arcsin, 1e-15),
    "arccos_": (np.arccos, 1e-15),
    "arctan_": (np.arctan, 1e-15),
    "arcsinh_": (np.arcsinh, 1e-15),
    "arccosh_": (np.arccosh, 1e-15),
    "arctanh_": (np.arctanh, 1e-15),
    "erf_": (np.vectorize(math.erf), 1e-10),
    "lgamma_": (np.vectorize(_lgamma_reference), 1e-13),
    "digamma_": (np.vectorize(_digamma_reference), 1e-12),
    "polygamma_1": (np.vectorize(lambda v: _polygamma_reference(1, v)), 1e-8),  # PyTorch's trigamma
    "polygamma_2": (np.vectorize(lambda v: _polygamma_reference(2, v)), 1e-12),
    "polygamma_4": (np.vectorize(lambda v: _polygamma_reference(4, v)), 1e-12),
    "mvlgamma_1": (np.vectorize(lambda v: _mvlgamma_reference(v, 1)), 1e-13),
    "mvlgamma_3": (np.vectorize(lambda v: _mvlgamma_reference(v, 3)), 1e-13),
    "i0_": (np.i0, 1e-14),
    "sinc_": (np.sinc, 1e-15),
    "deg2rad_": (np.deg2rad, 0.0),
    "rad2deg_": (np.rad2deg, 1e-16),
    "conj_physical_": (lambda x: x, 0.0),
}


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("name", list(NUMPY_UNARY))
def test_unary_in_place_matches_numpy_reference(name: str) -> None:
    """Finite float64 inputs away from poles (the references' domain); relative error
    within the tolerance listed (0: bit for bit)."""
    reference, rtol = NUMPY_UNARY[name]
    method, args, _, (low, high) = UNARY[name]
    x = np.random.default_rng(1).uniform(low, high, 60)
    x = x[np.abs(x - np.round(x)) > 1e-3] if low < 0 and "gamma" in name else x
    y = getattr(mta.tensor(x), method)(*args)
    np.testing.assert_allclose(host(y), reference(x), rtol=rtol, atol=1e-300 if rtol else 0)


#: The gradient of each unary op (PyTorch's formula) exists; sqrt_, log_ and the like
#: are checked at the grid too. polygamma/mvlgamma take an argument.
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("incoming", [1.0, INF], ids=["grad=1", "grad=inf"])
@pytest.mark.parametrize("name", [n for n in UNARY if not n.startswith("mvlgamma")])
def test_unary_in_place_gradient_matches_torch(name: str, incoming: float) -> None:
    """Through the op on a non-leaf, at the special grid and at random points; PyTorch
    one element at a time (its vectorized CPU paths may differ at NaN)."""
    torch = torch_mod()
    method, args, _, _ = UNARY[name]
    values = unary_values(name, np.float64)[:16]
    x = mta.tensor(values, requires_grad=True)
    y = x * 1
    getattr(y, method)(*args)
    y.backward(mta.full_like(y, incoming))
    expected = []
    for v in values:
        tx = torch.tensor([v], dtype=torch.float64, requires_grad=True)
        ty = tx * 1
        if method in NO_TORCH_IN_PLACE_DERIVATIVE:
            ty = getattr(ty, method[:-1])(*args)
        else:
            getattr(ty, method)(*args)
        ty.backward(torch.full_like(ty, incoming))
        expected.append(tx.grad.numpy())
    assert_same(
        host(x.grad), np.concatenate(expected), False, (1e-12, 1e-14), name, zero_sign=False
    )


#: PyTorch's in-place inverse hyperbolic functions raise "the derivative for 'inplace
#: version of asinh' is not implemented" in backward; ours have the out-of-place one.
NO_TORCH_IN_PLACE_DERIVATIVE = ("arcsinh_", "arccosh_", "arctanh_")


def test_torch_has_no_in_place_inverse_hyperbolic_derivative() -> None:
    """The one place our in-place gradients go beyond PyTorch's: documented here."""
    torch = torch_mod()
    for method in NO_TORCH_IN_PLACE_DERIVATIVE:
        ty = torch.tensor([0.5], dtype=torch.float64, requires_grad=True) * 1
        getattr(ty, method)()
        with pytest.raises(NotImplementedError, match="not implemented"):
            ty.sum().backward()


def test_mvlgamma_in_place_gradient_matches_torch() -> None:
    torch = torch_mod()
    values = np.array([1.3, 2.0, 5.5, 17.25])
    x = mta.tensor(values, requires_grad=True)
    y = x * 1
    y.mvlgamma_(3)
    y.sum().backward()
    tx = torch.tensor(values, requires_grad=True)
    ty = tx * 1
    ty.mvlgamma_(3)
    ty.sum().backward()
    np.testing.assert_allclose(host(x.grad), tx.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("name", list(UNARY))
def test_in_place_on_a_saved_tensor_makes_backward_raise(name: str) -> None:
    """``y * y`` saves ``y``; changing it in place afterwards breaks that backward, in
    both frameworks; the leaf is refused outright (outside no_grad)."""
    method, args, _, (low, high) = UNARY[name]
    start = [(low + high) / 2 + 0.25, (low + 3 * high) / 4 + 0.125]
    x = mta.tensor(start, dtype=mta.float64, requires_grad=True)
    y = x * 1
    z = y * y
    getattr(y, method)(*args)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        getattr(x, method)(*args)
    with mta.no_grad():
        assert getattr(x, method)(*args) is x  # as optimizers do: allowed, not recorded
    try:
        import torch
    except ImportError:
        return
    tx = torch.tensor(start, dtype=torch.float64, requires_grad=True)
    ty = tx * 1
    tz = ty * ty
    getattr(ty, method)(*args)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        tz.sum().backward()
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        getattr(tx, method)(*args)


# ------------------------------------------------------------------ integer tensors
@pytest.mark.parametrize(
    "call",
    [
        "abs_()",
        "neg_()",
        "absolute_()",
        "pow_(2)",
        "gcd_(other)",
        "lcm_(other)",
        "multiply_(other)",
        "subtract_(other, alpha=2)",
        "eq_(other)",
        "lt_(3)",
        "not_equal_(other)",
        "heaviside_(other)",
        "divide_(other, rounding_mode='floor')",
        "sqrt_()",
        "exp_()",
        "pow_(0.5)",
        "divide_(other)",
        "deg2rad_()",
        "sinc_()",
        "lgamma_()",
        "i0_()",
        "addcdiv_(other, other)",
    ],
)
def test_integer_tensors_as_torch(call: str) -> None:
    """PyTorch's integer cases work (same values, int64 kept); a float result into an
    integer tensor is refused where PyTorch refuses it."""
    torch = torch_mod()
    values, other_values = [-6, 0, 4, 9, 12], [4, 3, -6, 6, 5]
    ours = mta.tensor(values)
    theirs = torch.tensor(values)
    try:
        eval(f"theirs.{call}", {"theirs": theirs, "other": torch.tensor(other_values)})
    except RuntimeError:
        with pytest.raises((TypeError, RuntimeError)):
            eval(f"ours.{call}", {"ours": ours, "other": mta.tensor(other_values)})
        return
    result = eval(f"ours.{call}", {"ours": ours, "other": mta.tensor(other_values)})
    assert result is ours
    np.testing.assert_array_equal(host(ours), host(theirs))
    assert host(ours).dtype == np.int64


# ------------------------------------------------------------------ binary and ternary ops
def _binary_cases(dtype: Any) -> dict[str, tuple[str, Callable[[Any, Any], tuple[Any, ...]], bool]]:
    """name -> (method, the arguments given the tensor module and a random generator
    (both frameworks build them from the same NumPy arrays), exact)."""

    def arr(rng: Any, *shape: int, low: float = -3, high: float = 3) -> np.ndarray:
        return rng.uniform(low, high, shape).astype(dtype)

    def same(module: Any, *arrays: np.ndarray) -> tuple[Any, ...]:
        return tuple(module.tensor(a) for a in arrays)

    return {
        "pow_": ("pow_", lambda m, r: same(m, arr(r, 4, 3)), False),
        "pow_scalar": ("pow_", lambda m, r: (2.5,), False),
        "divide_": ("divide_", lambda m, r: same(m, arr(r, 4, 3)), True),
        "multiply_": ("multiply_", lambda m, r: same(m, arr(r, 3)), True),
        "subtract_": ("subtract_", lambda m, r: same(m, arr(r, 4, 3)), True),
        "heaviside_": ("heaviside_", lambda m, r: same(m, arr(r, 3)), True),
        "ldexp_": ("ldexp_", lambda m, r: (m.tensor(r.integers(-4, 5, (4, 3))),), True),
        "ldexp_positive": ("ldexp_", lambda m, r: (m.tensor(r.integers(0, 5, (4, 3))),), True),
        "nextafter_": ("nextafter_", lambda m, r: same(m, arr(r, 4, 3)), True),
        "igamma_": ("igamma_", lambda m, r: same(m, arr(r, 4, 3, low=0, high=30)), False),
        "igammac_": ("igammac_", lambda m, r: same(m, arr(r, 4, 3, low=0, high=30)), False),
        "addcmul_": ("addcmul_", lambda m, r: same(m, arr(r, 4, 3), arr(r, 3)), False),
        "addcdiv_": ("addcdiv_", lambda m, r: same(m, arr(r, 4, 3), arr(r, 4, 1, low=1)), False),
        "addmm_": ("addmm_", lambda m, r: same(m, arr(r, 4, 5), arr(r, 5, 3)), False),
        "renorm_": ("renorm_", lambda m, r: (2, 0, 1.5), False),
        "renorm_p1": ("renorm_", lambda m, r: (1, 1, 2.0), False),
    }


#: The value keyword of addcmul_/addcdiv_ and beta/alpha of the products.
KEYWORDS = {
    "addcmul_": {"value": 0.5},
    "addcdiv_": {"value": -2},
    "addmm_": {"beta": 0.5, "alpha": 2},
}
BINARY_NAMES = list(_binary_cases(np.float64))


def _self_values(name: str, dtype: Any) -> np.ndarray:
    rng = np.random.default_rng(3)
    low = 0.0 if name.startswith("igamma") else -3.0
    x = rng.uniform(low, 3, (4, 3))
    if not name.startswith(("renorm", "addmm")):
        x[0] = [-0.0, 0.0, 2.0]
    return x.astype(dtype)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("dtype", FLOATS, ids=["float32", "float64"])
@pytest.mark.parametrize("name", BINARY_NAMES)
def test_binary_in_place_matches_torch(name: str, dtype: Any) -> None:
    torch = torch_mod()
    method, build, exact = _binary_cases(dtype)[name]
    x = _self_values(name, dtype)
    kwargs = KEYWORDS.get(method, {})
    y = mta.tensor(x)
    view = y[1:]
    assert getattr(y, method)(*build(mta, np.random.default_rng(5)), **kwargs) is y
    expected = getattr(torch.tensor(x), method)(*build(torch, np.random.default_rng(5)), **kwargs)
    tol = LOOSE.get(method, {np.float32: (2e-6, 1e-6), np.float64: (1e-12, 1e-14)})[dtype]
    assert_same(host(y), host(expected), exact, tol, name)
    np.testing.assert_array_equal(host(view), host(y)[1:])


@pytest.mark.parametrize("name", ["addmv_", "addr_", "addbmm_", "baddbmm_"])
def test_products_in_place_match_torch(name: str) -> None:
    torch = torch_mod()
    rng = np.random.default_rng(2)
    all_shapes: dict[str, list[tuple[int, ...]]] = {
        "addmv_": [(4,), (4, 5), (5,)],
        "addr_": [(4, 3), (4,), (3,)],
        "addbmm_": [(4, 3), (2, 4, 5), (2, 5, 3)],
        "baddbmm_": [(2, 4, 3), (2, 4, 5), (2, 5, 3)],
    }
    shapes = all_shapes[name]
    arrays = [rng.standard_normal(s) for s in shapes]
    y = mta.tensor(arrays[0])
    getattr(y, name)(*map(mta.tensor, arrays[1:]), beta=0.5, alpha=-1.5)
    ty = torch.tensor(arrays[0])
    getattr(ty, name)(*map(torch.tensor, arrays[1:]), beta=0.5, alpha=-1.5)
    np.testing.assert_allclose(host(y), host(ty), rtol=1e-12, atol=1e-14)


#: ldexp_ with non-negative exponents only: PyTorch's ldexp gradient is 0 where the
#: exponent is negative (2**other computed in the integer dtype); ours is
#: ``2**other``, which the finite-difference test below checks.
DIFFERENTIABLE_BINARY = [
    "pow_",
    "pow_scalar",
    "divide_",
    "multiply_",
    "subtract_",
    "ldexp_positive",
    "addcmul_",
    "addcdiv_",
    "addmm_",
    "renorm_",
    "renorm_p1",
    "igamma_",
]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("name", DIFFERENTIABLE_BINARY)
def test_binary_in_place_gradients_match_torch(name: str) -> None:
    """Gradients to the tensor changed in place and to every float tensor argument."""
    torch = torch_mod()
    method, build, _ = _binary_cases(np.float64)[name]
    x = _self_values(name, np.float64)
    if name == "igamma_":  # differentiable in ``other`` only, as PyTorch
        x = np.abs(x) + 0.5
    kwargs = KEYWORDS.get(method, {})

    def run(module: Any, leaf_requires_grad: bool) -> list[np.ndarray]:
        args = build(module, np.random.default_rng(5))
        grads = [a for a in args if hasattr(a, "dtype") and "float" in str(a.dtype)]
        for a in grads:
            a.requires_grad_(True)
        leaf = module.tensor(x, requires_grad=leaf_requires_grad)
        y = leaf * 1
        getattr(y, method)(*args, **kwargs)
        (y * module.tensor(np.arange(12.0).reshape(4, 3))).sum().backward()
        return [host(t.grad) for t in ([leaf] if leaf_requires_grad else []) + grads]

    needs_self = name != "igamma_"
    for ours, theirs in zip(run(mta, needs_self), run(torch, needs_self), strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-11, atol=1e-13)


def test_igamma_gradient_to_input_is_not_implemented_as_in_torch() -> None:
    torch = torch_mod()
    ta = torch.tensor([1.5], dtype=torch.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="not implemented"):
        torch.igamma(ta, torch.tensor([2.0], dtype=torch.float64)).sum().backward()
    a = mta.tensor([1.5], dtype=mta.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="not implemented"):
        mta.igamma(a, mta.tensor([2.0], dtype=mta.float64)).sum().backward()


# ------------------------------------------------------------------ comparisons in place
COMPARISONS = [
    "eq_",
    "ne_",
    "lt_",
    "le_",
    "gt_",
    "ge_",
    "greater_",
    "greater_equal_",
    "less_",
    "less_equal_",
    "not_equal_",
]
NUMPY_COMPARE = {
    "eq": np.equal,
    "ne": np.not_equal,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
    "greater": np.greater,
    "greater_equal": np.greater_equal,
    "less": np.less,
    "less_equal": np.less_equal,
    "not_equal": np.not_equal,
}


@pytest.mark.parametrize(
    "dtype", [np.float32, np.float64, np.int64], ids=["float32", "float64", "int64"]
)
@pytest.mark.parametrize("name", COMPARISONS)
def test_comparison_in_place_keeps_the_dtype(name: str, dtype: Any) -> None:
    """1/0 written in the tensor's dtype, against a tensor (broadcast) and a number:
    PyTorch's values when it is installed, NumPy's always."""
    x = (
        np.array([GRID, [1.0, 2.0, 0.5, 0.0, -2.0, 3.0, 2.0, 1.0]])
        if dtype != np.int64
        else np.array([[1, -2, 0, 5, 2, 7, -1, 3], [2, 2, 2, 2, 0, 0, 0, 0]])
    )
    x = x.astype(dtype)
    other = np.array([2.0, -INF, 0.0, -0.0, 0.5, 2.0, NAN, INF])
    other = other.astype(dtype) if dtype != np.int64 else np.array([1, 0, 0, 5, 3, 7, -2, 2])
    reference = NUMPY_COMPARE[name[:-1]]
    for operand, as_numpy in ((mta.tensor(other), other), (2, 2)):
        y = mta.tensor(x)
        view = y[1]
        assert getattr(y, name)(operand) is y
        np.testing.assert_array_equal(host(y), reference(x, as_numpy).astype(dtype))
        assert host(y).dtype == dtype
        np.testing.assert_array_equal(host(view), host(y)[1])
    try:
        import torch
    except ImportError:
        return
    for operand_ours, operand_torch in ((mta.tensor(other), torch.tensor(other)), (2, 2)):
        y = getattr(mta.tensor(x), name)(operand_ours)
        expected = getattr(torch.tensor(x), name)(operand_torch)
        assert_same(host(y), host(expected), True, (0, 0), name)


def test_comparison_in_place_gradient_is_zero_as_torch() -> None:
    torch = torch_mod()
    x = mta.tensor([1.0, 2.0, 3.0], requires_grad=True)
    other = mta.tensor([1.0, 0.0, 5.0], requires_grad=True)
    y = x * 1
    y.lt_(other)
    assert y.requires_grad and y.grad_fn is not None
    y.backward(mta.tensor([INF, 1.0, NAN]))
    tx = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    tother = torch.tensor([1.0, 0.0, 5.0], requires_grad=True)
    ty = tx * 1
    ty.lt_(tother)
    ty.backward(torch.tensor([INF, 1.0, NAN]))
    assert_same(host(x.grad), host(tx.grad), True, (0, 0), "x")
    assert_same(host(other.grad), host(tother.grad), True, (0, 0), "other")


# ------------------------------------------------------------------ out-of-place functions
NEW_FUNCTIONS = [
    "sinc",
    "deg2rad",
    "rad2deg",
    "conj_physical",
    "absolute",
    "negative",
    "divide",
    "multiply",
    "subtract",
    "arcsin",
    "arccos",
    "arctan",
    "arcsinh",
    "arccosh",
    "arctanh",
    "greater",
    "greater_equal",
    "less",
    "less_equal",
    "not_equal",
    "addcmul",
    "addcdiv",
    "renorm",
    "gcd",
    "lcm",
    "ldexp",
    "nextafter",
    "igamma",
    "igammac",
    "lgamma",
    "digamma",
    "polygamma",
    "mvlgamma",
    "i0",
]


@pytest.mark.parametrize("name", NEW_FUNCTIONS)
def test_function_and_method_exist_as_in_torch(name: str) -> None:
    """Each is a function and a Tensor method, as PyTorch has them (with torch present,
    checked against it)."""
    assert callable(getattr(mta, name)) and name in mta.__all__
    assert callable(getattr(Tensor, name))
    assert callable(getattr(Tensor, name + "_"))
    try:
        import torch
    except ImportError:
        return
    assert hasattr(torch, name) and hasattr(torch.Tensor, name)


@pytest.mark.parametrize(
    "fn",
    [
        mta.sinc,
        mta.deg2rad,
        mta.rad2deg,
        mta.lgamma,
        mta.digamma,
        mta.i0,
        lambda x: mta.polygamma(2, x),
        lambda x: mta.mvlgamma(x + 3, 2),
        lambda x: mta.renorm(x.reshape(2, 3), 3, 1, 0.5),
        lambda x: mta.addcdiv(x, x, x.abs() + 1, value=0.5),
        lambda x: mta.ldexp(x, mta.tensor([1, -2, 3, 0, 1, 2])),
        lambda x: mta.igamma(
            mta.tensor([0.5, 1.5, 3.0, 2.0, 7.0, 1.0], dtype=mta.float64), x.abs() + 0.1
        ),
    ],
    ids=[
        "sinc",
        "deg2rad",
        "rad2deg",
        "lgamma",
        "digamma",
        "i0",
        "polygamma2",
        "mvlgamma",
        "renorm",
        "addcdiv",
        "ldexp",
        "igamma_other",
    ],
)
def test_new_functions_first_and_second_derivatives(fn: Callable[[Tensor], Tensor]) -> None:
    """float64 finite differences (no PyTorch), away from poles and kinks."""
    x = mta.tensor([0.35, 1.7, 2.6, -0.45, 3.3, 1.2], dtype=mta.float64, requires_grad=True)
    assert gradcheck(fn, [x], atol=1e-7, rtol=1e-5)
    assert gradgradcheck(fn, [x], atol=1e-6, rtol=1e-4)


def test_incomplete_gamma_against_closed_forms() -> None:
    """``P(n, x) = 1 - exp(-x) sum_{k<n} x**k / k!`` for whole ``n``, ``P(1/2, x) =
    erf(sqrt(x))``; ``Q = 1 - P``, accurate where it is tiny (no PyTorch)."""
    x = np.array([0.01, 0.3, 1.0, 2.5, 7.0, 15.0, 40.0, 90.0])
    for n in (1, 2, 5, 12, 30):
        upper = np.array(
            [math.exp(-v) * math.fsum(v**k / math.factorial(k) for k in range(n)) for v in x]
        )
        a = mta.tensor(np.full_like(x, n))
        np.testing.assert_allclose(
            host(mta.igammac(a, mta.tensor(x))), upper, rtol=1e-12, atol=1e-300
        )
        np.testing.assert_allclose(
            host(mta.igamma(a, mta.tensor(x))), 1 - upper, rtol=1e-12, atol=1e-15
        )
    half = np.array([math.erf(math.sqrt(v)) for v in x])
    np.testing.assert_allclose(
        host(mta.igamma(mta.tensor(np.full_like(x, 0.5)), mta.tensor(x))), half, rtol=1e-13
    )


def test_incomplete_gamma_edge_values_match_torch() -> None:
    """PyTorch's values where a or x is 0, negative, infinite or NaN."""
    torch = torch_mod()
    values = [0.0, -0.0, 0.5, 2.0, INF, NAN, -1.0]
    a, x = (g.ravel() for g in np.meshgrid(values, values))
    for name in ("igamma", "igammac"):
        ours = getattr(mta, name)(mta.tensor(a), mta.tensor(x))
        theirs = getattr(torch, name)(torch.tensor(a), torch.tensor(x))
        assert_same(host(ours), host(theirs), False, (1e-12, 1e-15), name)


def test_aliases_equal_their_originals() -> None:
    x = mta.tensor([-1.5, 0.25, 0.75, 2.0], dtype=mta.float64)
    other = mta.tensor([2.0, 0.25, -1.0, 1.0], dtype=mta.float64)
    pairs = [
        (mta.absolute(x), mta.abs(x)),
        (mta.negative(x), -x),
        (mta.divide(x, other), x / other),
        (mta.multiply(x, other), x * other),
        (mta.subtract(x, other, alpha=2), x - 2 * other),
        (mta.arcsin(x.clamp(-1, 1)), mta.asin(x.clamp(-1, 1))),
        (mta.arctan(x), mta.atan(x)),
        (mta.arcsinh(x), mta.asinh(x)),
        (mta.arccosh(x.abs() + 1), mta.acosh(x.abs() + 1)),
        (mta.arccos(x.clamp(-1, 1)), mta.acos(x.clamp(-1, 1))),
        (mta.arctanh(x.clamp(-0.5, 0.5)), mta.atanh(x.clamp(-0.5, 0.5))),
        (mta.greater(x, other), x > other),
        (mta.less_equal(x, other), x <= other),
        (mta.greater_equal(x, other), x >= other),
        (mta.less(x, other), x < other),
        (mta.not_equal(x, other), x != other),
        (x.neg(), -x),
        (x.negative(), -x),
        (mta.addcmul(x, x, other, value=3), x + 3 * x * other),
    ]
    for ours, reference in pairs:
        np.testing.assert_array_equal(host(ours), host(reference))
    assert mta.conj_physical(x) is x
    np.testing.assert_array_equal(
        host(mta.gcd(mta.tensor([12, -18, 0]), mta.tensor([8, 12, 0]))), [4, 6, 0]
    )
    np.testing.assert_array_equal(
        host(mta.lcm(mta.tensor([4, -6, 0]), mta.tensor([6, 4, 5]))), [12, 12, 0]
    )
    step = host(mta.nextafter(x, mta.tensor([INF] * 4, dtype=mta.float64)))
    np.testing.assert_array_equal(step, np.nextafter(host(x), INF))


@pytest.mark.parametrize(
    "call,error,match",
    [
        (lambda: mta.polygamma(-1, mta.tensor([1.0])), ValueError, "negative n"),
        (lambda: mta.mvlgamma(mta.tensor([1.0]), 0), ValueError, "greater than or equal to 1"),
        (lambda: mta.gcd(mta.tensor([1.0]), mta.tensor([2.0])), TypeError, "integer tensors only"),
        (
            lambda: mta.addcdiv(mta.tensor([1]), mta.tensor([1]), mta.tensor([2])),
            TypeError,
            "no longer supported",
        ),
        (lambda: mta.renorm(mta.tensor([[1.0]]), -1, 0, 1.0), ValueError, "non-positive-norm"),
        (lambda: mta.renorm(mta.tensor([[1.0]]), 2, 0, -1.0), ValueError, "maxnorm"),
        (
            lambda: mta.igamma(mta.tensor([1.0]), mta.tensor([1.0], dtype=mta.float64)),
            TypeError,
            "igamma",
        ),
        (
            lambda: mta.nextafter(mta.tensor([1.0]), mta.tensor([1.0], dtype=mta.float64)),
            TypeError,
            "nextafter",
        ),
    ],
)
def test_bad_arguments_raise(call: Callable[[], Any], error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        call()


# ------------------------------------------------------------------ random fills
SAMPLES = 200_000


def _moments(values: np.ndarray) -> tuple[float, float, float]:
    """Mean, variance and the standard error of the variance (from the fourth moment)."""
    mean = float(values.mean())
    centered = values - mean
    variance = float(np.mean(centered**2))
    return mean, variance, float(np.sqrt((np.mean(centered**4) - variance**2) / values.size))


#: name -> (arguments, mean, variance) of the distribution: the checks below take 6
#: standard errors (with the fixed seed they are deterministic; a wrong scale or shift
#: moves the moments by hundreds of standard errors).
MOMENTS: dict[str, tuple[tuple[Any, ...], float, float]] = {
    "uniform_": ((-2.0, 3.0), 0.5, 25 / 12),
    "normal_": ((1.5, 2.0), 1.5, 4.0),
    "bernoulli_": ((0.3,), 0.3, 0.21),
    "exponential_": ((2.5,), 0.4, 0.16),
    "log_normal_": ((0.5, 0.4), math.exp(0.5 + 0.08), (math.exp(0.16) - 1) * math.exp(1 + 0.16)),
    "geometric_": ((0.25,), 4.0, 0.75 / 0.0625),
    "random_": ((3, 10), 6.0, (7**2 - 1) / 12),
}


@pytest.mark.parametrize("dtype", FLOATS, ids=["float32", "float64"])
@pytest.mark.parametrize("name", list(MOMENTS))
def test_random_fill_moments(name: str, dtype: Any) -> None:
    args, mean, variance = MOMENTS[name]
    mta.manual_seed(7)
    y = mta.empty(SAMPLES, dtype=dtype)
    view = y[5:]
    assert getattr(y, name)(*args) is y
    values = host(y)
    assert values.dtype == dtype
    np.testing.assert_array_equal(host(view), values[5:])
    got_mean, got_variance, variance_error = _moments(values.astype(np.float64))
    assert abs(got_mean - mean) < 6 * math.sqrt(variance / SAMPLES), (got_mean, mean)
    assert abs(got_variance - variance) < 6 * variance_error, (got_variance, variance)


def test_random_fill_supports() -> None:
    mta.manual_seed(3)
    u = host(mta.empty(SAMPLES).uniform_(-2.0, 3.0))
    assert u.min() >= -2.0 and u.max() < 3.0
    assert host(mta.empty(7).uniform_(1.5, 1.5)).tolist() == [1.5] * 7  # from == to is allowed
    e = host(mta.empty(SAMPLES, dtype=mta.float64).exponential_(3.0))
    assert e.min() >= 0 and np.isfinite(e).all()
    assert (host(mta.empty(SAMPLES).log_normal_()) > 0).all()
    g = host(mta.empty(SAMPLES, dtype=mta.float64).geometric_(0.6))
    assert g.min() == 1 and (g == np.round(g)).all()
    for k in (1, 2, 3):  # P(X = k) = (1 - p)**(k - 1) p
        assert abs(np.mean(g == k) - 0.4 ** (k - 1) * 0.6) < 6 * math.sqrt(0.25 / SAMPLES)
    b = host(mta.empty(SAMPLES, dtype=mta.float64).bernoulli_(0.7))
    assert set(np.unique(b).tolist()) == {0.0, 1.0}
    c = host(mta.empty(SAMPLES, dtype=mta.float64).cauchy_(2.0, 0.5))  # no moments: quartiles
    for q, expected in ((0.25, 1.5), (0.5, 2.0), (0.75, 2.5)):
        density = 1 / (math.pi * 0.5 * (1 + ((expected - 2.0) / 0.5) ** 2))
        error = math.sqrt(q * (1 - q) / SAMPLES) / density
        assert abs(np.quantile(c, q) - expected) < 6 * error


def test_bernoulli_with_a_tensor_of_probabilities() -> None:
    p = mta.tensor([0.0, 1.0, 0.2, 0.9])
    mta.manual_seed(0)
    draws = host(mta.zeros(SAMPLES // 4, 4, dtype=mta.int64).bernoulli_(p))
    assert draws.dtype == np.int64
    np.testing.assert_array_equal(draws[:, :2], np.broadcast_to([0, 1], (SAMPLES // 4, 2)))
    for column, prob in ((2, 0.2), (3, 0.9)):
        assert abs(draws[:, column].mean() - prob) < 6 * math.sqrt(
            prob * (1 - prob) / (SAMPLES // 4)
        )
    with pytest.raises(ValueError, match=r"in \[0, 1\]"):
        mta.zeros(2).bernoulli_(mta.tensor([0.5, 1.5]))


@pytest.mark.parametrize(
    "dtype,low,high",
    [
        (mta.float32, 0, 2**24),
        (mta.float64, 0, 2**53),
        (mta.int64, 0, 2**63 - 1),
        (mta.uint8, 0, 255),
        (mta.int8, 0, 127),
        (mta.bool, 0, 1),
    ],
)
def test_random_default_ranges(dtype: Any, low: int, high: int) -> None:
    """``random_()``: PyTorch's ``[0, 2**mantissa_digits]`` for floats, ``[0, max]`` for
    integers: whole numbers, inside, and reaching most of the range."""
    mta.manual_seed(1)
    values = host(mta.zeros(20_000, dtype=dtype).random_()).astype(np.float64)
    assert values.min() >= low and values.max() <= high
    assert (values == np.round(values)).all()
    assert values.max() > 0.99 * high if high > 1 else set(np.unique(values)) == {0.0, 1.0}


def test_random_call_forms() -> None:
    mta.manual_seed(2)
    assert set(np.unique(host(mta.zeros(5000, dtype=mta.int64).random_(4))).tolist()) == {
        0,
        1,
        2,
        3,
    }
    assert set(np.unique(host(mta.zeros(5000).random_(-2, 2))).tolist()) == {-2.0, -1.0, 0.0, 1.0}
    assert set(
        np.unique(host(mta.zeros(5000, dtype=mta.uint8).random_(250, None))).tolist()
    ) == set(range(250, 256))


def test_random_fills_are_reproducible_and_take_a_generator() -> None:
    for name, args in [
        ("uniform_", ()),
        ("normal_", ()),
        ("bernoulli_", ()),
        ("random_", (100,)),
        ("exponential_", ()),
        ("cauchy_", ()),
        ("log_normal_", ()),
        ("geometric_", (0.5,)),
    ]:
        mta.manual_seed(11)
        first = host(getattr(mta.empty(64), name)(*args))
        mta.manual_seed(11)
        again = host(getattr(mta.empty(64), name)(*args))
        np.testing.assert_array_equal(first, again)
        assert len(np.unique(first)) > 1
        with_gen = [
            host(getattr(mta.empty(64), name)(*args, generator=np.random.default_rng(4)))
            for _ in range(2)
        ]
        np.testing.assert_array_equal(with_gen[0], with_gen[1])
        assert not np.array_equal(with_gen[0], first)
        mta.manual_seed(11)  # the generator= draw leaves the device's generator alone
        getattr(mta.empty(64), name)(*args, generator=np.random.default_rng(4))
        np.testing.assert_array_equal(host(getattr(mta.empty(64), name)(*args)), first)


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda t: t.normal_(0, -1), "normal expects std >= 0.0"),
        (lambda t: t.bernoulli_(1.5), r"bernoulli_ expects p to be in \[0, 1\]"),
        (lambda t: t.bernoulli_(-0.1), r"bernoulli_ expects p to be in \[0, 1\]"),
        (lambda t: t.uniform_(2, 1), r"uniform_ expects to return a \[from, to\) range"),
        (lambda t: t.random_(2, 1), "random_ expects 'from' to be less than 'to'"),
        (lambda t: t.random_(3, 3), "random_ expects 'from' to be less than 'to'"),
        (lambda t: t.exponential_(0), "exponential_ expects lambda > 0.0"),
        (lambda t: t.exponential_(-1), "exponential_ expects lambda > 0.0"),
        (lambda t: t.cauchy_(0, -1), "cauchy_ expects sigma > 0.0"),
        (lambda t: t.log_normal_(0, 0), "log_normal_ expects std > 0.0"),
        (lambda t: t.geometric_(0), r"geometric_ expects p to be in \(0, 1\)"),
        (lambda t: t.geometric_(1.5), r"geometric_ expects p to be in \(0, 1\)"),
    ],
)
def test_random_fill_parameters_are_checked_as_in_torch(
    call: Callable[[Any], Any], match: str
) -> None:
    """Our message starts as PyTorch's (ValueError here, RuntimeError there)."""
    with pytest.raises(ValueError, match=match):
        call(mta.zeros(3))
    try:
        import torch
    except ImportError:
        return
    with pytest.raises(RuntimeError, match=match):
        call(torch.zeros(3))


def test_random_fills_refuse_integer_tensors_where_torch_does() -> None:
    for name in ("uniform_", "normal_", "exponential_", "cauchy_", "log_normal_"):
        with pytest.raises(TypeError, match="not implemented for int64"):
            getattr(mta.zeros(3, dtype=mta.int64), name)()
    assert host(mta.zeros(3, dtype=mta.int64).geometric_(0.5)).min() >= 1  # as PyTorch: allowed


@pytest.mark.parametrize(
    "name,args",
    [
        ("uniform_", ()),
        ("normal_", ()),
        ("bernoulli_", ()),
        ("random_", (5,)),
        ("exponential_", ()),
        ("cauchy_", ()),
        ("log_normal_", ()),
        ("geometric_", (0.5,)),
    ],
)
def test_random_fills_and_autograd_as_torch(name: str, args: tuple[Any, ...]) -> None:
    """A leaf that requires grad is refused outside no_grad; on a non-leaf the fill is
    recorded with gradient 0 (PyTorch's ``NormalBackward``...); a saved tensor changed
    by a fill makes backward raise."""
    x = mta.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        getattr(x, name)(*args)
    with mta.no_grad():
        getattr(x, name)(*args)
    x = mta.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1
    getattr(y, name)(*args)
    assert y.requires_grad and y.grad_fn is not None
    y.backward(mta.tensor([INF, 1.0, NAN]))
    np.testing.assert_array_equal(host(x.grad), [0.0, 0.0, 0.0])
    y = x * 1
    z = y * y
    getattr(y, name)(*args)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()
