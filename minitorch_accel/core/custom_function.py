"""PyTorch-style custom autograd Functions: ``forward(ctx, ...)`` as a staticmethod.

The package's own ops subclass :class:`~minitorch_accel.core.function.Function` with
instance methods on raw arrays. A user coming from PyTorch writes instead::

    class MyReLU(mta.autograd.Function):
        @staticmethod
        def forward(ctx, input):            # on Tensors, recording off
            ctx.save_for_backward(input)
            return input.clamp(min=0)

        @staticmethod
        def backward(ctx, grad_output):     # one gradient per forward argument
            (input,) = ctx.saved_tensors
            return grad_output * (input > 0)

A subclass whose ``forward`` is a staticmethod gets :func:`apply` below as its
``apply`` (see ``Function.__init_subclass__``). The ``ctx`` is the graph node itself,
an instance of a class made for it, ``MyReLUBackward`` (a :class:`BackwardCFunction`),
as in PyTorch. Forward may return several tensors: each then hangs off a small
:class:`_OutputNode` that hands its gradient to the ``ctx`` and sends a zero along the
edge, so that the ``ctx`` runs once, after all of them, with one gradient per output.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar, cast

from .factories import zeros_like
from .function import Function
from .grad_mode import is_grad_enabled, no_grad
from .tensor import Tensor
from .versions import _shared_counter

B = TypeVar("B", bound=Callable[..., Any])

_FREED = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)


class FunctionCtx:
    """What ``forward``/``setup_context`` may call on ``ctx`` (PyTorch's ``FunctionCtx``).

    Attributes set on ``ctx`` (``ctx.k = k``) are kept for backward.
    ``ctx.needs_input_grad`` is a tuple of bools, one per forward argument.
    """

    needs_input_grad: tuple[bool, ...]
    _saved: tuple[Tensor | None, ...] | None = None  # None once the graph is freed
    _saved_versions: tuple[int, ...] = ()
    _saved_makers: tuple[str, ...] = ()  # the name of each saved tensor's grad_fn
    _dirty: tuple[Tensor, ...] = ()
    _non_differentiable: tuple[Tensor, ...] = ()
    materialize_grads = True

    def save_for_backward(self, *tensors: Tensor | None) -> None:
        """Keep ``tensors`` (inputs, outputs or None) for backward: read them back with
        :attr:`saved_tensors`, which refuses one modified in place since.
        """
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(
                    f"save_for_backward can only save tensors or None, got {type(t).__name__}; "
                    "keep other values as attributes of ctx (ctx.value = value)"
                )
        self._saved = tensors

    @property
    def saved_tensors(self) -> tuple[Tensor | None, ...]:
        """The tensors given to :meth:`save_for_backward`, checked against in-place
        changes since the forward (PyTorch's message).
        """
        if self._saved is None:
            raise RuntimeError(_FREED)
        for t, seen, maker in zip(
            self._saved, self._saved_versions, self._saved_makers, strict=False
        ):
            if t is not None and t._version_counter.value != seen:
                _raise_modified(t, seen, maker)
        return self._saved

    def mark_dirty(self, *tensors: Tensor) -> None:
        """Say that forward modified these inputs in place; it must return them."""
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        """Say that these outputs have no gradient (indices, masks): they do not require
        grad, and backward gets zeros for them.
        """
        self._non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """With False, backward gets None (not zeros) for outputs that had no gradient."""
        self.materialize_grads = value


class BackwardCFunction(FunctionCtx, Function):
    """The graph node of one call of a custom Function, and its ``ctx``.

    One subclass per custom Function, named after it (``MyReLUBackward``): its
    ``backward`` calls the user's ``backward(ctx, *grad_outputs)`` and checks what
    comes back. Inputs that are not tensors are None in ``inputs``.
    """

    saves_inputs = False  # saved tensors are checked when backward reads them
    _forward_cls: type[Function]
    _output_cls: type[_OutputNode]  # the node class of each output, when several
    _outputs: tuple[Tensor | None, ...]  # None for a non-tensor output
    _pending: dict[int, Tensor] | None = None  # several outputs: their gradients so far

    def name(self) -> str:
        """``"MyReLUBackward"``, as in PyTorch."""
        return type(self).__name__

    def backward(self, grad_output: Tensor) -> tuple[Tensor | None, ...]:
        """The user's backward with one gradient per output; its result checked."""
        if self._pending is None:  # one output: the gradient is its own
            grads: list[Tensor | None] = [grad_output]
        else:
            grads = [self._pending.get(i) for i in range(len(self._outputs))]
            self._pending = {}
        for i, out in enumerate(self._outputs):
            if grads[i] is None and out is not None and self.materialize_grads:
                grads[i] = zeros_like(out)
        user_backward: Callable[..., Any] = type(self)._forward_cls.backward
        if user_backward is Function.backward:  # never overridden
            raise NotImplementedError(
                "You must implement either the backward or vjp method for your custom "
                "autograd.Function to use it with backward mode AD."
            )
        result = user_backward(self, *grads)
        return self._checked(result if isinstance(result, tuple) else (result,))

    def _checked(self, grads: tuple[Any, ...]) -> tuple[Tensor | None, ...]:
        """PyTorch's checks of the gradients a custom backward returned."""
        expected = len(self.inputs)
        if len(grads) > expected and all(g is None for g in grads[expected:]):
            grads = grads[:expected]  # extra trailing Nones are allowed
        if len(grads) != expected:
            raise RuntimeError(
                f"function {self.name()} returned an incorrect number of gradients "
                f"(expected {expected}, got {len(grads)})"
            )
        checked: list[Tensor | None] = []
        for i, (t, g, needed) in enumerate(
            zip(self.inputs, grads, self.needs_input_grad, strict=True)
        ):
            if g is not None and t is None:
                raise RuntimeError(
                    f"function {self.name()} returned a gradient different than None at "
                    f"position {i + 1}, but the corresponding forward input was not a Variable"
                )
            if g is not None and not isinstance(g, Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(g).__name__})")
            if g is not None and t is not None and not _expandable(t.shape, g.shape):
                raise RuntimeError(
                    f"Function {self.name()} returned an invalid gradient at index {i} - got "
                    f"{list(g.shape)} but expected shape compatible with {list(t.shape)}"
                )
            checked.append(g if needed else None)
        return tuple(checked)


class _OutputNode(Function):
    """Output ``index`` of a custom Function with several outputs: its backward hands
    the gradient to the ``ctx`` and sends a zero to the ``ctx``'s hidden output, so that
    the ``ctx`` runs after every output's node.
    """

    saves_inputs = False
    ctx: BackwardCFunction
    index: int

    def name(self) -> str:
        """``"MyFunctionBackward"``: every output's ``grad_fn`` is named after the Function."""
        return type(self).__name__

    def backward(self, grad_output: Tensor) -> Tensor:
        """Keep ``grad_output`` for the ``ctx``; a zero for the edge."""
        pending = self.ctx._pending
        assert pending is not None
        found = pending.get(self.index)
        pending[self.index] = grad_output if found is None else found + grad_output
        return Tensor._make(self.xp.zeros(()), self.device, False, None)


class _DelayedError(Function):
    """Passes its input on; its backward raises (see :func:`once_differentiable`)."""

    saves_inputs = False

    def forward(self, a: Any) -> Any:
        """``a`` itself."""
        return a

    def backward(self, grad_output: Tensor) -> Tensor:
        """Refuse: the backward that made this output is not differentiable."""
        raise RuntimeError(
            "trying to differentiate twice a function that was marked with @once_differentiable"
        )


def once_differentiable(backward: B) -> B:
    """Decorate a custom Function's ``backward`` that is written without differentiable
    ops (raw arrays, ``no_grad``): it runs with recording off, and differentiating its
    result again (``create_graph=True``) raises instead of giving a wrong answer.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.autograd.function import once_differentiable
    >>> class Square(mta.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x * x
    ...     @staticmethod
    ...     @once_differentiable
    ...     def backward(ctx, grad):
    ...         (x,) = ctx.saved_tensors
    ...         return mta.tensor(2 * x.detach().numpy() * grad.numpy())
    >>> x = mta.tensor([3.0], requires_grad=True)
    >>> Square.apply(x).sum().backward()
    >>> x.grad
    tensor([6.])
    """

    @functools.wraps(backward)
    def wrapper(ctx: Any, *grads: Any) -> Any:
        with no_grad():
            result = backward(ctx, *grads)
        if not is_grad_enabled() or not any(
            isinstance(g, Tensor) and g.requires_grad for g in grads
        ):
            return result
        items = result if isinstance(result, tuple) else (result,)
        wrapped = tuple(
            _DelayedError.apply(g.detach().requires_grad_(True)) if isinstance(g, Tensor) else g
            for g in items
        )
        return wrapped if isinstance(result, tuple) else wrapped[0]

    return wrapper  # type: ignore[return-value]


def apply(cls: type[Function], *args: Any, **kwargs: Any) -> Any:
    """Run a PyTorch-style Function: ``forward`` on Tensors with recording off, then
    its outputs wired into the graph behind a new ``ctx`` node.

    Keyword arguments are bound to ``forward``'s parameters (defaults filled in), so
    ``ctx.needs_input_grad`` and backward's gradients follow ``forward``'s signature.
    """
    node_cls = _node_class(cls)
    ctx = node_cls.__new__(node_cls)
    uses_setup_context = "setup_context" in _defined_methods(cls)
    args = _bind(cls, uses_setup_context, args, kwargs)
    ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
    ctx._saved = ()
    with no_grad():
        if uses_setup_context:
            output = cls.forward(*args)
            cls.setup_context(ctx, args, output)  # type: ignore[attr-defined]
        else:
            output = cls.forward(ctx, *args)
    tensors = [a for a in args if isinstance(a, Tensor)]
    if not (is_grad_enabled() and any(ctx.needs_input_grad)):
        return output
    ctx.device, ctx.xp = tensors[0].device, tensors[0].xp
    ctx.inputs = cast(
        "tuple[Tensor, ...]", tuple(a if isinstance(a, Tensor) else None for a in args)
    )
    ctx.input_nodes = tuple(a._node if isinstance(a, Tensor) else None for a in args)
    wired = _wire_outputs(ctx, output, tensors)
    saved: tuple[Tensor | None, ...] = ctx._saved or ()
    ctx._saved_versions = tuple(0 if t is None else t._version_counter.value for t in saved)
    ctx._saved_makers = tuple("" if t is None or t._node is None else t._node.name() for t in saved)
    return wired


def _wire_outputs(ctx: BackwardCFunction, output: Any, inputs: list[Tensor]) -> Any:
    """Make forward's outputs (a Tensor or a tuple) ``ctx``'s outputs in the graph."""
    several = isinstance(output, tuple)
    outputs = output if several else (output,)
    for t in ctx._dirty:
        if not any(t is out for out in outputs):
            raise RuntimeError(
                "Some elements marked as dirty during the forward method were not returned "
                "as output. The inputs that are modified inplace must all be outputs of the "
                "Function."
            )
        if t._node is None and t.requires_grad:
            raise RuntimeError(
                "a leaf Variable that requires grad has been used in an in-place operation."
            )
    ctx._outputs = tuple(out if isinstance(out, Tensor) else None for out in outputs)
    if several:
        ctx._pending = {}
        with ctx.device.guard():
            hidden = Tensor._make(ctx.xp.zeros(()), ctx.device, True, ctx)
    wired = []
    for i, out in enumerate(outputs):
        if not isinstance(out, Tensor):
            wired.append(out)
            continue
        differentiable = not any(out is t for t in ctx._non_differentiable)
        node: Function | None = ctx
        if several and differentiable:
            output_cls = type(ctx)._output_cls
            node = output_cls.__new__(output_cls)
            node.ctx, node.index = ctx, i
            node.device, node.xp = ctx.device, ctx.xp
            node.inputs, node.input_nodes = (hidden,), (ctx,)
            node.needs_input_grad = (True,)
        wired.append(_attach(out, node if differentiable else None, inputs, ctx._dirty))
    return tuple(wired) if several else wired[0]


def _attach(out: Tensor, node: Function | None, inputs: list[Tensor], dirty: Any) -> Tensor:
    """``out`` with ``node`` as its grad_fn: the tensor itself when forward made it or
    modified it in place (``mark_dirty``), else a new tensor sharing its storage (an
    input returned unchanged must keep its own history).
    """
    if any(out is t for t in dirty) or not (
        any(out is t for t in inputs) or out.requires_grad or out._node is not None
    ):
        out._node, out.requires_grad = node, node is not None
        return out
    alias = Tensor._make(out.array, out.device, node is not None, node)
    alias._version_counter = _shared_counter(out)
    return alias


def _node_class(cls: type[Function]) -> type[BackwardCFunction]:
    """The node class of ``cls``, ``<name>Backward``, made on first use (with the class
    of its outputs' nodes, of the same name).
    """
    found: type[BackwardCFunction] | None = cls.__dict__.get("_backward_cls")
    if found is None:
        name = f"{cls.__name__}Backward"
        output_cls = type(name, (_OutputNode,), {})
        found = type(name, (BackwardCFunction,), {"_forward_cls": cls, "_output_cls": output_cls})
        cls._backward_cls = found  # type: ignore[attr-defined]
    return found


def _defined_methods(cls: type) -> set[str]:
    """Names defined by ``cls`` and its bases up to (not including) Function."""
    names: set[str] = set()
    for klass in cls.__mro__:
        if klass is Function:
            break
        names.update(klass.__dict__)
    return names


def _bind(
    cls: type[Function], uses_setup_context: bool, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[Any, ...]:
    """``args`` and ``kwargs`` bound to ``forward``'s positional parameters."""
    if not kwargs:
        return args
    signature = inspect.signature(cls.forward)
    bound = (
        signature.bind(*args, **kwargs)
        if uses_setup_context
        else signature.bind(None, *args, **kwargs)
    )
    bound.apply_defaults()
    return bound.args if uses_setup_context else bound.args[1:]


def _expandable(shape: tuple[int, ...], grad_shape: tuple[int, ...]) -> bool:
    """Whether a tensor of ``shape`` broadcasts to ``grad_shape`` (the gradient is then
    summed back to ``shape``, as PyTorch does).
    """
    if len(shape) > len(grad_shape):
        return False
    tail = grad_shape[len(grad_shape) - len(shape) :]
    return all(s in (1, g) for s, g in zip(shape, tail, strict=True))


def _raise_modified(t: Tensor, seen: int, maker: str) -> None:
    """PyTorch's error for a saved tensor modified in place since the forward; ``maker``
    names the op that made it (PyTorch writes ``Mul`` for ``MulBackward``).
    """
    which = f", which is output 0 of {maker.removesuffix('Backward')}," if maker else ""
    raise RuntimeError(
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: [{t.dtype} {list(t.shape)}]{which} is at version "
        f"{t._version_counter.value}; expected version {seen} instead. Hint: do the in-place "
        "operation on a clone(), or after backward; enable anomaly detection "
        "(minitorch_accel.autograd.detect_anomaly()) to see where the op was created."
    )
