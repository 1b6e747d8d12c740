"""The activations of ``torch.nn`` against PyTorch: softplus, relu6, hardtanh,
hardsigmoid, hardswish, mish, logsigmoid, softsign, tanhshrink, selu, celu, threshold,
hardshrink, softshrink, softmin and prelu, with elu, silu, gelu and leaky_relu.

Each function is checked for its values against a NumPy formula written here, for its
first and second derivatives against float64 finite differences (away from its kinks),
and for values and gradients against PyTorch (skipped where it is not installed):
random inputs in float32 and float64 and several shapes, then a grid of special inputs
(infinities, NaN, signed zeros and every kink) with incoming gradients of 1 and of inf,
where NaN, inf, 0 and the sign of a zero must be PyTorch's exactly.

On that grid PyTorch is called one element at a time. Its CPU kernels process long
tensors in vector registers, and those paths disagree with its per-element code at NaN
(``elu``, ``hardtanh``, the shrinks, ...), so which answer a long tensor gets depends on
the CPU; one element always takes the per-element code, which its GPU kernels share.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from support.helpers import check_op, to_host

import minitorch_accel as mta
import minitorch_accel.nn.functional as F
from minitorch_accel import nn
from minitorch_accel.backends.numpy import fast_nn
from minitorch_accel.core.tensor import Tensor

ERF = np.vectorize(math.erf, otypes=[float])
SELU_ALPHA, SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def softplus_ref(x: np.ndarray, beta: float = 1.0, threshold: float = 20.0) -> np.ndarray:
    return np.where(x * beta > threshold, x, np.logaddexp(0.0, x * beta) / beta)


def gelu_tanh_ref(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


@dataclass(frozen=True)
class Case:
    """One activation: ours, PyTorch's (``theirs(torch.nn.functional, x)``), a NumPy
    reference of its values, and the points where it has a kink (kept away from in the
    finite-difference checks)."""

    name: str
    ours: Callable[[Tensor], Tensor]
    theirs: Callable[[Any, Any], Any]
    reference: Callable[[np.ndarray], np.ndarray]
    kinks: tuple[float, ...] = ()
    float32_atol: float = 1e-6


def _prelu(x: Tensor) -> Tensor:
    return F.prelu(x, mta.tensor([0.25], dtype=x.dtype, device=x.device))


CASES = [
    Case("silu", F.silu, lambda T, x: T.silu(x), lambda x: x / (1 + np.exp(-x))),
    Case("gelu", F.gelu, lambda T, x: T.gelu(x), lambda x: x * 0.5 * (1 + ERF(x / math.sqrt(2)))),
    Case(
        "gelu_tanh",
        lambda x: F.gelu(x, approximate="tanh"),
        lambda T, x: T.gelu(x, approximate="tanh"),
        gelu_tanh_ref,
        # float32 gradient near x = -5: (1 - tanh**2) * 11 with tanh one ulp from -1
        float32_atol=5e-6,
    ),
    Case("elu", F.elu, lambda T, x: T.elu(x), lambda x: np.where(x > 0, x, np.expm1(x)), (0.0,)),
    Case(
        "elu_0.7",
        lambda x: F.elu(x, 0.7),
        lambda T, x: T.elu(x, 0.7),
        lambda x: np.where(x > 0, x, 0.7 * np.expm1(x)),
        (0.0,),
    ),
    Case(
        "selu",
        F.selu,
        lambda T, x: T.selu(x),
        lambda x: SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * np.expm1(x)),
        (0.0,),
    ),
    Case(
        "celu",
        F.celu,
        lambda T, x: T.celu(x),
        lambda x: np.where(x > 0, x, np.expm1(x)),
        (0.0,),
    ),
    Case(
        "celu_2.5",
        lambda x: F.celu(x, 2.5),
        lambda T, x: T.celu(x, 2.5),
        lambda x: np.where(x > 0, x, 2.5 * np.expm1(x / 2.5)),
        (0.0,),
    ),
    Case(
        "leaky_relu",
        F.leaky_relu,
        lambda T, x: T.leaky_relu(x),
        lambda x: np.where(x > 0, x, 0.01 * x),
        (0.0,),
    ),
    Case(
        "leaky_relu_0.2",
        lambda x: F.leaky_relu(x, 0.2),
        lambda T, x: T.leaky_relu(x, 0.2),
        lambda x: np.where(x > 0, x, 0.2 * x),
        (0.0,),
    ),
    Case("softplus", F.softplus, lambda T, x: T.softplus(x), softplus_ref),
    Case(
        "softplus_beta2_threshold1",
        lambda x: F.softplus(x, beta=2.0, threshold=1.0),
        lambda T, x: T.softplus(x, beta=2.0, threshold=1.0),
        lambda x: softplus_ref(x, 2.0, 1.0),
        (0.5,),
    ),
    Case(
        "relu6",
        F.relu6,
        lambda T, x: T.relu6(x),
        lambda x: np.minimum(np.maximum(x, 0), 6),
        (0.0, 6.0),
    ),
    Case("hardtanh", F.hardtanh, lambda T, x: T.hardtanh(x), lambda x: np.clip(x, -1, 1), (-1, 1)),
    Case(
        "hardtanh_-2_0.5",
        lambda x: F.hardtanh(x, -2.0, 0.5),
        lambda T, x: T.hardtanh(x, -2.0, 0.5),
        lambda x: np.clip(x, -2, 0.5),
        (-2.0, 0.5),
    ),
    Case(
        "hardsigmoid",
        F.hardsigmoid,
        lambda T, x: T.hardsigmoid(x),
        lambda x: np.clip(x / 6 + 0.5, 0, 1),
        (-3.0, 3.0),
    ),
    Case(
        "hardswish",
        F.hardswish,
        lambda T, x: T.hardswish(x),
        lambda x: x * np.clip(x + 3, 0, 6) / 6,
        (-3.0, 3.0),
    ),
    Case("mish", F.mish, lambda T, x: T.mish(x), lambda x: x * np.tanh(np.logaddexp(0.0, x))),
    Case("logsigmoid", F.logsigmoid, lambda T, x: T.logsigmoid(x), lambda x: -np.logaddexp(0, -x)),
    Case("softsign", F.softsign, lambda T, x: T.softsign(x), lambda x: x / (1 + np.abs(x)), (0,)),
    Case("tanhshrink", F.tanhshrink, lambda T, x: T.tanhshrink(x), lambda x: x - np.tanh(x)),
    Case(
        "threshold",
        lambda x: F.threshold(x, 0.5, -1.0),
        lambda T, x: T.threshold(x, 0.5, -1.0),
        lambda x: np.where(x <= 0.5, -1.0, x),
        (0.5,),
    ),
    Case(
        "hardshrink",
        F.hardshrink,
        lambda T, x: T.hardshrink(x),
        lambda x: np.where(np.abs(x) <= 0.5, 0.0, x),
        (-0.5, 0.5),
    ),
    Case(
        "hardshrink_1",
        lambda x: F.hardshrink(x, 1.0),
        lambda T, x: T.hardshrink(x, 1.0),
        lambda x: np.where(np.abs(x) <= 1.0, 0.0, x),
        (-1.0, 1.0),
    ),
    Case(
        "softshrink",
        F.softshrink,
        lambda T, x: T.softshrink(x),
        lambda x: np.sign(x) * np.maximum(np.abs(x) - 0.5, 0),
        (-0.5, 0.5),
    ),
    Case(
        "softshrink_1",
        lambda x: F.softshrink(x, 1.0),
        lambda T, x: T.softshrink(x, 1.0),
        lambda x: np.sign(x) * np.maximum(np.abs(x) - 1.0, 0),
        (-1.0, 1.0),
    ),
    Case(
        "prelu",
        _prelu,
        lambda T, x: T.prelu(x, x.new_tensor([0.25])),
        lambda x: np.where(x > 0, x, 0.25 * x),
        (0.0,),
    ),
]
IDS = [c.name for c in CASES]
DTYPES = [np.float32, np.float64]
#: Special inputs: infinities, NaN, signed zeros, and every kink of the cases above.
GRID = [-np.inf, -3, -2, -1, -0.5, -0.0, 0.0, 0.5, 1, 2, 3, 6, np.inf, np.nan]


def tolerances(dtype: Any, float32_atol: float = 1e-6) -> dict[str, float]:
    """How close finite results must be to PyTorch's: a few units in the last place
    (float32 cancels in ``1 + tanh`` and ``1 - sigmoid``, hence its absolute floor)."""
    if dtype == np.float64:
        return {"rtol": 1e-9, "atol": 1e-10}
    return {"rtol": 1e-5, "atol": float32_atol}


def assert_like_torch(
    ours: np.ndarray,
    theirs: np.ndarray,
    dtype: Any,
    what: str,
    exact_zeros: bool = True,
    float32_atol: float = 1e-6,
) -> None:
    """Equal where PyTorch's value is NaN or infinite, and (``exact_zeros``) where it is
    zero, the sign included; within :func:`tolerances` elsewhere. (Off the special grid
    a zero may be an underflow, which the two formulas reach at different inputs.)"""
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype, what
    special = ~np.isfinite(theirs) | ((theirs == 0) if exact_zeros else False)
    np.testing.assert_array_equal(ours[special], theirs[special], err_msg=what)
    zeros = (theirs == 0) & exact_zeros
    np.testing.assert_array_equal(np.signbit(ours[zeros]), np.signbit(theirs[zeros]), what)
    close = tolerances(dtype, float32_atol)
    np.testing.assert_allclose(
        ours[~special], theirs[~special], close["rtol"], close["atol"], err_msg=what
    )


def ours_and_grad(case: Case, x: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    t = mta.tensor(x, requires_grad=True)
    y = case.ours(t)
    y.backward(mta.tensor(g))
    assert t.grad is not None
    return to_host(y), to_host(t.grad)


def torch_and_grad(case: Case, x: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    torch = pytest.importorskip("torch")
    t = torch.tensor(x, requires_grad=True)
    y = case.theirs(torch.nn.functional, t)
    y.backward(torch.tensor(g))
    return y.detach().numpy(), t.grad.numpy()


def inputs(shape: tuple[int, ...], dtype: Any, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Values in [-6, 6) with some far out (+-12, +-30, +-100), and incoming gradients."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-6, 6, shape)
    far = np.array([-100.0, 100.0, -30.0, 30.0, -12.0, 12.0])
    x.reshape(-1)[: min(x.size, far.size)] = far[: x.size]
    return x.astype(dtype), rng.standard_normal(shape).astype(dtype)


# ------------------------------------------------------------------ values and gradients
@pytest.mark.parametrize("shape", [(), (7,), (3, 4), (2, 3, 5)], ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_values_and_gradients_match_torch(case: Case, dtype: Any, shape: tuple[int, ...]) -> None:
    x, g = inputs(shape, dtype, seed=len(shape))
    y, grad = ours_and_grad(case, x, g)
    y_torch, grad_torch = torch_and_grad(case, x, g)
    loose = {"exact_zeros": False, "float32_atol": case.float32_atol}
    assert_like_torch(y, y_torch, dtype, "values", **loose)
    assert_like_torch(grad, grad_torch, dtype, "gradient", **loose)


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
@pytest.mark.parametrize("incoming", [1.0, np.inf], ids=["grad=1", "grad=inf"])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_special_inputs_and_an_infinite_gradient_match_torch(
    case: Case, dtype: Any, incoming: float
) -> None:
    """Infinities, NaN, signed zeros and the kinks, with a gradient of 1 and of inf:
    PyTorch's values and gradients, each NaN, inf and zero (and its sign) as PyTorch's.
    (silu and gelu once gave NaN for an infinite gradient, elu NaN at a NaN input.)"""
    x = np.array(GRID, dtype=dtype)
    g = np.full_like(x, incoming)
    expected = [torch_and_grad(case, x[i : i + 1], g[i : i + 1]) for i in range(x.size)]
    y_torch = np.concatenate([e[0] for e in expected])
    grad_torch = np.concatenate([e[1] for e in expected])
    y, grad = ours_and_grad(case, x, g)
    assert_like_torch(y, y_torch, dtype, "values")
    assert_like_torch(grad, grad_torch, dtype, "gradient")


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_special_inputs_on_both_tiers_and_in_chunks(case: Case) -> None:
    """The same grid spread over a tensor long enough for the CPU's threaded fast paths
    (``MaskedGrad`` in chunks): every element as with the fast paths off, and as the
    one-element PyTorch results of the grid."""
    repeats = -(-3 * fast_nn.ELEMENT_GRAIN // len(GRID))
    x = np.tile(np.array(GRID, np.float32), repeats)
    g = np.tile(np.array([1.0, np.inf], np.float32), x.size // 2)
    before = mta.get_num_threads()
    mta.set_num_threads(2)
    try:
        with mta.fast_paths(True):
            fast = ours_and_grad(case, x, g)
        with mta.fast_paths(False):
            reference = ours_and_grad(case, x, g)
    finally:
        mta.set_num_threads(before)
    for f, r in zip(fast, reference, strict=True):
        np.testing.assert_array_equal(f, r)
        np.testing.assert_array_equal(np.signbit(f), np.signbit(r))
    period = len(GRID) * 2  # the grid meets gradients 1 and inf at alternate positions
    expected = [torch_and_grad(case, x[i : i + 1], g[i : i + 1]) for i in range(period)]
    y_torch = np.tile(np.concatenate([e[0] for e in expected]), x.size // period + 1)
    grad_torch = np.tile(np.concatenate([e[1] for e in expected]), x.size // period + 1)
    assert_like_torch(fast[0], y_torch[: x.size], np.float32, "values")
    assert_like_torch(fast[1], grad_torch[: x.size], np.float32, "gradient")


def away_from(kinks: tuple[float, ...], shape: tuple[int, ...], seed: int) -> np.ndarray:
    """float64 values in [-5, 5), each at least 0.05 from every kink."""
    x = np.random.default_rng(seed).uniform(-5, 5, shape)
    for k in kinks:
        near = np.abs(x - k) < 0.05
        x[near] = k + np.where(x[near] >= k, 0.05, -0.05) + np.sign(x[near] - k) * 0.01
    return x


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_values_against_numpy_and_derivatives_against_finite_differences(
    case: Case, device: str
) -> None:
    x = away_from(case.kinks, (3, 4), seed=7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the references' exp overflow
        check_op(case.ours, case.reference, [], device, arrays=[x])
    wide = np.concatenate([x.reshape(-1), [-40.0, -12.5, 12.5, 40.0]])  # tails in float64
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = case.reference(wide)
    np.testing.assert_allclose(
        to_host(case.ours(mta.tensor(wide, device=device))), expected, rtol=1e-12, atol=1e-10
    )


SMOOTH = [c for c in CASES if c.name in ("silu", "gelu", "gelu_tanh", "mish", "logsigmoid")]
SMOOTH += [c for c in CASES if c.name in ("softplus", "selu", "celu_2.5", "softsign")]
SMOOTH += [c for c in CASES if c.name in ("tanhshrink", "hardswish", "elu_0.7")]


@pytest.mark.parametrize("case", SMOOTH, ids=[c.name for c in SMOOTH])
def test_second_derivatives_match_torch(case: Case) -> None:
    torch = pytest.importorskip("torch")
    x_np = away_from(case.kinks, (11,), seed=3)
    x = mta.tensor(x_np, requires_grad=True)
    (first,) = mta.autograd.grad(case.ours(x).sum(), [x], create_graph=True)
    (second,) = mta.autograd.grad((first * first).sum(), [x])
    t = torch.tensor(x_np, requires_grad=True)
    (first_t,) = torch.autograd.grad(
        case.theirs(torch.nn.functional, t).sum(), t, create_graph=True
    )
    (second_t,) = torch.autograd.grad((first_t * first_t).sum(), t)
    np.testing.assert_allclose(to_host(first), first_t.detach().numpy(), rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(to_host(second), second_t.numpy(), rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize(
    "fn",
    [F.softplus, F.logsigmoid, F.mish, F.silu, F.elu, F.selu, F.celu, F.gelu, F.softsign],
    ids=lambda f: f.__name__,
)
def test_large_inputs_neither_overflow_nor_warn(fn: Callable[[Tensor], Tensor]) -> None:
    x = mta.tensor([-1e4, -100.0, -30.0, 30.0, 100.0, 1e4], dtype=mta.float32, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = fn(x)
        y.sum().backward()
    assert x.grad is not None
    assert np.isfinite(to_host(y)).all() and np.isfinite(to_host(x.grad)).all()


def test_softplus_stays_finite_where_pytorchs_formula_overflows() -> None:
    """The documented difference: with a threshold raised past exp's range, PyTorch's
    ``log1p(exp(x))`` is inf; ``max(x, 0) + log1p(exp(-|x|))`` is the exact value."""
    x = np.array([-800.0, 0.5, 800.0])
    y = F.softplus(mta.tensor(x, requires_grad=True), threshold=1e4)
    np.testing.assert_allclose(to_host(y), np.logaddexp(0.0, x), rtol=1e-15)


def test_hardsigmoid_slope_is_pytorchs_float32_sixth_in_float64() -> None:
    x = mta.tensor([0.0, -3.0, 3.0, 2.9], dtype=mta.float64, requires_grad=True)
    F.hardsigmoid(x).sum().backward()
    sixth = float(np.float32(1) / np.float32(6))
    assert x.grad is not None and x.grad.tolist() == [sixth, 0.0, 0.0, sixth]


# ------------------------------------------------------------------ softmin and prelu
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmin_matches_numpy_torch_and_finite_differences(dim: int, device: str) -> None:
    x = np.random.default_rng(dim + 5).standard_normal((3, 4))

    def reference(a: np.ndarray) -> np.ndarray:
        e = np.exp(-(a - a.min(axis=dim, keepdims=True)))
        return e / e.sum(axis=dim, keepdims=True)

    check_op(lambda a: F.softmin(a, dim), reference, [], device, arrays=[x])
    layer = nn.Softmin(dim)
    np.testing.assert_allclose(to_host(layer(mta.tensor(x, device=device))), reference(x), 1e-12)
    torch = pytest.importorskip("torch")
    g = np.random.default_rng(1).standard_normal(x.shape)
    a, t = mta.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    F.softmin(a, dim).backward(mta.tensor(g))
    torch.nn.functional.softmin(t, dim).backward(torch.tensor(g))
    np.testing.assert_allclose(to_host(a.grad), t.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 3, 4)], ids=str)
def test_softmin_without_dim_warns_and_picks_pytorchs_dim(shape: tuple[int, ...]) -> None:
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).standard_normal(shape)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmin"):
        ours = to_host(F.softmin(mta.tensor(x)))
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmin"):
        theirs = torch.nn.functional.softmin(torch.tensor(x)).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_softmin_dtype_converts_first() -> None:
    y = F.softmin(mta.tensor([1.0, 2.0], dtype=mta.float32), 0, dtype=mta.float64)
    assert y.dtype == np.float64
    np.testing.assert_allclose(to_host(y), np.array([1.0, np.exp(-1.0)]) / (1 + np.exp(-1.0)))


PRELU_SHAPES = [((5,), 1), ((4, 3), 1), ((4, 3), 3), ((2, 3, 4, 5), 3), ((2, 3, 2, 2, 2), 3)]


@pytest.mark.parametrize("shape,num_parameters", PRELU_SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
def test_prelu_values_and_both_gradients_match_torch(
    shape: tuple[int, ...], num_parameters: int, dtype: Any
) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(sum(shape))
    x = rng.standard_normal(shape).astype(dtype)
    x.reshape(-1)[:4] = [np.inf, -np.inf, np.nan, -0.0][: x.size]
    g = rng.standard_normal(shape).astype(dtype)
    w = rng.uniform(0.05, 0.5, num_parameters).astype(dtype)
    layer = nn.PReLU(num_parameters, dtype=dtype)
    with mta.no_grad():
        layer.weight.copy_(mta.tensor(w))
    a = mta.tensor(x, requires_grad=True)
    y = layer(a)
    y.backward(mta.tensor(g))
    theirs = torch.nn.PReLU(num_parameters, dtype=getattr(torch, np.dtype(dtype).name))
    with torch.no_grad():
        theirs.weight.copy_(torch.tensor(w))
    t = torch.tensor(x, requires_grad=True)
    y_t = theirs(t)
    y_t.backward(torch.tensor(g))
    assert_like_torch(to_host(y), y_t.detach().numpy(), dtype, "values")
    assert_like_torch(to_host(a.grad), t.grad.numpy(), dtype, "input gradient")
    assert layer.weight.grad is not None and layer.weight.grad.shape == (num_parameters,)
    assert_like_torch(to_host(layer.weight.grad), theirs.weight.grad.numpy(), dtype, "weight")


@pytest.mark.parametrize("shape,num_parameters", PRELU_SHAPES, ids=str)
def test_prelu_derivatives_against_finite_differences(
    shape: tuple[int, ...], num_parameters: int, device: str
) -> None:
    rng = np.random.default_rng(4)
    x = away_from((0.0,), shape, seed=len(shape))
    w = rng.uniform(0.05, 0.5, num_parameters)
    check_op(
        F.prelu,
        lambda a, b: np.where(a > 0, a, a * b.reshape((-1,) + (1,) * max(a.ndim - 2, 0))),
        [],
        device,
        arrays=[x, w],
    )


def test_prelu_module_state_and_init() -> None:
    layer = nn.PReLU(3, init=0.1)
    assert [n for n, _ in layer.named_parameters()] == ["weight"]
    assert layer.weight.tolist() == pytest.approx([0.1] * 3)
    assert list(layer.state_dict()) == ["weight"]
    assert nn.PReLU().weight.tolist() == [0.25]


# ------------------------------------------------------------------ modules
def module_pairs(torch: Any) -> list[tuple[nn.Module, Any]]:
    T = torch.nn
    return [
        (nn.Softplus(), T.Softplus()),
        (nn.Softplus(2.0, 1.0), T.Softplus(2.0, 1.0)),
        (nn.ReLU6(), T.ReLU6()),
        (nn.ReLU6(inplace=True), T.ReLU6(inplace=True)),
        (nn.Hardtanh(), T.Hardtanh()),
        (nn.Hardtanh(-2.0, 0.5, inplace=True), T.Hardtanh(-2.0, 0.5, inplace=True)),
        (nn.Hardsigmoid(), T.Hardsigmoid()),
        (nn.Hardsigmoid(inplace=True), T.Hardsigmoid(inplace=True)),
        (nn.Hardswish(), T.Hardswish()),
        (nn.Hardswish(inplace=True), T.Hardswish(inplace=True)),
        (nn.Mish(), T.Mish()),
        (nn.Mish(inplace=True), T.Mish(inplace=True)),
        (nn.LogSigmoid(), T.LogSigmoid()),
        (nn.Softsign(), T.Softsign()),
        (nn.Tanhshrink(), T.Tanhshrink()),
        (nn.SELU(), T.SELU()),
        (nn.SELU(inplace=True), T.SELU(inplace=True)),
        (nn.CELU(), T.CELU()),
        (nn.CELU(2.0, inplace=True), T.CELU(2.0, inplace=True)),
        (nn.Threshold(0.1, 20.0), T.Threshold(0.1, 20.0)),
        (nn.Threshold(0.1, 20, inplace=True), T.Threshold(0.1, 20, inplace=True)),
        (nn.Hardshrink(), T.Hardshrink()),
        (nn.Hardshrink(0.3), T.Hardshrink(0.3)),
        (nn.Softshrink(), T.Softshrink()),
        (nn.Softshrink(0.3), T.Softshrink(0.3)),
        (nn.Softmin(1), T.Softmin(1)),
        (nn.Softmin(), T.Softmin()),
        (nn.PReLU(dtype=mta.float64), T.PReLU(dtype=torch.float64)),
        (nn.PReLU(3, 0.1, dtype=mta.float64), T.PReLU(3, 0.1, dtype=torch.float64)),
        (nn.ELU(), T.ELU()),
        (nn.SiLU(), T.SiLU()),
        (nn.GELU("tanh"), T.GELU("tanh")),
        (nn.LeakyReLU(0.2), T.LeakyReLU(0.2)),
    ]


def test_module_reprs_match_torch() -> None:
    torch = pytest.importorskip("torch")
    for ours, theirs in module_pairs(torch):
        assert repr(ours) == repr(theirs)


@pytest.mark.filterwarnings("ignore:Implicit dimension choice:UserWarning")
def test_modules_match_torch_values_and_gradients() -> None:
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).uniform(-5, 5, (4, 3, 5))
    g = np.random.default_rng(1).standard_normal(x.shape)
    for ours, theirs in module_pairs(torch):
        a, t = mta.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        y, y_t = ours(a * 1.0), theirs(t * 1.0)  # not leaves: inplace layers may write
        y.backward(mta.tensor(g))
        y_t.backward(torch.tensor(g))
        what = repr(ours)
        np.testing.assert_allclose(to_host(y), y_t.detach().numpy(), 1e-9, 1e-10, err_msg=what)
        np.testing.assert_allclose(to_host(a.grad), t.grad.numpy(), 1e-9, 1e-10, err_msg=what)


# ------------------------------------------------------------------ inplace
INPLACE: dict[str, Callable[..., Tensor]] = {
    "relu6": F.relu6,
    "hardtanh": lambda x, inplace: F.hardtanh(x, -0.5, 2.0, inplace),
    "hardsigmoid": F.hardsigmoid,
    "hardswish": F.hardswish,
    "mish": F.mish,
    "selu": F.selu,
    "celu": lambda x, inplace: F.celu(x, 1.5, inplace),
    "threshold": lambda x, inplace: F.threshold(x, 0.25, -2.0, inplace),
}


@pytest.mark.parametrize("name", INPLACE)
def test_inplace_returns_the_input_with_the_out_of_place_values_and_gradients(name: str) -> None:
    fn = INPLACE[name]
    x_np = np.random.default_rng(2).uniform(-4, 4, (3, 5))
    results = []
    for inplace in (False, True):
        x = mta.tensor(x_np, requires_grad=True)
        hidden = x * 2.0  # not a leaf: in place is allowed
        out = fn(hidden, inplace=inplace)
        assert (out is hidden) == inplace
        (out * out).sum().backward()
        results.append((to_host(out), to_host(x.grad)))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-15)
    with mta.no_grad():
        plain = mta.tensor(x_np)
        assert fn(plain, inplace=True) is plain
    np.testing.assert_array_equal(to_host(plain), to_host(fn(mta.tensor(x_np), inplace=False)))


@pytest.mark.parametrize("name", INPLACE)
def test_inplace_on_a_leaf_that_requires_grad_raises_pytorchs_error(name: str) -> None:
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        INPLACE[name](mta.randn(3, requires_grad=True), inplace=True)


def test_inplace_modules_write_into_their_input() -> None:
    pairs = [
        (nn.ReLU6(True), nn.ReLU6()),
        (nn.Hardtanh(-2.0, 2.0, True), nn.Hardtanh(-2.0, 2.0)),
        (nn.Hardsigmoid(True), nn.Hardsigmoid()),
        (nn.Hardswish(True), nn.Hardswish()),
        (nn.Mish(True), nn.Mish()),
        (nn.SELU(True), nn.SELU()),
        (nn.CELU(0.5, True), nn.CELU(0.5)),
        (nn.Threshold(0.0, 9.0, True), nn.Threshold(0.0, 9.0)),
    ]
    values = [-3.0, -0.5, 0.5, 8.0]
    for in_place, out_of_place in pairs:
        x = mta.tensor(values)
        assert in_place(x) is x
        assert x.tolist() == out_of_place(mta.tensor(values)).tolist(), repr(in_place)


# ------------------------------------------------------------------ errors
def test_prelu_weight_not_matching_the_channels_is_named() -> None:
    with pytest.raises(ValueError, match=r"weight has 2 values .* \(4, 3, 5\) has 3 channel"):
        F.prelu(mta.randn(4, 3, 5), mta.ones(2))
    with pytest.raises(ValueError, match=r"num_parameters=3"):
        nn.PReLU(4)(mta.randn(2, 3))
    with pytest.raises(ValueError, match="has 1 channel"):
        F.prelu(mta.randn(5), mta.ones(5))  # a 1-D input has one channel, as in PyTorch
    with pytest.raises(ValueError, match=r"scalar or 1-D .* \(3, 1\)"):
        F.prelu(mta.randn(2, 3), mta.ones(3, 1))
    with pytest.raises(TypeError, match="input is float64 but weight is float32"):
        F.prelu(mta.randn(2, 3, dtype=mta.float64), mta.ones(3))


@pytest.mark.parametrize(
    "call,error,match",
    [
        (lambda: F.celu(mta.ones(2), alpha=0.0), ValueError, "alpha cannot be 0"),
        (lambda: nn.CELU(0.0)(mta.ones(2)), ValueError, "alpha cannot be 0"),
        (lambda: F.softplus(mta.ones(2), beta=0.0), ValueError, "beta must not be 0"),
        (lambda: F.hardtanh(mta.ones(2), 2.0, 1.0), ValueError, r"min_val \(2.0\) cannot be"),
        (lambda: nn.Hardtanh(1.0, 1.0), ValueError, r"max_val \(1.0\) must be greater"),
        (lambda: F.softshrink(mta.ones(2), -0.5), ValueError, "lambd must be >= 0, got -0.5"),
        (lambda: F.gelu(mta.ones(2), approximate="fast"), ValueError, "'none' or 'tanh'"),
        (lambda: F.softplus([1.0]), TypeError, "softplus: expected a Tensor, got list"),
    ],
)
def test_bad_arguments_raise_clear_errors(call: Callable[[], Any], error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        call()


def test_torch_raises_for_the_same_bad_arguments() -> None:
    """The errors above are ones PyTorch raises too (a zero CELU alpha, inverted
    hardtanh bounds, a negative softshrink lambd, a prelu weight of the wrong size)."""
    torch = pytest.importorskip("torch")
    T = torch.nn.functional
    for call in (
        lambda: T.celu(torch.ones(2), alpha=0.0),
        lambda: T.hardtanh(torch.ones(2), 2.0, 1.0),
        lambda: T.softshrink(torch.ones(2), -0.5),
        lambda: T.prelu(torch.randn(4, 3, 5), torch.ones(2)),
    ):
        with pytest.raises((RuntimeError, ValueError)):
            call()


def test_integer_input_becomes_float32() -> None:
    for fn in (F.softplus, F.relu6, F.hardswish, F.selu, F.softsign, F.mish):
        y = fn(mta.tensor([-2, 0, 3]))
        assert y.dtype == np.float32
