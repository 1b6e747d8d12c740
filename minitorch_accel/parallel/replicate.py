"""Replicas: the model and its optimizer copied to each device, and the split of a batch.

A replica is a deep copy of the module *structure* (layers, their settings, hooks to
the functional ops) whose parameters and buffers are fresh tensors on the replica's
device. It is built once; afterwards only the values travel, as flat buffers.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, MutableMapping, Sequence
from typing import Any, Protocol, TypeVar

import numpy as np

from ..backends import Device
from ..core.tensor import Tensor
from ..core.versions import UNWRITTEN
from .reduce import private_copy

T = TypeVar("T")


class ModuleLike(Protocol):
    """What the tower machinery needs from a model (:class:`minitorch_accel.nn.Module`)."""

    training: bool

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Run the model."""

    def named_parameters(self) -> Iterable[tuple[str, Tensor]]:
        """``(name, parameter)`` pairs."""

    def named_buffers(self) -> Iterable[tuple[str, Tensor]]:
        """``(name, buffer)`` pairs."""

    def train(self, mode: bool = True) -> Any:
        """Set training mode."""


class OptimizerLike(Protocol):
    """What the tower machinery needs from an optimizer (``minitorch_accel.optim``)."""

    param_groups: list[dict[str, Any]]
    state: Any

    def step(self) -> Any:
        """Update the parameters from their gradients."""


def shard_sizes(batch_size: int, num_shards: int) -> list[int]:
    """How many samples each of ``num_shards`` towers gets: as even as possible, the
    first ``batch_size % num_shards`` towers one more.

    Raises
    ------
    ValueError
        If the batch has fewer samples than there are towers.

    Examples
    --------
    >>> shard_sizes(10, 3)
    [4, 3, 3]
    """
    if batch_size < num_shards:
        raise ValueError(
            f"a batch of {batch_size} sample(s) cannot be split over {num_shards} towers: "
            "every tower needs at least one sample (use a larger batch or fewer devices)"
        )
    base, extra = divmod(batch_size, num_shards)
    return [base + 1 if i < extra else base for i in range(num_shards)]


def split_batch(batch: Tensor, sizes: Sequence[int]) -> list[Tensor]:
    """Consecutive slices of ``batch`` along dim 0, one per size (views, no copy)."""
    shards = []
    start = 0
    for size in sizes:
        shards.append(Tensor._make(batch.array[start : start + size], batch.device, False, None))
        start += size
    return shards


def _moved(t: T, device: Device) -> T:
    """A shallow copy of tensor ``t`` (same class: a Parameter stays one) on ``device``."""
    assert isinstance(t, Tensor)
    clone = copy.copy(t)
    clone.array = private_copy(t.array, t.device, device)
    clone.device = device
    clone.grad = None
    clone._version_counter = UNWRITTEN  # a storage of its own
    clone._hooks = None
    return clone


def replicate(module: T, device: Device) -> T:
    """A copy of ``module`` whose parameters and buffers live on ``device``.

    The module is deep-copied with each parameter and buffer replaced by a copy on
    ``device`` (a parameter shared by two layers stays shared in the replica).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.nn import Linear
    >>> replicate(Linear(2, 3), mta.Device("cpu:1")).weight.device
    device('cpu:1')
    """
    typed: Any = module
    memo: dict[int, Any] = {}
    for _, tensor in [*typed.named_parameters(), *typed.named_buffers()]:
        if id(tensor) not in memo:
            memo[id(tensor)] = _moved(tensor, device)
    return copy.deepcopy(module, memo)


def replicate_optimizer(
    optimizer: T, param_pairs: Sequence[tuple[Tensor, Tensor]], device: Device
) -> T:
    """A copy of ``optimizer`` that updates the replica's parameters on ``device``.

    Parameters
    ----------
    optimizer : optimizer
        Holds ``param_groups`` and ``state`` keyed by parameter, as in PyTorch.
    param_pairs : sequence of (Tensor, Tensor)
        ``(master parameter, replica parameter)``.
    device : Device
        Where the copy's state tensors (momentum, Adam's moments) go.
    """
    memo: dict[int, Any] = {id(master): replica for master, replica in param_pairs}
    clone: Any = copy.deepcopy(optimizer, memo)
    for per_param in clone.state.values():
        if isinstance(per_param, MutableMapping):
            for key, value in per_param.items():
                if isinstance(value, Tensor):
                    per_param[key] = _moved(value, device)
    return clone  # type: ignore[no-any-return]


def copy_optimizer_state(
    src: OptimizerLike, dst: OptimizerLike, param_pairs: Sequence[tuple[Tensor, Tensor]]
) -> None:
    """Make ``dst``'s state a copy of ``src``'s, moved to ``dst``'s parameters' devices.

    ``param_pairs`` holds ``(src parameter, dst parameter)``.
    """
    state: MutableMapping[Any, Any] = dst.state
    keep = {id(p): p for _, p in param_pairs}
    for key in [k for k in state if id(k) in keep]:
        del state[key]
    for src_param, dst_param in param_pairs:
        found = src.state.get(src_param) if isinstance(src.state, Mapping) else None
        if found is None:
            continue
        state[dst_param] = {
            key: _moved(value, dst_param.device)
            if isinstance(value, Tensor)
            else copy.deepcopy(value)
            for key, value in found.items()
        }


