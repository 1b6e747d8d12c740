"""How much memory a training step needs, predicted from the model's layers.

The arithmetic of the tutorial "How big a model fits", as a function:

* **parameters** ``P`` bytes, **gradients** ``P`` more (one per weight), **optimizer
  state** ``0`` (plain SGD), ``P`` (momentum) or ``2P`` (Adam's two moving averages):
  Adam training holds three copies of the weights beside them;
* **activations**: every layer's output is kept until backward reaches the layer (a
  convolution's or linear layer's, which only the next layer's node holds, until
  backward has passed that next layer), plus
  what the layer saves beside it (on a GPU, a convolution's im2col matrix, ``K =
  C*kh*kw`` times its input per output pixel; batch norm's normalized input; dropout's
  mask) -- all proportional to the batch, summed over the depth. The CPU's convolution
  keeps only its input, already counted as the previous layer's output, and makes each
  cache block's im2col rows again in backward;
* during **backward** at layer ``i``: the activations of layers ``0..i`` are still held,
  with the gradient of the layer's output and of its input, and the weight gradients
  of layers ``i..L``; the step's peak is the largest of these and the end of forward.

It predicts what :func:`minitorch_accel.memory.max_memory_allocated` measures (the
arrays of tensors and those saved for backward). ``workspace``, the largest temporary
an op allocates and frees within itself (the im2col-sized matrix of a convolution's
input gradient), is reported apart: on the CPU it comes from a buffer cache that the
counting does not see; a GPU's pool holds it too, so add it there.

The model is read as the sequence of its leaf modules in registration order (a ReLU
followed by a max-pooling in a Sequential as the pooling first, the order they run in;
a convolution that a Sequential fuses with the max pooling after it keeps no output,
and the pooling a byte per window, where the device's backend fuses them),
which is how :class:`~minitorch_accel.nn.Sequential` stacks such as
:class:`~minitorch_accel.nn.models.LeNet` and :class:`~minitorch_accel.nn.models.SmallVGG`
run. A layer type it does not know raises ``TypeError`` naming it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from math import prod
from typing import Any

import numpy as np

from .. import nn
from ..backends import Backend, Device, DeviceLike
from ..backends.fast_paths import is_fast_paths_enabled
from ..backends.image_geometry import conv_geometry
from ..backends.oom import format_bytes
from ..ops.conv_pool import Conv2dMaxPool2d, fuses

__all__ = ["LayerMemory", "MemoryEstimate", "memory_estimate"]

_ELEMENTWISE = (nn.ReLU, nn.Identity)


@dataclass
class LayerMemory:
    """One layer: its output shape and the bytes it keeps for backward."""

    name: str
    output_shape: tuple[int, ...]
    output: int  # bytes of the output (0 when it is a view of the input)
    saved: int  # bytes saved beside the output (im2col matrix, mask, normalized input)
    parameters: int
    workspace: int = 0  # a temporary of its backward, freed within it
    kept: bool = True  # False: fused with the next layer, its output never kept
    freed_by_next: bool = False  # its output is held by the next layer only


@dataclass
class MemoryEstimate:
    """The bytes of one training step; :attr:`total` is the predicted peak."""

    parameters: int
    gradients: int
    optimizer_state: int
    inputs: int
    activations: int
    backward_gradients: int  # gradients alive beside the activations at the peak
    workspace: int
    total: int
    peak_phase: str
    layers: list[LayerMemory] = field(default_factory=list)

    def as_dict(self) -> dict[str, int]:
        """The byte counts by name (per-layer details left out)."""
        names = (
            "parameters",
            "gradients",
            "optimizer_state",
            "inputs",
            "activations",
            "backward_gradients",
            "workspace",
            "total",
        )
        return {name: int(getattr(self, name)) for name in names}

    def __str__(self) -> str:
        rows = [f"{k:<20} {format_bytes(v):>12}" for k, v in self.as_dict().items()]
        return "\n".join([*rows, f"peak reached: {self.peak_phase}"])


def _leaf_layers(model: Any) -> tuple[list[tuple[str, Any]], set[int], set[int]]:
    """The leaf modules in the order they run: registration order, except the ReLU and
    max-pooling pairs a Sequential runs pooling first (:meth:`~minitorch_accel.nn.
    Sequential.runs_pool_first`); the positions of the convolutions a Sequential
    fuses with the max pooling that then follows them (:meth:`~minitorch_accel.nn.
    Sequential.fused_conv_pool`) where the pooling windows tile the image; and those of
    the ReLUs fused into that op with them.
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"memory_estimate: model must be an nn.Module, got {type(model).__name__}")
    modules = dict(model.named_modules())
    leaves = [(name, m) for name, m in modules.items() if not list(m.children())]
    fusable = []
    for i in range(len(leaves)):
        seq = modules.get(leaves[i][0].rpartition(".")[0])
        if not isinstance(seq, nn.Sequential):
            continue
        items = list(seq)
        k = next(j for j, m in enumerate(items) if m is leaves[i][1])
        span = seq.fused_conv_pool(k, items)
        pool = items[k + span - 1]
        if span and _tiles(pool) and fuses(tuple(items[k].weight.shape)):
            fusable.append(leaves[i][1])
            if span == 3:
                fusable.append(items[k + 1])  # the ReLU
        if (
            i + 1 < len(leaves)
            and seq.runs_pool_first(k, items)
            and leaves[i + 1][1] is items[k + 1]
        ):
            leaves[i], leaves[i + 1] = leaves[i + 1], leaves[i]
    fused = {i for i, (_, m) in enumerate(leaves) if any(m is f for f in fusable)}
    relus = {i for i in fused if isinstance(leaves[i][1], nn.ReLU)}
    return leaves or [("", model)], fused - relus, relus


