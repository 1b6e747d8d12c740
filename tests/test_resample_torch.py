"""Resizing and rearranging images: ``interpolate`` (and ``Upsample``), ``pixel_shuffle``,
``unfold``/``fold`` and ``adaptive_max_pool2d``, against PyTorch and NumPy.

``interpolate`` is checked against a NumPy reference written here with explicit loops
over the output pixels, against float64 finite differences (first and second
derivatives), and against PyTorch (skipped where it is absent): every mode, both
``align_corners``, size and scale factor (integer and fractional, up and down), odd
sizes, float32 and float64, 3-D, 4-D and 5-D, then the special values (infinities, NaN,
signed zeros) with incoming gradients of 1 and of inf, where NaN and inf must come out
where PyTorch's do. The places where we knowingly differ from PyTorch (documented in
``ops/resample.py``) have their own tests.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from support.helpers import to_host

import minitorch_accel as mta
import minitorch_accel.nn.functional as F
from minitorch_accel import nn
from minitorch_accel.core.tensor import Tensor
from minitorch_accel.utils.gradcheck import gradcheck, gradgradcheck

SPECIAL = np.array([-np.inf, -2.0, -0.0, 0.0, 0.5, 2.0, np.inf, np.nan])
MODE_OF_DIMS = {1: "linear", 2: "bilinear", 3: "trilinear"}
CUBIC_A = -0.75


@pytest.fixture(scope="module")
def torch() -> Any:
    """PyTorch, the oracle (the tests that need it skip where it is absent)."""
    return pytest.importorskip("torch")


# ------------------------------------------------------------------ NumPy reference
def reference_taps(
    mode: str, n_in: int, n_out: int, align_corners: bool, factor: float | None
) -> list[list[tuple[int, float]]]:
    """For each output position along one dim, its (input position, weight) pairs,
    computed one position at a time from the formulas PyTorch documents.
    """
    taps = []
    for i in range(n_out):
        if mode in ("nearest", "nearest-exact"):
            exact = mode == "nearest-exact"
            if not exact and n_out == n_in:
                taps.append([(i, 1.0)])
                continue
            if not exact and n_out == 2 * n_in:
                taps.append([(i // 2, 1.0)])
                continue
            scale = np.float32(1.0 / factor) if factor else np.float32(n_in) / np.float32(n_out)
            where = np.float32((i + 0.5) * float(scale)) if exact else np.float32(i) * scale
            taps.append([(min(math.floor(where), n_in - 1), 1.0)])
            continue
        if mode != "bicubic" and n_out == n_in:
            taps.append([(i, 1.0), (i, 0.0)])
            continue
        if align_corners:
            src = (n_in - 1) / (n_out - 1) * i if n_out > 1 else 0.0
        else:
            scale = 1.0 / factor if factor else n_in / n_out
            src = scale * (i + 0.5) - 0.5
            src = src if mode == "bicubic" else max(src, 0.0)
        left = min(math.floor(src), n_in - 1)
        t = min(max(src - left, 0.0), 1.0)
        if mode == "bicubic":
            taps.append([(min(max(left + k - 1, 0), n_in - 1), keys(t + 1 - k)) for k in range(4)])
        else:
            taps.append([(left, 1.0 - t), (min(left + 1, n_in - 1), t)])
    return taps


def keys(x: float) -> float:
    """Keys' cubic convolution kernel with ``a = -0.75``."""
    x, a = abs(x), CUBIC_A
    if x <= 1:
        return ((a + 2) * x - (a + 3)) * x * x + 1
    return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a if x < 2 else 0.0


