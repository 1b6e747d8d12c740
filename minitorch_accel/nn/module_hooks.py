"""Module hooks: functions called around a module's forward and backward.

What :meth:`Module.register_forward_pre_hook`, :meth:`~Module.register_forward_hook`,
:meth:`~Module.register_full_backward_pre_hook` and
:meth:`~Module.register_full_backward_hook` register, and how a call runs them, in
PyTorch's order (``Module._call_impl``)::

    forward pre-hooks   hook(module, args) -> None or new args
    forward             module.forward(*args, **kwargs)
    forward hooks       hook(module, args, output) -> None or new output

The backward hooks work as PyTorch's ``BackwardHook``: the module's tensor inputs and
outputs pass through an identity :class:`_HookIdentity` Function, whose backward on the
outputs side runs the backward pre-hooks ``hook(module, grad_output)`` and keeps the
gradients, and on the inputs side runs the full backward hooks
``hook(module, grad_input, grad_output)``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..autograd import Function, RemovableHandle
from ..core.grad_mode import is_grad_enabled
from ..core.tensor import Tensor

if TYPE_CHECKING:
    from .module import Module

__all__ = ["register_module_forward_hook", "register_module_forward_pre_hook"]

_ids = itertools.count()
KINDS = ("forward_pre", "forward", "backward_pre", "backward")


class ModuleHooks:
    """The hooks of one module (or the global ones), by kind, in calling order."""

    def __init__(self) -> None:
        self.hooks: dict[str, dict[int, Callable[..., Any]]] = {kind: {} for kind in KINDS}
        self.with_kwargs: set[int] = set()
        self.always_call: set[int] = set()

    def add(
        self,
        kind: str,
        hook: Callable[..., Any],
        prepend: bool = False,
        with_kwargs: bool = False,
        always_call: bool = False,
    ) -> RemovableHandle:
        """Register ``hook``; the handle's ``remove()`` takes it away again."""
        if not callable(hook):
            raise TypeError(f"a hook must be callable, got {type(hook).__name__}")
        key = next(_ids)
        table = self.hooks[kind]
        table[key] = hook
        if prepend:
            self.hooks[kind] = {key: hook, **{k: h for k, h in table.items() if k != key}}
        if with_kwargs:
            self.with_kwargs.add(key)
        if always_call:
            self.always_call.add(key)

        def remove() -> None:
            self.hooks[kind].pop(key, None)
            self.with_kwargs.discard(key)
            self.always_call.discard(key)

        return RemovableHandle(remove)

    def items(self, kind: str) -> list[tuple[int, Callable[..., Any]]]:
        """``(key, hook)`` pairs of ``kind`` (a copy: a hook may remove itself)."""
        return list(self.hooks[kind].items())

    def __bool__(self) -> bool:
        return any(self.hooks.values())


#: Hooks run for every module, before each module's own (PyTorch's
#: ``register_module_forward_pre_hook`` and ``register_module_forward_hook``).
global_hooks = ModuleHooks()


def register_module_forward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Run ``hook(module, args)`` before the forward of every module.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> from minitorch_accel.nn.module_hooks import register_module_forward_pre_hook
    >>> seen = []
    >>> handle = register_module_forward_pre_hook(lambda m, args: seen.append(type(m).__name__))
    >>> _ = nn.ReLU()(mta.ones(2))
    >>> handle.remove()
    >>> seen
    ['ReLU']
    """
    return global_hooks.add("forward_pre", hook)


def register_module_forward_hook(
    hook: Callable[..., Any], *, with_kwargs: bool = False, always_call: bool = False
) -> RemovableHandle:
    """Run ``hook(module, args, output)`` after the forward of every module.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> from minitorch_accel.nn.module_hooks import register_module_forward_hook
    >>> handle = register_module_forward_hook(lambda m, args, out: out * 2)
    >>> nn.ReLU()(mta.ones(2))
    tensor([2., 2.])
    >>> handle.remove()
    """
    return global_hooks.add("forward", hook, with_kwargs=with_kwargs, always_call=always_call)


def call_with_hooks(
    module: Module, hooks: ModuleHooks | None, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    """``module.forward(*args, **kwargs)`` with the global hooks and ``module``'s."""
    tables = [global_hooks] if hooks is None else [global_hooks, hooks]
    for table in tables:
        for key, hook in table.items("forward_pre"):
            args, kwargs = _run_pre_hook(table, key, hook, module, args, kwargs)
    backward = _BackwardHooks(module, hooks) if hooks is not None and is_grad_enabled() else None
    if backward is not None and backward.active:
        args = backward.wrap_inputs(args)
    try:
        output = module.forward(*args, **kwargs)
    except BaseException:
        _run_forward_hooks(tables, module, args, kwargs, None, failed=True)
        raise
    output = _run_forward_hooks(tables, module, args, kwargs, output, failed=False)
    if backward is not None and backward.active:
        output = backward.wrap_outputs(output)
    return output


