"""Tensor parallelism (Megatron-LM style): one layer's weight split across devices.

``y = x @ W.T + b`` with ``W`` of shape ``(out, in)`` can be split two ways:

- **by output rows** (:class:`ColumnParallelLinear`, "column" in Megatron's ``X A``
  notation): device ``i`` holds rows ``W_i`` and computes ``y_i = x @ W_i.T + b_i``,
  a slice of the output's features. Every device needs all of ``x`` (a *broadcast* in
  forward, whose backward sums the devices' input gradients: an *all-reduce*); the
  slices are joined by an *all-gather* (backward: each device keeps its slice) unless
  the next layer takes them as they are.
- **by input columns** (:class:`RowParallelLinear`): device ``i`` holds columns
  ``W_i`` and the matching slice ``x_i`` of the input features; ``x_i @ W_i.T`` is a
  *partial sum* of ``y``, and the partial sums are added by an *all-reduce* (backward:
  each device gets the whole output gradient). The bias is added once, after the sum.

A column layer followed by an elementwise activation and a row layer (the transformer's
MLP block, :class:`TensorParallelMLP`) needs no communication between the two layers:
the hidden activation never leaves its device. Only the input (forward), the partial
outputs (forward), and their gradients (backward) travel.

Here one process drives every device and the collectives are differentiable
:meth:`Tensor.to` copies, ``cat`` and sums, so their results land on ``output_device``
(with one process per device, as in Megatron, the all-reduce leaves the sum on every
device). The shards run one after another in the calling thread; on GPUs their kernels
are queued asynchronously and overlap.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..backends import Device, DeviceLike
from ..core.convert import DTypeLike
from ..core.tensor import Tensor
from ..nn import Linear, Module, ModuleList, Parameter, ReLU
from ..nn import functional as F
from ..ops.shape import cat
from .model_parallel import check_devices
from .replicate import shard_sizes


def _cuts(total: int, parts: int, what: str) -> list[tuple[int, int]]:
    """``[(start, stop), ...]``: ``total`` features shared out over ``parts`` devices."""
    if total < parts:
        raise ValueError(f"{total} {what} cannot be split over {parts} devices (one each at least)")
    starts = [0]
    for size in shard_sizes(total, parts):
        starts.append(starts[-1] + size)
    return list(zip(starts, starts[1:], strict=False))


class LinearShard(Module):
    """One device's part of a split Linear layer: ``F.linear(x, weight, bias)``.

    Built from slices of a whole layer's weight (no random draw of its own, so building
    a split layer consumes the random stream exactly as one ``nn.Linear`` does).
    """

    def __init__(self, weight: Tensor, bias: Tensor | None) -> None:
        super().__init__()
        self.weight = Parameter(weight)
        self.bias = None if bias is None else Parameter(bias)

    def forward(self, input: Tensor) -> Tensor:
        """``input @ weight.T + bias``."""
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        """The shard's shape and device."""
        return f"weight={tuple(self.weight.shape)}, device={self.weight.device}"


def _shard(linear: Linear, rows: slice, cols: slice, bias: bool, device: Device) -> LinearShard:
    """A shard on ``device`` holding ``linear.weight[rows, cols]`` (and ``bias[rows]``)."""
    weight = Tensor._from_data(linear.weight.array[rows, cols].copy(), device=device)
    if bias and linear.bias is not None:
        return LinearShard(weight, Tensor._from_data(linear.bias.array[rows].copy(), device=device))
    return LinearShard(weight, None)


