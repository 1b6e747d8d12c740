"""Convolution and pooling in two tiers: the reference code of ``ops/conv.py`` and
``ops/pool.py`` against the backends' fast forwards (``backends/numpy/fast_conv.py``,
``backends/cupy/fast_conv.py``), with ``fast_paths`` on and off.

Tolerances, in float64:

* pooling: the same operations in the same order on both tiers (max over the taps in
  row-major order, the taps summed in that order, each window's gradient routed to its
  first maximum), so values and gradients agree to 1e-10 (in fact exactly);
* convolution: the same products, summed in another order (the fast tier orders the
  im2col columns (kh, kw, c) and multiplies one matrix per group, or adds the bias
  inside the GEMM; the reference orders them (c, kh, kw) in a batched matmul), so the
  results agree to rounding: 1e-10 relative to the largest value, about a million
  times the float64 rounding of these short sums.

The ``strict`` stand-in for CuPy (``tests/support``) has no fast table of its own: the
tests register the CuPy backend's fast forwards for it, which on a backend without the
CUDA image kernels run their array-module code (the layout-keeping kernels of
``backends/conv_kernels.py`` and ``backends/pool_kernels.py``) under CuPy's rules.
Adaptive average pooling has one tier only (two small matrix products), so it is
not compared here.
"""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from support.strict_backend import registered

import minitorch_accel as mta
import minitorch_accel.nn.functional as F
from minitorch_accel.backends import fast_paths
from minitorch_accel.backends.cupy import fast_conv as cupy_fast_conv
from minitorch_accel.backends.numpy import fast_conv as numpy_fast_conv
from minitorch_accel.core.tensor import Tensor
from minitorch_accel.nn.models import LeNet
from minitorch_accel.ops import conv, conv_pool, pool
from minitorch_accel.utils import gradcheck, gradgradcheck

ROOT = Path(__file__).resolve().parents[1]

#: (x shape, w shape, stride, padding, dilation, groups)
CONV_CASES = [
    ((2, 1, 9, 9), (4, 1, 3, 3), 1, 0, 1, 1),  # a first layer: kernel-major cols, bias in GEMM
    ((3, 8, 7, 8), (6, 8, 3, 3), 1, 1, 1, 1),  # channels-last cols, padding
    ((2, 4, 9, 7), (6, 2, 3, 2), (2, 1), (1, 0), (1, 2), 2),  # everything, groups
    ((2, 6, 6, 6), (6, 1, 3, 3), 2, 1, 1, 6),  # depthwise
]
POOL_CASES = [(2, None, 0), (3, 1, 1), ((3, 2), (2, 1), (1, 0))]


@pytest.fixture(params=["cpu", "cpu:1", "cpu-2-threads", "strict", "strict:1"])
def device(request: pytest.FixtureRequest) -> Iterator[str]:
    """A device on which both tiers run (the CPU at one and at two threads)."""
    if request.param.startswith("strict"):
        with registered():
            for name, fast in cupy_fast_conv.FAST_FORWARDS.items():
                fast_paths.register_fast("strict", name, fast)
            try:
                yield request.param
            finally:
                fast_paths.table("strict").clear()
        return
    threads = mta.get_num_threads()
    mta.set_num_threads(2 if request.param == "cpu-2-threads" else 1)
    try:
        yield "cpu" if request.param == "cpu-2-threads" else request.param
    finally:
        mta.set_num_threads(threads)


def host(t: Tensor) -> np.ndarray:
    return t.detach().to("cpu").numpy()


