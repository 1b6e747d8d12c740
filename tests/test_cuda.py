"""The CuPy backend and ``minitorch_accel.cuda``.

The first part runs everywhere: the utilities must answer sensibly without a GPU, the
out-of-memory error must say what happened, the allocator must track peaks. The
second part (``@pytest.mark.gpu``) needs CuPy and a CUDA GPU and is skipped otherwise:
the op suite against the CPU, non-blocking copies, memory statistics, several GPUs,
out-of-memory translation and the fused kernels against the generic ``xp`` code.
"""

from __future__ import annotations

import pickle
import types
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from helpers import cuda_available
from test_strict_backend import CASES, INT, F, evaluate, functional, needs_conv, needs_pool

import minitorch_accel as mta
import minitorch_accel.cuda as mcuda
from minitorch_accel.backends.cuda_memory import (
    OutOfMemoryError,
    TrackingAllocator,
    format_bytes,
    is_out_of_memory,
)
from minitorch_accel.ops import conv_kernels as ck
from minitorch_accel.optim.adam import adam_update
from minitorch_accel.optim.sgd import sgd_update

GPU = cuda_available()
gpu = pytest.mark.gpu
needs_gpu = pytest.mark.skipif(not GPU, reason="needs CuPy and a CUDA GPU")


# ------------------------------------------------------------------ without a GPU
@pytest.mark.skipif(GPU, reason="checks the behaviour on machines without a GPU")
def test_utilities_without_a_gpu() -> None:
    assert mcuda.is_available() is False and mcuda.device_count() == 0
    assert mcuda.memory_allocated() == 0 and mcuda.max_memory_allocated("cuda:1") == 0
    assert mcuda.memory_reserved(0) == 0 and mcuda.memory_stats()["total"] == 0
    mcuda.empty_cache()
    mcuda.reset_peak_memory_stats()
    for needs in (mcuda.synchronize, mcuda.get_device_name, mcuda.mem_get_info):
        with pytest.raises(RuntimeError, match="device 'cuda' needs"):
            needs()


def test_device_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match="expected a CUDA device such as 'cuda:0', got 'cpu:1'"):
        mcuda.memory_allocated("cpu:1")
    with pytest.raises(ValueError, match="a GPU index is non-negative, got -1"):
        mcuda.memory_reserved(-1)


def test_out_of_memory_error_message() -> None:
    err = OutOfMemoryError("cuda:1", requested=3 << 30, free=512 << 20, total=80 << 30,
                           allocated=70 << 30, held=79 << 30)
    assert isinstance(err, MemoryError) and isinstance(err, RuntimeError)
    assert str(err).startswith(
        "CUDA out of memory on cuda:1: tried to allocate 3.00 GiB; 512.00 MiB free of "
        "80.00 GiB total (this process: 70.00 GiB in arrays, 79.00 GiB held"
    )
    assert "empty_cache()" in str(err)
    again = pickle.loads(pickle.dumps(err))
    assert (again.device, again.requested, again.free, str(again)) == (
        "cuda:1", 3 << 30, 512 << 20, str(err))
    assert mcuda.OutOfMemoryError is OutOfMemoryError


@pytest.mark.parametrize("n, text", [(None, "unknown"), (12, "12 B"), (1536, "1.50 KiB"),
                                     (5 << 40, "5120.00 GiB")])
def test_format_bytes(n: int | None, text: str) -> None:
    assert format_bytes(n) == text


def test_translate_oom_from_cupy_error() -> None:
    cupy = pytest.importorskip("cupy")
    exc = cupy.cuda.memory.OutOfMemoryError(1000, 500, 0)
    assert is_out_of_memory(exc) and not is_out_of_memory(ValueError("x"))
    err = mcuda.translate_oom(exc, "cuda:0")
    assert isinstance(err, OutOfMemoryError) and err.requested == 1000 and err.device == "cuda:0"
    assert "tried to allocate 1000 B" in str(err)
    with pytest.raises(OutOfMemoryError, match="tried to allocate 1000 B") as info:
        with mcuda.oom_guard(0):
            raise exc
    assert info.value.__cause__ is exc
    with pytest.raises(KeyError), mcuda.oom_guard():
        raise KeyError("other errors pass through")


