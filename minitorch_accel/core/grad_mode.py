"""Grad mode and anomaly mode: whether operations are recorded, and checked, for backward.

Both are thread-local switches, usable as context managers and decorators, as in PyTorch.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


class _GradMode(threading.local):
    enabled: bool = True


_grad_mode = _GradMode()


class _AnomalyMode:
    enabled: bool = False


_anomaly_mode = _AnomalyMode()


def is_grad_enabled() -> bool:
    """Whether operations are recorded for backward in this thread."""
    return _grad_mode.enabled


class set_grad_enabled:
    """Turn recording on or off in this thread, as a context manager or a decorator.

    Parameters
    ----------
    mode : bool
        True records operations for backward, False does not.
    """

    def __init__(self, mode: bool) -> None:
        self.mode = bool(mode)
        self._previous: list[bool] = []

    def __enter__(self) -> None:
        self._previous.append(_grad_mode.enabled)
        _grad_mode.enabled = self.mode

    def __exit__(self, *exc: object) -> None:
        _grad_mode.enabled = self._previous.pop()

    def __call__(self, func: F) -> F:
        """Use this context as a decorator: ``func`` runs inside it."""
        mode = self.mode

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with set_grad_enabled(mode):
                return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


class no_grad(set_grad_enabled):
    """Do not record operations: for inference and in-place parameter updates.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> w = mta.ones(3, requires_grad=True)
    >>> with mta.no_grad():
    ...     y = w * 2
    >>> y.requires_grad
    False
    """

    def __init__(self) -> None:
        super().__init__(False)


class enable_grad(set_grad_enabled):
    """Record operations again inside a :class:`no_grad` block."""

    def __init__(self) -> None:
        super().__init__(True)


class set_detect_anomaly:
    """Turn anomaly detection on or off, as a context manager or a plain call.

    While it is on, every recorded op keeps the stack of the forward call that created
    it, and backward checks each gradient a node computes: the first one holding NaN or
    Inf raises a RuntimeError naming the node, the forward op and where it was created.
    It slows every op down; use it to find a bug, not to train.

    Parameters
    ----------
    mode : bool
        True turns detection on.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> x = mta.tensor([0.0], requires_grad=True)
    >>> with mta.autograd.detect_anomaly():
    ...     y = x.sqrt()  # d sqrt(x)/dx is inf at 0
    ...     y.backward()
    Traceback (most recent call last):
    ...
    RuntimeError: Function 'SqrtBackward' returned nan or inf values in its 0th output: ...
    """

    def __init__(self, mode: bool) -> None:
        self._previous = _anomaly_mode.enabled
        _anomaly_mode.enabled = bool(mode)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        _anomaly_mode.enabled = self._previous


class detect_anomaly(set_detect_anomaly):
    """Anomaly detection on inside a ``with`` block (see :class:`set_detect_anomaly`).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> with mta.autograd.detect_anomaly():
    ...     mta.autograd.is_anomaly_enabled()
    True
    """

    def __init__(self) -> None:
        super().__init__(True)


def is_anomaly_enabled() -> bool:
    """Whether :func:`detect_anomaly` is on."""
    return _anomaly_mode.enabled
