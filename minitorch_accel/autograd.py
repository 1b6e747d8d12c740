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
import traceback
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


class VersionCounter:
    """How many times a storage has been written in place through the Tensor API.

    One counter per storage: a tensor, its views (reshape, indexing, transpose, ...) and
    :meth:`~minitorch_accel.Tensor.detach` share it; ``.data`` gets a new one, so writes
    through ``.data`` stay invisible to autograd, as in PyTorch. A :class:`Function`
    remembers the value for each tensor it saves for backward; backward compares.

    A new tensor starts with the shared, never-bumped ``UNWRITTEN`` (version 0) and gets
    a counter of its own from :func:`version_counter` at its first in-place write or
    view: most tensors are never written, and making a counter for each would cost every
    op.
    """

    __slots__ = ("value", "has_views")

    def __init__(self) -> None:
        self.value = 0
        self.has_views = False  # a view op shared it: history cannot be rebased in place


UNWRITTEN = VersionCounter()


def version_counter(t: Tensor) -> VersionCounter:
    """``t``'s own version counter, made on first need (replacing ``UNWRITTEN``)."""
    counter = t._version_counter
    if counter is UNWRITTEN:
        counter = t._version_counter = VersionCounter()
        node = t._node
        if node is not None and node.saves_output:  # node saved t's values: let it watch
            node._out_version = (counter, 0)
    return counter


def bump_version(t: Tensor) -> None:
    """Record an in-place write to ``t``'s storage (and so to its views')."""
    version_counter(t).value += 1


class _AnomalyMode:
    enabled: bool = False


_anomaly_mode = _AnomalyMode()


class _LeafJournal(threading.local):
    """What the outermost backward walk of this thread changes in leaves' ``.grad``, so
    that an error midway (an out-of-memory) puts every ``.grad`` back as it was.
    """

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
        """Use this context as a decorator: ``func`` runs inside it."""
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


class set_detect_anomaly:
    """Turn anomaly detection on or off, as a context manager or a plain call.

    While it is on, every recorded op keeps the stack of the forward call that created
    it, and backward checks each gradient a node computes: the first one holding NaN or
    Inf raises a RuntimeError naming the node, the forward op and where it was created.
    It slows every op down; use it to find a bug, not to train.

    Parameters
    ----------
    mode : bool
        True turns detection on.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> x = mta.tensor([0.0], requires_grad=True)
    >>> with mta.autograd.detect_anomaly():
    ...     y = x.sqrt()  # d sqrt(x)/dx is inf at 0
    ...     y.backward()
    Traceback (most recent call last):
    ...
    RuntimeError: Function 'SqrtBackward' returned nan or inf values in its 0th output: ...
    """

    def __init__(self, mode: bool) -> None:
        self._previous = _anomaly_mode.enabled
        _anomaly_mode.enabled = bool(mode)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        _anomaly_mode.enabled = self._previous


class detect_anomaly(set_detect_anomaly):
    """Anomaly detection on inside a ``with`` block (see :class:`set_detect_anomaly`).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> with mta.autograd.detect_anomaly():
    ...     mta.autograd.is_anomaly_enabled()
    True
    """

    def __init__(self) -> None:
        super().__init__(True)


def is_anomaly_enabled() -> bool:
    """Whether :func:`detect_anomaly` is on."""
    return _anomaly_mode.enabled


