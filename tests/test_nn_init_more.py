"""``nn.init``: gains and fans against torch.nn.init, every random initializer exact at a
fixed seed against a NumPy reference drawn from the same generator, and the exact
structure of the others (orthogonality, truncation bounds, eye, dirac, sparse columns)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from support.helpers import to_host

import minitorch_accel as mta
from minitorch_accel import nn
from minitorch_accel.core.tensor import Tensor
from minitorch_accel.nn import init

torch = pytest.importorskip("torch")

NONLINEARITIES = [
    "linear",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "sigmoid",
    "tanh",
    "relu",
    "leaky_relu",
    "selu",
]
WEIGHT_SHAPES = [(5, 3), (3, 7), (8, 4, 3, 2), (6, 2, 5)]


def gen(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def param(*shape: int, dtype: Any = mta.float32, device: str = "cpu") -> nn.Parameter:
    return nn.Parameter(mta.zeros(*shape, dtype=dtype, device=device))


# ---------------------------------------------------------------- gains and fans
@pytest.mark.parametrize("nonlinearity", NONLINEARITIES)
def test_calculate_gain_equals_torch(nonlinearity: str) -> None:
    assert init.calculate_gain(nonlinearity) == torch.nn.init.calculate_gain(nonlinearity)
    if nonlinearity == "leaky_relu":
        for slope in (0, 0.2, 1, 3, math.sqrt(5)):
            assert init.calculate_gain(nonlinearity, slope) == (
                torch.nn.init.calculate_gain(nonlinearity, slope)
            )


def test_calculate_gain_errors() -> None:
    assert init.calculate_gain("selu") == 0.75
    with pytest.raises(ValueError, match="unsupported nonlinearity 'gelu'; use one of linear"):
        init.calculate_gain("gelu")
    for bad in (True, "0.2", [0.2]):
        with pytest.raises(ValueError, match="not a valid number"):
            init.calculate_gain("leaky_relu", bad)


@pytest.mark.parametrize("shape", [*WEIGHT_SHAPES, (2, 3, 4, 5, 6), (4, 1)])
def test_fans_equal_torch(shape: tuple[int, ...]) -> None:
    ours = init._calculate_fan_in_and_fan_out(mta.zeros(*shape))
    assert ours == torch.nn.init._calculate_fan_in_and_fan_out(torch.zeros(*shape))


@pytest.mark.parametrize(
    "fn",
    [init.xavier_uniform_, init.xavier_normal_, init.kaiming_uniform_, init.kaiming_normal_],
)
@pytest.mark.parametrize("shape", [(3,), ()])
def test_fewer_than_two_dims_are_refused(fn: Callable[..., Tensor], shape: tuple[int, ...]) -> None:
    torch_fn = getattr(torch.nn.init, fn.__name__)
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        torch_fn(torch.zeros(shape))
    with pytest.raises(ValueError, match="at least 2 dims"):
        fn(mta.zeros(*shape))


# ---------------------------------------------------------------- distributions, exact at a seed
def expected_std(shape: tuple[int, ...], kind: str, **kw: Any) -> float:
    """The standard deviation PyTorch's formulas give, with torch's own gain and fans."""
    fan_in, fan_out = torch.nn.init._calculate_fan_in_and_fan_out(torch.zeros(shape))
    if kind == "xavier":
        return kw.get("gain", 1.0) * math.sqrt(2.0 / (fan_in + fan_out))
    fan = fan_in if kw.get("mode", "fan_in").lower() == "fan_in" else fan_out
    gain = torch.nn.init.calculate_gain(kw.get("nonlinearity", "leaky_relu"), kw.get("a", 0))
    return gain / math.sqrt(fan)


CASES = [
    ("xavier", {}),
    ("xavier", {"gain": 2.5}),
    ("kaiming", {}),
    ("kaiming", {"a": math.sqrt(5)}),
    ("kaiming", {"a": 0.2, "mode": "fan_out"}),
    ("kaiming", {"mode": "FAN_OUT", "nonlinearity": "relu"}),
    ("kaiming", {"nonlinearity": "selu"}),
]


@pytest.mark.parametrize("shape", WEIGHT_SHAPES)
@pytest.mark.parametrize("kind, kw", CASES)
@pytest.mark.parametrize("dtype", [mta.float32, mta.float64])
def test_uniform_and_normal_initializers_exact(
    shape: tuple[int, ...], kind: str, kw: dict[str, Any], dtype: Any
) -> None:
    std = expected_std(shape, kind, **kw)
    bound = math.sqrt(3.0) * std
    uniform: Callable[..., Tensor] = getattr(init, f"{kind}_uniform_")
    normal: Callable[..., Tensor] = getattr(init, f"{kind}_normal_")
    w = param(*shape, dtype=dtype)
    assert uniform(w, **kw, generator=gen(7)) is w
    ref = gen(7).uniform(-bound, bound, size=shape).astype(dtype)
    np.testing.assert_array_equal(to_host(w), ref)
    assert np.all(np.abs(to_host(w)) <= np.asarray(bound, dtype=dtype))
    assert w.requires_grad and w.is_leaf and w.grad_fn is None
    assert normal(w, **kw, generator=gen(8)) is w
    np.testing.assert_array_equal(to_host(w), gen(8).normal(0.0, std, size=shape).astype(dtype))


def test_default_generator_is_seeded_by_manual_seed() -> None:
    draws = []
    for _ in range(2):
        mta.manual_seed(123)
        w = init.kaiming_uniform_(param(6, 4), a=math.sqrt(5))
        draws.append(to_host(w))
    np.testing.assert_array_equal(draws[0], draws[1])
    mta.manual_seed(5)
    a = init.uniform_(param(3, 3), -1.0, 1.0)
    mta.manual_seed(5)
    b = init.uniform_(param(3, 3), -1.0, 1.0)
    np.testing.assert_array_equal(to_host(a), to_host(b))


def test_uniform_normal_on_another_device_match_the_host() -> None:
    host = init.normal_(param(4, 3), 2.0, 0.5, generator=gen(1))
    other = init.normal_(param(4, 3, device="cpu:1"), 2.0, 0.5, generator=gen(1))
    assert other.device is mta.Device("cpu:1")
    np.testing.assert_array_equal(to_host(host), to_host(other))
    np.testing.assert_array_equal(
        to_host(init.uniform_(param(5), 1.0, 3.0, generator=gen(2))),
        gen(2).uniform(1.0, 3.0, size=5).astype(np.float32),
    )


def test_kaiming_on_zero_elements_warns_like_torch() -> None:
    for fn in (init.kaiming_uniform_, init.kaiming_normal_):
        w = mta.zeros(0, 3)
        with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
            assert fn(w) is w
    with pytest.raises(ValueError, match="mode must be 'fan_in' or 'fan_out', got 'fan'"):
        init.kaiming_normal_(param(2, 2), mode="fan")


# ---------------------------------------------------------------- trunc_normal_
@pytest.mark.parametrize("dtype", [mta.float32, mta.float64])
@pytest.mark.parametrize(
    "mean, std, a, b",
    [
        (0.0, 1.0, -2.0, 2.0),  # the default: plain rejection of normal draws
        (0.0, 5.0, -1.0, 1.0),  # wide normal, narrow window: uniform proposals
        (0.0, 1.0, 2.0, 3.0),  # a window in the tail
        (1.0, 0.1, 0.95, 1.3),
        (0.0, 1.0, 0.3, 0.3),  # a window of one point
    ],
)
def test_trunc_normal_stays_in_bounds(
    dtype: Any, mean: float, std: float, a: float, b: float
) -> None:
    w = param(40, 50, dtype=dtype)
    assert init.trunc_normal_(w, mean, std, a, b, generator=gen(3)) is w
    values = to_host(w)
    low, high = np.asarray([a, b], dtype=dtype)
    assert values.dtype == dtype and np.all((values >= low) & (values <= high))
    assert np.unique(values).size > 1 or a == b
    again = init.trunc_normal_(param(40, 50, dtype=dtype), mean, std, a, b, generator=gen(3))
    np.testing.assert_array_equal(to_host(again), values)


def test_trunc_normal_keeps_the_normal_draws_inside_the_window() -> None:
    """With most of the mass inside ``[a, b]``, the first normal draws that fall inside
    are kept as they are; only the others are redrawn."""
    w = init.trunc_normal_(param(30, 30, dtype=mta.float64), 0.5, 1.0, -1.0, 2.0, generator=gen(4))
    first = gen(4).normal(0.5, 1.0, size=(30, 30))
    inside = (first >= -1.0) & (first <= 2.0)
    assert 0 < inside.sum() < inside.size
    np.testing.assert_array_equal(to_host(w)[inside], first[inside])
    assert not np.isin(to_host(w)[~inside], first).any()


def test_trunc_normal_warnings_and_errors() -> None:
    with pytest.warns(UserWarning, match="mean is more than 2 std from \\[a, b\\]"):
        init.trunc_normal_(param(5), mean=10.0, std=1.0, a=-1.0, b=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        init.trunc_normal_(param(5))
    with pytest.raises(ValueError, match="a <= b"):
        init.trunc_normal_(param(5), a=1.0, b=-1.0)


# ---------------------------------------------------------------- orthogonal_
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (3, 2, 2), (2, 3, 4), (1, 6)])
@pytest.mark.parametrize("gain", [1.0, 2.0])
def test_orthogonal_is_orthogonal(shape: tuple[int, ...], gain: float) -> None:
    for dtype, tol in ((mta.float64, 1e-12), (mta.float32, 1e-6)):
        w = param(*shape, dtype=dtype)
        assert init.orthogonal_(w, gain, generator=gen(6)) is w
        matrix = to_host(w).astype(np.float64).reshape(shape[0], -1) / gain
        rows, cols = matrix.shape
        gram = matrix.T @ matrix if rows >= cols else matrix @ matrix.T
        np.testing.assert_allclose(gram, np.eye(min(rows, cols)), rtol=0, atol=tol)


def test_orthogonal_matches_a_numpy_reference() -> None:
    """The same draws, the same QR, the signs of R's diagonal folded into Q."""
    for shape in [(6, 4), (4, 6)]:
        w = init.orthogonal_(param(*shape, dtype=mta.float64), 1.5, generator=gen(9))
        draws = gen(9).standard_normal(shape)
        tall = draws if shape[0] >= shape[1] else draws.T
        q, r = np.linalg.qr(tall)
        q = q * np.sign(np.diag(r))
        ref = 1.5 * (q if shape[0] >= shape[1] else q.T)
        np.testing.assert_allclose(to_host(w), ref, rtol=0, atol=1e-12)