def both_tiers(
    fn: Callable[..., Tensor], arrays: list[np.ndarray], device: str, order: int = 1
) -> tuple[list[np.ndarray], list[np.ndarray], dict[str, int]]:
    """Values and gradients (of order 1, or 1 and 2) of ``fn`` with the fast paths on
    and off, and how often each fast forward ran.
    """
    calls: dict[str, int] = {}
    backend = mta.Device(device).backend
    table = dict(backend.fast_forwards)

    def counted(name: str, fast: Callable[..., Any]) -> Callable[..., Any]:
        def run(*args: Any, **kwargs: Any) -> Any:
            calls[name] = calls.get(name, 0) + 1
            return fast(*args, **kwargs)

        return run

    results = []
    for on in (True, False):
        backend.fast_forwards.update({k: counted(k, v) for k, v in table.items()})
        try:
            with mta.fast_paths(on):
                results.append(evaluate(fn, arrays, device, order))
        finally:
            backend.fast_forwards.update(table)
        if on:
            assert calls, "no fast forward ran with the fast paths on"
            ran = dict(calls)
        else:
            assert calls == ran, "a fast forward ran with the fast paths off"
    return results[0], results[1], ran


def evaluate(
    fn: Callable[..., Tensor], arrays: list[np.ndarray], device: str, order: int
) -> list[np.ndarray]:
    inputs = [mta.tensor(a, device=device, requires_grad=True) for a in arrays]
    out = fn(*inputs)
    weights = mta.tensor(np.random.default_rng(7).standard_normal(out.shape), device=device)
    grads = mta.autograd.grad((out * weights).sum(), inputs, create_graph=order == 2)
    found = [host(out)] + [host(g) for g in grads]
    if order == 2:
        second = sum(((g * g).sum() for g in grads), mta.tensor(0.0, device=device))
        found += [host(g) for g in mta.autograd.grad(second, inputs)]
    return found


def assert_agree(fast: list[np.ndarray], reference: list[np.ndarray], rtol: float) -> None:
    assert len(fast) == len(reference)
    for a, b in zip(fast, reference, strict=True):
        assert a.shape == b.shape and a.dtype == b.dtype == np.float64
        np.testing.assert_allclose(a, b, rtol=0, atol=rtol * max(1.0, float(np.abs(b).max())))


def conv_arrays(case: tuple[Any, ...], bias: bool) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    x_shape, w_shape = case[:2]
    arrays = [rng.standard_normal(x_shape), rng.standard_normal(w_shape)]
    return arrays + [rng.standard_normal(w_shape[0])] if bias else arrays


#: Fast paths of ``+ - * /`` that the loss of :func:`evaluate` runs as well.
ARITHMETIC = {"Add", "Sub", "Mul", "Div"}


# ------------------------------------------------------------------ convolution
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no_bias"])
@pytest.mark.parametrize("case", CONV_CASES, ids=["first", "padded", "mixed", "depthwise"])
def test_conv2d_tiers_agree(device: str, case: tuple[Any, ...], bias: bool) -> None:
    stride, padding, dilation, groups = case[2:]

    def fn(x: Tensor, w: Tensor, b: Tensor | None = None) -> Tensor:
        return F.conv2d(x, w, b, stride, padding, dilation, groups)

    fast, reference, ran = both_tiers(fn, conv_arrays(case, bias), device)
    assert_agree(fast, reference, 1e-10)
    expected = {"Conv2d", "Conv2dGradInput", "Conv2dGradWeight"} | (
        {"Conv2dGradBias"} if bias else set()
    )
    assert set(ran) - ARITHMETIC == expected


def test_conv2d_double_backward_tiers_agree(device: str) -> None:
    case = CONV_CASES[2]
    stride, padding, dilation, groups = case[2:]

    def fn(x: Tensor, w: Tensor, b: Tensor) -> Tensor:
        return F.conv2d(x, w, b, stride, padding, dilation, groups).tanh()

    fast, reference, ran = both_tiers(fn, conv_arrays(case, True), device, order=2)
    assert_agree(fast, reference, 1e-10)
    assert len(fast) == 7 and ran["Conv2d"] >= 2  # forward, then inside the double backward


