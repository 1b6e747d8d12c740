"""Constraints: what values a distribution's parameters and samples may take, as
``torch.distributions.constraints``.

A constraint's :meth:`Constraint.check` returns a bool tensor, ``True`` where a value
satisfies it; a distribution built with ``validate_args`` refuses parameters and
samples where it is ``False``. Only the constraints that :mod:`minitorch_accel.distributions`
uses are here.

Examples
--------
>>> import minitorch_accel as mta
>>> from minitorch_accel.distributions import constraints
>>> constraints.positive.check(mta.tensor([-1.0, 0.0, 2.0])).tolist()
[False, False, True]
>>> constraints.simplex
Simplex()
"""

from __future__ import annotations

from typing import Any

from ..core.tensor import Tensor


class Constraint:
    """A set of allowed values; ``event_dim`` is how many rightmost dims one event spans.

    Examples
    --------
    >>> from minitorch_accel.distributions import constraints
    >>> isinstance(constraints.real, Constraint)
    True
    """

    is_discrete = False
    event_dim = 0

    def check(self, value: Tensor) -> Tensor:
        """A bool tensor: ``True`` where ``value`` satisfies the constraint."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return type(self).__name__.lstrip("_") + "()"


class _Real(Constraint):
    """Any real number, not NaN (infinities are allowed, as in PyTorch)."""

    def check(self, value: Tensor) -> Tensor:
        valid: Tensor = value == value  # False only for NaN
        return valid


class _GreaterThan(Constraint):
    """Values strictly above ``lower_bound``."""

    def __init__(self, lower_bound: float) -> None:
        self.lower_bound = lower_bound

    def check(self, value: Tensor) -> Tensor:
        valid: Tensor = value > self.lower_bound
        return valid

    def __repr__(self) -> str:
        return f"GreaterThan(lower_bound={self.lower_bound})"


class _IntegerInterval(Constraint):
    """Whole numbers in ``[lower_bound, upper_bound]``."""

    is_discrete = True

    def __init__(self, lower_bound: int, upper_bound: int) -> None:
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound

    def check(self, value: Tensor) -> Tensor:
        valid: Tensor = (value % 1 == 0) & (self.lower_bound <= value) & (value <= self.upper_bound)
        return valid

    def __repr__(self) -> str:
        return f"IntegerInterval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _Simplex(Constraint):
    """Non-negative vectors (the last dim) that sum to 1 within 1e-6."""

    event_dim = 1

    def check(self, value: Tensor) -> Tensor:
        valid: Tensor = (value >= 0).all(-1) & ((value.sum(-1) - 1).abs() < 1e-6)
        return valid


class _IndependentConstraint(Constraint):
    """``base`` on every element, the ``reinterpreted_batch_ndims`` rightmost dims
    taken as one event (all must hold).
    """

    def __init__(self, base: Constraint, reinterpreted_batch_ndims: int) -> None:
        self.base_constraint = base
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        self.event_dim = base.event_dim + reinterpreted_batch_ndims

    def check(self, value: Tensor) -> Tensor:
        result = self.base_constraint.check(value)
        for _ in range(self.reinterpreted_batch_ndims):
            result = result.all(-1)
        return result

    def __repr__(self) -> str:
        return f"IndependentConstraint({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"


def integer_interval(lower_bound: int, upper_bound: int) -> Constraint:
    """Whole numbers from ``lower_bound`` to ``upper_bound``, both included.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> integer_interval(0, 2).check(mta.tensor([-1, 0, 2, 3])).tolist()
    [False, True, True, False]
    """
    return _IntegerInterval(lower_bound, upper_bound)


def independent(base: Constraint, reinterpreted_batch_ndims: int) -> Constraint:
    """``base`` over whole events of ``reinterpreted_batch_ndims`` dims.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> independent(real, 1).check(mta.tensor([[0.0, 1.0], [float("nan"), 1.0]])).tolist()
    [True, False]
    """
    return _IndependentConstraint(base, reinterpreted_batch_ndims)


def greater_than(lower_bound: float) -> Constraint:
    """Values strictly above ``lower_bound``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> greater_than(1.0).check(mta.tensor([1.0, 1.5])).tolist()
    [False, True]
    """
    return _GreaterThan(lower_bound)


real: Any = _Real()
positive: Any = _GreaterThan(0.0)
simplex: Any = _Simplex()
real_vector: Any = independent(real, 1)

__all__ = [
    "Constraint",
    "greater_than",
    "independent",
    "integer_interval",
    "positive",
    "real",
    "real_vector",
    "simplex",
]