class ColumnParallelLinear(Module):
    """A Linear layer whose output features are split across ``devices``.

    Parameters
    ----------
    in_features, out_features : int
    devices : sequence of str or Device
        One shard per device; ``out_features`` is shared out as evenly as possible.
    bias : bool
    gather_output : bool
        Join the shards' outputs into one tensor on ``output_device`` (all-gather); if
        False, return the list of per-device slices (for a :class:`RowParallelLinear`).
    output_device : str or Device, optional
        Where gathered outputs land; default ``devices[0]``.
    dtype : dtype, optional

    Notes
    -----
    The full weight is drawn as :class:`~minitorch_accel.nn.Linear` draws it, then split,
    so with the same seed the layer computes what ``nn.Linear(in, out)`` computes.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> layer = ColumnParallelLinear(4, 6, ["cpu:1", "cpu:2"])
    >>> [tuple(s.weight.shape) for s in layer.shards]
    [(3, 4), (3, 4)]
    >>> layer(mta.randn(5, 4)).shape
    (5, 6)
    """

    devices: list[Device]
    output_device: Device
    gather_output: bool

    def __init__(
        self,
        in_features: int,
        out_features: int,
        devices: Sequence[DeviceLike],
        bias: bool = True,
        gather_output: bool = True,
        output_device: DeviceLike | None = None,
        dtype: DTypeLike = None,
    ) -> None:
        super().__init__()
        self._split(Linear(in_features, out_features, bias=bias, dtype=dtype), devices)
        self.gather_output = gather_output
        self.output_device = self.devices[0] if output_device is None else Device(output_device)

    @classmethod
    def from_linear(
        cls, linear: Linear, devices: Sequence[DeviceLike], gather_output: bool = True
    ) -> ColumnParallelLinear:
        """Split an existing Linear layer's weight by output rows (copies)."""
        layer = cls.__new__(cls)
        Module.__init__(layer)
        layer._split(linear, devices)
        layer.gather_output, layer.output_device = gather_output, layer.devices[0]
        return layer

    def _split(self, linear: Linear, devices: Sequence[DeviceLike]) -> None:
        found = check_devices(devices, "ColumnParallelLinear")
        self.in_features, self.out_features = linear.in_features, linear.out_features
        self.devices = found
        cuts = _cuts(linear.out_features, len(found), "output features")
        has_bias = linear.bias is not None
        self.shards = ModuleList(
            [
                _shard(linear, slice(a, b), slice(None), has_bias, d)
                for (a, b), d in zip(cuts, found, strict=True)
            ]
        )

    def forward(self, input: Tensor) -> Tensor | list[Tensor]:
        """Broadcast ``input`` to every device, each computes its output slice, then the
        slices are gathered (or returned as a list).
        """
        parts = [shard(input.to(d)) for shard, d in zip(self.shards, self.devices, strict=True)]
        if not self.gather_output:
            return parts
        return cat([p.to(self.output_device) for p in parts], dim=-1)