@pytest.mark.parametrize("stride, padding, dilation", [(1, 0, 1), (2, 2, 2)])
def test_conv1d_tiers_agree(device: str, stride: int, padding: int, dilation: int) -> None:
    rng = np.random.default_rng(3)
    arrays = [
        rng.standard_normal((2, 4, 11)),
        rng.standard_normal((6, 2, 3)),
        rng.standard_normal(6),
    ]

    def fn(x: Tensor, w: Tensor, b: Tensor) -> Tensor:
        return F.conv1d(x, w, b, stride, padding, dilation, groups=2)

    fast, reference, _ = both_tiers(fn, arrays, device)
    assert_agree(fast, reference, 1e-10)
    assert fast[0].shape == (2, 6, (11 + 2 * padding - dilation * 2 - 1) // stride + 1)


SMALL_CONV_CASES = [
    ((1, 2, 5, 5), (3, 2, 3, 3), 1, 1, 1, 1),
    ((2, 4, 6, 5), (4, 2, 3, 2), (2, 1), (1, 0), (1, 2), 2),
]


@pytest.mark.parametrize("case", SMALL_CONV_CASES, ids=["padded", "mixed"])
def test_reference_conv_gradients_match_finite_differences(case: tuple[Any, ...]) -> None:
    stride, padding, dilation, groups = case[2:]
    x, w, b = (mta.tensor(a, requires_grad=True) for a in conv_arrays(case, True))

    def fn(x: Tensor, w: Tensor, b: Tensor) -> Tensor:
        return F.conv2d(x, w, b, stride, padding, dilation, groups)

    with mta.fast_paths(False):
        assert gradcheck(fn, [x, w, b], atol=1e-6, rtol=1e-5)
        assert gradgradcheck(fn, [x, w, b], atol=1e-6, rtol=1e-5)


# ------------------------------------------------------------------ pooling
def pool_input(ties: bool) -> np.ndarray:
    x = np.random.default_rng(1).standard_normal((2, 3, 7, 8))
    return np.maximum(np.round(x), 0) if ties else x  # ties: ReLU zeros, repeated values


@pytest.mark.parametrize("ties", [False, True], ids=["distinct", "ties"])
@pytest.mark.parametrize("args", POOL_CASES, ids=["2x2", "3x3_pad", "3x2_mixed"])
def test_max_pool2d_tiers_agree(device: str, args: tuple[Any, ...], ties: bool) -> None:
    fast, reference, ran = both_tiers(lambda x: F.max_pool2d(x, *args), [pool_input(ties)], device)
    assert_agree(fast, reference, 1e-10)
    assert set(ran) - ARITHMETIC == {"MaxPool2d", "MaxPool2dBackward"}


def test_max_pool2d_double_backward_tiers_agree(device: str) -> None:
    def fn(x: Tensor) -> Tensor:
        return F.max_pool2d(x, 3, 1, 1) ** 2

    fast, reference, ran = both_tiers(fn, [pool_input(False)], device, order=2)
    assert_agree(fast, reference, 1e-10)
    assert "MaxPool2dPick" in ran


@pytest.mark.parametrize("count_include_pad", [True, False])
@pytest.mark.parametrize("args", POOL_CASES, ids=["2x2", "3x3_pad", "3x2_mixed"])
def test_avg_pool2d_tiers_agree(
    device: str, args: tuple[Any, ...], count_include_pad: bool
) -> None:
    def fn(x: Tensor) -> Tensor:
        kernel_size, stride, padding = args
        return (
            F.avg_pool2d(x, kernel_size, stride, padding, count_include_pad=count_include_pad) ** 2
        )

    fast, reference, ran = both_tiers(fn, [pool_input(False)], device, order=2)
    assert_agree(fast, reference, 1e-10)
    assert {"AvgPool2d", "AvgPool2dBackward"} <= set(ran)


def test_reference_pool_gradients_match_finite_differences() -> None:
    x = mta.tensor(pool_input(False), requires_grad=True)
    with mta.fast_paths(False):
        for fn in (
            lambda t: F.max_pool2d(t, 3, 2, 1),
            lambda t: F.avg_pool2d(t, 3, 2, 1, count_include_pad=False),
        ):
            assert gradcheck(fn, [x], atol=1e-6, rtol=1e-5)
            assert gradgradcheck(lambda t, f=fn: f(t) ** 2, [x], atol=1e-6, rtol=1e-5)


def test_lenet_layers_train_alike_on_both_tiers() -> None:
    """A few SGD steps of LeNet's conv/pool stack in float64: the tiers stay together."""

    def train() -> list[np.ndarray]:
        mta.manual_seed(0)
        model = LeNet().double()
        opt = mta.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        data = np.random.default_rng(0)
        x = mta.tensor(data.random((8, 1, 28, 28)))
        y = mta.tensor(data.integers(0, 10, 8))
        for _ in range(3):
            opt.zero_grad()
            mta.nn.CrossEntropyLoss()(model(x), y).backward()
            opt.step()
        return [p.detach().numpy() for p in model.parameters()]

    fast = train()
    with mta.fast_paths(False):
        reference = train()
    assert_agree(fast, reference, 1e-9)


# ------------------------------------------------------------------ the switch and the code
def test_environment_variable_turns_the_fast_paths_off() -> None:
    script = (
        "import numpy as np, minitorch_accel as mta\n"
        "x, w = mta.tensor(np.ones((2, 8, 5, 5))), mta.tensor(np.ones((4, 8, 3, 3)))\n"
        "y = mta.nn.functional.conv2d(x, w)\n"
        "print(mta.is_fast_paths_enabled(), y.array.flags.c_contiguous)\n"
    )
    found = {}
    for value in ("0", "1"):
        env = {**os.environ, "MINITORCH_ACCEL_FAST_PATHS": value, "PYTHONPATH": str(ROOT)}
        run = subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
        )
        assert run.returncode == 0, run.stderr
        found[value] = run.stdout.split()
    # off: the reference's NCHW output; on: the fast tier's NCHW view of NHWC memory
    assert found == {"0": ["False", "True"], "1": ["True", "False"]}


