"""Pooling options and variants against PyTorch and a NumPy loop reference:
``dilation``, ``ceil_mode``, ``return_indices``, ``divisor_override`` of 2-d max and
average pooling, 1-d and 3-d pooling, 1-d and 3-d adaptive pooling, max unpooling and
LP pooling; values, indices and gradients in float64 (special values and incoming
gradients of inf included), finite differences, the guard that keeps
``nn.Sequential``'s fusion off pools with options, and the error messages.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from support.helpers import DEVICES, to_host

import minitorch_accel as mta
import minitorch_accel.nn.functional as F
from minitorch_accel import nn
from minitorch_accel.core.tensor import Tensor
from minitorch_accel.nn.pooling import (
    AdaptiveAvgPool1d,
    AdaptiveAvgPool3d,
    AdaptiveMaxPool1d,
    AvgPool1d,
    AvgPool3d,
    LPPool1d,
    LPPool2d,
    MaxPool1d,
    MaxPool3d,
    MaxUnpool1d,
    MaxUnpool2d,
    MaxUnpool3d,
)
from minitorch_accel.ops import lp_pool, pool1d, pool3d, unpool
from minitorch_accel.ops.pool import avg_pool2d, max_pool2d, max_pool2d_with_indices
from minitorch_accel.utils.gradcheck import gradcheck, gradgradcheck

SPECIAL = np.array([-np.inf, -2.0, -0.0, 0.0, 0.5, 2.0, np.inf, np.nan])


@pytest.fixture(scope="module")
def torch() -> Any:
    """PyTorch, the oracle (the tests that need it skip where it is absent)."""
    return pytest.importorskip("torch")


def inputs(shape: tuple[int, ...], seed: int) -> list[np.ndarray]:
    """Three float64 inputs: random, with ties (small integers), and special values."""
    rng = np.random.default_rng(seed)
    return [
        rng.standard_normal(shape),
        rng.integers(-2, 3, shape).astype(np.float64),
        rng.choice(SPECIAL, shape),
    ]


def grads(shape: tuple[int, ...], seed: int) -> list[np.ndarray]:
    """Incoming gradients: random, and ones with an inf in them."""
    rng = np.random.default_rng(seed)
    with_inf = np.ones(shape)
    with_inf.flat[rng.integers(with_inf.size)] = np.inf
    return [rng.standard_normal(shape), with_inf]


# ------------------------------------------------------------------ NumPy reference
def ref_length(n: int, k: int, s: int, p: int, d: int, ceil: bool) -> int:
    """PyTorch's documented output length, written from its docs."""
    exact = (n + 2 * p - d * (k - 1) - 1) / s
    out = (math.ceil(exact) if ceil else math.floor(exact)) + 1
    if ceil and (out - 1) * s >= n + p:  # the last window must start inside
        out -= 1
    return out


def ref_windows(
    size: tuple[int, ...],
    k: tuple[int, ...],
    s: tuple[int, ...],
    p: tuple[int, ...],
    d: tuple[int, ...],
    ceil: bool,
) -> tuple[tuple[int, ...], list[tuple[tuple[int, ...], list[tuple[int, ...]], int]]]:
    """Per output position: its in-input taps (row-major) and its tap count inside the
    padded extent."""
    out = tuple(ref_length(*a, ceil) for a in zip(size, k, s, p, d, strict=True))
    wins = []
    for o in itertools.product(*map(range, out)):
        taps, padded = [], 1
        for dim in range(len(size)):
            start = o[dim] * s[dim] - p[dim]
            stop = min(start + k[dim], size[dim] + p[dim])
            padded *= stop - start
        for t in itertools.product(*map(range, k)):
            pos = tuple(o[i] * s[i] - p[i] + t[i] * d[i] for i in range(len(size)))
            if all(0 <= pos[i] < size[i] for i in range(len(size))):
                taps.append(pos)
        wins.append((o, taps, padded))
    return out, wins


