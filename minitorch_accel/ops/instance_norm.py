"""``instance_norm``: normalize each channel of each sample on its own, as
``torch.nn.functional.instance_norm``.

For a sample ``n`` and a channel ``c``, over the spatial dims (``M`` values)::

    y[n, c] = (x[n, c] - mean[n, c]) / sqrt(var[n, c] + eps) * weight[c] + bias[c]

``var`` is biased. It is :func:`~minitorch_accel.ops.norm.batch_norm` with every
``(n, c)`` pair taken as its own channel (PyTorch computes it that way), written here
with Tensor ops, so its gradients of every order come from those ops. With
``use_input_stats`` and running statistics given, these are updated in place as
PyTorch does: each running value moves towards the average over the batch of the
samples' statistics, ``running = (1 - momentum) * running + momentum * mean_n(stat)``,
with the *unbiased* variance (``var * M / (M - 1)``) for ``running_var``.
"""

from __future__ import annotations

import math

from ..core.grad_mode import no_grad
from ..core.tensor import Tensor


def _check_channel_vector(name: str, vector: Tensor | None, input: Tensor) -> None:
    if vector is not None and vector.shape != (input.shape[1],):
        raise ValueError(
            f"instance_norm: {name} must have shape ({input.shape[1]},) for an input of "
            f"shape {input.shape} (N, C, ...), got {vector.shape}"
        )


def _update_running(running: Tensor, stat: Tensor, momentum: float) -> None:
    """``running = (1 - momentum) * running + momentum * stat.mean(0)``, in place;
    ``stat`` is (N, C).
    """
    with no_grad():
        new = running * (1.0 - momentum) + stat.detach().to(dtype=running.dtype) * momentum
        running.copy_(new.mean(0))


def instance_norm(
    input: Tensor,
    running_mean: Tensor | None = None,
    running_var: Tensor | None = None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    use_input_stats: bool = True,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalize each ``input[n, c]`` over its spatial dims, then scale by ``weight[c]``
    and shift by ``bias[c]``.

    Parameters
    ----------
    input : Tensor
        (N, C, d1, ...), at least one spatial dim.
    running_mean, running_var : Tensor, optional
        (C,) buffers, both or neither: updated in place when ``use_input_stats``, used
        in place of the sample statistics when not.
    weight, bias : Tensor, optional
        (C,) scale and shift.
    use_input_stats : bool
        Normalize with each sample's own statistics (True) or with the running ones.
    momentum : float
        Weight of the new statistics in the running ones.
    eps : float
        Added to the variance for stability.

    Raises
    ------
    ValueError
        For an input of fewer than 3 dims, a vector of the wrong shape, running
        statistics given one without the other or missing when ``use_input_stats`` is
        False, or a single spatial element with ``use_input_stats``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.ops.instance_norm import instance_norm
    >>> y = instance_norm(mta.tensor([[[1.0, 3.0], [0.0, 4.0]]]))
    >>> [[round(v, 3) for v in row] for row in y[0].tolist()]
    [[-1.0, 1.0], [-1.0, 1.0]]
    """
    if input.ndim < 3:
        raise ValueError(
            f"instance_norm: expected an input of shape (N, C, d1, ...) with at least one "
            f"spatial dim, got {input.shape}; give an unbatched (C, L) input a batch dim "
            "with .unsqueeze(0)"
        )
    if (running_mean is None) != (running_var is None):
        raise ValueError("instance_norm: give both running_mean and running_var, or neither")
    for name, vector in (
        ("running_mean", running_mean),
        ("running_var", running_var),
        ("weight", weight),
        ("bias", bias),
    ):
        _check_channel_vector(name, vector, input)
    channel_shape = (1, input.shape[1]) + (1,) * (input.ndim - 2)
    if use_input_stats:
        spatial = math.prod(input.shape[2:])
        if spatial == 1:
            raise ValueError(
                f"Expected more than 1 spatial element when training, got input size {input.shape}"
            )
        dims = tuple(range(2, input.ndim))
        mean = input.mean(dims, keepdim=True)
        centered = input - mean
        var = (centered * centered).mean(dims, keepdim=True)
        out = centered * (var + eps).rsqrt()
        if running_mean is not None and running_var is not None:
            n, c = input.shape[:2]
            _update_running(running_mean, mean.reshape(n, c), momentum)
            _update_running(running_var, var.reshape(n, c) * (spatial / (spatial - 1)), momentum)
    else:
        if running_mean is None or running_var is None:
            raise ValueError(
                "instance_norm: use_input_stats=False normalizes with running_mean and "
                "running_var; give both"
            )
        mean, var = running_mean.reshape(channel_shape), running_var.reshape(channel_shape)
        out = (input - mean) * (var + eps).rsqrt()
    if weight is not None:
        out = out * weight.reshape(channel_shape)
    if bias is not None:
        out = out + bias.reshape(channel_shape)
    return out


__all__ = ["instance_norm"]
