"""The CPU thread pool and the threaded kernels: same results at 1, 2 and 4 threads.

Elementwise and pooling kernels do the same operations in the same order on every
element at any thread count, so they are compared bit for bit. Convolutions run a GEMM
per chunk of images, and BLAS may choose another kernel for a smaller matrix: those are
compared in float64 with ``rtol=1e-12``, and the LeNet steps in float32 with
``rtol=1e-5, atol=1e-6`` (three steps of rounding differences of 1e-7).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import minitorch_accel as mta
from minitorch_accel import nn, optim
from minitorch_accel.backends import conv_kernels as ck
from minitorch_accel.backends import pool_kernels as pk
from minitorch_accel.backends.fast_paths import GradsAhead
from minitorch_accel.backends.layout import physical_order
from minitorch_accel.backends.numpy import fast_conv as fc
from minitorch_accel.backends.numpy import fast_gemm, fast_nn
from minitorch_accel.backends.numpy import threads as cpu_threads
from minitorch_accel.nn.models import LeNet
from minitorch_accel.ops import elementwise

ROOT = Path(__file__).resolve().parent.parent
THREADS = (1, 2, 4)


@pytest.fixture(autouse=True)
def keep_thread_count() -> Iterator[None]:
    """Restore the thread count and BLAS's own after each test."""
    before = mta.get_num_threads()
    libs = cpu_threads._blas.libs()
    blas_before = [lib.num_threads for lib in libs]
    yield
    mta.set_num_threads(before)
    for lib, n in zip(libs, blas_before, strict=True):
        lib.set_num_threads(n)