def ref_max(x: np.ndarray, g: np.ndarray | None, dims: int, *args: Any) -> tuple[Any, ...]:
    """Max pooling by loops: values, flat indices and the input gradient for ``g``."""
    size = x.shape[-dims:]
    out, wins = ref_windows(size, *args)
    lead = x.shape[:-dims]
    y, idx = np.zeros(lead + out), np.zeros(lead + out, np.int64)
    gx = np.zeros_like(x)
    for b in itertools.product(*map(range, lead)):
        for o, taps, _ in wins:
            best, where = -np.inf, taps[0]
            for t in taps:
                v = x[b + t]
                if v > best or np.isnan(v):
                    best, where = v, t
            y[b + o], idx[b + o] = x[b + where], np.ravel_multi_index(where, size)
            if g is not None:
                gx[b + where] += g[b + o]
    return y, idx, gx


def ref_avg(
    x: np.ndarray,
    g: np.ndarray | None,
    dims: int,
    geometry: list[tuple[int, ...]],
    ceil: bool,
    include: bool,
    divisor: int | None,
) -> tuple[np.ndarray, np.ndarray]:
    """Average pooling by loops: values and the input gradient for ``g``; ``geometry``
    is (kernel, stride, padding)."""
    k, s, p = geometry
    out, wins = ref_windows(x.shape[-dims:], k, s, p, (1,) * dims, ceil)
    lead = x.shape[:-dims]
    y, gx = np.zeros(lead + out), np.zeros_like(x)
    for b in itertools.product(*map(range, lead)):
        for o, taps, padded in wins:
            div = divisor or (padded if include else len(taps))
            y[b + o] = sum(x[b + t] for t in taps) / div
            for t in taps:
                if g is not None:
                    gx[b + t] += g[b + o] / div
    return y, gx


# ------------------------------------------------------------------ helpers
def run(
    fn: Callable[..., Any], x: np.ndarray, g: np.ndarray, *args: Any, **kwargs: Any
) -> tuple[Any, ...]:
    """Ours, ``fn(x, *args, **kwargs)``: (values, indices or None, input gradient for ``g``)."""
    t = mta.tensor(x, requires_grad=True)
    out = fn(t, *args, **kwargs)
    values, indices = out if isinstance(out, tuple) else (out, None)
    values.backward(mta.tensor(g))
    assert t.grad is not None
    index = None if indices is None else indices.numpy()
    return values.detach().numpy(), index, t.grad.numpy()


def run_torch(
    torch: Any, fn: Callable[..., Any], x: np.ndarray, g: np.ndarray, *args: Any, **kwargs: Any
) -> tuple[Any, ...]:
    """PyTorch's ``fn(x, *args, **kwargs)``: (values, indices or None, input gradient)."""
    t = torch.tensor(x, requires_grad=True)
    out = fn(t, *args, **kwargs)
    values, indices = out if isinstance(out, tuple) else (out, None)
    values.backward(torch.tensor(g))
    index = None if indices is None else indices.numpy()
    return values.detach().numpy(), index, t.grad.numpy()


def both(
    torch: Any,
    ours: Callable[..., Any],
    theirs: Callable[..., Any],
    x: np.ndarray,
    g: np.ndarray,
    *args: Any,
    **kwargs: Any,
) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """:func:`run` and :func:`run_torch` of the same call."""
    return run(ours, x, g, *args, **kwargs), run_torch(torch, theirs, x, g, *args, **kwargs)


def same(ours: tuple[Any, ...], theirs: tuple[Any, ...], exact: bool) -> None:
    for a, b in zip(ours, theirs, strict=True):
        if a is None or b is None:
            assert a is None and b is None
        elif exact:
            np.testing.assert_array_equal(a, b)
            if a.dtype.kind == "f":
                assert np.array_equal(np.signbit(a), np.signbit(b))
        else:
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def raises_alike(
    torch: Any, ours: Callable[..., Any], theirs: Callable[..., Any], shape: Any, *args: Any
) -> bool:
    """Whether both ``fn(zeros(shape), *args)`` raise (True) or neither does (False); one
    raising alone fails."""
    outcome = []
    for call, make in ((ours, mta.tensor), (theirs, torch.tensor)):
        try:
            call(make(np.zeros(shape)), *args)
            outcome.append(False)
        except (ValueError, RuntimeError):
            outcome.append(True)
    assert outcome[0] == outcome[1], f"ours raised: {outcome[0]}, PyTorch raised: {outcome[1]}"
    return outcome[0]