def reference_resize(
    x: np.ndarray,
    g: np.ndarray,
    mode: str,
    out_sizes: Sequence[int],
    align_corners: bool = False,
    factors: Sequence[float | None] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The resized ``x`` and the gradient of ``sum(resized * g)``: a loop over every
    output pixel and every combination of its taps along the spatial dims.
    """
    factors = factors or [None] * len(out_sizes)
    per_dim = [
        reference_taps(mode, n_in, n_out, align_corners, f)
        for n_in, n_out, f in zip(x.shape[2:], out_sizes, factors, strict=True)
    ]
    y = np.zeros(x.shape[:2] + tuple(out_sizes))
    grad = np.zeros(x.shape)
    for out_pos in itertools.product(*map(range, out_sizes)):
        for combo in itertools.product(*[per_dim[d][i] for d, i in enumerate(out_pos)]):
            src = tuple(p for p, _ in combo)
            weight = math.prod(w for _, w in combo)
            at_out: tuple[Any, ...] = (Ellipsis, *out_pos)
            at_src: tuple[Any, ...] = (Ellipsis, *src)
            y[at_out] += weight * x[at_src]
            grad[at_src] += weight * g[at_out]
    return y, grad


REFERENCE_CASES = [
    # (mode, input spatial shape, keyword arguments)
    ("nearest", (5,), {"size": 8}),
    ("nearest", (7,), {"size": 3}),
    ("nearest", (4, 5), {"scale_factor": 2}),
    ("nearest", (5, 6), {"scale_factor": (1.5, 0.5)}),
    ("nearest", (3, 4, 5), {"size": (5, 3, 7)}),
    ("nearest-exact", (5,), {"size": 9}),
    ("nearest-exact", (7, 6), {"size": (3, 10)}),
    ("nearest-exact", (3, 4, 2), {"scale_factor": 1.7}),
    ("linear", (5,), {"size": 9}),
    ("linear", (5,), {"size": 9, "align_corners": True}),
    ("linear", (8,), {"scale_factor": 0.4}),
    ("bilinear", (4, 5), {"size": (7, 3)}),
    ("bilinear", (4, 5), {"size": (7, 3), "align_corners": True}),
    ("bilinear", (6, 7), {"scale_factor": (0.5, 1.5)}),
    ("bilinear", (3, 5), {"size": (3, 8)}),
    ("bicubic", (4, 5), {"size": (7, 3)}),
    ("bicubic", (5, 4), {"size": (6, 9), "align_corners": True}),
    ("bicubic", (6, 7), {"scale_factor": 0.6}),
    ("trilinear", (3, 4, 2), {"size": (5, 3, 4)}),
    ("trilinear", (3, 4, 2), {"scale_factor": 1.5, "align_corners": True}),
]


def _factors(kwargs: dict[str, Any], ndim: int) -> list[float | None]:
    factor = kwargs.get("scale_factor")
    if factor is None or kwargs.get("recompute_scale_factor"):
        return [None] * ndim
    return list(factor) if isinstance(factor, tuple) else [factor] * ndim


def _out_sizes(shape: tuple[int, ...], kwargs: dict[str, Any]) -> list[int]:
    if "size" in kwargs:
        size = kwargs["size"]
        return list(size) if isinstance(size, tuple) else [size] * len(shape)
    factor = kwargs["scale_factor"]
    factors = factor if isinstance(factor, tuple) else (factor,) * len(shape)
    return [int(n * f) for n, f in zip(shape, factors, strict=True)]


@pytest.mark.parametrize("mode,spatial,kwargs", REFERENCE_CASES)
def test_against_the_numpy_reference(
    mode: str, spatial: tuple[int, ...], kwargs: dict[str, Any], device: str
) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, *spatial))
    out_sizes = _out_sizes(spatial, kwargs)
    g = rng.standard_normal((2, 3, *out_sizes))
    align = bool(kwargs.get("align_corners"))
    want_y, want_grad = reference_resize(
        x, g, mode, out_sizes, align, _factors(kwargs, len(spatial))
    )
    t = mta.tensor(x, device=device, requires_grad=True)
    y = F.interpolate(t, mode=mode, **kwargs)
    assert y.shape == want_y.shape and y.dtype == np.float64 and y.device == mta.Device(device)
    y.backward(mta.tensor(g, device=device))
    np.testing.assert_allclose(to_host(y), want_y, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(to_host(t.grad), want_grad, rtol=1e-12, atol=1e-12)


def test_the_reference_gradient_is_a_sum_over_the_copies() -> None:
    """Nearest upsampling by 3 then summing: each input pixel's gradient counts its 3*3
    copies (the reference's own sanity check, written by hand)."""
    x = np.arange(6.0).reshape(1, 1, 2, 3)
    y, grad = reference_resize(x, np.ones((1, 1, 6, 9)), "nearest", (6, 9))
    assert y[0, 0, 4, 7] == x[0, 0, 1, 2] and (grad == 9).all()
    t = mta.tensor(x, requires_grad=True)
    F.interpolate(t, scale_factor=3).sum().backward()
    assert (to_host(t.grad) == 9).all()


# ------------------------------------------------------------------ against PyTorch
TORCH_CASES = [
    # (mode, input spatial shape, keyword arguments); odd sizes, up and down, both kinds
    # of scale factor, both align_corners
    *[
        (mode, shape, kw)
        for mode in ("nearest", "nearest-exact")
        for shape in ((5,), (7, 5), (3, 5, 4))
        for kw in (
            {"size": tuple(n + 4 for n in shape)},
            {"size": tuple(max(n - 2, 1) for n in shape)},
            {"scale_factor": 2},
            {"scale_factor": 3},
            {"scale_factor": 0.5},
            {"scale_factor": 1.5},
            {"scale_factor": 0.7},
            {"scale_factor": 2.5, "recompute_scale_factor": True},
        )
    ],
    *[
        (MODE_OF_DIMS[len(shape)], shape, dict(kw, align_corners=align))
        for shape in ((5,), (7, 5), (3, 5, 4))
        for align in (False, True)
        for kw in (
            {"size": tuple(n + 4 for n in shape)},
            {"size": tuple(max(n - 2, 1) for n in shape)},
            {"size": shape},
            {"size": (1,) * len(shape)},
            {"scale_factor": 2},
            {"scale_factor": 0.5},
            {"scale_factor": 1.7},
            {"scale_factor": 0.4},
            {"scale_factor": 1.2},
            {"scale_factor": 2.5, "recompute_scale_factor": True},
        )
    ],
    *[
        ("bicubic", (6, 5), dict(kw, align_corners=align))
        for align in (False, True)
        for kw in (
            {"size": (9, 4)},
            {"size": (6, 5)},
            {"size": (1, 2)},
            {"scale_factor": 2},
            {"scale_factor": (0.5, 1.7)},
            {"scale_factor": 2.5, "recompute_scale_factor": True},
        )
    ],
    ("nearest", (4, 6), {"scale_factor": (2, 1.5)}),
    ("bilinear", (4, 6), {"scale_factor": (0.5, 2.5), "align_corners": False}),
]


def tolerances(dtype: Any) -> Any:
    """Finite results within a few units in the last place of PyTorch's (the gradients
    add several products, in another order)."""
    return {"rtol": 1e-12, "atol": 1e-12} if dtype == np.float64 else {"rtol": 1e-5, "atol": 1e-5}


def run_both(
    torch: Any, fn: str, x: np.ndarray, g: np.ndarray | float, **kwargs: Any
) -> tuple[np.ndarray, ...]:
    """``F.<fn>`` forward and backward, ours then PyTorch's: (y, grad, y_torch, grad_torch)."""
    t = mta.tensor(x, requires_grad=True)
    y = getattr(F, fn)(t, **kwargs)
    incoming = np.broadcast_to(np.asarray(g, x.dtype), y.shape).copy()
    y.backward(mta.tensor(incoming))
    tt = torch.tensor(x, requires_grad=True)
    ty = getattr(torch.nn.functional, fn)(tt, **kwargs)
    ty.backward(torch.tensor(incoming))
    return to_host(y), to_host(t.grad), ty.detach().numpy(), tt.grad.numpy()


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("mode,spatial,kwargs", TORCH_CASES)
def test_values_and_gradients_match_torch(
    torch: Any, mode: str, spatial: tuple[int, ...], kwargs: dict[str, Any], dtype: Any
) -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, *spatial)).astype(dtype)
    g = rng.standard_normal((2, 3, *_out_sizes(spatial, kwargs))).astype(dtype)
    y, grad, ty, tgrad = run_both(torch, "interpolate", x, g, mode=mode, **kwargs)
    assert y.shape == ty.shape and y.dtype == ty.dtype == dtype
    np.testing.assert_allclose(y, ty, **tolerances(dtype))
    if mode == "bicubic" and "scale_factor" in kwargs and y.shape == x.shape:
        return  # PyTorch's backward copies there (test_bicubic_same_size_backward_differs)
    np.testing.assert_allclose(grad, tgrad, **tolerances(dtype))