def _run_pre_hook(
    table: ModuleHooks,
    key: int,
    hook: Callable[..., Any],
    module: Module,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The arguments after one forward pre-hook."""
    if key not in table.with_kwargs:
        found = hook(module, args)
        if found is None:
            return args, kwargs
        return (found if isinstance(found, tuple) else (found,)), kwargs
    found = hook(module, args, kwargs)
    if found is None:
        return args, kwargs
    if not (isinstance(found, tuple) and len(found) == 2):
        raise RuntimeError(
            f"forward pre-hook must return None or a tuple of (new_args, new_kwargs), but got "
            f"{found}."
        )
    return found[0], found[1]


def _run_forward_hooks(
    tables: list[ModuleHooks],
    module: Module,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    output: Any,
    failed: bool,
) -> Any:
    """The output after the forward hooks (after a failed forward, only those registered
    with ``always_call=True`` run).
    """
    for table in tables:
        for key, hook in table.items("forward"):
            if failed and key not in table.always_call:
                continue
            found = _call_forward_hook(table, key, hook, module, args, kwargs, output)
            if found is not None and not failed:
                output = found
    return output


def _call_forward_hook(
    table: ModuleHooks,
    key: int,
    hook: Callable[..., Any],
    module: Module,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    output: Any,
) -> Any:
    if key in table.with_kwargs:
        return hook(module, args, kwargs, output)
    return hook(module, args, output)


class _HookIdentity(Function):
    """Passes tensors through unchanged; its backward hands the gradients to
    ``on_backward`` (PyTorch's ``BackwardHookFunction``).
    """

    @staticmethod
    def forward(ctx: Any, on_backward: Any, *tensors: Tensor) -> Any:
        ctx.on_backward = on_backward
        ctx.mark_non_differentiable(*[t for t in tensors if not t.requires_grad])
        ctx.set_materialize_grads(False)
        return tensors

    @staticmethod
    def backward(ctx: Any, *grads: Tensor | None) -> tuple[Tensor | None, ...]:
        return (None, *ctx.on_backward(grads))


_hook_identity: Callable[..., Any] = _HookIdentity.apply


class _BackwardHooks:
    """One call's backward hooks: wraps the tensors going in and coming out."""

    def __init__(self, module: Module, hooks: ModuleHooks) -> None:
        self.module = module
        self.pre_hooks = hooks.items("backward_pre")
        self.full_hooks = hooks.items("backward")
        self.active = bool(self.pre_hooks or self.full_hooks)
        self.grad_output: tuple[Tensor | None, ...] | None = None
        self.n_args = 0
        self.input_positions: list[int] | None = None  # None: no input requires grad

    def wrap_inputs(self, args: tuple[Any, ...]) -> tuple[Any, ...]:
        """``args`` with its tensors passed through the inputs-side identity."""
        self.n_args = len(args)
        positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        if not any(args[i].requires_grad for i in positions):
            return args
        self.input_positions = positions
        wrapped = list(args)
        for i, t in zip(
            positions,
            _hook_identity(self._on_inputs, *[args[i] for i in positions]),
            strict=True,
        ):
            wrapped[i] = t
        return tuple(wrapped)

    def wrap_outputs(self, output: Any) -> Any:
        """``output`` (a Tensor or a tuple) through the outputs-side identity."""
        items = output if isinstance(output, tuple) else (output,)
        if not all(isinstance(t, Tensor) for t in items) or not any(t.requires_grad for t in items):
            return output
        wrapped = _hook_identity(self._on_outputs, *items)
        return wrapped if isinstance(output, tuple) else wrapped[0]

    def _on_outputs(self, grads: tuple[Tensor | None, ...]) -> tuple[Tensor | None, ...]:
        for _, hook in self.pre_hooks:
            found = hook(self.module, grads)
            if found is not None:
                grads = _checked(found, grads, "Backward pre hook")
        self.grad_output = grads
        if self.input_positions is None:  # no input needs a gradient: run the hooks now
            self._run_full_hooks((None,) * self.n_args)
        return grads

    def _on_inputs(self, grads: tuple[Tensor | None, ...]) -> tuple[Tensor | None, ...]:
        assert self.input_positions is not None
        grad_input: list[Tensor | None] = [None] * self.n_args
        for i, g in zip(self.input_positions, grads, strict=True):
            grad_input[i] = g
        found = self._run_full_hooks(tuple(grad_input))
        return tuple(found[i] for i in self.input_positions)

    def _run_full_hooks(self, grad_input: tuple[Tensor | None, ...]) -> tuple[Tensor | None, ...]:
        assert self.grad_output is not None
        for _, hook in self.full_hooks:
            found = hook(self.module, grad_input, self.grad_output)
            if found is not None:
                grad_input = _checked(found, grad_input, "Backward hook")
        return grad_input


def _checked(found: Any, grads: tuple[Tensor | None, ...], what: str) -> tuple[Tensor | None, ...]:
    """A hook's replacement gradients: as many as it was given (PyTorch's message)."""
    result: tuple[Tensor | None, ...] = found if isinstance(found, tuple) else (found,)
    if len(result) != len(grads):
        raise RuntimeError(
            f"{what} returned an invalid number of "
            f"{'grad_output' if 'pre' in what else 'grad_input'}, got {len(result)}, but expected "
            f"{len(grads)}"
        )
    return result
