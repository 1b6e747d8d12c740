"""The :class:`Optimizer` base: parameter groups, per-parameter state, checkpoints.

An optimizer holds *parameter groups*: dicts with a ``"params"`` list and the
hyper-parameters of those parameters (``lr``, ``momentum``...), so that, for example, the
last layer of a network can learn faster than the rest. Its per-parameter ``state``
(momentum buffers, Adam's moving averages) is keyed by the parameter tensor itself.

Subclasses implement :meth:`Optimizer.step`, the textbook update: for every parameter
with a gradient (:meth:`Optimizer.params_with_grad`), ``p.array`` changes in place from
the raw gradient with array arithmetic, which runs alike on NumPy and CuPy arrays.
Gradients are read, never written: one gradient tensor may be shared by several
parameters.

The two tiers: a backend may register a faster step for an optimizer under the
optimizer's class name (``register_fast("cpu", "SGD", fast)``, see
:mod:`~minitorch_accel.backends.fast_paths`): scratch buffers, several threads, one GPU
launch for every tensor. This module is the one place it is looked up: while
:func:`~minitorch_accel.fast_paths` is on and every parameter's backend has such a step,
``opt.step()`` calls it on raw arrays instead of the subclass's ``step``; otherwise the
subclass's ``step`` runs. Both give the same values (equal in float64, tested).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import numpy as np

from ..backends import Device
from ..backends.fast_paths import name_of as fast_path_name
from ..backends.fast_paths import switch as _fast
from ..backends.memory_tracker import tracker as _memory
from ..core.grad_mode import enable_grad, no_grad
from ..core.tensor import Tensor
from ..core.versions import bump_version

ParamsLike = Iterable[Tensor] | Iterable[dict[str, Any]]


class _Required:
    """Marks a hyper-parameter that every parameter group must give (e.g. ``lr``)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required: Any = _Required()


