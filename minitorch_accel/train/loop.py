"""The training loop: :func:`fit` and :func:`evaluate`.

One training step is the whole story of deep learning::

    optimizer.zero_grad()              # forget the previous step's gradients
    loss = loss_fn(model(x), y)        # forward pass
    loss.backward()                    # backward pass: d loss / d every parameter
    optimizer.step()                   # move every parameter a little downhill

``fit`` repeats it over the batches of a loader for some epochs, measures how long
it takes, validates after each epoch, and can be stopped (Ctrl-C) and resumed
without changing a single number of the result.
"""

from __future__ import annotations

import math
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext, suppress
from pathlib import Path
from typing import Any

from ..backends import Device, DeviceLike
from ..core.grad_mode import no_grad
from ..core.tensor import Tensor
from .callbacks import Callback, CallbackList, bind
from .checkpoint import TrainingState, load_checkpoint
from .config import FitConfig
from .history import History
from .interrupt import InterruptGuard, Terminated
from .runner import (
    EpochRunner,
    LossFn,
    NonFiniteStepError,
    count_correct,
    synchronize,
    to_device,
)

__all__ = ["FitConfig", "NonFiniteLossError", "evaluate", "fit"]

PathLike = str | os.PathLike[str]


def evaluate(
    model: Any,
    loader: Any,
    loss_fn: LossFn | None = None,
    device: DeviceLike = "cpu",
) -> dict[str, float]:
    """Measure a classifier on every batch of ``loader``, without gradients.

    The model is put in eval mode for the pass and back in its previous mode after.

    Parameters
    ----------
    model : Module
        Maps a batch of inputs to (N, classes) scores.
    loader : iterable of (inputs, targets)
        For example a :class:`~minitorch_accel.data.DataLoader` of the test split.
    loss_fn : callable, optional
        ``loss_fn(scores, targets)``, the batch mean (as ``nn.CrossEntropyLoss``).
        Without it ``loss`` is NaN.
    device : str or Device, default "cpu"
        Where the model is; batches are moved there.

    Returns
    -------
    dict
        ``loss`` (mean over samples), ``accuracy`` (fraction in [0, 1]),
        ``samples_per_s`` and ``samples``.

    Raises
    ------
    ValueError
        When the loader yields no samples.
    """
    dev = Device(device)
    was_training = bool(getattr(model, "training", True))
    if hasattr(model, "eval"):
        model.eval()
    loss_sum: Tensor | None = None
    correct: Tensor | None = None
    seen = 0
    start = time.perf_counter()
    try:
        with no_grad():
            for batch in loader:
                x, y = to_device(batch, dev)
                output = model(x)
                n = int(y.shape[0])
                if loss_fn is not None:
                    batch_loss = loss_fn(output, y).double() * n
                    loss_sum = batch_loss if loss_sum is None else loss_sum + batch_loss
                right = count_correct(output, y)
                if right is not None:
                    correct = right if correct is None else correct + right
                seen += n
        synchronize(dev)
    finally:
        if hasattr(model, "train"):
            model.train(was_training)
    elapsed = time.perf_counter() - start
    if seen == 0:
        raise ValueError("evaluate: the loader yielded no samples")
    return {
        "loss": math.nan if loss_sum is None else float(loss_sum.item()) / seen,
        "accuracy": math.nan if correct is None else int(correct.item()) / seen,
        "samples_per_s": seen / elapsed if elapsed > 0 else math.inf,
        "samples": float(seen),
    }


class NonFiniteLossError(FloatingPointError):
    """:func:`fit` stopped because the loss became NaN or infinite (the run diverged).

    Raised before the bad batch updates anything; no checkpoint with non-finite values
    is written, so the checkpoint file (if any) holds the last finite state.

    Attributes
    ----------
    loss : float
        The non-finite value.
    epoch, batch : int
        Where it happened (0-based: epochs completed, batches completed in the epoch).
    history : History
        The epochs completed before it.
    checkpoint : pathlib.Path or None
        The last checkpoint written (with finite values), if any.

    Examples
    --------
    >>> issubclass(NonFiniteLossError, FloatingPointError)
    True
    """

    def __init__(
        self,
        message: str,
        loss: float,
        epoch: int,
        batch: int,
        history: History,
        checkpoint: Path | None,
    ) -> None:
        super().__init__(message)
        self.loss, self.epoch, self.batch = loss, epoch, batch
        self.history, self.checkpoint = history, checkpoint


_ADVICE = (
    "Try a smaller learning rate (a tenth of this one), gradient clipping "
    "(optim.clip_grad_norm_), or check the inputs for NaN or infinite values"
)


def _all_finite(model: Any) -> bool:
    """Whether every parameter of ``model`` is finite (one sync per parameter)."""
    for p in model.parameters():
        with p.device.guard():  # on the parameter's own device
            if not bool(p.xp.isfinite(p.array).all()):
                return False
    return True


