"""The CuPy backend's optimizer fast paths: SGD and Adam in one kernel per parameter,
or in one launch for every parameter (a multi-tensor kernel).
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy

from . import kernels as K
from .fast_base import FastPathBase


class OptimizerFastPaths(FastPathBase):
    """SGD and Adam updates on CuPy arrays (parameters and state change in place)."""

    def __init__(self, cupy: Any, switch_devices: bool = True) -> None:
        super().__init__(cupy, switch_devices)
        self._last_table: tuple[tuple[int, ...], list[Any]] | None = None
        self._plans: dict[str, list[tuple[str, bool, bool]]] = {}

    def sgd_update(
        self,
        xp: Any,
        param: Any,
        grad: Any,
        momentum_buffer: Any,
        lr: float,
        momentum: float,
        dampening: float,
        nesterov: bool,
        weight_decay: float,
        maximize: bool,
        first_step: bool,
    ) -> None:
        """One SGD step in one kernel; ``param`` and ``momentum_buffer`` change in place."""
        args = (
            grad,
            lr,
            momentum,
            dampening,
            weight_decay,
            int(nesterov),
            int(maximize),
            int(first_step),
        )
        with self.on(param):
            if momentum != 0:
                self._kernel(K.SGD_MOMENTUM)(*args, param, momentum_buffer)
            else:
                self._kernel(K.SGD)(*args, param)

    def adam_update(
        self,
        xp: Any,
        param: Any,
        grad: Any,
        exp_avg: Any,
        exp_avg_sq: Any,
        max_exp_avg_sq: Any,
        step: int,
        lr: float,
        beta1: float,
        beta2: float,
        eps: float,
        weight_decay: float,
        decoupled_weight_decay: bool,
        amsgrad: bool,
        maximize: bool,
    ) -> None:
        """One Adam/AdamW step in one kernel; the parameter and moments change in place."""
        step_size = lr / (1.0 - beta1**step)
        bias2_sqrt = math.sqrt(1.0 - beta2**step)
        args = (
            grad,
            lr,
            beta1,
            beta2,
            eps,
            weight_decay,
            step_size,
            bias2_sqrt,
            int(decoupled_weight_decay),
            int(maximize),
        )
        with self.on(param):
            if amsgrad:
                self._kernel(K.ADAM_AMSGRAD)(*args, param, exp_avg, exp_avg_sq, max_exp_avg_sq)
            else:
                self._kernel(K.ADAM)(*args, param, exp_avg, exp_avg_sq)

    def sgd_update_many(
        self,
        params: list[Any],
        grads: list[Any],
        bufs: list[Any] | None,
        lr: float,
        momentum: float,
        dampening: float,
        nesterov: bool,
        weight_decay: float,
        maximize: bool,
        first_step: bool,
    ) -> bool:
        """:meth:`sgd_update` for many tensors in one launch; False (nothing done) where
        the tensors do not share one float32/float64 dtype or are not C-contiguous.
        """
        arrays = {"grad": grads, "param": params}
        if bufs is not None:
            arrays["buf"] = bufs
        return self._run_many(
            "sgd" if bufs is None else "sgd_momentum",
            arrays,
            {
                "lr": lr,
                "momentum": momentum,
                "dampening": dampening,
                "weight_decay": weight_decay,
                "nesterov": nesterov,
                "maximize": maximize,
                "first_step": first_step,
            },
        )

    def adam_update_many(
        self,
        params: list[Any],
        grads: list[Any],
        exp_avgs: list[Any],
        exp_avg_sqs: list[Any],
        max_exp_avg_sqs: list[Any] | None,
        step: int,
        lr: float,
        beta1: float,
        beta2: float,
        eps: float,
        weight_decay: float,
        decoupled_weight_decay: bool,
        amsgrad: bool,
        maximize: bool,
    ) -> bool:
        """:meth:`adam_update` for many tensors that share one ``step`` in one launch;
        False (nothing done) where :meth:`sgd_update_many` would give False.
        """
        arrays = {"grad": grads, "param": params, "exp_avg": exp_avgs, "exp_avg_sq": exp_avg_sqs}
        if amsgrad:
            arrays["max_exp_avg_sq"] = max_exp_avg_sqs or []
        return self._run_many(
            "adam_amsgrad" if amsgrad else "adam",
            arrays,
            {
                "lr": lr,
                "beta1": beta1,
                "beta2": beta2,
                "eps": eps,
                "weight_decay": weight_decay,
                "step_size": lr / (1.0 - beta1**step),
                "bias2_sqrt": math.sqrt(1.0 - beta2**step),
                "decoupled": decoupled_weight_decay,
                "maximize": maximize,
            },
        )

    def _run_many(self, kind: str, arrays: dict[str, list[Any]], scalars: dict[str, Any]) -> bool:
        names = K.MULTI_TENSOR[kind][1]
        params = arrays["param"]
        dtype, count = params[0].dtype, len(params)
        if dtype.char not in "fd" or any(len(arrays[name]) != count for name in names):
            return False
        if not self._host_scalars(scalars):
            return False  # the per-tensor kernels read device scalars (a captured step)
        sizes = [p.size for p in params]
        for name in names:
            for a, size in zip(arrays[name], sizes, strict=True):
                if a.dtype != dtype or a.size != size or not a.flags.c_contiguous:
                    return False
        ends = list(itertools.accumulate(sizes))
        with self.on(params[0]):
            tables = self._pointer_tables(
                [self._pointer(a) for name in names for a in arrays[name]] + ends, len(names), count
            )
        args: list[Any] = []
        for name, is_array, is_float in self._plan(kind):
            if is_array:
                args.append(tables[names.index(name)])
            else:
                value = scalars[name]
                args.append(dtype.type(value) if is_float else numpy.int32(value))
        args += [tables[-1], numpy.int32(count), numpy.int64(ends[-1])]
        kernel = self._many_kernel(kind, dtype.char)
        with self.on(params[0]):
            kernel((min(max(1, -(-ends[-1] // 256)), 4096),), (256,), tuple(args))
        return True

    def _host_scalars(self, scalars: dict[str, Any]) -> bool:
        """True when every scalar is a host number and no capture runs: the pointer
        tables are uploaded from the host, which a capture refuses.
        """
        if any(not isinstance(v, (int, float, bool)) for v in scalars.values()):
            return False
        return not self._capturing()

    def _plan(self, kind: str) -> list[tuple[str, bool, bool]]:
        """``(name, is a pointer table, is of type T)`` for each kernel parameter."""
        plan = self._plans.get(kind)
        if plan is None:
            spec, names = K.MULTI_TENSOR[kind]
            plan = self._plans[kind] = [
                (p.name, p.name in names, p.type_name == "T") for p in spec.params()
            ]
        return plan

    def _pointer(self, array: Any) -> int:
        return int(array.data.ptr)

    def _pointer_tables(self, values: list[int], tables: int, count: int) -> list[Any]:
        """The values as one int64 device array, cut into ``tables`` tables of ``count``
        pointers and the ``ends`` after them. The last upload is reused while the values
        repeat (parameters and, thanks to the memory pool, gradients usually land at the
        same addresses every step): no copy to the GPU then.
        """
        key = (self._current_device(), *values)
        if self._last_table is None or self._last_table[0] != key:
            table = self._upload(values)
            cut = [table[i * count : (i + 1) * count] for i in range(tables)]
            self._last_table = (key, [*cut, table[tables * count :]])
        return self._last_table[1]

    def _current_device(self) -> int:
        return int(self.cp.cuda.runtime.getDevice())

    def _upload(self, values: list[int]) -> Any:
        return self.cp.asarray(numpy.array(values, numpy.int64))

    def _many_kernel(self, kind: str, char: str) -> Any:
        spec, names = K.MULTI_TENSOR[kind]
        return self._raw_kernel(
            char,
            f"{spec.name}_many",
            lambda float_type: K.multi_tensor_source(spec, names, float_type),
        )
