"""One epoch of training, batch by batch, as :func:`~minitorch_accel.train.fit` runs it."""

from __future__ import annotations

import math
import sys
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any

from tqdm.auto import tqdm

from ..backends import Device
from ..core.grad_mode import no_grad
from ..core.tensor import Tensor
from ..ops.shape import cat
from ..optim.lr_scheduler import ReduceLROnPlateau
from .checkpoint import TrainingState
from .interrupt import InterruptGuard

__all__ = ["EpochRunner", "NonFiniteStepError", "count_correct", "synchronize", "to_device"]

#: What ``fit`` does at a non-finite loss.
NONFINITE_CHOICES = ("stop", "warn", "ignore")


class NonFiniteStepError(Exception):
    """Raised by :meth:`EpochRunner.step` before the update when the loss is NaN or
    infinite and ``on_nonfinite="stop"`` (``fit`` turns it into a
    :class:`~minitorch_accel.train.NonFiniteLossError` with the whole story).
    """

    def __init__(self, loss: float) -> None:
        super().__init__(loss)
        self.loss = loss


LossFn = Callable[[Any, Any], Tensor]

#: Seconds between two refreshes of the progress bar's numbers (each one syncs the device).
_POSTFIX_EVERY = 0.5


def to_device(batch: Sequence[Tensor], device: Device) -> tuple[Tensor, Tensor]:
    """The ``(inputs, targets)`` of a batch, on ``device``."""
    if len(batch) != 2:
        raise ValueError(f"fit expects (inputs, targets) batches, got {len(batch)} fields")
    x, y = batch
    return x.to(device), y.to(device)


def count_correct(output: Tensor, target: Tensor) -> Tensor | None:
    """Number of right predictions as a device scalar, or None when not a classification."""
    if output.ndim != 2 or target.ndim != 1 or target.dtype.kind not in "iu":
        return None
    return output.argmax(dim=1).eq(target).sum()


def synchronize(device: Device) -> None:
    """Wait for the work queued on ``device`` (a no-op on the CPU)."""
    device.backend.synchronize(device)


