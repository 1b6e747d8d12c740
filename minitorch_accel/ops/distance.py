"""Norms and distances between vectors: ``normalize``, ``cosine_similarity``,
``pairwise_distance``, and the vector norm under them.

The three follow PyTorch's formulas step by step, so that they give its values (NaN
and infinity included) and its gradients:

- ``normalize(x) = x / max(||x||_p, eps)`` along ``dim``;
- ``cosine_similarity(x1, x2) = sum((x1 / max(||x1||, eps)) * (x2 / max(||x2||, eps)))``
  along ``dim``, each input divided by its own norm first (the result stays in
  ``[-1, 1]``). PyTorch clamps the two norms in place without recording it, so the
  gradient flows through each norm as if it were not clamped: :class:`ClampMinKeepGrad`;
- ``pairwise_distance(x1, x2) = ||x1 - x2 + eps||_p`` along the last dim.

The norm is :class:`~minitorch_accel.ops.scan.VectorNorm` (also under ``Tensor.norm``),
one graph node whose backward is PyTorch's: at a zero vector the 2-norm's gradient is 0
(the plain ``sqrt(sum(x * x))`` chain gives NaN there), and the inf-norm shares its
gradient among the elements that reach the maximum.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.function import Function
from ..core.tensor import Tensor
from .elementwise import clamp
from .scan import VectorNorm
from .shape import normalize_dim


class ClampMinKeepGrad(Function):
    """``max(a, low)`` whose gradient is the incoming one, unmasked: the value of a
    clamp made outside the graph (PyTorch's ``clamp_min_`` under ``no_grad`` in
    ``cosine_similarity``). NaN stays NaN.
    """

    saves_inputs = False  # backward needs no input's values

    def forward(self, a: Any, *, low: float) -> Any:
        return self.xp.maximum(a, a.dtype.type(low))

    def backward(self, grad: Tensor) -> Tensor:
        return grad


def _check_float(op: str, *tensors: Tensor) -> None:
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: expected tensors, got {type(t).__name__}")
        if t.dtype.kind != "f":
            raise TypeError(
                f"{op}: expected a floating-point tensor, got {t.dtype}; convert it with .float()"
            )


def vector_norm(input: Tensor, p: float = 2.0, dim: int = -1, keepdim: bool = False) -> Tensor:
    """The ``p``-norm of ``input`` along one ``dim`` (:class:`~.scan.VectorNorm`, with
    PyTorch's gradient); a 0-d input is its own one-element vector.

    Parameters
    ----------
    input : Tensor
        Floating point.
    p : float
        Any number or ``±inf``; 0 counts the non-zeros.
    dim : int
    keepdim : bool
        Keep ``dim`` with size 1.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.ops.distance import vector_norm
    >>> vector_norm(mta.tensor([[3.0, -4.0]]), dim=1).tolist()
    [5.0]
    >>> vector_norm(mta.tensor([[3.0, -4.0]]), p=float("inf"), dim=1, keepdim=True).tolist()
    [[4.0]]
    """
    _check_float("vector_norm", input)
    if isinstance(p, bool) or not isinstance(p, (int, float, np.integer, np.floating)):
        raise TypeError(f"vector_norm: p must be a number, got {p!r}")
    d = normalize_dim(dim, input.ndim, "vector_norm")
    if input.ndim == 0:
        return VectorNorm.apply(input.reshape(1), p=float(p), dims=(0,), keepdim=False)
    return VectorNorm.apply(input, p=float(p), dims=(d,), keepdim=keepdim)


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
    """``input / max(||input||_p, eps)`` along ``dim``: every vector along ``dim``
    scaled to norm 1 (a vector shorter than ``eps`` is divided by ``eps`` instead).

    Parameters
    ----------
    input : Tensor
        Floating point, of any shape.
    p : float
        The norm's exponent (2: Euclidean length).
    dim : int
        The dim the vectors run along (default 1: each row of a 2-d input...). A 1-d
        input needs ``dim=0`` (or -1), as in PyTorch.
    eps : float
        The smallest divisor.

    Returns
    -------
    Tensor
        ``input``'s shape. (PyTorch's ``out=`` argument is not offered.)

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.ops.distance import normalize
    >>> normalize(mta.tensor([[3.0, 4.0], [0.0, 0.0]])).tolist()
    [[0.6000000238418579, 0.800000011920929], [0.0, 0.0]]
    """
    _check_float("normalize", input)
    denom = clamp(vector_norm(input, p, dim, keepdim=True), min=eps)
    return input / denom.expand_as(input)


def _broadcast_pair(op: str, x1: Tensor, x2: Tensor) -> tuple[Tensor, Tensor]:
    try:
        shape = tuple(np.broadcast_shapes(x1.shape, x2.shape))
    except ValueError:
        raise ValueError(
            f"{op}: the shapes of x1 {x1.shape} and x2 {x2.shape} do not broadcast"
        ) from None
    return x1.expand(*shape), x2.expand(*shape)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """The cosine of the angle between the vectors of ``x1`` and ``x2`` along ``dim``:
    ``sum((x1 / max(||x1||, eps)) * (x2 / max(||x2||, eps)), dim)``.

    PyTorch's current formula: each input is divided by its own clamped 2-norm before
    the product (which keeps the result in ``[-1, 1]``), and the gradient flows through
    each norm as if it were not clamped (PyTorch clamps them outside the graph).

    Parameters
    ----------
    x1, x2 : Tensor
        Broadcast against each other; at least one floating point (an integer one is
        converted to the other's dtype).
    dim : int
        The dim the vectors run along, in the broadcast shape.
    eps : float
        The smallest norm divided by.

    Returns
    -------
    Tensor
        The broadcast shape without ``dim``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.ops.distance import cosine_similarity
    >>> x = mta.tensor([[1.0, 0.0], [1.0, 1.0]])
    >>> cosine_similarity(x, mta.tensor([[2.0, 0.0]])).tolist()
    [1.0, 0.7071067690849304]
    """
    for t in (x1, x2):
        if not isinstance(t, Tensor):
            raise TypeError(f"cosine_similarity: expected tensors, got {type(t).__name__}")
    floats = [t.dtype for t in (x1, x2) if t.dtype.kind == "f"]
    if not floats:
        raise TypeError(
            "cosine_similarity: expected the common dtype to be floating point, yet it is "
            f"{np.result_type(x1.dtype, x2.dtype)}; convert the inputs with .float()"
        )
    common = np.result_type(*floats)
    x1, x2 = (t if t.dtype.kind == "f" else t.to(dtype=common) for t in (x1, x2))
    x1, x2 = _broadcast_pair("cosine_similarity", x1, x2)
    if x1.ndim == 0:
        normalize_dim(dim, 0, "cosine_similarity")
        return cosine_similarity(x1.reshape(1), x2.reshape(1), 0, eps).reshape(())
    d = normalize_dim(dim, x1.ndim, "cosine_similarity")
    n1 = ClampMinKeepGrad.apply(vector_norm(x1, 2.0, d, keepdim=True), low=eps)
    n2 = ClampMinKeepGrad.apply(vector_norm(x2, 2.0, d, keepdim=True), low=eps)
    return ((x1 / n1) * (x2 / n2)).sum(d)


def pairwise_distance(
    x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False
) -> Tensor:
    """The ``p``-norm distance between the vectors of ``x1`` and ``x2`` along the last
    dim: ``||x1 - x2 + eps||_p`` (``eps`` keeps equal vectors off the norm's kink).

    Parameters
    ----------
    x1, x2 : Tensor
        Broadcast against each other; the vectors run along the last dim.
    p : float
        The norm's exponent (any number, ``±inf``; 0 counts differing components).
    eps : float
        Added to every difference, as PyTorch.
    keepdim : bool
        Keep the last dim with size 1.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.ops.distance import pairwise_distance
    >>> d = pairwise_distance(mta.tensor([[0.0, 0.0]]), mta.tensor([[3.0, 4.0]]), eps=0.0)
    >>> d.tolist()
    [5.0]
    """
    for t in (x1, x2):
        if not isinstance(t, Tensor):
            raise TypeError(f"pairwise_distance: expected tensors, got {type(t).__name__}")
    difference = x1 - x2 + eps
    _check_float("pairwise_distance", difference)
    return vector_norm(difference, p, -1, keepdim)


__all__ = [
    "ClampMinKeepGrad",
    "cosine_similarity",
    "normalize",
    "pairwise_distance",
    "vector_norm",
]
