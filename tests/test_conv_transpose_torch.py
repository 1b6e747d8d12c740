"""Transposed convolutions: ``nn.functional.conv_transpose2d`` / ``conv_transpose1d``
and ``nn.ConvTranspose2d`` / ``nn.ConvTranspose1d``.

Values and the gradients of input, weight and bias against a NumPy reference written
here (each input pixel scatters the kernel into the output, then the padding is
cropped; the gradients are that scatter's adjoint, a gather) and against PyTorch where
it is installed; float64 finite differences of first and second order; the CPU's fast
path against the reference tier; initialization, ``state_dict``, ``repr``,
``output_size=`` and the error messages.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import minitorch_accel as mta
from minitorch_accel import nn
from minitorch_accel.core.tensor import Tensor
from minitorch_accel.nn import functional as F
from minitorch_accel.utils.gradcheck import gradcheck, gradgradcheck

NONFINITE = [-np.inf, -2.0, -0.0, 0.0, 0.5, 2.0, np.inf, np.nan]


@pytest.fixture
def torch() -> Any:
    """PyTorch, the oracle (the tests that need it skip where it is absent)."""
    return pytest.importorskip("torch")


@dataclass(frozen=True)
class Case:
    """One transposed convolution: shapes (x batched) and settings, as PyTorch's."""

    id: str
    x_shape: tuple[int, ...]
    w_shape: tuple[int, ...]
    stride: Any = 1
    padding: Any = 0
    output_padding: Any = 0
    groups: int = 1
    dilation: Any = 1

    @property
    def dims(self) -> int:
        return len(self.x_shape) - 2

    @property
    def settings(self) -> dict[str, Any]:
        return {
            "stride": self.stride,
            "padding": self.padding,
            "output_padding": self.output_padding,
            "groups": self.groups,
            "dilation": self.dilation,
        }

    def arrays(self, seed: int = 0) -> list[np.ndarray]:
        """x, weight and bias in float64."""
        rng = np.random.default_rng(seed)
        out_channels = self.w_shape[1] * self.groups
        return [
            rng.standard_normal(self.x_shape),
            rng.standard_normal(self.w_shape),
            rng.standard_normal(out_channels),
        ]


CASES_2D = [
    Case("plain", (2, 3, 4, 5), (3, 2, 3, 3)),
    Case("stride2", (2, 3, 4, 4), (3, 4, 3, 3), stride=2),
    Case("stride3_pad", (1, 2, 5, 3), (2, 3, 4, 2), stride=3, padding=1),
    Case("outpad", (2, 2, 4, 5), (2, 3, 3, 3), stride=2, padding=1, output_padding=1),
    Case("outpad_larger_than_pad", (2, 2, 3, 4), (2, 2, 3, 2), stride=3, output_padding=2),
    Case("mixed", (2, 4, 5, 6), (4, 3, 3, 2), (2, 3), (1, 0), (1, 2), 2, (1, 2)),
    Case("groups4", (2, 4, 3, 5), (4, 1, 3, 3), stride=2, padding=1, groups=4),
    Case("depthwise_dilated", (1, 4, 4, 4), (4, 2, 2, 3), stride=2, groups=4, dilation=2),
    # output_padding >= stride: allowed because it is below the dilation
    Case("outpad_below_dilation", (2, 2, 4, 3), (2, 3, 3, 2), 1, (2, 1), 1, 1, (2, 3)),
    Case("outpad_below_dilation_big", (1, 2, 3, 4), (2, 2, 2, 3), (2, 1), 0, (2, 1), 2, 3),
    Case("odd_sizes", (3, 3, 7, 1), (3, 1, 5, 1), stride=(2, 1), padding=(2, 0)),
    Case("pad_crops_all_but_1", (1, 1, 3, 3), (1, 1, 3, 3), stride=1, padding=2),
]
CASES_1D = [
    Case("plain", (2, 3, 6), (3, 2, 3)),
    Case("stride2_outpad", (2, 2, 5), (2, 3, 4), stride=2, padding=1, output_padding=1),
    Case("groups", (1, 4, 7), (4, 2, 3), stride=3, padding=2, groups=2, dilation=2),
    Case("outpad_below_dilation", (2, 2, 4), (2, 1, 3), stride=1, output_padding=2, dilation=3),
    Case("tuples", (2, 2, 3), (2, 2, 2), (2,), (1,), (1,), 1, (1,)),
]
CASES = CASES_2D + CASES_1D
IDS = [f"{c.dims}d_{c.id}" for c in CASES]


