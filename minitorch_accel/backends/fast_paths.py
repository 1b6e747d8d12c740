"""Fast paths: the accelerated variants of ops and optimizer steps, kept beside the
reference code in per-backend tables, and the switch that turns them all off.

Every op has a reference implementation in its own file under ``minitorch_accel/ops``
(forward on raw arrays, backward on Tensors, one screen each). A backend may register a
faster *forward* for an op under the op's name (the :class:`~minitorch_accel.core.function.Function`
subclass's ``op_name``, its class name by default): a function ``fast(fn, *arrays,
**params)`` called instead of ``fn.forward(*arrays, **params)``, which may set the same
attributes on ``fn`` that the reference forward sets for the backward. Optimizers look up
their multi-tensor steps the same way. :meth:`~minitorch_accel.core.function.Function.apply`
is the one place ops look a fast path up.

``fast_paths(False)`` (or ``MINITORCH_ACCEL_FAST_PATHS=0`` in the environment) runs the
reference code only: step through it in a debugger while training a model.
"""

from __future__ import annotations

import functools
import os
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

#: backend name (device type) -> op name -> fast forward
_tables: dict[str, dict[str, Callable[..., Any]]] = {}


class GradsAhead:
    """Gradients a fast path computed ahead of the Function that will ask for them (two
    independent products run side by side in one parallel region, or one pass over a
    cache block that serves two gradients). Each is kept by name with a weak reference
    to the array it was computed from, and handed out once, only to a call with that
    very array: any other call computes afresh.

    Examples
    --------
    >>> import numpy as np
    >>> ahead, grad_y = GradsAhead(), np.ones(3)
    >>> ahead.keep("bias", grad_y, np.full(1, 3.0))
    >>> len(ahead)
    1
    >>> ahead.take("bias", grad_y).tolist(), ahead.take("bias", grad_y)
    ([3.0], None)
    """

    def __init__(self) -> None:
        self._kept: dict[str, tuple[weakref.ref[Any], Any]] = {}

    def __len__(self) -> int:
        """How many gradients are kept."""
        return len(self._kept)

    def keep(self, name: str, source: Any, grad: Any) -> None:
        """Keep ``grad``, computed from the array ``source``, for the Function ``name``."""
        self._kept[name] = (weakref.ref(source), grad)

    def take(self, name: str, source: Any) -> Any:
        """The gradient kept for ``name`` if it came from this very ``source``, else None
        (either way it is no longer kept).
        """
        ref, grad = self._kept.pop(name, (None, None))
        return grad if ref is not None and ref() is source else None


class _Switch:
    enabled: bool = os.environ.get("MINITORCH_ACCEL_FAST_PATHS", "1").strip().lower() not in (
        "0",
        "false",
        "off",
        "no",
    )


switch = _Switch()


def name_of(cls: type) -> str:
    """The name fast paths for ``cls`` (a Function or an optimizer class) are registered
    under: its class name for the package's own classes, its module-qualified name for
    any other, so that a user's ``Relu`` or ``SGD`` never picks up the package's fast
    path by sharing its name.

    Examples
    --------
    >>> from minitorch_accel.optim import SGD
    >>> name_of(SGD), name_of(dict)
    ('SGD', 'builtins.dict')
    """
    if cls.__module__.startswith("minitorch_accel."):
        return cls.__name__
    return f"{cls.__module__}.{cls.__qualname__}"


def table(backend: str) -> dict[str, Callable[..., Any]]:
    """The fast-path table of the backend registered as ``backend`` (made on first use)."""
    return _tables.setdefault(backend, {})


def register_fast(backend: str, name: str, fast: Callable[..., Any]) -> None:
    """Register ``fast`` as backend ``backend``'s fast path for the op or step ``name``.

    Parameters
    ----------
    backend : str
        The device type the fast path serves (``"cpu"``, ``"cuda"``).
    name : str
        The op's name (its Function class's ``op_name``) or the optimizer step's.
    fast : callable
        For an op, ``fast(fn, *arrays, **params) -> array``, a drop-in for
        ``fn.forward``; for an optimizer (named by its class, ``"SGD"``),
        ``fast(device, group, params, grads, states)``, a drop-in for its ``step`` on one
        group's parameters of one device: raw arrays, and each parameter's state as a
        dict of raw arrays to update in place or add to. It must give the reference's
        values (tested equal).

    Examples
    --------
    >>> from minitorch_accel.backends.fast_paths import register_fast, table
    >>> register_fast("doc-backend", "Twice", lambda fn, a: a + a)
    >>> sorted(table("doc-backend"))
    ['Twice']
    """
    table(backend)[name] = fast


def is_fast_paths_enabled() -> bool:
    """Whether registered fast paths are used (the default), or the reference code only."""
    return switch.enabled


class fast_paths:
    """Turn the fast paths on or off for the whole process: a call, a context manager or
    a decorator, as :class:`~minitorch_accel.set_grad_enabled`.

    With them off every op runs its reference implementation and every optimizer its
    textbook update, slower but readable step by step in a debugger. Results agree with
    the fast paths to rounding (exactly in float64 where the order of operations is
    the same). ``MINITORCH_ACCEL_FAST_PATHS=0`` starts a process with them off.

    Parameters
    ----------
    mode : bool
        True uses the fast paths, False the reference code only.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> with mta.fast_paths(False):
    ...     mta.is_fast_paths_enabled()
    False
    >>> mta.is_fast_paths_enabled()
    True
    """

    def __init__(self, mode: bool) -> None:
        self._previous = switch.enabled
        switch.enabled = bool(mode)

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        switch.enabled = self._previous

    def __call__(self, func: F) -> F:
        """Use as a decorator: run ``func`` with the fast paths set to this mode."""
        mode = switch.enabled
        switch.enabled = self._previous  # decorating does not change the mode

        @functools.wraps(func)
        def run(*args: Any, **kwargs: Any) -> Any:
            with fast_paths(mode):
                return func(*args, **kwargs)

        return run  # type: ignore[return-value]