def _diverged(
    where: str, value: float, state: TrainingState, saved: Path | None, checkpoint: Any
) -> NonFiniteLossError:
    if saved is not None:
        kept = f"The last checkpoint with finite values is {os.fspath(saved)}."
    elif checkpoint is not None and os.path.exists(checkpoint):
        kept = f"The checkpoint {os.fspath(checkpoint)} was left as it was."
    else:
        kept = "No checkpoint was written."
    return NonFiniteLossError(
        f"fit: {where} is {value}: training diverged and was stopped. {kept} "
        f"{_ADVICE}; or set FitConfig(on_nonfinite='warn') (--on-nonfinite warn) to go on "
        "regardless.",
        value,
        state.epoch,
        state.batch,
        state.history,
        saved,
    )


def _amp_tools(device: Device) -> tuple[Callable[[], AbstractContextManager[Any]], Any]:
    """``(autocast_factory, scaler)`` from :mod:`minitorch_accel.amp`, or a clear error."""
    amp_module: Any = None
    with suppress(ImportError):
        from .. import amp as amp_module
    autocast = getattr(amp_module, "autocast", None)
    scaler_cls = getattr(amp_module, "GradScaler", None)
    if autocast is None or scaler_cls is None:
        raise RuntimeError(
            "mixed precision (amp) is not available yet: minitorch_accel.amp does not "
            "provide autocast and GradScaler in this version; train in float32 instead"
        )
    return (lambda: autocast(device=str(device))), scaler_cls()


def _position_text(state: TrainingState, epochs: int) -> str:
    if state.batch == 0:
        return f"after epoch {state.epoch}/{epochs}"
    done = f"{state.batch}/{state.batches_per_epoch}"
    return f"in epoch {state.epoch + 1}/{epochs}, after batch {done}"


def fit(
    model: Any,
    loader: Any,
    optimizer: Any,
    loss_fn: LossFn,
    config: FitConfig,
    *,
    val_loader: Any = None,
    callbacks: Sequence[Callback] = (),
) -> History:
    """Train ``model`` over ``loader`` as ``config`` says; return the per-epoch history.

    Every batch does ``zero_grad``, forward, ``loss.backward()``, ``optimizer.step()``
    (and ``scheduler.step()``). After each epoch the model is evaluated on
    ``val_loader``, the epoch is appended to the history, a checkpoint is written to
    ``config.checkpoint`` and the callbacks' ``on_epoch_end`` run.

    Parameters
    ----------
    model : Module
        Maps a batch of inputs to (N, classes) scores; moved to ``config.device`` first.
    loader : DataLoader
        Training batches ``(inputs, targets)``. For an exact resume its shuffle must be
        seeded (``DataLoader(..., seed=...)``).
    optimizer : Optimizer
        Built over ``model.parameters()``.
    loss_fn : callable
        ``loss_fn(scores, targets)`` -> scalar Tensor, the batch mean
        (e.g. ``nn.CrossEntropyLoss()``).
    config : FitConfig
        The run's settings: ``epochs``, ``device``, the learning-rate ``scheduler``,
        ``accumulate``, ``amp``, ``on_nonfinite``, ``checkpoint``, ``resume``... (see
        :class:`~minitorch_accel.train.FitConfig`; each is checked when it is made).
    val_loader : DataLoader, optional
        Evaluated after every epoch (``val_loss``, ``val_accuracy``).
    callbacks : sequence of Callback
        Code run at fixed points (:class:`~minitorch_accel.train.Callback`): each epoch's
        start and end, each batch's end, the start and end of training.

    Returns
    -------
    History
        One row per completed epoch (those of ``config.history`` or of the resumed
        checkpoint included).

    Raises
    ------
    TypeError
        When ``config`` is not a :class:`~minitorch_accel.train.FitConfig`.
    ValueError
        For batches that are not ``(inputs, targets)``, an empty loader, or a checkpoint
        that does not fit.
    NonFiniteLossError
        With ``on_nonfinite="stop"``, when the loss (or, at a checkpoint, a parameter)
        is NaN or infinite; the message names the step and what to try.

    Notes
    -----
    **The settings moved into FitConfig.** ``fit`` used to take them as keywords
    (``fit(model, loader, opt, loss_fn, epochs=3, scheduler=s, checkpoint="run.npz")``);
    they are now the fields of the same names:
    ``fit(model, loader, opt, loss_fn, FitConfig(epochs=3, scheduler=s,
    checkpoint="run.npz"))``. ``val_loader`` and ``callbacks`` stay keywords of ``fit``.

    **Stopping.** Ctrl-C (or ``KeyboardInterrupt`` raised by a callback) stops
    training at the end of the current batch, writes a checkpoint to
    ``config.interrupt_checkpoint`` (or ``config.checkpoint``), prints how to resume and
    returns the history so far. A second Ctrl-C aborts at once. SIGTERM (what Slurm and
    Kubernetes send before preempting a job) does the same, then raises
    :class:`~minitorch_accel.train.interrupt.Terminated` (a ``SystemExit`` with
    status 143) so that the program ends as the scheduler expects.

    Examples
    --------
    >>> from minitorch_accel import nn, optim
    >>> from minitorch_accel.nn.models import LeNet
    >>> model = LeNet()  # doctest: +SKIP
    >>> opt = optim.SGD(model.parameters(), lr=0.05, momentum=0.9)  # doctest: +SKIP
    >>> history = fit(model, train_loader, opt, nn.CrossEntropyLoss(),
    ...               FitConfig(epochs=3, checkpoint="lenet.npz"),
    ...               val_loader=test_loader)  # doctest: +SKIP
    >>> history.val_accuracy[-1]  # doctest: +SKIP
    0.97...
    """
    if not isinstance(config, FitConfig):
        raise TypeError(
            f"fit: config must be a FitConfig, got {type(config).__name__}; write "
            "fit(model, loader, optimizer, loss_fn, FitConfig(epochs=3, ...)) where "
            "fit(..., epochs=3, ...) was written before"
        )
    state, run, listed = _start(model, loader, optimizer, loss_fn, config, callbacks)
    saved: Path | None = None  # the last checkpoint written, all finite
    listed.on_train_begin({})
    with InterruptGuard() as guard:
        try:
            while state.epoch < config.epochs:
                saved = _train_one_epoch(state, run, listed, guard, val_loader, config, saved)
        except NonFiniteStepError as exc:
            where = f"the loss at {run.position()}"
            raise _diverged(where, exc.loss, state, saved, config.checkpoint) from None
        except KeyboardInterrupt:
            if guard.aborted or not run.consistent:
                raise  # stopped in the middle of an update: nothing safe to save
            save_to = config.interrupt_checkpoint
            if save_to is None:
                save_to = config.checkpoint
            _report_interrupt(state, config.epochs, save_to, config.resume_command, guard)
            if guard.terminated:
                raise Terminated from None
    listed.on_train_end(state.history.last() if len(state.history) else {})
    return state.history


