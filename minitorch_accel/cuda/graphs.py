"""Captured steps: a training step recorded once as a CUDA graph, then replayed per batch.

An eager step costs the host one Python call per kernel (tens of microseconds each),
which on a small model sets the pace while the GPU waits. A CUDA graph records the
kernels of a whole step (forward, loss, backward, optimizer update) once; replaying it is
one call from the host. The rules follow from "the same kernels on the same memory":

* shapes are fixed: every call fills the same static input buffers;
* no host syncs inside the step (``.item()``, ``.numpy()``, ``print(tensor)``,
  ``synchronize()``) and no copies from host memory (a CPU tensor or NumPy array);
* outputs (the loss) live in static arrays, overwritten by the next call;
* checks that read a verdict back later (the cross-entropy's label range) run only in
  the eager warm-up;
* per-step scalars live on the device: the learning rate of each optimizer passed in
  ``optimizers`` is written to a device scalar before each replay, so schedulers work.

:func:`capture_step` is minitorch_accel's own name (PyTorch has none);
:class:`CUDAGraph` and :func:`graph` are PyTorch's. ``make_graphed_callables`` is not
provided: it captures forward and backward of a module separately, while
:func:`capture_step` captures the whole step, optimizer included.

Examples
--------
>>> import minitorch_accel as mta
>>> w = mta.tensor([1.0, -2.0], requires_grad=True)
>>> opt = mta.optim.SGD([w], lr=0.1)
>>> def step(x):
...     opt.zero_grad()
...     loss = (w * x).sum()
...     loss.backward()
...     opt.step()
...     return loss.detach()
>>> run = mta.cuda.graphs.capture_step(step, mta.ones(2), optimizers=opt, warmup=1)
>>> run.captured                       # on the CPU the step runs eagerly
False
>>> run(mta.ones(2))
tensor(-1.)
"""

from __future__ import annotations

import contextlib
import logging
import math
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from ..backends import CaptureError, Device

__all__ = ["CUDAGraph", "CapturedStep", "capture_step", "graph"]

_log = logging.getLogger(__name__)
_said_eager: set[str] = set()
_NOTHING = contextlib.nullcontext()


class CUDAGraph:
    """A recorded sequence of kernels, replayed with one call (``torch.cuda.CUDAGraph``).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> g = mta.cuda.graphs.CUDAGraph()
    >>> g.replay()
    Traceback (most recent call last):
    ...
    RuntimeError: nothing captured yet: capture_begin(), run the work, capture_end()
    """

    def __init__(self) -> None:
        self._graph: Any = None
        self._device: Device | None = None

    def capture_begin(self, device: str | Device = "cuda") -> None:
        """Start recording the work queued on ``device`` (it is not run)."""
        dev = Device(device)
        dev.backend.begin_capture(dev)
        self._device = dev

    def capture_end(self) -> None:
        """Stop recording; the graph can now be replayed."""
        if self._device is None:
            raise RuntimeError("capture_end() without capture_begin()")
        self._graph = self._device.backend.end_capture(self._device)

    def abort(self) -> None:
        """End a capture that failed, dropping what it recorded."""
        if self._device is not None:
            self._device.backend.abort_capture(self._device)

    def replay(self) -> None:
        """Queue every recorded kernel on the device's current stream."""
        if self._graph is None or self._device is None:
            raise RuntimeError("nothing captured yet: capture_begin(), run the work, capture_end()")
        self._device.backend.replay(self._graph, self._device)

    def reset(self) -> None:
        """Drop the recording and the memory it holds."""
        if self._graph is not None and self._device is not None:
            self._device.backend.release_graph(self._graph)
        self._graph = None


@contextlib.contextmanager
def graph(cuda_graph: CUDAGraph, device: str | Device = "cuda") -> Iterator[CUDAGraph]:
    """Record the work of the ``with`` block into ``cuda_graph`` (``torch.cuda.graph``).

    Nothing in the block runs: results appear on :meth:`CUDAGraph.replay`. A failure
    inside ends the capture and raises a :class:`CaptureError` naming the operation.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> if mta.cuda.is_available():
    ...     x = mta.ones(4, device="cuda")
    ...     g = mta.cuda.graphs.CUDAGraph()
    ...     with mta.cuda.graphs.graph(g):
    ...         y = x * 2
    ...     g.replay()
    """
    cuda_graph.capture_begin(device)
    try:
        yield cuda_graph
    except BaseException as exc:
        cuda_graph.abort()
        assert cuda_graph._device is not None
        error = cuda_graph._device.backend.capture_error(exc)
        if error is None:
            raise
        raise CaptureError(f"capture refused {_operation(exc)}: {error}") from exc
    cuda_graph.capture_end()


