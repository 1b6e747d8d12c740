"""Sequences of different lengths in one batch, as ``torch.nn.utils.rnn``.

A batch of sentences is rarely of one length. Two layouts hold such a batch:

* **padded**: ``(T, B, *)`` (or ``(B, T, *)`` with ``batch_first``), every sequence
  filled up to the longest one ``T`` with ``padding_value``
  (:func:`pad_sequence`, :func:`pad_packed_sequence`);
* **packed** (:class:`PackedSequence`): only the real steps, time-major. With the
  sequences sorted longest first, ``batch_sizes[t]`` of them are still running at step
  ``t``, and they are the first ``batch_sizes[t]``; ``data`` stacks their rows step after
  step: ``(sum(lengths), *)``. A recurrent layer given a packed batch never computes on
  padding, and its final state of each sequence is the one at that sequence's own end.

Every function here is built from differentiable ops (slicing, ``cat``, ``stack``,
``pad``, ``index_select``), so gradients flow from a packed or padded result back to the
sequences.

Examples
--------
>>> import minitorch_accel as mta
>>> from minitorch_accel.nn.utils.rnn import pack_sequence, pad_packed_sequence
>>> packed = pack_sequence([mta.tensor([1, 2, 3]), mta.tensor([4, 5])])
>>> packed.data.tolist(), packed.batch_sizes.tolist()
([1, 4, 2, 5, 3], [2, 2, 1])
>>> padded, lengths = pad_packed_sequence(packed, batch_first=True)
>>> padded.tolist(), lengths.tolist()
([[1, 2, 3], [4, 5, 0]], [3, 2])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from ...backends import DeviceLike
from ...core import factories
from ...core.convert import DTypeLike
from ...core.tensor import Tensor
from ...ops.shape import cat, pad, stack
from ...ops.split import split


class _PackedSequenceFields(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(_PackedSequenceFields):
    """A batch of sequences of different lengths, packed time-major (a named tuple).

    Build it with :func:`pack_padded_sequence` or :func:`pack_sequence`, not by hand.

    Attributes
    ----------
    data : Tensor
        ``(sum(lengths), *)``: the rows of step 0 of every sequence, then of step 1 of
        those still running, and so on (sequences in sorted order, longest first).
    batch_sizes : Tensor
        int64, on the CPU (as PyTorch): how many sequences run at each step.
    sorted_indices : Tensor or None
        int64, on ``data``'s device: sequence ``i`` of the sorted batch is sequence
        ``sorted_indices[i]`` of the batch given; None when it was already sorted.
    unsorted_indices : Tensor or None
        The inverse permutation (computed from ``sorted_indices`` when not given).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.nn.utils.rnn import pack_sequence
    >>> packed = pack_sequence([mta.ones(1, 2), mta.ones(3, 2)], enforce_sorted=False)
    >>> packed.batch_sizes.tolist(), packed.sorted_indices.tolist()
    ([2, 1, 1], [1, 0])
    >>> data, batch_sizes, sorted_indices, unsorted_indices = packed  # a named tuple
    """

    def __new__(
        cls,
        data: Tensor,
        batch_sizes: Tensor | None = None,
        sorted_indices: Tensor | None = None,
        unsorted_indices: Tensor | None = None,
    ) -> PackedSequence:
        """Hold the four fields; ``unsorted_indices`` defaults to the inverse of
        ``sorted_indices``.
        """
        if batch_sizes is None:
            raise TypeError(
                "PackedSequence needs batch_sizes; build one with pack_padded_sequence or "
                "pack_sequence"
            )
        if unsorted_indices is None and sorted_indices is not None:
            unsorted_indices = invert_permutation(sorted_indices)
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, device: DeviceLike | None = None, dtype: DTypeLike = None) -> PackedSequence:
        """``data`` (and the index tensors, not ``batch_sizes``) moved/cast as
        :meth:`Tensor.to`.
        """
        data = self.data.to(device, dtype)
        if data is self.data:
            return self

        def move(indices: Tensor | None) -> Tensor | None:
            return None if indices is None else indices.to(data.device)

        return type(self)(
            data, self.batch_sizes, move(self.sorted_indices), move(self.unsorted_indices)
        )

    def cpu(self) -> PackedSequence:
        """The packed batch on the CPU."""
        return self.to("cpu")

    def double(self) -> PackedSequence:
        """``data`` cast to float64."""
        return self.to(dtype=np.float64)

    def float(self) -> PackedSequence:
        """``data`` cast to float32."""
        return self.to(dtype=np.float32)


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The permutation ``inverse`` with ``inverse[permutation[i]] = i`` (None stays None).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.nn.utils.rnn import invert_permutation
    >>> invert_permutation(mta.tensor([2, 0, 1])).tolist()
    [1, 2, 0]
    """
    if permutation is None:
        return None
    host = np.asarray(permutation.tolist(), dtype=np.int64)
    inverse = np.empty_like(host)
    inverse[host] = np.arange(host.size, dtype=np.int64)
    return factories.tensor(inverse, device=permutation.device)


