"""Activation checkpointing: trade compute for memory, as ``torch.utils.checkpoint``.

A training step keeps every activation that backward needs until backward reaches it,
so memory grows with batch and depth. :func:`checkpoint` runs a piece of the network
*without* keeping its inner activations, only its inputs; when backward reaches it, it
runs that piece again (with the random state it had the first time, so dropout draws the
same mask), then backpropagates through the recomputed graph. The cost: one more
forward of each checkpointed piece, about a third more compute for the whole step.

:func:`checkpoint_sequential` does it for the segments of a :class:`~minitorch_accel.nn.Sequential`.

Differences from PyTorch: ``fn`` returns one Tensor; the recomputation runs the
reentrant way (a backward inside the backward), so ``create_graph=True`` (double
backward) through a checkpoint is refused; the ``use_reentrant`` argument does not exist.

Examples
--------
>>> import minitorch_accel as mta
>>> from minitorch_accel import nn
>>> from minitorch_accel.utils.checkpoint import checkpoint
>>> block = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 4))
>>> x = mta.ones(2, 4, requires_grad=True)
>>> checkpoint(block, x).sum().backward()
>>> x.grad.shape, block[0].weight.grad.shape
((2, 4), (8, 4))
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ..backends import Device
from ..backends.memory_tracker import tracker as _memory
from ..core.backward import run_backward
from ..core.function import Function
from ..core.grad_mode import enable_grad, is_grad_enabled, no_grad
from ..core.tensor import Tensor
from ..nn.container import Sequential

__all__ = ["checkpoint", "checkpoint_sequential"]


def _rng_states(devices: Iterable[Device]) -> dict[Device, Any]:
    """The state of the random generator of each device (those that expose one)."""
    states = {}
    for device in devices:
        bit_generator = getattr(device.backend.generator(device), "bit_generator", None)
        if bit_generator is not None:
            states[device] = bit_generator.state
    return states


def _set_rng_states(states: dict[Device, Any]) -> None:
    for device, state in states.items():
        device.backend.generator(device).bit_generator.state = state


class Checkpoint(Function):
    """The node of a checkpointed call: backward recomputes ``function(*args)``."""

    function: Callable[..., Tensor]
    args: tuple[Any, ...]
    rng: dict[Device, Any] | None

    def backward(self, grad_output: Tensor) -> tuple[Tensor | None, ...]:
        if is_grad_enabled():
            raise RuntimeError(
                "checkpoint does not support create_graph=True (double backward); run "
                "this part of the model without checkpoint"
            )
        tensors = iter(self.inputs)
        args = []
        leaves = []
        for a in self.args:  # the inputs again, now as leaves of a graph of their own
            if isinstance(a, Tensor):
                t = next(tensors)
                a = Tensor._make(t.array, t.device, t.requires_grad, None)
                leaves.append(a)
            args.append(a)
        now = _rng_states(self.rng) if self.rng is not None else None
        try:
            if self.rng is not None:
                _set_rng_states(self.rng)  # dropout draws the masks of the first run
            counted = _memory.category("activations")
            with enable_grad(), counted:
                out = self.function(*args)
        finally:
            if now is not None:
                _set_rng_states(now)
        if out.requires_grad:
            run_backward([out], [grad_output], False, False)
        return tuple(leaf.grad if leaf.requires_grad else None for leaf in leaves)


def checkpoint(
    function: Callable[..., Tensor], *args: Any, preserve_rng_state: bool = True
) -> Tensor:
    """``function(*args)``, keeping only the inputs for backward and recomputing the rest.

    Parameters
    ----------
    function : callable
        Returns one Tensor; typically a module or a few layers. It must compute the same
        thing when run again (no in-place changes to its inputs).
    *args
        Its arguments; at least one is a Tensor.
    preserve_rng_state : bool, default True
        Restore the random generators of the tensors' devices before recomputing, so
        dropout is the same in both runs (False saves reading them).

    Returns
    -------
    Tensor
        The output; gradients reach the tensors in ``args`` and the parameters used by
        ``function``.

    Raises
    ------
    TypeError
        If no argument is a Tensor, or ``function`` does not return a Tensor.
    """
    tensors = tuple(a for a in args if isinstance(a, Tensor))
    if not tensors:
        raise TypeError("checkpoint: at least one argument must be a Tensor")
    if not is_grad_enabled():  # nothing will be kept anyway
        return function(*args)
    devices = list(dict.fromkeys(t.device for t in tensors))
    rng = _rng_states(devices) if preserve_rng_state else None
    with no_grad():
        out = function(*args)
    if not isinstance(out, Tensor):
        raise TypeError(f"checkpoint: the function must return a Tensor, got {type(out).__name__}")
    node = Checkpoint.__new__(Checkpoint)
    node.device, node.xp = out.device, out.xp
    node.inputs = tensors
    node.needs_input_grad = tuple(t.requires_grad for t in tensors)
    node.input_nodes = tuple(t._node for t in tensors)
    node.saved_versions = tuple(t._version_counter.value for t in tensors)  # recomputed from
    node.function, node.args, node.rng = function, args, rng
    return Tensor._make(out.array, out.device, True, node)


def checkpoint_sequential(
    functions: Sequence[Callable[[Tensor], Tensor]],
    segments: int,
    input: Tensor,
    preserve_rng_state: bool = True,
) -> Tensor:
    """Run a sequence of layers in ``segments`` pieces, each but the last checkpointed.

    Only the input of each segment is kept for backward, so activation memory is about
    that of one segment plus one tensor per segment boundary; backward runs each
    checkpointed segment's forward again.

    Parameters
    ----------
    functions : Sequential or sequence of callables
        The layers, applied in order (a Sequential's segments run as it runs them: a
        ReLU and a max-pooling in one segment pooling first, see
        :meth:`~minitorch_accel.nn.Sequential.forward`).
    segments : int
        How many pieces, from 1 to the number of layers.
    input : Tensor
    preserve_rng_state : bool, default True
        See :func:`checkpoint`.

    Raises
    ------
    ValueError
        If ``segments`` is not between 1 and the number of layers.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> from minitorch_accel.utils.checkpoint import checkpoint_sequential
    >>> model = nn.Sequential(*[nn.Linear(8, 8) for _ in range(4)])
    >>> y = checkpoint_sequential(model, 2, mta.ones(3, 8))
    >>> y.shape
    (3, 8)
    """
    layers = list(functions)
    if isinstance(segments, bool) or not 1 <= int(segments) <= len(layers):
        raise ValueError(
            f"checkpoint_sequential: segments must be between 1 and the number of layers "
            f"({len(layers)}), got {segments!r}"
        )
    size = len(layers) // int(segments)

    def run(part: list[Callable[[Tensor], Tensor]]) -> Callable[[Tensor], Tensor]:
        if isinstance(functions, Sequential):  # its ReLU and max-pooling pairs, as it runs them
            segment = Sequential(*part)
            segment.pool_before_relu = functions.pool_before_relu
            return segment

        def forward(x: Tensor) -> Tensor:
            for layer in part:
                x = layer(x)
            return x

        return forward

    x = input
    end = 0
    for start in range(0, size * (int(segments) - 1), size):
        end = start + size
        x = checkpoint(run(layers[start:end]), x, preserve_rng_state=preserve_rng_state)
    return run(layers[end:])(x)