@pytest.fixture
def splits(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The ``total`` of every parallel_for call the threaded kernels make."""
    calls: list[int] = []
    original = cpu_threads.parallel_for

    def spy(total: int, fn: Any, grain: int = 1) -> None:
        calls.append(total)
        original(total, fn, grain)

    def block_spy(total: int, fn: Any, block: int) -> None:
        calls.append(total)
        original_blocks(total, fn, block)

    original_blocks = cpu_threads.for_blocks
    monkeypatch.setattr(fc, "for_blocks", block_spy)
    monkeypatch.setattr(fast_nn, "parallel_for", spy)
    monkeypatch.setattr(fast_nn, "for_blocks", block_spy)
    return calls


def at_threads(fn: Any, *args: Any, **kwargs: Any) -> dict[int, Any]:
    """``fn(*args, **kwargs)`` run at 1, 2 and 4 threads; copies of the results."""
    results = {}
    for n in THREADS:
        mta.set_num_threads(n)
        out = fn(*args, **kwargs)
        results[n] = tuple(np.copy(a) for a in out) if isinstance(out, tuple) else np.copy(out)
    return results


def channels_last(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)


def test_chunk_bounds_cover_the_range_in_order() -> None:
    assert cpu_threads.chunk_bounds(10, 3) == [(0, 3), (3, 6), (6, 10)]
    assert cpu_threads.chunk_bounds(2, 4) == [(0, 1), (1, 2)]
    assert cpu_threads.chunk_bounds(5, 1) == [(0, 5)]


def test_parallel_for_runs_every_chunk_once_and_reraises() -> None:
    mta.set_num_threads(4)
    seen: list[tuple[int, int]] = []
    lock = threading.Lock()

    def record(s: int, e: int) -> None:
        with lock:
            seen.append((s, e))

    cpu_threads.parallel_for(103, record)
    assert sorted(seen) == cpu_threads.chunk_bounds(103, 4 * cpu_threads.CHUNKS_PER_THREAD)

    # two chunks that wait for each other finish only if two threads run them
    mta.set_num_threads(2)
    meet = threading.Barrier(2, timeout=30)

    def wait_for_the_other(s: int, e: int) -> None:
        meet.wait()

    cpu_threads.parallel_for(2, wait_for_the_other)

    def fail(s: int, e: int) -> None:
        if s > 0:
            raise KeyError(f"chunk {s}")

    with pytest.raises(KeyError, match="chunk"):
        cpu_threads.parallel_for(8, fail)


def test_parallel_for_lets_go_of_its_chunks_arrays_when_it_returns() -> None:
    # A worker still returning from the last chunk held the chunk function, and the
    # arrays it closed over, after parallel_for had returned: memory peaks measured
    # next (the checkpoint test) then depended on the timing of the threads.

    mta.set_num_threads(2)
    alive = 0
    for _ in range(200):
        data = np.ones(64)
        ref = weakref.ref(data)

        def chunk(s: int, e: int, d: np.ndarray = data) -> None:
            d[s:e].sum()

        cpu_threads.parallel_for(4, chunk)
        del chunk
        del data
        alive += ref() is not None
    assert alive == 0


def test_for_blocks_hands_out_each_block_on_its_own() -> None:
    seen: list[tuple[int, int]] = []
    lock = threading.Lock()

    def record(s: int, e: int) -> None:
        with lock:
            seen.append((s, e))

    for threads in THREADS:
        mta.set_num_threads(threads)
        seen.clear()
        cpu_threads.for_blocks(100, record, block=9)  # 12 blocks of 8 or 9 items
        assert sorted(seen) == cpu_threads.chunk_bounds(100, 12)
    # three blocks that wait for each other: each is claimed by its own thread
    mta.set_num_threads(3)
    meet = threading.Barrier(3, timeout=30)
    cpu_threads.for_blocks(3, lambda s, e: meet.wait(), block=1)

    def fail(s: int, e: int) -> None:
        if s == 5:
            raise KeyError("block 5")

    with pytest.raises(KeyError, match="block 5"):
        cpu_threads.for_blocks(10, fail, block=1)


@pytest.mark.parametrize("total", [1, 2, 5, 10, 64, 100, 256])
@pytest.mark.parametrize("block", [1, 3, 7, 10, 15, 64, 300])
def test_block_bounds_come_in_fours_of_at_most_block_items(total: int, block: int) -> None:
    bounds = cpu_threads.block_bounds(total, block)
    assert bounds == cpu_threads.chunk_bounds(total, len(bounds))  # contiguous, in order
    assert max(e - s for s, e in bounds) <= block
    fewest = -(-total // block)
    if fewest <= 2:
        assert len(bounds) == fewest
    else:  # 2 or 4 threads get as many blocks each
        assert len(bounds) % cpu_threads.BLOCK_MULTIPLE == 0 or len(bounds) == total
        assert len(bounds) < fewest + cpu_threads.BLOCK_MULTIPLE


def test_set_num_threads_rejects_bad_values() -> None:
    for bad in (0, -1, 2.5, True, "2"):
        with pytest.raises(ValueError, match="positive int"):
            mta.set_num_threads(bad)  # type: ignore[arg-type]


def test_default_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(cpu_threads.ENV_VAR, "3")
    assert cpu_threads.default_num_threads() == 3
    monkeypatch.setenv(cpu_threads.ENV_VAR, "zero")
    with pytest.raises(ValueError, match="MINITORCH_ACCEL_NUM_THREADS='zero'"):
        cpu_threads.default_num_threads()
    monkeypatch.delenv(cpu_threads.ENV_VAR)
    assert cpu_threads.default_num_threads() == cpu_threads.available_cpus()
    assert 1 <= cpu_threads.available_cpus() <= len(os.sched_getaffinity(0))


def test_cgroup_quota_is_read_as_whole_cpus(tmp_path: Path) -> None:
    quota = tmp_path / "cpu.max"
    for text, cpus in (("200000 100000\n", 2), ("150000 100000\n", 2), ("max 100000\n", None)):
        quota.write_text(text)
        assert cpu_threads._cgroup_cpu_limit(str(quota)) == cpus
    assert cpu_threads._cgroup_cpu_limit(str(tmp_path / "absent")) is None


@pytest.mark.parametrize("layout", [np.ascontiguousarray, channels_last])
@pytest.mark.parametrize("op", sorted(fast_nn.BINARY_UFUNCS))
def test_elementwise_arithmetic_is_bit_identical(
    op: str, layout: Any, rng: np.random.Generator, splits: list[int]
) -> None:
    a = layout(rng.standard_normal((6, 5, 130, 131)).astype(np.float32))
    b = layout(rng.standard_normal(a.shape).astype(np.float32) + 3.0)
    ufunc = fast_nn.BINARY_UFUNCS[op]
    fn = getattr(elementwise, op)()
    fast = fast_nn._threaded_binary(ufunc)
    results = at_threads(fast, fn, a, b)
    for n in THREADS:
        np.testing.assert_array_equal(results[n], ufunc(a, b))
        assert physical_order(results[n]) == physical_order(a)
    assert splits and min(splits) == a.size  # the work did go through the pool
    # broadcasting, mixed dtypes or mixed layouts: the reference forward, one call
    splits.clear()
    mta.set_num_threads(2)
    np.testing.assert_array_equal(fast(fn, a, b[:1]), ufunc(a, b[:1]))
    np.testing.assert_array_equal(fast(fn, a, b.astype(np.float64)), ufunc(a, b.astype(np.float64)))
    other = np.ascontiguousarray(b) if physical_order(b) != (0, 1, 2, 3) else channels_last(b)
    np.testing.assert_array_equal(fast(fn, a, other), ufunc(a, other))
    assert splits == []


@pytest.mark.parametrize("layout", [np.ascontiguousarray, channels_last])
def test_relu_is_bit_identical(layout: Any, rng: np.random.Generator, splits: list[int]) -> None:
    x = layout(rng.standard_normal((6, 5, 130, 131)).astype(np.float32))
    grad = layout(rng.standard_normal(x.shape).astype(np.float32))
    forward = at_threads(fast_nn.relu_forward, x)
    backward = at_threads(fast_nn.relu_backward, forward[1], grad)
    for n in THREADS:
        np.testing.assert_array_equal(forward[n], np.maximum(x, 0))
        np.testing.assert_array_equal(backward[n], grad * (np.maximum(x, 0) > 0))
    mta.set_num_threads(2)
    assert physical_order(fast_nn.relu_forward(x)) == physical_order(x)
    assert splits and min(splits) == x.size  # the work did go through the pool


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_relu_blocks_give_the_bits_of_maximum_with_zero(
    dtype: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # blocks of 1,000 elements: several whole blocks and a shorter last one
    monkeypatch.setattr(fast_nn, "RELU_BLOCK", 1000)
    special = np.array([-0.0, 0.0, np.nan, -np.nan, np.inf, -np.inf, 1e-30, -1e-30])
    x = np.concatenate([special, np.random.default_rng(3).standard_normal(4_321)]).astype(dtype)
    reference = np.where(x < 0, x.dtype.type(0), x)  # PyTorch's rule: relu(-0.0) is -0.0
    for threads in THREADS:
        mta.set_num_threads(threads)
        y = fast_nn.relu_forward(x)
        assert y.dtype == x.dtype
        np.testing.assert_array_equal(y.view(np.uint8), reference.view(np.uint8))
    # a longer block than the zeros made so far: new zeros, not a broadcast error
    monkeypatch.setattr(fast_nn, "RELU_BLOCK", 5000)
    np.testing.assert_array_equal(fast_nn.relu_forward(x).view(np.uint8), reference.view(np.uint8))
    ints = np.arange(-3, 4)
    np.testing.assert_array_equal(fast_nn.relu_forward(ints), np.maximum(ints, 0))


@pytest.mark.parametrize("block", [None, 2], ids=["whole", "blocks_of_2"])
@pytest.mark.parametrize("layout", [np.ascontiguousarray, channels_last])
@pytest.mark.parametrize("kernel, stride", [(2, 2), (3, 1)])
def test_max_pool_is_bit_identical(
    layout: Any,
    kernel: int,
    stride: int,
    block: int | None,
    rng: np.random.Generator,
    splits: list[int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # rounded values: many ties, where the gradient must go to the first maximum
    x = layout(np.round(rng.standard_normal((7, 4, 12, 13)), 1).astype(np.float32))
    if block is not None:  # cache blocks of two images (the last of three)
        monkeypatch.setattr(fc, "POOL_BLOCK_BYTES", block * x[:1].nbytes)
    geo = pk.pool_geometry("max_pool2d", x.shape, kernel, stride, 0)
    y_ref = pk.max_pool2d_forward(np, x, kernel, stride).copy()
    grad = layout(rng.standard_normal(y_ref.shape).astype(np.float32))
    gx_ref = pk.max_pool2d_backward(np, grad, x, y_ref, kernel, stride).copy()
    forward = at_threads(fc.threaded_max_pool2d_forward, x, geo)
    backward = at_threads(fc.threaded_max_pool2d_backward, grad, x, y_ref, geo)
    for n in THREADS:
        np.testing.assert_array_equal(forward[n], y_ref)
        np.testing.assert_array_equal(backward[n], gx_ref)
    assert splits == [x.shape[0]] * 6


CONV_CASES = [
    # (x shape, w shape, stride, padding, dilation, groups): a first layer (kernel-major
    # cols, bias in the GEMM), channels-last cols, padding and stride, groups
    ((5, 1, 12, 12), (6, 1, 3, 3), 1, 0, 1, 1),
    ((5, 8, 10, 9), (16, 8, 3, 3), 1, 0, 1, 1),
    ((3, 16, 9, 11), (8, 8, 3, 2), 2, 1, (1, 2), 2),
]


@pytest.mark.parametrize("block_images", [1, 2, None])
@pytest.mark.parametrize("case", CONV_CASES)
def test_conv_matches_the_reference(
    case: tuple[Any, ...],
    block_images: int | None,
    rng: np.random.Generator,
    splits: list[int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The kernels work on cache blocks of images (1 or 2 here, or the default size);
    # the blocks do not depend on the thread count, so neither do the bits.
    x_shape, w_shape, stride, padding, dilation, groups = case
    conv = {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups}
    x = channels_last(rng.standard_normal(x_shape))
    w = rng.standard_normal(w_shape)
    b = rng.standard_normal(w_shape[0])
    y_ref, cols_ref = ck.conv2d_forward(np, x, w, b, **conv)
    y_ref, cols_ref = y_ref.copy(), cols_ref.matrix.copy()
    grad_y = rng.standard_normal(y_ref.shape)
    gx_ref = ck.conv2d_grad_input(np, grad_y, w, x_shape, **conv).copy()
    gw_ref = ck.conv2d_grad_weight(np, grad_y, x, w_shape, **conv)
    geo = ck.conv_geometry(x_shape, w_shape, **conv, channel_major_k=True)
    if block_images is not None:
        for name, images in [
            ("CONV_BLOCK_BYTES", fc._conv_block),
            ("CONV_GRAD_INPUT_BLOCK_BYTES", fc._grad_input_block),
        ]:
            per_image = getattr(fc, name) // images(geo, x.itemsize)
            monkeypatch.setattr(fc, name, block_images * per_image)
            assert images(geo, x.itemsize) == block_images

    def forward_arrays() -> tuple[np.ndarray, np.ndarray]:
        # The forward keeps no cols matrix, only what makes any block's rows again.
        y, cols = fc.threaded_conv2d_forward(x, w, b, **conv)
        assert isinstance(cols, fc.BlockCols) and cols.x is x
        images = [cols.block(i, i + 1).copy() for i in range(x_shape[0])]
        return y, np.concatenate(images, axis=1 if cols.geometry.channels_last else 2)

    def grad_weight() -> np.ndarray:
        _, cols = fc.threaded_conv2d_forward(x, w, b, **conv)
        splits.pop()  # count the forward once, above
        return fc.threaded_conv2d_grad_weight(grad_y, cols)[0]

    forward = at_threads(forward_arrays)
    grad_x = at_threads(fc.threaded_conv2d_grad_input, grad_y, w, geo)
    grad_w = at_threads(grad_weight)
    for n in THREADS:
        y, cols = forward[n]
        np.testing.assert_array_equal(cols, cols_ref)  # a copy: exact
        np.testing.assert_allclose(y, y_ref, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(grad_x[n], gx_ref, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(grad_w[n], gw_ref, rtol=1e-12, atol=1e-12)
        assert grad_w[n].shape == w_shape and grad_w[n].flags.c_contiguous
        np.testing.assert_array_equal(y, forward[1][0])
        np.testing.assert_array_equal(grad_x[n], grad_x[1])
        np.testing.assert_array_equal(grad_w[n], grad_w[1])
    assert splits == [x_shape[0]] * 9


@pytest.mark.parametrize("x_shape", [(64, 300), (4, 16, 300)], ids=["2-D", "3-D"])
def test_linear_gradients_side_by_side_are_bit_identical(
    x_shape: tuple[int, ...], rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch
) -> None:
    pairs = []
    pair_path = fast_gemm.linear_grad_input

    def spy(fn: Any, grad: Any, weight: Any, *, x: Any = None, pair: Any = None) -> Any:
        out = pair_path(fn, grad, weight, x=x, pair=pair)
        pairs.append(bool(pair))  # the weight's gradient left for LinearGradWeight
        return out

    monkeypatch.setitem(mta.device("cpu").backend.fast_forwards, "LinearGradInput", spy)
    x_data = rng.standard_normal(x_shape).astype(np.float32)
    w_data = rng.standard_normal((200, 300)).astype(np.float32)
    g_data = rng.standard_normal((*x_shape[:-1], 200)).astype(np.float32)

    def grads() -> tuple[np.ndarray, np.ndarray]:
        x = mta.tensor(x_data, requires_grad=True)
        w = mta.tensor(w_data, requires_grad=True)
        nn.functional.linear(x, w).backward(mta.tensor(g_data))
        return x.grad.numpy(), w.grad.numpy()

    results = at_threads(grads)
    x64, w64, g64 = (a.astype(np.float64) for a in (x_data, w_data, g_data))
    g_rows, x_rows = g64.reshape(-1, 200), x64.reshape(-1, 300)
    np.testing.assert_allclose(results[1][0], g64 @ w64, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(results[1][1], g_rows.T @ x_rows, rtol=1e-4, atol=1e-3)
    for n in THREADS:
        for got, want in zip(results[n], results[1], strict=True):
            np.testing.assert_array_equal(got, want)
    assert pairs == [False] + [True] * (len(THREADS) - 1)  # side by side above 1 thread
    # a weight gradient left for another grad_output is not taken
    kept = np.ones((2, 3), np.float32)

    def pair() -> GradsAhead:
        ahead = GradsAhead()
        ahead.keep("weight", g_data, kept)
        return ahead

    other = np.zeros_like(g_data)
    assert fast_gemm.linear_grad_weight(None, g_data, x_data, pair=pair()) is kept
    assert not np.shares_memory(
        fast_gemm.linear_grad_weight(_Reference(), other, x_data, pair=pair()), kept
    )


class _Reference:
    """Stands in for a LinearGradWeight node: its reference forward."""

    def forward(self, grad: np.ndarray, x: np.ndarray, *, pair: Any = None) -> np.ndarray:
        return grad.reshape(-1, grad.shape[-1]).T @ x.reshape(-1, x.shape[-1])


def lenet_steps(threads: int, steps: int = 3, batch: int = 16) -> list[np.ndarray]:
    """Parameters after ``steps`` SGD steps of LeNet at ``threads`` threads."""
    mta.set_num_threads(threads)
    mta.manual_seed(0)
    model = LeNet()
    opt = optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    data = np.random.default_rng(0)
    x = mta.tensor(data.random((batch, 1, 28, 28), dtype=np.float32))
    y = mta.tensor(data.integers(0, 10, batch))
    for _ in range(steps):
        opt.zero_grad()
        nn.CrossEntropyLoss()(model(x), y).backward()
        opt.step()
    return [p.array.copy() for p in model.parameters()]


@pytest.mark.slow
def test_lenet_training_steps_agree_at_1_2_and_4_threads() -> None:
    reference = lenet_steps(1)
    for n in (2, 4):
        for got, want in zip(lenet_steps(n), reference, strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert mta.get_num_threads() == 4 and cpu_threads.pool_workers() >= 1


def test_the_pool_is_safe_for_several_python_threads(rng: np.random.Generator) -> None:
    mta.set_num_threads(2)
    inputs = [channels_last(rng.standard_normal((6, 8, 10, 10))) for _ in range(4)]
    w = rng.standard_normal((8, 8, 3, 3))
    geo = pk.pool_geometry("max_pool2d", (6, 8, 8, 8), 2, None, 0)
    wanted = [pk.max_pool2d_forward(np, ck.conv2d_forward(np, x, w)[0], 2).copy() for x in inputs]
    errors: list[BaseException] = []

    def tower(i: int) -> None:
        try:
            for _ in range(20):
                y = fc.threaded_max_pool2d_forward(
                    fc.threaded_conv2d_forward(inputs[i], w, None)[0], geo
                )
                np.testing.assert_allclose(y, wanted[i], rtol=1e-12, atol=1e-12)
        except BaseException as error:
            errors.append(error)

    towers = [threading.Thread(target=tower, args=(i,)) for i in range(4)]
    for t in towers:
        t.start()
    for t in towers:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in towers), "a tower hung"
    assert errors == []


def run_python(*parts: str, **env: str) -> str:
    """Run the code ``parts`` (each dedented) in a fresh interpreter on this tree."""
    environ = {**os.environ, "PYTHONPATH": str(ROOT), **env}
    code = "\n".join(textwrap.dedent(part) for part in parts)
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
        env=environ,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


LENET_STEP = """
    import numpy as np
    import minitorch_accel as mta
    from minitorch_accel import nn, optim
    from minitorch_accel.backends.numpy.threads import pool_workers
    from minitorch_accel.nn.models import LeNet
    model = LeNet()
    opt = optim.SGD(model.parameters(), lr=0.1)
    x, y = mta.rand(8, 1, 28, 28), mta.tensor(np.arange(8) % 10)
    nn.CrossEntropyLoss()(model(x), y).backward()
    opt.step()
"""


@pytest.mark.slow
def test_one_thread_starts_no_worker_and_one_blas_thread() -> None:
    pytest.importorskip("threadpoolctl")
    check = """
        from threadpoolctl import threadpool_info
        blas = [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]
        print(mta.get_num_threads(), pool_workers(), blas)
    """
    out = run_python("import minitorch_accel as mta\nmta.set_num_threads(1)", LENET_STEP, check)
    assert out.split()[:2] == ["1", "0"], out
    assert "[1]" in out or "[1, 1]" in out, out
    # the same from the environment, for the pool (BLAS keeps its own variable)
    out = run_python(LENET_STEP, check, MINITORCH_ACCEL_NUM_THREADS="1")
    assert out.split()[:2] == ["1", "0"], out


@pytest.mark.slow
def test_no_worker_is_left_running_at_exit() -> None:
    # atexit handlers run after the interpreter has joined its non-daemon threads
    out = run_python(
        "import atexit\nimport minitorch_accel as mta\nmta.set_num_threads(4)",
        LENET_STEP,
        """
        import threading
        print("during", pool_workers())
        atexit.register(lambda: print("at exit", pool_workers(), threading.active_count()))
        """,
    )
    during = int(out.split("during")[1].split()[0])
    assert during >= 1, out
    assert "at exit 0 1" in out, out


@pytest.mark.parametrize("rule", ["sgd", "adam"])
def test_optimizer_updates_are_bit_identical(rule: str, rng: np.random.Generator) -> None:
    from minitorch_accel.backends.numpy import fast_optim as tu
    from minitorch_accel.optim.adam import adam_update
    from minitorch_accel.optim.sgd import sgd_update

    shape = (3 * tu.ELEMENT_GRAIN // 512, 512)  # several chunks of ELEMENT_GRAIN
    start = [rng.standard_normal(shape).astype(np.float32) for _ in range(5)]
    start[3] = np.abs(start[3])  # second moments are non-negative
    start[4] = np.abs(start[4])

    def run(update: Any) -> list[np.ndarray]:
        arrays = [a.copy() for a in start]
        for step in (1, 2, 3):
            if rule == "sgd":  # momentum, Nesterov, weight decay; arrays: p, grad, buf
                update(np, *arrays[:3], 0.1, 0.9, 0.0, True, 1e-2, False, step == 1)
            else:  # AMSGrad; arrays: p, grad, exp_avg, exp_avg_sq, max_exp_avg_sq
                update(np, *arrays, step, 1e-3, 0.9, 0.999, 1e-8, 1e-2, True, True, False)
        return arrays

    threaded = tu.sgd_update_threaded if rule == "sgd" else tu.adam_update_threaded
    want = run(sgd_update if rule == "sgd" else adam_update)  # the textbook rule
    scratch = run(tu.sgd_update_scratch if rule == "sgd" else tu.adam_update_scratch)
    for got, expected in zip(scratch, want, strict=True):
        np.testing.assert_array_equal(got, expected)
    for n in THREADS:
        mta.set_num_threads(n)
        for got, expected in zip(run(threaded), want, strict=True):
            np.testing.assert_array_equal(got, expected)
        if n > 1:
            assert cpu_threads.pool_workers() >= 1