def test_orthogonal_errors_and_empty() -> None:
    with pytest.raises(ValueError, match="Only tensors with 2 or more dimensions"):
        init.orthogonal_(param(4))
    empty = mta.zeros(0, 3)
    assert init.orthogonal_(empty) is empty


# ---------------------------------------------------------------- eye_, dirac_
@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (4, 4), (1, 1)])
def test_eye_equals_torch(shape: tuple[int, ...]) -> None:
    w = init.normal_(param(*shape))
    assert init.eye_(w) is w and w.requires_grad
    np.testing.assert_array_equal(to_host(w), torch.nn.init.eye_(torch.empty(shape)).numpy())
    np.testing.assert_array_equal(to_host(w), np.eye(shape[0], shape[1]))


@pytest.mark.parametrize(
    "shape, groups",
    [((4, 2, 3), 1), ((6, 4, 3, 3), 1), ((6, 4, 3, 3), 2), ((4, 4, 3, 2, 3), 2), ((2, 5, 4), 1)],
)
def test_dirac_equals_torch(shape: tuple[int, ...], groups: int) -> None:
    w = init.normal_(param(*shape))
    assert init.dirac_(w, groups) is w
    ref = torch.nn.init.dirac_(torch.empty(shape), groups)
    np.testing.assert_array_equal(to_host(w), ref.numpy())


