"""The graph's node: :class:`Function`, one differentiable operation.

A :class:`Function` computes its ``forward`` on raw backend arrays (through ``self.xp``,
so one implementation serves NumPy and CuPy) and its ``backward`` with Tensor
operations, so that the backward pass can itself be recorded (``create_graph=True``)
and differentiated again.
"""

from __future__ import annotations

import functools
import traceback
import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from ..backends.fast_paths import name_of as fast_path_name
from ..backends.fast_paths import switch as _fast
from .grad_mode import _anomaly_mode, _grad_mode
from .tensor import Tensor
from .versions import VersionCounter, _shared_counter

if TYPE_CHECKING:
    from ..backends import Device

F = TypeVar("F", bound=Callable[..., Any])


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

    A subclass written PyTorch's way, ``forward(ctx, ...)`` and ``backward(ctx, ...)``
    as staticmethods on Tensors, gets the ``apply`` of
    :mod:`~minitorch_accel.core.custom_function` instead.
    """

    #: The name a backend's fast path for this op is registered under (see
    #: :mod:`minitorch_accel.backends.fast_paths`). The package's own ops get their class
    #: name; a Function defined elsewhere its module-qualified name, so that a user's
    #: ``Relu`` never picks up the package's ``Relu`` fast path by sharing its name.
    op_name: str = "Function"
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

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "op_name" not in cls.__dict__:
            cls.op_name = fast_path_name(cls)
        if isinstance(cls.__dict__.get("forward"), staticmethod):  # PyTorch's style
            from . import custom_function  # it imports this module: import on use

            cls.apply = classmethod(custom_function.apply)  # type: ignore[assignment]

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
        backend = device.backend
        fast = backend.fast_forwards.get(cls.op_name) if _fast.enabled else None
        if not backend.needs_device_context:
            data = fn.forward(*arrays, **params) if fast is None else fast(fn, *arrays, **params)
        else:  # run on the GPU the tensors live on, not on CuPy's current one
            with backend.device_context(device):
                data = (
                    fn.forward(*arrays, **params) if fast is None else fast(fn, *arrays, **params)
                )
        if not (requires_grad and _grad_mode.enabled):
            out = Tensor._make(data, device, False, None)
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
        out = Tensor._make(data, device, True, fn)
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
        return Tensor._make(self._out_data, self.device, False, None)

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


# ------------------------------------------------------------------ the Tensor's own nodes
class Cast(Function):
    """``a`` as another dtype; the gradient is cast back to ``a``'s dtype."""

    saves_inputs = False  # backward needs no input's values

    def forward(self, a: Any, *, dtype: Any) -> Any:
        """``a`` converted to ``dtype``."""
        return a.astype(dtype)

    def backward(self, grad: Tensor) -> Tensor:
        """The gradient unchanged: the backward walk casts it to the input's dtype."""
        return grad


class Clone(Function):
    """A copy of ``a`` with its own memory; the gradient passes unchanged."""

    saves_inputs = False  # backward needs no input's values

    def forward(self, a: Any) -> Any:
        """A copy of ``a``."""
        return a.copy()

    def backward(self, grad: Tensor) -> Tensor:
        """The gradient unchanged."""
        return grad


class Alias(Function):
    """``a`` itself under another name (``Tensor(tensor)``): a view of all of ``a``;
    the gradient passes unchanged (PyTorch's ``AliasBackward0``).
    """

    saves_inputs = False  # backward needs no input's values
    returns_view = True

    def forward(self, a: Any) -> Any:
        """A new array object on ``a``'s memory."""
        return a.view()

    def backward(self, grad: Tensor) -> Tensor:
        """The gradient unchanged."""
        return grad


class Copy(Function):
    """The recorded ``old.copy_(src)``: the output holds ``src``'s values (already on
    ``old``'s device, dtype and shape), so ``src`` gets the whole gradient and ``old``
    (the history the copy overwrote) a zero one, as PyTorch's ``CopyBackwards``.
    """

    saves_inputs = False  # backward needs no input's values

    def forward(self, old: Any, src: Any) -> Any:
        """``src`` (copied into the tensor's storage by ``copy_``)."""
        return src

    def backward(self, grad: Tensor) -> tuple[Tensor | None, Tensor]:
        """Zeros for the overwritten values, the gradient itself for ``src``."""
        overwritten = grad.new_zeros(grad.shape) if self.needs_input_grad[0] else None
        return overwritten, grad


class ToDevice(Function):
    """The graph node of :meth:`Tensor.to` across devices: gradients travel back."""

    saves_inputs = False

    def backward(self, grad_output: Tensor) -> Tensor:
        """The gradient, moved back to the device the input came from."""
        return grad_output.to(self.device)
