"""``one_hot``: class indices as rows of zeros with a single one, as
``torch.nn.functional.one_hot``. Not differentiable: its input is integers.
"""

from __future__ import annotations

import numpy as np

from ..core.function import on_input_device
from ..core.tensor import Tensor


@on_input_device
def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """``out[..., c] = 1`` where ``tensor[...] == c``, else 0: an int64 tensor of shape
    ``(*tensor.shape, num_classes)``.

    Parameters
    ----------
    tensor : Tensor
        Class indices, an integer tensor of any shape. PyTorch takes int64 only; any
        integer dtype is accepted here.
    num_classes : int
        The length of the new last dim; -1 (the default) takes the largest index plus
        one.

    Returns
    -------
    Tensor
        int64, with no gradient (as PyTorch's).

    Raises
    ------
    TypeError
        If ``tensor`` is not an integer tensor (floats and bools are refused, as in
        PyTorch), or ``num_classes`` is not an int.
    IndexError
        If an index is negative or not smaller than ``num_classes`` (naming it).
    ValueError
        If ``num_classes`` is below -1, or is -1 or 0 for an empty ``tensor`` (the
        number of classes cannot be inferred).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.ops.one_hot import one_hot
    >>> one_hot(mta.tensor([0, 2, 1])).tolist()
    [[1, 0, 0], [0, 0, 1], [0, 1, 0]]
    >>> one_hot(mta.tensor([1]), num_classes=4).tolist()
    [[0, 1, 0, 0]]
    """
    if not isinstance(tensor, Tensor) or tensor.dtype.kind not in "iu":
        got = f"a tensor of {tensor.dtype}" if isinstance(tensor, Tensor) else type(tensor)
        raise TypeError(
            f"one_hot is only applicable to an index tensor of integers, got {got}; "
            "convert class indices with .long()"
        )
    if not isinstance(num_classes, (int, np.integer)) or isinstance(num_classes, bool):
        raise TypeError(f"one_hot: num_classes must be an int, got {num_classes!r}")
    if num_classes < -1:
        raise ValueError(
            f"one_hot: num_classes must be -1 (inferred) or a number of classes, got {num_classes}"
        )
    labels = tensor.array
    if labels.size == 0:
        if num_classes <= 0:
            raise ValueError(
                "one_hot: can not infer total number of classes from empty tensor; give num_classes"
            )
    else:
        low, high = int(labels.min()), int(labels.max())  # one read back from the device
        if low < 0:
            raise IndexError(f"one_hot: class values must be non-negative, got {low}")
        if num_classes == -1:
            num_classes = high + 1
        elif high >= num_classes:
            raise IndexError(
                f"one_hot: class values must be smaller than num_classes={num_classes}, got {high}"
            )
    xp = tensor.xp
    classes = xp.arange(int(num_classes))
    out = (labels[..., None] == classes).astype(np.int64)
    return Tensor._make(out, tensor.device, False, None)


__all__ = ["one_hot"]