def pairs(*values: Any) -> list[tuple[int, ...]]:
    return [(v, v) if isinstance(v, int) else v for v in values]


GRID_2D = list(itertools.product([2, 3, (3, 2)], [None, 1, (2, 1)], [0, 1], [1, 2, (1, 2)]))


# ------------------------------------------------------------------ 2-d max and average
@pytest.mark.parametrize("ceil_mode", [False, True])
def test_max_pool2d_options_match_torch_and_loops(torch: Any, ceil_mode: bool) -> None:
    tf, shape, checked = torch.nn.functional, (2, 2, 7, 6), 0
    for kernel, stride, padding, dilation in GRID_2D:
        args = (kernel, stride, padding, dilation, ceil_mode, True)
        if raises_alike(torch, max_pool2d, tf.max_pool2d, shape, *args):
            continue
        for x in inputs(shape, checked):
            for g in grads(tf.max_pool2d(torch.tensor(x), *args)[0].shape, 1):
                ours, theirs = both(torch, max_pool2d, tf.max_pool2d, x, g, *args)
                same(ours, theirs, exact=True)
                geometry = pairs(kernel, stride or kernel, padding, dilation)
                same(ours, ref_max(x, g, 2, *geometry, ceil_mode), exact=True)
            checked += 1
    assert checked > 20


@pytest.mark.parametrize("ceil_mode", [False, True])
def test_avg_pool2d_options_match_torch_and_loops(torch: Any, ceil_mode: bool) -> None:
    tf, shape, checked = torch.nn.functional, (2, 2, 7, 6), 0
    options = itertools.product([True, False], [None, 3])
    grid = itertools.product([2, 3, (3, 2)], [None, 1, (2, 1)], [0, 1])
    for (kernel, stride, padding), (include, divisor) in itertools.product(grid, options):
        args = (kernel, stride, padding, ceil_mode, include, divisor)
        if raises_alike(torch, avg_pool2d, tf.avg_pool2d, shape, *args):
            continue
        for x in (inputs(shape, checked)[0], inputs(shape, checked)[2]):
            for g in grads(tf.avg_pool2d(torch.tensor(x), *args).shape, 2):
                ours, theirs = both(torch, avg_pool2d, tf.avg_pool2d, x, g, *args)
                same(ours, theirs, exact=False)
                geometry = pairs(kernel, stride or kernel, padding)
                y, gx = ref_avg(x, g, 2, geometry, ceil_mode, include, divisor)
                same(ours, (y, None, gx), exact=False)
        checked += 1
    assert checked > 20


def test_max_pool2d_with_indices_and_unbatched_input(torch: Any) -> None:
    x = inputs((3, 5, 6), 7)[2]
    values, indices = max_pool2d_with_indices(mta.tensor(x), 3, 2, 1, 2, True)
    want = torch.nn.functional.max_pool2d_with_indices(torch.tensor(x), 3, 2, 1, 2, True)
    np.testing.assert_array_equal(values.numpy(), want[0].numpy())
    np.testing.assert_array_equal(indices.numpy(), want[1].numpy())
    assert str(indices.dtype) == "int64"
    y = avg_pool2d(mta.tensor(x), 2, ceil_mode=True, divisor_override=3)
    np.testing.assert_allclose(
        y.numpy(),
        torch.nn.functional.avg_pool2d(torch.tensor(x), 2, ceil_mode=True, divisor_override=3),
    )


def test_default_options_keep_todays_path() -> None:
    """Defaults (and a ceil_mode that adds no window) run the 2-d ops of ``ops.pool``, with
    their fast paths; other options the general path."""
    x = mta.randn(1, 2, 6, 6, requires_grad=True)
    assert type(max_pool2d(x, 2).grad_fn).__name__ == "MaxPool2d"
    assert type(max_pool2d(x, 2, ceil_mode=True).grad_fn).__name__ == "MaxPool2d"  # 6 = 3 * 2
    assert type(avg_pool2d(x, 3, 3, 0, True).grad_fn).__name__ == "AvgPool2d"  # adds no window
    assert type(avg_pool2d(x, 2, ceil_mode=False).grad_fn).__name__ == "AvgPool2d"
    assert type(max_pool2d(x, 3, 2, ceil_mode=True).grad_fn).__name__ != "MaxPool2d"
    assert type(max_pool2d(x, 2, dilation=2).grad_fn).__name__ != "MaxPool2d"
    assert type(avg_pool2d(x, 2, divisor_override=2).grad_fn).__name__ == "AvgPoolNd"


