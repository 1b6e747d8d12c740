"""The backward walk: gradients sent from the output back through the graph.

:func:`run_backward` visits each :class:`~minitorch_accel.core.function.Function` once,
after every node that consumes its output, and sends one gradient along each edge: to
the node that made that input or, for a leaf, into ``.grad``. :func:`grad` returns the
gradients instead.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from ..backends.memory_tracker import tracker as _memory
from .factories import ones_like, zeros_like
from .function import Function
from .grad_mode import _anomaly_mode, set_grad_enabled
from .tensor import Tensor

if TYPE_CHECKING:
    from ..backends import Device

R = TypeVar("R")


class _LeafJournal(threading.local):
    """What the outermost backward walk of this thread changes in leaves' ``.grad``, so
    that an error midway (an out-of-memory) puts every ``.grad`` back as it was.
    """

    before: dict[int, tuple[Tensor, Tensor | None]] | None = None  # leaf -> .grad before
    pending: dict[int, tuple[Tensor, Tensor]] | None = None  # added to an old .grad at the end


_journal = _LeafJournal()


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
            if not fn.inputs:
                raise RuntimeError(
                    "trying to backward through the graph a second time (or to use values "
                    "the first backward freed); pass retain_graph=True to the first "
                    "backward() if you need to"
                )
            if i < len(fn.input_nodes):
                stack.append((fn, i + 1))
                node = fn.input_nodes[i]
                if node is not None and id(node) not in seen:
                    seen.add(id(node))
                    stack.append((node, 0))
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

    Each node runs once, after every node that consumes its output: its hooks see the
    summed gradient of its output, the tensors it saved are checked against in-place
    changes, then its backward sends one gradient along each edge, to the node that
    made that input or, for a leaf, into ``.grad`` (see :class:`_GradientSink`).

    With ``capture=None`` gradients accumulate into the ``.grad`` of leaf tensors;
    otherwise the gradients of the ``capture`` tensors are returned and no ``.grad``
    changes.
    """
    sink = _GradientSink(capture, create_graph)
    with sink.journal(), _counted_as_gradients():
        for root, grad in zip(roots, grad_roots, strict=False):
            sink.send(root, root._node, grad)
        nodes = [root._node for root in roots if root._node is not None]
        with set_grad_enabled(create_graph):  # record the backward itself if asked
            for fn in _topological_order(nodes):
                grad_out = sink.node_grads.pop(id(fn), None)
                if grad_out is None:
                    continue  # nothing flowed into this node
                if fn.tensor_hooks or fn.retained_output is not None:
                    grad_out = _run_output_hooks(fn, grad_out)
                _on_device(fn.device, _run_node, fn, grad_out, sink)
                if not retain_graph:
                    _free_saved(fn)
        sink.finish_leaves()
    return sink.captured(capture)


def _run_node(fn: Function, grad_out: Tensor, sink: _GradientSink) -> None:
    """``fn``'s backward, its saved tensors checked first, and one gradient sent along
    each of its edges (the gradients are dropped on return: they are the peak's size).
    """
    if fn.saves_inputs or fn.saves_output:
        fn.check_saved_versions()
    grads = fn.backward(grad_out)
    if not isinstance(grads, tuple):
        grads = (grads,)
    if _anomaly_mode.enabled:
        _check_finite(fn, grads)
    for t, node, g in zip(fn.inputs, fn.input_nodes, grads, strict=False):
        if g is not None and t is not None and t.requires_grad:
            if g.array.shape != t.array.shape or g.array.dtype is not t.array.dtype:
                g = _shaped_like(g, t)
            sink.send(t, node, g, fn.fresh_grads)


def sum_to_shape(grad: Tensor, shape: tuple[int, ...]) -> Tensor:
    """Sum a broadcast gradient back to ``shape`` (the inverse of broadcasting)."""
    extra = grad.ndim - len(shape)
    if extra >= 0 and any(s not in (1, g) for s, g in zip(shape, grad.shape[extra:], strict=True)):
        # e.g. a tensor whose shape changed in place (t_() under no_grad) after the op
        raise RuntimeError(
            f"a node returned an invalid gradient - got {list(grad.shape)} but expected "
            f"shape compatible with {list(shape)} (did the tensor change shape in place, "
            "as t_() or unsqueeze_() under no_grad, after the op that made it?)"
        )
    dims = tuple(range(extra)) + tuple(
        extra + i for i, s in enumerate(shape) if s == 1 and grad.shape[extra + i] != 1
    )
    out = grad.sum(dims, keepdim=True) if dims else grad
    return out.reshape(shape) if out.shape != shape else out


