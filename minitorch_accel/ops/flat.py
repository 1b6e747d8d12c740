"""One flat 1-D buffer for a list of arrays: where each sits, packing and unpacking.

Moving many small arrays between devices or processes costs one transfer (one launch,
one message) each; moving one flat buffer costs one. The tower trainer
(:mod:`minitorch_accel.parallel`) and the MPI all-reduce
(:mod:`minitorch_accel.distributed`) both pack through :class:`FlatLayout`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["FlatLayout"]


class FlatLayout:
    """Where each of a list of tensors sits in one flat 1-D buffer of a single dtype.

    Parameters
    ----------
    shapes : sequence of tuple of int
        The shape of each tensor, in buffer order.
    dtypes : sequence of numpy.dtype
        The dtype of each tensor. Integer and bool tensors (a batch-norm step
        counter) travel as ``dtype`` and are rounded back when unpacked.
    dtype : numpy.dtype
        The dtype of the buffer.

    Examples
    --------
    >>> import numpy as np
    >>> layout = FlatLayout([(2, 2), (3,)], [np.dtype("f8")] * 2, np.dtype("f8"))
    >>> flat = layout.pack([np.ones((2, 2)), np.arange(3.0)], np)
    >>> flat
    array([1., 1., 1., 1., 0., 1., 2.])
    >>> [a.shape for a in layout.unpack(flat)]
    [(2, 2), (3,)]
    """

    def __init__(
        self,
        shapes: Sequence[tuple[int, ...]],
        dtypes: Sequence[np.dtype[Any]],
        dtype: np.dtype[Any],
    ) -> None:
        self.shapes = [tuple(int(n) for n in s) for s in shapes]
        self.dtypes = list(dtypes)
        self.dtype = np.dtype(dtype)
        self.sizes = [int(np.prod(s, dtype=np.int64)) for s in self.shapes]
        self.offsets = [int(o) for o in np.cumsum([0, *self.sizes])[:-1]]
        self.numel = int(sum(self.sizes))

    @property
    def nbytes(self) -> int:
        """Bytes of one packed buffer."""
        return self.numel * self.dtype.itemsize

    def pack(self, arrays: Sequence[Any | None], xp: Any, out: Any = None) -> Any:
        """Copy ``arrays`` (None counts as zeros) into one flat buffer of ``xp``.

        ``out``, a 1-D array of :attr:`numel` elements, is filled instead of a new
        buffer when given (a pinned host buffer reused every step).
        """
        flat = xp.empty(self.numel, dtype=self.dtype) if out is None else out
        for array, offset, size in zip(arrays, self.offsets, self.sizes, strict=True):
            if array is None:
                flat[offset : offset + size] = 0
            else:
                flat[offset : offset + size] = array.reshape(-1)
        return flat

    def unpack(self, flat: Any) -> list[Any]:
        """The tensors' arrays out of ``flat``: views, except rounded integer ones."""
        arrays = []
        for shape, dtype, offset, size in zip(
            self.shapes, self.dtypes, self.offsets, self.sizes, strict=True
        ):
            view = flat[offset : offset + size].reshape(shape)
            if dtype.kind != "f":
                view = view.round().astype(dtype)
            arrays.append(view)
        return arrays
