"""Pipeline parallelism: stages on different devices working on different micro-batches.

Model parallelism leaves all devices but one idle. A pipeline cuts each batch into
``chunks`` micro-batches: while stage 1 runs micro-batch 0, stage 0 already runs
micro-batch 1, like an assembly line. Each stage has its own thread, which follows its
row of the schedule (:mod:`~minitorch_accel.parallel.schedules`) and waits only for what
it needs: an activation from the stage before (forward) or a gradient from the stage
after (backward). Activations and gradients cross devices as raw arrays, copied by the
sending stage and counted in :data:`minitorch_accel.backends.transfer_stats`.

Each stage's part of the graph starts at a fresh leaf (the received activation), so a
stage's backward needs only the gradient of its output; it then sends the gradient of
its input to the stage before. The loss runs per micro-batch on the last stage, scaled
by the micro-batch's share of the batch, so the gradients accumulated over the
micro-batches are those of the whole batch.
"""

from __future__ import annotations

import queue
import threading
import weakref
from collections.abc import Callable, Sequence
from functools import partial
from time import perf_counter
from typing import Any

from .. import memory
from ..backends import Device, DeviceLike, transfer_stats
from ..core.convert import move_array
from ..core.grad_mode import no_grad, set_grad_enabled
from ..core.tensor import Tensor
from ..nn import Module
from ..ops.shape import cat
from .model_parallel import check_devices
from .replicate import OptimizerLike
from .schedules import (
    SCHEDULES,
    Action,
    TimelineEvent,
    bubble_fraction,
    draw_timeline,
    forward_schedule,
    peak_in_flight,
    theoretical_bubble,
)
from .threads import TowerThread, stop_threads
from .timings import StepTimings

LossFn = Callable[[Any, Any], Tensor]


class _AbortedError(Exception):
    """Raised in a stage that waits while another stage has failed."""


class _Run:
    """What the stages of one step share: the mailboxes between them, the abort flag,
    the results and each stage's timeline.
    """

    def __init__(self, stages: int) -> None:
        self.activations: list[queue.SimpleQueue[Any]] = [
            queue.SimpleQueue() for _ in range(stages)
        ]
        self.gradients: list[queue.SimpleQueue[Any]] = [queue.SimpleQueue() for _ in range(stages)]
        self.abort = threading.Event()
        self.current: list[Action | None] = [None] * stages
        self.events: list[list[TimelineEvent]] = [[] for _ in range(stages)]
        self.losses: dict[int, float] = {}
        self.outputs: dict[int, Tensor] = {}
        self.start = perf_counter()

    def receive(self, mailbox: queue.SimpleQueue[Any]) -> Any:
        """The next array in ``mailbox``; gives up when another stage has failed."""
        while True:
            try:
                return mailbox.get(timeout=0.05)
            except queue.Empty:
                if self.abort.is_set():
                    raise _AbortedError from None