def _shaped_like(grad: Tensor, t: Tensor) -> Tensor:
    """``grad`` summed back to ``t``'s shape (an op that broadcast ``t``) and cast to
    ``t``'s dtype (an op that promoted it).
    """
    if grad.array.shape != t.array.shape:
        grad = sum_to_shape(grad, t.shape)
    if grad.array.dtype is not t.array.dtype and grad.array.dtype != t.array.dtype:
        grad = grad.to(dtype=t.dtype)
    return grad


def _free_saved(fn: Function) -> None:
    """Free what ``fn`` saved for backward now, not at collection, but keep the graph's
    shape (:attr:`Function.next_functions`).
    """
    edges, needs = fn.input_nodes, fn.needs_input_grad
    retained = fn.__dict__.get("retained_output")  # y.retains_grad stays True, as PyTorch
    fn.__dict__.clear()
    fn.inputs = ()
    fn.input_nodes, fn.needs_input_grad = edges, needs
    if retained is not None:
        fn.retained_output = retained


def _counted_as_gradients() -> contextlib.AbstractContextManager[Any]:
    """Memory allocated during the walk counts as "gradients" (when tracking is on)."""
    return _memory.category("gradients") if _memory.enabled else contextlib.nullcontext()


class _GradientSink:
    """Where the walk's gradients go: summed per node until the node runs; into each
    leaf's ``.grad``; or, for :func:`grad`, kept for the ``capture`` tensors instead.

    Gradient ownership: a leaf's ``.grad`` takes a fresh gradient's array as it is (a
    Function with ``fresh_grads``) unless another leaf already took it, else a copy. The
    outermost walk of a thread journals every ``.grad`` it changes, so an error midway
    (out of memory) puts them back; sums into a ``.grad`` older than the walk wait for
    its end. Leaves with hooks get their summed gradient, through the hooks, at the end.
    """

    __slots__ = (
        "found",
        "hooked_leaves",
        "may_steal",
        "node_grads",
        "outermost",
        "stolen",
        "wanted",
    )

    def __init__(self, capture: Sequence[Tensor] | None, create_graph: bool) -> None:
        self.node_grads: dict[int, Tensor] = {}  # id(node) -> its output's summed gradient
        self.wanted = None if capture is None else {id(t) for t in capture}
        self.found: dict[int, Tensor] = {}  # id(captured tensor) -> its gradient
        self.hooked_leaves: dict[int, tuple[Tensor, Tensor]] = {}
        self.stolen: set[int] = set()  # arrays now held by a leaf's .grad
        self.may_steal = not create_graph
        self.outermost = False

    @contextlib.contextmanager
    def journal(self) -> Iterator[None]:
        """Undo every ``.grad`` change if the walk fails (outermost walk only)."""
        self.outermost = self.wanted is None and _journal.before is None
        if self.outermost:
            _journal.before, _journal.pending = {}, {}
        try:
            yield
        except BaseException:
            if self.outermost and _journal.before is not None:
                for leaf, old in _journal.before.values():
                    leaf.grad = old
            raise
        finally:
            if self.outermost:
                _journal.before = _journal.pending = None

    def send(self, t: Tensor, node: Function | None, g: Tensor, fresh: bool = False) -> None:
        """Route the gradient ``g`` of ``t`` along its edge: to ``node``, the op that made
        ``t``, or into the leaf ``t``. ``fresh``: ``g``'s array is new and unshared.
        """
        if self.wanted is not None:
            if id(t) in self.wanted:
                _add(self.found, id(t), g)
            if node is not None:
                _add(self.node_grads, id(node), g)
        elif node is not None:  # the common case, spelled out: it runs for every edge
            found = self.node_grads.get(id(node))
            self.node_grads[id(node)] = g if found is None else found + g
        elif t._hooks:
            _add_for(self.hooked_leaves, t, g)
        else:  # into the leaf's .grad, journaled
            before, pending = _journal.before, _journal.pending
            assert before is not None and pending is not None
            old = before.setdefault(id(t), (t, t.grad))[1]
            if old is not None and t.grad is old and old._node is None and g._node is None:
                _add_for(pending, t, g)  # in place into an old .grad: at the end, all or none
                return
            fresh = fresh and self.may_steal and id(g.array) not in self.stolen
            if _on_device(g.device, _accumulate_into_leaf, t, g, fresh):
                self.stolen.add(id(g.array))

    def finish_leaves(self) -> None:
        """The hooked leaves' gradients, through their hooks; then the delayed sums."""
        for leaf, g in self.hooked_leaves.values():
            for hook in leaf._hooks or ():
                g = _hooked(hook, g)
            if _journal.before is not None:
                _journal.before.setdefault(id(leaf), (leaf, leaf.grad))
            _on_device(g.device, _accumulate_into_leaf, leaf, g, False)
            for hook in leaf._hooks or ():  # register_post_accumulate_grad_hook's
                after = getattr(hook, "after", None)
                if after is not None:
                    after(leaf)
        if self.outermost and _journal.pending:
            for leaf, g in _journal.pending.values():
                _on_device(g.device, _accumulate_into_leaf, leaf, g, False)

    def captured(self, capture: Sequence[Tensor] | None) -> list[Tensor | None] | None:
        """The gradients of ``capture`` (a leaf's through its hooks), or None."""
        if capture is None:
            return None
        found = [self.found.get(id(t)) for t in capture]
        for i, t in enumerate(capture):
            g = found[i]
            if g is not None and t._node is None and t._hooks:
                for hook in t._hooks:
                    g = _hooked(hook, g)
                found[i] = g
        return found


