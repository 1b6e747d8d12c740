"""The containers beside :class:`~minitorch_accel.nn.Sequential` and
:class:`~minitorch_accel.nn.ModuleList`: :class:`ModuleDict`, :class:`ParameterList` and
:class:`ParameterDict`.

A plain ``dict`` or ``list`` attribute hides what it holds from the module: its
parameters are not in ``parameters()``, the optimizer never sees them, ``state_dict()``
forgets them and ``to()`` leaves them behind. These containers register every entry
the way an attribute assignment does (:meth:`Module.add_module`, or a
:class:`~minitorch_accel.nn.Parameter` set as an attribute), under its key, or its
position as ``"0"``, ``"1"``..., so the names in ``state_dict()`` are PyTorch's:
``blocks.conv.weight``, ``scales.0``, ``embeddings.user``.
"""

from __future__ import annotations

import operator
from collections import OrderedDict
from collections.abc import Iterable, Iterator, KeysView, Mapping
from typing import Any, TypeVar

from ..core.tensor import Tensor
from .module import Module
from .parameter import Parameter

L = TypeVar("L", bound="ParameterList")


def _pairs(owner: str, entries: Any, sort_plain_mappings: bool) -> Iterator[tuple[Any, Any]]:
    """The ``(key, value)`` pairs of a mapping or an iterable of pairs (``update``).

    A plain mapping's items are sorted when ``sort_plain_mappings`` (as PyTorch's
    ``ParameterDict.update`` does; an ``OrderedDict`` or container keeps its order).
    """
    if not isinstance(entries, Iterable):
        raise TypeError(
            f"{owner}.update should be called with an iterable of key/value pairs, but got "
            f"{type(entries).__name__}"
        )
    if isinstance(entries, (OrderedDict, ModuleDict, ParameterDict)):
        yield from entries.items()
        return
    if isinstance(entries, Mapping):
        items = entries.items()
        yield from sorted(items) if sort_plain_mappings else items
        return
    for j, pair in enumerate(entries):
        if not isinstance(pair, Iterable):
            raise TypeError(
                f"{owner} update sequence element #{j} should be Iterable; is {type(pair).__name__}"
            )
        pair = tuple(pair)
        if len(pair) != 2:
            raise ValueError(
                f"{owner} update sequence element #{j} has length {len(pair)}; 2 is required"
            )
        yield pair[0], pair[1]


def _describe(value: Any) -> str:
    """One entry of a parameter container's ``repr``, as PyTorch writes it."""
    if not isinstance(value, Tensor):
        return f"Object of type: {type(value).__name__}"
    kind = "Parameter" if isinstance(value, Parameter) else "Tensor"
    size = "x".join(str(n) for n in value.shape)
    where = "" if str(value.device) == "cpu" else f" ({value.device})"  # the default device
    return f"{kind} containing: [{value.dtype} of size {size}{where}]"


class ModuleDict(Module):
    """A dict of modules whose parameters are registered (a plain dict's are not).

    Keys are strings and keep the order they were added in. Indexing, ``in``, ``len``,
    iteration (over the keys) and ``keys()``, ``items()``, ``values()``, ``update()``,
    ``pop()``, ``clear()`` work as on a dict.

    Parameters
    ----------
    modules : mapping or iterable of (str, Module) pairs, optional

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> heads = nn.ModuleDict({"digit": nn.Linear(4, 10), "parity": nn.Linear(4, 2)})
    >>> heads["parity"](mta.ones(3, 4)).shape
    (3, 2)
    >>> list(heads.state_dict())
    ['digit.weight', 'digit.bias', 'parity.weight', 'parity.bias']
    """

    def __init__(self, modules: Mapping[str, Module] | Iterable[Any] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]  # type: ignore[return-value]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: object) -> bool:
        return key in self._modules

    def clear(self) -> None:
        """Remove every module."""
        self._modules.clear()

    def pop(self, key: str) -> Module:
        """Remove the module under ``key`` and return it."""
        module = self[key]
        del self[key]
        return module

    def keys(self) -> KeysView[str]:
        """The keys, in order."""
        return self._modules.keys()

    def items(self) -> Iterable[tuple[str, Module]]:
        """The ``(key, module)`` pairs, in order."""
        return self._modules.items()  # type: ignore[return-value]

    def values(self) -> Iterable[Module]:
        """The modules, in order."""
        return self._modules.values()  # type: ignore[return-value]

    def update(self, modules: Mapping[str, Module] | Iterable[Any]) -> None:
        """Add (or replace) the modules of a mapping or of an iterable of
        ``(key, module)`` pairs, in their order.

        Raises
        ------
        TypeError
            If ``modules`` is not iterable, or an element is not a pair.
        ValueError
            If an element has a length other than 2.
        """
        for key, module in _pairs("ModuleDict", modules, sort_plain_mappings=False):
            self[key] = module


