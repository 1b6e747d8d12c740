"""How tensors print: PyTorch's ``set_printoptions`` and the settings ``repr`` reads.

Examples
--------
>>> import minitorch_accel as mta
>>> mta.set_printoptions(precision=2)
>>> mta.tensor([1.23456])
tensor([1.23])
>>> mta.set_printoptions(profile="default")
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

#: The "default" profile: this framework's repr (PyTorch's has threshold=1000, linewidth=80).
_DEFAULT: dict[str, Any] = {
    "precision": 4,
    "threshold": 200,
    "edgeitems": 3,
    "linewidth": 75,
    "sci_mode": None,
}
_PROFILES: dict[str, dict[str, Any]] = {
    "default": _DEFAULT,
    "short": {**_DEFAULT, "precision": 2, "threshold": 1000, "edgeitems": 2},
    "full": {**_DEFAULT, "threshold": math.inf},
}

options: dict[str, Any] = dict(_DEFAULT)
"""The settings in force (read by ``Tensor.__repr__``)."""


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Set how tensors print, as ``torch.set_printoptions``.

    ``precision``: digits after the point; ``threshold``: more elements than this print
    summarized (``...``), showing ``edgeitems`` at each end of each dim; ``linewidth``:
    characters per line; ``sci_mode``: True always scientific, False never, None
    (default) as the values need. ``profile`` (``"default"``, ``"short"``, ``"full"``)
    first sets all of them, then the other arguments apply.

    Differs from PyTorch: the values print in NumPy's layout, and the ``"default"``
    profile keeps this framework's defaults (threshold 200 and linewidth 75, where
    PyTorch has 1000 and 80). An unknown profile raises ValueError (PyTorch ignores it).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.set_printoptions(threshold=4, edgeitems=1)
    >>> mta.arange(10)
    tensor([0, ..., 9])
    >>> mta.set_printoptions(sci_mode=True, precision=1, threshold=1000)
    >>> mta.tensor([1500.0])
    tensor([1.5e+03])
    >>> mta.set_printoptions(profile="default")
    """
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(
                f"set_printoptions: profile must be one of {sorted(_PROFILES)}, got {profile!r}"
            )
        options.update(_PROFILES[profile])
    for name, value in (
        ("precision", precision),
        ("threshold", threshold),
        ("edgeitems", edgeitems),
        ("linewidth", linewidth),
    ):
        if value is not None:
            if value < 0:
                raise ValueError(f"set_printoptions: {name} must be >= 0, got {value}")
            options[name] = value
    if sci_mode is not None or profile is not None:
        options["sci_mode"] = sci_mode


def format_values(array: np.ndarray, prefix: str) -> str:
    """``array`` (on the host) as ``Tensor.__repr__`` shows it, with :data:`options`."""
    precision = int(options["precision"])
    threshold = options["threshold"]
    formatter = None
    if options["sci_mode"] is not None and array.dtype.kind in "fc":
        sci = bool(options["sci_mode"])

        def one(value: Any) -> str:
            if sci:
                return np.format_float_scientific(value, precision=precision, unique=False)
            return np.format_float_positional(value, precision=precision, unique=False)

        formatter = {"float_kind": one}
    return np.array2string(
        array,
        separator=", ",
        prefix=prefix,
        precision=precision,
        threshold=int(min(threshold, np.iinfo(np.int64).max)),
        edgeitems=int(options["edgeitems"]),
        max_line_width=int(options["linewidth"]),
        formatter=formatter,  # type: ignore[arg-type]
    )
