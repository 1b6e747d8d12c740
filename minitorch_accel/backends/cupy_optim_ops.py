"""The CuPy backend's optimizer fast paths: SGD and Adam in one kernel per parameter,
or in one launch for every parameter (a multi-tensor kernel)."""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy

from . import cupy_kernels as K
from .cupy_fast_base import FastPathBase


class OptimizerFastPaths(FastPathBase):
    """SGD and Adam updates on CuPy arrays (parameters and state change in place)."""

    def __init__(self, cupy: Any, switch_devices: bool = True) -> None:
        super().__init__(cupy, switch_devices)
        self._last_table: tuple[tuple[int, ...], Any] | None = None

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
        args = (grad, lr, momentum, dampening, weight_decay, int(nesterov), int(maximize),
                int(first_step))
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
        args = (grad, lr, beta1, beta2, eps, weight_decay, step_size, bias2_sqrt,
                int(decoupled_weight_decay), int(maximize))
        with self.on(param):
            if amsgrad:
                self._kernel(K.ADAM_AMSGRAD)(*args, param, exp_avg, exp_avg_sq, max_exp_avg_sq)
            else:
                self._kernel(K.ADAM)(*args, param, exp_avg, exp_avg_sq)

    def sgd_update_many(self, params: list[Any], grads: list[Any], bufs: list[Any] | None,
                        lr: float, momentum: float, dampening: float, nesterov: bool,
                        weight_decay: float, maximize: bool, first_step: bool) -> bool:
        """:meth:`sgd_update` for many tensors in one launch; False (nothing done) where
        the tensors do not share one float32/float64 dtype or are not C-contiguous."""
        arrays = {"grad": grads, "param": params}
        if bufs is not None:
            arrays["buf"] = bufs
        return self._run_many("sgd" if bufs is None else "sgd_momentum", arrays, {
            "lr": lr, "momentum": momentum, "dampening": dampening,
            "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
            "first_step": first_step})

    def adam_update_many(self, params: list[Any], grads: list[Any], exp_avgs: list[Any],
                         exp_avg_sqs: list[Any], max_exp_avg_sqs: list[Any] | None,
                         step: int, lr: float, beta1: float, beta2: float, eps: float,
                         weight_decay: float, decoupled_weight_decay: bool, amsgrad: bool,
                         maximize: bool) -> bool:
        """:meth:`adam_update` for many tensors that share one ``step`` in one launch;
        False (nothing done) where :meth:`sgd_update_many` would give False."""
        arrays = {"grad": grads, "param": params, "exp_avg": exp_avgs,
                  "exp_avg_sq": exp_avg_sqs}
        if amsgrad:
            arrays["max_exp_avg_sq"] = max_exp_avg_sqs or []
        return self._run_many("adam_amsgrad" if amsgrad else "adam", arrays, {
            "lr": lr, "beta1": beta1, "beta2": beta2, "eps": eps,
            "weight_decay": weight_decay, "step_size": lr / (1.0 - beta1**step),
            "bias2_sqrt": math.sqrt(1.0 - beta2**step), "decoupled": decoupled_weight_decay,
            "maximize": maximize})

    def _run_many(self, kind: str, arrays: dict[str, list[Any]],
                  scalars: dict[str, float | bool]) -> bool:
        spec, names = K.MULTI_TENSOR[kind]
        first = arrays["param"][0]
        dtype, count = first.dtype, len(arrays["param"])
        every = [a for name in names for a in arrays[name]]
        if dtype.char not in "fd" or len(every) != count * len(names) or any(
                a.dtype != dtype or not a.flags.c_contiguous for a in every):
            return False
        sizes = [a.size for a in arrays["param"]]
        if any(a.size != size for name in names
               for a, size in zip(arrays[name], sizes, strict=True)):
            return False
        ends = list(itertools.accumulate(sizes))
        with self.on(first):
            table = self._pointer_table([self._pointer(a) for a in every] + ends)
        args: list[Any] = []
        for p in spec.params():
            if p.name in arrays:
                index = names.index(p.name)
                args.append(table[index * count:(index + 1) * count])
            else:
                value = scalars[p.name]
                args.append(dtype.type(value) if p.type_name == "T" else numpy.int32(value))
        args += [table[len(names) * count:], numpy.int32(count), numpy.int64(ends[-1])]
        kernel = self._many_kernel(kind, dtype.char)
        with self.on(first):
            kernel((min(max(1, -(-ends[-1] // 256)), 4096),), (256,), tuple(args))
        return True

    def _pointer(self, array: Any) -> int:
        return int(array.data.ptr)

    def _pointer_table(self, values: list[int]) -> Any:
        """The values as an int64 device array; the last table is reused while the
        values repeat (parameters and, thanks to the memory pool, gradients usually land
        at the same addresses every step), which saves the upload."""
        key = (self.cp.cuda.runtime.getDevice(), *values)
        if self._last_table is None or self._last_table[0] != key:
            self._last_table = (key, self.cp.asarray(numpy.array(values, numpy.int64)))
        return self._last_table[1]

    def _many_kernel(self, kind: str, char: str) -> Any:
        name = f"many:{kind}:{char}"
        kernel = self._kernels.get(name)
        if kernel is None:
            spec, names = K.MULTI_TENSOR[kind]
            float_type = "float" if char == "f" else "double"
            kernel = self.cp.RawKernel(K.multi_tensor_source(spec, names, float_type),
                                       f"{spec.name}_many_{float_type}")
            self._kernels[name] = kernel
        return kernel
