"""Check that a backend is one folder: no module outside ``minitorch_accel/backends/``
names a backend's array library or branches on a device type's name.

Ruff's banned-api rule (TID251, see ``ruff.toml``) refuses ``import cupy`` and
``from cupy... import``; this script finds what an import statement does not show:

* a comparison of a ``.type`` attribute with a string literal (``device.type == "cuda"``,
  ``dev.type in ("cpu", "cuda")``): ask the backend instead (``device.shares_host_memory``,
  ``backend.has_pinned_memory``, ``backend.is_asynchronous``, a ``Backend`` method);
* an import of ``cupy``/``cupyx`` through ``importlib.import_module`` or ``__import__``;
* a library's name compared as a string (``xp.__name__ == "cupy"``,
  ``type(a).__module__.startswith("cupy")``): ask ``Backend.owns``;
* an import of a backend's own folder (``minitorch_accel.backends.cupy``), which other
  code reaches through ``Backend`` methods and the registry.

Usage: ``python tools/check_backend_names.py [PATH ...]`` (default: ``minitorch_accel``).
Files under ``minitorch_accel/backends/`` are skipped. Prints ``file:line: message`` for
each finding and exits with 1 if there is any.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

#: Array libraries only a backend's folder may import.
BANNED_MODULES = ("cupy", "cupyx")
#: Backend folders (below ``minitorch_accel.backends``) only the backends package imports.
#: (The NumPy backend's thread pool, ``backends.numpy.threads``, is public API:
#: ``set_num_threads``.)
BACKEND_FOLDERS = ("cupy",)
#: The package folder exempt from every check.
EXEMPT = Path("minitorch_accel") / "backends"


def _is_banned(module: str) -> bool:
    return module.split(".")[0] in BANNED_MODULES


def _is_string(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return True
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_is_string(e) for e in node.elts)
    return False


def _is_type_attribute(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "type"


def _type_comparisons(tree: ast.AST) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left, *node.comparators]
        for left, right in zip(operands, operands[1:], strict=False):
            for attr, other in ((left, right), (right, left)):
                if _is_type_attribute(attr) and _is_string(other):
                    text = ast.unparse(node)
                    yield (
                        node.lineno,
                        (
                            f"branches on a device type's name ({text}): ask the backend "
                            "(device.shares_host_memory, backend.has_pinned_memory, "
                            "backend.is_asynchronous or a Backend method)"
                        ),
                    )
                    break
            else:
                continue
            break


def _library_names(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """``xp.__name__ == "cupy"``, ``type(a).__module__.startswith("cupy")``: code that
    recognises a backend's arrays by its library's name instead of ``Backend.owns``.
    """
    for node in ast.walk(tree):
        strings: list[ast.AST] = []
        if isinstance(node, ast.Compare):
            strings = [node.left, *node.comparators]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("startswith", "endswith")
        ):
            strings = list(node.args)
        names = [v.value for v in strings if isinstance(v, ast.Constant)]
        banned = [n for n in names if isinstance(n, str) and _is_banned(n)]
        if banned:
            yield (
                node.lineno,
                (
                    f"recognises arrays by the library name {banned[0]!r} ({ast.unparse(node)}): "
                    "ask Backend.owns / registry.device_of_array"
                ),
            )


def _dynamic_imports(tree: ast.AST) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        func, first = node.func, node.args[0]
        name = (
            func.id
            if isinstance(func, ast.Name)
            else func.attr
            if isinstance(func, ast.Attribute)
            else ""
        )
        if name not in ("import_module", "__import__"):
            continue
        if (
            isinstance(first, ast.Constant)
            and isinstance(first.value, str)
            and _is_banned(first.value)
        ):
            yield (
                node.lineno,
                (
                    f"imports {first.value!r} through {name}(): only minitorch_accel/backends/ "
                    "may use it; go through a Backend method"
                ),
            )


def _is_backend_folder(parts: list[str]) -> bool:
    joined = ".".join(parts)
    return any(
        joined == f"minitorch_accel.backends.{folder}"
        or joined.startswith(f"minitorch_accel.backends.{folder}.")
        for folder in BACKEND_FOLDERS
    )


def _plain_imports(tree: ast.AST) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        if not isinstance(node, ast.Import):
            continue
        for alias in node.names:
            if _is_banned(alias.name):
                yield (
                    node.lineno,
                    (
                        f"imports {alias.name}: only minitorch_accel/backends/ may; go "
                        "through a Backend method"
                    ),
                )
            elif _is_backend_folder(alias.name.split(".")):
                yield (
                    node.lineno,
                    (
                        f"imports {alias.name}, a backend's own folder: use Backend methods "
                        "and minitorch_accel.backends.registry instead"
                    ),
                )


def _from_imports(tree: ast.AST, path: Path) -> Iterator[tuple[int, str]]:
    package = list(path.with_suffix("").parts[:-1])  # the module's package, as parts
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        if not node.level and _is_banned(node.module or ""):
            yield (
                node.lineno,
                (
                    f"imports from {node.module}: only minitorch_accel/backends/ may; go through "
                    "a Backend method"
                ),
            )
            continue
        if node.level:
            base = package[: len(package) - node.level + 1] if node.level > 1 else package
            target = [*base, *(node.module or "").split(".")] if node.module else list(base)
        else:
            target = (node.module or "").split(".")
        names = [target + [alias.name] for alias in node.names]
        for parts in [target, *names]:
            if "minitorch_accel" in parts:  # a relative import resolved from the package
                parts = parts[parts.index("minitorch_accel") :]
            if _is_backend_folder(parts):
                yield (
                    node.lineno,
                    (
                        f"imports {'.'.join(parts)}, a backend's own folder: use Backend methods "
                        "and minitorch_accel.backends.registry instead"
                    ),
                )
                break


def check_file(path: Path, root: Path | None = None) -> list[str]:
    """The findings in one Python file, each as ``"file:line: message"``.

    ``root`` is the folder that holds the ``minitorch_accel`` package (to resolve
    relative imports); by default the file's path is taken as it is.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    relative = path.relative_to(root) if root is not None else path
    found = [
        *_type_comparisons(tree),
        *_dynamic_imports(tree),
        *_library_names(tree),
        *_plain_imports(tree),
        *_from_imports(tree, relative),
    ]
    return [f"{path}:{line}: {message}" for line, message in sorted(found)]


def _is_exempt(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to((root / EXEMPT).resolve())
    except ValueError:
        return False
    return True


def check(paths: list[Path], root: Path) -> list[str]:
    """Every finding in the Python files under ``paths`` (``minitorch_accel/backends/``
    excepted).
    """
    findings: list[str] = []
    for target in paths:
        files = sorted(target.rglob("*.py")) if target.is_dir() else [target]
        for file in files:
            if not _is_exempt(file, root):
                findings.extend(check_file(file, root if _inside(file, root) else None))
    return findings


def _inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True


def main(argv: list[str]) -> int:
    """Check the given paths (default: the package); 1 if anything was found."""
    root = Path.cwd()
    paths = [Path(a) for a in argv] or [Path("minitorch_accel")]
    findings = check(paths, root)
    for line in findings:
        print(line)
    if findings:
        print(
            f"{len(findings)} finding(s): a backend is one folder and one register() call; "
            "see docs (Backends: adding one)",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
