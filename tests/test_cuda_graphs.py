"""Captured training steps (``cuda.graphs``): on the strict stand-in's fake stream capture
(``support/fake_capture.py``), on the CPU (eager), and on a real GPU (marked ``gpu``).
"""

from __future__ import annotations

import contextlib
import logging
import types
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import support.strict_xp as sx
from support.fake_capture import CapturingStrictBackend, FakeGraph

import minitorch_accel as mta
from minitorch_accel import nn, optim
from minitorch_accel.backends import CaptureError, registry
from minitorch_accel.cuda.graphs import CUDAGraph, capture_step, graph


@pytest.fixture(scope="module", autouse=True)
def strict_backend() -> Iterator[None]:
    """The ``strict`` backend with the fake stream capture, for this module."""
    registry.register("strict", CapturingStrictBackend)
    try:
        yield
    finally:
        registry.unregister("strict")


@pytest.fixture(autouse=True)
def no_capture_left() -> Iterator[None]:
    """Every test ends with no capture running, refused or not."""
    yield
    assert sx.CAPTURE is None, "a capture was left running"


# ---------------------------------------------------------------- the fake capture itself
def test_capture_records_kernels_without_changing_older_memory() -> None:
    x = mta.tensor([1.0, 2.0, 3.0], device="strict")
    w = mta.tensor([10.0, 20.0, 30.0], device="strict")
    g = CUDAGraph()
    with graph(g, "strict"):
        y = x * 2 + 1  # scalars are filled in on the device, not copied from the host
        w.array[...] += y.array  # a write into memory older than the capture
    fake = g._graph
    assert isinstance(fake, FakeGraph)
    assert fake.names == ["full", "mul", "full", "add", "getitem", "iadd", "setitem"]
    np.testing.assert_array_equal(w.detach().numpy(), [10.0, 20.0, 30.0])  # capture ran nothing
    g.replay()
    np.testing.assert_array_equal(y.numpy(), [3.0, 5.0, 7.0])
    np.testing.assert_array_equal(w.detach().numpy(), [13.0, 25.0, 37.0])


def test_replay_reads_new_inputs_and_writes_the_same_output_buffer() -> None:
    x = mta.tensor([1.0, 2.0], device="strict")
    g = CUDAGraph()
    with graph(g, "strict"):
        y = (x * x).sum()
    output = y.array
    for value in (3.0, -4.0, 0.5):
        x.array[...] = value
        g.replay()
        assert y.array is output  # static output: same buffer every replay
        assert y.item() == 2 * value * value


def test_cuda_graph_replay_before_capture_is_refused() -> None:
    with pytest.raises(RuntimeError, match="nothing captured yet"):
        CUDAGraph().replay()


# ---------------------------------------------------------------- a training scenario
def _batches(count: int, batch: int, dtype: str) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(7)
    return [
        (
            rng.standard_normal((batch, 4)).astype(dtype),
            rng.standard_normal((batch, 3)).astype(dtype),
        )
        for _ in range(count)
    ]


def training_step(model: nn.Module, opt: Any, loss_fn: Any) -> Any:
    """The step ``step(x, y)``: zero the gradients, the loss of ``model(x)`` against
    ``y``, backward, ``opt.step()``; it returns the loss, detached.
    """

    def step(x: Any, y: Any) -> Any:
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss.detach()

    return step


def warmed_up(step: Any, batch: Any, opt: Any, captured: bool, warmup: int) -> Any:
    """``step`` captured after ``warmup`` eager steps on ``batch`` (``capture_step``), or
    ``step`` itself after the same eager steps: the two runs a test compares.
    """
    if captured:
        run = capture_step(step, batch, optimizers=opt, warmup=warmup)
        assert run.captured
        return run
    for _ in range(warmup):
        step(*batch)
    return step


def squared_error(out: Any, y: Any) -> Any:
    """The mean squared error, written out (the loss of the small-model tests)."""
    return ((out - y) ** 2).mean()


