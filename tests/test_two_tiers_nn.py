"""Linear, cross-entropy, batch norm and ReLU on both tiers: the reference code of their
own files (``mta.fast_paths(False)``) and the backends' fast forwards.

Each op runs forward and backward with the fast paths on and off, on ``cpu``, ``cpu:1``
and the strict stand-in (``support/strict_xp.py``), and the two tiers must agree:

- equal in float64 where the fast path does the same operations in the same order (the
  threaded ReLU: the same ufunc on slices; linear and cross-entropy on the CPU, which
  register no fast path: their one tier is checked against a NumPy reference);
- to ``rtol=1e-12`` for batch norm's fast forward and gradients, whose per-channel sums
  come from ``einsum`` instead of ``mean``/``var``/``sum`` (another order of the same
  additions);
- to ``rtol=1e-12`` for CUDA's fused ReLU and cross-entropy kernels, run on the host
  (``support/host_kernels.py``, needs g++): the kernels reduce each row in their own
  order.

The strict stand-in gets the fast forwards written for any array module (batch
norm's); the ReLU and cross-entropy fast paths are NumPy's thread pool and CUDA kernels,
so ``strict`` runs their reference code (checked against the CPU's).
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from support.host_kernels import CXX, HostFastPaths, host_fast_paths
from support.strict_backend import registered

import minitorch_accel as mta
import minitorch_accel.nn.functional as F
from minitorch_accel.backends import fast_paths, registry
from minitorch_accel.backends.cupy.fast_nn import register_fast_nn as register_cuda_fast_nn
from minitorch_accel.backends.numpy import fast_nn
from minitorch_accel.backends.numpy.backend import NumpyBackend
from minitorch_accel.ops.elementwise import Relu, ReluBackward
from minitorch_accel.ops.linear import Linear, LinearGradWeight
from minitorch_accel.ops.loss import CrossEntropy, CrossEntropyBackward
from minitorch_accel.ops.norm import BatchNorm, BatchNormGrad
from minitorch_accel.utils.gradcheck import gradgradcheck

Arrays = list[np.ndarray]
REFERENCE_CLASSES = [
    Relu,
    ReluBackward,
    Linear,
    LinearGradWeight,
    CrossEntropy,
    CrossEntropyBackward,
    BatchNorm,
    BatchNormGrad,
]


@pytest.fixture(params=["cpu", "cpu:1", "strict"])
def device(request: pytest.FixtureRequest) -> Iterator[str]:
    """Each test on the CPU, its second virtual device, and the strict stand-in (with
    batch norm's array-module generic fast forward registered for it).
    """
    if request.param != "strict":
        yield request.param
        return
    with registered():
        fast_paths.register_fast("strict", "BatchNorm", fast_nn.batch_norm_forward)
        fast_paths.register_fast("strict", "BatchNormGrad", fast_nn.batch_norm_grad)
        yield "strict"
    fast_paths.table("strict").clear()


@pytest.fixture
def threads() -> Iterator[None]:
    """Two CPU threads, so that the threaded fast paths run (restored afterwards)."""
    before = mta.get_num_threads()
    mta.set_num_threads(2)
    yield
    mta.set_num_threads(before)


def both_tiers(run: Callable[[], Arrays]) -> tuple[Arrays, Arrays]:
    """``run()`` with the fast paths on, then off."""
    with mta.fast_paths(True):
        fast = run()
    with mta.fast_paths(False):
        reference = run()
    return fast, reference


def assert_tiers_agree(fast: Arrays, reference: Arrays, rtol: float = 0.0) -> None:
    assert len(fast) == len(reference)
    for f, r in zip(fast, reference, strict=True):
        assert f.shape == r.shape and f.dtype == r.dtype
        if rtol == 0.0:
            np.testing.assert_array_equal(f, r)
        else:
            np.testing.assert_allclose(f, r, rtol=rtol, atol=1e-14)


def leaf(a: np.ndarray, device: str) -> mta.Tensor:
    """A leaf on ``device``; on ``"cpu"`` it keeps the memory layout of ``a``."""
    if device == "cpu":
        return mta.from_numpy(a).requires_grad_(True)
    return mta.tensor(a, device=device, requires_grad=True)


def grads_of(out: mta.Tensor, inputs: list[mta.Tensor], seed: np.ndarray) -> Arrays:
    """``out`` and the gradients of ``sum(out * seed)`` in ``inputs``, as NumPy arrays."""
    out.backward(mta.tensor(seed, dtype=out.dtype, device=out.device))
    found = [out.detach().cpu().numpy()]
    for t in inputs:
        assert t.grad is not None
        found.append(t.grad.cpu().numpy())
    return found


# ------------------------------------------------------------------ linear
@pytest.mark.parametrize("x_shape", [(5, 4), (2, 3, 4)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_both_tiers_match_numpy(device: str, x_shape: tuple[int, ...], bias: bool) -> None:
    rng = np.random.default_rng(0)
    x, w, b = rng.standard_normal(x_shape), rng.standard_normal((3, 4)), rng.standard_normal(3)
    seed = rng.standard_normal((*x_shape[:-1], 3))

    def run() -> Arrays:
        inputs = [leaf(x, device), leaf(w, device)] + ([leaf(b, device)] if bias else [])
        return grads_of(F.linear(*inputs), inputs, seed)

    fast, reference = both_tiers(run)
    assert_tiers_agree(fast, reference)
    rows, seed_rows = x.reshape(-1, 4), seed.reshape(-1, 3)
    expected = [x @ w.T + (b if bias else 0), seed @ w, seed_rows.T @ rows]
    expected += [seed_rows.sum(0)] if bias else []
    for found, want in zip(reference, expected, strict=True):
        np.testing.assert_allclose(found, want, rtol=1e-12, atol=1e-14)


def test_linear_second_derivatives_of_a_batched_input() -> None:
    rng = np.random.default_rng(1)
    inputs = [leaf(rng.standard_normal(s), "cpu") for s in ((2, 3, 4), (5, 4), (5,))]
    with mta.fast_paths(False):
        assert gradgradcheck(lambda *a: F.linear(*a), inputs)


# ------------------------------------------------------------------ relu
@pytest.mark.parametrize("channels_last", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_relu_both_tiers_bit_equal(
    device: str, threads: None, channels_last: bool, dtype: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 3, 120, 150)).astype(dtype)  # above a block and two chunks
    if channels_last:
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    seed = rng.standard_normal(x.shape).astype(dtype)
    chunked: list[int] = []
    original, original_blocks = fast_nn.parallel_for, fast_nn.for_blocks

    def spy(total: int, fn: Any, grain: int = 1) -> None:
        chunked.append(total)
        original(total, fn, grain)

    def block_spy(total: int, fn: Any, block: int) -> None:
        chunked.append(total)
        original_blocks(total, fn, block)

    monkeypatch.setattr(fast_nn, "parallel_for", spy)
    monkeypatch.setattr(fast_nn, "for_blocks", block_spy)

    def run() -> Arrays:
        t = leaf(x, device)
        return grads_of(F.relu(t), [t], seed)

    fast, reference = both_tiers(run)
    assert_tiers_agree(fast, reference)
    np.testing.assert_array_equal(reference[0], np.maximum(x, 0))
    np.testing.assert_array_equal(reference[1], seed * (x > 0))
    if device == "cpu":  # the threaded kernels keep the input's memory layout
        layout = np.argsort([-s for s in x.strides]).tolist()
        assert np.argsort([-s for s in fast[0].strides]).tolist() == layout
    # the blocked forward (and the threaded backward, where the gradient's layout
    # matches) ran on the CPU, and only with the fast paths on
    assert chunked[:1] == ([x.size] if device != "strict" else []) and set(chunked) <= {x.size}


def relu_grad_by_hand(x: np.ndarray, g: np.ndarray) -> np.ndarray:
    """PyTorch's ReLU gradient written out element by element: 0 where the output
    ``max(x, 0)`` is <= 0 (NaN <= 0 is false), else the incoming gradient.
    """
    out = np.empty_like(g)
    for i, (xv, gv) in enumerate(zip(x.reshape(-1).tolist(), g.reshape(-1).tolist(), strict=True)):
        y = xv if (xv != xv or xv > 0) else 0.0
        out.reshape(-1)[i] = 0.0 if y <= 0 else gv
    return out


#: A ReLU's edge cases: NaN, signed zeros and infinities in the input, and an infinite
#: or NaN gradient both where the unit is off and where it is on.
RELU_EDGES = np.array(
    [
        [np.nan, -0.0, 0.0, -np.inf, np.inf, -1.0, 2.5, np.nan, -3.0, 4.0],
        [1.0, 2.0, 3.0, np.inf, 5.0, -np.inf, np.nan, -np.inf, np.nan, np.inf],
    ]
)


@pytest.mark.parametrize("big", [False, True], ids=["one-chunk", "chunked"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_relu_gradient_follows_pytorchs_rule_at_nan_and_inf(
    device: str, threads: None, dtype: Any, big: bool
) -> None:
    """A NaN output passes its gradient; an off unit gives exactly 0, even for an
    infinite or NaN incoming gradient (``grad * (y > 0)`` would give NaN there). Checked
    on both tiers, in one chunk and in several, against the rule written out by hand
    and against PyTorch where it is installed.
    """
    x, g = RELU_EDGES.astype(dtype)
    if big:  # the edge cases spread over a tensor cut into chunks
        rng = np.random.default_rng(4)
        x = np.resize(x, 4 * fast_nn.ELEMENT_GRAIN) * rng.permutation(4 * fast_nn.ELEMENT_GRAIN)
        x = x.astype(dtype).reshape(64, -1)
        g = np.resize(g, x.size).astype(dtype).reshape(x.shape)

    def run() -> Arrays:
        t = leaf(x, device)
        return grads_of(F.relu(t), [t], g)

    fast, reference = both_tiers(run)
    assert_tiers_agree(fast, reference)
    np.testing.assert_array_equal(reference[1], relu_grad_by_hand(x, g))
    torch = pytest.importorskip("torch")
    t = torch.tensor(x, requires_grad=True)
    torch.relu(t).backward(torch.tensor(g))
    assert t.grad is not None
    np.testing.assert_array_equal(fast[1], t.grad.numpy())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_small_relu_and_binary_fast_forwards_give_the_reference_bits(dtype: Any) -> None:
    """Below one block (ReLU) or two chunks (add, mul, ReLU backward) the CPU fast paths
    skip their set-up: same bits as NumPy's reference, signed zeros, NaN and inf included.
    """
    special = np.array([-0.0, 0.0, np.nan, -np.inf, np.inf, -1.0, 2.5], dtype)
    x = np.concatenate([special, np.random.default_rng(3).standard_normal(93).astype(dtype)])
    x = x.reshape(4, 25)
    for array in (x, np.asfortranarray(x)):
        y = fast_nn.relu_forward(array)
        reference = np.where(array < 0, array.dtype.type(0), array)  # relu(-0.0) is -0.0
        np.testing.assert_array_equal(y, reference)
        assert (np.signbit(y) == np.signbit(reference)).all()
        assert y.flags.c_contiguous == array.flags.c_contiguous  # layout kept
    g = np.full_like(x, 3.0)
    np.testing.assert_array_equal(fast_nn.relu_backward(x, g), np.where(x <= 0, 0, g))
    before = mta.get_num_threads()
    mta.set_num_threads(2)  # the threaded forwards apply from two threads
    try:
        other = x[::-1].copy()
        for name, ufunc in fast_nn.BINARY_UFUNCS.items():
            function = types.SimpleNamespace(forward=ufunc)  # the reference forward
            found = fast_nn._threaded_binary(ufunc)(function, x, other)
            np.testing.assert_array_equal(found, ufunc(x, other), err_msg=name)
    finally:
        mta.set_num_threads(before)


def test_relu_second_derivative(device: str) -> None:
    x = leaf(np.array([[-1.5, 0.5], [2.0, -0.25]]), device)
    (g,) = mta.autograd.grad(F.relu(x).sum() * 3.0, [x], create_graph=True)
    np.testing.assert_array_equal(g.detach().cpu().numpy(), [[0.0, 3.0], [3.0, 0.0]])
    with mta.fast_paths(False):
        assert gradgradcheck(lambda a: F.relu(a) * a, [leaf(np.array([[-1.5, 0.5]]), "cpu")])


# ------------------------------------------------------------------ cross-entropy
def numpy_cross_entropy(
    x: np.ndarray, y: np.ndarray, reduction: str, smoothing: float, ignore: int
) -> np.ndarray:
    shifted = x - x.max(1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(1, keepdims=True))
    valid = y != ignore
    q = np.full(x.shape, smoothing / x.shape[1])
    q[np.arange(len(y)), np.where(valid, y, 0)] += 1 - smoothing
    loss = -(q * log_p).sum(1) * valid
    if reduction == "none":
        return loss
    return np.asarray(loss.sum() / (valid.sum() if reduction == "mean" else 1))


CE_CASES = [
    (reduction, smoothing, ignore)
    for reduction in ("none", "sum", "mean")
    for smoothing in (0.0, 0.1)
    for ignore in (-100, 2)
]


@pytest.mark.parametrize("reduction, smoothing, ignore", CE_CASES)
def test_cross_entropy_both_tiers_match_numpy(
    device: str, reduction: str, smoothing: float, ignore: int
) -> None:
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((7, 5)), np.array([0, 2, 4, 1, 2, 3, 0])
    seed = rng.standard_normal(7) if reduction == "none" else np.array(1.5)

    def run() -> Arrays:
        t = leaf(x, device)
        loss = F.cross_entropy(
            t,
            mta.tensor(y, device=device),
            reduction=reduction,
            label_smoothing=smoothing,
            ignore_index=ignore,
        )
        return grads_of(loss, [t], seed)

    fast, reference = both_tiers(run)
    assert_tiers_agree(fast, reference)
    np.testing.assert_allclose(
        reference[0],
        numpy_cross_entropy(x, y, reduction, smoothing, ignore),
        rtol=1e-12,
    )
    eps, numeric = 1e-6, np.zeros_like(x)  # central differences of sum(loss * seed)
    for i in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[i] = eps
        up = (numpy_cross_entropy(x + step, y, reduction, smoothing, ignore) * seed).sum()
        down = (numpy_cross_entropy(x - step, y, reduction, smoothing, ignore) * seed).sum()
        numeric[i] = (up - down) / (2 * eps)
    np.testing.assert_allclose(reference[1], numeric, rtol=1e-6, atol=1e-8)


def test_cross_entropy_per_position_classes(device: str) -> None:
    rng = np.random.default_rng(4)
    x, y = rng.standard_normal((2, 4, 3)), np.array([[0, 3, 1], [2, 2, -100]])

    def run() -> Arrays:
        t = leaf(x, device)
        loss = F.cross_entropy(t, mta.tensor(y, device=device), reduction="none")
        return grads_of(loss, [t], np.ones(y.shape))

    fast, reference = both_tiers(run)
    assert_tiers_agree(fast, reference)
    rows = x.transpose(0, 2, 1).reshape(-1, 4)
    want = numpy_cross_entropy(rows, y.reshape(-1), "none", 0.0, -100).reshape(2, 3)
    np.testing.assert_allclose(reference[0], want, rtol=1e-12)


@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_cross_entropy_second_derivatives(smoothing: float) -> None:
    y = mta.tensor([1, 0, 2])
    x = leaf(np.random.default_rng(5).standard_normal((3, 4)), "cpu")
    with mta.fast_paths(False):
        assert gradgradcheck(
            lambda a: F.cross_entropy(a, y, reduction="mean", label_smoothing=smoothing), [x]
        )
        assert gradgradcheck(
            lambda a: F.cross_entropy(a, y, reduction="none", label_smoothing=smoothing) ** 2, [x]
        )


# ------------------------------------------------------------------ batch norm
BN_CASES = [
    (shape, training, affine)
    for shape in ((6, 3), (4, 3, 5, 2))
    for training in (True, False)
    for affine in (True, False)
]


@pytest.mark.parametrize("shape, training, affine", BN_CASES)
def test_batch_norm_both_tiers(
    device: str, shape: tuple[int, ...], training: bool, affine: bool
) -> None:
    rng = np.random.default_rng(6)
    x = rng.standard_normal(shape) * 3 + 1
    w, b = rng.standard_normal(3), rng.standard_normal(3)
    mean0, var0 = rng.standard_normal(3), rng.uniform(0.5, 2, 3)
    seed = rng.standard_normal(shape)

    def run() -> Arrays:
        t = leaf(x, device)
        params = [leaf(w, device), leaf(b, device)] if affine else [None, None]
        stats = [mta.tensor(mean0, device=device), mta.tensor(var0, device=device)]
        mean, var = stats
        weight, bias = params
        out = F.batch_norm(t, mean, var, weight, bias, training=training, momentum=0.2)
        found = grads_of(out, [t] + [p for p in params if p is not None], seed)
        return found + [s.cpu().numpy() for s in stats]

    fast, reference = both_tiers(run)
    assert_tiers_agree(fast, reference, rtol=1e-12)
    axes = (0, *range(2, len(shape)))
    mean = x.mean(axes) if training else mean0
    var = x.var(axes) if training else var0
    view = (1, 3) + (1,) * (len(shape) - 2)
    x_hat = (x - mean.reshape(view)) / np.sqrt(var.reshape(view) + 1e-5)
    want = x_hat * w.reshape(view) + b.reshape(view) if affine else x_hat
    np.testing.assert_allclose(reference[0], want, rtol=1e-12, atol=1e-14)
    if training:  # the running statistics moved by momentum, var unbiased
        count = x.size // 3
        np.testing.assert_allclose(reference[-2], 0.8 * mean0 + 0.2 * mean, rtol=1e-12)
        np.testing.assert_allclose(
            reference[-1], 0.8 * var0 + 0.2 * var * count / (count - 1), rtol=1e-12
        )
    else:
        np.testing.assert_array_equal(reference[-2], mean0)


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_second_derivatives_on_both_tiers(fast: bool, training: bool) -> None:
    rng = np.random.default_rng(10)
    x = leaf(rng.standard_normal((4, 2, 3)), "cpu")
    w, b = leaf(rng.standard_normal(2), "cpu"), leaf(rng.standard_normal(2), "cpu")
    mean, var = mta.tensor(rng.standard_normal(2)), mta.tensor(rng.uniform(0.5, 2, 2))

    def fn(*a: mta.Tensor) -> mta.Tensor:
        return F.batch_norm(a[0], mean, var, a[1], a[2], training=training, momentum=0.0)

    with mta.fast_paths(fast):
        assert gradgradcheck(fn, [x, w, b])


def test_batch_norm_float16_sums_in_float32_on_both_tiers() -> None:
    # float16 storage, float32 statistics and sums on both tiers: they differ only by the
    # float16 rounding of the results (a few units in the last place)
    rng = np.random.default_rng(12)
    x, seed = rng.standard_normal((8, 3, 4, 4)), rng.standard_normal((8, 3, 4, 4))
    w0 = rng.uniform(0.5, 2, 3).astype(np.float16)

    def run() -> Arrays:
        t, w = leaf(x.astype(np.float16), "cpu"), leaf(w0, "cpu")
        return grads_of(F.batch_norm(t, None, None, w, training=True), [t, w], seed)

    fast, reference = both_tiers(run)
    for f, r in zip(fast, reference, strict=True):
        assert f.dtype == r.dtype == np.float16
        scale = float(np.abs(r.astype(np.float64)).max())
        np.testing.assert_allclose(f.astype(np.float64), r, rtol=4e-3, atol=4e-3 * scale)


def test_batch_norm_fast_forward_keeps_a_channels_last_layout() -> None:
    x = np.random.default_rng(7).standard_normal((2, 4, 3, 3)).transpose(0, 2, 3, 1)
    x = np.ascontiguousarray(x).transpose(0, 3, 1, 2)
    with mta.fast_paths(True):
        out = F.batch_norm(mta.from_numpy(x), None, None, training=True)
    with mta.fast_paths(False):
        reference = F.batch_norm(mta.from_numpy(x), None, None, training=True)
    assert out.array.transpose(0, 2, 3, 1).flags.c_contiguous
    np.testing.assert_allclose(out.numpy(), reference.numpy(), rtol=1e-12, atol=1e-14)


# ------------------------------------------------------------------ the reference bodies
@pytest.mark.parametrize("cls", REFERENCE_CLASSES, ids=lambda c: c.__name__)
def test_reference_bodies_hold_no_fast_path_hooks(cls: type) -> None:
    source = inspect.getsource(cls)
    for hook in ("kernel(", "cupy", "is_grad_enabled", "_raw_backward", "channels_last"):
        assert hook not in source, f"{cls.__name__} holds {hook!r}"


def test_the_fast_tables_name_these_ops() -> None:
    cpu = fast_paths.table("cpu")
    assert {"Relu", "ReluBackward", "BatchNorm", "BatchNormGrad"} <= set(cpu)
    cuda = fast_paths.table("cuda")
    assert {"Relu", "CrossEntropy", "CrossEntropyBackward", "BatchNormGrad"} <= set(cuda)
    names = {c.op_name for c in REFERENCE_CLASSES}  # the tables key on the classes' op names
    assert names == {c.__name__ for c in REFERENCE_CLASSES}


# ------------------------------------------------------------------ CUDA's kernels, on the host
class HostKernelBackend(NumpyBackend):
    """NumPy plus the CUDA backend's kernels compiled for the host (a test double)."""

    name = "hostnn"
    paths: HostFastPaths
    used: set[str] = set()

    def kernel(self, name: str) -> Any:
        HostKernelBackend.used.add(name)
        return self.paths.get(name)


@pytest.fixture(scope="module")
def host_kernels(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if CXX is None:
        pytest.skip("needs a C++ compiler (g++)")
    HostKernelBackend.paths = host_fast_paths(tmp_path_factory.mktemp("nn"))
    registry.register("hostnn", HostKernelBackend)
    register_cuda_fast_nn("hostnn")
    yield "hostnn"
    registry.unregister("hostnn")
    fast_paths.table("hostnn").clear()


@pytest.mark.parametrize("reduction, smoothing, ignore", CE_CASES)
def test_cuda_cross_entropy_kernels_match_the_reference(
    host_kernels: str, reduction: str, smoothing: float, ignore: int
) -> None:
    rng = np.random.default_rng(8)
    x, y = rng.standard_normal((9, 6)) * 4, np.array([0, 2, 5, 1, 2, 3, 0, 4, 2])
    seed = rng.standard_normal(9) if reduction == "none" else np.array(0.7)

    def run(device: str) -> Arrays:
        t = leaf(x, device)
        loss = F.cross_entropy(
            t,
            mta.tensor(y, device=device),
            reduction=reduction,
            label_smoothing=smoothing,
            ignore_index=ignore,
        )
        return grads_of(loss, [t], seed)

    HostKernelBackend.used.clear()
    fast = run(host_kernels)
    with mta.fast_paths(False):
        reference = run(host_kernels)
    assert_tiers_agree(fast, reference, rtol=1e-12)
    assert_tiers_agree(fast, run("cpu"), rtol=1e-12)
    fused = {"cross_entropy_forward", "cross_entropy_backward"}
    assert (fused <= HostKernelBackend.used) == (smoothing == 0.0)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cuda_cross_entropy_tiers_mix(host_kernels: str, reduction: str) -> None:
    # the fast paths switched off between the forward and the backward, and back on
    rng = np.random.default_rng(13)
    x, y = rng.standard_normal((5, 4)), np.array([3, -100, 0, 1, 1])
    found = []
    for forward_fast in (True, False):
        t = leaf(x, host_kernels)
        with mta.fast_paths(forward_fast):
            loss = F.cross_entropy(t, mta.tensor(y, device=host_kernels), reduction=reduction)
        with mta.fast_paths(not forward_fast):
            loss.sum().backward()
        assert t.grad is not None
        found.append(t.grad.numpy())
    t = leaf(x, "cpu")
    F.cross_entropy(t, mta.tensor(y), reduction=reduction).sum().backward()
    assert t.grad is not None
    for grad in found:
        np.testing.assert_allclose(grad, t.grad.numpy(), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_cuda_cross_entropy_second_derivatives(host_kernels: str, reduction: str) -> None:
    y = mta.tensor([1, 0, 2, 1], device=host_kernels)
    x = leaf(np.random.default_rng(11).standard_normal((4, 3)), host_kernels)
    HostKernelBackend.used.clear()
    assert gradgradcheck(lambda a: F.cross_entropy(a, y, reduction=reduction) ** 2, [x])
    assert "cross_entropy_backward" in HostKernelBackend.used


def test_cuda_relu_kernels_match_the_reference(host_kernels: str) -> None:
    rng = np.random.default_rng(9)
    x, seed = rng.standard_normal((2, 5, 4, 3)), rng.standard_normal((2, 5, 4, 3))

    def run() -> Arrays:
        t = leaf(x, host_kernels)
        return grads_of(F.relu(t), [t], seed)

    HostKernelBackend.used.clear()
    fast, reference = both_tiers(run)
    assert_tiers_agree(fast, reference)
    assert {"relu_forward", "relu_backward"} <= HostKernelBackend.used


def test_cuda_cross_entropy_defers_a_bad_label_to_backward(host_kernels: str) -> None:
    logits = mta.zeros(3, 5, device=host_kernels, requires_grad=True)
    with pytest.raises(IndexError, match=r"label 7 is out of range for 5 classes"):  # noqa: PT012
        loss = F.cross_entropy(logits, mta.tensor([0, 7, 1], device=host_kernels))
        loss.backward()
    assert logits.grad is None