def _operation(exc: BaseException) -> str:
    """The minitorch_accel call where ``exc`` started, and the user's line that made it:
    the first of our frames after the user's last one (frames of the test doubles that
    stand in for CuPy, ``support.*``, count as neither).
    """
    tb, user, op = exc.__traceback__, "", ""
    while tb is not None:
        module = str(tb.tb_frame.f_globals.get("__name__", ""))
        code = tb.tb_frame.f_code
        if not module.startswith(("minitorch_accel.", "support.")):
            user, op = f"{code.co_filename}:{tb.tb_lineno}", ""
        elif not op and module.startswith("minitorch_accel.") and module != __name__:
            op = getattr(code, "co_qualname", code.co_name)
        tb = tb.tb_next
    where = f" (called at {user})" if user else ""
    return f"`{op or 'the step'}`{where}"


class _DeviceScalars:
    """Each optimizer group's learning rate (and Adam's eps) as a 0-d device array.

    Adam's bias corrections depend on the step count, which the host keeps: the graph
    bakes in the count it was captured at, ``c``, so before each replay at step ``t``
    ``lr`` and ``eps`` are rescaled to give exactly the update of step ``t``::

        lr' = lr * sqrt(1 - b2**t) / sqrt(1 - b2**c) * (1 - b1**c) / (1 - b1**t)
        eps' = eps * sqrt(1 - b2**t) / sqrt(1 - b2**c)
    """

    def __init__(self, optimizers: Sequence[Any], device: Device) -> None:
        self.device = device
        self.groups: list[tuple[Any, Any, dict[str, Any]]] = []
        for opt in optimizers:
            for group in opt.param_groups:
                dtype = group["params"][0].array.dtype
                arrays = {k: self._scalar(group[k], dtype) for k in ("lr", "eps") if k in group}
                if (
                    "betas" in group
                    and group.get("decoupled_weight_decay")
                    and group.get("weight_decay")
                ):
                    raise CaptureError(
                        "AdamW's decoupled weight decay reads the learning rate outside the "
                        "bias correction: capture with weight_decay=0 or run eagerly"
                    )
                self.groups.append((opt, group, arrays))
        self._captured_at: list[int] = []

    def _scalar(self, value: float, dtype: Any) -> Any:
        return self.device.backend.asarray(np.asarray(value, dtype), self.device)

    @contextlib.contextmanager
    def in_groups(self, capture: bool) -> Iterator[None]:
        """Inside: the groups hold the device scalars. For an eager step they hold this
        step's plain values; for the capture the host's step counts are restored after
        (the graph's replays advance them).
        """
        saved = [{k: group[k] for k in arrays} for _, group, arrays in self.groups]
        steps = [self._steps(opt, group) for opt, group, _ in self.groups]
        self._captured_at = [self._step(opt, group) + 1 for opt, group, _ in self.groups]
        for _, group, arrays in self.groups:
            for key, array in arrays.items():
                array.fill(group[key])
            group.update(arrays)
        try:
            yield
        finally:
            for (_, group, _), values, counts in zip(self.groups, saved, steps, strict=True):
                group.update(values)
                if capture:
                    for state, count in counts:
                        state["step"] = count

    @staticmethod
    def _steps(opt: Any, group: dict[str, Any]) -> list[tuple[dict[str, Any], int]]:
        states = (opt.state.get(p) for p in group["params"])
        return [(s, s["step"]) for s in states if s is not None and "step" in s]

    def _step(self, opt: Any, group: dict[str, Any]) -> int:
        steps = self._steps(opt, group)
        return int(steps[0][1]) if steps else 0

    def before_replay(self) -> None:
        """Write this step's values into the device scalars (no host sync)."""
        for (opt, group, arrays), c in zip(self.groups, self._captured_at, strict=True):
            lr, scale = group["lr"], 1.0
            if "betas" in group:
                b1, b2 = group["betas"]
                t = self._step(opt, group) + 1
                scale = math.sqrt((1 - b2**t) / (1 - b2**c))
                lr = lr * scale * (1 - b1**c) / (1 - b1**t)
                arrays["eps"].fill(group["eps"] * scale)
            arrays["lr"].fill(lr)

    def after_replay(self) -> None:
        """Advance the host's step counts, as the eager step would have."""
        for opt, group, _ in self.groups:
            for state, count in self._steps(opt, group):
                state["step"] = count + 1