# ------------------------------------------------------------------ 1-d and 3-d
@pytest.mark.parametrize("ceil_mode", [False, True])
def test_pool1d_matches_torch_and_loops(torch: Any, ceil_mode: bool) -> None:
    tf, shape, checked = torch.nn.functional, (2, 3, 9), 0
    for kernel, stride, padding, dilation in itertools.product([2, 3], [None, 2], [0, 1], [1, 2]):
        margs = (kernel, stride, padding, dilation, ceil_mode, True)
        if raises_alike(torch, pool1d.max_pool1d, tf.max_pool1d, shape, *margs):
            continue
        geo = [(v,) for v in (kernel, stride or kernel, padding, dilation)]
        for x in inputs(shape, checked):
            g = grads(tf.max_pool1d(torch.tensor(x), *margs)[0].shape, 3)[1]
            ours, theirs = both(torch, pool1d.max_pool1d, tf.max_pool1d, x, g, *margs)
            same(ours, theirs, exact=True)
            same(ours, ref_max(x, g, 1, *geo, ceil_mode), exact=True)
            for include in (True, False):
                aargs = (kernel, stride, padding, ceil_mode, include)
                ga = grads(tf.avg_pool1d(torch.tensor(x), *aargs).shape, 4)[1]
                ours, theirs = both(torch, pool1d.avg_pool1d, tf.avg_pool1d, x, ga, *aargs)
                same(ours, theirs, exact=False)
                y, gx = ref_avg(x, ga, 1, geo[:3], ceil_mode, include, None)
                same(ours, (y, None, gx), exact=False)
        checked += 1
    assert checked >= 8


def test_pool3d_matches_torch(torch: Any) -> None:
    tf = torch.nn.functional
    for kernel, stride, padding, dilation, ceil in [
        (2, None, 0, 1, False),
        (3, 2, 1, 1, True),
        ((2, 3, 2), (1, 2, 2), (1, 1, 0), (2, 1, 1), True),
    ]:
        for x in inputs((2, 2, 5, 6, 5), 5):
            margs = (kernel, stride, padding, dilation, ceil, True)
            g = grads(tf.max_pool3d(torch.tensor(x), *margs)[0].shape, 6)[1]
            same(*both(torch, pool3d.max_pool3d, tf.max_pool3d, x, g, *margs), exact=True)
            for include, divisor in [(True, None), (False, None), (True, 5)]:
                aargs = (kernel, stride, padding, ceil, include, divisor)
                g = grads(tf.avg_pool3d(torch.tensor(x), *aargs).shape, 7)[1]
                same(*both(torch, pool3d.avg_pool3d, tf.avg_pool3d, x, g, *aargs), exact=False)
    for size in [1, 2, (3, 1, 4), (4, 5, 3)]:
        for x in inputs((2, 2, 4, 5, 3), 8):
            g = grads(tf.adaptive_avg_pool3d(torch.tensor(x), size).shape, 9)[1]
            pools = (pool3d.adaptive_avg_pool3d, tf.adaptive_avg_pool3d)
            same(*both(torch, *pools, x, g, size), exact=False)


def test_adaptive_pool1d_matches_torch(torch: Any) -> None:
    tf = torch.nn.functional
    for length, size in [(7, 3), (5, 5), (4, 1), (3, 5), (9, 4)]:
        for x in inputs((2, 3, length), length) + [inputs((3, length), 1)[2]]:
            g = grads(tf.adaptive_avg_pool1d(torch.tensor(x), size).shape, 2)[1]
            avg = (pool1d.adaptive_avg_pool1d, tf.adaptive_avg_pool1d)
            same(*both(torch, *avg, x, g, size), exact=False)
            top = (pool1d.adaptive_max_pool1d, tf.adaptive_max_pool1d)
            same(*both(torch, *top, x, g, size, True), exact=True)