class ParameterList(Module):
    """A list of parameters that are registered (a plain list's are not), named
    ``"0"``, ``"1"``... in ``state_dict()``.

    A tensor put in it becomes a :class:`~minitorch_accel.nn.Parameter` (sharing its
    memory); other objects are kept as they are. Indexing (a slice gives a new
    ParameterList), assignment, ``len``, iteration, ``append``, ``extend`` and ``+=``
    work as on a list; like PyTorch's, it has no ``insert``, ``pop`` or ``del``.

    Parameters
    ----------
    values : iterable, optional

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> scales = nn.ParameterList([mta.ones(3), mta.zeros(2)])
    >>> [name for name, _ in scales.named_parameters()]
    ['0', '1']
    >>> scales
    ParameterList(
        (0): Parameter containing: [float32 of size 3]
        (1): Parameter containing: [float32 of size 2]
    )
    """

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        self._size = 0
        if values is not None:
            self.extend(values)

    def _key(self, idx: Any) -> str:
        i = operator.index(idx)
        if not -len(self) <= i < len(self):
            raise IndexError(f"index {i} is out of range for a ParameterList of length {len(self)}")
        return str(i % len(self))

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            return type(self)(self[i] for i in range(*idx.indices(len(self))))
        return getattr(self, self._key(idx))

    def __setitem__(self, idx: int, value: Any) -> None:
        if isinstance(value, Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, self._key(idx), value)

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[Any]:
        return iter([self[i] for i in range(len(self))])

    def __iadd__(self: L, values: Iterable[Any]) -> L:
        return self.extend(values)

    def __dir__(self) -> list[str]:
        return [key for key in super().__dir__() if not key.isdigit()]

    def append(self: L, value: Any) -> L:
        """Add ``value`` at the end (a tensor as a Parameter); returns self."""
        self._size += 1
        self[self._size - 1] = value
        return self

    def extend(self: L, values: Iterable[Any]) -> L:
        """Add every element of ``values`` at the end; returns self.

        Raises
        ------
        TypeError
            If ``values`` is not iterable, or is a single tensor.
        """
        if not isinstance(values, Iterable) or isinstance(values, Tensor):
            raise TypeError(
                "ParameterList.extend should be called with an iterable, but got "
                f"{type(values).__name__}"
            )
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        """One line per entry: its kind, dtype and size, as PyTorch (the dtype written
        as ``float32``, not ``torch.float32``).
        """
        return "\n".join(f"  ({i}): {_describe(value)}" for i, value in enumerate(self))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """A ParameterList is not callable: use its parameters in the parent's forward."""
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """A dict of parameters that are registered (a plain dict's are not), named by
    their keys in ``state_dict()``.

    A tensor put in it becomes a :class:`~minitorch_accel.nn.Parameter`; other objects
    are kept as they are. Keys are strings (without ``"."``) in the order they were
    added, except that a plain ``dict`` given to the constructor or :meth:`update` is
    added in sorted key order, as PyTorch does (an ``OrderedDict``, a ParameterDict or
    a list of pairs keeps its order). It has the methods of a dict: indexing, ``in``,
    ``len``, iteration over the keys, ``keys``, ``items``, ``values``, ``get``,
    ``setdefault``, ``pop``, ``popitem``, ``clear``, ``update``, ``copy``,
    ``fromkeys`` and ``|``. A missing key raises KeyError (PyTorch's raises
    AttributeError).

    Parameters
    ----------
    parameters : mapping or iterable of (str, value) pairs, optional

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> bias = nn.ParameterDict({"user": mta.zeros(4), "item": mta.zeros(6)})
    >>> list(bias.keys())  # a plain dict's keys are sorted
    ['item', 'user']
    >>> list(bias.state_dict())
    ['item', 'user']
    """

    def __init__(self, parameters: Any = None) -> None:
        super().__init__()
        self._keys: dict[str, None] = {}
        if parameters is not None:
            self.update(parameters)

    @staticmethod
    def _attribute(key: Any) -> str:
        if not isinstance(key, str):
            raise TypeError(
                "Index given to ParameterDict cannot be used as a key as it is not a string "
                f"(type is '{type(key).__name__}')"
            )
        return key

    def __getitem__(self, key: str) -> Any:
        attribute = self._attribute(key)
        if key not in self._keys:
            raise KeyError(key)
        return getattr(self, attribute)

    def __setitem__(self, key: str, value: Any) -> None:
        attribute = self._attribute(key)
        if isinstance(value, Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, attribute, value)  # checks the name first: no key for a refusal
        self._keys[key] = None

    def __delitem__(self, key: str) -> None:
        attribute = self._attribute(key)
        del self._keys[key]
        delattr(self, attribute)

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __reversed__(self) -> Iterator[str]:
        return reversed(list(self._keys))

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def copy(self) -> ParameterDict:
        """A new ParameterDict holding the same parameters (not copies of them)."""
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def setdefault(self, key: str, default: Any = None) -> Any:
        """``self[key]``, after setting it to ``default`` if ``key`` is absent."""
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        """Remove every entry."""
        for key in list(self._keys):
            del self[key]

    def pop(self, key: str) -> Any:
        """Remove the entry under ``key`` and return it."""
        value = self[key]
        del self[key]
        return value

    def popitem(self) -> tuple[str, Any]:
        """Remove the last entry added and return ``(key, value)``."""
        if not self._keys:
            raise KeyError("popitem(): ParameterDict is empty")
        key = next(reversed(list(self._keys)))
        return key, self.pop(key)

    def get(self, key: str, default: Any = None) -> Any:
        """``self[key]`` if ``key`` is present, else ``default``."""
        return self[key] if key in self else default  # noqa: SIM401  (this is get)

    def fromkeys(self, keys: Iterable[str], default: Any = None) -> ParameterDict:
        """A new ParameterDict with ``default`` under each key of ``keys``."""
        return ParameterDict((k, default) for k in keys)

    def keys(self) -> KeysView[str]:
        """The keys, in order."""
        return self._keys.keys()

    def items(self) -> Iterable[tuple[str, Any]]:
        """The ``(key, value)`` pairs, in order."""
        return [(k, self[k]) for k in self._keys]

    def values(self) -> Iterable[Any]:
        """The values, in order."""
        return [self[k] for k in self._keys]

    def update(self, parameters: Any) -> None:
        """Add (or replace) the entries of a mapping or of an iterable of
        ``(key, value)`` pairs; a plain dict's in sorted key order (see the class).

        Raises
        ------
        TypeError
            If ``parameters`` is not iterable, or an element is not a pair.
        ValueError
            If an element has a length other than 2.
        """
        for key, value in _pairs("ParameterDict", parameters, sort_plain_mappings=True):
            self[key] = value

    def extra_repr(self) -> str:
        """One line per entry: its key, kind, dtype and size (PyTorch writes the dtype
        as a tensor type, ``torch.FloatTensor``; here it is ``float32``).
        """
        return "\n".join(f"  ({k}): {_describe(v)}" for k, v in self.items())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """A ParameterDict is not callable: use its parameters in the parent's forward."""
        raise RuntimeError("ParameterDict should not be called.")

    def __or__(self, other: ParameterDict) -> ParameterDict:
        merged = self.copy()
        merged.update(other)
        return merged

    def __ror__(self, other: ParameterDict) -> ParameterDict:
        merged = other.copy()
        merged.update(self)
        return merged

    def __ior__(self, other: ParameterDict) -> ParameterDict:
        self.update(other)
        return self


__all__ = ["ModuleDict", "ParameterDict", "ParameterList"]
