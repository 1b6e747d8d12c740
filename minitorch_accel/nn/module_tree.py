"""The module tree: walking it with dotted names, and printing it.

The traversals behind :meth:`Module.named_modules`, :meth:`Module.named_parameters`
and :meth:`Module.named_buffers`, and the indented text of ``repr(module)``. A module
or tensor reachable along two paths is listed once, under the first name found.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .module import Module


def walk_modules(
    root: Module,
    prefix: str = "",
    memo: set[Module] | None = None,
    remove_duplicate: bool = True,
) -> Iterator[tuple[str, Module]]:
    """``root`` and every submodule below it, depth first, with dotted names.

    A module reachable along two paths is listed once (unless ``remove_duplicate`` is
    False); ``memo``, a set of modules, lists those to skip and collects those listed.
    """
    seen: set[Module] = set() if memo is None else memo
    stack: list[tuple[str, Module]] = [(prefix, root)]
    while stack:
        name, module = stack.pop()
        if remove_duplicate:
            if module in seen:
                continue
            seen.add(module)
        yield name, module
        children = [
            (f"{name}.{child_name}" if name else child_name, child)
            for child_name, child in module._modules.items()
            if child is not None
        ]
        stack.extend(reversed(children))


def named_members(
    root: Module, registry: str, prefix: str, recurse: bool, remove_duplicate: bool = True
) -> Iterator[tuple[str, Any]]:
    """The members of ``registry`` (``"_parameters"`` or ``"_buffers"``) of ``root`` and,
    with ``recurse``, of every module in ``root.named_modules(prefix)``, with dotted
    names; each member once (unless ``remove_duplicate`` is False), None placeholders
    skipped.
    """
    owners = (
        walk_modules(root, prefix, remove_duplicate=remove_duplicate)
        if recurse
        else iter([(prefix, root)])
    )
    seen: set[int] = set()
    for owner_name, owner in owners:
        for name, member in owner.__dict__[registry].items():
            if member is None or (remove_duplicate and id(member) in seen):
                continue
            seen.add(id(member))
            yield (f"{owner_name}.{name}" if owner_name else name), member


def tree_repr(module: Module) -> str:
    """``repr(module)``: its class, its :meth:`~Module.extra_repr` and its submodules,
    one per line, indented.
    """
    extra = module.extra_repr()
    lines = extra.split("\n") if extra else []
    for name, child in module._modules.items():
        text = repr(child).replace("\n", "\n  ")
        lines.append(f"({name}): {text}")
    if not lines:
        return f"{type(module).__name__}()"
    if len(lines) == 1 and not module._modules:
        return f"{type(module).__name__}({lines[0]})"
    return f"{type(module).__name__}(\n  " + "\n  ".join(lines) + "\n)"