@pytest.mark.parametrize(
    "mode,ndim",
    [
        ("nearest", 3),
        ("nearest", 4),
        ("nearest", 5),
        ("nearest-exact", 4),
        ("linear", 3),
        ("bilinear", 4),
        ("bicubic", 4),
        ("trilinear", 5),
    ],
)
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_special_values_match_torch(torch: Any, mode: str, ndim: int, dtype: Any) -> None:
    """Infinities, NaN and signed zeros in, gradients of 1 and of inf back: NaN, inf and
    zeros (with their sign) exactly where PyTorch has them."""
    rng = np.random.default_rng(2)
    align_options = [None] if mode.startswith("nearest") else [False, True]
    for _trial, align, incoming in itertools.product(range(4), align_options, (1.0, np.inf)):
        spatial = tuple(int(n) for n in rng.integers(2, 5, ndim - 2))
        x = rng.choice(SPECIAL, (1, 2, *spatial)).astype(dtype)
        for size in (tuple(2 * n + 1 for n in spatial), tuple(max(n - 1, 1) for n in spatial)):
            got = run_both(
                torch, "interpolate", x, incoming, size=size, mode=mode, align_corners=align
            )
            for ours, theirs in ((got[0], got[2]), (got[1], got[3])):
                assert_like_torch(ours, theirs, dtype, f"{mode} {x.tolist()} {size} {align}")


def assert_like_torch(ours: np.ndarray, theirs: np.ndarray, dtype: Any, what: str) -> None:
    """Equal where PyTorch's value is NaN, infinite or zero (its sign included), close
    elsewhere."""
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype, what
    special = ~np.isfinite(theirs) | (theirs == 0)
    np.testing.assert_array_equal(ours[special], theirs[special], err_msg=what)
    zeros = theirs == 0
    np.testing.assert_array_equal(np.signbit(ours[zeros]), np.signbit(theirs[zeros]), what)
    np.testing.assert_allclose(ours[~special], theirs[~special], **tolerances(dtype), err_msg=what)


def test_nearest_positions_are_pytorchs_backward_positions(torch: Any) -> None:
    """Where PyTorch's 1-D forward and its backward disagree (a scale factor whose output
    size is the input's, or twice it), ours follows its backward and its 2-D forward: a
    copy, and each pixel twice."""
    x = np.arange(3.0).reshape(1, 1, 3)
    for factor, want in ((1.2, [0.0, 1.0, 2.0]), (2.3, [0.0, 0.0, 1.0, 1.0, 2.0, 2.0])):
        y, grad, _, tgrad = run_both(torch, "interpolate", x, 1.0, scale_factor=factor)
        assert y.ravel().tolist() == want
        np.testing.assert_array_equal(grad, tgrad)
        as_image = torch.nn.functional.interpolate(
            torch.tensor(x[:, :, None]), scale_factor=(1.0, factor)
        )
        assert as_image.ravel().tolist() == want