# ------------------------------------------------------------------ unpooling
def test_max_unpool_matches_torch(torch: Any) -> None:
    tf = torch.nn.functional
    cases: list[tuple[int, tuple[int, ...], Any, Any, Any, Any]] = [
        (1, (2, 3, 9), 3, 2, 1, None),
        (1, (3, 8), 2, None, 0, (9,)),
        (2, (2, 2, 7, 6), 2, None, 0, (2, 2, 7, 7)),
        (2, (2, 7, 6), 3, 2, 1, None),
        (3, (1, 2, 4, 5, 4), 2, None, 0, (5, 5, 4)),
    ]
    ours_pool: dict[int, Callable[..., Any]] = {
        1: pool1d.max_pool1d,
        2: max_pool2d,
        3: pool3d.max_pool3d,
    }
    ours_unpool: dict[int, Callable[..., Tensor]] = {
        1: unpool.max_unpool1d,
        2: unpool.max_unpool2d,
        3: unpool.max_unpool3d,
    }
    for dims, shape, kernel, stride, padding, size in cases:
        x = np.random.default_rng(dims).permutation(math.prod(shape)).reshape(shape) * 1.0
        pool, unpool_t = getattr(tf, f"max_pool{dims}d"), getattr(tf, f"max_unpool{dims}d")
        values, indices = pool(torch.tensor(x), kernel, stride, padding, return_indices=True)
        _, ours_indices = ours_pool[dims](mta.tensor(x), kernel, stride, padding, 1, False, True)
        np.testing.assert_array_equal(ours_indices.numpy(), indices.numpy())
        want = unpool_t(values, indices, kernel, stride, padding, size)
        g, v = grads(tuple(want.shape), 3)[1], values.detach().numpy()
        ours = run(ours_unpool[dims], v, g, ours_indices, kernel, stride, padding, size)
        theirs = run_torch(torch, unpool_t, v, g, indices, kernel, stride, padding, size)
        same(ours, theirs, exact=True)


def test_max_unpool_errors() -> None:
    values, indices = max_pool2d(mta.randn(1, 1, 4, 4), 2, return_indices=True)
    with pytest.raises(ValueError, match=r"invalid output_size .* must be between 2 and 6"):
        unpool.max_unpool2d(values, indices, 2, output_size=(9, 9))
    with pytest.raises(ValueError, match="2 or 4 elements, but it has a length of '3'"):
        unpool.max_unpool2d(values, indices, 2, output_size=(4, 4, 4))
    with pytest.raises(ValueError, match="invalid max index 100 .* 4x4"):
        unpool.max_unpool2d(values, mta.tensor([[[[0, 1], [100, 2]]]]), 2)
    with pytest.raises(TypeError, match="indices must be an int64 Tensor"):
        unpool.max_unpool2d(values, indices.float(), 2)
    with pytest.raises(ValueError, match="indices of its shape"):
        unpool.max_unpool2d(values, indices[..., :1], 2)


# ------------------------------------------------------------------ LP pooling
@pytest.mark.parametrize("norm_type", [1, 2, 3.5, math.inf, -math.inf])
def test_lp_pool_matches_torch(torch: Any, norm_type: float) -> None:
    tf = torch.nn.functional
    rng = np.random.default_rng(4)
    for dims, kernel, stride, ceil in [
        (1, 3, 2, True),
        (1, 2, None, False),
        (2, 2, 1, False),
        (2, (3, 2), 2, True),
    ]:
        shape = (2, 2, 7) if dims == 1 else (2, 2, 5, 6)
        for x in (np.abs(rng.standard_normal(shape)) + 0.1, rng.standard_normal(shape)):
            fn = getattr(tf, f"lp_pool{dims}d")
            ours_fn = getattr(lp_pool, f"lp_pool{dims}d")
            g = grads(tuple(fn(torch.tensor(x), norm_type, kernel, stride, ceil).shape), 5)[0]
            args = (norm_type, kernel, stride, ceil)
            same(*both(torch, ours_fn, fn, x, g, *args), exact=False)


