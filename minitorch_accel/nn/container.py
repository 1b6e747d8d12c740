"""Containers: :class:`Sequential` (a pipeline) and :class:`ModuleList` (a list)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator
from typing import Any, TypeVar, overload

from .conv_layers import Conv2d, MaxPool2d
from .layers import ReLU
from .module import Module

S = TypeVar("S", bound="_ModuleSequence")


def _index(i: int, length: int, what: str) -> int:
    if not -length <= i < length:
        raise IndexError(f"index {i} is out of range for a {what} of length {length}")
    return i % length


class _ModuleSequence(Module):
    """Submodules named "0", "1", ...: what Sequential and ModuleList share."""

    def _items(self) -> list[Module]:
        return [m for m in self._modules.values() if m is not None]

    def _renumber(self, modules: Iterable[Module]) -> None:
        self._modules.clear()
        for i, module in enumerate(modules):
            self.add_module(str(i), module)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._items())

    def __setitem__(self, i: int, module: Module) -> None:
        key = list(self._modules)[_index(i, len(self), type(self).__name__)]
        self.add_module(key, module)

    def __delitem__(self, i: int | slice) -> None:
        items = self._items()
        del items[i if isinstance(i, slice) else _index(i, len(items), type(self).__name__)]
        self._renumber(items)

    def append(self: S, module: Module) -> S:
        """Add ``module`` at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self: S, modules: Iterable[Module]) -> S:
        """Add every module of ``modules`` at the end; returns self."""
        for module in modules:
            self.append(module)
        return self

    def insert(self, index: int, module: Module) -> None:
        """Insert ``module`` before position ``index``."""
        items = self._items()
        items.insert(index, module)
        self._renumber(items)


