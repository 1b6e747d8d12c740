"""The base class of probability distributions, as ``torch.distributions.Distribution``.

A distribution has a ``batch_shape`` (independent distributions side by side, e.g. one
per row of a batch of logits) and an ``event_shape`` (the shape of one draw; ``()`` for a
number). ``sample(sample_shape)`` has shape ``sample_shape + batch_shape + event_shape``.

Argument validation follows PyTorch: on by default (``validate_args=None`` takes the
class default, :meth:`Distribution.set_default_validate_args` changes it), it checks each
parameter against ``arg_constraints`` when the distribution is made, and each value given
to ``log_prob`` against ``support``, raising ``ValueError`` with PyTorch's messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.size import Size
from ..core.tensor import Tensor
from .constraints import Constraint


class lazy_property:  # noqa: N801  (PyTorch's name)
    """A property computed on first use and then stored on the instance (so that, like
    PyTorch's, it counts as given for ``repr`` and validation once computed).

    Examples
    --------
    >>> class Box:
    ...     @lazy_property
    ...     def area(self):
    ...         print("computing")
    ...         return 6
    >>> box = Box(); box.area
    computing
    6
    >>> box.area
    6
    """

    def __init__(self, wrapped: Any) -> None:
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        value = self.wrapped(instance)
        instance.__dict__[self.wrapped.__name__] = value
        return value


class Distribution:
    """A probability distribution: shapes, validation and the methods subclasses fill in.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.distributions import Normal
    >>> d = Normal(mta.zeros(3), 1.0)
    >>> isinstance(d, Distribution), d.batch_shape, d.event_shape
    (True, (3,), ())
    """

    has_rsample = False
    _validate_args = __debug__
    arg_constraints: dict[str, Constraint] = {}
    support: Any = None

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument validation on or off for every distribution made afterwards.

        Examples
        --------
        >>> Distribution.set_default_validate_args(True)
        """
        if value not in (True, False):
            raise ValueError(f"set_default_validate_args takes True or False, got {value!r}")
        Distribution._validate_args = value

    def __init__(
        self,
        batch_shape: Sequence[int] = (),
        event_shape: Sequence[int] = (),
        validate_args: bool | None = None,
    ) -> None:
        self._batch_shape = Size(batch_shape)
        self._event_shape = Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            for param, constraint in self.arg_constraints.items():
                if param not in self.__dict__ and isinstance(
                    getattr(type(self), param, None), lazy_property
                ):
                    continue  # not given: computed from a parameter that was checked
                value = getattr(self, param)
                if not bool(constraint.check(value).all()):
                    raise ValueError(
                        f"Expected parameter {param} ({type(value).__name__} of shape "
                        f"{tuple(value.shape)}) of distribution {self!r} to satisfy the "
                        f"constraint {constraint!r}, but found invalid values:\n{value}"
                    )

    @property
    def batch_shape(self) -> Size:
        """The shape of the independent distributions side by side."""
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        """The shape of one draw."""
        return self._event_shape

    def _extended_shape(self, sample_shape: Sequence[int] = ()) -> Size:
        """``sample_shape + batch_shape + event_shape``."""
        return Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def _validate_sample(self, value: Any) -> None:
        """Raise ``ValueError`` unless ``value`` is a tensor that broadcasts with this
        distribution's shapes and lies in its support.
        """
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = value.ndim - len(self._event_shape)
        if tuple(value.shape[event_dim_start:]) != tuple(self._event_shape):
            raise ValueError(
                "The right-most size of value must match event_shape: "
                f"{value.shape} vs {self._event_shape}."
            )
        expected = tuple(self._batch_shape) + tuple(self._event_shape)
        for i, j in zip(reversed(tuple(value.shape)), reversed(expected), strict=False):
            if i != 1 and j != 1 and i != j:
                raise ValueError(
                    "Value is not broadcastable with batch_shape+event_shape: "
                    f"{value.shape} vs {Size(expected)}."
                )
        if not bool(self.support.check(value).all()):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape "
                f"{tuple(value.shape)}) to be within the support ({self.support!r}) of the "
                f"distribution {self!r}, but found invalid values:\n{value}"
            )

    def sample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        """Draws of shape ``sample_shape + batch_shape + event_shape``, not differentiable."""
        raise NotImplementedError

    def rsample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        """Differentiable draws (the reparameterization trick), where the distribution has
        them.
        """
        raise NotImplementedError(f"{type(self).__name__} has no rsample")

    def log_prob(self, value: Tensor) -> Tensor:
        """The log of the probability (density or mass) of ``value``."""
        raise NotImplementedError

    def entropy(self) -> Tensor:
        """The entropy, one value per distribution of the batch."""
        raise NotImplementedError

    def __repr__(self) -> str:
        names = [k for k in self.arg_constraints if k in self.__dict__]
        shown = ", ".join(
            f"{k}: {self.__dict__[k] if self.__dict__[k].numel() == 1 else self.__dict__[k].size()}"
            for k in names
        )
        return f"{type(self).__name__}({shown})"


__all__ = ["Distribution", "lazy_property"]