def test_lp_pool_special_values_match_torch(torch: Any) -> None:
    x = inputs((2, 3, 8), 3)[2]
    for norm_type in (1, 2, math.inf):
        ours = lp_pool.lp_pool1d(mta.tensor(x), norm_type, 2).numpy()
        want = torch.nn.functional.lp_pool1d(torch.tensor(x), norm_type, 2).numpy()
        np.testing.assert_allclose(ours, want, rtol=1e-12)


# ------------------------------------------------------------------ every device
@pytest.mark.parametrize("device", DEVICES)
def test_general_paths_on_each_device_match_the_host(device: str) -> None:
    x = inputs((2, 2, 7, 6), 11)[2]
    g = grads((2, 2, 4, 4), 12)[1]

    def results(dev: str) -> list[np.ndarray]:
        t = mta.tensor(x, device=dev, requires_grad=True)
        values, indices = max_pool2d(t, 3, 2, 1, 1, True, True)
        averaged = avg_pool2d(t, 3, 2, 1, True, False)
        unpooled = unpool.max_unpool2d(values, indices, 3, 2, 1, (7, 6))
        flat = t.flatten(2)
        lengths = (
            pool1d.avg_pool1d(flat, 4, 3, 2, True).sum()
            + pool1d.max_pool1d(flat, 4, 3, 2, 2, True).sum()
        )
        total = (values * mta.tensor(g, device=dev)).sum() + averaged.sum() + unpooled.sum()
        (total + lengths).backward()
        assert t.grad is not None and values.device == mta.Device(dev)
        outs = [values, indices, averaged, unpooled, lengths, t.grad]
        return [to_host(o) for o in outs]

    for ours, host in zip(results(device), results("cpu"), strict=True):
        np.testing.assert_allclose(ours, host, rtol=1e-12)


# ------------------------------------------------------------------ finite differences
def test_gradients_match_finite_differences() -> None:
    rng = np.random.default_rng(0)
    x2 = mta.tensor(rng.permutation(2 * 7 * 6).reshape(1, 2, 7, 6) / 10.0, requires_grad=True)
    x1 = mta.tensor(rng.permutation(2 * 9).reshape(1, 2, 9) / 10.0, requires_grad=True)
    x3 = mta.tensor(rng.permutation(60).reshape(1, 1, 3, 5, 4) / 10.0, requires_grad=True)
    positive = mta.tensor(rng.random((1, 2, 7)) + 0.5, requires_grad=True)
    cases: list[tuple[Callable[[Tensor], Tensor], Tensor]] = [
        (lambda t: max_pool2d(t, 3, 2, 1, 2, True), x2),
        (lambda t: avg_pool2d(t, 3, 2, 1, True, False), x2),
        (lambda t: avg_pool2d(t, (3, 2), 2, 1, True, True, 5), x2),
        (lambda t: pool1d.max_pool1d(t, 3, 2, 1, 2, True), x1),
        (lambda t: pool1d.avg_pool1d(t, 2, 2, 1, True, False), x1),
        (lambda t: pool1d.adaptive_max_pool1d(t, 4), x1),
        (lambda t: pool1d.adaptive_avg_pool1d(t, 4), x1),
        (lambda t: pool3d.max_pool3d(t, 2, 2, 1, 1, True), x3),
        (lambda t: pool3d.avg_pool3d(t, 2, 2, 1, True, True, 3), x3),
        (lambda t: pool3d.adaptive_avg_pool3d(t, (2, 3, 3)), x3),
        (lambda t: lp_pool.lp_pool1d(t, 2.5, 3, 2, True), positive),
    ]
    for fn, x in cases:
        assert gradcheck(fn, [x], atol=1e-6, rtol=1e-5)
        assert gradgradcheck(lambda t, f=fn: f(t) ** 2, [x], atol=1e-6, rtol=1e-5)
    values, indices = max_pool2d(x2.detach(), 2, 2, 0, 1, True, True)  # no repeated index
    v = mta.tensor(values.numpy(), requires_grad=True)
    assert gradcheck(lambda t: unpool.max_unpool2d(t, indices, 2, 2, 0, (7, 6)), [v])
    assert gradgradcheck(lambda t: unpool.max_unpool2d(t, indices, 2, 2, 0, (7, 6)) ** 2, [v])


