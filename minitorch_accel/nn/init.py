"""Weight initialization, in place, as ``torch.nn.init``.

Random values are drawn on the host from the host generator (seeded by
:func:`minitorch_accel.manual_seed`), or from the NumPy ``generator=`` given (PyTorch
takes a ``torch.Generator`` there), and then copied to the tensor's device, so a model
starts from the same weights whichever device it lives on. Every function works under
``no_grad``, writes into ``tensor`` and returns it.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ..core.factories import host_generator
from ..core.grad_mode import no_grad
from ..core.tensor import Tensor

_LINEAR = (
    "linear",
    "conv1d",
    "conv2d",
    "conv3d",
    "sigmoid",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
)


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for a nonlinearity (as ``torch.nn.init.calculate_gain``).

    ``1`` for linear, the convolutions (``conv1d`` .. ``conv_transpose3d``) and sigmoid,
    ``5/3`` for tanh, ``sqrt(2)`` for relu, ``sqrt(2 / (1 + a**2))`` for leaky_relu with
    negative slope ``a = param`` (default 0.01), ``3/4`` for selu.

    Examples
    --------
    >>> calculate_gain("leaky_relu", 1.0)
    1.0
    >>> calculate_gain("tanh")
    1.6666666666666667
    """
    if nonlinearity in _LINEAR:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3.0
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        if isinstance(slope, bool) or not isinstance(slope, (int, float)):
            raise ValueError(f"negative_slope {slope!r} is not a valid number")
        return math.sqrt(2.0 / (1.0 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4.0
    known = ", ".join((*_LINEAR, "tanh", "relu", "leaky_relu", "selu"))
    raise ValueError(f"unsupported nonlinearity {nonlinearity!r}; use one of {known}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """``(fan_in, fan_out)`` of a weight: (out, in) for a linear layer, and
    (out, in, *kernel) for a convolution, whose kernel size multiplies both.
    """
    if tensor.ndim < 2:
        raise ValueError(
            f"fan in and fan out need a tensor of at least 2 dims, got shape {tensor.shape}"
        )
    receptive = int(np.prod(tensor.shape[2:])) if tensor.ndim > 2 else 1
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"mode must be 'fan_in' or 'fan_out', got {mode!r}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _rng(generator: np.random.Generator | None) -> np.random.Generator:
    return generator if generator is not None else host_generator()


def _fill_from_host(tensor: Tensor, values: np.ndarray) -> Tensor:
    with no_grad():
        tensor.copy_(Tensor._from_data(values.astype(tensor.dtype, copy=False)))
    return tensor


def uniform_(
    tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: np.random.Generator | None = None
) -> Tensor:
    """Fill ``tensor`` with samples of U(a, b), in place.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> w = uniform_(mta.empty(2, 3), -1.0, 1.0)
    >>> bool((w.abs() <= 1).all())
    True
    """
    return _fill_from_host(tensor, _rng(generator).uniform(a, b, size=tensor.shape))


def normal_(
    tensor: Tensor,
    mean: float = 0.0,
    std: float = 1.0,
    generator: np.random.Generator | None = None,
) -> Tensor:
    """Fill ``tensor`` with samples of N(mean, std**2), in place.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> normal_(mta.empty(2, 3), std=0.0)
    tensor([[0., 0., 0.],
            [0., 0., 0.]])
    """
    return _fill_from_host(tensor, _rng(generator).normal(mean, std, size=tensor.shape))


def _norm_cdf(x: float) -> float:
    return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0


def trunc_normal_(
    tensor: Tensor,
    mean: float = 0.0,
    std: float = 1.0,
    a: float = -2.0,
    b: float = 2.0,
    generator: np.random.Generator | None = None,
) -> Tensor:
    """Fill ``tensor`` with samples of N(mean, std**2) truncated to ``[a, b]``, in place.

    As in PyTorch, by rejection: where ``[a, b]`` holds more than 30% of the normal's
    mass, normal draws outside it are redrawn until none is left; otherwise uniform draws
    on ``[a, b]`` are accepted with probability ``pdf(x) / pdf(mode)``. The bounds are
    compared in the tensor's dtype, so every value lies in ``[a, b]`` as that dtype
    rounds them.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> w = trunc_normal_(mta.empty(100), std=5.0, a=-1.0, b=1.0)
    >>> bool((w >= -1).all() and (w <= 1).all())
    True
    """
    if not a <= b:
        raise ValueError(f"trunc_normal_ needs a <= b, got a={a}, b={b}")
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn(
            "mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
            "The distribution of values may be incorrect.",
            stacklevel=2,
        )
    rng, shape = _rng(generator), tuple(tensor.shape)
    low, high = np.asarray([a, b], dtype=tensor.dtype).astype(np.float64)
    if _norm_cdf((b - mean) / std) - _norm_cdf((a - mean) / std) > 0.3:
        values = rng.normal(mean, std, size=shape)
        outside = (values < low) | (values > high)
        while outside.any():
            values[outside] = rng.normal(mean, std, size=int(outside.sum()))
            outside = (values < low) | (values > high)
    else:  # a narrow window: uniform proposals, accepted by the normal's density
        mode = max(a, min(mean, b))
        log_peak = -0.5 * ((mode - mean) / std) ** 2
        values = np.empty(shape)
        pending = np.ones(shape, dtype=bool)
        while pending.any():
            count = int(pending.sum())
            proposals = rng.uniform(low, high, size=count)
            log_density = -0.5 * ((proposals - mean) / std) ** 2 - log_peak
            accepted = np.log(rng.random(count)) <= log_density
            where = np.flatnonzero(pending)[accepted]
            values.flat[where] = proposals[accepted]
            pending.flat[where] = False
    return _fill_from_host(tensor, values)


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill ``tensor`` with ``val``, in place.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> constant_(mta.empty(2), 0.5)
    tensor([0.5, 0.5])
    """
    with no_grad():
        tensor.fill_(val)
    return tensor


def zeros_(tensor: Tensor) -> Tensor:
    """Fill ``tensor`` with zeros, in place.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> zeros_(mta.ones(2))
    tensor([0., 0.])
    """
    return constant_(tensor, 0.0)


def ones_(tensor: Tensor) -> Tensor:
    """Fill ``tensor`` with ones, in place.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> ones_(mta.zeros(2))
    tensor([1., 1.])
    """
    return constant_(tensor, 1.0)


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-d ``tensor`` with the identity matrix (ones on the main diagonal), in
    place: a ``Linear`` layer so initialized passes its inputs through.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> eye_(mta.empty(2, 3))
    tensor([[1., 0., 0.],
            [0., 1., 0.]])
    """
    if tensor.ndim != 2:
        raise ValueError(f"Only tensors with 2 dimensions are supported, got shape {tensor.shape}")
    return _fill_from_host(tensor, np.eye(*tensor.shape))


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fill a 3-, 4- or 5-d convolution weight with the Dirac delta, in place.

    ``weight[g * out_per_group + d, d, *centre] = 1`` for each group ``g`` and each
    ``d < min(out_per_group, in_channels)``, everything else 0: the convolution copies
    as many input channels as it can to its output (with ``groups``, within each group).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> dirac_(mta.empty(2, 1, 3))
    tensor([[[0., 1., 0.]],
    <BLANKLINE>
            [[0., 0., 0.]]])
    """
    if tensor.ndim not in (3, 4, 5):
        raise ValueError(
            f"Only tensors with 3, 4, or 5 dimensions are supported, got shape {tensor.shape}"
        )
    if groups < 1 or tensor.shape[0] % groups != 0:
        raise ValueError(f"dim 0 must be divisible by groups, got {tensor.shape[0]} and {groups}")
    out_per_group = tensor.shape[0] // groups
    centre = tuple(size // 2 for size in tensor.shape[2:])
    values = np.zeros(tensor.shape)
    for g in range(groups):
        for d in range(min(out_per_group, tensor.shape[1])):
            values[(g * out_per_group + d, d) + centre] = 1.0
    return _fill_from_host(tensor, values)


def xavier_uniform_(
    tensor: Tensor, gain: float = 1.0, generator: np.random.Generator | None = None
) -> Tensor:
    """Glorot uniform: U(-a, a) with ``a = gain * sqrt(6 / (fan_in + fan_out))``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> w = xavier_uniform_(mta.empty(4, 2))
    >>> bool((w.abs() <= 1).all())
    True
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    bound = math.sqrt(3.0) * std  # as PyTorch computes it
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(
    tensor: Tensor, gain: float = 1.0, generator: np.random.Generator | None = None
) -> Tensor:
    """Glorot normal: N(0, std**2) with ``std = gain * sqrt(2 / (fan_in + fan_out))``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> xavier_normal_(mta.empty(4, 2)).shape
    (4, 2)
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def _kaiming_std(tensor: Tensor, a: float, mode: str, nonlinearity: str) -> float | None:
    """``gain / sqrt(fan)``, or None (with PyTorch's warning) for a tensor of no element."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return None
    fan = _fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(
    tensor: Tensor,
    a: float = 0.0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: np.random.Generator | None = None,
) -> Tensor:
    """He uniform: U(-bound, bound) with ``bound = gain * sqrt(3 / fan)``.

    ``gain = calculate_gain(nonlinearity, a)``, ``fan`` is ``fan_in`` or ``fan_out`` as
    ``mode`` says. PyTorch's default for Linear and Conv2d weights is ``a = sqrt(5)``,
    which gives ``bound = 1 / sqrt(fan_in)``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> w = kaiming_uniform_(mta.empty(3, 6), nonlinearity="relu")
    >>> bool((w.abs() <= 1).all())
    True
    """
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    bound = math.sqrt(3.0) * std  # as PyTorch computes it
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(
    tensor: Tensor,
    a: float = 0.0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: np.random.Generator | None = None,
) -> Tensor:
    """He normal: N(0, std**2) with ``std = gain / sqrt(fan)``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> kaiming_normal_(mta.empty(3, 6), mode="fan_out").shape
    (3, 6)
    """
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(
    tensor: Tensor, gain: float = 1.0, generator: np.random.Generator | None = None
) -> Tensor:
    """Fill ``tensor`` with a (semi-)orthogonal matrix times ``gain``, in place.

    The tensor is seen as a matrix of ``shape[0]`` rows (its trailing dims flattened).
    A matrix of standard normal draws (transposed if it is wide) is factored as
    ``Q R``; ``Q`` times the signs of ``R``'s diagonal is uniformly distributed over the
    orthogonal matrices (Mezzadri, 2007). A tall result has orthonormal columns, a wide
    one orthonormal rows. Computed in float64 on the host, then cast.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> w = orthogonal_(mta.empty(3, 3, dtype=mta.float64))
    >>> bool(((w.T @ w - mta.eye(3, dtype=mta.float64)).abs() < 1e-12).all())
    True
    """
    if tensor.ndim < 2:
        raise ValueError(
            f"Only tensors with 2 or more dimensions are supported, got shape {tensor.shape}"
        )
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flattened = _rng(generator).normal(0.0, 1.0, size=(rows, cols))
    if rows < cols:
        flattened = flattened.T
    q, r = np.linalg.qr(flattened)
    q *= np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return _fill_from_host(tensor, (q * gain).reshape(tensor.shape))


def sparse_(
    tensor: Tensor,
    sparsity: float,
    std: float = 0.01,
    generator: np.random.Generator | None = None,
) -> Tensor:
    """Fill a 2-d ``tensor`` with N(0, std**2) draws, then zero
    ``ceil(sparsity * rows)`` randomly chosen entries of each column, in place
    (Martens, 2010).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> w = sparse_(mta.empty(4, 3), sparsity=0.5)
    >>> (w == 0).sum(dim=0).tolist()
    [2, 2, 2]
    """
    if tensor.ndim != 2:
        raise ValueError(f"Only tensors with 2 dimensions are supported, got shape {tensor.shape}")
    rng = _rng(generator)
    rows, cols = tensor.shape
    num_zeros = math.ceil(sparsity * rows)
    values = rng.normal(0.0, std, size=(rows, cols))
    for col in range(cols):
        values[rng.permutation(rows)[:num_zeros], col] = 0.0
    return _fill_from_host(tensor, values)