def functional(case: Case) -> Callable[..., Tensor]:
    return F.conv_transpose2d if case.dims == 2 else F.conv_transpose1d


def host(t: Tensor) -> np.ndarray:
    return np.asarray(t.detach().to("cpu"))


# ------------------------------------------------------------------ the NumPy reference
def _as_tuple(value: Any, dims: int) -> tuple[int, ...]:
    return (value,) * dims if isinstance(value, int) else tuple(value)


def _geometry(case: Case, x_shape: tuple[int, ...]) -> tuple[Any, ...]:
    """Per spatial dim: stride, padding, output_padding, dilation, and the uncropped
    size (every kernel copy, plus output_padding rows for the extension)."""
    dims = case.dims
    s, p, op, d = (
        _as_tuple(v, dims) for v in (case.stride, case.padding, case.output_padding, case.dilation)
    )
    k = case.w_shape[2:]
    full = [
        (n - 1) * si + di * (ki - 1) + 1 + oi
        for n, si, di, ki, oi in zip(x_shape[2:], s, d, k, op, strict=True)
    ]
    out = [f - 2 * pi for f, pi in zip(full, p, strict=True)]
    return s, p, d, full, out


def _footprint(case: Case, index: tuple[int, ...], s: Any, d: Any) -> tuple[slice, ...]:
    """The uncropped output positions that input pixel ``index`` writes its kernel to."""
    k = case.w_shape[2:]
    return tuple(
        slice(i * si, i * si + di * (ki - 1) + 1, di)
        for i, si, di, ki in zip(index, s, d, k, strict=True)
    )


def out_shape(case: Case, x_shape: tuple[int, ...]) -> tuple[int, ...]:
    """(N, C_out, *spatial) of the output for a batched ``x_shape``."""
    return (x_shape[0], case.w_shape[1] * case.groups, *_geometry(case, x_shape)[4])


def _crop(padding: Any, out: Any) -> tuple[Any, ...]:
    """The index that keeps ``out`` positions after ``padding`` in each spatial dim."""
    return (Ellipsis, *(slice(p, p + o) for p, o in zip(padding, out, strict=True)))


def reference_forward(case: Case, x: np.ndarray, w: np.ndarray, b: np.ndarray | None) -> np.ndarray:
    """Scatter ``x[n, c, i, j] * w[c]`` into the output at (i*stride, j*stride), with
    the dilated kernel; then crop ``padding`` from the start of each dim and keep
    ``out`` positions (the ``output_padding`` tail is zeros where no copy reached)."""
    s, p, d, full, out = _geometry(case, x.shape)
    c_in, o_per_group = w.shape[:2]
    y = np.zeros((len(x), o_per_group * case.groups, *full))
    for c in range(c_in):
        g = c // (c_in // case.groups)
        channels = slice(g * o_per_group, (g + 1) * o_per_group)
        for index in itertools.product(*(range(n) for n in x.shape[2:])):
            at: tuple[Any, ...] = (slice(None), c, *index)
            into: tuple[Any, ...] = (slice(None), channels, *_footprint(case, index, s, d))
            y[into] += x[at].reshape(-1, *(1,) * (case.dims + 1)) * w[c]
    y = y[_crop(p, out)]
    return y if b is None else y + b.reshape(-1, *(1,) * case.dims)