class Function:
    """One differentiable operation: a node of the graph.

    Subclasses implement ``forward(self, *arrays, **params) -> array`` on raw arrays
    (``self.xp`` is the array module, ``self.device`` the device) and
    ``backward(self, grad_output) -> Tensor | tuple[Tensor | None, ...]`` with Tensor
    operations, one gradient per input (None where there is none). What backward needs
    is saved as attributes of ``self``; ``self.inputs`` are the input Tensors and
    :meth:`output` the output Tensor (for classes that set ``saves_output = True``).

    Tensors saved for backward are checked against in-place changes: ``saves_inputs``
    (default True) says that backward reads the values of ``self.inputs``, and
    ``saves_output`` those of the output; backward raises if any of them was modified in
    place since the forward (their :class:`VersionCounter` moved). A class whose backward
    needs only shapes sets ``saves_inputs = False``. A class whose output shares its
    first input's memory (a view) sets ``returns_view = True``: the output then shares
    the input's version counter.

    A class whose ``backward`` returns gradients in newly allocated arrays that nothing
    else refers to sets ``fresh_grads = True``: a leaf's ``.grad`` then takes such an
    array as it is instead of a copy (as PyTorch's AccumulateGrad steals a gradient
    nobody shares), one copy per parameter per step saved.
    """

    saves_output = False
    saves_inputs = True
    returns_view = False
    fresh_grads = False
    tensor_hooks: list[Callable[[Tensor], Tensor | None]] | None = None  # of the output
    retained_output: weakref.ReferenceType[Tensor] | None = None  # retain_grad()
    created_at: str | None = None  # the forward's stack, under detect_anomaly()

    inputs: tuple[Tensor, ...]  # () once the graph is freed; None marks a missing input
    needs_input_grad: tuple[bool, ...]
    input_nodes: tuple[Function | None, ...]  # the graph's edges: each input's grad_fn
    saved_versions: tuple[int, ...]  # of the inputs, when saves_inputs
    _out_version: tuple[VersionCounter, int]  # the output's counter and value, saves_output
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
    def apply(cls, *inputs: Tensor | None, **params: Any) -> Tensor:  # noqa: C901  (the hot path of every op: the common cases spelled out inline, no helper calls)
        """Run the op on Tensors and record it in the graph when gradients are needed.

        The first input must be a Tensor; later ones may be None (an absent bias).
        """
        first = inputs[0]
        if first is None:
            raise ValueError(f"{cls.__name__}: the first input must be a Tensor")
        try:
            device = first.device
            requires_grad = first.requires_grad
        except AttributeError:
            raise _not_a_tensor(cls, first) from None
        if len(inputs) == 1:
            arrays: Any = (first.array,)
        else:
            arrays = [first.array]
            for t in inputs[1:]:
                if t is None:
                    arrays.append(None)
                    continue
                if t.device is not device:
                    _raise_mixed_devices(cls, inputs)
                if t.requires_grad:
                    requires_grad = True
                arrays.append(t.array)
        fn = cls.__new__(cls)
        fn.device = device
        fn.xp = device.xp
        if not device.backend.needs_device_context:
            data = fn.forward(*arrays, **params)
        else:  # run on the GPU the tensors live on, not on CuPy's current one
            with device.backend.device_context(device):
                data = fn.forward(*arrays, **params)
        if not (requires_grad and _grad_mode.enabled):
            out = _make_tensor(data, device, False, None)
            if fn.returns_view:
                out._version_counter = _shared_counter(first)
            return out
        fn.inputs = inputs  # type: ignore[assignment]
        if len(inputs) == 1:  # the common cases spelled out: this runs for every op
            fn.needs_input_grad = (True,)
            fn.input_nodes = (first._node,)
            if cls.saves_inputs:
                fn.saved_versions = (first._version_counter.value,)
        elif len(inputs) == 2 and inputs[1] is not None:
            second = inputs[1]
            fn.needs_input_grad = (first.requires_grad, second.requires_grad)
            fn.input_nodes = (first._node, second._node)
            if cls.saves_inputs:
                fn.saved_versions = (first._version_counter.value, second._version_counter.value)
        else:
            fn.needs_input_grad = tuple([t is not None and t.requires_grad for t in inputs])
            fn.input_nodes = tuple([None if t is None else t._node for t in inputs])
            if cls.saves_inputs:
                fn.saved_versions = tuple(
                    [0 if t is None else t._version_counter.value for t in inputs]
                )
        out = _make_tensor(data, device, True, fn)
        if fn.returns_view:
            out._version_counter = _shared_counter(first)
        if cls.saves_output:
            fn._out_data = data
            fn._out_ref = weakref.ref(out)
            fn._out_version = (out._version_counter, 0)  # see version_counter()
        if _anomaly_mode.enabled:
            fn.created_at = "".join(traceback.format_stack(limit=12)[:-1])
        return out

    def output(self) -> Tensor:
        """The output Tensor (or a constant holding its values once it is gone)."""
        out: Tensor | None = self._out_ref()
        if out is not None:
            return out
        return _make_tensor(self._out_data, self.device, False, None)

    def name(self) -> str:
        """The node's name, e.g. ``"MulBackward"`` (PyTorch adds a trailing ``0``)."""
        return f"{type(self).__name__}Backward"

    @property
    def next_functions(self) -> tuple[tuple[Function | AccumulateGrad | None, int], ...]:
        """One ``(node, 0)`` pair per input: the node that made the input, an
        :class:`AccumulateGrad` for a leaf that requires grad, None for an input that
        needs no gradient (as PyTorch's ``grad_fn.next_functions``).
        """
        edges: list[tuple[Function | AccumulateGrad | None, int]] = []
        inputs = self.inputs or (None,) * len(self.input_nodes)  # () once backward freed them
        for t, node, needed in zip(inputs, self.input_nodes, self.needs_input_grad, strict=True):
            if node is not None:
                edges.append((node, 0))
            elif needed:
                edges.append((AccumulateGrad(t), 0))
            else:
                edges.append((None, 0))
        return tuple(edges)

    def _register_tensor_hook(self, hook: Callable[[Tensor], Tensor | None]) -> None:
        """Call ``hook(grad)`` on the gradient of this node's output before its backward
        runs; a returned Tensor replaces the gradient (what
        :meth:`~minitorch_accel.Tensor.register_hook` does on a non-leaf tensor).
        """
        self.tensor_hooks = [*(self.tensor_hooks or ()), hook]

    def check_saved_versions(self) -> None:
        """Raise if a tensor saved for backward was modified in place since the forward:
        one integer compare per saved tensor.
        """
        if self.saves_inputs:
            for t, seen in zip(self.inputs, self.saved_versions, strict=False):
                if t is not None and t._version_counter.value != seen:
                    i = [u is t for u in self.inputs].index(True)
                    _raise_modified(
                        t.dtype, t.shape, f"input {i}", self, t._version_counter.value, seen
                    )
        if self.saves_output:
            counter, seen = self._out_version
            if counter.value != seen:
                shape = tuple(self._out_data.shape)
                _raise_modified(self._out_data.dtype, shape, "output 0", self, counter.value, seen)

    def __repr__(self) -> str:
        return f"<{self.name()}>"