def test_bicubic_same_size_backward_differs(torch: Any) -> None:
    """Resized to its own size by a scale factor, PyTorch's bicubic backward copies the
    gradient though its forward samples at 1/scale_factor; ours is the derivative of the
    forward (which both compute alike)."""
    x = np.random.default_rng(3).standard_normal((1, 1, 3, 4))
    kwargs: dict[str, Any] = {"scale_factor": 1.2, "mode": "bicubic"}
    y, grad, ty, tgrad = run_both(torch, "interpolate", x, 1.0, **kwargs)
    np.testing.assert_allclose(y, ty, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(tgrad, np.ones_like(x))
    want = reference_resize(x, np.ones_like(x), "bicubic", (3, 4), False, [1.2, 1.2])[1]
    np.testing.assert_allclose(grad, want, rtol=1e-12, atol=1e-12)
    # to its own size by ``size``: the same numbers, but an infinite gradient meets the
    # zero weights of the neighbouring taps here (NaN) and is copied there (inf)
    y, grad, ty, tgrad = run_both(torch, "interpolate", x, np.inf, size=(3, 4), mode="bicubic")
    np.testing.assert_allclose(y, x, rtol=1e-12, atol=1e-12)
    assert np.isposinf(tgrad).all() and np.isnan(grad).any()
    want = reference_resize(x, np.full_like(x, np.inf), "bicubic", (3, 4))[1]
    np.testing.assert_array_equal(grad, want)


# ------------------------------------------------------------------ derivatives
@pytest.mark.parametrize(
    "mode,spatial,kwargs",
    [
        ("nearest", (3,), {"size": 5}),
        ("nearest-exact", (3, 2), {"size": (2, 5)}),
        ("nearest", (2, 2, 3), {"scale_factor": 1.5}),
        ("linear", (4,), {"size": 7, "align_corners": False}),
        ("linear", (4,), {"size": 3, "align_corners": True}),
        ("bilinear", (3, 4), {"size": (5, 3), "align_corners": False}),
        ("bilinear", (3, 4), {"scale_factor": 1.5, "align_corners": True}),
        ("bicubic", (3, 3), {"size": (4, 5), "align_corners": False}),
        ("trilinear", (2, 3, 2), {"size": (3, 2, 3), "align_corners": False}),
    ],
)
def test_gradcheck_and_gradgradcheck(
    mode: str, spatial: tuple[int, ...], kwargs: dict[str, Any]
) -> None:
    x = mta.tensor(np.random.default_rng(4).standard_normal((1, 2, *spatial)), requires_grad=True)

    def fn(t: Tensor) -> Tensor:
        return F.interpolate(t, mode=mode, **kwargs)

    assert gradcheck(fn, [x])
    assert gradgradcheck(fn, [x])


def test_float32_stays_float32_and_float16_works() -> None:
    x = mta.ones(1, 2, 3, 4)
    assert F.interpolate(x, size=(5, 6), mode="bilinear").dtype == np.float32
    half = F.interpolate(x.half(), size=(5, 6), mode="bilinear")
    assert half.dtype == np.float16 and (to_host(half) == 1).all()


def test_nearest_takes_integers_and_linear_refuses_them() -> None:
    x = mta.tensor([[[1, 2, 3]]])
    assert F.interpolate(x, size=6).tolist() == [[[1, 1, 2, 2, 3, 3]]]
    with pytest.raises(TypeError, match="floating-point"):
        F.interpolate(x, size=6, mode="linear")


def test_an_empty_batch_is_resized(torch: Any) -> None:
    y = F.interpolate(mta.zeros(0, 2, 3, 4), size=(5, 6), mode="bilinear")
    want = torch.nn.functional.interpolate(torch.zeros(0, 2, 3, 4), size=(5, 6), mode="bilinear")
    assert y.shape == tuple(want.shape)


# ------------------------------------------------------------------ errors
INTERPOLATE_ERRORS: list[tuple[str, dict[str, Any], tuple[int, ...], type[Exception], str]] = [
    # (name, arguments, input shape, our exception, PyTorch's message, or its start)
    (
        "align_nearest",
        {"size": 4, "align_corners": False},
        (1, 1, 3),
        ValueError,
        "align_corners option",
    ),
    ("both", {"size": 4, "scale_factor": 2}, (1, 1, 3), ValueError, "only one of size"),
    ("neither", {}, (1, 1, 3), ValueError, "either size or scale_factor"),
    ("size_len", {"size": (4, 4)}, (1, 1, 3), ValueError, "Input and output must have"),
    ("scale_len", {"scale_factor": (2, 2)}, (1, 1, 3), ValueError, "Input and scale_factor must"),
    ("float_size", {"size": (4, 5.0)}, (1, 1, 3, 3), TypeError, "expected size to be one of"),
    (
        "recompute",
        {"size": 4, "recompute_scale_factor": True},
        (1, 1, 3),
        ValueError,
        "recompute_scale_factor is not",
    ),
    (
        "zero_out",
        {"scale_factor": 0.1},
        (1, 1, 3, 5),
        ValueError,
        "Input and output sizes should be greater than 0, but got input (H: 3, W: 5) output (H: "
        "0, W: 0)",
    ),
    (
        "zero_in",
        {"size": 4},
        (1, 1, 0),
        ValueError,
        "Input and output sizes should be greater than 0, but got input (W: 0) and output (W: 4)",
    ),
    ("no_channel", {"size": 4}, (2, 0, 3), ValueError, "Non-empty 3D data tensor expected"),
    (
        "linear_4d",
        {"size": 4, "mode": "linear"},
        (1, 1, 3, 3),
        NotImplementedError,
        "Got 4D input, but linear mode needs 3D input",
    ),
    (
        "bilinear_3d",
        {"size": 4, "mode": "bilinear"},
        (1, 1, 3),
        NotImplementedError,
        "Got 3D input, but bilinear mode needs 4D input",
    ),
    (
        "trilinear_4d",
        {"size": 4, "mode": "trilinear"},
        (1, 1, 3, 3),
        NotImplementedError,
        "Got 4D input, but trilinear mode needs 5D input",
    ),
    (
        "bicubic_3d",
        {"size": 4, "mode": "bicubic"},
        (1, 1, 3),
        NotImplementedError,
        "Input Error: Only 3D, 4D and 5D",
    ),
    (
        "unknown",
        {"size": 4, "mode": "cubic"},
        (1, 1, 3),
        NotImplementedError,
        "Input Error: Only 3D, 4D and 5D",
    ),
    (
        "two_dims",
        {"size": 4},
        (1, 3),
        NotImplementedError,
        "Input Error: Only 3D, 4D and 5D input Tensors supported (got 2D)",
    ),
    (
        "antialias_nearest",
        {"size": 4, "antialias": True},
        (1, 1, 3, 3),
        ValueError,
        "Anti-alias option is restricted",
    ),
]


@pytest.mark.parametrize(
    "kwargs,shape,error,message",
    [c[1:] for c in INTERPOLATE_ERRORS],
    ids=[c[0] for c in INTERPOLATE_ERRORS],
)
def test_interpolate_errors(
    kwargs: dict[str, Any], shape: tuple[int, ...], error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as caught:
        F.interpolate(mta.zeros(*shape), **kwargs)
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize(
    "kwargs,shape,error,message",
    [c[1:] for c in INTERPOLATE_ERRORS],
    ids=[c[0] for c in INTERPOLATE_ERRORS],
)
def test_interpolate_errors_are_pytorchs(
    torch: Any, kwargs: dict[str, Any], shape: tuple[int, ...], error: type[Exception], message: str
) -> None:
    """The same message as PyTorch's (PyTorch raises RuntimeError where we raise a
    ValueError for sizes)."""
    with pytest.raises((RuntimeError, ValueError, TypeError, NotImplementedError)) as caught:
        torch.nn.functional.interpolate(torch.zeros(*shape), **kwargs)
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"size": 4, "mode": "area"},
        {"size": 4, "mode": "lanczos", "antialias": True},
        {"size": 4, "mode": "bilinear", "antialias": True},
    ],
)
def test_unimplemented_modes_say_so(kwargs: dict[str, Any]) -> None:
    with pytest.raises(NotImplementedError, match="not implemented here"):
        F.interpolate(mta.zeros(1, 1, 3, 3), **kwargs)


def test_deprecated_upsample_functions_warn_and_resize() -> None:
    x = mta.tensor([[[[0.0, 3.0]]]])
    for fn, want in (
        (
            lambda: F.upsample(x, size=(1, 4), mode="bilinear", align_corners=True),
            [0.0, 1.0, 2.0, 3.0],
        ),
        (lambda: F.upsample_nearest(x, size=(1, 4)), [0.0, 0.0, 3.0, 3.0]),
        (lambda: F.upsample_bilinear(x, size=(1, 4)), [0.0, 1.0, 2.0, 3.0]),
    ):
        with pytest.warns(UserWarning, match="is deprecated. Use `nn.functional.interpolate`"):
            assert fn().flatten().tolist() == want


# ------------------------------------------------------------------ Upsample modules
def test_upsample_modules_match_torch(torch: Any) -> None:
    x = np.random.default_rng(5).standard_normal((2, 3, 4, 5)).astype(np.float32)
    pairs = [
        (nn.Upsample(scale_factor=2), torch.nn.Upsample(scale_factor=2)),
        (
            nn.Upsample(size=(3, 7), mode="bilinear"),
            torch.nn.Upsample(size=(3, 7), mode="bilinear"),
        ),
        (
            nn.Upsample(scale_factor=(1.5, 0.5), mode="bicubic", align_corners=True),
            torch.nn.Upsample(scale_factor=(1.5, 0.5), mode="bicubic", align_corners=True),
        ),
        (
            nn.Upsample(size=6, mode="nearest-exact"),
            torch.nn.Upsample(size=6, mode="nearest-exact"),
        ),
        (nn.UpsamplingNearest2d(scale_factor=3), torch.nn.UpsamplingNearest2d(scale_factor=3)),
        (nn.UpsamplingBilinear2d(size=(7, 2)), torch.nn.UpsamplingBilinear2d(size=(7, 2))),
    ]
    for ours, theirs in pairs:
        assert repr(ours) == repr(theirs)
        np.testing.assert_allclose(
            to_host(ours(mta.tensor(x))), theirs(torch.tensor(x)).numpy(), rtol=1e-5, atol=1e-5
        )
    assert (
        repr(nn.Upsample(size=3, mode="linear", align_corners=True))
        == "Upsample(size=3, mode='linear')"
    )
    assert nn.Upsample(scale_factor=0).scale_factor is None  # as PyTorch: 0 is "no factor"


