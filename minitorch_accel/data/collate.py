"""Turning a list of samples into a batch: :func:`default_collate`, PyTorch's rules.

A sample may be an array, a tensor, a number, a string, or a tuple, list, named tuple
or dict of those (nested as deep as you like). The batch has the same structure, with
every leaf stacked along a new first dimension:

=====================================  ============================================
sample (each of the ``N``)              batch
=====================================  ============================================
array or tensor of shape ``S``          tensor of shape ``(N, *S)``, same dtype
Python ``float`` / ``int`` / ``bool``   float64 / int64 / bool tensor of shape ``(N,)``
NumPy scalar                            tensor of shape ``(N,)``, its dtype
``str``                                 the list of the ``N`` strings
``(a, b)`` (a tuple)                    ``[batch of a, batch of b]`` (a list)
list, named tuple, dict                 the same type, collated field by field
=====================================  ============================================

The work happens on NumPy arrays (:func:`collate_arrays`, which a worker process can
send cheaply); :func:`default_collate` then wraps each array as a tensor.

Without batching (``DataLoader(batch_size=None)``) each sample goes through
:func:`default_convert` instead: arrays and NumPy scalars become tensors, tuples lists,
and everything else (Python numbers, strings) is left as it is.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, MutableMapping, MutableSequence, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ..core.factories import from_numpy
from ..core.tensor import Tensor

__all__ = [
    "collate_arrays",
    "convert_arrays",
    "default_collate",
    "default_convert",
    "host_tensor",
    "map_leaves",
]

_ERROR = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)


def _stack(batch: Sequence[Any]) -> npt.NDArray[Any]:
    arrays = [b.numpy() if isinstance(b, Tensor) else b for b in batch]
    if arrays[0].dtype.kind in "SaUO":
        raise TypeError(_ERROR.format(f"a NumPy array of dtype {arrays[0].dtype}"))
    try:
        return np.stack(arrays)
    except ValueError:
        shapes = sorted({a.shape for a in arrays})
        raise RuntimeError(
            f"default_collate: the samples of one batch have different shapes {shapes}; "
            "give them one shape (resize or pad them), or pass a collate_fn"
        ) from None


def collate_arrays(batch: Sequence[Any]) -> Any:  # noqa: C901  (one branch per kind of sample, as PyTorch)
    """:func:`default_collate`, with NumPy arrays where it gives tensors.

    Parameters
    ----------
    batch : sequence
        The samples, all of one structure.

    Returns
    -------
    The batch (see the module's table), with NumPy arrays as leaves.
    """
    elem = batch[0]
    if isinstance(elem, (Tensor, np.ndarray)):
        return _stack(batch)
    if isinstance(elem, np.generic):
        return _stack([np.asarray(b) for b in batch])
    if isinstance(elem, bool):
        return np.asarray(batch, dtype=np.bool_)
    if isinstance(elem, int):
        return np.asarray(batch, dtype=np.int64)
    if isinstance(elem, float):
        return np.asarray(batch, dtype=np.float64)
    if isinstance(elem, (str, bytes)):
        return list(batch)
    if isinstance(elem, Mapping):
        fields = {key: collate_arrays([d[key] for d in batch]) for key in elem}
        if isinstance(elem, MutableMapping):
            clone = copy.copy(elem)
            clone.update(fields)
            return clone
        return fields
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # a named tuple
        return type(elem)(*(collate_arrays(field) for field in zip(*batch, strict=True)))
    if isinstance(elem, Sequence):
        try:
            transposed = list(zip(*batch, strict=True))
        except ValueError:
            raise RuntimeError("each element in list of batch should be of equal size") from None
        columns = [collate_arrays(list(field)) for field in transposed]
        if isinstance(elem, MutableSequence) and not isinstance(elem, tuple):
            seq = copy.copy(elem)
            seq[:] = columns
            return seq
        return columns  # a tuple becomes a list, as in PyTorch
    raise TypeError(_ERROR.format(type(elem)))


def map_leaves(
    batch: Any, fn: Callable[[Any], Any], leaf_types: tuple[type, ...] = (np.ndarray,)
) -> Any:
    """``batch`` with ``fn`` applied to every leaf (by default every NumPy array) in it,
    through tuples, lists, named tuples and dicts (the structure kept).
    """
    if isinstance(batch, leaf_types):
        return fn(batch)
    if isinstance(batch, Mapping):
        fields = {key: map_leaves(value, fn, leaf_types) for key, value in batch.items()}
        if isinstance(batch, MutableMapping):
            clone = copy.copy(batch)
            clone.update(fields)
            return clone
        return fields
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):
        return type(batch)(*(map_leaves(value, fn, leaf_types) for value in batch))
    if isinstance(batch, (list, tuple)):
        return type(batch)(map_leaves(value, fn, leaf_types) for value in batch)
    return batch


def default_collate(batch: Sequence[Any]) -> Any:
    """Stack a list of samples into a batch of tensors, as PyTorch's ``default_collate``.

    Parameters
    ----------
    batch : sequence
        The samples, all of one structure (see the module's table).

    Returns
    -------
    The batch: tensors where the samples hold arrays, tensors or numbers.

    Raises
    ------
    TypeError
        For a sample of a type it cannot batch (``None``, an object array...).
    RuntimeError
        For arrays of different shapes, or sequences of different lengths.

    Examples
    --------
    >>> import numpy as np
    >>> batch = default_collate([(np.zeros(3, np.float32), 1), (np.ones(3, np.float32), 0)])
    >>> type(batch).__name__, batch[0].shape, batch[1].dtype
    ('list', (2, 3), dtype('int64'))
    >>> default_collate([{"x": 1.5, "name": "a"}, {"x": 2.5, "name": "b"}])
    {'x': tensor([1.5, 2.5], dtype=float64), 'name': ['a', 'b']}
    """
    return map_leaves(collate_arrays(batch), host_tensor)


def _is_text(array: npt.NDArray[Any]) -> bool:
    return array.dtype.kind in "SaUO"


def convert_arrays(data: Any) -> Any:
    """:func:`default_convert`, with NumPy arrays where it gives tensors (NumPy scalars
    become 0-d arrays; arrays of strings or objects stay as they are, but are not
    turned into tensors).
    """
    if isinstance(data, np.generic) and not isinstance(data, (np.str_, np.bytes_)):
        return np.asarray(data)
    if isinstance(data, (Tensor, np.ndarray, str, bytes)):
        return data
    if isinstance(data, Mapping):
        fields = {key: convert_arrays(value) for key, value in data.items()}
        if isinstance(data, MutableMapping):
            clone = copy.copy(data)
            clone.update(fields)
            return clone
        return fields
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # a named tuple
        return type(data)(*(convert_arrays(value) for value in data))
    if isinstance(data, tuple):
        return [convert_arrays(value) for value in data]  # a tuple becomes a list, as in PyTorch
    if isinstance(data, MutableSequence):
        seq = copy.copy(data)
        seq[:] = [convert_arrays(value) for value in data]
        return seq
    if isinstance(data, Sequence):
        return [convert_arrays(value) for value in data]
    return data


def default_convert(data: Any) -> Any:
    """Turn the arrays in one sample into tensors, without batching, as PyTorch's
    ``default_convert`` (the DataLoader's conversion when ``batch_size=None``).

    Parameters
    ----------
    data : object
        A sample: an array, a tensor, a number, a string, or a tuple, list, named tuple
        or dict of those.

    Returns
    -------
    The same structure with NumPy arrays and NumPy scalars as tensors (scalars as 0-d
    tensors) and tuples as lists; tensors, Python numbers, strings and arrays of
    strings or objects unchanged.

    Examples
    --------
    >>> import numpy as np
    >>> default_convert((np.arange(3), np.float32(0.5), 7, "cat"))
    [tensor([0, 1, 2]), tensor(0.5), 7, 'cat']
    """
    return map_leaves(convert_arrays(data), lambda a: a if _is_text(a) else host_tensor(a))


def host_tensor(array: npt.NDArray[Any]) -> Tensor:
    """``array`` as a host tensor, made C-contiguous (a 0-d array stays 0-d, which
    ``np.ascontiguousarray`` would not keep).
    """
    return from_numpy(array if array.flags.c_contiguous else np.ascontiguousarray(array))