def _tiles(pool: Any) -> bool:
    """Whether the windows of a pooling module tile its input (stride = kernel, no padding)."""
    return _pair(pool.kernel_size) == _pair(pool.stride) and _pair(pool.padding) == (0, 0)


def _fuses_conv_pool(device: Device) -> bool:
    """Whether a convolution and the max pooling after it run as one op on ``device``
    (:mod:`~minitorch_accel.ops.conv_pool`): its backend has the fast path and fast paths
    are on.
    """
    try:
        backend = device.backend
    except RuntimeError:  # e.g. CuPy missing: the backend cannot be built here
        return False
    return is_fast_paths_enabled() and Conv2dMaxPool2d.op_name in backend.fast_forwards


def _pool_out(size: int, k: int, s: int, p: int) -> int:
    return (size + 2 * p - k) // s + 1


def _pair(v: Any) -> tuple[int, int]:
    return (int(v), int(v)) if isinstance(v, int) else (int(v[0]), int(v[1]))


def _layer(
    name: str, m: Any, shape: tuple[int, ...], itemsize: int, keeps_cols: bool
) -> LayerMemory:
    """The memory of layer ``m`` on an input of ``shape`` (``keeps_cols``: a convolution
    keeps its im2col matrix for backward).
    """
    size = prod(shape) * itemsize
    out: tuple[int, ...]
    params = sum(p.numel() for p in m.parameters(recurse=False)) * itemsize
    if isinstance(m, nn.Conv2d):
        geo = conv_geometry(shape, tuple(m.weight.shape), m.stride, m.padding, m.dilation, m.groups)
        k = prod(m.weight.shape[1:]) * m.groups
        ones_row = m.bias is not None and not geo.channels_last
        cols = geo.rows * (k + ones_row) * itemsize
        y_shape = geo.y_shape
        saved = cols if keeps_cols else 0
        return LayerMemory(name, y_shape, prod(y_shape) * itemsize, saved, params, cols)
    if isinstance(m, nn.Linear):
        out = (*shape[:-1], m.out_features)
        return LayerMemory(name, out, prod(out) * itemsize, 0, params)
    if isinstance(m, _ELEMENTWISE):
        return LayerMemory(name, shape, size, 0, params)
    if isinstance(m, nn.Dropout):
        return LayerMemory(name, shape, size, prod(shape), params)  # a one-byte mask
    if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
        return LayerMemory(name, shape, size, size, params)  # the normalized input
    if isinstance(m, (nn.MaxPool2d, nn.AvgPool2d)):
        (kh, kw), (sh, sw) = _pair(m.kernel_size), _pair(m.stride)
        ph, pw = _pair(m.padding)
        n, c, h, w = shape
        out = (n, c, _pool_out(h, kh, sh, ph), _pool_out(w, kw, sw, pw))
        return LayerMemory(name, out, prod(out) * itemsize, 0, params)
    if isinstance(m, nn.AdaptiveAvgPool2d):
        oh, ow = _pair(m.output_size)
        out = (*shape[:2], oh, ow)
        return LayerMemory(name, out, prod(out) * itemsize, 0, params)
    if isinstance(m, nn.Flatten):
        start = m.start_dim % len(shape)
        end = m.end_dim % len(shape)
        out = (*shape[:start], prod(shape[start : end + 1]), *shape[end + 1 :])
        return LayerMemory(name, out, 0, 0, params)  # a view: no new memory
    raise TypeError(
        f"memory_estimate: no memory rule for layer {name or '(model)'} of type "
        f"{type(m).__name__}; known: Conv2d, Linear, ReLU, Identity, Dropout, BatchNorm, "
        "MaxPool2d, AvgPool2d, AdaptiveAvgPool2d, Flatten"
    )


def _keeps_conv_cols(device: Device) -> bool:
    """Whether a convolution on ``device`` keeps its im2col matrix for backward. Where
    the device's library is not installed (planning a GPU run on a laptop), the
    default of a backend: kept.
    """
    try:
        backend = device.backend
    except RuntimeError:  # e.g. CuPy missing: the backend cannot be built here
        return Backend.keeps_conv_cols
    return backend.keeps_conv_cols


def _state_copies(optimizer: Any) -> int:
    """How many parameter-sized buffers the optimizer keeps per parameter."""
    if optimizer is None:
        return 0
    name = type(optimizer).__name__
    defaults = getattr(optimizer, "defaults", {})
    if name in ("Adam", "AdamW"):
        return 3 if defaults.get("amsgrad") else 2
    if name == "SGD":
        return 1 if defaults.get("momentum", 0) else 0
    return len(getattr(optimizer, "per_element_state", ()))


