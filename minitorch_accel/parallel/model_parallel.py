"""Model parallelism: consecutive layers of one model on different devices.

Data parallelism copies the whole model to every device and splits the batch. Model
parallelism splits the *model* instead: layers ``0 .. b1-1`` live on the first device,
``b1 .. b2-1`` on the second, and so on. The whole batch visits the devices one after the
other; at each boundary the activation is copied to the next device (forward) and its
gradient back to the previous one (backward). Those copies are :meth:`Tensor.to`, which
is differentiable and counted in :data:`minitorch_accel.backends.transfer_stats`.

Only one device works at a time: model parallelism buys memory (each device holds
``1/p`` of the parameters and optimizer state), not speed. :class:`Pipeline` keeps every
device busy by cutting the batch into micro-batches.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..backends import Device, DeviceLike
from ..core.tensor import Tensor
from ..nn import Module, Sequential
from .replicate import shard_sizes


def check_devices(devices: Sequence[DeviceLike], what: str) -> list[Device]:
    """``devices`` as a list of :class:`Device`, each usable (raises naming what is missing).

    Raises
    ------
    ValueError
        If ``devices`` is a single device or empty.
    """
    if isinstance(devices, (str, Device)) or len(devices) == 0:
        raise ValueError(
            f"{what} needs a non-empty list of devices like ['cpu:0', 'cpu:1'], got {devices!r}"
        )
    found = [Device(d) for d in devices]
    for device in found:
        device.backend  # noqa: B018  (raises early, naming what is missing)
    return found


def stage_boundaries(
    num_layers: int, num_stages: int, boundaries: Sequence[int] | None
) -> list[int]:
    """Where each stage starts: ``[0, b1, ..., b_{p-1}, num_layers]``.

    Without ``boundaries`` the layers are shared out as evenly as possible (the first
    stages one more). With them, ``boundaries`` holds the index of the first layer of
    stages ``1 .. p-1``, strictly increasing inside ``(0, num_layers)``.

    Raises
    ------
    ValueError
        If there are fewer layers than stages, or ``boundaries`` is not as described.

    Examples
    --------
    >>> stage_boundaries(5, 2, None), stage_boundaries(5, 3, [1, 4])
    ([0, 3, 5], [0, 1, 4, 5])
    """
    if boundaries is None:
        if num_layers < num_stages:
            raise ValueError(
                f"a model of {num_layers} layer(s) cannot be split over {num_stages} devices: "
                "every device needs at least one layer"
            )
        starts = [0]
        for size in shard_sizes(num_layers, num_stages):
            starts.append(starts[-1] + size)
        return starts
    cuts = [int(b) for b in boundaries]
    if len(cuts) != num_stages - 1:
        raise ValueError(
            f"boundaries must hold {num_stages - 1} layer index(es) for {num_stages} devices "
            f"(the first layer of every device but the first), got {list(boundaries)}"
        )
    starts = [0, *cuts, num_layers]
    if any(a >= b for a, b in zip(starts, starts[1:], strict=False)):
        raise ValueError(
            f"boundaries must increase strictly inside (0, {num_layers}) so that every "
            f"device gets at least one layer, got {list(boundaries)}"
        )
    return starts


class ModelParallel(Module):
    """A Sequential-like model whose consecutive layers live on different devices.

    Parameters
    ----------
    module : Sequential
        The model (anything with ``len`` and slicing, like :class:`~minitorch_accel.nn.Sequential`).
        Its layers are moved in place, so an optimizer built on ``module.parameters()``
        before the split still updates them.
    devices : sequence of str or Device
        One stage per device, in order.
    boundaries : sequence of int, optional
        Index of the first layer of each stage after the first (uneven splits); by
        default the layers are shared out evenly.

    Attributes
    ----------
    module : Sequential
        The model itself (its ``state_dict`` keys start with ``module.``, as
        DataParallel's do).
    stages : list of Sequential
        One slice of ``module`` per device (sharing its layers).
    devices : list of Device
    output_device : Device
        Where the output lands: the last stage's device. Targets go there for the loss.

    Notes
    -----
    The input is copied to the first device, each activation to the next device and each
    gradient back, by the differentiable :meth:`Tensor.to`: forward, backward and an
    optimizer step are those of one device, to rounding (exactly, on ``cpu:N``).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    >>> split = ModelParallel(net, ["cpu:1", "cpu:2"], boundaries=[2])
    >>> [len(s) for s in split.stages], net[2].weight.device
    ([2, 1], device('cpu:2'))
    >>> split(mta.randn(3, 4)).device
    device('cpu:2')
    """

    def __init__(
        self,
        module: Module,
        devices: Sequence[DeviceLike],
        boundaries: Sequence[int] | None = None,
    ) -> None:
        super().__init__()
        if not isinstance(module, Module) or not hasattr(module, "__len__"):
            raise TypeError(
                "ModelParallel splits a Sequential-like model (a Module with len() and "
                f"slicing), got {type(module).__name__}; wrap the layers in nn.Sequential"
            )
        found = check_devices(devices, "ModelParallel")
        typed: Any = module
        starts = stage_boundaries(len(typed), len(found), boundaries)
        self.module = module
        stages: list[Sequential] = [typed[a:b] for a, b in zip(starts, starts[1:], strict=False)]
        for stage, device in zip(stages, found, strict=True):
            stage.to(device)
        # Plain attributes (not registered): the layers are registered once, in module.
        object.__setattr__(self, "stages", stages)
        object.__setattr__(self, "devices", found)
        object.__setattr__(self, "boundaries", starts[1:-1])

    stages: list[Sequential]
    devices: list[Device]
    boundaries: list[int]

    @property
    def output_device(self) -> Device:
        """The last stage's device, where the output lands."""
        return self.devices[-1]

    def forward(self, input: Tensor) -> Tensor:
        """Run every stage on its device, copying the activation across each boundary."""
        x = input
        for stage, device in zip(self.stages, self.devices, strict=True):
            x = stage(x.to(device))  # differentiable: the gradient travels back
        return x

    def extra_repr(self) -> str:
        """The devices and where each stage starts."""
        return f"devices={[str(d) for d in self.devices]}, boundaries={self.boundaries}"


def split_model(
    model: Module, devices: Sequence[DeviceLike], boundaries: Sequence[int] | None = None
) -> ModelParallel:
    """Place consecutive layers of ``model`` on ``devices``; see :class:`ModelParallel`.

    Examples
    --------
    >>> from minitorch_accel import nn
    >>> net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2))
    >>> split_model(net, ["cpu:1", "cpu:2", "cpu:3"]).boundaries
    [2, 4]
    """
    return ModelParallel(model, devices, boundaries)
