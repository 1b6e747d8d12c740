"""One pool for every core: the matrix product split over the CPU's threads, BLAS held
at one thread, and freed host memory kept for the next step.

A split GEMM computes each element of C with one BLAS call over the whole of K (rows or
columns of C split) or sums per-thread partial products in a fixed order (K split):
compared in float64 with ``np.matmul`` at ``rtol=1e-12``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import minitorch_accel as mta
from minitorch_accel.backends import conv_kernels as ck
from minitorch_accel.backends.numpy import fast_gemm
from minitorch_accel.backends.numpy import threads as cpu_threads
from minitorch_accel.backends.numpy.backend import NumpyBackend

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def keep_thread_count() -> Iterator[None]:
    before = mta.get_num_threads()
    yield
    mta.set_num_threads(before)


@pytest.fixture
def splits(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """``(total, grain)`` of every parallel_for call the GEMM makes."""
    calls: list[tuple[int, int]] = []
    original = cpu_threads.parallel_for

    def spy(total: int, fn: Any, grain: int = 1) -> None:
        calls.append((total, grain))
        original(total, fn, grain)

    monkeypatch.setattr(fast_gemm, "parallel_for", spy)
    return calls


# (m, k, n): rows split, columns split, K split (a small C summed over a long K)
SHAPES = {"rows": (300, 200, 64), "columns": (40, 300, 500), "sum": (9, 20000, 32)}


@pytest.mark.parametrize("threads", [2, 3, 4])
@pytest.mark.parametrize("kind", sorted(SHAPES))
def test_split_gemm_equals_matmul(
    kind: str, threads: int, rng: np.random.Generator, splits: list[tuple[int, int]]
) -> None:
    m, k, n = SHAPES[kind]
    a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    mta.set_num_threads(threads)
    got = fast_gemm.threaded_gemm(a, b)
    assert got is not None and got.shape == (m, n)
    np.testing.assert_allclose(got, a @ b, rtol=1e-12, atol=1e-12)
    totals = [total for total, _ in splits]
    assert totals == [{"rows": m, "columns": n, "sum": threads}[kind]]


def test_split_gemm_reads_transposed_views_and_writes_into_out(rng: np.random.Generator) -> None:
    mta.set_num_threads(2)
    a = rng.standard_normal((200, 300)).T  # (300, 200), not C-contiguous
    b = rng.standard_normal((96, 200)).T
    out = np.zeros((300, 200))[:, 50:146]  # a strided block of a bigger array
    got = fast_gemm.threaded_gemm(a, b, out=out)
    assert got is out
    np.testing.assert_allclose(out, a @ b, rtol=1e-12, atol=1e-12)
    # float32 too, through the backend's gemm and the convolutions' one
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    want = (a.astype(np.float32).astype(np.float64) @ b32.astype(np.float64)).astype(np.float32)
    np.testing.assert_allclose(NumpyBackend().gemm(a32, b32), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ck.gemm(np, a32, b32), want, rtol=1e-5, atol=1e-5)


def test_split_gemm_declines_what_it_does_not_split(
    rng: np.random.Generator, splits: list[tuple[int, int]]
) -> None:
    big = rng.standard_normal((256, 256))
    mta.set_num_threads(1)
    assert fast_gemm.threaded_gemm(big, big) is None  # one thread: one BLAS call
    mta.set_num_threads(2)
    small = rng.standard_normal((8, 8))
    assert fast_gemm.threaded_gemm(small, small) is None  # too little work
    half = big.astype(np.float16)
    assert fast_gemm.threaded_gemm(half, half) is None  # the float16 path decides
    assert fast_gemm.threaded_gemm(big, big.astype(np.float32)) is None  # mixed dtypes
    assert fast_gemm.threaded_gemm(big[None], big[None]) is None  # batched
    assert fast_gemm.threaded_gemm(big, big, out=np.empty((256, 255))) is None
    assert splits == []
    # inside a chunk of the pool a product is one serial call (no nested split)
    inner: list[Any] = []
    cpu_threads.parallel_for(
        2, lambda s, e: inner.append(fast_gemm.threaded_gemm(big, big)), grain=1
    )
    assert inner == [None, None]


def test_small_products_go_through_dot_which_releases_the_gil(
    rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch
) -> None:
    # numpy.matmul keeps the GIL for an output of at most 500 values, so the threads of
    # a first convolution's weight gradient (9 x 32 per block of images) took turns
    dots: list[tuple[int, ...]] = []
    real_dot = np.dot

    def dot_spy(a: Any, b: Any, out: Any = None) -> Any:
        dots.append(out.shape)
        return real_dot(a, b, out=out)

    monkeypatch.setattr(ck.numpy, "dot", dot_spy)
    cols = rng.standard_normal((10, 6000)).astype(np.float32)
    grad = rng.standard_normal((3000, 32)).astype(np.float32)
    a = cols[:9, 1000:4000]  # a strided block of rows, as the weight gradient reads it
    want = (a.astype(np.float64) @ grad.astype(np.float64)).astype(np.float32)
    out = np.empty((9, 32), np.float32)
    assert ck.blas_into(a, grad, out) is out
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-3)
    assert dots == [(9, 32)]
    # ck.gemm's one-call path takes the same route
    np.testing.assert_allclose(
        ck.gemm(np, a, grad, out=np.empty((9, 32), np.float32)), want, rtol=1e-4, atol=1e-3
    )
    assert dots == [(9, 32)] * 2
    # what dot cannot write into, or need not, goes to matmul
    transposed = np.empty((32, 9), np.float32).T  # F-ordered output
    big = np.empty((300, 300), np.float32)
    wide = rng.standard_normal((300, 40)).astype(np.float32)
    assert ck.blas_into(a, grad, transposed) is transposed
    np.testing.assert_allclose(transposed, want, rtol=1e-4, atol=1e-3)
    ck.blas_into(wide, wide.T, big)
    np.testing.assert_allclose(big, wide @ wide.T, rtol=1e-5, atol=1e-4)
    mixed = np.empty((9, 32), np.float64)
    ck.blas_into(a, grad, mixed)  # matmul casts; dot would refuse
    np.testing.assert_allclose(mixed, want, rtol=1e-4, atol=1e-3)
    assert dots == [(9, 32)] * 2


def test_backend_gemm_of_float16_still_rounds_a_float32_product(rng: np.random.Generator) -> None:
    mta.set_num_threads(2)
    a = rng.standard_normal((256, 300)).astype(np.float16)
    b = rng.standard_normal((300, 256)).astype(np.float16)
    want = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    np.testing.assert_array_equal(NumpyBackend().gemm(a, b), want)


def run_python(code: str, **env: str) -> str:
    environ = {**os.environ, "PYTHONPATH": str(ROOT), **env}
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=environ,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.slow
def test_blas_is_held_at_one_thread_while_the_pool_has_more() -> None:
    pytest.importorskip("threadpoolctl")
    out = run_python(
        """
        import numpy as np
        from threadpoolctl import threadpool_info, threadpool_limits
        import minitorch_accel as mta
        def blas():
            return sorted({i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"})
        mta.set_num_threads(2)
        print("after set", blas())
        x = mta.tensor(np.ones((300, 300), np.float32), requires_grad=True)
        (x @ x).sum().backward()
        print("after a product", blas())
        with threadpool_limits(limits=2, user_api="blas"):
            print("raised by the program", blas())
        """,
        OPENBLAS_NUM_THREADS="2",
    )
    assert "after set [1]" in out, out
    assert "after a product [1]" in out, out
    assert "raised by the program [2]" in out, out


FAULTS = """
    import resource
    import numpy as np
    import minitorch_accel  # registers the CPU backend
    from minitorch_accel.backends.numpy.heap import keep_freed_memory
    print("kept", keep_freed_memory())
    def one_step():  # eight 3 MiB activations, made, written and dropped
        arrays = [np.empty(3 << 18, np.float32) for _ in range(8)]
        for a in arrays:
            a.fill(1.0)
    for _ in range(3):
        one_step()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(10):
        one_step()
    print("faults", (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 10)
"""


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="GNU libc's mallopt")
def test_freed_memory_is_reused_without_page_faults() -> None:
    import platform

    if platform.libc_ver()[0] != "glibc":
        pytest.skip("GNU libc's mallopt")
    out = run_python(FAULTS)
    assert "kept True" in out, out
    pages = 8 * (3 << 20) // 4096  # 6,144 pages written per step
    faults = float(out.split("faults")[1])
    assert faults < 0.01 * pages, out  # measured: 0
    off = run_python(FAULTS, MINITORCH_ACCEL_KEEP_HEAP="0")
    assert "kept False" in off, off