class FakePool:
    """Stands for CuPy's memory pool: ``malloc`` and ``used_bytes``."""

    def __init__(self, capacity: int) -> None:
        self.capacity, self.used, self.reads = capacity, 0, 0

    def malloc(self, size: int) -> Any:
        if self.used + size > self.capacity:
            raise FakeOOM(size)
        self.used += size
        return types.SimpleNamespace(device_id=0, size=size)

    def used_bytes(self) -> int:
        self.reads += 1
        return self.used


class FakeOOM(MemoryError):
    def __init__(self, size: int) -> None:
        super().__init__(f"Out of memory allocating {size} bytes")
        self._size = size


def test_tracking_allocator_peak_and_oom() -> None:
    pool = FakePool(capacity=10 << 20)
    fake = types.SimpleNamespace(
        get_default_memory_pool=lambda: pool,
        cuda=types.SimpleNamespace(memory=types.SimpleNamespace(OutOfMemoryError=FakeOOM)),
    )
    allocator = TrackingAllocator(fake, device_count=1, sample_bytes=1 << 20)
    allocator(4 << 20)
    assert allocator.peak[0] == 4 << 20  # a large allocation is sampled at once
    for _ in range(100):
        allocator(1000)  # small ones only once they add up to sample_bytes
    assert pool.reads == 1
    pool.used -= 4 << 20  # the big array is freed
    assert allocator.observe(0, pool.used) == 4 << 20
    allocator.reset_peak(0, pool.used)
    assert allocator.peak[0] == 100_000
    with pytest.raises(OutOfMemoryError, match="tried to allocate 20.00 MiB") as info:
        allocator(20 << 20)
    assert info.value.requested == 20 << 20 and isinstance(info.value.__cause__, FakeOOM)


# ------------------------------------------------------------------ on a GPU
def cuda_array(tensor: mta.Tensor) -> Any:
    assert type(tensor.data).__module__.startswith("cupy"), type(tensor.data)
    return tensor.data


@gpu
@needs_gpu
def test_utilities_on_a_gpu() -> None:
    assert mcuda.is_available() and mcuda.device_count() >= 1
    assert mcuda.get_device_name() and mcuda.current_device() == 0
    free, total = mcuda.mem_get_info(0)
    assert 0 < free <= total
    mcuda.synchronize()
    mcuda.synchronize("cuda:0")


@gpu
@needs_gpu
@pytest.mark.parametrize("precision", ["float64", "float32"])
@pytest.mark.parametrize("fn, makers, order", [pytest.param(*c[1:], id=c[0]) for c in CASES])
def test_op_suite_matches_cpu(fn: Callable[..., mta.Tensor], makers: list[Any], order: int,
                              precision: str) -> None:
    rng = np.random.default_rng(0)
    arrays = [m(rng) for m in makers]
    if precision == "float32":
        arrays = [a.astype(np.float32) if a.dtype == np.float64 else a for a in arrays]
        order = min(order, 1)
    expected = evaluate(fn, arrays, "cpu", order)
    found = evaluate(fn, arrays, "cuda", order)
    rtol, atol = (1e-9, 1e-11) if precision == "float64" else (2e-4, 2e-5)
    for e, f in zip(expected, found, strict=True):
        assert f.dtype == e.dtype and f.shape == e.shape
        np.testing.assert_allclose(f, e, rtol=rtol, atol=atol)


def check_on_gpu(fn: Callable[..., mta.Tensor], makers: list[Any], order: int = 1) -> None:
    rng = np.random.default_rng(0)
    arrays = [m(rng) for m in makers]
    for e, f in zip(evaluate(fn, arrays, "cpu", order), evaluate(fn, arrays, "cuda", order),
                    strict=True):
        np.testing.assert_allclose(f, e, rtol=1e-9, atol=1e-11)