def copy_hyperparameters(src: OptimizerLike, dst: OptimizerLike) -> None:
    """Copy every setting but ``params`` of each parameter group (learning rates changed
    by a scheduler, for example) from ``src`` to ``dst``.
    """
    for src_group, dst_group in zip(src.param_groups, dst.param_groups, strict=True):
        for key, value in src_group.items():
            if key != "params":
                dst_group[key] = value


class TowerTensors:
    """A model's tensors in flat-buffer order: parameters, trainable ones, buffers.

    Built the same way for the master model and for each replica, so position ``j``
    means the same tensor everywhere.
    """

    def __init__(self, module: ModuleLike) -> None:
        named_params = list(module.named_parameters())
        named_buffers = list(module.named_buffers())
        self.param_names = [name for name, _ in named_params]
        self.buffer_names = [name for name, _ in named_buffers]
        self.params = [p for _, p in named_params]
        self.trainable = [p for p in self.params if p.requires_grad]
        self.buffers = [b for _, b in named_buffers]

    @property
    def state(self) -> list[Tensor]:
        """What the host broadcasts and syncs: every parameter, then every buffer."""
        return [*self.params, *self.buffers]

    def gradients_and_buffers(self) -> tuple[list[Any | None], list[bool]]:
        """The arrays a tower sends back (gradients, then buffers) and which parameters
        received a gradient.
        """
        grads = [None if p.grad is None else p.grad.array for p in self.trainable]
        return [*grads, *(b.array for b in self.buffers)], [g is not None for g in grads]

    def load_gradients_and_buffers(self, arrays: Sequence[Any], has_grad: Sequence[bool]) -> None:
        """Point each trainable parameter's ``.grad`` at ``arrays`` (None where no tower
        produced one) and copy the buffers' values in place.
        """
        n = len(self.trainable)
        for param, grad, used in zip(self.trainable, arrays[:n], has_grad, strict=True):
            param.grad = Tensor._make(grad, param.device, False, None) if used else None
        for buffer, value in zip(self.buffers, arrays[n:], strict=True):
            buffer.array[...] = value

    def load_state(self, arrays: Sequence[Any], in_place: bool) -> None:
        """Give parameters and buffers the values ``arrays``: copied into their arrays
        (``in_place``) or by pointing at them (views of a flat buffer).
        """
        for tensor, value in zip(self.state, arrays, strict=True):
            if in_place:
                tensor.array[...] = value
            else:
                tensor.array = value


def check_master(tensors: TowerTensors) -> np.dtype[Any]:
    """Check that a model can be the host master of towers; return its flat dtype.

    Raises
    ------
    ValueError
        If the model has no parameter, a parameter or buffer is not on the host, or
        floating-point tensors of two dtypes would have to share one flat buffer.
    """
    if not tensors.params:
        raise ValueError("TowerTrainer needs a model with at least one parameter")
    names = tensors.param_names + tensors.buffer_names
    for name, tensor in zip(names, tensors.state, strict=True):
        if not tensor.device.is_host:
            raise ValueError(
                f"TowerTrainer keeps the master model on the host: {name} is on "
                f"{tensor.device}; move the model with model.to('cpu') first"
            )
    floating = [
        (n, t.dtype) for n, t in zip(names, tensors.state, strict=True) if t.dtype.kind == "f"
    ]
    first_name, dtype = floating[0] if floating else (names[0], tensors.params[0].dtype)
    for name, other in floating:
        if other != dtype:
            raise ValueError(
                f"TowerTrainer moves the model as one flat buffer of one dtype, but {first_name} "
                f"is {dtype} and {name} is {other}; cast the model first, e.g. model.float()"
            )
    return np.dtype(dtype)


def check_optimizer(optimizer: OptimizerLike, params: Sequence[Tensor], per_device: bool) -> None:
    """Check that ``optimizer`` updates only ``params`` (and can be copied per device).

    Raises
    ------
    ValueError
        If it holds a parameter that is not one of the model's.
    TypeError
        If it lacks ``param_groups`` (or, for ``per_device``, a mapping ``state``).
    """
    groups = getattr(optimizer, "param_groups", None)
    if not isinstance(groups, list) or not callable(getattr(optimizer, "step", None)):
        raise TypeError(
            f"TowerTrainer needs an optimizer with step() and param_groups, got "
            f"{type(optimizer).__name__}"
        )
    known = {id(p) for p in params}
    for group in groups:
        for param in group["params"]:
            if id(param) not in known:
                raise ValueError(
                    "the optimizer updates a parameter that is not in the model given to "
                    f"TowerTrainer (shape {tuple(param.shape)}); build it from "
                    "model.parameters()"
                )
    if per_device and not isinstance(getattr(optimizer, "state", None), MutableMapping):
        raise TypeError(
            "reduce='device' copies the optimizer to every device and needs its state as "
            "a mapping keyed by parameter (as in minitorch_accel.optim)"
        )