class CapturedStep:
    """A training step captured as a CUDA graph; call it with a batch (see :func:`capture_step`).

    Attributes
    ----------
    captured : bool
        True when calls replay a graph; False when they run the step eagerly (on the
        CPU, without a GPU, or after a refused capture with ``fallback="eager"``).
    static_inputs : list of Tensor
        The buffers each call copies the batch into (empty when eager).
    outputs : Any
        What the captured step returned; each call overwrites it in place.
    """

    def __init__(
        self,
        step_fn: Callable[..., Any],
        example_batch: Any,
        optimizers: Any = (),
        warmup: int = 3,
        fallback: str = "error",
    ) -> None:
        if fallback not in ("error", "eager"):
            raise ValueError(f"fallback must be 'error' or 'eager', got {fallback!r}")
        if not isinstance(warmup, int) or warmup < 1:
            raise ValueError(
                f"warmup must be a positive int (kernels compile there), got {warmup!r}"
            )
        self.step_fn = step_fn
        self.captured = False
        self.static_inputs: list[Any] = []
        self.outputs: Any = None
        self._graph: Any = None
        batch = _as_args(example_batch)
        tensors = [b for b in batch if _is_tensor(b)]
        if not tensors:
            raise ValueError("example_batch must hold at least one tensor (the batch's shape)")
        self.device: Device = tensors[0].device
        self._example = batch
        backend = self.device.backend
        if not backend.supports_capture:
            if self.device.type not in _said_eager:
                _said_eager.add(self.device.type)
                _log.debug("capture_step: device %s cannot capture; steps run eagerly", self.device)
            return
        optimizers = [optimizers] if hasattr(optimizers, "param_groups") else list(optimizers)
        try:
            self._capture(batch, optimizers, warmup)
        except CaptureError as exc:
            if fallback == "error":
                raise
            warnings.warn(f"{exc}; the step runs eagerly", RuntimeWarning, stacklevel=3)
            self.static_inputs = []

    def _capture(self, batch: tuple[Any, ...], optimizers: list[Any], warmup: int) -> None:
        self.static_inputs = [
            b.to(self.device).detach().clone() if _is_tensor(b) else b for b in batch
        ]
        self._scalars = _DeviceScalars(optimizers, self.device)
        # the warm-up compiles kernels (the last step those that read device scalars),
        # makes the optimizer state and fills the memory pool
        for i in range(warmup):
            with self._scalars.in_groups(capture=False) if i == warmup - 1 else _NOTHING:
                self.step_fn(*self.static_inputs)
        g = CUDAGraph()
        with self._scalars.in_groups(capture=True), graph(g, self.device):
            outputs = self.step_fn(*self.static_inputs)
        for item in _as_args(outputs):
            if _is_tensor(item) and item.device != self.device:
                raise CaptureError(
                    f"the step returned a tensor on {item.device}: a captured step's outputs "
                    f"must stay on {self.device}"
                )
        self.outputs, self._graph, self.captured = outputs, g, True
        self._memory = [
            (p, p.array) for _, group, _ in self._scalars.groups for p in group["params"]
        ]

    def __call__(self, *batch: Any) -> Any:
        """Run the step on ``batch``: fill the static inputs and replay (or run eagerly)."""
        if not self.captured:
            return self.step_fn(*batch)
        self._fill(batch)
        self._check_memory()
        self._scalars.before_replay()
        self._graph.replay()
        self._scalars.after_replay()
        return self.outputs

    def _fill(self, batch: tuple[Any, ...]) -> None:
        if len(batch) != len(self.static_inputs):
            raise CaptureError(
                f"the step was captured with {len(self.static_inputs)} argument(s), "
                f"called with {len(batch)}"
            )
        for i, (static, new) in enumerate(zip(self.static_inputs, batch, strict=True)):
            if not _is_tensor(static):
                if new != static:
                    raise CaptureError(f"argument {i} was {static!r} at capture, now {new!r}")
                continue
            if not _is_tensor(new) or tuple(new.shape) != tuple(static.shape):
                shape = tuple(new.shape) if _is_tensor(new) else type(new).__name__
                raise CaptureError(
                    f"a shape change: argument {i} has shape {shape}, the graph was captured for "
                    f"{tuple(static.shape)}; a graph replays fixed shapes (drop_last=True in the "
                    "DataLoader, or capture one step per shape)"
                )
            if new.dtype != static.dtype:
                raise CaptureError(f"argument {i} has dtype {new.dtype}, captured {static.dtype}")
            source = new if new.device == self.device else new.to(self.device)
            with self.device.guard():
                static.array[...] = source.array

    def _check_memory(self) -> None:
        """Refuse to replay when a parameter's array was replaced since the capture: the
        graph would go on updating the old one.
        """
        for p, array in self._memory:
            if p.array is not array:
                raise CaptureError(
                    f"a new allocation after capture: a parameter of shape {tuple(p.shape)} "
                    "now lives in other memory than the captured graph updates (assigning "
                    ".data or .array, load_state_dict or .to() replaced it); capture the step "
                    "again"
                )

    def reset(self) -> None:
        """Drop the graph and its memory; later calls run eagerly."""
        if self._graph is not None:
            self._graph.reset()
        self._graph, self.captured = None, False


