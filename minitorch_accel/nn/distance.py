"""Similarity and distance layers: :class:`CosineSimilarity` and :class:`PairwiseDistance`."""

from __future__ import annotations

from ..core.tensor import Tensor
from ..ops.distance import cosine_similarity, pairwise_distance
from .module import Module


class CosineSimilarity(Module):
    """The cosine similarity of two inputs along ``dim``; see
    :func:`~minitorch_accel.ops.distance.cosine_similarity`.

    Parameters
    ----------
    dim : int
        The dim the vectors run along (default 1).
    eps : float
        The smallest norm divided by (default 1e-8).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> cos = nn.CosineSimilarity(dim=1)
    >>> cos(mta.tensor([[1.0, 0.0]]), mta.tensor([[0.0, 2.0]])).tolist()
    [0.0]
    """

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        """The similarity of each pair of vectors of ``x1`` and ``x2`` (broadcast)."""
        return cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """The ``p``-norm distance ``||x1 - x2 + eps||_p`` along the last dim; see
    :func:`~minitorch_accel.ops.distance.pairwise_distance`.

    Parameters
    ----------
    p : float
        The norm's exponent (default 2).
    eps : float
        Added to every difference (default 1e-6).
    keepdim : bool
        Keep the last dim with size 1.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> dist = nn.PairwiseDistance(p=1.0, eps=0.0)
    >>> dist(mta.tensor([[1.0, 2.0]]), mta.tensor([[0.0, 0.0]])).tolist()
    [3.0]
    """

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        """The distance between each pair of vectors of ``x1`` and ``x2`` (broadcast)."""
        return pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


__all__ = ["CosineSimilarity", "PairwiseDistance"]
