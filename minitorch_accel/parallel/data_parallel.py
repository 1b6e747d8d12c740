"""``nn.DataParallel``: the tower recipe as a Module, with autograd doing the reduction.

Each forward call

1. **scatters** the batch: consecutive slices along dim 0, one per device;
2. **replicates** the module: on every device but the first, the module's structure
   (built once) is given copies of the parameters made by the differentiable
   :meth:`Tensor.to`, so their gradients flow back to the module's own parameters;
3. runs the replicas **in threads**, one per device, inside that device's context;
4. **gathers** the outputs on ``output_device`` (``Tensor.to`` and ``cat``, both
   differentiable).

An ordinary ``loss.backward()`` then walks back through the gather, each replica and
each parameter copy, and autograd *sums* every replica's contribution into
``param.grad``. No averaging is needed: the gathered outputs feed one loss, so the sum is
the gradient of that loss. (:class:`TowerTrainer` computes one loss per tower and must
average with weights ``shard / batch``; here there is only one loss.)

Why this lives in :mod:`minitorch_accel.parallel` and not in :mod:`minitorch_accel.nn`:
it needs the threads and the batch split of the parallel layer, and layers import only
downward (``nn`` < ``parallel``). ``minitorch_accel.nn.DataParallel`` is the same class,
reached through a module-level ``__getattr__`` in ``nn/__init__.py`` that imports this
file the first time the name is used, never when ``nn`` itself is imported.
"""

from __future__ import annotations

import copy
import weakref
from collections.abc import Sequence
from typing import Any

from ..backends import Device, DeviceLike
from ..core.grad_mode import is_grad_enabled
from ..core.tensor import Tensor
from ..nn import Module
from ..ops.shape import cat
from .model_parallel import check_devices
from .replicate import shard_sizes
from .threads import TowerThread, run_towers, stop_threads


class _Replica:
    """The module's structure on one device; its tensors are re-bound at every forward."""

    def __init__(self, module: Module, device: Device) -> None:
        self.device = device
        originals = [*module.parameters(), *module.buffers()]
        # The structure is deep-copied, the tensors not (they are replaced per call).
        self.module: Module = copy.deepcopy(module, {id(t): t for t in originals})
        self.slots: list[tuple[dict[str, Any], str, Tensor, bool]] = []
        for mine, theirs in zip(self.module.modules(), module.modules(), strict=True):
            for name, p in theirs._parameters.items():
                if p is not None:
                    self.slots.append((mine._parameters, name, p, True))
            for name, b in theirs._buffers.items():
                if b is not None:
                    self.slots.append((mine._buffers, name, b, False))

    def bind(self) -> Module:
        """Point the replica at copies of the module's current tensors on its device:
        parameters through autograd (gradients flow back), buffers detached.
        """
        copies: dict[int, Tensor] = {}
        for registry, name, tensor, is_param in self.slots:
            if id(tensor) not in copies:
                source = tensor if is_param else tensor.detach()
                copies[id(tensor)] = source.to(self.device)
            registry[name] = copies[id(tensor)]
        return self.module


