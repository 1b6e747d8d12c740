"""Module: the base class of every layer and model.

A module holds parameters, buffers (state that is saved but not learned, such as batch
norm's running mean) and submodules. Assigning one of them as an attribute registers
it, so ``parameters()``, ``state_dict()``, ``to()`` and ``train()`` find it without any
bookkeeping in the subclass.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

import numpy as np

from ..autograd import RemovableHandle
from ..backends import DeviceLike
from ..core.convert import DTypeLike
from ..core.factories import zeros_like
from ..core.tensor import Tensor
from .module_hooks import ModuleHooks, call_with_hooks, global_hooks
from .module_state import IncompatibleKeys, load_into, move_in_place, split_to_args
from .module_tree import named_members, tree_repr, walk_modules
from .parameter import Buffer, Parameter

M = TypeVar("M", bound="Module")


class Module:
    """Base class for layers and models.

    Subclasses call ``super().__init__()`` first, assign their parameters and
    submodules as attributes, and define :meth:`forward`. Calling the module calls
    ``forward``.

    Attributes
    ----------
    training : bool
        True in training mode (the default), False after :meth:`eval`. Dropout and
        batch normalization behave differently in the two modes.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> class TwoLayer(nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.hidden = nn.Linear(4, 8)
    ...         self.out = nn.Linear(8, 2)
    ...     def forward(self, x):
    ...         return self.out(self.hidden(x).relu())
    >>> model = TwoLayer()
    >>> [name for name, _ in model.named_parameters()]
    ['hidden.weight', 'hidden.bias', 'out.weight', 'out.bias']
    >>> model(mta.ones(3, 4)).shape
    (3, 2)
    """

    training: bool
    _parameters: dict[str, Parameter | None]
    _buffers: dict[str, Tensor | None]
    _non_persistent_buffers: set[str]
    _modules: dict[str, Module | None]

    def __init__(self) -> None:
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_buffers", {})
        object.__setattr__(self, "_non_persistent_buffers", set())
        object.__setattr__(self, "_modules", {})

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The computation of this module; subclasses define it."""
        raise NotImplementedError(f"{type(self).__name__} does not define forward()")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Run :meth:`forward` on the arguments (``model(x)``)."""
        if args and isinstance(args[0], (list, np.ndarray)) and _is_raw_data(args[0]):
            raise TypeError(
                f"{type(self).__name__} got a {type(args[0]).__name__} as input; wrap it "
                "with minitorch_accel.tensor(...) first"
            )
        hooks: ModuleHooks | None = self.__dict__.get("_module_hooks")
        if hooks is None and not global_hooks:
            return self.forward(*args, **kwargs)
        return call_with_hooks(self, hooks, args, kwargs)

    # ------------------------------------------------------------ hooks (see module_hooks)
    def _hooks(self) -> ModuleHooks:
        hooks: ModuleHooks | None = self.__dict__.get("_module_hooks")
        if hooks is None:
            hooks = ModuleHooks()
            object.__setattr__(self, "_module_hooks", hooks)
        return hooks

    def register_forward_pre_hook(
        self, hook: Callable[..., Any], *, prepend: bool = False, with_kwargs: bool = False
    ) -> RemovableHandle:
        """Call ``hook(module, args)`` before each forward (``hook(module, args, kwargs)``
        with ``with_kwargs=True``); what it returns, if not None, replaces the arguments
        (a tuple ``(args, kwargs)`` with ``with_kwargs``). ``prepend`` runs it first.

        Examples
        --------
        >>> import minitorch_accel as mta
        >>> from minitorch_accel import nn
        >>> relu = nn.ReLU()
        >>> handle = relu.register_forward_pre_hook(lambda module, args: (-args[0],))
        >>> relu(mta.tensor([-1.0, 2.0]))
        tensor([1., 0.])
        >>> handle.remove()
        """
        return self._hooks().add("forward_pre", hook, prepend, with_kwargs)

    def register_forward_hook(
        self,
        hook: Callable[..., Any],
        *,
        prepend: bool = False,
        with_kwargs: bool = False,
        always_call: bool = False,
    ) -> RemovableHandle:
        """Call ``hook(module, args, output)`` after each forward (``hook(module, args,
        kwargs, output)`` with ``with_kwargs=True``); what it returns, if not None,
        replaces the output. ``always_call`` runs it even when forward raised (with
        ``output`` None); ``prepend`` runs it first.

        Examples
        --------
        >>> import minitorch_accel as mta
        >>> from minitorch_accel import nn
        >>> relu = nn.ReLU()
        >>> shapes = []
        >>> handle = relu.register_forward_hook(lambda m, args, out: shapes.append(out.shape))
        >>> _ = relu(mta.ones(2, 3))
        >>> shapes
        [(2, 3)]
        """
        return self._hooks().add("forward", hook, prepend, with_kwargs, always_call)

    def register_full_backward_pre_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """Call ``hook(module, grad_output)`` when the gradients of the module's outputs
        are known, before those of its inputs are computed; a returned tuple replaces
        ``grad_output``.

        Examples
        --------
        >>> import minitorch_accel as mta
        >>> from minitorch_accel import nn
        >>> relu = nn.ReLU()
        >>> handle = relu.register_full_backward_pre_hook(lambda m, g: (g[0] * 10,))
        >>> x = mta.tensor([1.0, 2.0], requires_grad=True)
        >>> relu(x).sum().backward()
        >>> x.grad
        tensor([10., 10.])
        """
        return self._hooks().add("backward_pre", hook, prepend)

    def register_full_backward_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """Call ``hook(module, grad_input, grad_output)`` once the gradients of the
        module's positional inputs are computed (None for an input that is not a tensor
        or needs no gradient); a returned tuple replaces ``grad_input``.

        Examples
        --------
        >>> import minitorch_accel as mta
        >>> from minitorch_accel import nn
        >>> relu = nn.ReLU()
        >>> seen = []
        >>> handle = relu.register_full_backward_hook(lambda m, gi, go: seen.append(gi[0]))
        >>> x = mta.tensor([-1.0, 2.0], requires_grad=True)
        >>> relu(x).sum().backward()
        >>> seen
        [tensor([0., 1.])]
        """
        return self._hooks().add("backward", hook, prepend)

    # ------------------------------------------------------------ registration
    def _registry(self, name: str) -> dict[str, Any]:
        found: dict[str, Any] | None = self.__dict__.get(name)
        if found is None:
            raise AttributeError(
                f"cannot register into {type(self).__name__} before Module.__init__() is "
                "called: call super().__init__() first in __init__"
            )
        return found

    def _check_name(self, kind: str, name: str, registry: dict[str, Any]) -> None:
        if not isinstance(name, str):
            raise TypeError(f"{kind} name must be a str, got {type(name).__name__}")
        if name == "" or "." in name:
            raise KeyError(f'{kind} name must be non-empty and contain no ".", got "{name}"')
        if hasattr(self, name) and name not in registry:
            raise KeyError(f'attribute "{name}" already exists on {type(self).__name__}')

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Register ``param`` (or None, a placeholder) under ``name``."""
        params = self._registry("_parameters")
        self._check_name("parameter", name, params)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"cannot register a {type(param).__name__} as parameter '{name}' "
                "(a Parameter or None is expected; wrap it: nn.Parameter(t))"
            )
        params[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Register a tensor that is state but not a parameter (e.g. a running mean).

        Parameters
        ----------
        name : str
            The attribute name.
        tensor : Tensor or None
            The buffer; it moves with :meth:`to`.
        persistent : bool
            Whether it is part of :meth:`state_dict`.
        """
        buffers = self._registry("_buffers")
        self._check_name("buffer", name, buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot register a {type(tensor).__name__} as buffer '{name}'")
        buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers.discard(name)
        else:
            self._non_persistent_buffers.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        """Register ``module`` as a submodule called ``name``."""
        modules = self._registry("_modules")
        self._check_name("module", name, modules)
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module")
        modules[name] = module

    register_module = add_module

    def _forget(self, name: str, keep: str) -> None:
        for registry in ("_parameters", "_buffers", "_modules"):
            if registry != keep:
                self.__dict__[registry].pop(name, None)
        self._non_persistent_buffers.discard(name)
        self.__dict__.pop(name, None)

    def __setattr__(self, name: str, value: Any) -> None:
        params = self.__dict__.get("_parameters")
        modules = self.__dict__.get("_modules")
        buffers = self.__dict__.get("_buffers")
        if isinstance(value, Parameter):
            self._registry("_parameters")
            self._forget(name, "_parameters")
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign a {type(value).__name__} as parameter '{name}' "
                    "(a Parameter or None is expected)"
                )
            params[name] = None
        elif isinstance(value, Module):
            self._registry("_modules")
            self._forget(name, "_modules")
            self.add_module(name, value)
        elif modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign a {type(value).__name__} as submodule '{name}'")
            modules[name] = None
        elif isinstance(value, Buffer):  # nn.Buffer: registers itself (PyTorch 2.5)
            self._registry("_buffers")
            self._forget(name, "_buffers")
            self.register_buffer(name, value, persistent=value.persistent)
        elif buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign a {type(value).__name__} as buffer '{name}'")
            buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:
        # Only called when normal lookup fails: registered members live in the dicts.
        for registry in ("_parameters", "_buffers", "_modules"):
            found = self.__dict__.get(registry)
            if found is not None and name in found:
                return found[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for registry in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__.get(registry, {}):
                del self.__dict__[registry][name]
                self._non_persistent_buffers.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self) -> list[str]:
        members = [*self._parameters, *self._buffers, *self._modules]
        return sorted(set(super().__dir__()) | set(members))

    # ------------------------------------------------------------ traversal
    def named_modules(
        self, memo: set[Module] | None = None, prefix: str = "", remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Module]]:
        """This module and every submodule below it, depth first, with dotted names.

        A module reachable along two paths is listed once, unless ``remove_duplicate`` is
        False; modules in ``memo`` (a set, which collects those listed) are skipped.
        """
        return walk_modules(self, prefix, memo, remove_duplicate)

    def modules(self) -> Iterator[Module]:
        """This module and every submodule below it."""
        for _, module in self.named_modules():
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """The direct submodules, with their names."""
        seen: set[int] = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def children(self) -> Iterator[Module]:
        """The direct submodules."""
        for _, module in self.named_children():
            yield module

    def _named_members(
        self, registry: str, prefix: str, recurse: bool, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Any]]:
        return named_members(self, registry, prefix, recurse, remove_duplicate)

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Parameter]]:
        """Every parameter with its dotted name (``"features.0.weight"``); a parameter
        shared by two modules is listed once, unless ``remove_duplicate`` is False.
        """
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """Every parameter, e.g. to give to an optimizer."""
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Tensor]]:
        """Every buffer with its dotted name (persistent or not); one shared by two
        modules is listed once, unless ``remove_duplicate`` is False.
        """
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """Every buffer."""
        for _, buffer in self.named_buffers(recurse=recurse):
            yield buffer

    def get_submodule(self, target: str) -> Module:
        """The submodule at dotted path ``target`` (``""`` is this module)."""
        module: Module = self
        for part in target.split(".") if target else []:
            child = module._modules.get(part)
            if child is None:
                raise AttributeError(f"{type(module).__name__} has no submodule '{part}'")
            module = child
        return module

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at dotted path ``target`` (``"features.0.weight"``).

        Examples
        --------
        >>> from minitorch_accel import nn
        >>> nn.Sequential(nn.Linear(2, 3)).get_parameter("0.bias").shape
        (3,)
        """
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if not hasattr(module, name):
            raise AttributeError(f"{type(module).__name__} has no attribute `{name}`")
        param = getattr(module, name)
        if not isinstance(param, Parameter):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at dotted path ``target`` (``"bn.running_mean"``).

        Examples
        --------
        >>> from minitorch_accel import nn
        >>> nn.Sequential(nn.BatchNorm1d(3)).get_buffer("0.running_var")
        tensor([1., 1., 1.])
        """
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if not hasattr(module, name):
            raise AttributeError(f"{type(module).__name__} has no attribute `{name}`")
        if name not in module._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        buffer = module._buffers[name]
        assert buffer is not None
        return buffer

    # ------------------------------------------------------------ state
    def state_dict(self, prefix: str = "", keep_vars: bool = False) -> OrderedDict[str, Tensor]:
        """Parameters and persistent buffers by dotted name, as detached tensors that
        share memory with the module's (``keep_vars=True`` returns the tensors themselves).
        A module reachable along two paths appears under both names.
        """
        state: OrderedDict[str, Tensor] = OrderedDict()
        self._save_to(state, prefix, keep_vars)
        return state

    def _save_to(self, state: OrderedDict[str, Tensor], prefix: str, keep_vars: bool) -> None:
        for name, param in self._parameters.items():
            if param is not None:
                state[prefix + name] = param if keep_vars else param.detach()
        for name, buffer in self._buffers.items():
            if buffer is not None and name not in self._non_persistent_buffers:
                state[prefix + name] = buffer if keep_vars else buffer.detach()
        for name, module in self._modules.items():
            if module is not None:
                module._save_to(state, prefix + name + ".", keep_vars)

    def load_state_dict(
        self, state_dict: Mapping[str, Any], strict: bool = True
    ) -> IncompatibleKeys:
        """Copy values from ``state_dict`` into this module's parameters and buffers.

        Values are copied into the existing tensors (on their devices, cast to their
        dtypes); NumPy arrays are accepted as well as tensors. As in PyTorch (whose
        ``load_state_dict`` does ``param.copy_(value)``), a value of another numeric
        dtype is cast silently: float64 or int values loaded into a float32 parameter
        become float32 (rounded), nothing warns. A value that is not numbers (a string,
        None) is refused, naming its key and what it is.

        Parameters
        ----------
        state_dict : mapping of str to Tensor or array
            As returned by :meth:`state_dict`.
        strict : bool
            Require the keys to match exactly. Shapes must always match.

        Returns
        -------
        IncompatibleKeys
            ``(missing_keys, unexpected_keys)``, both empty after a strict load.

        Raises
        ------
        RuntimeError
            Listing missing and unexpected keys (when ``strict``), every key whose
            shape differs (name, expected shape, shape found) and every value that is not
            a tensor or array of numbers. The module is left unchanged.
        """
        targets = self.state_dict(keep_vars=True)
        return load_into(type(self).__name__, targets, state_dict, strict)

    # ------------------------------------------------------------ devices and dtypes
    def to(
        self: M,
        device: DeviceLike | DTypeLike | None = None,
        dtype: DTypeLike = None,
        non_blocking: bool = False,
    ) -> M:
        """Move every parameter, gradient and buffer to ``device`` and/or cast the
        floating-point ones to ``dtype``, in place; returns the module.

        The Parameter objects stay the same (only their arrays are replaced), so an
        optimizer built before the move still updates them. ``module.to(dtype)`` works
        as well as ``module.to(dtype=...)``.
        """
        dst, new_dtype = split_to_args(device, dtype)
        for module in self.modules():
            for t in [*module._parameters.values(), *module._buffers.values()]:
                if t is not None:
                    move_in_place(t, dst, new_dtype, non_blocking)
        return self

    def cpu(self: M) -> M:
        """Move everything to the host."""
        return self.to("cpu")

    def cuda(self: M, index: int = 0) -> M:
        """Move everything to GPU ``index``."""
        return self.to(f"cuda:{index}")

    def float(self: M) -> M:
        """Cast floating-point parameters and buffers to float32."""
        return self.to(dtype="float32")

    def double(self: M) -> M:
        """Cast floating-point parameters and buffers to float64."""
        return self.to(dtype="float64")

    def half(self: M) -> M:
        """Cast floating-point parameters and buffers to float16."""
        return self.to(dtype="float16")

    # ------------------------------------------------------------ modes and gradients
    def train(self: M, mode: bool = True) -> M:
        """Set training mode (``mode=True``) or evaluation mode on every submodule."""
        if not isinstance(mode, bool):
            raise TypeError(f"train(mode) expects a bool, got {type(mode).__name__}")
        for module in self.modules():
            module.training = mode
        return self

    def eval(self: M) -> M:
        """Set evaluation mode: the same as ``train(False)``."""
        return self.train(False)

    def requires_grad_(self: M, requires_grad: bool = True) -> M:
        """Turn gradient tracking of every parameter on or off (e.g. to freeze layers)."""
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the gradients of every parameter: set them to None (the default,
        cheaper) or to zeros.
        """
        for param in self.parameters():
            if param.grad is None:
                continue
            if set_to_none:
                param.grad = None
            else:  # a fresh tensor: a gradient object may be shared, never zero it in place
                param.grad = zeros_like(param.grad)

    def apply(self: M, fn: Callable[[Module], object]) -> M:
        """Call ``fn`` on every submodule (children first) and then on this module."""
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    # ------------------------------------------------------------ printing
    def extra_repr(self) -> str:
        """The text inside this module's parentheses in ``repr``; layers override it."""
        return ""

    def __repr__(self) -> str:
        return tree_repr(self)


def _is_raw_data(value: Any) -> bool:
    """True for a NumPy array or a list of numbers (not a list of tensors)."""
    if isinstance(value, np.ndarray):
        return True
    first = value[0] if value else None
    return isinstance(first, (int, float, list, np.ndarray))