def _hooked(hook: Callable[[Tensor], Tensor | None], grad: Tensor) -> Tensor:
    """``hook(grad)``, or ``grad`` when the hook returns None."""
    replaced = hook(grad)
    if replaced is None:
        return grad
    if replaced.shape != grad.shape:
        raise RuntimeError(
            f"a hook returned a gradient of shape {replaced.shape} for a tensor of shape "
            f"{grad.shape}; return a tensor of the same shape (or None)"
        )
    return replaced


def _run_output_hooks(fn: Function, grad: Tensor) -> Tensor:
    """The hooks registered on ``fn``'s output, then ``retain_grad()``'s store, as in
    PyTorch (the retained gradient is the one after the hooks).
    """
    for hook in fn.tensor_hooks or ():
        grad = _hooked(hook, grad)
    out = fn.retained_output() if fn.retained_output is not None else None
    if out is not None:
        kept = grad if grad._node is not None else grad.detach()
        out.grad = kept.clone() if out.grad is None else out.grad + kept
    return grad


def _check_finite(fn: Function, grads: tuple[Tensor | None, ...]) -> None:
    """Under :func:`detect_anomaly`: raise if ``fn``'s backward gave NaN or Inf."""
    for index, grad in enumerate(grads):
        if grad is None:
            continue
        with grad.device.guard():
            if bool(grad.xp.isfinite(grad.array).all()):
                continue
        where = (
            f"\nThe forward op was created at:\n{fn.created_at}"
            if fn.created_at
            else " (it was created before detect_anomaly() was turned on)"
        )
        raise RuntimeError(
            f"Function '{fn.name()}' returned nan or inf values in its {index}th output: "
            f"the gradient of input {index} of the forward op {type(fn).__name__}.{where}"
        )


def _on_device(device: Device, work: Callable[..., R], *args: Any) -> R:
    """``work(*args)`` inside ``device``'s context where the backend needs one (several
    GPUs; see :meth:`~minitorch_accel.backends.Device.guard`), else called directly:
    the backward pass calls this per node, so the common case pays no ``with``.
    """
    backend = device.backend
    if not backend.needs_device_context:
        return work(*args)
    with backend.device_context(device):
        return work(*args)


def _add(totals: dict[int, Tensor], key: int, grad: Tensor) -> None:
    """``totals[key] += grad`` (out of place: the gradient may be someone else's too)."""
    found = totals.get(key)
    totals[key] = grad if found is None else found + grad