def reference_grads(
    case: Case, x: np.ndarray, w: np.ndarray, gy: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The adjoint of :func:`reference_forward`: put ``gy`` back in the uncropped
    frame, then each input pixel gathers what its kernel copy touched."""
    s, p, d, full, out = _geometry(case, x.shape)
    c_in, o_per_group = w.shape[:2]
    frame = np.zeros((len(x), gy.shape[1], *full))
    frame[_crop(p, out)] = gy
    gx, gw = np.zeros_like(x), np.zeros_like(w)
    for c in range(c_in):
        g = c // (c_in // case.groups)
        channels = slice(g * o_per_group, (g + 1) * o_per_group)
        for index in itertools.product(*(range(n) for n in x.shape[2:])):
            at: tuple[Any, ...] = (slice(None), c, *index)
            into: tuple[Any, ...] = (slice(None), channels, *_footprint(case, index, s, d))
            seen = frame[into]
            gx[at] = (seen * w[c]).reshape(len(x), -1).sum(1)
            gw[c] += (seen * x[at].reshape(-1, *(1,) * (case.dims + 1))).sum(0)
    return gx, gw, gy.sum(axis=(0, *range(2, gy.ndim)))


def test_reference_is_the_adjoint_of_a_convolution() -> None:
    """The reference's own check: <conv_transpose(x, w), y> == <x, conv(y, w)> (the
    transposed convolution is a convolution's adjoint), with an independent conv."""
    case = CASES_2D[5]  # stride, padding, output_padding, groups, dilation
    x, w, _ = case.arrays()
    y = reference_forward(case, x, w, None)
    r = np.random.default_rng(5).standard_normal(y.shape)
    (sh, sw), (ph, pw), (dh, dw) = (2, 3), (1, 0), (1, 2)
    rp = np.pad(r, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    conv = np.zeros_like(x)
    per = w.shape[0] // case.groups
    for n, c, i, j in itertools.product(*(range(k) for k in x.shape)):
        g = c // per
        patch = rp[n, g * w.shape[1] : (g + 1) * w.shape[1], i * sh :: dh, j * sw :: dw]
        conv[n, c, i, j] = (patch[:, : w.shape[2], : w.shape[3]] * w[c]).sum()
    np.testing.assert_allclose((y * r).sum(), (x * conv).sum(), rtol=1e-12)


# ------------------------------------------------------------------ values and gradients
@pytest.mark.parametrize("fast", [True, False], ids=["fast", "reference"])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_matches_numpy_reference(case: Case, fast: bool, device: str) -> None:
    x, w, b = case.arrays()
    gy = np.random.default_rng(1).standard_normal(out_shape(case, x.shape))
    with mta.fast_paths(fast):
        tensors = [mta.tensor(a, device=device, requires_grad=True) for a in (x, w, b)]
        y = functional(case)(*tensors, **case.settings)
        y.backward(mta.tensor(gy, device=device))
    expected = [reference_forward(case, x, w, b), *reference_grads(case, x, w, gy)]
    for found, want in zip([y, *(t.grad for t in tensors)], expected, strict=True):
        assert found.shape == want.shape and found.dtype == np.float64
        np.testing.assert_allclose(host(found), want, rtol=1e-12, atol=1e-12)


def test_without_bias_and_unbatched_match_reference() -> None:
    for case in (CASES_2D[3], CASES_1D[2]):
        x, w, _ = case.arrays()
        y = functional(case)(mta.tensor(x[0]), mta.tensor(w), None, **case.settings)
        np.testing.assert_allclose(host(y), reference_forward(case, x[:1], w, None)[0], rtol=1e-12)


def torch_grads(
    torch: Any, case: Case, arrays: list[np.ndarray | None], gy: np.ndarray
) -> list[np.ndarray]:
    """PyTorch's output and gradients of every array given."""
    tensors = [None if a is None else torch.tensor(a, requires_grad=True) for a in arrays]
    fn = (
        torch.nn.functional.conv_transpose2d
        if case.dims == 2
        else torch.nn.functional.conv_transpose1d
    )
    y = fn(*tensors, **case.settings)
    y.backward(torch.tensor(gy))
    return [y.detach().numpy()] + [t.grad.numpy() for t in tensors if t is not None]


def ours_grads(case: Case, arrays: list[np.ndarray | None], gy: np.ndarray) -> list[np.ndarray]:
    tensors = [None if a is None else mta.tensor(a, requires_grad=True) for a in arrays]
    y = functional(case)(*tensors, **case.settings)
    y.backward(mta.tensor(gy))
    return [host(y)] + [host(t.grad) for t in tensors if t is not None]


@pytest.mark.parametrize("fast", [True, False], ids=["fast", "reference"])
@pytest.mark.parametrize("batched", [True, False], ids=["batched", "unbatched"])
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no_bias"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_values_and_gradients_match_torch(
    torch: Any, case: Case, dtype: str, bias: bool, batched: bool, fast: bool
) -> None:
    x, w, b = (a.astype(dtype) for a in case.arrays())
    x = x if batched else x[0]
    arrays = [x, w, b if bias else None]
    shape = out_shape(case, x.shape if batched else (1, *x.shape))
    gy = np.random.default_rng(2).standard_normal(shape if batched else shape[1:]).astype(dtype)
    with mta.fast_paths(fast):
        ours = ours_grads(case, arrays, gy)
    theirs = torch_grads(torch, case, arrays, gy)
    rtol = 1e-12 if dtype == "float64" else 2e-6
    for a, t in zip(ours, theirs, strict=True):
        assert a.shape == t.shape and a.dtype == t.dtype == np.dtype(dtype)
        np.testing.assert_allclose(a, t, rtol=0, atol=rtol * max(1.0, float(np.abs(t).max())))


@pytest.mark.parametrize("case", [CASES_2D[5], CASES_2D[8], CASES_1D[1]], ids=lambda c: c.id)
def test_second_derivatives_match_torch(torch: Any, case: Case) -> None:
    """Gradients with create_graph, then the gradient of their squared norm."""
    arrays = case.arrays()
    ours = [mta.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    fn = (
        torch.nn.functional.conv_transpose2d
        if case.dims == 2
        else torch.nn.functional.conv_transpose1d
    )
    y_ours, y_theirs = functional(case)(*ours, **case.settings), fn(*theirs, **case.settings)
    r = np.random.default_rng(3).standard_normal(y_theirs.shape)
    g_ours = mta.autograd.grad((y_ours.tanh() * mta.tensor(r)).sum(), ours, create_graph=True)
    g_theirs = torch.autograd.grad(
        (y_theirs.tanh() * torch.tensor(r)).sum(), theirs, create_graph=True
    )
    second_ours = mta.autograd.grad(sum(((g * g).sum() for g in g_ours), mta.tensor(0.0)), ours)
    second_theirs = torch.autograd.grad(sum((g * g).sum() for g in g_theirs), theirs)
    for a, t in zip([*g_ours, *second_ours], [*g_theirs, *second_theirs], strict=True):
        np.testing.assert_allclose(host(a), t.detach().numpy(), rtol=1e-10, atol=1e-10)


GRADCHECK_CASES = [CASES_2D[3], CASES_2D[5], CASES_2D[8], CASES_1D[2], CASES_1D[3]]


@pytest.mark.parametrize("fast", [True, False], ids=["fast", "reference"])
@pytest.mark.parametrize("case", GRADCHECK_CASES, ids=lambda c: f"{c.dims}d_{c.id}")
def test_gradcheck_and_gradgradcheck(case: Case, fast: bool) -> None:
    inputs = [mta.tensor(a, requires_grad=True) for a in case.arrays()]

    def fn(x: Tensor, w: Tensor, b: Tensor) -> Tensor:
        return functional(case)(x, w, b, **case.settings)

    with mta.fast_paths(fast):
        assert gradcheck(fn, inputs, atol=1e-6, rtol=1e-5)
        assert gradgradcheck(fn, inputs, atol=1e-6, rtol=1e-5)
        # unbatched too, through the module-level reshapes
        assert gradcheck(lambda x, w: functional(case)(x[0], w, None, **case.settings), inputs[:2])


def test_non_finite_values_and_gradients_match_torch(torch: Any) -> None:
    """Inputs, weights and biases from -inf, -2, -0.0, 0, 0.5, 2, inf and NaN; incoming
    gradients of 1 and inf: NaN, +inf and -inf where PyTorch has them.

    The input gradient is a convolution with zero padding, and a padded zero times an
    infinite or NaN weight is NaN here, as in PyTorch's im2col kernels (its float64
    ones, and float32 with oneDNN off); PyTorch's float32 oneDNN kernels skip the
    padded taps instead, so oneDNN is turned off for the comparison.
    """
    rng = np.random.default_rng(0)
    for dtype, case, incoming, fast in itertools.product(
        ("float32", "float64"),
        (CASES_2D[3], CASES_2D[5], CASES_2D[8], CASES_1D[1]),
        (1.0, math.inf),
        (True, False),
    ):
        arrays = [rng.choice(NONFINITE, a.shape).astype(dtype) for a in case.arrays()]
        gy = np.full(out_shape(case, arrays[0].shape), incoming, dtype=dtype)
        with mta.fast_paths(fast), np.errstate(invalid="ignore"):
            ours = ours_grads(case, arrays, gy)
        with torch.backends.mkldnn.flags(enabled=False):
            theirs = torch_grads(torch, case, arrays, gy)
        for what, a, t in zip(("y", "grad x", "grad w", "grad b"), ours, theirs, strict=True):
            where = f"{case.id} {dtype} incoming {incoming} fast={fast}: {what}"
            for test in (np.isnan, np.isposinf, np.isneginf):
                np.testing.assert_array_equal(test(a), test(t), err_msg=f"{where} {test.__name__}")
            finite = np.isfinite(t)
            np.testing.assert_allclose(a[finite], t[finite], rtol=1e-5, atol=1e-5, err_msg=where)


def test_float32_stays_float32_and_default_arguments() -> None:
    x, w = mta.randn(2, 3, 4, 4), mta.randn(3, 5, 2, 2)
    y = F.conv_transpose2d(x, w)
    assert y.shape == (2, 5, 5, 5) and y.dtype == np.float32
    assert F.conv_transpose1d(mta.randn(3, 4), mta.randn(3, 2, 3)).shape == (2, 6)


# ------------------------------------------------------------------ the two tiers
@pytest.fixture
def fast_forward_calls() -> Iterator[dict[str, int]]:
    """How often each CPU fast forward ran while the test held this dict."""
    backend = mta.Device("cpu").backend
    table = dict(backend.fast_forwards)
    calls: dict[str, int] = {}

    def counted(name: str, fast: Callable[..., Any]) -> Callable[..., Any]:
        def run(*args: Any, **kwargs: Any) -> Any:
            calls[name] = calls.get(name, 0) + 1
            return fast(*args, **kwargs)

        return run

    backend.fast_forwards.update({k: counted(k, v) for k, v in table.items()})
    try:
        yield calls
    finally:
        backend.fast_forwards.update(table)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_fast_path_and_reference_tier_agree(case: Case, fast_forward_calls: dict[str, int]) -> None:
    """The CPU's fast Conv2dGradInput (and, in the backward, Conv2d and
    Conv2dGradWeight) against the reference code, values and gradients of order 1 and 2:
    the same products summed in another order, so equal to 1e-10 of the largest value.
    """
    arrays = case.arrays()
    found = []
    for fast in (True, False):
        fast_forward_calls.clear()
        with mta.fast_paths(fast):
            inputs = [mta.tensor(a, requires_grad=True) for a in arrays]
            y = functional(case)(*inputs, **case.settings)
            r = mta.tensor(np.random.default_rng(4).standard_normal(y.shape))
            grads = mta.autograd.grad((y.tanh() * r).sum(), inputs, create_graph=True)
            second = mta.autograd.grad(sum(((g * g).sum() for g in grads), mta.tensor(0.0)), inputs)
        found.append([host(t) for t in (y, *grads, *second)])
        if fast:
            assert {"Conv2dGradInput", "Conv2d", "Conv2dGradWeight"} <= set(fast_forward_calls)
        else:
            assert fast_forward_calls == {}
    for a, b in zip(*found, strict=True):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-10 * max(1.0, float(np.abs(b).max())))


# ------------------------------------------------------------------ the modules
MODULE_SETTINGS: list[tuple[type[nn.Module], tuple[Any, ...], dict[str, Any]]] = [
    (nn.ConvTranspose2d, (4, 6, 3), {}),
    (nn.ConvTranspose2d, (4, 6, (3, 2)), {"stride": 2, "padding": 1, "output_padding": 1}),
    (
        nn.ConvTranspose2d,
        (4, 6, 3),
        {"stride": (2, 1), "padding": (1, 0), "dilation": 2, "groups": 2, "bias": False},
    ),
    (nn.ConvTranspose2d, (2, 8, 2), {"output_padding": (0, 1), "stride": (1, 2), "groups": 2}),
    (nn.ConvTranspose1d, (4, 6, 3), {}),
    (
        nn.ConvTranspose1d,
        (4, 6, 5),
        {"stride": 3, "padding": 2, "output_padding": 2, "dilation": 2, "groups": 2},
    ),
    (nn.ConvTranspose1d, (3, 2, (4,)), {"stride": (2,), "bias": False}),
]
MODULE_IDS = [f"{cls.__name__}-{i}" for i, (cls, _, _) in enumerate(MODULE_SETTINGS)]


@pytest.mark.parametrize("cls, args, kwargs", MODULE_SETTINGS, ids=MODULE_IDS)
def test_module_matches_torch(torch: Any, cls: type[nn.Module], args: Any, kwargs: Any) -> None:
    """repr, parameter shapes, state_dict keys, and forward and backward with the
    same weights."""
    ours = cls(*args, **kwargs).double()
    theirs = getattr(torch.nn, cls.__name__)(*args, **kwargs).double()
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for name, p in theirs.named_parameters():
        assert getattr(ours, name).shape == tuple(p.shape)
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    spatial = (5, 4) if cls is nn.ConvTranspose2d else (7,)
    x = np.random.default_rng(0).standard_normal((2, args[0], *spatial))
    for sample in (x, x[0]):  # batched and unbatched
        ours.zero_grad()
        theirs.zero_grad()
        y_ours, y_theirs = ours(mta.tensor(sample)), theirs(torch.tensor(sample))
        np.testing.assert_allclose(host(y_ours), y_theirs.detach().numpy(), rtol=1e-12, atol=1e-12)
        (y_ours**2).sum().backward()
        (y_theirs**2).sum().backward()
        for name, p in theirs.named_parameters():
            np.testing.assert_allclose(host(getattr(ours, name).grad), p.grad.numpy(), rtol=1e-10)


@pytest.mark.parametrize("groups", [1, 2, 4])
def test_module_initialization_bounds(groups: int) -> None:
    """kaiming_uniform(a=sqrt(5)) on the weight and U(-k, k) on the bias, with
    ``k = 1 / sqrt(fan_in)`` and fan_in from the weight's dim 1 (out_channels // groups)
    times the kernel: every value within k, the extremes near it (thousands of draws),
    mean and spread of a uniform. With fan_in from in_channels the bound would be 4
    times larger."""
    mta.manual_seed(0)
    layer = nn.ConvTranspose2d(4, 64, (3, 5), groups=groups)
    k = 1 / math.sqrt(64 // groups * 15)
    assert tuple(layer.weight.shape) == (4, 64 // groups, 3, 5)
    w, b = host(layer.weight), host(layer.bias)
    for values, count in ((w, w.size), (b, 64)):
        assert np.abs(values).max() <= k
        assert np.abs(values).max() >= k * (1 - 10 / count)  # the largest of n draws
    assert abs(w.mean()) < 0.1 * k and abs(w.std() - k / math.sqrt(3)) < 0.1 * k
    layer_1d = nn.ConvTranspose1d(3, 40, 4)
    k_1d = 1 / math.sqrt(40 * 4)
    assert np.abs(host(layer_1d.weight)).max() <= k_1d < 1.2 * np.abs(host(layer_1d.weight)).max()


def test_module_reset_parameters_dtype_and_seed() -> None:
    mta.manual_seed(3)
    a = nn.ConvTranspose2d(2, 3, 3, dtype=mta.float64)
    mta.manual_seed(3)
    b = nn.ConvTranspose2d(2, 3, 3, dtype=mta.float64)
    assert a.weight.dtype == np.float64 and a.bias.dtype == np.float64
    np.testing.assert_array_equal(host(a.weight), host(b.weight))
    before = host(a.weight).copy()
    a.reset_parameters()
    assert not np.array_equal(before, host(a.weight))
    assert a.padding_mode == "zeros" and a.output_padding == (0, 0)


@pytest.mark.parametrize(
    "cls, spatial, output_size",
    [
        (nn.ConvTranspose2d, (5, 4), (13, 10)),  # sizes 13 to 15 by 10 to 12
        (nn.ConvTranspose2d, (5, 4), [14, 12]),
        (nn.ConvTranspose2d, (5, 4), (2, 6, 15, 11)),  # with N and C
        (nn.ConvTranspose1d, (7,), (19,)),  # sizes 19 to 21
        (nn.ConvTranspose1d, (7,), [2, 6, 21]),
    ],
)
def test_output_size_matches_torch(
    torch: Any, cls: Any, spatial: tuple[int, ...], output_size: Any
) -> None:
    """``forward(x, output_size=...)`` picks PyTorch's output_padding, for batched and
    unbatched input (whose output_size may lead with C only)."""
    ours = cls(4, 6, 3, stride=3, padding=1, dilation=1).double()
    theirs = getattr(torch.nn, cls.__name__)(4, 6, 3, stride=3, padding=1).double()
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((2, 4, *spatial))
    y_ours = ours(mta.tensor(x), output_size=output_size)
    y_theirs = theirs(torch.tensor(x), output_size=list(output_size))
    assert y_ours.shape[2:] == tuple(output_size[-len(spatial) :])
    np.testing.assert_allclose(host(y_ours), y_theirs.detach().numpy(), rtol=1e-12, atol=1e-12)
    unbatched = output_size if len(output_size) == len(spatial) else output_size[1:]
    y_one = ours(mta.tensor(x[0]), output_size=unbatched)
    np.testing.assert_allclose(host(y_one), host(y_ours)[0], rtol=1e-12, atol=1e-12)


def test_output_size_errors() -> None:
    layer = nn.ConvTranspose2d(2, 3, 3, stride=2)
    x = mta.zeros(1, 2, 4, 4)  # output sizes 9 to 10
    assert layer(x, output_size=(10, 9)).shape == (1, 3, 10, 9)
    with pytest.raises(
        ValueError,
        match=r"requested an output size of \[11, 9\], but valid "
        r"sizes range from \[9, 9\] to \[10, 10\]",
    ):
        layer(x, output_size=(11, 9))
    with pytest.raises(ValueError, match=r"valid sizes range from \[9, 9\]"):
        layer(x, output_size=(8, 9))
    with pytest.raises(
        ValueError,
        match=r"for 4-D input, output_size must have 2 or 4 "
        r"elements \(got 3\)",
    ):
        layer(x, output_size=(3, 10, 9))
    with pytest.raises(ValueError, match=r"for 3-D input, output_size must have 2 or 3"):
        layer(x[0], output_size=(1, 3, 10, 9))


# ------------------------------------------------------------------ errors
def test_functional_errors_name_what_is_wrong() -> None:
    x, w = mta.zeros(1, 2, 3, 3), mta.zeros(2, 3, 3, 3)
    ct2, ct1 = F.conv_transpose2d, F.conv_transpose1d
    bad: list[tuple[Callable[[], Any], type[Exception], str]] = [
        (
            lambda: ct2(mta.zeros(3, 3), w),
            ValueError,
            r"expected a 3-D \(unbatched\) input \(C_in, H, W\) or a 4-D \(batched\) input "
            r"\(N, C_in, H, W\), got shape \(3, 3\)",
        ),
        (lambda: ct2(mta.zeros(1, 1, 2, 3, 3), w), ValueError, r"got shape \(1, 1, 2, 3, 3\)"),
        (
            lambda: ct1(mta.zeros(1, 2, 3, 3), mta.zeros(2, 1, 3)),
            ValueError,
            r"conv_transpose1d: expected a 2-D .* \(C_in, L\) or a 3-D .* \(N, C_in, L\)",
        ),
        (
            lambda: ct2(x, mta.zeros(2, 3, 3)),
            ValueError,
            r"weight must be 4-D \(C_in, C_out // groups, KH, KW\), got shape \(2, 3, 3\)",
        ),
        (
            lambda: ct2(mta.zeros(1, 3, 3, 3), w),
            ValueError,
            r"input \(1, 3, 3, 3\) has 3 channels, but weight \(2, 3, 3, 3\) expects "
            r"in_channels = 2",
        ),
        (lambda: ct2(mta.zeros(3, 3, 3), w), ValueError, r"has 3 channels"),
        (
            lambda: ct2(x, w, groups=3),
            ValueError,
            r"groups=3 must be a positive int dividing in_channels",
        ),
        (lambda: ct2(x, w, groups=0), ValueError, r"groups=0"),
        (
            lambda: ct2(x, w, output_padding=1),
            ValueError,
            r"output padding must be smaller than either stride or dilation.*"
            r"output_padding \(1, 1\), stride \(1, 1\), dilation \(1, 1\)",
        ),
        (
            lambda: ct2(x, w, stride=2, output_padding=(1, 2)),
            ValueError,
            r"output padding must be smaller",
        ),
        (
            lambda: ct1(mta.zeros(1, 2, 3), mta.zeros(2, 1, 3), stride=2, output_padding=2),
            ValueError,
            r"conv_transpose1d: output padding must be smaller",
        ),
        (
            lambda: ct2(x, w, padding=3),
            ValueError,
            r"gives output size \(-1, -1\): it must be positive \(use a smaller padding\)",
        ),
        (
            lambda: ct2(x, w, stride=0),
            ValueError,
            r"stride \(0, 0\) and dilation \(1, 1\) "
            r"must be positive",
        ),
        (lambda: ct2(x, w, dilation=(1, 0)), ValueError, r"must be positive"),
        (
            lambda: ct2(x, w, padding=-1),
            ValueError,
            r"padding \(-1, -1\) and output_padding "
            r"\(0, 0\) must not be negative",
        ),
        (
            lambda: ct2(x, w, stride=(1, 2, 3)),
            ValueError,
            r"stride must be an int or a tuple of 2 ints, got \(1, 2, 3\)",
        ),
        (
            lambda: ct1(mta.zeros(1, 2, 3), mta.zeros(2, 1, 3), padding=(1, 1)),
            ValueError,
            r"padding must be an int or a tuple of 1 ints",
        ),
        (
            lambda: ct2(x, w, mta.zeros(2)),
            ValueError,
            r"bias \(2,\) must have shape \(3,\): out_channels = weight.shape\[1\] \* groups",
        ),
        (lambda: ct2(x, w.double()), TypeError, r"dtypes differ: input float32, weight float64"),
        (lambda: ct2(x.numpy(), w), TypeError, r"input must be a Tensor, got ndarray"),
    ]
    for call, error, message in bad:
        with pytest.raises(error, match=message):
            call()


def test_module_errors_name_what_is_wrong() -> None:
    with pytest.raises(
        ValueError,
        match=r'ConvTranspose2d: only "zeros" padding mode is '
        r"supported, got padding_mode='reflect'",
    ):
        nn.ConvTranspose2d(4, 6, 3, padding_mode="reflect")
    with pytest.raises(ValueError, match=r"ConvTranspose1d: only \"zeros\""):
        nn.ConvTranspose1d(4, 6, 3, padding_mode="circular")
    with pytest.raises(ValueError, match=r"in_channels \(4\) must be divisible by groups \(3\)"):
        nn.ConvTranspose2d(4, 6, 3, groups=3)
    with pytest.raises(ValueError, match=r"out_channels \(6\) must be divisible by groups \(4\)"):
        nn.ConvTranspose2d(4, 6, 3, groups=4)
    with pytest.raises(ValueError, match=r"groups must be a positive integer, got 0"):
        nn.ConvTranspose1d(4, 6, 3, groups=0)
    with pytest.raises(ValueError, match=r"every kernel size must be >= 1"):
        nn.ConvTranspose2d(4, 6, (3, 0))
    with pytest.raises(ValueError, match=r"kernel_size must be an int or a tuple of 2 ints"):
        nn.ConvTranspose2d(4, 6, (3, 3, 3))
    layer = nn.ConvTranspose2d(4, 6, 3)
    with pytest.raises(
        ValueError,
        match=r"ConvTranspose2d\(4, 6\) expects input of shape "
        r"\(N, 4, H, W\) or \(4, H, W\), got \(2, 5, 4, 4\)",
    ):
        layer(mta.zeros(2, 5, 4, 4))
    with pytest.raises(ValueError, match=r"got \(4, 4\)"):
        layer(mta.zeros(4, 4))
    with pytest.raises(
        ValueError,
        match=r"ConvTranspose1d\(4, 6\) expects input of shape "
        r"\(N, 4, L\) or \(4, L\)",
    ):
        nn.ConvTranspose1d(4, 6, 3)(mta.zeros(2, 4, 4, 4))
    # PyTorch builds the layer and refuses at the call, as here
    too_much = nn.ConvTranspose2d(4, 6, 3, output_padding=1)
    with pytest.raises(ValueError, match=r"output padding must be smaller"):
        too_much(mta.zeros(1, 4, 3, 3))
