"""Reverse-mode automatic differentiation: :class:`Function`, grad mode, the backward walk.

A :class:`Function` computes its ``forward`` on raw backend arrays (through ``self.xp``,
so one implementation serves NumPy and CuPy) and its ``backward`` with Tensor
operations, so that the backward pass can itself be recorded (``create_graph=True``)
and differentiated again.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from .backends.memory_tracker import tracker as _memory

if TYPE_CHECKING:
    from .backends import Device
    from .tensor import Tensor

F = TypeVar("F", bound=Callable[..., Any])
R = TypeVar("R")


class _GradMode(threading.local):
    enabled: bool = True


_grad_mode = _GradMode()


class _LeafJournal(threading.local):
    """What the outermost backward walk of this thread changes in leaves' ``.grad``, so
    that an error midway (an out-of-memory) puts every ``.grad`` back as it was."""

    before: dict[int, tuple[Tensor, Tensor | None]] | None = None  # leaf -> .grad before
    pending: dict[int, tuple[Tensor, Tensor]] | None = None  # added to an old .grad at the end


_journal = _LeafJournal()

# Set by tensor.py (Tensor._make) once the Tensor class exists; this avoids an import
# cycle on the hot path of every op.
_make_tensor: Callable[[Any, Device, bool, Function | None], Tensor]


def _bind_tensor_factory(make: Callable[[Any, Device, bool, Function | None], Tensor]) -> None:
    global _make_tensor
    _make_tensor = make


def on_input_device(func: F) -> F:
    """Run ``func`` on the device of its first argument, a Tensor (see
    :meth:`~minitorch_accel.backends.Device.guard`).

    For ops that work on raw arrays outside a :class:`Function` (label checks, index
    arrays, comparisons): on a machine with several GPUs their kernels and allocations
    must go to the GPU of the tensors, not to CuPy's current device.
    """

    @functools.wraps(func)
    def run(first: Tensor, *args: Any, **kwargs: Any) -> Any:
        with first.device.guard():
            return func(first, *args, **kwargs)

    return run  # type: ignore[return-value]


def is_grad_enabled() -> bool:
    """Whether operations are recorded for backward in this thread."""
    return _grad_mode.enabled


class set_grad_enabled:
    """Turn recording on or off in this thread, as a context manager or a decorator.

    Parameters
    ----------
    mode : bool
        True records operations for backward, False does not.
    """

    def __init__(self, mode: bool) -> None:
        self.mode = bool(mode)
        self._previous: list[bool] = []

    def __enter__(self) -> None:
        self._previous.append(_grad_mode.enabled)
        _grad_mode.enabled = self.mode

    def __exit__(self, *exc: object) -> None:
        _grad_mode.enabled = self._previous.pop()

    def __call__(self, func: F) -> F:
        mode = self.mode

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with set_grad_enabled(mode):
                return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


class no_grad(set_grad_enabled):
    """Do not record operations: for inference and in-place parameter updates.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> w = mta.ones(3, requires_grad=True)
    >>> with mta.no_grad():
    ...     y = w * 2
    >>> y.requires_grad
    False
    """

    def __init__(self) -> None:
        super().__init__(False)


class enable_grad(set_grad_enabled):
    """Record operations again inside a :class:`no_grad` block."""

    def __init__(self) -> None:
        super().__init__(True)


class Function:
    """One differentiable operation: a node of the graph.

    Subclasses implement ``forward(self, *arrays, **params) -> array`` on raw arrays
    (``self.xp`` is the array module, ``self.device`` the device) and
    ``backward(self, grad_output) -> Tensor | tuple[Tensor | None, ...]`` with Tensor
    operations, one gradient per input (None where there is none). What backward needs
    is saved as attributes of ``self``; ``self.inputs`` are the input Tensors and
    :meth:`output` the output Tensor (for classes that set ``saves_output = True``).

    A class whose ``backward`` returns gradients in newly allocated arrays that nothing
    else refers to sets ``fresh_grads = True``: a leaf's ``.grad`` then takes such an
    array as it is instead of a copy (as PyTorch's AccumulateGrad steals a gradient
    nobody shares), one copy per parameter per step saved.
    """

    saves_output = False
    fresh_grads = False

    inputs: tuple[Tensor, ...]  # () once the graph is freed; None marks a missing input
    needs_input_grad: tuple[bool, ...]
    device: Device
    xp: Any
    _out_data: Any
    _out_ref: weakref.ReferenceType[Tensor]

    def forward(self, *arrays: Any, **params: Any) -> Any:
        """Compute the output array from the input arrays."""
        raise NotImplementedError

    def backward(self, grad_output: Tensor) -> Tensor | None | tuple[Tensor | None, ...]:
        """Gradients with respect to each input, given that of the output."""
        raise NotImplementedError(f"{type(self).__name__} has no backward")

    @classmethod
    def apply(cls, *inputs: Tensor | None, **params: Any) -> Tensor:
        """Run the op on Tensors and record it in the graph when gradients are needed.

        The first input must be a Tensor; later ones may be None (an absent bias).
        """
        first = inputs[0]
        if first is None:
            raise ValueError(f"{cls.__name__}: the first input must be a Tensor")
        device = first.device
        requires_grad = first.requires_grad
        if len(inputs) == 1:
            arrays: Any = (first.data,)
        else:
            arrays = [first.data]
            for t in inputs[1:]:
                if t is None:
                    arrays.append(None)
                    continue
                if t.device is not device:
                    _raise_mixed_devices(cls, inputs)
                if t.requires_grad:
                    requires_grad = True
                arrays.append(t.data)
        fn = cls.__new__(cls)
        fn.device = device
        fn.xp = device.xp
        if not device.backend.needs_device_context:
            data = fn.forward(*arrays, **params)
        else:  # run on the GPU the tensors live on, not on CuPy's current one
            with device.backend.device_context(device):
                data = fn.forward(*arrays, **params)
        if requires_grad and _grad_mode.enabled:
            fn.inputs = inputs  # type: ignore[assignment]
            fn.needs_input_grad = tuple([t is not None and t.requires_grad for t in inputs])
            out = _make_tensor(data, device, True, fn)
            if cls.saves_output:
                fn._out_data = data
                fn._out_ref = weakref.ref(out)
            return out
        return _make_tensor(data, device, False, None)

    def output(self) -> Tensor:
        """The output Tensor (or a constant holding its values once it is gone)."""
        out: Tensor | None = self._out_ref()
        if out is not None:
            return out
        return _make_tensor(self._out_data, self.device, False, None)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}Backward>"


def _raise_mixed_devices(cls: type, inputs: Sequence[Tensor | None]) -> None:
    names = [str(t.device) for t in inputs if t is not None]
    raise RuntimeError(
        f"{cls.__name__}: expected all tensors on the same device, got "
        + " and ".join(sorted(set(names), key=names.index))
        + "; move them with .to(device) first"
    )


def _topological_order(roots: Sequence[Function]) -> list[Function]:
    """Nodes reachable from ``roots``, each after every node that consumes its output."""
    order: list[Function] = []
    seen: set[int] = set()
    stack: list[tuple[Function, int]] = []
    for root in roots:
        if id(root) not in seen:
            seen.add(id(root))
            stack.append((root, 0))
        while stack:
            fn, i = stack.pop()
            inputs = fn.inputs
            if not inputs:
                raise RuntimeError(
                    "trying to backward through the graph a second time (or to use values "
                    "the first backward freed); pass retain_graph=True to the first "
                    "backward() if you need to"
                )
            if i < len(inputs):
                stack.append((fn, i + 1))
                t = inputs[i]
                if t is not None and t._node is not None and id(t._node) not in seen:
                    seen.add(id(t._node))
                    stack.append((t._node, 0))
            else:
                order.append(fn)
    order.reverse()
    return order


def run_backward(
    roots: Sequence[Tensor],
    grad_roots: Sequence[Tensor],
    retain_graph: bool,
    create_graph: bool,
    capture: Sequence[Tensor] | None = None,
) -> list[Tensor | None] | None:
    """Propagate ``grad_roots`` from ``roots`` back through the graph.

    With ``capture=None`` gradients accumulate into the ``.grad`` of leaf tensors;
    otherwise the gradients of the ``capture`` tensors are returned and no ``.grad``
    changes.
    """
    from .ops.reduce import sum_to_shape

    grads: dict[int, Tensor] = {}
    wanted = {id(t): t for t in capture} if capture is not None else None
    captured: dict[int, Tensor] = {}

    stolen: set[int] = set()  # arrays now held by a leaf's .grad
    outermost = wanted is None and _journal.before is None
    if outermost:
        _journal.before, _journal.pending = {}, {}
    before, pending = _journal.before, _journal.pending

    def send(t: Tensor, g: Tensor, fresh: bool = False) -> None:
        """Route the gradient ``g`` of ``t``: into a leaf, or on to the node behind ``t``.
        ``fresh``: ``g``'s array is new and unshared, so a leaf may keep it uncopied."""
        if wanted is not None and id(t) in wanted:
            _add(captured, id(t), g)
        if t._node is None:
            if wanted is None:
                assert before is not None and pending is not None
                old = before.setdefault(id(t), (t, t.grad))[1]
                if old is not None and t.grad is old and old._node is None and g._node is None:
                    # Adding in place into a gradient older than this walk waits for its
                    # end: an error midway then leaves that gradient unchanged.
                    found = pending.get(id(t))
                    pending[id(t)] = (t, g if found is None else found[1] + g)
                    return
                fresh = fresh and id(g.data) not in stolen
                if _on_device(g.device, _accumulate_into_leaf, t, g, fresh):
                    stolen.add(id(g.data))
        else:
            _add(grads, id(t._node), g)

    def run_node(fn: Function, grad_out: Tensor) -> None:
        """``fn``'s backward, its gradients sent on to its inputs."""
        results = fn.backward(grad_out)
        if not isinstance(results, tuple):
            results = (results,)
        fresh = fn.fresh_grads and not create_graph
        for t, g in zip(fn.inputs, results, strict=False):
            if g is None or t is None or not t.requires_grad:
                continue
            if g.data.shape != t.data.shape:
                g = sum_to_shape(g, t.shape)
            if g.data.dtype is not t.data.dtype and g.data.dtype != t.data.dtype:
                g = g.to(dtype=t.dtype)
            send(t, g, fresh)

    counted = _memory.category("gradients") if _memory.enabled else contextlib.nullcontext()
    try:
        with counted:
            for root, grad in zip(roots, grad_roots, strict=False):
                send(root, grad)
            nodes = [root._node for root in roots if root._node is not None]
            with set_grad_enabled(create_graph):
                for fn in _topological_order(nodes):
                    grad_out = grads.pop(id(fn), None)
                    if grad_out is None:
                        continue
                    _on_device(fn.device, run_node, fn, grad_out)  # on fn's GPU
                    if not retain_graph:
                        fn.__dict__.clear()  # frees the saved arrays now, not at collection
                        fn.inputs = ()
            if outermost and pending:
                for leaf, g in pending.values():
                    _on_device(g.device, _accumulate_into_leaf, leaf, g)
    except BaseException:
        if outermost and before is not None:
            for leaf, old in before.values():
                leaf.grad = old
        raise
    finally:
        if outermost:
            _journal.before = _journal.pending = None
    if capture is None:
        return None
    return [captured.get(id(t)) for t in capture]


