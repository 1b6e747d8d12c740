"""Channel dropout (``dropout1d``, ``dropout2d``, ``dropout3d``): zero whole channels.

Neighbouring pixels of a feature map are strongly correlated, so zeroing single
elements (:func:`~minitorch_accel.ops.dropout.dropout`) barely regularises a
convolutional layer: the next layer reads the same information from the neighbours.
Channel dropout draws one keep-or-drop decision per ``(sample, channel)`` and applies
it to the whole map, scaling the kept channels by ``1 / (1 - p)`` so that each value's
expectation is unchanged. The mask comes from the same random source as ``dropout``
(the generator of the input's device, seeded by
:func:`minitorch_accel.manual_seed`), and the op is
:class:`~minitorch_accel.ops.dropout.Dropout` with a mask of shape ``(N, C, 1, ...)``
broadcast over the map.
"""

from __future__ import annotations

import warnings

from ..core.tensor import Tensor
from .dropout import drop_with_mask
from .tensor_methods import write_in_place


def _check_p(p: float) -> None:
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def feature_dropout(input: Tensor, p: float = 0.5, training: bool = True) -> Tensor:
    """Zero each ``input[n, c]`` (all its trailing dims at once) with probability ``p``,
    scaling the rest by ``1 / (1 - p)``; ``input`` itself when not ``training``, when
    ``p == 0`` or when it is empty (PyTorch's ``feature_dropout``).

    Raises
    ------
    ValueError
        If ``p`` is outside ``[0, 1]`` or ``input`` has fewer than 2 dims.
    TypeError
        If ``input`` is not floating point.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.ops.channel_dropout import feature_dropout
    >>> y = feature_dropout(mta.ones(4, 100, 3), p=0.5)
    >>> sorted(set(y.sum(2).tolist()[0]))  # each channel all kept (x2) or all dropped
    [0.0, 6.0]
    """
    _check_p(p)
    if not training or p == 0.0 or input.numel() == 0:
        return input
    if input.dtype.kind != "f":
        raise TypeError(f"dropout: input must be floating point, got {input.dtype}")
    if p == 1.0:
        return input * 0.0
    if input.ndim < 2:
        raise ValueError(
            f"feature dropout requires at least 2 dimensions in the input, got {input.shape}"
        )
    return drop_with_mask(input, p, input.shape[:2] + (1,) * (input.ndim - 2))  # per (n, c)


def _run(
    input: Tensor, p: float, training: bool, inplace: bool, batched: bool, name: str
) -> Tensor:
    """``feature_dropout`` on ``input`` (given a batch dim of 1 unless ``batched``),
    written into ``input`` with ``inplace`` as PyTorch (computed out of place first).
    """

    def compute(x: Tensor) -> Tensor:
        if batched:
            return feature_dropout(x, p, training)
        return feature_dropout(x.unsqueeze(0), p, training).squeeze(0)

    if not inplace:
        return compute(input)
    return write_in_place(input, compute, f"{name}(inplace=True)", saves_input=False)


def dropout1d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero whole channels of an ``(N, C, L)`` or ``(C, L)`` input with probability
    ``p``, scaling the others by ``1 / (1 - p)``; the identity when not ``training``.

    Parameters
    ----------
    input : Tensor
    p : float
        Probability of zeroing a channel, in ``[0, 1]``.
    training : bool
    inplace : bool
        Write the result into ``input`` (computed out of place first: no memory is
        saved).

    Raises
    ------
    ValueError
        If ``p`` is outside ``[0, 1]`` or ``input`` is not 2-D or 3-D (PyTorch raises
        RuntimeError for the latter).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.ops.channel_dropout import dropout1d
    >>> y = dropout1d(mta.ones(8, 5), p=0.5)
    >>> all(row in ([0.0] * 5, [2.0] * 5) for row in y.tolist())
    True
    """
    _check_p(p)
    if input.ndim not in (2, 3):
        raise ValueError(
            f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D input. Note "
            "that dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
            "dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D "
            "inputs)."
        )
    return _run(input, p, training, inplace, input.ndim == 3, "dropout1d")


def _warn_dims(name: str, ndim: int, spatial: int) -> None:
    warnings.warn(
        f"{name}: Received a {ndim}-D input to {name}, which is deprecated and will result "
        "in an error in a future release. To retain the behavior and silence this warning, "
        f"please use dropout instead. Note that {name} exists to provide channel-wise "
        f"dropout on inputs with {spatial} spatial dimensions, a channel dimension, and an "
        f"optional batch dimension (i.e. {spatial + 1}D or {spatial + 2}D inputs).",
        stacklevel=3,
    )


def dropout2d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero whole channels of an ``(N, C, H, W)`` input with probability ``p``, scaling
    the others by ``1 / (1 - p)``; the identity when not ``training``.

    As PyTorch: a 3-D input is taken as ``(N, C, L)`` (channel-wise 1-D dropout, with a
    warning that says so: use :func:`dropout1d`), and other numbers of dims warn that
    they are deprecated; dims 0 and 1 are then the batch and the channel.

    Parameters
    ----------
    input : Tensor
    p : float
        Probability of zeroing a channel, in ``[0, 1]``.
    training : bool
    inplace : bool
        Write the result into ``input`` (computed out of place first).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.ops.channel_dropout import dropout2d
    >>> y = dropout2d(mta.ones(2, 6, 3, 3), p=0.5)
    >>> sorted(set(y.sum((2, 3)).reshape(-1).tolist())) in ([0.0, 18.0], [0.0], [18.0])
    True
    """
    _check_p(p)
    if input.ndim not in (3, 4):
        _warn_dims("dropout2d", input.ndim, 2)
    if input.ndim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C "
            "is the channel dim. This behavior will change in a future release to interpret "
            "the input as one without a batch dimension, i.e. shape (C, H, W). To maintain "
            "the 1D channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2,
        )
    return _run(input, p, training, inplace, True, "dropout2d")


def dropout3d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero whole channels of an ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input with
    probability ``p``, scaling the others by ``1 / (1 - p)``; the identity when not
    ``training``.

    As PyTorch, other numbers of dims warn that they are deprecated and are taken as
    unbatched (dim 0 the channel).

    Parameters
    ----------
    input : Tensor
    p : float
        Probability of zeroing a channel, in ``[0, 1]``.
    training : bool
    inplace : bool
        Write the result into ``input`` (computed out of place first).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.ops.channel_dropout import dropout3d
    >>> dropout3d(mta.ones(3, 2, 2, 2), p=0.5, training=False).shape
    (3, 2, 2, 2)
    """
    _check_p(p)
    if input.ndim not in (4, 5):
        _warn_dims("dropout3d", input.ndim, 3)
    return _run(input, p, training, inplace, input.ndim == 5, "dropout3d")


__all__ = ["dropout1d", "dropout2d", "dropout3d", "feature_dropout"]