REFERENCE_BODIES: list[Any] = [
    conv.im2col,
    conv.col2im,
    conv.weight_matrix,
    *(
        f
        for c in (conv.Conv2d, conv.Conv2dGradInput, conv.Conv2dGradWeight, conv.Conv2dGradBias)
        for f in (c.forward, c.backward)
    ),
]
POOL_BODIES: list[Any] = [
    pool.taps,
    pool.first_max,
    pool.scatter,
    pool.window_size,
    *(
        f
        for c in (
            pool.MaxPool2d,
            pool.MaxPool2dBackward,
            pool.MaxPool2dPick,
            pool.AvgPool2d,
            pool.AvgPool2dBackward,
        )
        for f in (c.forward, c.backward)
    ),
]


@pytest.mark.parametrize("body", REFERENCE_BODIES + POOL_BODIES, ids=lambda f: f.__qualname__)
def test_reference_bodies_carry_no_fast_path_hooks(body: Any) -> None:
    source = inspect.getsource(body)
    for hook in (
        "kernel(",
        "cupy",
        "buffer_cache",
        "getrefcount",
        "NHWC",
        "channels_last",
        "threads",
    ):
        assert hook not in source, f"{body.__qualname__} uses {hook}"


def test_every_fast_forward_has_a_reference() -> None:
    for table in (numpy_fast_conv.FAST_FORWARDS, cupy_fast_conv.FAST_FORWARDS):
        for name in table:
            cls = getattr(conv, name, None) or getattr(conv_pool, name, None) or getattr(pool, name)
            assert cls.op_name == name and "forward" in vars(cls)
    assert fast_paths.table("cpu").keys() >= numpy_fast_conv.FAST_FORWARDS.keys()
    threads = mta.get_num_threads()
    mta.set_num_threads(2)  # where the CPU's threaded kernels were handed out by name
    try:
        for name in ("conv2d_forward", "conv2d_grad_input", "max_pool2d_forward", "im2col"):
            assert mta.Device("cpu").backend.kernel(name) is None, name
    finally:
        mta.set_num_threads(threads)