def test_dirac_convolution_copies_its_input() -> None:
    x = mta.tensor(np.random.default_rng(10).standard_normal((2, 3, 5, 6)))
    weight = init.dirac_(mta.zeros(3, 3, 3, 3, dtype=mta.float64))
    out = nn.functional.conv2d(x, weight, padding=1)
    np.testing.assert_array_equal(to_host(out), to_host(x))


def test_eye_and_dirac_errors() -> None:
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        init.eye_(param(2, 2, 2))
    with pytest.raises(ValueError, match="Only tensors with 3, 4, or 5 dimensions"):
        init.dirac_(param(2, 2))
    with pytest.raises(ValueError, match="dim 0 must be divisible by groups"):
        init.dirac_(param(5, 2, 3), groups=2)


# ---------------------------------------------------------------- sparse_
@pytest.mark.parametrize("sparsity", [0.0, 0.1, 0.5, 0.9, 1.0])
def test_sparse_zeroes_exactly_that_many_per_column(sparsity: float) -> None:
    rows, cols = 10, 7
    w = param(rows, cols, dtype=mta.float64)
    assert init.sparse_(w, sparsity, std=0.5, generator=gen(11)) is w
    values = to_host(w)
    zeros_per_column = (values == 0).sum(axis=0)
    np.testing.assert_array_equal(zeros_per_column, [math.ceil(sparsity * rows)] * cols)
    draws = gen(11).normal(0.0, 0.5, size=(rows, cols))  # the values that stay are these
    kept = values != 0
    np.testing.assert_array_equal(values[kept], draws[kept])


def test_sparse_errors() -> None:
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        init.sparse_(param(3), 0.5)