def _host_lengths(lengths: Any) -> np.ndarray:
    values = lengths.tolist() if isinstance(lengths, Tensor) else lengths
    found = np.asarray(values)
    if found.ndim != 1 or (found.size and found.dtype.kind not in "iu"):
        raise ValueError(
            f"lengths must be a 1-d sequence of integers, got {found.dtype} of shape {found.shape}"
        )
    return found.astype(np.int64)


def pack_padded_sequence(
    input: Tensor, lengths: Any, batch_first: bool = False, enforce_sorted: bool = True
) -> PackedSequence:
    """Pack a padded batch ``(T, B, *)`` (or ``(B, T, *)`` with ``batch_first``) whose
    sequence ``b`` has ``lengths[b]`` real steps.

    Parameters
    ----------
    input : Tensor
        The padded batch.
    lengths : list of int, 1-d Tensor or array
        Each sequence's length, all in ``1..T``.
    batch_first : bool
        Whether ``input`` is ``(B, T, *)``.
    enforce_sorted : bool
        If True, ``lengths`` must be in decreasing order; if False, the batch is sorted
        here and the permutation kept in ``sorted_indices``. Ties keep their order (a
        stable sort; PyTorch's sort may order ties differently, which changes only the
        order of rows inside ``data``, never an unpacked result).

    Returns
    -------
    PackedSequence

    Raises
    ------
    RuntimeError
        If ``lengths`` has not one entry per sequence, holds a length below 1 or above
        ``T``, or is unsorted while ``enforce_sorted`` (as PyTorch's errors).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.nn.utils.rnn import pack_padded_sequence
    >>> padded = mta.tensor([[1, 2, 0], [3, 0, 0]])  # (B, T)
    >>> pack_padded_sequence(padded, [2, 1], batch_first=True).data.tolist()
    [1, 3, 2]
    """
    lengths_host = _host_lengths(lengths)
    if input.ndim < 2:
        raise ValueError(
            f"pack_padded_sequence: input must be (T, B, *) or (B, T, *), got shape "
            f"{tuple(input.shape)}"
        )
    if batch_first:
        input = input.transpose(0, 1)
    steps, batch = input.shape[0], input.shape[1]
    if lengths_host.size != batch:
        raise RuntimeError(
            f"Expected `len(lengths)` to be equal to batch_size, but got "
            f"{lengths_host.size} (batch_size={batch})"
        )
    if batch and lengths_host.min() <= 0:
        raise RuntimeError(
            "Length of all samples has to be greater than 0, but found an element in "
            f"'lengths' that is <= 0 (lengths {lengths_host.tolist()})"
        )
    if batch and lengths_host.max() > steps:
        raise RuntimeError(
            f"pack_padded_sequence: a length {int(lengths_host.max())} is longer than the "
            f"{steps} steps of the input of shape {tuple(input.shape)} "
            f"(batch_first={batch_first}); check batch_first"
        )
    sorted_indices: Tensor | None = None
    if enforce_sorted:
        if np.any(np.diff(lengths_host) > 0):
            raise RuntimeError(
                "`lengths` array must be sorted in decreasing order when `enforce_sorted` "
                "is True. You can pass `enforce_sorted=False` to pack_padded_sequence "
                "and/or pack_sequence to sidestep this requirement if you do not need "
                f"ONNX exportability. (lengths {lengths_host.tolist()})"
            )
    else:
        order = np.argsort(-lengths_host, kind="stable")
        lengths_host = lengths_host[order]
        sorted_indices = factories.tensor(order.astype(np.int64), device=input.device)
        input = input.index_select(1, sorted_indices)
    batch_sizes = [int((lengths_host > t).sum()) for t in range(int(lengths_host[0]))]
    data = cat([input[t, :size] for t, size in enumerate(batch_sizes)], 0)
    return PackedSequence(data, factories.tensor(batch_sizes, device="cpu"), sorted_indices)


