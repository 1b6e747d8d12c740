"""Multi-tensor ("foreach") optimizer kernels: one launch updates every parameter.

The kernels are generated from the same loop bodies as the one-tensor kernels
(:func:`~minitorch_accel.backends.cupy.kernels.multi_tensor_source`). Here they are
compiled by nvcc (syntax and types) and, through the host stand-in of
``support/host_kernels.py`` (a test double), run and compared with the one-by-one NumPy
updates; last, SGD and Adam are shown to take the multi-tensor path when a backend
offers it, with the same results as on the CPU.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from support.host_kernels import CXX, HostFastPaths, host_fast_paths, needs_nvcc, nvcc_ptx

import minitorch_accel as mta
from minitorch_accel import optim
from minitorch_accel.backends import registry
from minitorch_accel.backends.cupy import fast_optim as cupy_fast_optim
from minitorch_accel.backends.cupy import kernels as K
from minitorch_accel.backends.fast_paths import table
from minitorch_accel.backends.numpy.backend import NumpyBackend
from minitorch_accel.optim.adam import adam_update
from minitorch_accel.optim.sgd import sgd_update

SIZES = [3, 0, 17, 1, 64]  # an empty tensor among them


@pytest.fixture(scope="module")
def fast(tmp_path_factory: pytest.TempPathFactory) -> HostFastPaths:
    if CXX is None:
        pytest.skip("needs a C++ compiler (g++)")
    return host_fast_paths(tmp_path_factory.mktemp("many"))


@pytest.mark.slow
@needs_nvcc
@pytest.mark.parametrize("float_type", ["float", "double"])
@pytest.mark.parametrize("kind", sorted(K.MULTI_TENSOR))
def test_multi_tensor_kernels_compile(kind: str, float_type: str, tmp_path: Path) -> None:
    spec, arrays = K.MULTI_TENSOR[kind]
    ptx = nvcc_ptx(K.multi_tensor_source(spec, arrays, float_type), tmp_path)
    assert f".entry {spec.name}_many_{float_type}" in ptx


def _tensors(rng: np.random.Generator, dtype: Any = np.float64) -> list[np.ndarray]:
    return [rng.standard_normal(n).astype(dtype) for n in SIZES]


@pytest.mark.parametrize(
    "momentum, dampening, nesterov, weight_decay, maximize",
    [(0.0, 0.0, False, 0.0, False), (0.9, 0.0, True, 0.01, False), (0.5, 0.3, False, 0.1, True)],
)
def test_sgd_many_equals_one_by_one(
    fast: HostFastPaths,
    momentum: float,
    dampening: float,
    nesterov: bool,
    weight_decay: float,
    maximize: bool,
) -> None:
    rng = np.random.default_rng(0)
    params = _tensors(rng)
    bufs = [np.zeros_like(p) for p in params]
    mine = [p.copy() for p in params], [b.copy() for b in bufs]
    for step in range(3):
        grads = _tensors(rng)
        for p, g, b in zip(params, grads, bufs, strict=True):
            sgd_update(
                np,
                p,
                g,
                b if momentum else None,
                0.1,
                momentum,
                dampening,
                nesterov,
                weight_decay,
                maximize,
                step == 0,
            )
        assert fast.sgd_update_many(
            mine[0],
            grads,
            mine[1] if momentum else None,
            0.1,
            momentum,
            dampening,
            nesterov,
            weight_decay,
            maximize,
            step == 0,
        )
    for found, expected in zip(mine[0] + mine[1], params + bufs, strict=True):
        np.testing.assert_allclose(found, expected, rtol=1e-13)


@pytest.mark.parametrize("amsgrad, decoupled", [(False, False), (True, True)])
def test_adam_many_equals_one_by_one(fast: HostFastPaths, amsgrad: bool, decoupled: bool) -> None:
    rng = np.random.default_rng(1)
    state = [_tensors(rng)] + [[np.zeros(n) for n in SIZES] for _ in range(3)]
    mine = [[a.copy() for a in group] for group in state]
    for step in range(1, 4):
        grads = _tensors(rng)
        for p, g, m, v, vmax in zip(*state[:1], grads, *state[1:], strict=True):
            adam_update(
                np,
                p,
                g,
                m,
                v,
                vmax if amsgrad else None,
                step,
                0.01,
                0.9,
                0.999,
                1e-8,
                0.1,
                decoupled,
                amsgrad,
                False,
            )
        assert fast.adam_update_many(
            mine[0],
            grads,
            mine[1],
            mine[2],
            mine[3] if amsgrad else None,
            step,
            0.01,
            0.9,
            0.999,
            1e-8,
            0.1,
            decoupled,
            amsgrad,
            False,
        )
    for found, expected in zip(sum(mine, []), sum(state, []), strict=True):
        np.testing.assert_allclose(found, expected, rtol=1e-12)


def test_many_refuses_what_it_cannot_do_and_changes_nothing(fast: HostFastPaths) -> None:
    rng = np.random.default_rng(2)
    params, grads = _tensors(rng), _tensors(rng)
    before = [p.copy() for p in params]
    mixed = grads[:-1] + [grads[-1].astype(np.float32)]
    strided = grads[:-1] + [np.repeat(grads[-1], 2)[::2]]
    half = [p.astype(np.float16) for p in params]
    for p, g in (
        (params, mixed),
        (params, strided),
        (half, [g.astype(np.float16) for g in grads]),
        (params, grads[:-1] + [grads[-1][:-1].copy()]),
    ):
        assert not fast.sgd_update_many(p, g, None, 0.1, 0.0, 0.0, False, 0.0, False, True)
    for found, expected in zip(params, before, strict=True):
        np.testing.assert_array_equal(found, expected)


# ------------------------------------------------------------------ through the optimizers
class ForeachBackend(NumpyBackend):
    """NumPy, plus the host-compiled multi-tensor kernels as its only kernels, used by the
    CuPy backend's fast optimizer steps (registered for it by the fixture).
    """

    name = "foreach"
    paths: HostFastPaths
    calls: list[str] = []

    def kernel(self, name: str) -> Any:
        if not name.endswith("_many"):
            return None
        run = self.paths.get(name)
        assert run is not None

        def counted(*args: Any) -> bool:
            self.calls.append(name)
            return bool(run(*args))

        return counted


@pytest.fixture
def foreach(fast: HostFastPaths) -> Iterator[type[ForeachBackend]]:
    ForeachBackend.paths = fast
    ForeachBackend.calls = []
    registry.register("foreach", ForeachBackend)
    cupy_fast_optim.register_fast_optim("foreach")
    yield ForeachBackend
    table("foreach").clear()
    registry.unregister("foreach")


@pytest.mark.parametrize(
    "make",
    [
        lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01),
        lambda ps: optim.Adam(ps, lr=0.01, amsgrad=True),
        lambda ps: optim.AdamW(ps, lr=0.01),
    ],
    ids=["sgd_nesterov", "adam_amsgrad", "adamw"],
)
def test_optimizers_update_every_parameter_in_one_launch(
    foreach: type[ForeachBackend], make: Any
) -> None:
    rng = np.random.default_rng(3)
    values = [rng.standard_normal(s) for s in [(4, 3), (3,), (2, 2, 2)]]
    results = []
    for device in ("cpu", "foreach"):
        params = [mta.tensor(v, device=device, requires_grad=True) for v in values]
        opt = make(params)
        for step in range(3):
            for p, v in zip(params, values, strict=True):
                p.grad = mta.tensor(np.sin(v * (step + 1)), device=device)
            opt.step()
        results.append([p.detach().cpu().numpy() for p in params])
    assert len(foreach.calls) == 3  # one launch per step, not one per parameter
    for found, expected in zip(*results[::-1], strict=True):
        np.testing.assert_allclose(found, expected, rtol=1e-12)
