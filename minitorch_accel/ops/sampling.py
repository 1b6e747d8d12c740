"""``multinomial``: draw category indices from rows of non-negative weights, as
``torch.multinomial``. Not differentiable: its output is integers.

With replacement each draw is an inverse-CDF lookup: a uniform ``u`` in [0, 1) picks the
first category whose cumulative (normalised) weight exceeds ``u``, so a category of
weight 0 is never drawn. Without replacement the categories race: each gets the key
``w / E`` with ``E`` an exponential draw, and the ``num_samples`` largest keys win (the
exponential-race form of sampling without replacement, which PyTorch uses too).

The draws come from the device's generator (seeded by :func:`minitorch_accel.manual_seed`),
so they differ from PyTorch's for the same seed; their distribution is the same.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.factories import device_generator
from ..core.function import on_input_device
from ..core.tensor import Tensor

_MAX_CATEGORIES = 2**24  # PyTorch's limit: float32 represents every index below it


def _check_weights(input: Tensor, num_samples: int, replacement: bool) -> None:
    if not isinstance(input, Tensor) or input.dtype.kind != "f":
        got = f"a tensor of {input.dtype}" if isinstance(input, Tensor) else type(input)
        raise TypeError(f"multinomial only supports floating-point dtypes for input, got {got}")
    if input.ndim not in (1, 2):
        raise ValueError(f"multinomial: prob_dist must be 1 or 2 dim, got shape {input.shape}")
    if isinstance(num_samples, bool) or not isinstance(num_samples, (int, np.integer)):
        raise TypeError(f"multinomial: num_samples must be an int, got {num_samples!r}")
    if num_samples <= 0:
        raise ValueError(f"multinomial: cannot sample n_sample <= 0 samples (got {num_samples})")
    categories = input.shape[-1]
    if not replacement and num_samples > categories:
        raise ValueError(
            f"multinomial: cannot sample n_sample > prob_dist.size(-1) samples without "
            f"replacement ({num_samples} > {categories}); pass replacement=True"
        )
    if categories > _MAX_CATEGORIES:
        raise ValueError(f"multinomial: number of categories cannot exceed 2^24, got {categories}")


@on_input_device
def multinomial(
    input: Tensor, num_samples: int, replacement: bool = False, *, generator: Any = None
) -> Tensor:
    """Indices drawn from each row of ``input``, category ``i`` with probability
    ``input[..., i] / input.sum(-1)``.

    Parameters
    ----------
    input : Tensor
        Weights, 1-D (one distribution) or 2-D (one per row); non-negative and finite,
        with a positive sum in every row. They need not sum to 1.
    num_samples : int
        Draws per row.
    replacement : bool
        Draw with replacement (each draw independent) or without (each category at most
        once; the default, as in PyTorch).
    generator : random generator, optional
        Drawn from instead of the device's generator.

    Returns
    -------
    Tensor
        int64 indices of shape ``(num_samples,)`` or ``(rows, num_samples)``.

    Raises
    ------
    TypeError
        If ``input`` is not a floating-point tensor or ``num_samples`` is not an int.
    ValueError
        If ``input`` is not 1-D or 2-D, holds a negative, infinite or NaN weight, a row
        sums to 0, ``num_samples`` is not positive, or (without replacement) asks for
        more draws than a row has categories. (PyTorch raises ``RuntimeError`` for
        these.) Without replacement, categories of weight 0 are drawn once those of
        positive weight run out, as in PyTorch.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.manual_seed(0)
    >>> weights = mta.tensor([0.0, 10.0, 3.0, 0.0])
    >>> draws = mta.multinomial(weights, 1000, replacement=True)
    >>> draws.shape, sorted(set(draws.tolist()))
    ((1000,), [1, 2])
    >>> sorted(mta.multinomial(weights, 2).tolist())  # without replacement: each once
    [1, 2]
    """
    _check_weights(input, num_samples, replacement)
    xp = input.xp
    weights = input.array.reshape(-1, input.shape[-1]).astype(np.float64)
    if not bool(xp.all(xp.isfinite(weights) & (weights >= 0))):
        raise ValueError(
            "multinomial: probability tensor contains either `inf`, `nan` or element < 0"
        )
    totals = weights.sum(axis=1)
    if not bool(xp.all(totals > 0)):
        raise ValueError(
            "multinomial: invalid multinomial distribution (sum of probabilities <= 0)"
        )
    rows = weights.shape[0]
    gen = device_generator(input.device, generator)
    if replacement:
        cdf = xp.cumsum(weights, axis=1)
        cdf /= cdf[:, -1:]  # the last entry is exactly 1, and every u < 1
        uniform = gen.random((rows, int(num_samples)))
        out = xp.stack([xp.searchsorted(cdf[r], uniform[r], side="right") for r in range(rows)])
    else:  # categories of weight 0 get key 0: drawn last, in some order, as in PyTorch
        keys = weights / gen.standard_exponential(weights.shape)
        out = xp.argsort(-keys, axis=1)[:, : int(num_samples)]
    out = out.astype(np.int64)
    shape = (int(num_samples),) if input.ndim == 1 else (rows, int(num_samples))
    return Tensor._make(out.reshape(shape), input.device, False, None)


__all__ = ["multinomial"]