class Pipeline:
    """Run ``stages`` on ``devices`` as a pipeline over micro-batches.

    Parameters
    ----------
    stages : sequence of Module
        Consecutive parts of one model (``split_model(...).stages`` gives them). Each is
        moved, in place, to its device.
    devices : sequence of str or Device
        One per stage; a device may repeat.
    chunks : int
        Micro-batches per batch. A batch of ``n`` samples is cut as evenly as possible
        (a batch of 12 in 5 chunks: 3, 3, 2, 2, 2).
    schedule : {"1f1b", "gpipe"}
        The order of each stage's work (:mod:`~minitorch_accel.parallel.schedules`).
    loss_fn : callable, optional
        ``loss_fn(output, target)`` returning a one-element Tensor, mean-reduced over
        the micro-batch (or summed, with ``loss_reduction="sum"``). Needed by
        :meth:`step`.
    optimizer : Optimizer, optional
        If given, :meth:`step` starts from zero gradients and ends with
        ``optimizer.step()``. Without it :meth:`step` only accumulates the batch's
        gradients into ``.grad``, as PyTorch's schedules do.
    loss_reduction : {"mean", "sum"}
        Micro-batch ``i`` of ``n_i`` samples is weighted ``n_i / n`` (``"mean"``) or
        ``1`` (``"sum"``), so the accumulated gradient is the whole batch's.

    Attributes
    ----------
    last_timeline : list of TimelineEvent
        What each stage did in the latest call, with start and end in seconds since the
        call began (time spent waiting for a neighbour is not in any event).
    last_timings : StepTimings or None
        Bytes moved and seconds (``forward``/``backward``: the busiest stage's; ``update``:
        the optimizer) of the latest :meth:`step`.
    last_peak_memory : list of int or None
        With memory tracking on (:func:`minitorch_accel.memory.tracking`), per stage the
        most bytes its device held during the latest :meth:`step` above what it held at
        the start: the activations saved for backward, the gradients and the messages
        between stages (stages that share a device share the figure). GPipe's grows
        with the number of micro-batches, 1F1B's with the number of stages. None when
        tracking is off.

    Notes
    -----
    **Batch norm** normalizes each micro-batch with its own statistics (as in PyTorch's
    pipelining), so a model with batch norm does not match the whole-batch step; without
    it, gradients equal the whole batch's to rounding.

    **Failures.** If a stage raises, every stage stops at its next wait, and
    :meth:`step` raises a ``RuntimeError`` naming the stage, its device, the action and
    the micro-batch. Parameters, their ``.grad``, buffers and the optimizer state are
    then exactly as before the step.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> from minitorch_accel.parallel import split_model
    >>> net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    >>> split = split_model(net, ["cpu:1", "cpu:2"])
    >>> pipe = Pipeline(split.stages, split.devices, chunks=4, loss_fn=nn.MSELoss())
    >>> loss = pipe.step(mta.randn(12, 4), mta.randn(12, 2))
    >>> len(pipe.last_timeline), net[0].weight.grad.shape
    (16, (8, 4))
    >>> pipe(mta.randn(5, 4)).shape
    (5, 2)
    >>> pipe.close()
    """

    def __init__(
        self,
        stages: Sequence[Module],
        devices: Sequence[DeviceLike],
        chunks: int,
        schedule: str = "1f1b",
        loss_fn: LossFn | None = None,
        *,
        optimizer: OptimizerLike | None = None,
        loss_reduction: str = "mean",
    ) -> None:
        self.devices = check_devices(devices, "Pipeline")
        self.stages = list(stages)
        if len(self.stages) != len(self.devices):
            raise ValueError(
                f"Pipeline needs one device per stage: {len(self.stages)} stage(s), "
                f"{len(self.devices)} device(s)"
            )
        if not isinstance(chunks, int) or chunks < 1:
            raise ValueError(
                f"chunks must be a positive int (micro-batches per batch), got {chunks!r}"
            )
        if schedule not in SCHEDULES:
            raise ValueError(f"schedule must be one of {sorted(SCHEDULES)}, got {schedule!r}")
        if loss_reduction not in ("mean", "sum"):
            raise ValueError(f"loss_reduction must be 'mean' or 'sum', got {loss_reduction!r}")
        for stage, device in zip(self.stages, self.devices, strict=True):
            stage.to(device)
        self.chunks, self.schedule, self.loss_fn = chunks, schedule, loss_fn
        self.optimizer, self.loss_reduction = optimizer, loss_reduction
        self._threads = [TowerThread(f"pipeline-stage-{i}-{d}") for i, d in enumerate(self.devices)]
        weakref.finalize(self, stop_threads, list(self._threads))
        self.last_timeline: list[TimelineEvent] = []
        self.last_timings: StepTimings | None = None
        self.last_peak_memory: list[int] | None = None

    # ------------------------------------------------------------ training
    def step(self, x: Tensor, target: Tensor) -> float:  # noqa: C901  (checks, run, restore on failure)
        """Forward and backward of one batch through the pipeline, micro-batch by
        micro-batch as the schedule says (then ``optimizer.step()``, if given).

        Returns
        -------
        float
            The loss of the whole batch (the micro-batch losses' weighted sum).

        Raises
        ------
        ValueError
            If the batch has fewer samples than ``chunks``, or ``x`` and ``target``
            differ in length.
        RuntimeError
            If a stage fails; nothing has changed then.
        """
        if self.loss_fn is None:
            raise ValueError(
                "Pipeline.step needs a loss_fn: Pipeline(..., loss_fn=nn.CrossEntropyLoss())"
            )
        if not isinstance(x, Tensor) or not isinstance(target, Tensor):
            raise TypeError("Pipeline.step expects Tensors for x and target")
        if len(x) != len(target):
            raise ValueError(f"x has {len(x)} samples but target {len(target)}")
        sizes = self._sizes(len(x), strict=True)
        weights = [n / len(x) if self.loss_reduction == "mean" else 1.0 for n in sizes]
        params = self._parameters()
        old_grads = [p.grad for p in params]
        saved_buffers = [(b, b.array.copy()) for s in self.stages for b in s.buffers()]
        for p in params:
            p.grad = None
        start, moved_before = perf_counter(), transfer_stats.as_dict()
        in_use = _start_peaks(self.devices)
        actions = SCHEDULES[self.schedule](len(self.stages), len(sizes))
        try:
            run = self._run(actions, _split(x, sizes), _split(target, sizes), weights, True)
        except BaseException:
            for p, g in zip(params, old_grads, strict=True):
                p.grad = g
            for buffer, array in saved_buffers:
                buffer.array = array
            raise
        self.last_peak_memory = _peaks_above(self.devices, in_use)
        tick = perf_counter()
        if self.optimizer is not None:
            self.optimizer.step()
        else:  # accumulate onto the gradients that were there, as backward() does
            for p, old in zip(params, old_grads, strict=True):
                if old is not None and p.grad is not None:
                    with p.device.guard():
                        old.array += p.grad.array
                if old is not None:
                    p.grad = old
        self.last_timings = self._timings(run, start, perf_counter() - tick, moved_before)
        return float(sum(w * run.losses[i] for i, w in enumerate(weights)))

    def __call__(self, x: Tensor) -> Tensor:
        """Inference: the output for ``x`` (on the last stage's device), computed through
        the pipeline without recording a graph. A batch smaller than ``chunks`` uses one
        micro-batch per sample.
        """
        sizes = self._sizes(len(x), strict=False)
        with no_grad():
            run = self._run(
                forward_schedule(len(self.stages), len(sizes)), _split(x, sizes), [], [], False
            )
            return cat([run.outputs[i] for i in range(len(sizes))], dim=0)

    # ------------------------------------------------------------ the threads
    def _run(
        self,
        actions: list[list[Action]],
        inputs: list[Tensor],
        targets: list[Tensor],
        weights: list[float],
        training: bool,
    ) -> _Run:
        """Give each stage thread its row of ``actions``; wait for all; raise the first
        failure naming its stage and device.
        """
        run = _Run(len(self.stages))
        if not self._threads:
            raise RuntimeError("this Pipeline was closed; build a new one")
        futures = [
            thread.submit(
                partial(self._stage_work, run, s, row, inputs, targets, weights, training)
            )
            for s, (thread, row) in enumerate(zip(self._threads, actions, strict=True))
        ]
        failures = [(s, f.exception()) for s, f in enumerate(futures)]
        self.last_timeline = sorted((e for row in run.events for e in row), key=lambda e: e.start)
        real = [
            (s, exc)
            for s, exc in failures
            if exc is not None and not isinstance(exc, _AbortedError)
        ]
        if real:
            s, exc = real[0]
            if not isinstance(exc, Exception):
                raise exc  # KeyboardInterrupt and the like pass through unchanged
            action = run.current[s]
            what = (
                ""
                if action is None
                else (
                    f" during the {'forward' if action.kind == 'F' else 'backward'} of "
                    f"micro-batch {action.microbatch}"
                )
            )
            raise RuntimeError(
                f"pipeline stage {s} on device {self.devices[s]} failed{what}: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        return run

    def _stage_work(
        self,
        run: _Run,
        s: int,
        row: list[Action],
        inputs: list[Tensor],
        targets: list[Tensor],
        weights: list[float],
        training: bool,
    ) -> None:
        """Stage ``s``'s thread: follow its row of the schedule."""
        device = self.devices[s]
        try:
            with device.backend.device_context(device), set_grad_enabled(training):
                held: dict[int, tuple[Tensor, Tensor]] = {}  # micro-batch: (input, output)
                for action in row:
                    run.current[s] = action
                    if action.kind == "F":
                        self._forward(run, s, action.microbatch, inputs, targets, weights, held)
                    else:
                        self._backward(run, s, action.microbatch, held)
        except BaseException:
            run.abort.set()  # the other stages stop at their next wait
            raise

    def _forward(
        self,
        run: _Run,
        s: int,
        i: int,
        inputs: list[Tensor],
        targets: list[Tensor],
        weights: list[float],
        held: dict[int, tuple[Tensor, Tensor]],
    ) -> None:
        device, last = self.devices[s], s == len(self.stages) - 1
        received = None if s == 0 else run.receive(run.activations[s])
        start = perf_counter()
        if received is None:
            x = inputs[i].to(device)
        else:
            x = Tensor._make(received, device, False, None)
            if targets:  # training: gradients flow back to x
                x.requires_grad_(True)
        out = self.stages[s](x)
        message = None
        if last and targets:
            assert self.loss_fn is not None
            loss = self.loss_fn(out, targets[i].to(device))
            if not isinstance(loss, Tensor) or loss.numel() != 1:
                raise TypeError(f"loss_fn must return a one-element Tensor, got {loss!r:.80}")
            run.losses[i] = float(loss.item())
            out = loss * weights[i]
        elif last:
            run.outputs[i] = out
        else:
            message = _send(out.array, device, self.devices[s + 1])
        if targets:
            held[i] = (x, out)
        run.events[s].append(self._event(run, s, i, "F", start))
        if message is not None:  # after the end is stamped: the next stage starts later
            run.activations[s + 1].put(message)

    def _backward(self, run: _Run, s: int, i: int, held: dict[int, tuple[Tensor, Tensor]]) -> None:
        device, last = self.devices[s], s == len(self.stages) - 1
        grad = None if last else run.receive(run.gradients[s])
        start = perf_counter()
        x, out = held.pop(i)
        out.backward(None if grad is None else Tensor._make(grad, device, False, None))
        message = None
        if s > 0:
            assert x.grad is not None
            message = _send(x.grad.array, device, self.devices[s - 1])
        run.events[s].append(self._event(run, s, i, "B", start))
        if message is not None:  # after the end is stamped: the stage before starts later
            run.gradients[s - 1].put(message)

    def _event(self, run: _Run, s: int, i: int, kind: str, start: float) -> TimelineEvent:
        device = self.devices[s]
        if device.backend.is_asynchronous:  # the end of the work, not of its queueing
            device.backend.synchronize(device)
        end = perf_counter() - run.start
        return TimelineEvent(s, i, kind, start - run.start, end, str(device))

    # ------------------------------------------------------------ helpers
    def _sizes(self, n: int, strict: bool) -> list[int]:
        chunks = self.chunks
        if n < chunks:
            if strict:
                raise ValueError(
                    f"a batch of {n} sample(s) cannot be cut into chunks={chunks} micro-batches: "
                    f"each needs at least one sample; use chunks <= {n} or a larger batch"
                )
            chunks = max(n, 1)
        base, extra = divmod(n, chunks)
        return [base + 1 if i < extra else base for i in range(chunks)]

    def _parameters(self) -> list[Tensor]:
        found: dict[int, Tensor] = {}
        for stage in self.stages:
            for p in stage.parameters():
                found.setdefault(id(p), p)
        return list(found.values())

    def _timings(
        self, run: _Run, start: float, update: float, moved_before: dict[str, int]
    ) -> StepTimings:
        busy = {
            kind: max(sum(e.end - e.start for e in row if e.kind == kind) for row in run.events)
            for kind in "FB"
        }
        phases = {"forward": busy["F"], "backward": busy["B"], "update": update}
        return StepTimings.from_phases(phases, start, moved_before)

    # ------------------------------------------------------------ the timeline
    def bubble_fraction(self) -> float:
        """The idle share of the stages in the latest call, measured on its timeline."""
        return bubble_fraction(self.last_timeline, len(self.stages))

    def theoretical_bubble(self) -> float:
        """``(p - 1) / (m + p - 1)`` for this pipeline's stages and chunks."""
        return theoretical_bubble(len(self.stages), self.chunks)

    def peak_in_flight(self) -> list[int]:
        """Per stage, the most micro-batches held at once in the latest call (forward
        done, backward not yet): 1F1B keeps at most ``p - s``, GPipe all ``m``.
        """
        return [
            peak_in_flight(
                sorted((e for e in self.last_timeline if e.stage == s), key=lambda e: e.end)
            )
            for s in range(len(self.stages))
        ]

    def plot_timeline(self, path: str | None = None, title: str | None = None) -> Any:
        """Draw :attr:`last_timeline` as a Gantt chart (needs matplotlib): one row per
        stage, a bar per action labelled with its micro-batch; saved to ``path`` if given.

        Returns
        -------
        matplotlib.figure.Figure
        """
        from matplotlib.figure import Figure

        p = len(self.stages)
        fig = Figure(figsize=(9, 0.6 * p + 1.4))
        ax = fig.subplots()
        draw_timeline(
            ax, self.last_timeline, [f"stage {s}\n{d}" for s, d in enumerate(self.devices)]
        )
        ax.set_xlabel("ms since the step began")
        ax.set_title(
            title
            or f"{self.schedule}, {p} stages, {self.chunks} micro-batches: bubble "
            f"{self.bubble_fraction():.0%} (theory {self.theoretical_bubble():.0%})"
        )
        fig.tight_layout()
        if path is not None:
            fig.savefig(path, dpi=120)
        return fig

    # ------------------------------------------------------------ threads
    def close(self) -> None:
        """Stop the stage threads and wait until they have ended."""
        threads, self._threads = self._threads, []
        stop_threads(threads)
        for thread in threads:
            thread.join()

    def __enter__(self) -> Pipeline:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _start_peaks(devices: Sequence[Device]) -> list[int] | None:
    """With memory tracking on: a new peak on each device, and the bytes in use now."""
    if not memory.is_tracking():
        return None
    for device in dict.fromkeys(devices):
        memory.reset_peak_memory_stats(device)
    return [memory.memory_allocated(d) for d in devices]


def _peaks_above(devices: Sequence[Device], in_use: list[int] | None) -> list[int] | None:
    """Each device's peak since :func:`_start_peaks`, above what it held then."""
    if in_use is None:
        return None
    return [memory.max_memory_allocated(d) - b for d, b in zip(devices, in_use, strict=True)]


def _split(batch: Tensor, sizes: Sequence[int]) -> list[Tensor]:
    """Consecutive slices of ``batch`` along dim 0 (views of its array, no graph)."""
    parts, start = [], 0
    for size in sizes:
        parts.append(Tensor._make(batch.array[start : start + size], batch.device, False, None))
        start += size
    return parts


def _send(array: Any, src: Device, dst: Device) -> Any:
    """``array`` on the neighbouring stage's device (a counted copy), or itself on the
    same one. On a GPU the sender waits for its queued work (and the copy) to finish, so
    the receiver never reads an array still being written, and the timeline holds the
    real compute time rather than the time to queue it.
    """
    moved = array if src is dst else move_array(array, src, dst)
    if src.backend.is_asynchronous:
        src.backend.synchronize(src)
    return moved
