"""Parameter: a Tensor that a :class:`~minitorch_accel.nn.Module` learns."""

from __future__ import annotations

import numpy as np

from ..backends.memory_tracker import tracker as _memory
from ..core.convert import HOST
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
        The initial values (shared, not copied). Default: an empty float32 tensor.
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
            data = Tensor._make(np.empty((0,), dtype=np.float32), HOST, False, None)
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