def train(
    device: str, kind: str, steps: int, captured: bool, dtype: str = "float64", warmup: int = 2
) -> tuple[list[float], list[np.ndarray]]:
    """Losses and final parameters of ``steps`` steps with a StepLR schedule; eager runs do
    the same ``warmup`` steps on the example batch as the captured run."""
    mta.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3)).to(dtype=dtype).to(device)
    if kind == "sgd":
        opt: optim.Optimizer = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    else:
        opt = optim.Adam(model.parameters(), lr=0.01)
    sched = optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)

    step = training_step(model, opt, squared_error)

    data = [
        (mta.tensor(x, device=device), mta.tensor(y, device=device))
        for x, y in _batches(steps + 1, 16, dtype)
    ]
    run = warmed_up(step, data[0], opt, captured, warmup)
    losses = []
    for x, y in data[1:]:
        losses.append(run(x, y).item())
        sched.step()
    return losses, [p.detach().numpy() for p in model.parameters()]


def train_cnn(
    model: nn.Module,
    loss_fn: Any,
    device: str,
    shape: tuple[int, ...],
    captured: bool,
    warmup: int = 2,
    steps: int = 5,
) -> tuple[list[float], list[np.ndarray]]:
    """Losses of ``steps`` momentum-SGD steps of ``model`` on new random batches of
    ``shape`` (10 classes), eager or captured after ``warmup`` steps on the first batch
    (eager runs do the same warm-up), and the model's state after.
    """
    opt = optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    dtype = next(model.parameters()).dtype

    step = training_step(model, opt, loss_fn)

    rng = np.random.default_rng(5)
    batches = [
        (
            mta.tensor(rng.random(shape).astype(dtype), device=device),
            mta.tensor(rng.integers(0, 10, shape[0]), device=device),
        )
        for _ in range(steps + 1)
    ]
    fn = warmed_up(step, batches[0], opt, captured, warmup)
    losses = [float(fn(x, y).item()) for x, y in batches[1:]]
    return losses, [t.detach().numpy() for t in model.state_dict().values()]


def test_captured_sgd_equals_eager_bit_for_bit_with_a_schedule() -> None:
    eager = train("strict", "sgd", 8, captured=False)
    captured = train("strict", "sgd", 8, captured=True)
    assert captured[0] == eager[0]
    for a, b in zip(captured[1], eager[1], strict=True):
        np.testing.assert_array_equal(a, b)


def test_captured_adam_equals_eager_with_a_schedule() -> None:
    eager = train("strict", "adam", 8, captured=False)
    captured = train("strict", "adam", 8, captured=True)
    # the bias corrections are folded into lr and eps: equal up to float64 rounding
    np.testing.assert_allclose(captured[0], eager[0], rtol=1e-12)
    for a, b in zip(captured[1], eager[1], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-11, atol=1e-14)


def test_captured_cnn_with_batch_norm_equals_eager() -> None:
    """Convolutions, batch norm (its running statistics updated in place by every replay),
    pooling, cross-entropy and momentum SGD, captured on the stand-in: the replays give
    the eager steps' losses, parameters and running statistics.
    """

    def run(captured: bool) -> tuple[list[float], list[np.ndarray]]:
        mta.manual_seed(0)
        model = nn.models.SmallVGG(width=2).to(dtype="float64").to("strict")
        loss_fn = nn.CrossEntropyLoss()
        return train_cnn(model, loss_fn, "strict", (4, 1, 8, 8), captured, warmup=1)

    eager, captured = run(False), run(True)
    np.testing.assert_allclose(captured[0], eager[0], rtol=1e-12)
    for a, b in zip(captured[1], eager[1], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-11, atol=1e-13)


def test_one_graph_serves_every_call_and_keeps_the_learning_rate_on_the_device() -> None:
    w = mta.tensor([1.0, 1.0], device="strict", requires_grad=True)
    opt = optim.SGD([w], lr=1.0)

    def step(x: Any) -> Any:
        opt.zero_grad()
        (w * x).sum().backward()
        opt.step()

    backend = mta.Device("strict").backend
    before = len(backend.graphs)  # type: ignore[attr-defined]
    run = capture_step(step, mta.ones(2, device="strict"), optimizers=opt, warmup=1)
    assert len(backend.graphs) == before + 1  # type: ignore[attr-defined]
    np.testing.assert_array_equal(w.detach().numpy(), [0.0, 0.0])  # warm-up only
    inputs = run.static_inputs[0].array
    opt.param_groups[0]["lr"] = 0.5  # a scheduler's change, no recapture
    run(mta.tensor([2.0, 4.0], device="strict"))
    assert run.static_inputs[0].array is inputs
    np.testing.assert_array_equal(w.detach().numpy(), [-1.0, -2.0])
    assert backend.graphs[-1].replays == 1  # type: ignore[attr-defined]
    assert opt.param_groups[0]["lr"] == 0.5  # the host value stays a float