class Optimizer:
    """Base class of every optimizer.

    Parameters
    ----------
    params : iterable of Tensor, or iterable of dict
        The tensors to optimize, or parameter groups: dicts holding ``"params"`` (an
        iterable of tensors) and hyper-parameters that override ``defaults`` for them.
    defaults : dict
        The default hyper-parameters of every group.

    Attributes
    ----------
    param_groups : list of dict
        One dict per group: ``"params"`` (a list of tensors) and its hyper-parameters.
        Schedulers change ``group["lr"]`` here between steps.
    state : dict
        Per-parameter state, keyed by the parameter tensor.
    defaults : dict
        The hyper-parameters a group gets when it does not set them.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.optim import SGD
    >>> w = mta.tensor([1.0, 2.0], requires_grad=True)
    >>> b = mta.tensor([0.5], requires_grad=True)
    >>> opt = SGD([{"params": [w]}, {"params": [b], "lr": 0.01}], lr=0.1)
    >>> [g["lr"] for g in opt.param_groups]
    [0.1, 0.01]
    """

    #: State entries that hold one value per element of the parameter (same shape).
    per_element_state: tuple[str, ...] = ()

    #: False for an optimizer whose step calls its closure many times (L-BFGS): a fast
    #: tier evaluates the closure once and then steps without it, so such a step is
    #: never routed through one.
    has_fast_step: bool = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "step" in vars(cls):  # the backend's fast step if it has one; what a step
            # allocates counts as "optimizer state"
            step = vars(cls)["step"]
            if cls.has_fast_step:
                step = _fast_step_or(step)
            cls.step = _counted_as_optimizer_state(step)  # type: ignore[method-assign]

    def __init__(self, params: ParamsLike, defaults: dict[str, Any]) -> None:
        self.defaults = dict(defaults)
        self.state: dict[Tensor, dict[str, Any]] = {}
        self.param_groups: list[dict[str, Any]] = []
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors "
                "or dicts, but got a single Tensor; wrap it in a list: [tensor]"
            )
        if callable(getattr(params, "parameters", None)):  # a Module, passed by mistake
            raise TypeError(
                f"the optimizer got a {type(params).__name__} model; pass its parameters: "
                f"{type(self).__name__}(model.parameters(), ...)"
            )
        groups: list[Any] = list(params)
        if len(groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    # ------------------------------------------------------------------ groups
    def add_param_group(self, param_group: dict[str, Any]) -> None:  # noqa: C901  (one check per way a group can be malformed, each with its message)
        """Add a group of parameters, for example the layers unfrozen while fine-tuning.

        Parameters
        ----------
        param_group : dict
            ``"params"`` (a Tensor or an iterable of Tensors) and, optionally,
            hyper-parameters; missing ones come from :attr:`defaults`.

        Raises
        ------
        TypeError
            If ``param_group`` is not a dict, ``"params"`` is a set (its order would change
            between runs) or holds something other than tensors.
        ValueError
            If a parameter is not a leaf, appears twice, or already belongs to another
            group, or if a required hyper-parameter is missing.
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"a parameter group is a dict, got {type(param_group).__name__}")
        params = param_group.get("params")
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, (set, frozenset)):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the "
                "ordering of tensors in sets will change between runs; use a list"
            )
        elif params is None:
            raise ValueError("a parameter group needs a 'params' entry")
        params = list(params)
        seen: set[int] = set()
        for i, p in enumerate(params):
            if not isinstance(p, Tensor):
                raise TypeError(
                    f"optimizer can only optimize Tensors, but params[{i}] is a {type(p).__name__}"
                )
            if not p.is_leaf:
                raise ValueError(
                    f"can't optimize a non-leaf Tensor (params[{i}] was computed by "
                    f"{p.grad_fn!r}); optimize the tensors it was computed from, or detach it"
                )
            if id(p) in seen:
                raise ValueError(f"params[{i}] appears twice in the same parameter group")
            seen.add(id(p))
        group = dict(param_group)
        group["params"] = params
        for name, default in self.defaults.items():
            if default is required and name not in group:
                raise ValueError(
                    "parameter group didn't specify a value of required optimization "
                    f"parameter {name}"
                )
            group.setdefault(name, default)
        for other in self.param_groups:
            if any(id(p) in seen for p in other["params"]):
                raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    # ------------------------------------------------------------------ gradients
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the gradients of every parameter, before the next backward pass.

        Parameters
        ----------
        set_to_none : bool
            True (default, and cheapest) sets every ``p.grad`` to None. False gives each
            parameter a *new* tensor of zeros: gradients are never modified in place,
            because one gradient tensor may be shared by several parameters.
        """
        from ..core.factories import zeros_like

        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                p.grad = None if set_to_none else zeros_like(p.grad)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient, once.

        Parameters
        ----------
        closure : callable, optional
            Re-evaluates the model and returns the loss (it runs with gradients
            enabled, before the update).

        Returns
        -------
        The closure's loss, or None.
        """
        raise NotImplementedError

    def params_with_grad(self, group: dict[str, Any]) -> Iterator[tuple[Tensor, Any]]:
        """Each parameter of ``group`` that has a gradient, with its raw gradient array.

        The loop body runs on the parameter's device (:meth:`Device.guard
        <minitorch_accel.backends.Device.guard>`), and the parameter's version is bumped
        first, as it is about to change in place (see :func:`grad_array`).

        Parameters
        ----------
        group : dict
            One of :attr:`param_groups`.

        Yields
        ------
        (Tensor, array)
            The parameter and its gradient's array (read it, never write it).

        Examples
        --------
        >>> import minitorch_accel as mta
        >>> from minitorch_accel.optim import SGD
        >>> w, b = mta.tensor([1.0, 2.0], requires_grad=True), mta.tensor([0.0], requires_grad=True)
        >>> w.grad = mta.tensor([0.5, 0.5])
        >>> opt = SGD([w, b], lr=0.1)
        >>> [(p.shape, g.tolist()) for p, g in opt.params_with_grad(opt.param_groups[0])]
        [((2,), [0.5, 0.5])]
        """
        for p in group["params"]:
            grad = grad_array(p)
            if grad is not None:
                with p.device.guard():
                    yield p, grad

    def count_step(self, p: Tensor, *buffers: str) -> dict[str, Any]:
        """The state of ``p`` with this step counted: made on the first step with
        ``"step": 0`` and, for each name in ``buffers`` it lacks, a tensor of zeros shaped
        like ``p``; then ``state["step"]`` goes up by one.

        Examples
        --------
        >>> import minitorch_accel as mta
        >>> from minitorch_accel.optim import Adam
        >>> w = mta.tensor([1.0, 2.0], requires_grad=True)
        >>> state = Adam([w]).count_step(w, "exp_avg")
        >>> state["step"], state["exp_avg"]
        (1, tensor([0., 0.]))
        """
        from ..core.factories import zeros_like

        state = self.state.get(p)
        if state is None:
            state = self.state[p] = {"step": 0}
        for name in buffers:
            if state.get(name) is None:
                state[name] = zeros_like(p)
        state["step"] = int(state["step"]) + 1
        return state

    def set_state(self, p: Tensor, name: str, value: Any) -> Any:
        """Store the raw array ``value`` (shaped like ``p``) as ``p``'s state ``name``:
        written into the state tensor already there (so tensors taken from
        :meth:`state_dict` stay live), or copied into a new one. Returns the stored array.

        Examples
        --------
        >>> import numpy as np
        >>> import minitorch_accel as mta
        >>> from minitorch_accel.optim import SGD
        >>> w = mta.tensor([1.0, 2.0], requires_grad=True)
        >>> opt = SGD([w], lr=0.1, momentum=0.9)
        >>> opt.set_state(w, "momentum_buffer", np.array([3.0, 4.0], np.float32))
        array([3., 4.], dtype=float32)
        >>> opt.state[w]["momentum_buffer"]
        tensor([3., 4.])
        """
        state = self.state.setdefault(p, {})
        buf = state.get(name)
        if buf is None:
            buf = state[name] = Tensor._make(value.copy(), p.device, False, None)
        else:
            buf.array[...] = value
        return buf.array

    def _run_closure(self, closure: Callable[[], Any] | None) -> Any:
        if closure is None:
            return None
        with enable_grad(), _memory.category(None):  # the closure's forward is no state
            return closure()

    # ------------------------------------------------------------------ checkpoints
    def state_dict(self) -> dict[str, Any]:
        """The optimizer's state and hyper-parameters, ready for :func:`~minitorch_accel.save`.

        Parameters are referred to by their integer position, counted across all groups
        in order (as PyTorch does), so the dict can be loaded into an optimizer built
        over another copy of the model.

        Returns
        -------
        dict
            ``{"state": {index: {name: value}}, "param_groups": [group, ...],
            "optimizer": class name}``; each group lists ``"params"`` as indices. State
            tensors are the live buffers, not copies: save (or clone) them before
            training further. (PyTorch's dict has no ``"optimizer"`` entry; ours names
            the class so that loading it into another kind of optimizer is refused.)
        """
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            ids = []
            for p in group["params"]:
                index.setdefault(id(p), len(index))
                ids.append(index[id(p)])
            packed["params"] = ids
            groups.append(packed)
        state = {index[id(p)]: dict(s) for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups, "optimizer": type(self).__name__}

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """Restore a :meth:`state_dict`, to continue training where it stopped.

        State tensors are copied onto each parameter's device (and floating-point ones
        converted to its dtype); hyper-parameters come from ``state_dict``, parameters
        stay those of this optimizer.

        Raises
        ------
        ValueError
            If the state dict comes from another kind of optimizer, or the number of
            groups, the size of a group, a parameter index or the shape of a state
            buffer does not match this optimizer.
        """
        if not isinstance(state_dict, Mapping) or not {"state", "param_groups"} <= set(state_dict):
            raise ValueError(
                "an optimizer state dict is a dict with 'state' and 'param_groups' entries"
            )
        saved_groups = list(state_dict["param_groups"])
        self._check_same_kind(state_dict.get("optimizer"), saved_groups)
        if len(saved_groups) != len(self.param_groups):
            raise ValueError(
                f"loaded state dict has {len(saved_groups)} parameter group(s), but this "
                f"optimizer has {len(self.param_groups)}"
            )
        by_index: dict[int, Tensor] = {}
        for i, (group, saved) in enumerate(zip(self.param_groups, saved_groups, strict=True)):
            if len(group["params"]) != len(saved["params"]):
                raise ValueError(
                    f"loaded state dict contains a parameter group {i} of "
                    f"{len(saved['params'])} parameter(s) that doesn't match the size of "
                    f"this optimizer's group ({len(group['params'])} parameter(s))"
                )
            for saved_index, p in zip(saved["params"], group["params"], strict=True):
                by_index[int(saved_index)] = p
        new_state: dict[Tensor, dict[str, Any]] = {}
        for key, entries in state_dict["state"].items():
            if int(key) not in by_index:
                raise ValueError(
                    f"loaded state dict has state for parameter {key}, which is in none of "
                    f"its parameter groups (indices 0..{len(by_index) - 1})"
                )
            p = by_index[int(key)]
            new_state[p] = {
                name: self._restore_value(p, int(key), name, value)
                for name, value in entries.items()
            }
        new_groups = []
        for group, saved in zip(self.param_groups, saved_groups, strict=True):
            restored = {k: v for k, v in saved.items() if k != "params"}
            restored["params"] = group["params"]
            new_groups.append(restored)
        self.state = new_state
        self.param_groups = new_groups

    def _check_same_kind(self, saved_type: Any, saved_groups: list[dict[str, Any]]) -> None:
        """Refuse the state dict of another kind of optimizer (a class and its subclasses,
        like Adam and AdamW, are one kind); without a class name, refuse groups that lack
        some of this optimizer's hyper-parameters.
        """
        mine = type(self).__name__
        if saved_type is not None:
            kin = [c.__name__ for c in type(self).__mro__] + _subclass_names(type(self))
            if saved_type in kin:
                return
            raise ValueError(
                f"this state dict was saved by a {saved_type} optimizer and cannot be loaded "
                f"into {mine}: their state and hyper-parameters differ. Build a {saved_type} "
                "to resume from it, or start this optimizer afresh."
            )
        keys: set[str] = set()
        for group in saved_groups:
            if not isinstance(group, Mapping):
                raise ValueError(f"a parameter group of the state dict is a {type(group).__name__}")
            keys |= set(group) - {"params"} - _SCHEDULER_KEYS
        missing = sorted(set(self.defaults) - keys)
        foreign = sorted(keys - set(self.defaults))
        if missing and foreign:
            guess = _optimizer_with(set(foreign))
            raise ValueError(
                f"this state dict was saved by {guess or 'another kind of optimizer'}, "
                f"not by {mine}: its parameter groups have {foreign} where {mine} has "
                f"{missing}; load it into the optimizer that saved it"
            )
        if missing:
            raise ValueError(
                f"this state dict's parameter groups lack {mine}'s hyper-parameter(s) "
                f"{', '.join(missing)}: it was saved by another kind of optimizer"
            )

    def _restore_value(self, p: Tensor, index: int, name: str, value: Any) -> Any:
        """A copy of one state entry, placed on ``p``'s device with ``p``'s float dtype."""
        from ..core.factories import tensor

        if isinstance(value, np.ndarray):
            value = Tensor._from_data(value)
        if not isinstance(value, Tensor):
            return value
        if name in self.per_element_state and value.shape != p.shape:
            raise ValueError(
                f"state '{name}' of parameter {index} has shape {value.shape}, but the "
                f"parameter has shape {p.shape}"
            )
        dtype = p.dtype if value.dtype.kind == "f" and name != "step" else value.dtype
        return tensor(value, dtype=dtype, device=p.device)

    def __repr__(self) -> str:
        lines = [type(self).__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines.extend(f"    {k}: {group[k]}" for k in sorted(group) if k != "params")
        lines.append(")")
        return "\n".join(lines)


def _subclass_names(cls: type) -> list[str]:
    """The names of every subclass of ``cls``, at any depth."""
    names: list[str] = []
    sub: type
    for sub in cls.__subclasses__():
        names += [sub.__name__, *_subclass_names(sub)]
    return names


def _fast_step_or(step: Callable[..., Any]) -> Callable[..., Any]:
    """``step`` (the reference), or the backends' fast step for this optimizer when the
    fast paths are on and every parameter with a gradient has one (see :func:`_fast_steps`).
    """

    @functools.wraps(step)
    def step_on_a_tier(self: Optimizer, closure: Callable[[], Any] | None = None) -> Any:
        if not _fast.enabled:
            return step(self, closure)
        loss = self._run_closure(closure)  # first: it computes the gradients
        plan = _fast_steps(self)
        if plan is None:
            step(self, None)
            return loss
        with no_grad():
            for fast, group, params in plan:
                _run_fast_step(self, fast, group, params)
        return loss

    return step_on_a_tier


def _fast_steps(
    opt: Optimizer,
) -> list[tuple[Callable[..., None], dict[str, Any], list[Tensor]]] | None:
    """The one place the optimizers' fast tier is looked up: ``(fast step, group, the
    group's parameters with a gradient on one device)`` for every group and device, or
    None when some parameter's backend has no fast step registered under this
    optimizer's name (that of its class, or of the classes it inherits ``step`` from).
    """
    names = _fast_names(type(opt))
    plan = []
    for group in opt.param_groups:
        by_device: dict[Device, list[Tensor]] = {}
        for p in group["params"]:
            if p.grad is not None:
                by_device.setdefault(p.device, []).append(p)
        for device, params in by_device.items():
            table = device.backend.fast_forwards
            fast = next((table[n] for n in names if n in table), None)
            if fast is None:
                return None
            plan.append((fast, group, params))
    return plan


def _fast_names(cls: type) -> tuple[str, ...]:
    """The names a fast step of ``cls`` may be registered under: its own, then those of
    its bases up to the one that defines ``step`` (a subclass of SGD that keeps SGD's
    step uses SGD's fast step; one with a step of its own does not).
    """
    names = _FAST_NAMES.get(cls)
    if names is None:
        found = []
        for c in cls.__mro__:
            found.append(fast_path_name(c))  # a user's own "SGD" is not the package's
            if "step" in vars(c):
                break
        names = _FAST_NAMES[cls] = tuple(found)
    return names


_FAST_NAMES: dict[type, tuple[str, ...]] = {}


def _run_fast_step(
    opt: Optimizer, fast: Callable[..., None], group: dict[str, Any], params: list[Tensor]
) -> None:
    """Call ``fast(device, group, params, grads, states)`` on raw arrays; each state is a
    dict of raw arrays (and numbers) that the fast step updates in place and may add
    entries to; new arrays become state tensors here.
    """
    device = params[0].device
    grads = [grad_array(p) for p in params]
    states = [
        {k: v.array if isinstance(v, Tensor) else v for k, v in opt.state.get(p, {}).items()}
        for p in params
    ]
    with device.guard():
        fast(device, group, [p.array for p in params], grads, states)
    for p, raw in zip(params, states, strict=True):
        if not raw:
            continue
        state = opt.state.setdefault(p, {})
        for name, value in raw.items():
            old = state.get(name)
            if isinstance(old, Tensor) and old.array is value:
                continue
            if value is None or isinstance(value, (bool, int, float)):
                state[name] = value
            else:
                state[name] = Tensor._make(value, device, False, None)


def _counted_as_optimizer_state(step: Callable[..., Any]) -> Callable[..., Any]:
    """``step``, with what it allocates counted as optimizer state by
    :mod:`minitorch_accel.memory` while memory tracking is on.
    """

    @functools.wraps(step)
    def counted_step(self: Optimizer, *args: Any, **kwargs: Any) -> Any:
        if not _memory.enabled:
            return step(self, *args, **kwargs)
        with _memory.category("optimizer state"):
            return step(self, *args, **kwargs)

    return counted_step


def grad_array(p: Tensor) -> Any:
    """The raw gradient array of ``p``, or None; checks its device and shape.

    Every optimizer calls it for each parameter it is about to update in place, so it
    also bumps ``p``'s version counter: a backward through a graph that saved ``p``
    before this update then raises instead of using the new values.

    Raises
    ------
    RuntimeError
        If the gradient lives on another device or has another shape than ``p``.
    """
    g = p.grad
    if g is None:
        return None
    if g.device is not p.device:
        raise RuntimeError(
            f"a parameter on {p.device} has its gradient on {g.device}; move the gradient "
            "to the parameter's device"
        )
    if g.array.shape != p.array.shape:
        raise RuntimeError(f"a parameter of shape {p.shape} has a gradient of shape {g.shape}")
    bump_version(p)
    return g.array


def check_non_negative(name: str, value: float) -> None:
    """Raise ``ValueError("Invalid <name>: <value>")`` for a negative hyper-parameter."""
    if not value >= 0.0:
        raise ValueError(f"Invalid {name}: {value}")


#: Group entries that learning-rate schedulers add (not an optimizer's own).
_SCHEDULER_KEYS = {"initial_lr", "max_lr", "min_lr", "base_momentum", "max_momentum"}


def _optimizer_with(hyperparameters: set[str]) -> str | None:
    """The name of an optimizer class whose constructor takes all of ``hyperparameters``."""
    import inspect

    pending: list[type] = list(Optimizer.__subclasses__())
    while pending:
        cls = pending.pop(0)
        pending.extend(cls.__subclasses__())
        if hyperparameters <= set(inspect.signature(cls).parameters):
            return f"{cls.__name__} (by its hyper-parameters)"
    return None
