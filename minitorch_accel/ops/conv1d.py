"""``conv1d``: a 1-D convolution is a 2-D one over images of height 1."""

from __future__ import annotations

from ..core.tensor import Tensor
from .conv import conv2d


def conv1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: int = 1,
    padding: int = 0,
    dilation: int = 1,
    groups: int = 1,
) -> Tensor:
    """Convolve ``input`` (N, C, L) with ``weight`` (O, C / groups, K): output
    (N, O, L_out), ``L_out = (L + 2 padding - dilation (K - 1) - 1) // stride + 1``.

    Computed as :func:`~minitorch_accel.ops.conv.conv2d` on (N, C, 1, L).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> x, w = mta.ones(1, 1, 5), mta.ones(1, 1, 3)
    >>> mta.nn.functional.conv1d(x, w).tolist()
    [[[3.0, 3.0, 3.0]]]
    """
    if isinstance(input, Tensor) and input.ndim == 2:  # unbatched (C, L), as PyTorch accepts
        return conv1d(input.unsqueeze(0), weight, bias, stride, padding, dilation, groups)[0]
    if input.ndim != 3 or weight.ndim != 3:
        raise ValueError(
            f"conv1d: input {input.shape}, weight {weight.shape}: expected input (N, C, L) "
            "and weight (O, C/groups, K)"
        )
    out = conv2d(
        input.unsqueeze(2),
        weight.unsqueeze(2),
        bias,
        (1, stride),
        (0, padding),
        (1, dilation),
        groups,
    )
    return out.squeeze(2)