# ---------------------------------------------------------------- what capture refuses
def _capture(body: Any, **options: Any) -> Any:
    w = mta.tensor([1.0, 2.0], device="strict", requires_grad=True)

    def step(x: Any) -> Any:
        loss = (w * x).sum()
        body(loss)
        return loss.detach()

    return capture_step(step, mta.ones(2, device="strict"), warmup=1, **options)


@pytest.mark.parametrize(
    "body, op, cause",
    [
        (lambda loss: loss.item(), "item", "ndarray.get"),
        (lambda loss: loss.detach().numpy(), "numpy", "ndarray.get"),
        (lambda loss: float(loss), "__float__", "ndarray.get"),
        (lambda loss: loss.device.backend.synchronize(loss.device), "synchronize", "synchronize"),
        (lambda loss: mta.tensor([1.0], device="strict"), "tensor", "host data"),
        (lambda loss: mta.ones(1).to("strict"), "to", "host data"),
    ],
    ids=["item", "numpy", "float", "synchronize", "new-tensor", "cpu-tensor"],
)
def test_capture_refuses_host_work_naming_the_op_and_the_cause(
    body: Any, op: str, cause: str
) -> None:
    with pytest.raises(CaptureError) as info:
        _capture(body)
    message = str(info.value)
    assert "capture refused" in message and op in message and cause in message
    assert "test_cuda_graphs.py" in message  # the user's line
    assert "cudaErrorStreamCaptureUnsupported" in message


def test_fallback_eager_warns_once_and_runs_eagerly() -> None:
    with pytest.warns(RuntimeWarning, match="runs eagerly") as record:
        run = _capture(lambda loss: loss.item(), fallback="eager")
    assert len(record) == 1 and not run.captured
    assert run(mta.tensor([3.0, 1.0], device="strict")).item() == 5.0


def test_a_shape_change_is_refused_naming_both_shapes() -> None:
    run = _capture(lambda loss: None)
    assert run.captured
    with pytest.raises(CaptureError, match=r"shape change: argument 0 has shape \(3,\).*\(2,\)"):
        run(mta.ones(3, device="strict"))
    with pytest.raises(CaptureError, match="argument 0 has dtype float64, captured float32"):
        run(mta.ones(2, device="strict", dtype="float64"))


def test_a_parameter_replaced_after_capture_is_refused() -> None:
    w = mta.tensor([1.0, 2.0], device="strict", requires_grad=True)
    opt = optim.SGD([w], lr=0.1)

    def step(x: Any) -> Any:
        opt.zero_grad()
        (w * x).sum().backward()
        opt.step()

    run = capture_step(step, mta.ones(2, device="strict"), optimizers=opt, warmup=1)
    run(mta.ones(2, device="strict"))
    w.data = mta.zeros(2, device="strict")  # new memory the graph does not know
    with pytest.raises(CaptureError, match=r"new allocation after capture.*shape \(2,\)"):
        run(mta.ones(2, device="strict"))


def test_a_cpu_batch_is_copied_into_the_static_inputs() -> None:
    run = _capture(lambda loss: None)
    assert run(mta.tensor([3.0, 4.0])).item() == 11.0  # the batch came from the host


def test_bad_options_are_refused() -> None:
    with pytest.raises(ValueError, match="fallback must be"):
        capture_step(lambda x: x, mta.ones(1), fallback="quiet")
    with pytest.raises(ValueError, match="warmup must be a positive int"):
        capture_step(lambda x: x, mta.ones(1), warmup=0)
    with pytest.raises(ValueError, match="at least one tensor"):
        capture_step(lambda x: x, (1, 2))