# ------------------------------------------------------------------ layers and Sequential
def test_layers_match_torch_values_and_repr(torch: Any) -> None:
    tn = torch.nn
    pairs: list[tuple[Any, Any, tuple[int, ...]]] = [
        (nn.MaxPool2d(3, 2, 1, 2, False, True), tn.MaxPool2d(3, 2, 1, 2, False, True), (2, 7, 6)),
        (
            nn.AvgPool2d(3, 2, 1, True, False, None),
            tn.AvgPool2d(3, 2, 1, True, False, None),
            (2, 7, 6),
        ),
        (nn.AvgPool2d(2, divisor_override=3), tn.AvgPool2d(2, divisor_override=3), (2, 7, 6)),
        (MaxPool1d(3, 2, 1, 2, False, True), tn.MaxPool1d(3, 2, 1, 2, False, True), (2, 9)),
        (AvgPool1d(3, 2, 1, True), tn.AvgPool1d(3, 2, 1, True), (2, 9)),
        (MaxPool3d(2, ceil_mode=True), tn.MaxPool3d(2, ceil_mode=True), (2, 3, 5, 5)),
        (
            AvgPool3d(2, 1, 1, divisor_override=2),
            tn.AvgPool3d(2, 1, 1, divisor_override=2),
            (2, 3, 5, 5),
        ),
        (AdaptiveAvgPool1d(4), tn.AdaptiveAvgPool1d(4), (2, 9)),
        (AdaptiveMaxPool1d(4), tn.AdaptiveMaxPool1d(4), (2, 9)),
        (AdaptiveAvgPool3d((2, 1, 3)), tn.AdaptiveAvgPool3d((2, 1, 3)), (2, 3, 5, 5)),
        (LPPool1d(2, 3, 2), tn.LPPool1d(2, 3, 2), (2, 9)),
        (LPPool2d(1.5, 2, ceil_mode=True), tn.LPPool2d(1.5, 2, ceil_mode=True), (2, 7, 5)),
    ]
    rng = np.random.default_rng(1)
    for ours, theirs, shape in pairs:
        x = np.abs(rng.standard_normal(shape)) + 0.1
        assert repr(ours) == repr(theirs)
        np.testing.assert_allclose(
            ours(mta.tensor(x)).numpy(), theirs(torch.tensor(x)).numpy(), rtol=1e-12
        )
    for layer, twin in [
        (MaxUnpool1d(2, 1), tn.MaxUnpool1d(2, 1)),
        (MaxUnpool2d(2), tn.MaxUnpool2d(2)),
        (MaxUnpool3d((2, 1, 2), padding=1), tn.MaxUnpool3d((2, 1, 2), padding=1)),
    ]:
        assert repr(layer) == repr(twin)
    x = rng.standard_normal((1, 2, 4, 6))
    values, indices = nn.MaxPool2d(2, return_indices=True)(mta.tensor(x))
    want = tn.MaxUnpool2d(2)(*tn.MaxPool2d(2, return_indices=True)(torch.tensor(x)))
    np.testing.assert_array_equal(MaxUnpool2d(2)(values, indices).numpy(), want.numpy())


