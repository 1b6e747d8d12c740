"""Gradient checks: analytic derivatives against float64 central differences."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..core.backward import grad as autograd_grad
from ..core.tensor import Tensor


class GradcheckError(AssertionError):
    """Raised when analytic and numerical gradients disagree."""


def _as_list(inputs: Tensor | Sequence[Any]) -> list[Any]:
    return [inputs] if isinstance(inputs, Tensor) else list(inputs)


def _projection(out: Tensor, seed: int) -> Tensor:
    rng = np.random.default_rng(seed)
    values = rng.standard_normal(out.shape).astype(out.dtype)
    return Tensor._from_data(values, device=out.device)


def _differentiable(inputs: list[Any]) -> list[int]:
    found = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    for i in found:
        if inputs[i].dtype != np.float64:
            raise TypeError(f"gradcheck needs float64 inputs; input {i} is {inputs[i].dtype}")
    if not found:
        raise ValueError("gradcheck: no input requires grad")
    return found


def _compare(
    analytic: list[np.ndarray], numeric: list[np.ndarray], atol: float, rtol: float, what: str
) -> None:
    for k, (a, n) in enumerate(zip(analytic, numeric, strict=False)):
        err = np.abs(a - n) - (atol + rtol * np.abs(n))
        if err.size and err.max() > 0:
            where = np.unravel_index(int(np.argmax(err)), err.shape)
            raise GradcheckError(
                f"{what} mismatch for input {k} at index {tuple(int(i) for i in where)}: "
                f"analytic {a[where]:.6g}, numerical {n[where]:.6g} "
                f"(|difference| {abs(a[where] - n[where]):.3g} > "
                f"atol {atol} + rtol {rtol} * |numerical|)"
            )


def _numerical_grads(
    scalar_fn: Callable[[], float], inputs: list[Any], indices: list[int], eps: float
) -> list[np.ndarray]:
    result = []
    for i in indices:
        data = inputs[i].array
        host = inputs[i].device.backend.to_host(data)
        grad = np.zeros(host.shape, dtype=np.float64)
        for pos in np.ndindex(host.shape):
            original = float(host[pos])
            data[pos] = original + eps
            plus = scalar_fn()
            data[pos] = original - eps
            minus = scalar_fn()
            data[pos] = original
            grad[pos] = (plus - minus) / (2 * eps)
        result.append(grad)
    return result


def gradcheck(
    fn: Callable[..., Tensor],
    inputs: Tensor | Sequence[Any],
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    seed: int = 0,
) -> bool:
    """Check ``fn``'s backward against central differences, in float64.

    The output is projected on a fixed random vector ``v``; the analytic gradient of
    ``sum(fn(*inputs) * v)`` with respect to every input that requires grad is compared
    with ``(f(x + eps) - f(x - eps)) / (2 eps)``, element by element.

    Returns
    -------
    bool
        True when every element agrees within ``atol + rtol * |numerical|``.

    Raises
    ------
    GradcheckError
        Naming the input, the worst element and both values.
    """
    args = _as_list(inputs)
    indices = _differentiable(args)
    out = fn(*args)
    v = _projection(out, seed)
    projected = (out * v).sum()
    if projected.requires_grad:
        found = autograd_grad(projected, [args[i] for i in indices], materialize_grads=True)
        analytic = [g.detach().numpy() for g in found if g is not None]
    else:  # the output does not depend on the inputs (e.g. the 2nd derivative of a linear fn)
        analytic = [np.zeros(args[i].shape) for i in indices]

    def scalar() -> float:
        # grad mode stays on: ``fn`` may itself differentiate (see gradgradcheck)
        return float((fn(*args) * v).sum().detach().item())

    numeric = _numerical_grads(scalar, args, indices, eps)
    _compare(analytic, numeric, atol, rtol, "gradient")
    return True


def gradgradcheck(
    fn: Callable[..., Tensor],
    inputs: Tensor | Sequence[Any],
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    seed: int = 0,
) -> bool:
    """Check second derivatives: :func:`gradcheck` applied to the (projected) gradient
    of ``fn``, which is computed with ``create_graph=True``.
    """
    args = _as_list(inputs)
    indices = _differentiable(args)
    v = _projection(fn(*args), seed)

    def first_derivative(*xs: Any) -> Tensor:
        out = fn(*xs)
        grads = autograd_grad(
            (out * v).sum(), [xs[i] for i in indices], create_graph=True, materialize_grads=True
        )
        total: Tensor | None = None
        for k, g in enumerate(grads):
            assert g is not None  # materialize_grads: zeros for unused inputs
            term = (g * _projection(g, seed + 1 + k)).sum()
            total = term if total is None else total + term
        assert total is not None
        return total

    return gradcheck(first_derivative, args, eps=eps, atol=atol, rtol=rtol, seed=seed + 100)
