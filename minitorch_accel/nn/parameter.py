"""Parameter: a Tensor that a :class:`~minitorch_accel.nn.Module` learns."""

from __future__ import annotations

import numpy as np

from ..backends.memory_tracker import tracker as _memory
from ..core.convert import HOST
from ..core.defaults import get_default_dtype
from ..core.tensor import Tensor
from ..core.versions import version_counter


class Parameter(Tensor):
    """A tensor that is a learnable parameter of a module.

    Assigning a ``Parameter`` as an attribute of a :class:`~minitorch_accel.nn.Module`
    registers it, so that it appears in :meth:`~minitorch_accel.nn.Module.parameters`
    and in the ``state_dict``. It shares memory with the tensor it wraps.

    Parameters
    ----------
    data : Tensor, optional
        The initial values (shared, not copied). Default: an empty tensor of the default
        dtype (:func:`~minitorch_accel.get_default_dtype`), as PyTorch.
    requires_grad : bool
        Whether gradients are computed for it (default True).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.nn import Parameter
    >>> w = Parameter(mta.zeros(2))
    >>> w.requires_grad, w.is_leaf
    (True, True)
    """

    __slots__ = ()

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        if data is None:
            data = Tensor._make(np.empty((0,), dtype=get_default_dtype()), HOST, False, None)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter wraps a Tensor, got {type(data).__name__}")
        self.array = data.array
        self.device = data.device
        self._version_counter = version_counter(data)  # the same storage
        self._hooks = None
        if _memory.enabled:
            _memory.relabel(self.array, self.device, "parameters")
        self.grad = None
        self._node = None
        self.requires_grad = False
        if requires_grad:
            self.requires_grad_(True)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()


class Buffer(Tensor):
    """A tensor that is state of a module but not learned (PyTorch 2.5's ``nn.Buffer``):
    ``self.running = nn.Buffer(t)`` registers it as a buffer, like
    :meth:`~minitorch_accel.nn.Module.register_buffer`; ``persistent=False`` keeps it
    out of the ``state_dict``.

    It shares memory with ``data`` (detached, as PyTorch), and it is what the module
    holds afterwards (PyTorch's registered buffer is a plain ``Tensor``; here it is this
    Tensor subclass, which behaves the same).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> m = mta.nn.Module()
    >>> m.count = mta.nn.Buffer(mta.zeros(2))
    >>> m.scratch = mta.nn.Buffer(mta.ones(1), persistent=False)
    >>> [name for name, _ in m.named_buffers()], list(m.state_dict())
    (['count', 'scratch'], ['count'])
    """

    __slots__ = ("persistent",)

    def __init__(self, data: Tensor | None = None, *, persistent: bool = True) -> None:
        if data is None:
            data = Tensor._make(np.empty((0,), dtype=get_default_dtype()), HOST, False, None)
        if not isinstance(data, Tensor):
            raise TypeError(f"Buffer wraps a Tensor, got {type(data).__name__}")
        self.array = data.array
        self.device = data.device
        self._version_counter = version_counter(data)  # the same storage (a detach)
        self._hooks = None
        self.grad = None
        self._node = None
        self.requires_grad = data.requires_grad  # detached, its flag kept (as PyTorch)
        self.persistent = bool(persistent)
