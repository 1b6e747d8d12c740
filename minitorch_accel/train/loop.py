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
from .callbacks import Callback, bind
from .checkpoint import TrainingState, load_checkpoint
from .history import History
from .interrupt import InterruptGuard, Terminated
from .runner import (
    NONFINITE_CHOICES,
    EpochRunner,
    LossFn,
    NonFiniteStepError,
    count_correct,
    synchronize,
    to_device,
)

__all__ = ["NonFiniteLossError", "evaluate", "fit"]

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
        f"{_ADVICE}; or pass on_nonfinite='warn' (--on-nonfinite warn) to go on regardless.",
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


def fit(  # noqa: C901  (the options of a training run; they fold into a config object with the readable core)
    model: Any,
    loader: Any,
    optimizer: Any,
    loss_fn: LossFn,
    epochs: int,
    device: DeviceLike = "cpu",
    val_loader: Any = None,
    callbacks: Sequence[Callback] = (),
    scheduler: Any = None,
    start_epoch: int = 0,
    history: History | None = None,
    checkpoint: PathLike | None = None,
    progress: bool = True,
    *,
    resume: PathLike | Mapping[str, Any] | None = None,
    scheduler_interval: str = "batch",
    interrupt_checkpoint: PathLike | None = None,
    resume_command: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    amp: bool = False,
    on_nonfinite: str = "stop",
    accumulate: int = 1,
) -> History:
    """Train ``model`` for ``epochs`` epochs over ``loader``; return the per-epoch history.

    Every batch does ``zero_grad``, forward, ``loss.backward()``, ``optimizer.step()``
    (and ``scheduler.step()``). After each epoch the model is evaluated on
    ``val_loader``, the epoch is appended to the history, a checkpoint is written to
    ``checkpoint`` and the callbacks' ``on_epoch_end`` run.

    Parameters
    ----------
    model : Module
        Maps a batch of inputs to (N, classes) scores; moved to ``device`` first.
    loader : DataLoader
        Training batches ``(inputs, targets)``. For an exact resume its shuffle must be
        seeded (``DataLoader(..., seed=...)``).
    optimizer : Optimizer
        Built over ``model.parameters()``.
    loss_fn : callable
        ``loss_fn(scores, targets)`` -> scalar Tensor, the batch mean
        (e.g. ``nn.CrossEntropyLoss()``).
    epochs : int
        Train until this many epochs are complete (counting those before
        ``start_epoch`` or in the resumed checkpoint).
    device : str or Device, default "cpu"
        Where to train; batches not already there are moved.
    val_loader : DataLoader, optional
        Evaluated after every epoch (``val_loss``, ``val_accuracy``).
    callbacks : sequence of Callback
        See :class:`~minitorch_accel.train.Callback`.
    scheduler : LRScheduler, optional
        Stepped after every batch (``scheduler_interval="batch"``, as ``OneCycleLR``
        expects) or every epoch (``"epoch"``, as ``StepLR``). A
        :class:`~minitorch_accel.optim.lr_scheduler.ReduceLROnPlateau` is stepped at the
        end of every epoch with the validation loss (the training loss when there is no
        ``val_loader``), whatever ``scheduler_interval`` says.
    start_epoch : int, default 0
        Number of the first epoch to run, when continuing by hand; at least the one
        after the last epoch of ``history``.
    history : History, optional
        Appended to (a new one by default).
    checkpoint : str or os.PathLike, optional
        Write a full checkpoint there after every epoch (atomically).
    progress : bool, default True
        A tqdm bar per epoch on stderr with the running loss, accuracy and samples/s,
        and a summary line per epoch. False prints nothing.
    resume : str, os.PathLike or dict, optional
        A checkpoint (path or :func:`load_checkpoint` dict) to continue from: model,
        optimizer, scheduler, history, position within the epoch, shuffle and random
        states are restored. On the CPU the continued run computes exactly the same
        losses and parameters as one never interrupted. Overrides ``start_epoch`` and
        ``history``.
    scheduler_interval : {"batch", "epoch"}, default "batch"
        When ``scheduler.step()`` is called.
    interrupt_checkpoint : str or os.PathLike, optional
        Where to save when interrupted; ``checkpoint`` by default. With neither,
        an interrupted run saves nothing.
    resume_command : str, optional
        How to resume, shown after an interruption (``{path}`` is replaced by the
        checkpoint path). Defaults to ``fit(..., resume='<path>')``.
    metadata : mapping, optional
        JSON-compatible data stored in every checkpoint (e.g. the command line).
    amp : bool, default False
        Mixed precision through :mod:`minitorch_accel.amp` (autocast + GradScaler);
        a ``RuntimeError`` says so when that module is not available.
    on_nonfinite : {"stop", "warn", "ignore"}, default "stop"
        What to do when a batch's loss is NaN or infinite. ``"stop"`` raises
        :class:`NonFiniteLossError` before that batch updates anything, and never
        writes a checkpoint whose parameters are not finite, so the checkpoint file
        keeps the last finite state. ``"warn"`` warns once and goes on; ``"ignore"``
        goes on silently and skips the check (which reads the loss every step: one
        device synchronization per step on a GPU).
    accumulate : int, default 1
        Gradient accumulation: every batch goes through forward and backward in this
        many micro-batches (each loss weighted by its share of the batch), then the
        optimizer steps once. The gradients are those of the whole batch (equal up to
        rounding; not with batch norm, whose statistics are per micro-batch), while the
        activations need the memory of one micro-batch: to train with a batch too large
        for the device, load it whole and set ``accumulate``. See the tutorial "How big
        a model fits".

    Returns
    -------
    History
        One row per completed epoch (those of ``history`` or the checkpoint included).

    Raises
    ------
    ValueError
        For ``epochs < 0``, a bad ``scheduler_interval`` or ``on_nonfinite``, batches
        that are not ``(inputs, targets)``, an empty loader, or a checkpoint that does
        not fit.
    NonFiniteLossError
        With ``on_nonfinite="stop"``, when the loss (or, at a checkpoint, a parameter)
        is NaN or infinite; the message names the step and what to try.

    Notes
    -----
    **Stopping.** Ctrl-C (or ``KeyboardInterrupt`` raised by a callback) stops
    training at the end of the current batch, writes a checkpoint to
    ``interrupt_checkpoint`` (or ``checkpoint``), prints how to resume and returns
    the history so far. A second Ctrl-C aborts at once. SIGTERM (what Slurm and
    Kubernetes send before preempting a job) does the same, then raises
    :class:`~minitorch_accel.train.interrupt.Terminated` (a ``SystemExit`` with
    status 143) so that the program ends as the scheduler expects.

    Examples
    --------
    >>> from minitorch_accel import nn, optim
    >>> from minitorch_accel.nn.models import LeNet
    >>> model = LeNet()  # doctest: +SKIP
    >>> opt = optim.SGD(model.parameters(), lr=0.05, momentum=0.9)  # doctest: +SKIP
    >>> history = fit(model, train_loader, opt, nn.CrossEntropyLoss(), epochs=3,
    ...               val_loader=test_loader)  # doctest: +SKIP
    >>> history.val_accuracy[-1]  # doctest: +SKIP
    0.97...
    """
    if isinstance(epochs, bool) or int(epochs) != epochs or epochs < 0:
        raise ValueError(f"fit: epochs must be an integer >= 0, got {epochs!r}")
    if isinstance(accumulate, bool) or int(accumulate) != accumulate or accumulate < 1:
        raise ValueError(f"fit: accumulate must be an integer >= 1, got {accumulate!r}")
    if scheduler_interval not in ("batch", "epoch"):
        raise ValueError(
            f"fit: scheduler_interval must be 'batch' or 'epoch', got {scheduler_interval!r}"
        )
    if on_nonfinite not in NONFINITE_CHOICES:
        raise ValueError(
            f"fit: on_nonfinite must be one of {', '.join(map(repr, NONFINITE_CHOICES))}, "
            f"got {on_nonfinite!r}"
        )
    dev = Device(device)
    if hasattr(model, "to"):
        model.to(dev)
    autocast: Callable[[], AbstractContextManager[Any]] = nullcontext
    scaler = None
    if amp:
        autocast, scaler = _amp_tools(dev)
    state = TrainingState(
        model,
        optimizer,
        loader,
        dev,
        history if history is not None else History(),
        scheduler,
        scaler,
        metadata,
    )
    if resume is not None:
        ckpt = load_checkpoint(resume, dev) if not isinstance(resume, Mapping) else resume
        state.load_state_dict(ckpt)
    else:
        after = state.history.epoch[-1] + 1 if len(state.history) else 0
        state.epoch = max(int(start_epoch), after)
    listed = bind(callbacks, state, int(epochs))
    run = EpochRunner(
        state,
        loss_fn,
        int(epochs),
        progress,
        scheduler_interval,
        autocast,
        listed.wants_batch_logs,
        on_nonfinite,
    )
    run.accumulate = int(accumulate)
    save_to = interrupt_checkpoint if interrupt_checkpoint is not None else checkpoint
    saved: Path | None = None  # the last checkpoint written, all finite
    listed.on_train_begin({})
    with InterruptGuard() as guard:
        try:
            while state.epoch < epochs:
                state.start_epoch()
                listed.on_epoch_begin(state.epoch, {})
                run.train_epoch(listed, guard)
                run.check_epoch()
                val = {"loss": math.nan, "accuracy": math.nan}
                if val_loader is not None:
                    val = evaluate(model, val_loader, loss_fn, dev)
                logs = run.end_epoch(val)
                if checkpoint is not None:
                    if on_nonfinite == "stop" and not _all_finite(state.model):
                        where = f"a parameter after epoch {state.epoch}"
                        raise _diverged(where, math.nan, state, saved, checkpoint)
                    saved = state.save(checkpoint)
                listed.on_epoch_end(state.epoch - 1, logs)
                if guard.requested:
                    raise KeyboardInterrupt
        except NonFiniteStepError as exc:
            where = f"the loss at {run.position()}"
            raise _diverged(where, exc.loss, state, saved, checkpoint) from None
        except KeyboardInterrupt:
            if guard.aborted or not run.consistent:
                raise  # stopped in the middle of an update: nothing safe to save
            _report_interrupt(state, int(epochs), save_to, resume_command, guard.signal_name)
            if guard.terminated:
                raise Terminated from None
    listed.on_train_end(state.history.last() if len(state.history) else {})
    return state.history


def _report_interrupt(
    state: TrainingState,
    epochs: int,
    path: PathLike | None,
    resume_command: str | None,
    signal_name: str | None = None,
) -> None:
    where = _position_text(state, epochs)
    if signal_name == "SIGTERM":
        where += " by SIGTERM"
    if path is None:
        print(
            f"Training interrupted {where}; no checkpoint path was given, nothing saved.",
            file=sys.stderr,
            flush=True,
        )
        return
    saved = state.save(path)
    command = (resume_command or "fit(..., resume={path!r})").format(path=os.fspath(saved))
    print(
        f"Training interrupted {where}; checkpoint saved to {saved}.\nResume with: {command}",
        file=sys.stderr,
        flush=True,
    )