class DataParallel(Module):
    """Split each batch over several devices, run a replica of ``module`` on each, and
    gather the outputs; ``loss.backward()`` fills ``module``'s own gradients.

    Parameters
    ----------
    module : Module
        The model, with every parameter and buffer on ``device_ids[0]``.
    device_ids : sequence of str, int or Device, optional
        The devices, e.g. ``["cpu:1", "cpu:2"]`` or ``["cuda:0", "cuda:1"]`` (integers
        mean ``cuda:i``, as in PyTorch). Default: the device of ``module``'s first
        parameter alone (then the call is the module's own).
    output_device : str or Device, optional
        Where the outputs are gathered; default ``device_ids[0]``.
    dim : int
        The dim along which the batch is split; only 0 is supported.

    Attributes
    ----------
    module : Module
        The wrapped model (``state_dict`` keys start with ``module.``, as in PyTorch).
    device_ids : list of Device
    output_device : Device

    Notes
    -----
    As in PyTorch, the replica on ``device_ids[0]`` *is* ``module``: in-place updates of
    its buffers (batch norm's running statistics) are kept, those of the other replicas
    are lost, and each replica normalizes its shard with the shard's own statistics.
    Where we differ: a batch smaller than the number of devices uses only the first
    ``len(batch)`` devices (PyTorch does the same), and only ``dim=0`` is supported.

    If a replica raises, the call raises a ``RuntimeError`` naming the device; the
    module's parameters, gradients and buffers are then as before the call.

    The parameters travel to the other devices at every call (counted in
    :data:`minitorch_accel.backends.transfer_stats`), as in PyTorch;
    :class:`TowerTrainer` moves them as one flat buffer instead.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> model = nn.Linear(3, 2).to("cpu:1")
    >>> dp = nn.DataParallel(model, device_ids=["cpu:1", "cpu:2"])
    >>> out = dp(mta.randn(5, 3))
    >>> out.shape, out.device
    ((5, 2), device('cpu:1'))
    >>> out.sum().backward()
    >>> model.weight.grad.device
    device('cpu:1')
    """

    def __init__(
        self,
        module: Module,
        device_ids: Sequence[DeviceLike | int] | None = None,
        output_device: DeviceLike | int | None = None,
        dim: int = 0,
    ) -> None:
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DataParallel wraps a Module, got {type(module).__name__}")
        if dim != 0:
            raise ValueError(f"DataParallel splits the batch along dim 0 only, got dim={dim}")
        if device_ids is None:
            first = next(iter(module.parameters()), None)
            device_ids = [first.device if first is not None else Device("cpu")]
        devices = check_devices([_as_device(d) for d in device_ids], "DataParallel")
        for name, tensor in [*module.named_parameters(), *module.named_buffers()]:
            if tensor.device is not devices[0]:
                raise ValueError(
                    f"DataParallel needs the module's parameters and buffers on "
                    f"device_ids[0] ({devices[0]}), but {name} is on {tensor.device}; "
                    f"call module.to({str(devices[0])!r}) first"
                )
        self.module = module
        out = devices[0] if output_device is None else Device(_as_device(output_device))
        object.__setattr__(self, "device_ids", devices)
        object.__setattr__(self, "output_device", out)
        replicas = [_Replica(module, d) for d in devices[1:]]
        threads = [TowerThread(f"data-parallel-{i}-{d}") for i, d in enumerate(devices)]
        object.__setattr__(self, "_replicas", replicas)
        object.__setattr__(self, "_threads", threads if len(devices) > 1 else [])
        weakref.finalize(self, stop_threads, list(self._threads))

    device_ids: list[Device]
    output_device: Device
    _replicas: list[_Replica]
    _threads: list[TowerThread]

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        """Scatter, replicate, run the replicas in threads, gather (all differentiable)."""
        if len(self.device_ids) == 1:
            return self.module(*inputs, **kwargs)
        batch = _batch_size(inputs, kwargs)
        used = min(len(self.device_ids), batch)
        sizes = shard_sizes(batch, used)
        starts = [sum(sizes[:i]) for i in range(used + 1)]
        saved = [b.array.copy() for b in self.module.buffers()]  # restored on failure

        def run(i: int) -> Any:
            device = self.device_ids[i]
            lo, hi = starts[i], starts[i + 1]
            args = [_scatter(x, lo, hi, device) for x in inputs]
            named = {k: _scatter(v, lo, hi, device) for k, v in kwargs.items()}
            replica = self.module if i == 0 else self._replicas[i - 1].bind()
            return replica(*args, **named)

        try:
            outputs = run_towers(
                self.device_ids[:used],
                self._threads[:used],
                "forward",
                run,
                grad_enabled=is_grad_enabled(),
            )
        except RuntimeError:
            for buffer, array in zip(self.module.buffers(), saved, strict=True):
                buffer.array = array
            raise
        return _gather(outputs, self.output_device)

    def close(self) -> None:
        """Stop the replicas' threads and wait for them to end (also done, without the
        wait, when the wrapper is garbage-collected).
        """
        threads, self._threads[:] = list(self._threads), []
        stop_threads(threads)
        for thread in threads:
            thread.join()

    def extra_repr(self) -> str:
        """The devices and the output device."""
        return f"device_ids={[str(d) for d in self.device_ids]}, output_device={self.output_device}"


def _as_device(d: DeviceLike | int) -> DeviceLike:
    return f"cuda:{d}" if isinstance(d, int) else d


def _batch_size(inputs: Sequence[Any], kwargs: dict[str, Any]) -> int:
    for value in [*inputs, *kwargs.values()]:
        if isinstance(value, Tensor):
            if value.ndim == 0:
                raise ValueError("DataParallel splits inputs along dim 0; got a 0-d tensor")
            return len(value)
    raise TypeError("DataParallel needs at least one Tensor input to split along dim 0")


def _scatter(value: Any, lo: int, hi: int, device: Device) -> Any:
    """Rows ``lo:hi`` of a tensor, on ``device`` (differentiable); other values as they are."""
    if isinstance(value, Tensor):
        return value[lo:hi].to(device)
    return value


def _gather(outputs: list[Any], device: Device) -> Any:
    """The replicas' outputs on ``device``, concatenated along dim 0 (differentiable)."""
    first = outputs[0]
    if isinstance(first, Tensor):
        return cat([o.to(device) for o in outputs], dim=0)
    if isinstance(first, (tuple, list)):
        return type(first)(_gather(list(parts), device) for parts in zip(*outputs, strict=True))
    raise TypeError(
        f"DataParallel gathers Tensors or tuples/lists of them, got {type(first).__name__}"
    )


def data_parallel(
    module: Module,
    inputs: Any,
    device_ids: Sequence[DeviceLike | int] | None = None,
    output_device: DeviceLike | int | None = None,
    dim: int = 0,
    module_kwargs: dict[str, Any] | None = None,
) -> Any:
    """``module(*inputs, **module_kwargs)`` run as :class:`DataParallel` runs it, for one
    call (PyTorch's ``nn.parallel.data_parallel``): the batch split over ``device_ids``,
    a replica on each, the outputs gathered on ``output_device``; differentiable.

    Parameters
    ----------
    module : Module
        The model, with its parameters and buffers on ``device_ids[0]``.
    inputs : Tensor or tuple
        The positional inputs (one tensor, or a tuple of them).
    device_ids, output_device, dim
        As for :class:`DataParallel` (integers mean ``cuda:i``; only ``dim=0``).
    module_kwargs : dict, optional
        Keyword inputs, split like the positional ones.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> model = nn.Linear(3, 2).to("cpu:1")
    >>> x = mta.randn(5, 3, device="cpu:1")
    >>> out = nn.parallel.data_parallel(model, x, ["cpu:1", "cpu:2"])
    >>> out.shape, bool(mta.allclose(out, model(x)))
    ((5, 2), True)
    """
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    wrapper = DataParallel(module, device_ids, output_device, dim)
    try:
        return wrapper(*inputs, **(module_kwargs or {}))
    finally:
        wrapper.close()
