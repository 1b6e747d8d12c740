"""Transposed convolution, as ``torch.nn.functional.conv_transpose2d`` and
``conv_transpose1d``: the input gradient of a convolution, run forward.

A convolution with stride ``s`` maps a large image to a small one; its transpose maps
the small one back to the large size. Every input pixel scatters a copy of the kernel,
scaled by its value, into the output, ``s`` pixels after its neighbour's copy
(``dilation`` spreads the kernel's taps); where the copies overlap they add up, and
``padding`` rows and columns are then cropped from each border. That scatter is what a
convolution's backward does with ``grad_y`` (col2im), so this op is
:class:`~minitorch_accel.ops.conv.Conv2dGradInput` applied to the input, with
PyTorch's transposed weight (C_in, C_out / groups, KH, KW) as that convolution's weight
(O, C / groups, KH, KW). Its backward (a convolution, and a convolution's weight
gradient) gives gradients of every order, and the backends' fast paths serve it by
the same name. The bias is a broadcast add.

The output size along each dim is

    ``H_out = (H - 1) * stride - 2 * padding + dilation * (KH - 1) + output_padding + 1``

``output_padding`` adds rows at the bottom (columns on the right) only: it picks one of
the ``stride`` input sizes that a convolution maps onto H. The convolution of an
``H_out`` image sees ``H + output_padding // stride`` windows, so where ``output_padding``
is not smaller than ``stride`` (PyTorch allows it when it is smaller than
``dilation``) the scatter runs uncropped and :func:`~minitorch_accel.ops.pad.pad`
crops and extends it instead. A 1-D transposed convolution is a 2-D one over images
of height 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core import autocast_state
from ..core.tensor import Tensor
from .conv import Conv2dGradInput
from .pad import pad

IntTuple = int | tuple[int, ...]
"""An int used for every spatial dim, or one int per spatial dim."""


def conv_transpose2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: IntTuple = 1,
    padding: IntTuple = 0,
    output_padding: IntTuple = 0,
    groups: int = 1,
    dilation: IntTuple = 1,
) -> Tensor:
    """2-D transposed convolution ("deconvolution") over NCHW images, as
    ``torch.nn.functional.conv_transpose2d`` (note its argument order: ``groups``
    before ``dilation``).

    ``y[n, g*O/groups + o, i*sh + p*dh - ph, j*sw + q*dw - pw] += x[n, c, i, j] * w[c, o, p, q]``
    for every input pixel (i, j), channel ``c`` of group ``g`` and tap (p, q), then
    ``b`` added: each input pixel scatters the kernel into the output. It is the
    gradient of :func:`~minitorch_accel.ops.conv.conv2d` with respect to its input.

    Parameters
    ----------
    input : Tensor
        (N, C_in, H, W), or (C_in, H, W) for one image.
    weight : Tensor
        (C_in, C_out // groups, KH, KW).
    bias : Tensor, optional
        (C_out,).
    stride, padding, dilation : int or (int, int)
        Spacing of the kernel copies in the output, rows and columns cropped from each
        border, spacing of the kernel taps.
    output_padding : int or (int, int)
        Rows (columns) added at the bottom (right) of the output; each smaller than
        its stride or its dilation.
    groups : int
        Split the channels into ``groups`` independent transposed convolutions.

    Returns
    -------
    Tensor
        (N, C_out, H_out, W_out) (or (C_out, H_out, W_out)), with
        ``H_out = (H - 1)*sh - 2*ph + dh*(KH - 1) + oph + 1`` (same for W).

    Raises
    ------
    ValueError
        Wrong input or weight rank, channels that do not match the weight, groups not
        dividing in_channels, stride or dilation <= 0, negative padding,
        ``output_padding`` too large, a padding that leaves no output, a bias of the
        wrong shape; the message names the shapes.
    TypeError
        Inputs that are not tensors or whose dtypes differ.

    Notes
    -----
    The input gradient is a convolution over the zero-padded output gradient, and a
    padded zero times an infinite or NaN weight is NaN here, as in PyTorch's float64
    CPU kernels; PyTorch's float32 CPU kernels (oneDNN) skip the padded taps, so there
    such a gradient entry can be finite.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> x, w = mta.ones(1, 1, 2, 2), mta.ones(1, 1, 3, 3)
    >>> conv_transpose2d(x, w, stride=2)[0, 0].tolist()[2]  # where the copies overlap
    [2.0, 2.0, 4.0, 2.0, 2.0]
    >>> conv_transpose2d(x, w, stride=2, padding=1, output_padding=1).shape
    (1, 1, 4, 4)
    """
    return _conv_transpose(
        "conv_transpose2d",
        2,
        input,
        weight,
        bias,
        stride,
        padding,
        output_padding,
        groups,
        dilation,
    )


def conv_transpose1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: IntTuple = 1,
    padding: IntTuple = 0,
    output_padding: IntTuple = 0,
    groups: int = 1,
    dilation: IntTuple = 1,
) -> Tensor:
    """1-D transposed convolution over (N, C_in, L) sequences, as
    ``torch.nn.functional.conv_transpose1d``: :func:`conv_transpose2d` on images of
    height 1.

    Parameters
    ----------
    input : Tensor
        (N, C_in, L), or (C_in, L) for one sequence.
    weight : Tensor
        (C_in, C_out // groups, K).
    bias : Tensor, optional
        (C_out,).
    stride, padding, output_padding, dilation : int or (int,)
    groups : int
        As :func:`conv_transpose2d`.

    Returns
    -------
    Tensor
        (N, C_out, L_out), ``L_out = (L - 1)*stride - 2*padding + dilation*(K - 1)
        + output_padding + 1``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> x, w = mta.tensor([[[1.0, 10.0]]]), mta.tensor([[[1.0, 2.0, 3.0]]])
    >>> conv_transpose1d(x, w).tolist()
    [[[1.0, 12.0, 23.0, 30.0]]]
    >>> conv_transpose1d(x, w, stride=3).tolist()
    [[[1.0, 2.0, 3.0, 10.0, 20.0, 30.0]]]
    """
    return _conv_transpose(
        "conv_transpose1d",
        1,
        input,
        weight,
        bias,
        stride,
        padding,
        output_padding,
        groups,
        dilation,
    )


def conv_transpose_output_size(
    input_size: Sequence[int],
    kernel_size: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    output_padding: Sequence[int],
    dilation: Sequence[int],
) -> tuple[int, ...]:
    """The spatial output size of a transposed convolution, one int per dim:
    ``(size - 1)*stride - 2*padding + dilation*(kernel - 1) + output_padding + 1``.

    Examples
    --------
    >>> conv_transpose_output_size((7,), (3,), (2,), (1,), (1,), (1,))
    (14,)
    """
    return tuple(
        (size - 1) * s - 2 * p + d * (k - 1) + op + 1
        for size, k, s, p, op, d in zip(
            input_size, kernel_size, stride, padding, output_padding, dilation, strict=True
        )
    )


def _scatter(
    x: Tensor,
    w: Tensor,
    stride: tuple[int, int],
    padding: tuple[int, int],
    output_padding: tuple[int, int],
    groups: int,
    dilation: tuple[int, int],
) -> Tensor:
    """The transposed convolution of checked 4-D ``x`` and ``w``, without bias: the
    input gradient of the convolution that maps the output back onto ``x``.
    """
    out_shape = (len(x), w.shape[1] * groups)
    conv = {"stride": stride, "dilation": dilation, "groups": groups}
    if all(op < s for op, s in zip(output_padding, stride, strict=True)):
        out_hw = conv_transpose_output_size(
            x.shape[2:], w.shape[2:], stride, padding, output_padding, dilation
        )
        return Conv2dGradInput.apply(x, w, x_shape=(*out_shape, *out_hw), padding=padding, **conv)
    # stride <= output_padding < dilation: scatter uncropped, then crop `padding` from
    # the top and left, `padding - output_padding` from the bottom and right (a
    # negative crop adds zeros).
    full_hw = conv_transpose_output_size(x.shape[2:], w.shape[2:], stride, (0, 0), (0, 0), dilation)
    y = Conv2dGradInput.apply(x, w, x_shape=(*out_shape, *full_hw), padding=(0, 0), **conv)
    (ph, pw), (oph, opw) = padding, output_padding
    return pad(y, (-pw, opw - pw, -ph, oph - ph))


def _conv_transpose(
    name: str,
    dims: int,
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None,
    stride: IntTuple,
    padding: IntTuple,
    output_padding: IntTuple,
    groups: int,
    dilation: IntTuple,
) -> Tensor:
    """Check a ``dims``-D call of op ``name``, then run it as a 2-D one."""
    for what, t in (("input", input), ("weight", weight), ("bias", bias)):
        if t is not None and not isinstance(t, Tensor):
            raise TypeError(f"{name}: {what} must be a Tensor, got {type(t).__name__}")
    if autocast_state.state.dtype is not None:
        input, weight, bias = autocast_state.to_compute_dtype(  # type: ignore[assignment]
            input, weight, bias
        )
    s, p, op, d = (
        _ints(name, what, value, dims)
        for what, value in (
            ("stride", stride),
            ("padding", padding),
            ("output_padding", output_padding),
            ("dilation", dilation),
        )
    )
    _check_settings(name, s, p, op, d)
    unbatched = _check_shapes(name, dims, input, weight, bias, groups)
    x = input.unsqueeze(0) if unbatched else input
    out_size = conv_transpose_output_size(x.shape[2:], weight.shape[2:], s, p, op, d)
    if min(out_size) < 1:
        raise ValueError(
            f"{name}: input {tuple(input.shape)} with weight {tuple(weight.shape)}, "
            f"stride {s}, padding {p}, output_padding {op}, dilation {d} gives output "
            f"size {out_size}: it must be positive (use a smaller padding)"
        )
    if dims == 1:  # a sequence is an image of height 1
        x, weight = x.unsqueeze(2), weight.unsqueeze(2)
        s, p, op, d = (1, *s), (0, *p), (0, *op), (1, *d)
    y = _scatter(x, weight, s, p, op, groups, d)  # type: ignore[arg-type]
    y = y.squeeze(2) if dims == 1 else y
    if bias is not None:
        y = y + bias.reshape(1, -1, *(1,) * dims)
    return y.squeeze(0) if unbatched else y


def _ints(name: str, what: str, value: Any, dims: int) -> tuple[int, ...]:
    """``value`` (an int, or a sequence of ``dims`` ints) as a tuple of ``dims`` ints."""
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,) * dims
    if (
        isinstance(value, (tuple, list))
        and len(value) == dims
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        return tuple(value)
    raise ValueError(f"{name}: {what} must be an int or a tuple of {dims} ints, got {value!r}")


def _check_settings(
    name: str, s: tuple[int, ...], p: tuple[int, ...], op: tuple[int, ...], d: tuple[int, ...]
) -> None:
    """Stride and dilation positive, paddings not negative, output_padding in range."""
    if min(s) <= 0 or min(d) <= 0:
        raise ValueError(f"{name}: stride {s} and dilation {d} must be positive")
    if min(p) < 0 or min(op) < 0:
        raise ValueError(f"{name}: padding {p} and output_padding {op} must not be negative")
    if any(o >= max(si, di) for o, si, di in zip(op, s, d, strict=True)):
        raise ValueError(
            f"{name}: output padding must be smaller than either stride or dilation, in "
            f"every dim: got output_padding {op}, stride {s}, dilation {d}"
        )


def _check_shapes(
    name: str, dims: int, x: Tensor, w: Tensor, b: Tensor | None, groups: int
) -> bool:
    """Raise a clear error for ranks, channels, groups, dtypes or a bias that do not
    fit; return whether ``x`` is one unbatched sample.
    """
    spatial = "L" if dims == 1 else "H, W"
    kernel = "K" if dims == 1 else "KH, KW"
    if x.ndim not in (dims + 1, dims + 2):
        raise ValueError(
            f"{name}: expected a {dims + 1}-D (unbatched) input (C_in, {spatial}) or a "
            f"{dims + 2}-D (batched) input (N, C_in, {spatial}), got shape {tuple(x.shape)}"
        )
    if w.ndim != dims + 2:
        raise ValueError(
            f"{name}: weight must be {dims + 2}-D (C_in, C_out // groups, {kernel}), "
            f"got shape {tuple(w.shape)}"
        )
    if not isinstance(groups, int) or groups < 1 or w.shape[0] % groups:
        raise ValueError(
            f"{name}: groups={groups!r} must be a positive int dividing in_channels, the "
            f"weight's dim 0: weight {tuple(w.shape)}"
        )
    channels = x.shape[0 if x.ndim == dims + 1 else 1]
    if channels != w.shape[0]:
        raise ValueError(
            f"{name}: input {tuple(x.shape)} has {channels} channels, but weight "
            f"{tuple(w.shape)} expects in_channels = {w.shape[0]} (its dim 0)"
        )
    if x.dtype != w.dtype or (b is not None and b.dtype != x.dtype):
        raise TypeError(
            f"{name}: dtypes differ: input {x.dtype}, weight {w.dtype}"
            + ("" if b is None else f", bias {b.dtype}")
        )
    out_channels = w.shape[1] * groups
    if b is not None and tuple(b.shape) != (out_channels,):
        raise ValueError(
            f"{name}: bias {tuple(b.shape)} must have shape ({out_channels},): "
            f"out_channels = weight.shape[1] * groups = {w.shape[1]} * {groups}"
        )
    return x.ndim == dims + 1


__all__ = ["conv_transpose1d", "conv_transpose2d", "conv_transpose_output_size"]