# ---------------------------------------------------------------- the CPU: eager, quietly
def test_on_the_cpu_the_step_runs_eagerly_and_says_so_once_at_debug_level(
    caplog: pytest.LogCaptureFixture,
) -> None:
    import minitorch_accel.cuda.graphs as graphs_module

    graphs_module._said_eager.discard("cpu")
    calls: list[Any] = []

    def step(x: Any) -> Any:
        calls.append(x.shape)
        return x * 2

    with caplog.at_level(logging.DEBUG, logger="minitorch_accel.cuda.graphs"):
        for _ in range(3):
            run = capture_step(step, mta.ones(2))
    assert not run.captured and calls == []  # no warm-up on the CPU
    np.testing.assert_array_equal(run(mta.ones(2)).numpy(), [2.0, 2.0])
    assert calls == [(2,)]
    assert len([r for r in caplog.records if "eagerly" in r.getMessage()]) == 1
    assert all(r.levelno == logging.DEBUG for r in caplog.records)


# ---------------------------------------------------------------- on a real GPU
@pytest.mark.gpu
@pytest.mark.parametrize("kind", ["sgd", "adam"])
def test_gpu_captured_equals_eager_over_50_steps(kind: str) -> None:
    eager = train("cuda", kind, 50, captured=False, dtype="float32")
    captured = train("cuda", kind, 50, captured=True, dtype="float32")
    np.testing.assert_allclose(captured[0], eager[0], rtol=1e-5)
    for a, b in zip(captured[1], eager[1], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


@pytest.mark.gpu
@pytest.mark.parametrize(
    "body",
    [
        lambda loss: loss.item(),
        lambda loss: loss.detach().numpy(),
        lambda loss: mta.cuda.synchronize(),
        lambda loss: mta.ones(1).to("cuda"),
    ],
    ids=["item", "numpy", "synchronize", "cpu-tensor"],
)
def test_gpu_capture_refused_cleanly(body: Any) -> None:
    w = mta.tensor([1.0, 2.0], device="cuda", requires_grad=True)

    def step(x: Any) -> Any:
        loss = (w * x).sum()
        body(loss)
        return loss.detach()

    with pytest.raises(CaptureError, match="capture refused"):
        capture_step(step, mta.ones(2, device="cuda"), warmup=1)
    assert not mta.Device("cuda").backend.capture_status(mta.Device("cuda"))
    assert (w * 2).sum().item() == 6.0  # the device still works after the refusal


@pytest.mark.gpu
def test_gpu_shape_change_and_replaced_parameter_refused() -> None:
    w = mta.tensor([1.0, 2.0], device="cuda", requires_grad=True)
    opt = optim.SGD([w], lr=0.1)

    def step(x: Any) -> Any:
        opt.zero_grad()
        loss = (w * x).sum()
        loss.backward()
        opt.step()
        return loss.detach()

    run = capture_step(step, mta.ones(2, device="cuda"), optimizers=opt, warmup=1)
    assert run.captured
    with pytest.raises(CaptureError, match="shape change"):
        run(mta.ones(3, device="cuda"))
    w.data = mta.zeros(2, device="cuda")
    with pytest.raises(CaptureError, match="new allocation after capture"):
        run(mta.ones(2, device="cuda"))


@pytest.mark.gpu
def test_gpu_memory_does_not_grow_over_1000_replays() -> None:
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10)).to("cuda")
    opt = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    step = training_step(model, opt, squared_error)

    x, y = mta.randn(32, 64, device="cuda"), mta.randn(32, 10, device="cuda")
    run = capture_step(step, (x, y), optimizers=opt)
    run(x, y)
    mta.cuda.synchronize()
    before = mta.cuda.memory_allocated()
    for _ in range(1000):
        run(x, y)
    mta.cuda.synchronize()
    assert mta.cuda.memory_allocated() == before


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gpu_captured_lenet_steps_equal_eager(dtype: str) -> None:
    """Convolution, pooling, cross-entropy and momentum SGD: the captured step replays the
    kernels the eager step runs (cuBLAS GEMMs included), on new batches each call.
    """

    def run(captured: bool) -> tuple[list[float], list[np.ndarray]]:
        mta.manual_seed(0)
        model = nn.models.LeNet().to(dtype=dtype).to("cuda")
        return train_cnn(model, nn.CrossEntropyLoss(), "cuda", (32, 1, 28, 28), captured)

    eager, captured = run(False), run(True)
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(captured[0], eager[0], rtol=tol)
    for a, b in zip(captured[1], eager[1], strict=True):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