def _start(
    model: Any,
    loader: Any,
    optimizer: Any,
    loss_fn: LossFn,
    config: FitConfig,
    callbacks: Sequence[Callback],
) -> tuple[TrainingState, EpochRunner, CallbackList]:
    """The live state of the run (model on its device, resumed if asked), its epoch
    runner and its callbacks.
    """
    dev = Device(config.device)
    if hasattr(model, "to"):
        model.to(dev)
    autocast: Callable[[], AbstractContextManager[Any]] = nullcontext
    scaler = None
    if config.amp:
        autocast, scaler = _amp_tools(dev)
    history = config.history if config.history is not None else History()
    state = TrainingState(
        model, optimizer, loader, dev, history, config.scheduler, scaler, config.metadata
    )
    if isinstance(config.resume, Mapping):
        state.load_state_dict(config.resume)
    elif config.resume is not None:
        state.load_state_dict(load_checkpoint(config.resume, dev))
    else:
        after = state.history.epoch[-1] + 1 if len(state.history) else 0
        state.epoch = max(config.start_epoch, after)
    listed = bind(callbacks, state, config.epochs)
    run = EpochRunner(
        state,
        loss_fn,
        config.epochs,
        config.progress,
        config.scheduler_interval,
        autocast,
        listed.wants_batch_logs,
        config.on_nonfinite,
    )
    run.accumulate = config.accumulate
    return state, run, listed


def _train_one_epoch(
    state: TrainingState,
    run: EpochRunner,
    listed: CallbackList,
    guard: InterruptGuard,
    val_loader: Any,
    config: FitConfig,
    saved: Path | None,
) -> Path | None:
    """Train, validate, record, checkpoint, call back; the last finite checkpoint."""
    state.start_epoch()
    listed.on_epoch_begin(state.epoch, {})
    run.train_epoch(listed, guard)
    run.check_epoch()
    val = {"loss": math.nan, "accuracy": math.nan}
    if val_loader is not None:
        val = evaluate(state.model, val_loader, run.loss_fn, state.device)
    logs = run.end_epoch(val)
    if config.checkpoint is not None:
        if config.on_nonfinite == "stop" and not _all_finite(state.model):
            where = f"a parameter after epoch {state.epoch}"
            raise _diverged(where, math.nan, state, saved, config.checkpoint)
        saved = state.save(config.checkpoint)
    listed.on_epoch_end(state.epoch - 1, logs)
    if guard.requested:
        raise KeyboardInterrupt
    return saved


def _report_interrupt(
    state: TrainingState,
    epochs: int,
    path: PathLike | None,
    resume_command: str | None,
    guard: InterruptGuard,
) -> None:
    where = _position_text(state, epochs)
    if guard.signal_name == "SIGTERM":
        where += " by SIGTERM"
    if path is None:
        print(
            f"Training interrupted {where}; no checkpoint path was given, nothing saved.",
            file=sys.stderr,
            flush=True,
        )
        return
    saved = state.save(path)
    command = (resume_command or "fit(..., FitConfig(..., resume={path!r}))").format(
        path=os.fspath(saved)
    )
    print(
        f"Training interrupted {where}; checkpoint saved to {saved}.\nResume with: {command}",
        file=sys.stderr,
        flush=True,
    )