@pytest.mark.parametrize(
    "pool",
    [
        lambda: nn.MaxPool2d(2, ceil_mode=True),
        lambda: nn.MaxPool2d(2, dilation=2),
        lambda: nn.MaxPool2d(2, return_indices=True),
    ],
    ids=["ceil_mode", "dilation", "return_indices"],
)
def test_sequential_does_not_fuse_or_reorder_pools_with_options(
    torch: Any, pool: Callable[[], nn.MaxPool2d]
) -> None:
    mta.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), pool())
    conv_only = nn.Sequential(nn.Conv2d(1, 2, 3), pool())
    relu_pool = nn.Sequential(nn.Identity(), nn.ReLU(), pool())
    assert [net.fused_conv_pool(i) for i in range(3)] == [0, 0, 0]
    assert conv_only.fused_conv_pool(0) == 0
    assert not net.runs_pool_first(1) and not relu_pool.runs_pool_first(1)
    plain = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.MaxPool2d(2))
    assert plain.fused_conv_pool(0) == 3 and plain.runs_pool_first(1)  # unchanged

    x = np.random.default_rng(0).standard_normal((2, 1, 9, 8))
    conv, layer = net[0], net[2]
    twin = torch.nn.Sequential(
        torch.nn.Conv2d(1, 2, 3).double(),
        torch.nn.ReLU(),
        torch.nn.MaxPool2d(
            layer.kernel_size,
            layer.stride,
            layer.padding,
            layer.dilation,
            layer.return_indices,
            layer.ceil_mode,
        ),
    )
    with torch.no_grad():
        twin[0].weight.copy_(torch.tensor(conv.weight.detach().numpy()))
        twin[0].bias.copy_(torch.tensor(conv.bias.detach().numpy()))
    net.double()
    ours, theirs = net(mta.tensor(x)), twin(torch.tensor(x))
    if layer.return_indices:
        np.testing.assert_array_equal(ours[1].numpy(), theirs[1].numpy())
        ours, theirs = ours[0], theirs[0]
    np.testing.assert_allclose(
        ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12, atol=1e-14
    )
    direct = conv.forward_max_pooled(mta.tensor(x), layer, relu=True)
    direct = direct[0] if isinstance(direct, tuple) else direct
    np.testing.assert_allclose(
        direct.detach().numpy(), ours.detach().numpy(), rtol=1e-12, atol=1e-14
    )


# ------------------------------------------------------------------ errors
def test_errors_name_the_problem() -> None:
    x = mta.randn(1, 1, 5, 5)
    with pytest.raises(ValueError, match="padding must be >= 0 and at most half the kernel"):
        max_pool2d(x, 3, padding=2, dilation=2)
    with pytest.raises(ValueError, match="padding must be >= 0 and at most half the kernel"):
        avg_pool2d(x, 2, padding=2, ceil_mode=True)
    with pytest.raises(ValueError, match=r"output size \(0, 0\) is too small"):
        max_pool2d(x, 3, dilation=3)
    with pytest.raises(ValueError, match="must be positive"):
        max_pool2d(x, 2, dilation=0)
    with pytest.raises(ValueError, match="divisor_override must not be zero"):
        avg_pool2d(x, 2, divisor_override=0)
    with pytest.raises(ValueError, match="output size .* is too small"):
        pool1d.max_pool1d(mta.randn(1, 1, 5), 7)
    with pytest.raises(ValueError, match="expected a non-empty 2-D .* or 3-D input"):
        pool1d.max_pool1d(mta.randn(5), 2)
    with pytest.raises(ValueError, match="kernel_size must be an int or 2 ints"):
        max_pool2d(x, (2, 2, 2), return_indices=True)
    with pytest.raises(TypeError, match="must be floating point"):
        pool1d.avg_pool1d(mta.tensor([[[1, 2]]]), 2)
    with pytest.raises(ValueError, match="2-D .* or 3-D"):
        pool1d.adaptive_avg_pool1d(mta.randn(1, 1, 1, 4), 2)
    with pytest.raises(ValueError, match="norm_type must be a non-zero number"):
        lp_pool.lp_pool2d(x, 0, 2)


def test_functional_names_are_torch_signatures(torch: Any) -> None:
    """F's pooling functions take PyTorch's positional order (ceil_mode before
    count_include_pad in avg_pool2d)."""
    x = np.random.default_rng(2).standard_normal((1, 1, 5, 5))
    ours = F.avg_pool2d(mta.tensor(x), 2, 2, 0, True, False)
    want = torch.nn.functional.avg_pool2d(torch.tensor(x), 2, 2, 0, True, False)
    np.testing.assert_allclose(ours.numpy(), want.numpy(), rtol=1e-12)
    ours_m = F.max_pool2d(mta.tensor(x), 2, 1, 1, 2, True, True)
    want_m = torch.nn.functional.max_pool2d(torch.tensor(x), 2, 1, 1, 2, True, True)
    np.testing.assert_array_equal(ours_m[1].numpy(), want_m[1].numpy())