def pad_packed_sequence(
    sequence: PackedSequence,
    batch_first: bool = False,
    padding_value: float = 0.0,
    total_length: int | None = None,
) -> tuple[Tensor, Tensor]:
    """Undo :func:`pack_padded_sequence`: the padded batch and each sequence's length.

    Parameters
    ----------
    sequence : PackedSequence
    batch_first : bool
        Return ``(B, T, *)`` instead of ``(T, B, *)``.
    padding_value : float
        The value of the padded places.
    total_length : int, optional
        Pad to this many steps (at least the longest sequence), e.g. to match the input
        of a model that packed and unpacked it.

    Returns
    -------
    (Tensor, Tensor)
        The padded batch, in the order of the batch that was packed, and the lengths
        (int64, on the CPU).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.nn.utils.rnn import pack_sequence, pad_packed_sequence
    >>> packed = pack_sequence([mta.tensor([1.0]), mta.tensor([2.0, 3.0])], enforce_sorted=False)
    >>> padded, lengths = pad_packed_sequence(packed, padding_value=-1.0, total_length=3)
    >>> padded.tolist(), lengths.tolist()
    ([[1.0, 2.0], [-1.0, 3.0], [-1.0, -1.0]], [1, 2])
    """
    data, batch_sizes_tensor, _, unsorted_indices = sequence
    batch_sizes = [int(b) for b in batch_sizes_tensor.tolist()]
    steps, batch = len(batch_sizes), batch_sizes[0]
    if total_length is not None and total_length < steps:
        raise ValueError(
            "Expected total_length to be at least the length of the longest sequence "
            f"in input, but got total_length={total_length} and max sequence length "
            f"being {steps}"
        )
    rest = [0, 0] * (data.ndim - 1)
    rows = [
        pad(piece, rest + [0, batch - size], padding_value) if size < batch else piece
        for piece, size in zip(split(data, batch_sizes, 0), batch_sizes, strict=True)
    ]
    padded = stack(rows, 0)
    if total_length is not None and total_length > steps:
        padded = pad(padded, rest + [0, 0, 0, total_length - steps], padding_value)
    sizes = np.asarray(batch_sizes)
    lengths = np.asarray([int((sizes > b).sum()) for b in range(batch)], dtype=np.int64)
    if unsorted_indices is not None:
        padded = padded.index_select(1, unsorted_indices)
        lengths = lengths[np.asarray(unsorted_indices.tolist(), dtype=np.int64)]
    if batch_first:
        padded = padded.transpose(0, 1)
    return padded, factories.tensor(lengths, device="cpu")


def pad_sequence(
    sequences: Tensor | Sequence[Tensor],
    batch_first: bool = False,
    padding_value: float = 0.0,
    padding_side: str = "right",
) -> Tensor:
    """Stack sequences ``(L_i, *)`` into one padded tensor ``(T, B, *)`` (or ``(B, T, *)``
    with ``batch_first``), ``T = max(L_i)``.

    Parameters
    ----------
    sequences : list of Tensor
        Same trailing dims ``*``, any lengths.
    batch_first : bool
    padding_value : float
    padding_side : {"right", "left"}
        Where the padding goes (after or before each sequence).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.nn.utils.rnn import pad_sequence
    >>> pad_sequence([mta.tensor([1, 2]), mta.tensor([3])], batch_first=True).tolist()
    [[1, 2], [3, 0]]
    >>> pad_sequence([mta.tensor([1, 2]), mta.tensor([3])], True, 9, "left").tolist()
    [[1, 2], [9, 3]]
    """
    if padding_side not in ("right", "left"):
        raise ValueError(
            f"Expected padding_side to be one of left or right, but got {padding_side!r}."
        )
    items = list(sequences)
    if not items:
        raise RuntimeError("pad_sequence: received an empty list of sequences")
    trailing = {tuple(s.shape[1:]) for s in items if s.ndim >= 1}
    if any(s.ndim == 0 for s in items) or len(trailing) > 1:
        raise RuntimeError(
            "pad_sequence: every sequence needs at least 1 dim and the same trailing dims, "
            f"got shapes {[tuple(s.shape) for s in items]}"
        )
    longest = max(s.shape[0] for s in items)
    rest = [0, 0] * (items[0].ndim - 1)
    rows = []
    for s in items:
        missing = longest - s.shape[0]
        where = [0, missing] if padding_side == "right" else [missing, 0]
        rows.append(pad(s, rest + where, padding_value) if missing else s)
    return stack(rows, 0 if batch_first else 1)


def unpad_sequence(
    padded_sequences: Tensor, lengths: Any, batch_first: bool = False
) -> list[Tensor]:
    """The inverse of :func:`pad_sequence`: the list of sequences, each cut to its length.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.nn.utils.rnn import unpad_sequence
    >>> [s.tolist() for s in unpad_sequence(mta.tensor([[1, 2], [3, 0]]), [2, 1], True)]
    [[1, 2], [3]]
    """
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [padded_sequences[b, :n] for b, n in enumerate(_host_lengths(lengths).tolist())]


def pack_sequence(sequences: Sequence[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of sequences ``(L_i, *)``: :func:`pad_sequence`, then
    :func:`pack_padded_sequence`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.nn.utils.rnn import pack_sequence
    >>> pack_sequence([mta.tensor([1, 2]), mta.tensor([3])]).data.tolist()
    [1, 3, 2]
    """
    lengths = [s.shape[0] if s.ndim else 0 for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The inverse of :func:`pack_sequence`: the list of sequences, in the original order.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.nn.utils.rnn import pack_sequence, unpack_sequence
    >>> packed = pack_sequence([mta.tensor([1]), mta.tensor([2, 3])], enforce_sorted=False)
    >>> [s.tolist() for s in unpack_sequence(packed)]
    [[1], [2, 3]]
    """
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)


__all__ = [
    "PackedSequence",
    "invert_permutation",
    "pack_padded_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "unpad_sequence",
    "pack_sequence",
    "unpack_sequence",
]
