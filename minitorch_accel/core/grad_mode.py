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


class _InferenceMode(threading.local):
    enabled: bool = False


_inference_mode = _InferenceMode()  # set by minitorch_accel.inference_mode


def is_inference_mode_enabled() -> bool:
    """Whether this thread is inside :class:`~minitorch_accel.inference_mode` (and not
    inside an ``inference_mode(False)`` nested in it), as PyTorch's
    ``torch.is_inference_mode_enabled``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> with mta.inference_mode():
    ...     inside = mta.is_inference_mode_enabled()
    ...     with mta.inference_mode(False):
    ...         nested = mta.is_inference_mode_enabled()
    >>> inside, nested, mta.is_inference_mode_enabled()
    (True, False, False)
    """
    return _inference_mode.enabled


class GradModeContext:
    """Recording on or off inside a ``with`` block or a decorated function, and back to
    what it was afterwards: the base of :class:`no_grad`, :class:`enable_grad` and
    :class:`set_grad_enabled`.

    Parameters
    ----------
    mode : bool
        True records operations for backward, False does not.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.core.grad_mode import GradModeContext
    >>> off = GradModeContext(False)  # making it changes nothing yet
    >>> mta.is_grad_enabled()
    True
    >>> with off:
    ...     mta.is_grad_enabled()
    False
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
            with GradModeContext(mode):
                return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


class set_grad_enabled(GradModeContext):
    """Turn recording on or off in this thread: at once as a plain call, or for a
    ``with`` block or a decorated function (then back to what it was), as in PyTorch.

    Parameters
    ----------
    mode : bool
        True records operations for backward, False does not.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> x = mta.ones(2, requires_grad=True)
    >>> with mta.set_grad_enabled(False):
    ...     (x * 2).requires_grad
    False
    >>> _ = mta.set_grad_enabled(False)  # a plain call switches recording off...
    >>> (x * 2).requires_grad
    False
    >>> _ = mta.set_grad_enabled(True)  # ...until switched on again
    >>> (x * 2).requires_grad
    True
    """

    def __init__(self, mode: bool) -> None:
        super().__init__(mode)
        self._before = _grad_mode.enabled  # what a with block returns to, as PyTorch's
        _grad_mode.enabled = self.mode

    def __enter__(self) -> None:
        self._previous.append(self._before)
        _grad_mode.enabled = self.mode

    def __call__(self, func: F) -> F:
        """Use this context as a decorator; making it changed nothing then."""
        _grad_mode.enabled = self._before
        return super().__call__(func)


class no_grad(GradModeContext):
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


class enable_grad(GradModeContext):
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
