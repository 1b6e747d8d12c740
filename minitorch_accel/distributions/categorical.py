"""The categorical distribution, as ``torch.distributions.Categorical``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core import factories
from ..core.grad_mode import no_grad
from ..core.size import Size
from ..core.tensor import Tensor
from ..ops.elementwise import clamp
from ..ops.index import gather
from ..ops.sampling import multinomial
from ..ops.shape_more import broadcast_tensors
from . import constraints
from .distribution import Distribution, lazy_property
from .utils import logits_to_probs, probs_to_logits


class Categorical(Distribution):
    """One of ``K`` categories, ``0 .. K-1``, category ``i`` with probability ``p_i``.

    Give exactly one of ``probs`` (non-negative weights over the last dim, normalised
    here to sum to 1) or ``logits`` (unnormalised log-probabilities; normalised here by
    subtracting their ``logsumexp``). The last dim indexes categories; the dims before it
    are the batch.

    ``log_prob(value) = log p_value``, ``entropy = -sum_i p_i log p_i``; both are
    differentiable with respect to ``probs`` or ``logits`` (the policy gradient of
    REINFORCE is ``-log_prob(action) * return``). ``sample`` draws with
    :func:`minitorch_accel.multinomial` from the device's generator, so the draws differ
    from PyTorch's for the same seed.

    Parameters
    ----------
    probs : Tensor, optional
        Weights, at least 1-D.
    logits : Tensor, optional
        Log-weights, at least 1-D.
    validate_args : bool, optional
        Check ``probs`` (a simplex once normalised: no negative or NaN weight) or
        ``logits`` (no NaN), and every ``log_prob`` value; default on, as in PyTorch.

    Raises
    ------
    ValueError
        If both or neither of ``probs`` and ``logits`` are given, one is 0-d, or (with
        validation) a parameter or a ``log_prob`` value is invalid, with PyTorch's message.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.distributions import Categorical
    >>> m = Categorical(mta.tensor([0.25, 0.25, 0.5]))
    >>> m.log_prob(mta.tensor(2)).exp()
    tensor(0.5)
    >>> m.sample((4,)).shape, m.batch_shape
    ((4,), ())
    >>> Categorical(logits=mta.zeros(2, 4)).entropy()  # log 4, per row
    tensor([1.3863, 1.3863])
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True

    def __init__(
        self,
        probs: Tensor | None = None,
        logits: Tensor | None = None,
        validate_args: bool | None = None,
    ) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.ndim < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
            param = self.probs
        else:
            assert logits is not None
            if logits.ndim < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
            param = self.logits
        self._param = param
        self._num_events = int(param.shape[-1])
        batch_shape = tuple(param.shape[:-1]) if param.ndim > 1 else ()
        super().__init__(batch_shape, validate_args=validate_args)

    @lazy_property
    def logits(self) -> Tensor:
        """Normalised log-probabilities (``log`` of the clamped ``probs`` when made from
        ``probs``).
        """
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self) -> Tensor:
        """Probabilities (``softmax(logits)`` when made from ``logits``)."""
        return logits_to_probs(self.logits)

    @property
    def support(self) -> Any:
        """The whole numbers ``0 .. K-1``."""
        return constraints.integer_interval(0, self._num_events - 1)

    @property
    def param_shape(self) -> Size:
        """The shape of ``probs`` and ``logits``."""
        return Size(self._param.shape)

    @property
    def mean(self) -> Tensor:
        """Undefined for categories: NaN, as in PyTorch."""
        return factories.full(
            tuple(self._extended_shape()),
            float("nan"),
            dtype=self._param.dtype,
            device=self._param.device,
        )

    @property
    def mode(self) -> Tensor:
        """The most probable category."""
        probs: Tensor = self.probs
        return probs.argmax(-1)

    @property
    def variance(self) -> Tensor:
        """Undefined for categories: NaN, as in PyTorch."""
        return self.mean

    def sample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        """Categories drawn (int64), of shape ``sample_shape + batch_shape``."""
        count = int(np.prod(tuple(sample_shape), dtype=np.int64))
        with no_grad():
            probs_2d = self.probs.reshape(-1, self._num_events)
            samples_2d = multinomial(probs_2d, count, True).T
        return samples_2d.reshape(*self._extended_shape(sample_shape))

    def log_prob(self, value: Tensor) -> Tensor:
        """``log p_value``, broadcasting ``value`` against the batch."""
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = broadcast_tensors(value, self.logits)
        value = value[..., :1]
        return gather(log_pmf, -1, value).squeeze(-1)

    def entropy(self) -> Tensor:
        """``-sum_i p_i log p_i`` (a category of probability 0 adds 0)."""
        min_real = float(np.finfo(self.logits.dtype).min)
        logits = clamp(self.logits, min=min_real)
        p_log_p: Tensor = logits * self.probs
        return -p_log_p.sum(-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        """Every category, ``0 .. K-1``, along a new first dim (expanded over the batch
        unless ``expand`` is False).

        Examples
        --------
        >>> import minitorch_accel as mta
        >>> Categorical(logits=mta.zeros(2, 3)).enumerate_support().shape
        (3, 2)
        """
        values = factories.arange(self._num_events, device=self._param.device)
        values = values.view(-1, *((1,) * len(self._batch_shape)))
        if expand:
            values = values.expand(-1, *self._batch_shape)
        return values


__all__ = ["Categorical"]