class Sequential(_ModuleSequence):
    """Modules applied one after the other: ``Sequential(a, b)(x) == b(a(x))``.

    Parameters
    ----------
    *modules : Module, or one OrderedDict of name to Module
        Unnamed modules are called "0", "1", ...

    Examples
    --------
    >>> from minitorch_accel import nn
    >>> net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    >>> len(net), type(net[1]).__name__, len(net[:2])
    (3, 'ReLU', 2)
    """

    def __init__(self, *modules: Module | OrderedDict[str, Module]) -> None:
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], OrderedDict):
            for name, module in modules[0].items():
                self.add_module(name, module)
            return
        for i, item in enumerate(modules):
            if not isinstance(item, Module):
                raise TypeError(
                    f"Sequential: argument {i} is a {type(item).__name__}, not a Module"
                )
            self.add_module(str(i), item)

    @overload
    def __getitem__(self, i: int) -> Module: ...

    @overload
    def __getitem__(self, i: slice) -> Sequential: ...

    def __getitem__(self, i: int | slice) -> Module | Sequential:
        if isinstance(i, slice):
            return Sequential(OrderedDict(list(self._modules.items())[i]))  # type: ignore[arg-type]
        return self._items()[_index(i, len(self), "Sequential")]

    #: Run a :class:`ReLU` directly followed by a :class:`MaxPool2d` as the pooling
    #: first, then the ReLU (see :meth:`forward`). ``False`` runs them as written.
    pool_before_relu: bool = True
    #: Run a :class:`Conv2d` followed by a :class:`MaxPool2d` (directly, or with a ReLU
    #: between them that :attr:`pool_before_relu` moves after the pooling) as one op
    #: (see :meth:`forward`). ``False`` runs them one by one.
    fuse_conv_pool: bool = True

    def forward(self, input: Any) -> Any:
        """Feed ``input`` through every module in order.

        One exception, invisible in the results: a :class:`ReLU` directly followed by a
        :class:`MaxPool2d` runs as the pooling first, then the ReLU. The maximum of a
        window commutes with ``max(., 0)``, so ``max_pool(relu(x)) == relu(max_pool(x))``
        (*operator reordering*, as graph compilers do), and the ReLU then reads and
        writes a quarter of the values (2x2 windows) in forward and in backward: the
        LeNet step at batch 256 on one core is 7% faster. The outputs are equal, and so
        are the gradients of everything before the pair; the ReLU's gradient mask is
        taken on the pooled values. Equal up to the sign of zeros (``-0.0 == 0.0``);
        a window holding NaN, or an infinite gradient in a window whose maximum is
        negative, may send its gradient elsewhere. Set :attr:`pool_before_relu` to
        False (on the class or on one model) to run every module as written; the pair
        runs as written anyway when either module is a subclass.

        A :class:`Conv2d` whose output is then max-pooled (directly, or through such a
        ReLU) runs with the pooling as one op where the backend has a fast path for it
        and fusing pays (*operator fusion*, :meth:`Conv2d.forward_max_pooled`: a first
        layer, whose output costs more to move than to compute): the convolution's
        output is pooled block by block while in the core's cache and is never kept,
        and a ReLU between them is taken on the pooled block there too. The values are
        the same, and so are the gradients (a window holding NaN sends its gradient to
        the last NaN, as PyTorch); set :attr:`fuse_conv_pool` to False to run the
        modules one by one.

        Examples
        --------
        >>> import minitorch_accel as mta
        >>> from minitorch_accel import nn
        >>> x = mta.randn(2, 3, 4, 4)
        >>> net = nn.Sequential(nn.ReLU(), nn.MaxPool2d(2))
        >>> net(x).grad_fn is None  # no input requires grad
        True
        >>> net.pool_before_relu = False
        >>> bool((net(x) == nn.Sequential(nn.ReLU(), nn.MaxPool2d(2))(x)).all())
        True
        """
        modules = self._items()
        i = 0
        while i < len(modules):
            fused = self.fused_conv_pool(i, modules)
            if fused:
                conv, pool = modules[i], modules[i + fused - 1]
                # the ReLU between them, if any, runs after the pooling, in the same op
                input = conv.forward_max_pooled(input, pool, relu=fused == 3)
                i += fused
            elif self.runs_pool_first(i, modules):
                input = modules[i](modules[i + 1](input))
                i += 2
            else:
                input = modules[i](input)
                i += 1
        return input

    def fused_conv_pool(self, i: int, modules: list[Module] | None = None) -> int:
        """How many modules from ``i`` :meth:`forward` runs as one fused convolution and
        max pooling: 2 for a :class:`Conv2d` and a :class:`MaxPool2d`, 3 when a ReLU that
        :meth:`runs_pool_first` sits between them, else 0 (exact classes only, and
        :attr:`fuse_conv_pool` on, and a pooling with only default options besides the
        kernel, stride and padding: :func:`plain_max_pool`).

        Examples
        --------
        >>> from minitorch_accel import nn
        >>> net = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten())
        >>> [net.fused_conv_pool(i) for i in range(4)]
        [3, 0, 0, 0]
        """
        modules = self._items() if modules is None else modules
        if not self.fuse_conv_pool or not 0 <= i < len(modules) or type(modules[i]) is not Conv2d:
            return 0
        if i + 1 < len(modules) and plain_max_pool(modules[i + 1]):
            return 2
        return 3 if self.runs_pool_first(i + 1, modules) else 0

    def runs_pool_first(self, i: int, modules: list[Module] | None = None) -> bool:
        """Whether :meth:`forward` runs module ``i + 1`` (a MaxPool2d) before module ``i``
        (a ReLU): :attr:`pool_before_relu` is on and they are exactly those classes (a
        subclass may compute something else), the pooling :func:`plain_max_pool` (with
        ``return_indices`` it returns a pair; other options keep the layers as
        written); an in-place ReLU only after another
        module (first in the list, it must change the caller's input as written).

        Examples
        --------
        >>> from minitorch_accel import nn
        >>> net = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.MaxPool2d(2))
        >>> [net.runs_pool_first(i) for i in range(3)]
        [False, True, False]
        """
        modules = self._items() if modules is None else modules
        return (
            self.pool_before_relu
            and 0 <= i < len(modules) - 1
            and type(modules[i]) is ReLU
            and plain_max_pool(modules[i + 1])
            and (i > 0 or not modules[i].inplace)  # a first in-place ReLU changes the input
        )


def plain_max_pool(module: Module) -> bool:
    """Whether ``module`` is exactly a :class:`MaxPool2d` with PyTorch's default
    ``dilation``, ``return_indices`` and ``ceil_mode``: the only pooling that
    :class:`Sequential` fuses with a convolution or runs before a ReLU.

    Examples
    --------
    >>> from minitorch_accel import nn
    >>> plain_max_pool(nn.MaxPool2d(2)), plain_max_pool(nn.MaxPool2d(2, ceil_mode=True))
    (True, False)
    """
    return type(module) is MaxPool2d and module.is_plain()


class ModuleList(_ModuleSequence):
    """A list of modules whose parameters are registered (a plain list's are not).

    Parameters
    ----------
    modules : iterable of Module, optional

    Examples
    --------
    >>> from minitorch_accel import nn
    >>> layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    >>> len(list(layers.parameters()))
    6
    """

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    @overload
    def __getitem__(self, i: int) -> Module: ...

    @overload
    def __getitem__(self, i: slice) -> ModuleList: ...

    def __getitem__(self, i: int | slice) -> Module | ModuleList:
        if isinstance(i, slice):
            return ModuleList(self._items()[i])
        return self._items()[_index(i, len(self), "ModuleList")]

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        self.extend(modules)
        return self

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """A ModuleList is not callable: iterate over it in the parent's forward."""
        raise NotImplementedError("ModuleList has no forward(); call its modules in a loop")
