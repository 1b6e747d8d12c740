"""The core: :class:`~minitorch_accel.core.tensor.Tensor`, the graph's node
(:class:`~minitorch_accel.core.function.Function`), the backward walk, grad mode and the
factories.

Read in this order: :mod:`.tensor_data` and :mod:`.tensor` (an array, a device, a
gradient), :mod:`.function` (one differentiable op), :mod:`.backward` (the walk that
sends gradients back). The core sits on the backends and below the ops: the Tensor's
operators (``+``, ``@``, ``[]``) are installed by
:func:`minitorch_accel.ops.tensor_methods.install_tensor_methods`.
"""