def capture_step(
    step_fn: Callable[..., Any],
    example_batch: Any,
    *,
    optimizers: Any = (),
    warmup: int = 3,
    fallback: str = "error",
) -> CapturedStep:
    """Capture ``step_fn(*example_batch)`` as one CUDA graph; return it as a callable.

    The step runs ``warmup`` times eagerly on a copy of ``example_batch`` (kernels
    compile, optimizer state is made), then once more under capture. Each call
    ``captured(*batch)`` copies ``batch`` into the static inputs, writes the optimizers'
    learning rates into device scalars and replays the graph: one launch from the host.

    Parameters
    ----------
    step_fn : callable
        The training step: forward, loss, ``backward()``, ``optimizer.step()``; it
        returns the loss (or anything made of tensors on the device).
    example_batch : Tensor or tuple
        The arguments of ``step_fn`` (tensors fix the shapes; other values must not
        change between calls). The warm-up updates the model on it.
    optimizers : Optimizer or sequence of Optimizer
        Optimizers whose ``lr`` (and Adam's step count) may change between calls
        (schedulers): they are read from device scalars. An optimizer left out keeps the
        learning rate it had at capture, and Adam its bias correction.
    warmup : int
        Eager steps before the capture (at least 1).
    fallback : {"error", "eager"}
        What a step that cannot be captured does: raise :class:`CaptureError` naming the
        cause and the operation, or warn and run eagerly.

    Returns
    -------
    CapturedStep
        On the CPU, or without a GPU, it runs the step eagerly (logged once at debug
        level), with no warm-up steps, so the same script runs everywhere.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> w = mta.tensor([2.0], requires_grad=True)
    >>> opt = mta.optim.SGD([w], lr=0.5)
    >>> def step(x):
    ...     opt.zero_grad()
    ...     loss = (w * x).sum()
    ...     loss.backward()
    ...     opt.step()
    ...     return loss.detach()
    >>> run = capture_step(step, mta.ones(1), optimizers=opt, warmup=1)
    >>> run(mta.ones(1)), run(mta.ones(1))     # eager on the CPU: no warm-up steps
    (tensor(2.), tensor(1.5))
    """
    return CapturedStep(step_fn, example_batch, optimizers, warmup, fallback)


def _as_args(batch: Any) -> tuple[Any, ...]:
    return tuple(batch) if isinstance(batch, (tuple, list)) else (batch,)


def _is_tensor(value: Any) -> bool:
    return hasattr(value, "array") and hasattr(value, "device") and hasattr(value, "shape")