# ------------------------------------------------------------------ pixel shuffle
@pytest.mark.parametrize("shape,factor", [((2, 8, 3, 4), 2), ((18, 2, 3), 3), ((2, 2, 4, 1, 5), 2)])
def test_pixel_shuffle_matches_torch_and_round_trips(
    torch: Any, shape: tuple[int, ...], factor: int
) -> None:
    rng = np.random.default_rng(6)
    x = rng.standard_normal(shape)
    y, grad, ty, tgrad = run_both(
        torch,
        "pixel_shuffle",
        x,
        rng.standard_normal(shuffled_shape(shape, factor)),
        upscale_factor=factor,
    )
    np.testing.assert_array_equal(y, ty)
    np.testing.assert_array_equal(grad, tgrad)
    back, grad_back, tback, tgrad_back = run_both(
        torch, "pixel_unshuffle", y, 1.0, downscale_factor=factor
    )
    np.testing.assert_array_equal(back, x)
    np.testing.assert_array_equal(back, tback)
    np.testing.assert_array_equal(grad_back, tgrad_back)


def shuffled_shape(shape: tuple[int, ...], r: int) -> tuple[int, ...]:
    """The shape pixel_shuffle gives: channels / r**2, height and width * r."""
    *batch, c, h, w = shape
    return (*batch, c // (r * r), h * r, w * r)


def test_pixel_shuffle_by_hand() -> None:
    """``out[c, h*r + i, w*r + j] = in[c*r*r + i*r + j, h, w]``, checked pixel by pixel."""
    r, x = 2, np.arange(2 * 4 * 2 * 3.0).reshape(1, 8, 2, 3)
    y = to_host(F.pixel_shuffle(mta.tensor(x), r))
    for c, h, w, i, j in itertools.product(range(2), range(2), range(3), range(r), range(r)):
        assert y[0, c, h * r + i, w * r + j] == x[0, c * r * r + i * r + j, h, w]
    np.testing.assert_array_equal(to_host(F.pixel_unshuffle(mta.tensor(y), r)), x)


def test_pixel_shuffle_gradcheck_and_modules(torch: Any) -> None:
    x = mta.tensor(np.random.default_rng(7).standard_normal((1, 4, 2, 3)), requires_grad=True)
    assert gradcheck(lambda t: F.pixel_shuffle(t, 2) * F.pixel_shuffle(t, 2), [x])
    assert gradgradcheck(lambda t: F.pixel_unshuffle(F.pixel_shuffle(t, 2) ** 2, 2), [x])
    assert repr(nn.PixelShuffle(3)) == repr(torch.nn.PixelShuffle(3))
    assert repr(nn.PixelUnshuffle(2)) == repr(torch.nn.PixelUnshuffle(2))
    assert nn.PixelUnshuffle(2)(nn.PixelShuffle(2)(x)).tolist() == x.tolist()


PIXEL_ERRORS: list[tuple[Callable[[], Any], type[Exception], str]] = [
    (
        lambda: F.pixel_shuffle(mta.zeros(2, 5, 3, 4), 2),
        ValueError,
        "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
        "upscale_factor, but input.size(-3)=5 is not divisible by 4",
    ),
    (
        lambda: F.pixel_shuffle(mta.zeros(3, 4), 2),
        ValueError,
        "pixel_shuffle expects input to have at least 3 dimensions, but got input with 2 "
        "dimension(s)",
    ),
    (
        lambda: F.pixel_shuffle(mta.zeros(2, 8, 3, 4), 0),
        ValueError,
        "pixel_shuffle expects a positive upscale_factor, but got 0",
    ),
    (
        lambda: F.pixel_shuffle(mta.zeros(2, 8, 3, 4), 2.0),
        TypeError,
        "pixel_shuffle(): argument 'upscale_factor' (position 2) must be int, not float",
    ),
    (
        lambda: F.pixel_unshuffle(mta.zeros(2, 2, 5, 6), 2),
        ValueError,
        "pixel_unshuffle expects height to be divisible by downscale_factor, but "
        "input.size(-2)=5 is not divisible by 2",
    ),
    (
        lambda: F.pixel_unshuffle(mta.zeros(2, 2, 4, 5), 2),
        ValueError,
        "pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)=5 "
        "is not divisible by 2",
    ),
    (
        lambda: F.pixel_unshuffle(mta.zeros(2, 2, 4, 6), -1),
        ValueError,
        "pixel_unshuffle expects a positive downscale_factor, but got -1",
    ),
]


@pytest.mark.parametrize("call,error,message", PIXEL_ERRORS)
def test_pixel_shuffle_errors(
    call: Callable[[], Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as caught:
        call()
    assert str(caught.value) == message


# ------------------------------------------------------------------ unfold and fold
BLOCK_SETTINGS: list[dict[str, Any]] = [
    {"kernel_size": 2},
    {"kernel_size": (2, 3), "stride": (2, 1)},
    {"kernel_size": 3, "padding": 1},
    {"kernel_size": (3, 2), "dilation": (2, 1), "padding": (1, 2), "stride": 2},
    {"kernel_size": 2, "padding": 4, "stride": 3},
    {"kernel_size": 1, "stride": (1, 3)},
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("settings", BLOCK_SETTINGS)
@pytest.mark.parametrize("shape", [(2, 3, 5, 6), (3, 7, 4)])
def test_unfold_and_fold_match_torch(
    torch: Any, shape: tuple[int, ...], settings: dict[str, Any], dtype: Any
) -> None:
    rng = np.random.default_rng(8)
    x = rng.standard_normal(shape).astype(dtype)
    cols, grad, tcols, tgrad = run_both(torch, "unfold", x, 1.0, **settings)
    np.testing.assert_array_equal(cols, tcols)  # a copy: exact
    np.testing.assert_allclose(grad, tgrad, **tolerances(dtype))  # sums of ones: exact too
    c = rng.standard_normal(cols.shape).astype(dtype)
    g = rng.standard_normal(shape).astype(dtype)
    image, grad_c, timage, tgrad_c = run_both(
        torch, "fold", c, g, output_size=shape[-2:], **settings
    )
    np.testing.assert_allclose(image, timage, **tolerances(dtype))
    np.testing.assert_array_equal(grad_c, tgrad_c)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_special_values_through_blocks_and_shuffles_match_torch(torch: Any, dtype: Any) -> None:
    """Copies and sums of infinities, NaN and signed zeros, with gradients of 1 and inf."""
    rng = np.random.default_rng(18)
    x = rng.choice(SPECIAL, (2, 4, 5, 6)).astype(dtype)
    settings = {"kernel_size": (2, 3), "padding": 1, "stride": (2, 1)}
    for incoming in (1.0, np.inf):
        cases = [
            run_both(torch, "unfold", x, incoming, **settings),
            run_both(torch, "pixel_shuffle", x, incoming, upscale_factor=2),
            run_both(torch, "pixel_unshuffle", x[..., :4, :], incoming, downscale_factor=2),
        ]
        cols = rng.choice(SPECIAL, cases[0][0].shape).astype(dtype)
        cases.append(run_both(torch, "fold", cols, incoming, output_size=(5, 6), **settings))
        for y, grad, ty, tgrad in cases:
            assert_like_torch(y, ty, dtype, "values")
            assert_like_torch(grad, tgrad, dtype, "gradients")


def coverage(shape: tuple[int, int], settings: dict[str, Any]) -> np.ndarray:
    """How many blocks cover each pixel, counted block by block and tap by tap."""
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = (
        _pair(settings.get(name, default))
        for name, default in (("kernel_size", 1), ("dilation", 1), ("padding", 0), ("stride", 1))
    )
    h, w = shape
    count = np.zeros(shape)
    for top in range(-ph, h + ph - dh * (kh - 1), sh):
        for left in range(-pw, w + pw - dw * (kw - 1), sw):
            for i, j in itertools.product(range(kh), range(kw)):
                row, col = top + i * dh, left + j * dw
                if 0 <= row < h and 0 <= col < w:
                    count[row, col] += 1
    return count


def _pair(value: Any) -> tuple[int, int]:
    return (value, value) if isinstance(value, int) else tuple(value)  # type: ignore[return-value]


@pytest.mark.parametrize("settings", BLOCK_SETTINGS)
def test_fold_of_unfold_is_x_times_the_overlap_count(settings: dict[str, Any], device: str) -> None:
    x = np.random.default_rng(9).standard_normal((2, 3, 5, 6))
    t = mta.tensor(x, device=device)
    back = F.fold(F.unfold(t, **settings), (5, 6), **settings)
    assert back.device == mta.Device(device)
    np.testing.assert_allclose(to_host(back), x * coverage((5, 6), settings), rtol=1e-14)


def test_unfold_by_hand() -> None:
    """``cols[n, (c*KH + i)*KW + j, bh*LW + bw]`` is
    ``x[n, c, bh*sh + i*dh - ph, bw*sw + j*dw - pw]``, or 0 outside the image."""
    x = np.random.default_rng(10).standard_normal((1, 2, 5, 4))
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = (2, 2), (2, 1), (1, 0), (1, 2)
    cols = to_host(F.unfold(mta.tensor(x), (kh, kw), (dh, dw), (ph, pw), (sh, sw)))
    lh, lw = (5 + 2 * ph - dh * (kh - 1) - 1) // sh + 1, (4 + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    assert cols.shape == (1, 2 * kh * kw, lh * lw)
    for c, i, j, bh, bw in itertools.product(range(2), range(kh), range(kw), range(lh), range(lw)):
        row, col = bh * sh + i * dh - ph, bw * sw + j * dw - pw
        want = x[0, c, row, col] if 0 <= row < 5 and 0 <= col < 4 else 0.0
        assert cols[0, (c * kh + i) * kw + j, bh * lw + bw] == want


def test_unfold_fold_gradcheck_and_gradgradcheck() -> None:
    rng = np.random.default_rng(11)
    x = mta.tensor(rng.standard_normal((1, 2, 4, 3)), requires_grad=True)
    settings = {"kernel_size": (2, 2), "dilation": (1, 2), "padding": 1, "stride": (2, 1)}
    assert gradcheck(lambda t: F.unfold(t, **settings) ** 2, [x])
    assert gradgradcheck(lambda t: F.unfold(t, **settings) ** 2, [x])
    cols = mta.tensor(rng.standard_normal((1, 8, 9)), requires_grad=True)
    assert gradcheck(lambda c: F.fold(c, (4, 3), **settings) ** 2, [cols])
    assert gradgradcheck(lambda c: F.fold(c, (4, 3), **settings) ** 2, [cols])


def test_unfold_is_the_matrix_of_a_convolution() -> None:
    rng = np.random.default_rng(12)
    x, w = (
        mta.tensor(rng.standard_normal((2, 3, 5, 6))),
        mta.tensor(rng.standard_normal((4, 3, 2, 3))),
    )
    y = (w.reshape(4, -1) @ F.unfold(x, (2, 3), padding=1)).reshape(2, 4, 6, 6)
    np.testing.assert_allclose(
        to_host(y), to_host(F.conv2d(x, w, padding=1)), rtol=1e-12, atol=1e-12
    )


def test_empty_batches_and_modules(torch: Any) -> None:
    assert F.unfold(mta.zeros(0, 3, 5, 6), 2).shape == (0, 12, 20)
    assert F.fold(mta.zeros(0, 12, 20), (5, 6), 2).shape == (0, 3, 5, 6)
    for ours, theirs in (
        (nn.Unfold(2, padding=(1, 2)), torch.nn.Unfold(2, padding=(1, 2))),
        (nn.Fold((4, 5), 2, stride=(1, 2)), torch.nn.Fold((4, 5), 2, stride=(1, 2))),
    ):
        assert repr(ours) == repr(theirs)
    x = np.random.default_rng(13).standard_normal((2, 3, 4, 5))
    cols = nn.Unfold((2, 3), dilation=(1, 2), stride=(2, 1))(mta.tensor(x))
    want = torch.nn.Unfold((2, 3), dilation=(1, 2), stride=(2, 1))(torch.tensor(x))
    np.testing.assert_array_equal(to_host(cols), want.numpy())
    back = nn.Fold((4, 5), (2, 3), dilation=(1, 2), stride=(2, 1))(cols)
    np.testing.assert_allclose(
        to_host(back), torch.nn.Fold((4, 5), (2, 3), dilation=(1, 2), stride=(2, 1))(want).numpy()
    )


BLOCK_ERRORS: list[tuple[Callable[[Any], Any], type[Exception], str]] = [
    (
        lambda m: m.unfold(m.zeros(2, 3, 4, 5, 6), 2),
        ValueError,
        "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
        "dimensions for input, but got: [2, 3, 4, 5, 6]",
    ),
    (
        lambda m: m.unfold(m.zeros(2, 0, 5, 6), 2),
        ValueError,
        "Expected 3D or 4D (batch mode) tensor",
    ),
    (
        lambda m: m.unfold(m.zeros(2, 3, 5, 6), 7),
        ValueError,
        "Given input with spatial size (5, 6), kernel_size=(7, 7), dilation=(1, 1), padding=(0, "
        "0), calculated shape of the array of sliding blocks as (-1, 0), but its components must "
        "be at least one.",
    ),
    (
        lambda m: m.unfold(m.zeros(1, 1, 5, 5), 8, stride=2),
        ValueError,
        "Given input with spatial size (5, 5), kernel_size=(8, 8), dilation=(1, 1), padding=(0, "
        "0), calculated shape of the array of sliding blocks as (-1, -1)",
    ),
    (
        lambda m: m.unfold(m.zeros(2, 3, 5, 6), 0),
        ValueError,
        "kernel size should be greater than zero, but got kernel_height: 0 kernel_width: 0",
    ),
    (
        lambda m: m.unfold(m.zeros(2, 3, 5, 6), 2, stride=0),
        ValueError,
        "stride should be greater than zero, but got stride_height: 0 stride_width: 0",
    ),
    (
        lambda m: m.unfold(m.zeros(2, 3, 5, 6), 2, dilation=(1, 0)),
        ValueError,
        "dilation should be greater than zero, but got dilation_height: 1 dilation_width: 0",
    ),
    (
        lambda m: m.unfold(m.zeros(2, 3, 5, 6), 2, padding=-1),
        ValueError,
        "padding should be non-negative, but got pad_height: -1 pad_width: -1",
    ),
    (
        lambda m: m.unfold(m.zeros(2, 3, 5, 6), (2, 3, 4)),
        ValueError,
        "It is expected kernel_size equals to 2, but got size 3",
    ),
    (
        lambda m: m.fold(m.zeros(2, 12, 8), (4, 4), 2),
        ValueError,
        "Given output_size=(4, 4), kernel_size=(2, 2), dilation=(1, 1), padding=(0, 0), "
        "stride=(1, 1), expected size of input's dimension 2 to match the calculated number of "
        "sliding blocks 3 * 3 = 9, but got input.size(2)=8.",
    ),
    (
        lambda m: m.fold(m.zeros(2, 13, 9), (4, 4), 2),
        ValueError,
        "Expected size of input's dimension 1 to be divisible by the product of kernel_size, but "
        "got input.size(1)=13 and kernel_size=(2, 2).",
    ),
    (
        lambda m: m.fold(m.zeros(9), (4, 4), 2),
        ValueError,
        "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
        "dimensions for input, but got: [9]",
    ),
    (
        lambda m: m.fold(m.zeros(2, 12, 9), (1, 1), 2),
        ValueError,
        "Given output_size=(1, 1), kernel_size=(2, 2), dilation=(1, 1), padding=(0, 0), "
        "stride=(1, 1), expected size of input's dimension 2 to match the calculated number of "
        "sliding blocks 0 * 0 = 0",
    ),
]


class _TorchNames:
    """``unfold``, ``fold`` and ``zeros`` of PyTorch under the names the cases use."""

    def __init__(self, torch: Any) -> None:
        self.unfold, self.fold, self.zeros = (
            torch.nn.functional.unfold,
            torch.nn.functional.fold,
            torch.zeros,
        )


class _OurNames:
    unfold, fold, zeros = staticmethod(F.unfold), staticmethod(F.fold), staticmethod(mta.zeros)


@pytest.mark.parametrize("call,error,message", BLOCK_ERRORS)
def test_unfold_fold_errors(
    call: Callable[[Any], Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as caught:
        call(_OurNames)
    assert message in str(caught.value)


@pytest.mark.parametrize("call,error,message", BLOCK_ERRORS)
def test_unfold_fold_errors_are_pytorchs(
    torch: Any, call: Callable[[Any], Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(RuntimeError) as caught:
        call(_TorchNames(torch))
    assert message in str(caught.value)


# ------------------------------------------------------------------ adaptive max pooling
def reference_adaptive_max(x: np.ndarray, out: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Loops over the bins, scanning each row-major as PyTorch's kernel: a value replaces
    the best so far when it is larger or NaN."""
    *lead, h, w = x.shape
    values, indices = np.zeros((*lead, *out)), np.zeros((*lead, *out), np.int64)
    for pos in itertools.product(*map(range, lead)):
        for i, j in itertools.product(range(out[0]), range(out[1])):
            rows = range(i * h // out[0], -(-(i + 1) * h // out[0]))
            cols = range(j * w // out[1], -(-(j + 1) * w // out[1]))
            best, where = -np.inf, rows[0] * w + cols[0]
            for r, c in itertools.product(rows, cols):
                at_in: tuple[int, ...] = (*pos, r, c)
                if x[at_in] > best or np.isnan(x[at_in]):
                    best, where = x[at_in], r * w + c
            at_out: tuple[int, ...] = (*pos, i, j)
            values[at_out], indices[at_out] = best, where
    return values, indices


@pytest.mark.parametrize("output_size", [1, 2, (3, 4), (5, 7), (7, 9), (3, None), (None, 2)])
@pytest.mark.parametrize("kind", ["random", "ties", "special"])
def test_adaptive_max_pool2d(torch: Any, output_size: Any, kind: str) -> None:
    rng = np.random.default_rng(14)
    shape = (2, 3, 5, 7)
    x = {
        "random": rng.standard_normal(shape),
        "ties": rng.integers(0, 3, shape).astype(float),
        "special": rng.choice(SPECIAL, shape),
    }[kind]
    t = mta.tensor(x, requires_grad=True)
    values, indices = F.adaptive_max_pool2d(t, output_size, return_indices=True)
    out = tuple(shape[2 + k] if s is None else s for k, s in enumerate(_pair(output_size)))
    want_values, want_indices = reference_adaptive_max(x, out)  # type: ignore[arg-type]
    np.testing.assert_array_equal(to_host(values), want_values)
    np.testing.assert_array_equal(to_host(indices), want_indices)
    tt = torch.tensor(x, requires_grad=True)
    tvalues, tindices = torch.nn.functional.adaptive_max_pool2d(
        tt, output_size, return_indices=True
    )
    np.testing.assert_array_equal(to_host(indices), tindices.numpy())
    for incoming in (1.0, np.inf):
        t.grad, tt.grad = None, None
        F.adaptive_max_pool2d(t, output_size).backward(
            mta.full(values.shape, incoming, dtype=mta.float64)
        )
        torch.nn.functional.adaptive_max_pool2d(tt, output_size).backward(
            torch.full(tvalues.shape, incoming, dtype=torch.float64)
        )
        np.testing.assert_array_equal(to_host(t.grad), tt.grad.numpy())


def test_adaptive_max_pool2d_derivatives_module_and_errors(torch: Any) -> None:
    x = mta.tensor(np.random.default_rng(15).standard_normal((1, 2, 5, 4)), requires_grad=True)
    assert gradcheck(lambda t: F.adaptive_max_pool2d(t, (3, 2)) ** 2, [x])
    assert gradgradcheck(lambda t: F.adaptive_max_pool2d(t, (3, 2)) ** 2, [x])
    layer = nn.AdaptiveMaxPool2d((2, None), return_indices=True)
    assert repr(layer) == repr(torch.nn.AdaptiveMaxPool2d((2, None), return_indices=True))
    values, indices = layer(x[0])
    assert values.shape == (2, 2, 4) and indices.dtype == np.int64
    with pytest.raises(ValueError, match=r"Expected 3D or 4D tensor, but got: \[5, 4\]"):
        F.adaptive_max_pool2d(x[0, 0], 2)
    with pytest.raises(ValueError, match="dimension 2 being empty"):
        F.adaptive_max_pool2d(mta.zeros(1, 2, 0, 4), 2)
    with pytest.raises(TypeError, match="floating point"):
        F.adaptive_max_pool2d(mta.tensor([[[1, 2]]]), 1)


# ------------------------------------------------------------------ devices
def test_outputs_stay_on_the_device(device: str) -> None:
    x = mta.ones(1, 4, 4, 6, device=device, requires_grad=True)
    outputs = [
        F.interpolate(x, scale_factor=1.5, mode="bilinear"),
        F.interpolate(x, size=(3, 9), mode="bicubic", align_corners=True),
        F.pixel_shuffle(x, 2),
        F.pixel_unshuffle(x, 2),
        F.fold(F.unfold(x, 3, padding=1), (4, 6), 3, padding=1),
        F.adaptive_max_pool2d(x, (3, 5)),
    ]
    sum(out.sum() for out in outputs).backward()  # type: ignore[union-attr]
    for out in outputs:
        assert out.device == mta.Device(device)
    assert x.grad.device == mta.Device(device)


# ------------------------------------------------------------------ CuPy's rules
STRICT_CASES: list[tuple[str, Callable[[Tensor], Tensor], tuple[int, ...]]] = [
    ("nearest", lambda t: F.interpolate(t, scale_factor=(1.5, 2)), (1, 2, 3, 4)),
    ("nearest_exact", lambda t: F.interpolate(t, size=5, mode="nearest-exact"), (1, 2, 3)),
    ("linear", lambda t: F.interpolate(t, size=5, mode="linear", align_corners=True), (1, 2, 3)),
    ("bilinear", lambda t: F.interpolate(t, size=(2, 5), mode="bilinear"), (1, 2, 3, 4)),
    ("bicubic", lambda t: F.interpolate(t, scale_factor=1.5, mode="bicubic"), (1, 2, 3, 4)),
    ("trilinear", lambda t: F.interpolate(t, size=3, mode="trilinear"), (1, 1, 2, 3, 2)),
    ("pixel_shuffle", lambda t: F.pixel_unshuffle(F.pixel_shuffle(t, 2) ** 2, 2), (1, 4, 2, 3)),
    (
        "unfold_fold",
        lambda t: F.fold(F.unfold(t, 2, padding=1) ** 2, (3, 4), 2, padding=1),
        (1, 2, 3, 4),
    ),
    ("adaptive_max", lambda t: F.adaptive_max_pool2d(t, (2, 3)) ** 2, (1, 2, 5, 4)),
]


@pytest.mark.parametrize("strict_device", ["strict", "strict:1"])
@pytest.mark.parametrize("name,fn,shape", STRICT_CASES, ids=[c[0] for c in STRICT_CASES])
def test_on_a_stand_in_for_cupy(
    name: str, fn: Callable[[Tensor], Tensor], shape: tuple[int, ...], strict_device: str
) -> None:
    """Forward, gradient and second derivative on the ``strict`` stand-in backend (NumPy
    behind CuPy's rules, several devices) equal the CPU's: nothing here would fail on a
    GPU for calling NumPy on device arrays or working on another GPU than its tensors'."""
    from support.strict_backend import registered

    x = np.random.default_rng(16).standard_normal(shape)
    with registered():
        results = [second_order(fn, x, device) for device in ("cpu", strict_device)]
    for ours, cpu in zip(results[1], results[0], strict=True):
        np.testing.assert_allclose(ours, cpu, rtol=1e-12, atol=1e-12)


def second_order(fn: Callable[[Tensor], Tensor], x: np.ndarray, device: str) -> list[np.ndarray]:
    """``fn(x) ** 2``, the gradient of ``sum(fn(x) ** 2 * v)`` and the gradient of that
    gradient's squared sum, all brought to the host through the explicit path."""
    t = mta.tensor(x, device=device, requires_grad=True)
    out = fn(t) ** 2  # squared: the second derivative runs the backward's own backward
    v = mta.tensor(np.random.default_rng(17).standard_normal(out.shape), device=device)
    (grad,) = mta.grad((out * v).sum(), [t], create_graph=True)
    (grad2,) = mta.grad((grad * grad).sum(), [t])
    return [r.detach().to("cpu").numpy() for r in (out, grad, grad2)]
