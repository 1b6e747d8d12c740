"""Probability distributions, as ``torch.distributions``: :class:`Categorical` (the
policy of the reinforcement-learning examples) and :class:`Normal`, with PyTorch's
argument validation, shapes (``sample_shape + batch_shape + event_shape``) and
``log_prob``/``entropy``.

Only these two of PyTorch's distributions are here (no ``kl_divergence``, transforms or
``expand``); draws come from this framework's generators, so for one seed they differ
from PyTorch's while their distribution is the same.

Examples
--------
>>> import minitorch_accel as mta
>>> from minitorch_accel.distributions import Categorical
>>> probs = mta.tensor([[0.9, 0.1]], requires_grad=True)
>>> m = Categorical(probs)
>>> action = m.sample()
>>> loss = -m.log_prob(mta.tensor([0])).sum()
>>> loss.backward(); probs.grad.shape
(1, 2)
"""

from . import constraints
from .categorical import Categorical
from .distribution import Distribution
from .normal import Normal

__all__ = ["Categorical", "Distribution", "Normal", "constraints"]