@gpu
@needs_gpu
def test_losses_and_norms_match_cpu() -> None:
    check_on_gpu(lambda x, y: functional("cross_entropy")(x, y, label_smoothing=0.1),
                 [F(6, 5), INT(5, 6)])
    check_on_gpu(lambda x, y: functional("nll_loss")(x.log_softmax(1), y), [F(6, 5), INT(5, 6)])
    check_on_gpu(lambda x, w, b: functional("batch_norm")(x, None, None, w, b, training=True),
                 [F(4, 3, 2, 2), F(3), F(3)])
    check_on_gpu(lambda x, w, b: functional("linear")(x, w, b), [F(5, 4), F(3, 4), F(3)])


@gpu
@needs_gpu
@needs_conv
@needs_pool
@pytest.mark.parametrize("channels, kwargs", [(1, {}), (8, {"stride": 2, "padding": 1}),
                                              (8, {"groups": 2, "dilation": 2})])
def test_conv_and_pool_match_cpu(channels: int, kwargs: dict[str, Any]) -> None:
    groups = kwargs.get("groups", 1)
    check_on_gpu(lambda x, w, b: functional("conv2d")(x, w, b, **kwargs),
                 [F(2, channels, 7, 7), F(4, channels // groups, 3, 3), F(4)])
    check_on_gpu(lambda x: functional("max_pool2d")(x.relu(), 2), [F(2, channels, 6, 6)])
    check_on_gpu(lambda x: functional("avg_pool2d")(x, 3, 2, 1), [F(2, channels, 6, 6)])


@gpu
@needs_gpu
def test_non_blocking_copies_are_correct() -> None:
    backend: Any = mta.Device("cuda").backend
    host = np.arange(1 << 22, dtype=np.float32)
    assert not backend.is_pinned(host) and backend.is_pinned(backend.pin(host))
    device_array = backend.upload(host, mta.Device("cuda"), non_blocking=True)
    doubled = device_array * 2  # queued after the copy: must see all of it
    out = backend.download(doubled, non_blocking=True)
    mcuda.synchronize()
    np.testing.assert_array_equal(out, host * 2)
    x = mta.tensor(host.reshape(1024, -1))
    y = x.to("cuda", non_blocking=True)
    assert float(y.sum().item()) == pytest.approx(float(host.astype(np.float64).sum()))
    np.testing.assert_array_equal(y.to("cpu").numpy(), x.numpy())
    assert backend.upload(host[:4], mta.Device("cuda"), dtype=np.float16).dtype == np.float16


@gpu
@needs_gpu
def test_memory_statistics() -> None:
    mcuda.empty_cache()
    base = mcuda.memory_allocated()
    mcuda.reset_peak_memory_stats()
    x = mta.empty(16 << 20, device="cuda")  # 64 MiB
    assert mcuda.memory_allocated() >= base + (64 << 20)
    assert mcuda.max_memory_allocated() >= base + (64 << 20)
    held = mcuda.memory_reserved()
    assert held >= mcuda.memory_allocated()
    del x
    assert mcuda.memory_allocated() < base + (64 << 20)  # freed ...
    assert mcuda.memory_reserved() == held  # ... but the pool still holds the block
    assert mcuda.max_memory_allocated() >= base + (64 << 20)
    mcuda.empty_cache()
    assert mcuda.memory_reserved() <= held - (64 << 20)
    mcuda.reset_peak_memory_stats()
    assert mcuda.max_memory_allocated() == mcuda.memory_allocated()


@gpu
@needs_gpu
def test_out_of_memory_is_translated() -> None:
    free, total = mcuda.mem_get_info()
    request = 4 * total  # more than the card has
    with pytest.raises(mcuda.OutOfMemoryError, match="CUDA out of memory on cuda:0: tried to "
                       r"allocate .* free of .* total") as info:
        mta.empty(request // 4, device="cuda")
    assert info.value.requested is not None and info.value.requested >= request
    assert info.value.total == total
    mta.ones(4, device="cuda")  # and the GPU still works


@gpu
@needs_gpu
@pytest.mark.skipif(mcuda.device_count() < 2, reason="needs 2 GPUs")
def test_second_gpu_runs_its_own_work() -> None:
    x = mta.randn(64, 64, device="cuda:1", requires_grad=True)
    y = (x @ x).relu().sum()
    y.backward()
    assert x.grad is not None
    assert cuda_array(y).device.id == 1 and cuda_array(x.grad).device.id == 1
    z = x.detach().to("cuda:0")
    assert cuda_array(z).device.id == 0
    np.testing.assert_array_equal(z.cpu().numpy(), x.detach().cpu().numpy())
    assert mcuda.memory_allocated("cuda:1") > 0


@gpu
@needs_gpu
def test_manual_seed_on_gpu() -> None:
    mta.manual_seed(11)
    a = mta.rand(5, device="cuda").tolist()
    mta.manual_seed(11)
    assert mta.rand(5, device="cuda").tolist() == a


# ------------------------------------------------------------------ fast paths on the GPU
def fast_path(name: str) -> Callable[..., Any]:
    kernel = mta.Device("cuda").backend.kernel(name)
    assert kernel is not None, name
    return kernel  # type: ignore[no-any-return]


@gpu
@needs_gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_relu_and_cross_entropy_kernels(dtype: Any) -> None:
    import cupy as cp

    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 10)).astype(dtype)
    y = fast_path("relu_forward")(cp.asarray(x))
    np.testing.assert_array_equal(cp.asnumpy(y), np.maximum(x, 0))
    gy = rng.standard_normal(x.shape).astype(dtype)
    np.testing.assert_array_equal(cp.asnumpy(fast_path("relu_backward")(y, cp.asarray(gy))),
                                  gy * (x > 0))
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for rows in (64, 5000):  # one block; then the per-row kernel and reductions
        x = rng.standard_normal((rows, 10)).astype(dtype)
        valid = rng.random(rows) > 0.2
        labels = cp.asarray(np.where(valid, rng.integers(0, 10, rows), -100))
        loss, lse, scale, counts = fast_path("cross_entropy_forward")(cp.asarray(x), labels,
                                                                     -100)
        assert scale is None and counts() == (int(valid.sum()), 0)
        x64 = x.astype(np.float64)
        log_p = x64 - x64.max(1, keepdims=True)
        log_p -= np.log(np.exp(log_p).sum(1, keepdims=True))
        safe = np.where(valid, cp.asnumpy(labels), 0)
        picked = log_p[np.arange(rows), safe]
        np.testing.assert_allclose(cp.asnumpy(loss), -picked * valid, rtol=tol, atol=tol)
        g = fast_path("cross_entropy_backward")(cp.asarray(x), labels, -100, lse,
                                                cp.asarray(valid * 0.5, dtype))
        expected = (np.exp(log_p) - np.eye(10)[safe]) * (valid * 0.5)[:, None]
        np.testing.assert_allclose(cp.asnumpy(g), expected, rtol=tol, atol=tol)
        mean, _, scale, _ = fast_path("cross_entropy_forward")(cp.asarray(x), labels, -100,
                                                               "mean")
        np.testing.assert_allclose(float(mean), -(picked * valid).sum() / valid.sum(),
                                   rtol=tol)
        g = fast_path("cross_entropy_backward")(cp.asarray(x), labels, -100, lse,
                                                cp.asarray(3.0, dtype), scale)
        expected = (np.exp(log_p) - np.eye(10)[safe]) * (valid * 3.0 / valid.sum())[:, None]
        np.testing.assert_allclose(cp.asnumpy(g), expected, rtol=tol, atol=tol)
    _, result = fast_path("label_count")(cp.asarray([3, -100, 10, -1, 9, -100]), 10, -100)
    assert result() == (2, 2)


@gpu
@needs_gpu
def test_bad_label_raises_at_backward_or_read_back() -> None:
    x = mta.zeros(3, 5, device="cuda", requires_grad=True)
    bad = mta.tensor([0, 7, 1], device="cuda")
    loss = mta.nn.functional.cross_entropy(x, bad)  # queued: the GPU is not stalled
    with pytest.raises(IndexError, match=r"label 7 is out of range for 5 classes"):
        loss.backward()
    assert x.grad is None  # nothing flowed
    loss = mta.nn.functional.cross_entropy(x, bad, reduction="sum")
    with pytest.raises(IndexError, match=r"label 7 is out of range for 5 classes"):
        loss.item()
    mta.nn.functional.cross_entropy(x, mta.tensor([-1, 0, 0], device="cuda"))
    with pytest.raises(IndexError, match=r"label -1 is out of range for 5 classes"):
        mcuda.synchronize()
    mcuda.synchronize()  # each error is raised once
    good = mta.nn.functional.cross_entropy(x, mta.tensor([0, -100, 4], device="cuda"))
    good.backward()
    expected = mta.nn.functional.cross_entropy(x.detach().cpu().requires_grad_(),
                                               mta.tensor([0, -100, 4]))
    assert good.item() == pytest.approx(expected.item(), rel=1e-6)


@gpu
@needs_gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kernel_size, stride, padding", [(2, None, 0), (3, 2, 1), ((3, 2), 1, 0)])
def test_max_pool_kernels_match_the_xp_path(dtype: Any, kernel_size: Any, stride: Any,
                                            padding: Any) -> None:
    import cupy as cp

    from minitorch_accel.ops import pool_kernels as pk

    rng = np.random.default_rng(5)
    # ties everywhere (a ReLU's zeros, repeated values), a -inf and a NaN
    x = np.maximum(rng.integers(-2, 3, (2, 3, 7, 6)), 0).astype(dtype)
    x[0, 0, 0, 0], x[1, 2, 3, 3] = -np.inf, np.nan
    pool = {"kernel_size": kernel_size, "stride": stride, "padding": padding}
    geo = pk.pool_geometry("max_pool2d", x.shape, **pool)
    for layout in ("nchw", "nhwc"):
        gx = cp.asarray(x)
        if layout == "nhwc":
            gx = cp.ascontiguousarray(gx.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
        y = fast_path("max_pool2d_forward")(gx, geo, layout == "nhwc")
        expected_y = pk.max_pool2d_forward(np, x, **pool)
        np.testing.assert_array_equal(cp.asnumpy(y), expected_y)
        gy = rng.standard_normal(geo.y_shape).astype(dtype)
        grad = fast_path("max_pool2d_backward")(cp.asarray(gy), gx, y, geo, layout == "nhwc")
        np.testing.assert_array_equal(
            cp.asnumpy(grad), pk.max_pool2d_backward(np, gy, x, expected_y, **pool))


@gpu
@needs_gpu
@pytest.mark.parametrize("amsgrad", [False, True])
def test_optimizer_kernels(amsgrad: bool) -> None:
    import cupy as cp

    rng = np.random.default_rng(1)
    p, m, v, vmax = rng.standard_normal(1000), np.zeros(1000), np.zeros(1000), np.zeros(1000)
    gpu_state = [cp.asarray(a) for a in (p, m, v, vmax)]
    buf, gpu_buf = np.zeros(1000), cp.zeros(1000)
    p_sgd, gpu_p_sgd = p.copy(), cp.asarray(p)
    for step in range(1, 4):
        grad = rng.standard_normal(1000)
        adam_update(np, p, grad, m, v, vmax if amsgrad else None, step, 0.01, 0.9, 0.999, 1e-8,
                    0.1, step % 2 == 0, amsgrad, False)
        fast_path("adam_update")(cp, gpu_state[0], cp.asarray(grad), *gpu_state[1:3],
                                 gpu_state[3] if amsgrad else None, step, 0.01, 0.9, 0.999,
                                 1e-8, 0.1, step % 2 == 0, amsgrad, False)
        sgd_update(np, p_sgd, grad, buf, 0.1, 0.9, 0.0, True, 0.01, False, step == 1)
        fast_path("sgd_update")(cp, gpu_p_sgd, cp.asarray(grad), gpu_buf, 0.1, 0.9, 0.0, True,
                                0.01, False, step == 1)
    for found, expected in zip(gpu_state, (p, m, v, vmax), strict=True):
        np.testing.assert_allclose(cp.asnumpy(found), expected, rtol=1e-12)
    np.testing.assert_allclose(cp.asnumpy(gpu_p_sgd), p_sgd, rtol=1e-12)


@gpu
@needs_gpu
@pytest.mark.parametrize(
    "x_shape, w_shape, stride, padding, dilation, groups",
    [((4, 1, 28, 28), (6, 1, 5, 5), 1, 2, 1, 1), ((4, 16, 14, 14), (32, 16, 3, 3), 2, 1, 1, 1),
     ((2, 8, 9, 7), (4, 4, 2, 3), 1, (2, 1), (2, 1), 2)],
    ids=["lenet_conv1", "channels_last", "groups_dilation"],
)
def test_conv_kernels_match_the_xp_path(x_shape: Any, w_shape: Any, stride: Any, padding: Any,
                                        dilation: Any, groups: int) -> None:
    import cupy as cp

    geo = ck.conv_geometry(x_shape, w_shape, stride, padding, dilation, groups)
    rng = np.random.default_rng(2)
    x = cp.asarray(rng.standard_normal(x_shape))
    x_nhwc = cp.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    for source in (x, x_nhwc):
        cols = fast_path("im2col")(source, geo)
        cp.testing.assert_array_equal(cols, ck.im2col(cp, source, geo).matrix)
    w = cp.asarray(rng.standard_normal(w_shape))
    gy = cp.asarray(rng.standard_normal(geo.y_shape))
    expected = ck.conv2d_grad_input(cp, gy, w, x_shape, stride, padding, dilation, groups)
    cp.testing.assert_allclose(fast_path("conv2d_grad_input")(gy, w, geo), expected, rtol=1e-11,
                               atol=1e-12)
    c = cp.asarray(rng.standard_normal(cols.shape))
    lhs = float((fast_path("im2col")(x, geo) * c).sum())
    assert lhs == pytest.approx(float((x * fast_path("col2im")(c, geo)).sum()), rel=1e-11)


# ------------------------------------------------------------------ timing and DLPack
@gpu
@needs_gpu
def test_timer_and_benchmark_on_gpu() -> None:
    from minitorch_accel.utils.timing import Timer, benchmark

    a = mta.randn(2048, 2048, device="cuda")
    with Timer("cuda") as events:
        a @ a
    with Timer("cuda", cuda_events=False) as clock:
        a @ a
    assert 0 < events.elapsed < 1 and 0 < clock.elapsed < 1
    result = benchmark(lambda: a @ a, device="cuda", warmup=2, repeat=5)
    assert len(result.times) == 5 and result.device == "cuda:0" and result.min > 0


@gpu
@needs_gpu
def test_dlpack_on_gpu() -> None:
    import cupy as cp

    from minitorch_accel.dlpack import export_capsule, from_dlpack

    source = cp.arange(4.0)
    t = from_dlpack(source)
    source[0] = 9.0
    assert t.device == mta.Device("cuda:0") and t.tolist() == [9.0, 1.0, 2.0, 3.0]
    back = cp.from_dlpack(export_capsule(t))
    back[1] = -1.0
    assert t.tolist() == [9.0, -1.0, 2.0, 3.0]
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        tt = torch.arange(3, dtype=torch.float32, device="cuda")
        t2 = from_dlpack(tt)
        tt[2] = 7.0
        assert t2.tolist() == [0.0, 1.0, 7.0]


@gpu
@needs_gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gemm_fast_path_every_layout(dtype: Any) -> None:
    import cupy as cp

    gemm = fast_path("gemm")
    rng = np.random.default_rng(7)
    for m, k, n in [(5, 3, 4), (1, 7, 1), (64, 1, 9)]:
        a, b = rng.standard_normal((m, k)).astype(dtype), rng.standard_normal((k, n)).astype(dtype)
        expected = a @ b
        tol = 1e-5 if dtype == np.float32 else 1e-12
        for ga in (cp.asarray(a), cp.asfortranarray(cp.asarray(a))):
            for gb in (cp.asarray(b), cp.asarray(b.T.copy()).T):
                out = gemm(ga, gb)
                assert out.flags.c_contiguous and out.shape == (m, n)
                np.testing.assert_allclose(cp.asnumpy(out), expected, rtol=tol, atol=tol)
                given = cp.empty((m, n), dtype)
                assert gemm(ga, gb, given) is given
                np.testing.assert_allclose(cp.asnumpy(given), expected, rtol=tol, atol=tol)
    a, b = cp.ones((4, 6), dtype), cp.ones((3, 5), dtype)
    assert gemm(a[:, ::2], b) is None  # strided operand: the caller uses cupy.matmul
    assert gemm(a, cp.ones((6, 5), dtype), cp.empty((5, 4), dtype).T) is None  # F-order out
    assert gemm(a.astype(np.float16), cp.ones((6, 5), np.float16)) is None


@gpu
@needs_gpu
def test_clone_is_an_independent_copy() -> None:
    import cupy as cp

    backend = mta.Device("cuda").backend
    x = cp.arange(12.0).reshape(3, 4)
    for source in (x, x.T, x[:, ::2], cp.empty((0, 3))):
        copy = backend.clone(source)
        assert copy.shape == source.shape and copy.flags.c_contiguous
        cp.testing.assert_array_equal(copy, source)
        if source.size:
            assert copy.data.ptr != source.data.ptr
    copy = backend.clone(x)
    x += 1  # the copy does not follow
    cp.testing.assert_array_equal(copy, cp.arange(12.0).reshape(3, 4))


@gpu
@needs_gpu
def test_multi_tensor_sgd_on_the_gpu_reuses_its_pointer_table() -> None:
    import cupy as cp

    rng = np.random.default_rng(12)
    host = [rng.standard_normal(n) for n in (5, 0, 300, 1)]
    params, bufs = [cp.asarray(p) for p in host], [cp.zeros(len(p)) for p in host]
    expected, expected_bufs = [p.copy() for p in host], [np.zeros(len(p)) for p in host]
    grads_host = [rng.standard_normal(len(p)) for p in host]
    grads = [cp.asarray(g) for g in grads_host]
    fast = mta.Device("cuda").backend._fast
    tables = []
    for step in range(3):
        assert fast_path("sgd_update_many")(params, grads, bufs, 0.1, 0.9, 0.0, True, 0.01,
                                            False, step == 0)
        tables.append(fast._last_table[1])
        for p, g, b in zip(expected, grads_host, expected_bufs, strict=True):
            sgd_update(np, p, g, b, 0.1, 0.9, 0.0, True, 0.01, False, step == 0)
    assert tables[0] is tables[1] is tables[2]  # same arrays: uploaded once
    for found, want in zip(params + bufs, expected + expected_bufs, strict=True):
        np.testing.assert_allclose(cp.asnumpy(found), want, rtol=1e-12)


@gpu
@needs_gpu
def test_loader_prefetch_to_the_gpu_orders_work_after_the_copies() -> None:
    import cupy as cp

    from minitorch_accel.data import DataLoader, TensorDataset

    images = np.random.default_rng(13).standard_normal((300, 64)).astype(np.float32)
    ds = TensorDataset(images, np.arange(300))
    loader = DataLoader(ds, batch_size=32, shuffle=True, seed=2, device="cuda", prefetch=2)
    with cp.cuda.Stream(non_blocking=True):  # the consumer's own stream waits too
        kept = [(x, y, (x * 2).sum(axis=1)) for x, y in loader]
    for x, y, doubled in kept:  # every batch intact after the buffers were reused
        rows = images[y.numpy()]
        np.testing.assert_array_equal(x.numpy(), rows)
        np.testing.assert_allclose(doubled.numpy(), 2 * rows.sum(axis=1), rtol=1e-5)
    transfer = mta.Device("cuda").backend.upload_async(images[:3], mta.Device("cuda"))
    transfer.finish()
    np.testing.assert_array_equal(cp.asnumpy(transfer.array), images[:3])


@gpu
@needs_gpu
def test_bfloat16_on_the_gpu_works_or_says_why_not() -> None:
    import cupy as cp

    from minitorch_accel.amp import autocast

    if getattr(cp, "bfloat16", None) is None:  # CuPy 14 has no bfloat16 dtype
        with pytest.raises(TypeError, match="bfloat16 is not supported by the 'cuda' backend"):
            autocast("bfloat16", device="cuda")
        return
    layer = mta.nn.Linear(8, 4).to("cuda")
    x = mta.randn(16, 8, device="cuda")
    with autocast("bfloat16", device="cuda"):
        loss = layer(x).float().sum()
    loss.backward()
    assert layer.weight.grad is not None and np.isfinite(layer.weight.grad.numpy()).all()
