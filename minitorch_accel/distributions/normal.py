"""The normal (Gaussian) distribution, as ``torch.distributions.Normal``."""

from __future__ import annotations

import math
from collections.abc import Sequence
from numbers import Number
from typing import Any

from ..core import factories
from ..core.grad_mode import no_grad
from ..core.tensor import Tensor
from ..ops.activation import erf
from ..ops.math_more import erfinv
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all


class Normal(Distribution):
    """The normal distribution of mean ``loc`` and standard deviation ``scale``
    (numbers or tensors, broadcast together).

    ``log_prob(x) = -(x - loc)^2 / (2 scale^2) - log(scale) - log(sqrt(2 pi))``,
    ``entropy = 1/2 + 1/2 log(2 pi) + log(scale)``. :meth:`rsample` is
    ``loc + eps * scale`` with ``eps`` standard normal, differentiable with respect to
    ``loc`` and ``scale`` (the reparameterization trick); :meth:`sample` is the same
    without the graph. Draws come from the device's generator, so they differ from
    PyTorch's for the same seed.

    Parameters
    ----------
    loc : float or Tensor
        The mean.
    scale : float or Tensor
        The standard deviation, positive.
    validate_args : bool, optional
        Check ``loc`` (no NaN), ``scale`` (positive) and every ``log_prob``/``cdf``
        value; default on, as in PyTorch.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.distributions import Normal
    >>> d = Normal(0.0, 2.0)
    >>> d.log_prob(mta.tensor(0.0)).exp()  # 1 / (2 sqrt(2 pi))
    tensor(0.1995)
    >>> d.cdf(mta.tensor(0.0)), d.rsample((5,)).shape
    (tensor(0.5), (5,))
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        both_numbers = isinstance(loc, Number) and isinstance(scale, Number)
        batch_shape = () if both_numbers else tuple(self.loc.shape)
        super().__init__(batch_shape, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        """``loc``."""
        return self.loc

    @property
    def mode(self) -> Tensor:
        """``loc``."""
        return self.loc

    @property
    def stddev(self) -> Tensor:
        """``scale``."""
        return self.scale

    @property
    def variance(self) -> Tensor:
        """``scale ** 2``."""
        return self.stddev.pow(2)

    def rsample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        """``loc + eps * scale``, ``eps`` standard normal of shape ``sample_shape +
        batch_shape``; gradients reach ``loc`` and ``scale``.
        """
        shape = tuple(self._extended_shape(sample_shape))
        eps = factories.randn(*shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + eps * self.scale

    def sample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        """Draws of shape ``sample_shape + batch_shape``, outside the graph."""
        with no_grad():
            return self.rsample(sample_shape)

    def log_prob(self, value: Tensor) -> Tensor:
        """The log density at ``value``."""
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale**2
        log_scale = self.scale.log()
        return -((value - self.loc) ** 2) / (2 * var) - log_scale - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value: Tensor) -> Tensor:
        """``P(X <= value) = (1 + erf((value - loc) / (scale sqrt 2))) / 2``."""
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value: Tensor) -> Tensor:
        """The inverse of :meth:`cdf`: ``loc + scale sqrt(2) erfinv(2 value - 1)``."""
        return self.loc + self.scale * erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self) -> Tensor:
        """``1/2 + 1/2 log(2 pi) + log(scale)``."""
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()


__all__ = ["Normal"]
