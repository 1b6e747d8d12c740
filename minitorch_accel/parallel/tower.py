"""TowerTrainer: data parallelism over several devices of one machine.

The recipe, one numbered comment per step in :meth:`TowerTrainer.step`:

1. the master parameters live on the host (the model the user passed, on ``cpu``);
2. each device holds a replica, built once; every step the master values travel to
   each replica as one flat buffer (pack on the host, one transfer, unpack into views);
3. the batch is split across the devices, unevenly if it must;
4. and 5. each tower runs forward and backward on its shard, one thread per device,
   inside that device's context;
6. the host waits for every tower;
7. each tower's gradients come back as one flat buffer, are averaged with weights
   ``shard / batch`` into the master ``.grad``, and the optimizer updates the master.

``reduce="device"`` keeps parameters and optimizer state on the devices instead:
gradients are averaged between the devices and every replica applies the same update;
the host model is brought up to date on demand.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from concurrent.futures import wait as wait_futures
from dataclasses import dataclass
from time import perf_counter
from typing import Any, Generic, TypeVar

import numpy as np

from ..backends import Device, DeviceLike, transfer_stats
from ..core.grad_mode import is_grad_enabled, set_grad_enabled
from ..core.tensor import Tensor
from ..ops.flat import FlatLayout
from .reduce import DeviceReducer, HostLink, host_buffer, weighted_sum
from .replicate import (
    ModuleLike,
    OptimizerLike,
    TowerTensors,
    check_master,
    check_optimizer,
    copy_hyperparameters,
    copy_optimizer_state,
    replicate,
    replicate_optimizer,
    shard_sizes,
    split_batch,
)
from .threads import TowerThread, run_towers, stop_threads
from .timings import StepTimings, TimingLog, TowerTiming

M = TypeVar("M", bound=ModuleLike)
LossFn = Callable[[Any, Any], Tensor]


@dataclass
class _TowerResult:
    loss: float
    flat: Any  # gradients then buffers, on the host (reduce="host") or the device
    has_grad: list[bool]
    timing: TowerTiming


class TowerTrainer(Generic[M]):
    """Train one model on several devices of one machine, splitting every batch.

    Parameters
    ----------
    model : Module
        The master model, on the host (``"cpu"``). It is never moved.
    loss_fn : callable
        ``loss_fn(outputs, targets)`` returning a scalar Tensor, mean-reduced over the
        shard (or summed, with ``loss_reduction="sum"``).
    optimizer : Optimizer
        Built on ``model.parameters()``.
    devices : sequence of str or Device
        One tower per entry, e.g. ``["cuda:0", "cuda:1"]`` or ``["cpu:0", "cpu:1"]``;
        a device may repeat.
    reduce : {"host", "device"}
        Where gradients are averaged and parameters updated: on the host (the master
        model is current after every step), or between the devices (parameters and
        optimizer state stay there; call :meth:`sync_to_host` to see them).
    loss_reduction : {"mean", "sum"}
        How ``loss_fn`` reduces over a shard. Tower ``i`` of ``n_i`` samples gets the
        weight ``n_i / batch`` for ``"mean"`` and ``1`` for ``"sum"``, so the result is
        the gradient of the whole batch either way.
    concurrent : bool
        Run the towers at once, one thread each (the default), or one after another
        in the calling thread (to measure the machinery alone, see
        ``benchmarks/towers.py``).
    profile : bool
        Synchronize the devices between phases so :attr:`last_timings` splits the
        step exactly. Off, only the total and the bytes are meaningful.
    timeout : float, optional
        Seconds each phase of a step may take on every tower. A tower that hangs
        (a stuck device, a deadlock in a data source) makes :meth:`step` raise a
        ``RuntimeError`` naming the tower and its device, with the master state
        unchanged, instead of blocking forever. The next step first waits (up to
        ``timeout``) for the abandoned tower to come back, and refuses to run while
        it has not. Needs ``concurrent=True``.

    Attributes
    ----------
    replicas : list of Module
        One copy of the model per tower.
    last_timings : StepTimings or None
        Seconds per phase and bytes moved in the latest step.
    timing_log : TimingLog
        The same figures summed over the steps since the last :meth:`reset_timings`.

    Notes
    -----
    **Batch normalization.** Each tower normalizes its shard with the shard's own
    batch statistics (as PyTorch's ``DataParallel`` does), so outputs and gradients
    equal those of the single-device model run on each shard separately, not on the
    whole batch. Each tower updates its own running statistics from its shard; at
    each sync (every step: buffers travel with the gradients) they are averaged with
    the shard weights into the master and sent back to every replica. The running
    mean then equals the single-device one exactly; the running variance is the
    weighted average of the shards' variances, which misses the spread between shard
    means. Integer buffers (``num_batches_tracked``) are averaged and rounded.

    **Failures.** An exception in a tower (an error in the loss, an out-of-memory)
    raises a ``RuntimeError`` naming the tower and its device, chained to the
    original. Master parameters, their gradients, the buffers and the optimizer state
    are then exactly as before the step.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn, optim
    >>> model = nn.Linear(4, 2)
    >>> opt = optim.SGD(model.parameters(), lr=0.1)
    >>> trainer = TowerTrainer(model, nn.functional.mse_loss, opt, ["cpu:0", "cpu:1"])
    >>> loss = trainer.step(mta.randn(10, 4), mta.randn(10, 2))
    >>> sorted(trainer.last_timings.phases)
    ['average', 'backward', 'broadcast', 'forward', 'gather', 'update']
    """

    def __init__(
        self,
        model: M,
        loss_fn: LossFn,
        optimizer: OptimizerLike,
        devices: Sequence[DeviceLike],
        reduce: str = "host",
        *,
        loss_reduction: str = "mean",
        concurrent: bool = True,
        profile: bool = True,
        timeout: float | None = None,
    ) -> None:
        if timeout is not None and not (timeout > 0 and concurrent):
            raise ValueError(
                f"timeout must be a number of seconds > 0, with concurrent=True (the "
                f"towers need threads to be waited for), got timeout={timeout!r}, "
                f"concurrent={concurrent!r}"
            )
        if reduce not in ("host", "device"):
            raise ValueError(f"reduce must be 'host' or 'device', got {reduce!r}")
        if loss_reduction not in ("mean", "sum"):
            raise ValueError(f"loss_reduction must be 'mean' or 'sum', got {loss_reduction!r}")
        if isinstance(devices, (str, Device)) or not devices:
            raise ValueError(
                f"devices must be a non-empty list like ['cpu:0', 'cpu:1'], got {devices!r}"
            )
        self.devices = [Device(d) for d in devices]
        for device in self.devices:
            device.backend  # noqa: B018  (raises early, naming what is missing)
        self.model, self.loss_fn, self.optimizer = model, loss_fn, optimizer
        self.reduce, self.loss_reduction = reduce, loss_reduction
        self.profile = profile
        self._master = TowerTensors(model)
        dtype = check_master(self._master)
        check_optimizer(optimizer, self._master.params, per_device=reduce == "device")
        # What the host sends (every parameter, every buffer) and what comes back
        # (trainable parameters' gradients, every buffer), each as one flat buffer.
        self.state_layout = _layout(self._master.state, dtype)
        self.grad_layout = _layout([*self._master.trainable, *self._master.buffers], dtype)
        self.replicas = [replicate(model, device) for device in self.devices]
        self._towers = [TowerTensors(replica) for replica in self.replicas]
        self._training = model.training
        self._links = [HostLink(device) for device in self.devices]
        self._host_flat = host_buffer(self.devices, self.state_layout.numel, dtype)
        self._averaged = np.empty(self.grad_layout.numel, dtype)  # the master .grad views it
        self._packed: list[Any] = [None] * len(self.devices)  # each tower's, on its device
        self._reducer: DeviceReducer | None = None
        self._optimizers: list[OptimizerLike] = []
        if reduce == "device":
            self._reducer = DeviceReducer(self.devices)
            self._optimizers = [
                replicate_optimizer(
                    optimizer, list(zip(self._master.params, t.params, strict=True)), d
                )
                for t, d in zip(self._towers, self.devices, strict=True)
            ]
        self.timeout = timeout
        self._abandoned: dict[int, Any] = {}  # tower -> future, for towers that were late
        self._abandoned_buffers: list[list[Any]] = []
        many = concurrent and (len(self.devices) > 1 or timeout is not None)
        self._threads = (
            [TowerThread(f"tower-{i}-{d}") for i, d in enumerate(self.devices)] if many else []
        )
        weakref.finalize(self, stop_threads, list(self._threads))
        self.last_timings: StepTimings | None = None
        self.timing_log = TimingLog()

    # ------------------------------------------------------------ the step
    def step(self, inputs: Tensor, targets: Tensor) -> float:
        """One training step on a batch split across the towers.

        Parameters
        ----------
        inputs, targets : Tensor
            The whole batch (on the host, or on any device); split along dim 0.

        Returns
        -------
        float
            The loss of the whole batch (the shard losses' weighted mean).

        Raises
        ------
        ValueError
            If the batch is smaller than the number of towers, or inputs and targets
            differ in length.
        RuntimeError
            If a tower fails, or does not finish within ``timeout``; nothing on the
            host has changed then.
        """
        if not isinstance(inputs, Tensor) or not isinstance(targets, Tensor):
            raise TypeError("TowerTrainer.step expects Tensors for inputs and targets")
        if len(inputs) != len(targets):
            raise ValueError(f"inputs have {len(inputs)} samples but targets {len(targets)}")
        self._wait_for_abandoned()
        start, moved_before = perf_counter(), transfer_stats.as_dict()
        self._match_training_mode()
        # 3. split the batch; weights make the average the gradient of the whole batch
        sizes = shard_sizes(len(inputs), len(self.devices))
        weights = [n / len(inputs) if self.loss_reduction == "mean" else 1.0 for n in sizes]
        x_shards, y_shards = split_batch(inputs, sizes), split_batch(targets, sizes)
        phases = dict.fromkeys(("broadcast", "gather", "average", "update"), 0.0)
        host_flat, saved = None, self._save_replica_buffers()
        if self.reduce == "host":
            # 1. and 2. the master values (parameters, buffers) packed into one host buffer
            tick = perf_counter()
            host_flat = self.state_layout.pack(
                [t.array for t in self._master.state], np, self._host_flat
            )
            phases["broadcast"] = perf_counter() - tick
        # 4. and 5. every tower, in its own thread: receive, forward, backward, pack the
        # gradients (and send them to the host); 6. wait for all of them
        try:
            results = run_towers(
                self.devices,
                self._threads,
                "forward/backward",
                lambda i: self._tower(i, host_flat, x_shards[i], y_shards[i]),
                self.timeout,
                self._abandoned,
            )
        except RuntimeError:
            self._restore_replica_buffers(saved)
            if self._abandoned:  # a late tower may still write its buffers: again later
                self._abandoned_buffers = saved
            raise
        tick = perf_counter()
        has_grad = [any(flags) for flags in zip(*(r.has_grad for r in results), strict=True)]
        if self.reduce == "host":
            # 7. the weighted average into the master .grad; the optimizer updates the master
            averaged = weighted_sum([r.flat for r in results], weights, out=self._averaged)
            phases["average"], tick = perf_counter() - tick, perf_counter()
            self._master.load_gradients_and_buffers(self.grad_layout.unpack(averaged), has_grad)
            self.optimizer.step()
        else:
            # 7. the weighted average between the devices; every replica, the same update
            assert self._reducer is not None
            reduced, seconds = self._reducer.all_reduce([r.flat for r in results], weights)
            phases.update({name: phases[name] + value for name, value in seconds.items()})
            grad_mode, tick = is_grad_enabled(), perf_counter()
            run_towers(
                self.devices,
                self._threads,
                "the update",
                lambda i: self._update_tower(i, reduced[i], has_grad, grad_mode),
                self.timeout,
                self._abandoned,
            )
        phases["update"] = perf_counter() - tick
        loss = float(sum(w * r.loss for w, r in zip(weights, results, strict=True)))
        towers = [r.timing for r in results]
        self.last_timings = StepTimings.from_towers(phases, towers, start, moved_before)
        self.timing_log.add(self.last_timings)
        return loss

    def _tower(self, i: int, host_flat: np.ndarray | None, x: Tensor, y: Tensor) -> _TowerResult:
        """Tower ``i``'s part of a step, in its own thread and device context."""
        device, tower, replica = self.devices[i], self._towers[i], self.replicas[i]
        timing = TowerTiming(str(device), len(x))
        tick = perf_counter()
        if host_flat is not None:  # reduce="host": one transfer of all the master values
            flat = self._links[i].to_device(host_flat)
            tower.load_state(self.state_layout.unpack(flat), in_place=False)  # views into it
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        for param in tower.trainable:
            param.grad = None
        self._wait(device)
        timing.receive, tick = perf_counter() - tick, perf_counter()
        loss = self.loss_fn(replica(x), y)  # 4. forward
        if not isinstance(loss, Tensor) or loss.numel() != 1:
            raise TypeError(f"loss_fn must return a one-element Tensor, got {loss!r:.80}")
        self._wait(device)
        timing.forward, tick = perf_counter() - tick, perf_counter()
        loss.backward()  # 5. backward
        self._wait(device)
        timing.backward, tick = perf_counter() - tick, perf_counter()
        arrays, has_grad = tower.gradients_and_buffers()
        if self._packed[i] is None:
            self._packed[i] = device.xp.empty(self.grad_layout.numel, self.grad_layout.dtype)
        grads = self.grad_layout.pack(arrays, device.xp, out=self._packed[i])
        if host_flat is not None:  # reduce="host": one transfer back
            grads = self._links[i].to_host(grads)
        self._wait(device)
        timing.send = perf_counter() - tick
        return _TowerResult(float(loss.item()), grads, has_grad, timing)

    def _save_replica_buffers(self) -> list[list[Any]]:
        """With ``reduce="device"``, copies of the replicas' buffers, which forward passes
        update in place: a failed step puts them back. With ``"host"`` the replicas get
        the master's values at every step anyway.
        """
        if self.reduce == "host":
            return []
        saved = []
        for tower, device in zip(self._towers, self.devices, strict=True):
            with device.backend.device_context(device):
                saved.append([b.array.copy() for b in tower.buffers])
        return saved

    def _restore_replica_buffers(self, saved: list[list[Any]]) -> None:
        for tower, arrays in zip(self._towers, saved, strict=False):
            for buffer, array in zip(tower.buffers, arrays, strict=True):
                buffer.array = array

    def _update_tower(self, i: int, flat: Any, has_grad: list[bool], grad_mode: bool) -> None:
        """Every replica applies the same update from the averaged gradients."""
        self._towers[i].load_gradients_and_buffers(self.grad_layout.unpack(flat), has_grad)
        copy_hyperparameters(self.optimizer, self._optimizers[i])  # learning-rate schedules
        with set_grad_enabled(grad_mode):
            self._optimizers[i].step()
        self._wait(self.devices[i])

    def _wait_for_abandoned(self) -> None:
        """Before a step: the towers abandoned by a timed-out step must have come back
        (their results are dropped, the buffers they touched are put back).
        """
        if not self._abandoned:
            return
        _, late = wait_futures(self._abandoned.values(), timeout=self.timeout)
        if late:
            hung = [i for i, f in self._abandoned.items() if f in late]
            names = ", ".join(f"tower {i} on device {self.devices[i]}" for i in hung)
            raise RuntimeError(
                f"{names} still runs the step that timed out; the trainer cannot step "
                "until it returns (if it never does, build a new TowerTrainer)"
            )
        self._abandoned = {}
        self._restore_replica_buffers(self._abandoned_buffers)
        self._abandoned_buffers = []

    # ------------------------------------------------------------ threads
    def _wait(self, device: Device) -> None:
        if self.profile:
            device.backend.synchronize(device)

    def close(self) -> None:
        """Stop the tower threads (also done when the trainer is garbage-collected)."""
        stop_threads(self._threads)
        self._threads = []

    def __enter__(self) -> TowerTrainer[M]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ host <-> devices
    def sync_to_host(self) -> None:
        """Copy tower 0's parameters, buffers and optimizer state into the master model
        and optimizer (``reduce="device"``; the host is always current otherwise).
        """
        if self.reduce == "host":
            return
        tower, device = self._towers[0], self.devices[0]
        with device.backend.device_context(device):
            flat = self.state_layout.pack([t.array for t in tower.state], device.xp)
        self._master.load_state(
            self.state_layout.unpack(self._links[0].to_host(flat)), in_place=True
        )
        pairs = list(zip(tower.params, self._master.params, strict=True))
        copy_optimizer_state(self._optimizers[0], self.optimizer, pairs)

    def sync_from_host(self) -> None:
        """Send the master model's values and optimizer state to every replica (after
        changing the master, e.g. loading a checkpoint, with ``reduce="device"``; with
        ``"host"`` every step sends them anyway).
        """
        if self.reduce == "host":
            return
        host_flat = self.state_layout.pack(
            [t.array for t in self._master.state], np, self._host_flat
        )
        for i, (tower, device) in enumerate(zip(self._towers, self.devices, strict=True)):
            with device.backend.device_context(device):
                tower.load_state(
                    self.state_layout.unpack(self._links[i].to_device(host_flat)), False
                )
            pairs = list(zip(self._master.params, tower.params, strict=True))
            copy_optimizer_state(self.optimizer, self._optimizers[i], pairs)
            copy_hyperparameters(self.optimizer, self._optimizers[i])

    def state_dict(self) -> Any:
        """The master model's ``state_dict()``, synced from the devices first."""
        self.sync_to_host()
        return self.model.state_dict()  # type: ignore[attr-defined]

    def load_state_dict(self, state_dict: Any) -> None:
        """Load ``state_dict`` into the master model and send it to the replicas."""
        self.model.load_state_dict(state_dict)  # type: ignore[attr-defined]
        self.sync_from_host()

    def _match_training_mode(self) -> None:
        if self.model.training != self._training:
            for replica in self.replicas:
                replica.train(self.model.training)
            self._training = self.model.training

    # ------------------------------------------------------------ timings
    def timings_summary(self) -> str:
        """A printable table of the mean seconds per phase and bytes per step."""
        names = ", ".join(str(d) for d in self.devices)
        return self.timing_log.summary(f"TowerTrainer on {names}, reduce={self.reduce!r}")

    def reset_timings(self) -> None:
        """Forget the steps summed so far (e.g. after warm-up)."""
        self.timing_log = TimingLog()


def _layout(tensors: Sequence[Tensor], dtype: np.dtype[Any]) -> FlatLayout:
    return FlatLayout([t.shape for t in tensors], [t.dtype for t in tensors], dtype)
