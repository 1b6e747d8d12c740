"""State dicts in the safetensors format, the one PyTorch and Hugging Face share.

:func:`~minitorch_accel.save` and :func:`~minitorch_accel.load` use it for a path ending
in ``.safetensors`` (or with ``format="safetensors"``), through the ``safetensors``
package's NumPy API: ``pip install "minitorch_accel[interop]"``. A file is a JSON header
(names, dtypes, shapes, offsets) followed by the raw bytes of each tensor: like our
``.npz`` checkpoints, loading one never runs code.

Only a flat ``{name: tensor}`` dict fits (a model's ``state_dict()``); an optimizer's
state, with its nesting and numbers, goes in a ``.npz`` checkpoint. In PyTorch::

    from safetensors.torch import load_file, save_file
    model.load_state_dict(load_file("model.safetensors"))   # written here
    save_file(model.state_dict(), "back.safetensors")        # read here with load()
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .core.tensor import Tensor

_INSTALL = 'pip install "minitorch_accel[interop]" (or pip install safetensors)'


def _module() -> Any:
    try:
        import safetensors.numpy
    except ImportError as exc:
        raise ImportError(
            f"the safetensors format needs the safetensors package: {_INSTALL}"
        ) from exc
    return safetensors.numpy


def to_bytes(obj: Any, metadata: Mapping[str, str] | None = None) -> bytes:
    """``obj`` (a flat dict of names to tensors or NumPy arrays) as safetensors bytes.

    Raises
    ------
    TypeError
        For anything but a dict of str to tensors / arrays, naming the first bad entry.
    """
    if not isinstance(obj, Mapping):
        raise TypeError(
            f"the safetensors format holds a dict of tensors (a state_dict()), got "
            f"{type(obj).__name__}; save other objects to a .npz checkpoint"
        )
    arrays: dict[str, np.ndarray] = {}
    for name, value in obj.items():
        if not isinstance(name, str):
            raise TypeError(f"safetensors names are strings, got the key {name!r}")
        if isinstance(value, Tensor):
            value = value.detach().cpu().numpy()
        if not isinstance(value, np.ndarray) or value.dtype.kind not in "biuf":
            raise TypeError(
                f"the safetensors format holds only tensors and numeric arrays, but entry "
                f"{name!r} is a {type(value).__name__}: save nested or non-tensor state "
                "(an optimizer's state_dict()) to a .npz checkpoint instead"
            )
        arrays[name] = np.ascontiguousarray(value)
    data: bytes = _module().save(arrays, metadata=None if metadata is None else dict(metadata))
    return data


def from_bytes(data: bytes, device: Any) -> dict[str, Tensor]:
    """The tensors of safetensors ``data``, placed on ``device``, in file order."""
    try:
        arrays = _module().load(data)
    except ImportError:
        raise
    except Exception as exc:  # the Rust reader raises its own error types
        raise ValueError(f"not a valid safetensors file ({type(exc).__name__}: {exc})") from exc
    return {name: Tensor._from_data(array, device=device) for name, array in arrays.items()}
