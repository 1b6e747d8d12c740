"""Shared test helpers: the device list and :func:`check_op`, which checks one op's
forward values against NumPy and its first and second derivatives against float64
finite differences."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

import minitorch_accel as mta
from minitorch_accel.core.tensor import Tensor
from minitorch_accel.utils.gradcheck import gradcheck, gradgradcheck


def cuda_available() -> bool:
    """True when the ``cuda`` backend can run here (CuPy and a GPU)."""
    return "cuda" in mta.backends.available()


#: The devices every op test runs on: the host, a virtual CPU device, and a GPU
#: when there is one (skipped, with the reason, otherwise).
DEVICES = [
    pytest.param("cpu", id="cpu"),
    pytest.param("cpu:1", id="cpu:1"),
    pytest.param(
        "cuda",
        id="cuda",
        marks=pytest.mark.gpu,
    ),
]


def sample(
    shape: tuple[int, ...],
    rng: np.random.Generator,
    low: float = -2.0,
    high: float = 2.0,
    margin: float = 0.0,
) -> np.ndarray:
    """Uniform float64 values in ``[low, high)``; with ``margin > 0`` every value is at
    least ``margin`` away from 0 (for ops with a kink there, such as abs and relu)."""
    values = rng.uniform(low, high, size=shape)
    if margin > 0:
        values = np.where(values >= 0, values + margin, values - margin)
    return values


def to_host(t: Tensor) -> np.ndarray:
    """The values of ``t`` as a NumPy array, whatever its device."""
    return np.asarray(t.detach())


def check_op(
    fn_mta: Callable[..., Tensor],
    fn_numpy: Callable[..., Any],
    shapes: Sequence[tuple[int, ...]],
    device: str = "cpu",
    *,
    low: float = -2.0,
    high: float = 2.0,
    margin: float = 0.0,
    arrays: Sequence[np.ndarray] | None = None,
    grad: bool = True,
    gradgrad: bool = True,
    atol: float = 1e-5,
    rtol: float = 1e-5,
    seed: int = 0,
) -> None:
    """Check one op: forward against NumPy, then ``gradcheck`` and ``gradgradcheck``.

    Parameters
    ----------
    fn_mta, fn_numpy : callable
        The op on Tensors and the same op on NumPy arrays (the reference).
    shapes : sequence of tuple
        One shape per input; values are drawn uniformly from ``[low, high)``.
    device : str
        Where the inputs are placed.
    margin : float
        Keep inputs this far from 0 (kinks).
    arrays : sequence of ndarray, optional
        Use these inputs instead of random ones (``shapes`` is then ignored).
    grad, gradgrad : bool
        Run the first- and second-order gradient checks (float64).
    atol, rtol : float
        Tolerances of the float32 forward comparison.
    """
    rng = np.random.default_rng(seed)
    if arrays is None:
        arrays = [sample(s, rng, low, high, margin) for s in shapes]

    # forward in float32 on the device, against NumPy in float64
    inputs32 = [mta.tensor(x.astype(np.float32), device=device) for x in arrays]
    out = fn_mta(*inputs32)
    expected = np.asarray(fn_numpy(*[x.astype(np.float32).astype(np.float64) for x in arrays]))
    assert out.device == mta.Device(device), f"output on {out.device}, expected {device}"
    assert out.shape == expected.shape, f"shape {out.shape} != NumPy's {expected.shape}"
    if expected.dtype.kind == "f":
        assert out.dtype == np.float32, f"float32 inputs gave {out.dtype}"
    np.testing.assert_allclose(to_host(out), expected, atol=atol, rtol=rtol)
    if not grad:
        return

    # float32 backward: one gradient per input, with the input's shape, dtype and device
    leaves32 = [mta.tensor(x.astype(np.float32), device=device, requires_grad=True) for x in arrays]
    fn_mta(*leaves32).sum().backward()
    for leaf in leaves32:
        assert leaf.grad is not None
        assert (leaf.grad.shape, leaf.grad.dtype) == (leaf.shape, leaf.dtype)
        assert leaf.grad.device == leaf.device

    # first and second derivatives in float64 against central differences
    leaves = [mta.tensor(x, device=device, requires_grad=True) for x in arrays]
    assert gradcheck(fn_mta, leaves)
    if gradgrad:
        assert gradgradcheck(fn_mta, leaves)