class RowParallelLinear(Module):
    """A Linear layer whose input features are split across ``devices``.

    Parameters
    ----------
    in_features, out_features : int
    devices : sequence of str or Device
        One shard per device; ``in_features`` is shared out as evenly as possible.
    bias : bool
        Added once, on ``output_device``, after the partial sums are added.
    input_is_parallel : bool
        The input is already a list of per-device slices (from a
        :class:`ColumnParallelLinear` with ``gather_output=False``); if False, a whole
        tensor is split along its last dim.
    output_device : str or Device, optional
        Where the partial sums are added; default ``devices[0]``.
    dtype : dtype, optional

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> layer = RowParallelLinear(6, 2, ["cpu:1", "cpu:2", "cpu:3"])
    >>> [tuple(s.weight.shape) for s in layer.shards], layer(mta.randn(5, 6)).shape
    ([(2, 2), (2, 2), (2, 2)], (5, 2))
    """

    devices: list[Device]
    output_device: Device
    input_is_parallel: bool
    cuts: list[tuple[int, int]]

    def __init__(
        self,
        in_features: int,
        out_features: int,
        devices: Sequence[DeviceLike],
        bias: bool = True,
        input_is_parallel: bool = False,
        output_device: DeviceLike | None = None,
        dtype: DTypeLike = None,
    ) -> None:
        super().__init__()
        self._split(
            Linear(in_features, out_features, bias=bias, dtype=dtype), devices, output_device
        )
        self.input_is_parallel = input_is_parallel

    @classmethod
    def from_linear(
        cls, linear: Linear, devices: Sequence[DeviceLike], input_is_parallel: bool = False
    ) -> RowParallelLinear:
        """Split an existing Linear layer's weight by input columns (copies)."""
        layer = cls.__new__(cls)
        Module.__init__(layer)
        layer._split(linear, devices, None)
        layer.input_is_parallel = input_is_parallel
        return layer

    def _split(
        self, linear: Linear, devices: Sequence[DeviceLike], output_device: DeviceLike | None
    ) -> None:
        found = check_devices(devices, "RowParallelLinear")
        self.in_features, self.out_features = linear.in_features, linear.out_features
        self.devices = found
        self.output_device = found[0] if output_device is None else Device(output_device)
        self.cuts = _cuts(linear.in_features, len(found), "input features")
        self.shards = ModuleList(
            [
                _shard(linear, slice(None), slice(a, b), False, d)
                for (a, b), d in zip(self.cuts, found, strict=True)
            ]
        )
        self.bias = (
            None
            if linear.bias is None
            else Parameter(Tensor._from_data(linear.bias.array.copy(), device=self.output_device))
        )

    def forward(self, input: Tensor | Sequence[Tensor]) -> Tensor:
        """Each device multiplies its input slice by its weight columns; the partial sums
        are added on ``output_device`` (all-reduce), then the bias.
        """
        if self.input_is_parallel:
            if isinstance(input, Tensor) or len(input) != len(self.devices):
                raise ValueError(
                    f"RowParallelLinear(input_is_parallel=True) takes a list of "
                    f"{len(self.devices)} per-device tensors (a ColumnParallelLinear's "
                    "output with gather_output=False)"
                )
            parts = list(input)
        else:
            if not isinstance(input, Tensor):
                raise TypeError("RowParallelLinear takes a Tensor (or set input_is_parallel=True)")
            parts = [
                input[..., a:b].to(d) for (a, b), d in zip(self.cuts, self.devices, strict=True)
            ]
        total: Tensor | None = None
        for shard, part in zip(self.shards, parts, strict=True):
            partial = shard(part).to(self.output_device)
            total = partial if total is None else total + partial
        assert total is not None
        return total if self.bias is None else total + self.bias


class TensorParallelMLP(Module):
    """``Linear -> activation -> Linear`` split over ``devices`` as Megatron splits a
    transformer's MLP: a :class:`ColumnParallelLinear` without gather, the activation on
    each device's slice, a :class:`RowParallelLinear` on the slices.

    Parameters
    ----------
    in_features, hidden_features, out_features : int
    devices : sequence of str or Device
    activation : callable, optional
        Elementwise, applied to each slice (default :class:`~minitorch_accel.nn.ReLU`).
    dtype : dtype, optional

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mlp = TensorParallelMLP(4, 8, 2, ["cpu:1", "cpu:2"])
    >>> mlp(mta.randn(3, 4)).shape
    (3, 2)
    """

    def __init__(
        self,
        in_features: int,
        hidden_features: int,
        out_features: int,
        devices: Sequence[DeviceLike],
        activation: Callable[[Tensor], Tensor] | None = None,
        dtype: DTypeLike = None,
    ) -> None:
        super().__init__()
        self.fc1 = ColumnParallelLinear(
            in_features, hidden_features, devices, gather_output=False, dtype=dtype
        )
        self.act: Any = ReLU() if activation is None else activation
        self.fc2 = RowParallelLinear(
            hidden_features, out_features, devices, input_is_parallel=True, dtype=dtype
        )

    @classmethod
    def from_layers(
        cls,
        fc1: Linear,
        fc2: Linear,
        devices: Sequence[DeviceLike],
        activation: Callable[[Tensor], Tensor] | None = None,
    ) -> TensorParallelMLP:
        """Split two existing Linear layers (copies of their weights)."""
        mlp = cls.__new__(cls)
        Module.__init__(mlp)
        mlp.fc1 = ColumnParallelLinear.from_linear(fc1, devices, gather_output=False)
        mlp.act = ReLU() if activation is None else activation
        mlp.fc2 = RowParallelLinear.from_linear(fc2, devices, input_is_parallel=True)
        return mlp

    def forward(self, input: Tensor) -> Tensor:
        """``fc2(act(fc1(input)))``, the hidden slices never leaving their devices."""
        hidden = self.fc1(input)
        assert isinstance(hidden, list)
        out: Tensor = self.fc2([self.act(h) for h in hidden])
        return out