def memory_estimate(
    model: Any,
    input_shape: Sequence[int],
    optimizer: Any = None,
    dtype: Any = np.float32,
    num_classes: int | None = None,
    device: DeviceLike = "cpu",
) -> MemoryEstimate:
    """Predict the peak memory of one training step (forward, cross-entropy, backward,
    optimizer step) of ``model`` on a batch of ``input_shape``, in bytes.

    Parameters
    ----------
    model : nn.Module
        A stack of layers (see the module docstring).
    input_shape : sequence of int
        The batch, e.g. ``(64, 1, 28, 28)``; its first entry is the batch size.
    optimizer : Optimizer, optional
        Its per-parameter state is counted (after its first step): SGD with momentum
        one copy of the weights, Adam two. None: no state.
    dtype : dtype, default float32
        Of the parameters and activations.
    num_classes : int, optional
        Outputs per sample, for the loss; default: the last layer's output size.
    device : str or Device, default "cpu"
        Where the step runs. On a GPU a convolution keeps its im2col matrix for the
        weight gradient; the CPU's keeps only its input and makes each cache block's
        rows again there (reading a matrix 9 times the size of the input back from
        main memory costs more than copying it again).

    Returns
    -------
    MemoryEstimate
        ``parameters``, ``gradients``, ``optimizer_state``, ``inputs`` (the batch and
        its int64 labels), ``activations`` (saved for backward, per layer in
        ``layers``), ``backward_gradients`` (alive at the peak), ``workspace`` (the
        largest temporary, not in the total) and ``total``.

    Examples
    --------
    >>> from minitorch_accel.nn.models import LeNet
    >>> from minitorch_accel.optim import Adam
    >>> model = LeNet()
    >>> est = memory_estimate(model, (64, 1, 28, 28), Adam(model.parameters()))
    >>> est.optimizer_state == 2 * est.parameters
    True
    """
    itemsize = np.dtype(dtype).itemsize
    keeps_cols = _keeps_conv_cols(Device(device))
    shape = tuple(int(s) for s in input_shape)
    batch = shape[0]
    layers: list[LayerMemory] = []
    leaves, fused, fused_relus = _leaf_layers(model)
    if not _fuses_conv_pool(Device(device)):
        fused, fused_relus = set(), set()
    for i, (name, m) in enumerate(leaves):
        if i in fused_relus:  # taken on the fused op's output in place: nothing new
            continue
        layers.append(_layer(name, m, shape, itemsize, keeps_cols))
        shape = layers[-1].output_shape
        # a convolution's or linear layer's own node keeps no output: the next
        # layer's does, and lets it go when backward has passed that layer
        layers[-1].freed_by_next = isinstance(m, (nn.Conv2d, nn.Linear))
        if i in fused:  # pooled block by block: the output is never kept
            layers[-1].kept = False
        if i - 1 in fused:  # the pooling keeps a byte per window: which tap was its maximum
            layers[-1].saved += prod(shape)
            # and not its output: the next layer holds it, until its own backward
            layers[-1].freed_by_next = True
    classes = num_classes if num_classes is not None else int(prod(shape[1:]))
    loss_saved = batch * classes * itemsize  # cross-entropy keeps the log-probabilities
    layers.append(LayerMemory("loss", (), itemsize, loss_saved, 0))
    params = sum(p.numel() for p in model.parameters()) * itemsize
    state = _state_copies(optimizer) * params
    inputs = prod(input_shape) * itemsize + batch * 8
    kept = [lay.output * lay.kept + lay.saved for lay in layers]
    fixed = params + state + inputs
    best, phase, grads_at_peak = fixed + sum(kept), "end of forward", 0
    weight_grads = 0
    # Backward, last layer first: layers 0..i still held, the output's and the input's
    # gradients, the weight gradients of layers i..L.
    in_sizes = [prod(input_shape) * itemsize] + [lay.output for lay in layers[:-1]]
    # a fused first convolution (its input needs no gradient) computes its weight's and
    # bias's gradients from the pooled gradient: the routed one is never made
    direct = 0 in fused
    for i in range(len(layers) - 1, -1, -1):
        lay = layers[i]
        weight_grads += lay.parameters
        grad_out = max(lay.output, itemsize) if not (direct and i == 0) else layers[1].output
        grad_in = in_sizes[i] if i > int(direct) and lay.output else 0
        alive = grad_out + grad_in + weight_grads
        held = fixed + sum(kept[: i + 1]) - lay.output * lay.freed_by_next + alive
        if held > best:
            best, phase, grads_at_peak = held, f"backward of {lay.name or 'layer'}", alive
    return MemoryEstimate(
        parameters=params,
        gradients=params,
        optimizer_state=state,
        inputs=inputs,
        activations=sum(kept),
        backward_gradients=grads_at_peak,
        workspace=max(lay.workspace for lay in layers),
        total=best,
        peak_phase=phase,
        layers=layers,
    )