def _add_for(totals: dict[int, tuple[Tensor, Tensor]], t: Tensor, grad: Tensor) -> None:
    """``totals[id(t)] = (t, sum so far + grad)``."""
    found = totals.get(id(t))
    totals[id(t)] = (t, grad if found is None else found[1] + grad)


def _accumulate_into_leaf(leaf: Tensor, grad: Tensor, fresh: bool = False) -> bool:
    """``leaf.grad += grad``, storing an owned array the first time: ``grad``'s own when
    it is ``fresh`` (then True is returned: the array now belongs to the leaf), else a
    copy.
    """
    if grad._node is not None:  # create_graph: keep the gradient's own graph
        leaf.grad = grad if leaf.grad is None else leaf.grad + grad
    elif leaf.grad is None:
        # Otherwise a copy: the incoming array may be a read-only broadcast view, or
        # shared with another leaf (the two inputs of an add) or with the caller's
        # ``gradient``.
        data = grad.array if fresh else grad.device.backend.clone(grad.array)
        leaf.grad = Tensor._make(data, grad.device, False, None)
        return fresh
    elif leaf.grad._node is None:
        try:
            leaf.grad.array += grad.array  # accumulate in place, as PyTorch does
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
    allow_unused: bool | None = None,
    materialize_grads: bool = False,
) -> tuple[Tensor | None, ...]:
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
    allow_unused : bool, optional
        Give None instead of raising for inputs the outputs do not depend on (default:
        ``materialize_grads``).
    materialize_grads : bool
        Give zeros instead of None for those inputs (implies ``allow_unused``).

    Returns
    -------
    tuple of Tensor or None
        One gradient per input.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> x, y = mta.ones(2, requires_grad=True), mta.ones(2, requires_grad=True)
    >>> mta.autograd.grad((x * 2).sum(), [x, y], allow_unused=True)
    (tensor([2., 2.]), None)
    >>> mta.autograd.grad((x * 2).sum(), [x, y], materialize_grads=True)[1]
    tensor([0., 0.])
    """
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "grad(): materialize_grads=True gives zeros for unused inputs, which needs "
            "allow_unused=True (or leave allow_unused out)"
        )
    allow_unused = materialize_grads if allow_unused is None else allow_unused
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
    result: list[Tensor | None] = []
    for t, g in zip(ins, found, strict=False):
        if g is None:
            if not allow_unused:
                raise RuntimeError(
                    "grad(): one of the inputs is not used to compute the outputs; "
                    "pass allow_unused=True to get None for it (or materialize_grads=True "
                    "for zeros)"
                )
            if materialize_grads:
                g = zeros_like(t)
        result.append(g)
    return tuple(result)


def backward_into(
    roots: Sequence[Tensor],
    grad_roots: Sequence[Tensor],
    inputs: Tensor | Sequence[Tensor],
    retain_graph: bool,
    create_graph: bool,
) -> None:
    """``Tensor.backward(inputs=...)``: accumulate the gradients into the ``.grad`` of
    ``inputs`` only (leaves or not); an input the roots do not depend on is left as
    it is, as in PyTorch.
    """
    ins = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    if not ins:
        raise RuntimeError("backward(): the inputs argument cannot be empty")
    for t in ins:
        if not t.requires_grad:
            raise RuntimeError(
                "backward(): one of the inputs does not require grad; inputs= takes "
                "tensors that require grad"
            )
    found = run_backward(roots, grad_roots, retain_graph, create_graph, capture=ins)
    assert found is not None
    for t, g in zip(ins, found, strict=True):
        if g is not None:
            if g.array.shape != t.array.shape or g.array.dtype != t.array.dtype:
                g = _shaped_like(g, t)
            _on_device(g.device, _accumulate_into_leaf, t, g, False)


def _seed_gradient(output: Tensor, grad_output: Tensor | None) -> Tensor:
    if not output.requires_grad:
        raise RuntimeError(
            "element 0 of tensors does not require grad and has no grad_fn: nothing to "
            "differentiate (was it computed under no_grad, or from tensors without "
            "requires_grad=True?)"
        )
    if grad_output is None:
        if output.numel() != 1:
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