def _on_device(device: Device, work: Callable[..., R], *args: Any) -> R:
    """``work(*args)`` inside ``device``'s context where the backend needs one (several
    GPUs; see :meth:`~minitorch_accel.backends.Device.guard`), else called directly:
    the backward pass calls this per node, so the common case pays no ``with``."""
    backend = device.backend
    if not backend.needs_device_context:
        return work(*args)
    with backend.device_context(device):
        return work(*args)


def _add(totals: dict[int, Tensor], key: int, grad: Tensor) -> None:
    """``totals[key] += grad`` (out of place: the gradient may be someone else's too)."""
    found = totals.get(key)
    totals[key] = grad if found is None else found + grad


def _accumulate_into_leaf(leaf: Tensor, grad: Tensor, fresh: bool = False) -> bool:
    """``leaf.grad += grad``, storing an owned array the first time: ``grad``'s own when
    it is ``fresh`` (then True is returned: the array now belongs to the leaf), else a
    copy."""
    if grad._node is not None:  # create_graph: keep the gradient's own graph
        leaf.grad = grad if leaf.grad is None else leaf.grad + grad
    elif leaf.grad is None:
        # Otherwise a copy: the incoming array may be a read-only broadcast view, or
        # shared with another leaf (the two inputs of an add) or with the caller's
        # ``gradient``.
        data = grad.data if fresh else grad.device.backend.clone(grad.data)
        leaf.grad = _make_tensor(data, grad.device, False, None)
        return fresh
    elif leaf.grad._node is None:
        try:
            leaf.grad.data += grad.data  # accumulate in place, as PyTorch does
        except ValueError:  # a read-only .grad someone assigned: accumulate out of place
            leaf.grad = leaf.grad + grad
    else:
        leaf.grad = leaf.grad + grad
    return False