class AccumulateGrad:
    """The graph's sink for a leaf tensor that requires grad: where its gradient is
    accumulated into ``.grad`` (shown in :attr:`Function.next_functions`). ``variable``
    is the leaf (None once backward has freed the graph).
    """

    next_functions: tuple[tuple[Function | AccumulateGrad | None, int], ...] = ()

    def __init__(self, variable: Tensor | None) -> None:
        self.variable = variable

    def name(self) -> str:
        """``"AccumulateGrad"``."""
        return "AccumulateGrad"

    def __repr__(self) -> str:
        return "<AccumulateGrad>"


class RemovableHandle:
    """What :meth:`~minitorch_accel.Tensor.register_hook` returns: ``remove()`` takes the
    hook away again (as PyTorch's ``RemovableHandle``).
    """

    def __init__(self, remove: Callable[[], None]) -> None:
        self._remove = remove

    def remove(self) -> None:
        """Unregister the hook (doing it twice is harmless)."""
        self._remove()


def _shared_counter(base: Tensor) -> VersionCounter:
    """``base``'s version counter, marked as shared by a view."""
    counter = version_counter(base)
    counter.has_views = True
    return counter


def _raise_modified(
    dtype: Any, shape: tuple[int, ...], which: str, fn: Function, now: int, seen: int
) -> None:
    raise RuntimeError(
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: [{dtype} {list(shape)}], which is {which} of {fn.name()}, is at "
        f"version {now}; expected version {seen} instead. Hint: do the in-place operation "
        "on a clone(), or after backward; enable anomaly detection "
        "(minitorch_accel.autograd.detect_anomaly()) to see where the op was created."
    )


def _not_a_tensor(cls: type, value: object) -> TypeError:
    """The error for a list, an array or a number given where an op needs a Tensor."""
    return TypeError(
        f"{cls.__name__}: expected a Tensor, got {type(value).__name__}; wrap it with "
        "minitorch_accel.tensor(...)"
    )


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