class EpochRunner:
    """The moving parts of one ``fit`` call, so each phase is a short method."""

    def __init__(
        self,
        state: TrainingState,
        loss_fn: LossFn,
        epochs: int,
        progress: bool,
        scheduler_interval: str,
        autocast: Callable[[], AbstractContextManager[Any]],
        wants_batch_logs: bool,
        on_nonfinite: str = "stop",
    ) -> None:
        self.state, self.loss_fn, self.epochs = state, loss_fn, epochs
        self.on_nonfinite = on_nonfinite
        self.warned = False
        self.progress, self.scheduler_interval = progress, scheduler_interval
        self.autocast, self.wants_batch_logs = autocast, wants_batch_logs
        self.consistent = True  # False while the model/optimizer are half-updated
        self.accumulate = 1  # micro-batches per batch (gradient accumulation)

    def forward_backward(self, x: Tensor, y: Tensor) -> tuple[Tensor, Tensor]:
        """Forward and backward of a batch; returns the loss and the output.

        With ``accumulate = k > 1`` (gradient accumulation) the batch goes through in
        ``k`` micro-batches, each loss weighted by its share of the batch: the summed
        gradients are those of the whole batch, while activations take the memory of
        one micro-batch.
        """
        st = self.state
        n = int(y.shape[0])
        k = max(1, min(self.accumulate, n))
        bounds = [n * i // k for i in range(k + 1)]
        losses, outputs = [], []
        for start, stop in zip(bounds, bounds[1:], strict=False):
            xs, ys = (x, y) if k == 1 else (x[start:stop], y[start:stop])
            with self.autocast():
                output = st.model(xs)
                loss = self.loss_fn(output, ys)
            if self.on_nonfinite != "ignore":
                self.check_finite(float(loss.item()))  # one device sync per micro-batch
            if k > 1:
                loss = loss * ((stop - start) / n)
            if st.scaler is not None:
                st.scaler.scale(loss).backward()
            else:
                loss.backward()
            losses.append(loss)
            outputs.append(output)
        if k == 1:
            return losses[0], outputs[0]
        with no_grad():
            return sum(losses[1:], losses[0].detach()), cat([o.detach() for o in outputs])

    def step(self, x: Tensor, y: Tensor) -> Tensor:
        """One optimization step on a batch; returns the (detached) loss."""
        st = self.state
        st.optimizer.zero_grad()
        self.consistent = False
        loss, output = self.forward_backward(x, y)
        if st.scaler is not None:
            st.scaler.step(st.optimizer)
            st.scaler.update()
        else:
            st.optimizer.step()
        if (
            st.scheduler is not None
            and self.scheduler_interval == "batch"
            and not _watches_a_metric(st.scheduler)
        ):
            st.scheduler.step()
        n = int(y.shape[0])
        with no_grad():
            loss = loss.detach()
            st.loss_sum = st.loss_sum + loss.double() * n
            right = count_correct(output.detach(), y)
            if right is not None:
                st.correct = st.correct + right
        st.seen += n
        st.mark_batch_done()
        self.consistent = True
        return loss

    def check_finite(self, value: float) -> None:
        """Stop (raise :class:`NonFiniteStepError`, nothing updated yet) or warn once when
        the loss ``value`` of the batch about to be learned from is NaN or infinite.
        """
        if math.isfinite(value):
            return
        if self.on_nonfinite == "stop":
            raise NonFiniteStepError(value)
        if not self.warned:
            self.warned = True
            warnings.warn(
                f"fit: the loss is {value} at {self.position()}; training goes on "
                "(on_nonfinite='warn'), but the model is probably ruined",
                RuntimeWarning,
                stacklevel=2,
            )

    def position(self) -> str:
        """Where the current batch is, in words (``epoch 1/3, batch 4/20 (step 24)``)."""
        st = self.state
        step = st.epoch * st.batches_per_epoch + st.batch + 1
        return (
            f"epoch {st.epoch + 1}/{self.epochs}, batch {st.batch + 1}/{st.batches_per_epoch} "
            f"(step {step} of the run)"
        )

    def postfix(self) -> dict[str, str]:
        """The numbers shown on the progress bar (reading them syncs the device)."""
        st = self.state
        seen = max(st.seen, 1)
        return {
            "loss": f"{st.loss_sum.item() / seen:.4f}",
            "acc": f"{100 * st.correct.item() / seen:.2f}%",
            "samples/s": f"{st.seen / st.elapsed:.0f}" if st.elapsed > 0 else "-",
        }

    def train_epoch(self, callbacks: Any, guard: InterruptGuard) -> None:
        """The batches of the current epoch still to do (all of them unless resuming)."""
        st = self.state
        skip = st.batch
        bar = tqdm(
            total=st.batches_per_epoch,
            initial=skip,
            unit="batch",
            leave=True,
            desc=f"epoch {st.epoch + 1}/{self.epochs}",
            disable=not self.progress,
            file=sys.stderr,
            dynamic_ncols=True,
        )
        st.model.train()
        batches: Iterator[Any] = iter(st.loader)
        last = time.perf_counter()
        shown = last
        try:
            for index, batch in enumerate(batches):
                if index < skip:  # done before the checkpoint: same order, no compute
                    last = time.perf_counter()
                    continue
                x, y = to_device(batch, st.device)
                loss = self.step(x, y)
                final = index + 1 == st.batches_per_epoch
                if final:
                    synchronize(st.device)  # the epoch's time includes the queued work
                now = time.perf_counter()
                st.elapsed += now - last  # loading the batch included
                last = now
                bar.update(1)
                if self.progress and (now - shown > _POSTFIX_EVERY or final):
                    bar.set_postfix(self.postfix(), refresh=final)
                    shown = now
                if self.wants_batch_logs:
                    callbacks.on_batch_end(
                        index, {"loss": float(loss.item()), "batch_size": float(y.shape[0])}
                    )
                if guard.requested:
                    raise KeyboardInterrupt
        finally:
            close = getattr(batches, "close", None)
            if close is not None:
                close()  # stops a prefetching thread when leaving early
            bar.close()

    def check_epoch(self) -> None:
        """Raise when the epoch saw no sample (an empty loader)."""
        if self.state.seen == 0:
            raise ValueError("fit: the training loader yielded no batches")

    def end_epoch(self, val: Mapping[str, float]) -> dict[str, float]:
        """Record the epoch (``val``: validation loss and accuracy) and go to the next one."""
        st = self.state
        train_loss = float(st.loss_sum.item()) / st.seen
        batches = st.batches_per_epoch
        self.consistent = False
        if _watches_a_metric(st.scheduler):  # the validation loss, else the training loss
            st.scheduler.step(train_loss if math.isnan(val["loss"]) else val["loss"])
        elif st.scheduler is not None and self.scheduler_interval == "epoch":
            st.scheduler.step()
        st.history.append(
            st.epoch,
            train_loss=train_loss,
            train_accuracy=int(st.correct.item()) / st.seen,
            val_loss=val["loss"],
            val_accuracy=val["accuracy"],
            epoch_time=st.elapsed,
            step_time=st.elapsed / batches,
            samples_per_s=st.seen / st.elapsed if st.elapsed > 0 else math.inf,
            lr=float(st.optimizer.param_groups[0]["lr"]),
        )
        st.mark_epoch_done()
        self.consistent = True
        if self.progress:
            tqdm.write(st.history.format_row(), file=sys.stderr)
        return st.history.last()


def _watches_a_metric(scheduler: Any) -> bool:
    """Whether ``scheduler`` is a :class:`ReduceLROnPlateau`, stepped once per epoch with
    the loss (whatever ``scheduler_interval`` says); False for None.
    """
    return isinstance(scheduler, ReduceLROnPlateau)