def grad(
    outputs: Tensor | Sequence[Tensor],
    inputs: Tensor | Sequence[Tensor],
    grad_outputs: Tensor | Sequence[Tensor | None] | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    allow_unused: bool = False,
) -> tuple[Tensor, ...]:
    """Gradients of ``outputs`` with respect to ``inputs``, without touching ``.grad``.

    Parameters
    ----------
    outputs, inputs : Tensor or sequence of Tensor
    grad_outputs : Tensor or sequence, optional
        The vector of the vector-Jacobian product; may be omitted for scalar outputs.
    retain_graph : bool, optional
        Keep the graph for another backward; defaults to ``create_graph``.
    create_graph : bool
        Record the backward pass so the result can be differentiated again (Hessian-
        vector products, gradient penalties).
    allow_unused : bool
        Return zeros instead of raising for inputs the outputs do not depend on.

    Returns
    -------
    tuple of Tensor
        One gradient per input.
    """
    from .factories import zeros_like
    from .tensor import Tensor

    outs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    ins = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    if grad_outputs is None or isinstance(grad_outputs, Tensor):
        gos: list[Tensor | None] = [grad_outputs] * len(outs)
    else:
        gos = list(grad_outputs)
    for t in ins:
        if not t.requires_grad:
            raise RuntimeError("grad(): an input does not require grad")
    seeds = [_seed_gradient(o, g) for o, g in zip(outs, gos, strict=False)]
    keep = create_graph if retain_graph is None else retain_graph
    found = run_backward(outs, seeds, keep, create_graph, capture=ins)
    assert found is not None
    result = []
    for t, g in zip(ins, found, strict=False):
        if g is None:
            if not allow_unused:
                raise RuntimeError(
                    "grad(): one of the inputs is not used to compute the outputs; "
                    "pass allow_unused=True to get zeros for it"
                )
            g = zeros_like(t)
        result.append(g)
    return tuple(result)


def _seed_gradient(output: Tensor, grad_output: Tensor | None) -> Tensor:
    from .factories import ones_like

    if not output.requires_grad:
        raise RuntimeError(
            "element 0 of tensors does not require grad and has no grad_fn: nothing to "
            "differentiate (was it computed under no_grad, or from tensors without "
            "requires_grad=True?)"
        )
    if grad_output is None:
        if output.size != 1:
            raise RuntimeError(
                f"grad can be implicitly created only for scalar outputs; this output has "
                f"shape {output.shape}: pass gradient= (a tensor of that shape)"
            )
        return ones_like(output)
    if grad_output.shape != output.shape:
        raise ValueError(
            f"gradient has shape {grad_output.shape} but the output has shape {output.shape}"
        )
    return grad_output
