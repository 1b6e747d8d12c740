"""The ops: differentiable operations as :class:`~minitorch_accel.core.function.Function`
subclasses, and the functions that call them.

Importing this package gives the core :class:`~minitorch_accel.core.tensor.Tensor` its
operators (``+``, ``@``, ``[]``) and op methods, in one step: the core sits below the
ops, so it cannot name them itself.
"""

from ..core.tensor import Tensor
from .tensor_methods import install_tensor_methods

install_tensor_methods(Tensor)
