"""``Size``: the type of :attr:`Tensor.shape` and :meth:`Tensor.size`, a tuple of ints.

As ``torch.Size``, it is a plain tuple (it compares equal to one, unpacks, indexes and
concatenates as one) with :meth:`Size.numel` on top.
"""

from __future__ import annotations

import math


class Size(tuple[int, ...]):
    """The size of each dimension of a tensor: a tuple subclass, as ``torch.Size``.

    Its repr is that of a plain tuple, ``(2, 3)``, where PyTorch prints
    ``torch.Size([2, 3])``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> s = mta.zeros(2, 3).size()
    >>> s == (2, 3), s[1], s.numel()
    (True, 3, 6)
    """

    __slots__ = ()

    def numel(self) -> int:
        """The number of elements of a tensor of this size (the product)."""
        return math.prod(self)