# ---------------------------------------------------------------- the CuPy capture glue
class FakeStream:
    """A CuPy stream: records being entered, capturing and launching."""

    def __init__(self, log: list[str], name: str, end_error: Exception | None = None) -> None:
        self.log, self.name, self.end_error = log, name, end_error

    def __enter__(self) -> FakeStream:
        self.log.append(f"enter {self.name}")
        return self

    def __exit__(self, *exc: object) -> None:
        self.log.append(f"exit {self.name}")

    def synchronize(self) -> None:
        self.log.append(f"synchronize {self.name}")

    def begin_capture(self) -> None:
        self.log.append(f"begin_capture {self.name}")

    def end_capture(self) -> Any:
        self.log.append(f"end_capture {self.name}")
        if self.end_error is not None:
            raise self.end_error
        log, name = self.log, self.name
        return types.SimpleNamespace(
            launch=lambda stream: log.append(f"launch {name} on {stream.name}")
        )


def _fake_cupy(log: list[str], end_error: Exception | None = None) -> Any:
    made: list[FakeStream] = []
    current = FakeStream(log, "current")

    def stream(non_blocking: bool = False) -> FakeStream:
        made.append(FakeStream(log, f"s{len(made) + 1}", end_error))
        return made[-1]

    return types.SimpleNamespace(
        cuda=types.SimpleNamespace(
            Device=lambda index: contextlib.nullcontext(),
            Stream=stream,
            get_current_stream=lambda: current,
        )
    )


def test_cupy_capture_uses_a_fresh_stream_per_graph_and_launches_on_the_current() -> None:
    import minitorch_accel.backends.cupy.graphs as cg

    log: list[str] = []
    graphs = cg.CupyGraphs(_fake_cupy(log))
    graphs.begin(0)
    assert graphs.active and graphs.is_capturing(0) and not graphs.is_capturing(1)
    with pytest.raises(CaptureError, match="already running on cuda:0"):
        graphs.begin(0)
    first = graphs.end(0)
    graphs.begin(0)
    second = graphs.end(0)
    assert not graphs.active
    assert first.stream is not second.stream  # each graph its own memory arena
    graphs.replay(first, 0)
    assert log == [
        "synchronize current", "enter s1", "begin_capture s1", "end_capture s1", "exit s1",
        "synchronize current", "enter s2", "begin_capture s2", "end_capture s2", "exit s2",
        "launch s1 on current",
    ]  # fmt: skip
    with pytest.raises(CaptureError, match="no capture is running on cuda:0"):
        graphs.end(0)


def test_cupy_abort_ends_an_invalidated_capture_and_leaves_the_stream() -> None:
    import minitorch_accel.backends.cupy.graphs as cg

    log: list[str] = []
    error = RuntimeError(
        "cudaErrorStreamCaptureInvalidated: operation failed due to a previous error"
    )
    graphs = cg.CupyGraphs(_fake_cupy(log, end_error=error))
    graphs.begin(0)
    graphs.abort(0)
    graphs.abort(0)  # nothing left to abort: no error
    assert log == [
        "synchronize current", "enter s1", "begin_capture s1", "end_capture s1", "exit s1"
    ]  # fmt: skip
    assert not graphs.active


def test_cuda_capture_errors_become_capture_errors() -> None:
    from minitorch_accel.backends.cupy.graphs import capture_error

    refused = RuntimeError(
        "cudaErrorStreamCaptureUnsupported: operation not permitted when stream is capturing"
    )
    translated = capture_error(refused)
    assert isinstance(translated, CaptureError)
    assert "host sync" in str(translated) and "cudaErrorStreamCaptureUnsupported" in str(translated)
    assert capture_error(ValueError("shapes (2,) and (3,) do not match")) is None
    cublas = NotImplementedError(  # CuPy's words when cupy.matmul runs inside a capture
        "calling cuBLAS API during stream capture is currently unsupported"
    )
    assert "cupy.matmul, einsum" in str(capture_error(cublas))
    ours = CaptureError("already one")
    assert capture_error(ours) is ours