def run_backward(  # noqa: C901  (the backward walk: split up by the readable-core work)
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
    made that input or, for a leaf, into ``.grad``.

    With ``capture=None`` gradients accumulate into the ``.grad`` of leaf tensors;
    otherwise the gradients of the ``capture`` tensors are returned and no ``.grad``
    changes.
    """
    from .ops.reduce import sum_to_shape

    grads: dict[int, Tensor] = {}  # id(node) -> the gradient of its output, summed
    hooked_leaves: dict[int, tuple[Tensor, Tensor]] = {}  # leaves with hooks: summed first
    wanted = {id(t): t for t in capture} if capture is not None else None
    captured: dict[int, Tensor] = {}

    stolen: set[int] = set()  # arrays now held by a leaf's .grad
    outermost = wanted is None and _journal.before is None
    if outermost:
        _journal.before, _journal.pending = {}, {}
    before, pending = _journal.before, _journal.pending

    def send(t: Tensor, node: Function | None, g: Tensor, fresh: bool = False) -> None:
        """Route the gradient ``g`` of ``t`` along its edge: to ``node``, the op that made
        ``t``, or into the leaf ``t``. ``fresh``: ``g``'s array is new and unshared, so a
        leaf may keep it uncopied.
        """
        if wanted is not None and id(t) in wanted:
            _add(captured, id(t), g)
        if node is not None:
            _add(grads, id(node), g)
        elif wanted is None:
            if t._hooks:
                found = hooked_leaves.get(id(t))
                hooked_leaves[id(t)] = (t, g if found is None else found[1] + g)
                return
            assert before is not None and pending is not None
            old = before.setdefault(id(t), (t, t.grad))[1]
            if old is not None and t.grad is old and old._node is None and g._node is None:
                # Adding in place into a gradient older than this walk waits for its
                # end: an error midway (out of memory) then leaves that gradient unchanged.
                found = pending.get(id(t))
                pending[id(t)] = (t, g if found is None else found[1] + g)
                return
            fresh = fresh and id(g.array) not in stolen
            if _on_device(g.device, _accumulate_into_leaf, t, g, fresh):
                stolen.add(id(g.array))

    def run_node(fn: Function, grad_out: Tensor) -> None:
        """``fn``'s backward, its gradients sent on to its inputs."""
        if fn.saves_inputs or fn.saves_output:
            fn.check_saved_versions()
        results = fn.backward(grad_out)
        if not isinstance(results, tuple):
            results = (results,)
        if _anomaly_mode.enabled:
            _check_finite(fn, results)
        fresh = fn.fresh_grads and not create_graph
        for t, node, g in zip(fn.inputs, fn.input_nodes, results, strict=False):
            if g is None or t is None or not t.requires_grad:
                continue
            if g.array.shape != t.array.shape:
                g = sum_to_shape(g, t.shape)
            if g.array.dtype is not t.array.dtype and g.array.dtype != t.array.dtype:
                g = g.to(dtype=t.dtype)
            send(t, node, g, fresh)

    counted = _memory.category("gradients") if _memory.enabled else contextlib.nullcontext()
    try:
        with counted:
            for root, grad in zip(roots, grad_roots, strict=False):
                send(root, root._node, grad)
            nodes = [root._node for root in roots if root._node is not None]
            with set_grad_enabled(create_graph):
                for fn in _topological_order(nodes):
                    grad_out = grads.pop(id(fn), None)
                    if grad_out is None:
                        continue
                    if fn.tensor_hooks or fn.retained_output is not None:
                        grad_out = _run_output_hooks(fn, grad_out)
                    _on_device(fn.device, run_node, fn, grad_out)  # on the GPU of fn's tensors
                    if not retain_graph:  # free the saved arrays now, not at collection,
                        edges, needs = fn.input_nodes, fn.needs_input_grad
                        fn.__dict__.clear()
                        fn.inputs = ()  # but keep the graph's shape (next_functions)
                        fn.input_nodes, fn.needs_input_grad = edges, needs
            for leaf, g in hooked_leaves.values():
                for hook in leaf._hooks or ():
                    g = _hooked(hook, g)
                if before is not None:
                    before.setdefault(id(leaf), (leaf, leaf.grad))
                _on_device(g.device, _accumulate_into_leaf, leaf, g, False)
            if outermost and pending:
                for leaf, g in pending.values():
                    _on_device(g.device, _accumulate_into_leaf, leaf, g, False)
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
    found = [captured.get(id(t)) for t in capture]
    for i, t in enumerate(capture):  # a leaf's hooks see, and may replace, its gradient
        hooked = found[i]
        if hooked is not None and t._node is None and t._hooks:
            for hook in t._hooks:
                hooked = _hooked(hook, hooked)
            found[i] = hooked
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
        leaf.grad = _make_tensor(data, grad.device, False, None)
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
