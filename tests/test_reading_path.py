"""The reading path: the reference implementation of each idea fits on one screen.

Each entry names the functions and classes a student reads for one idea and the most
code lines they may take together, counting neither docstrings, comments nor blank
lines. A fast path never counts: it lives in the backend's folder. Raising a limit is a
decision about the teaching, not a way to make this test pass.
"""

from __future__ import annotations

import ast
import inspect
import io
import textwrap
import tokenize
from collections.abc import Callable
from typing import Any

import pytest

import minitorch_accel.core.backward as backward_mod


def code_lines(obj: Callable[..., Any] | type) -> int:
    """Lines of ``obj``'s source that hold code: no docstring, comment or blank line."""
    source = textwrap.dedent(inspect.getsource(obj))
    tree = ast.parse(source)
    doc_lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)):
            body = node.body
            first = body[0] if body else None
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                doc_lines.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    code: set[int] = set()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type in (
            tokenize.COMMENT,
            tokenize.NL,
            tokenize.NEWLINE,
            tokenize.INDENT,
            tokenize.DEDENT,
            tokenize.ENDMARKER,
        ):
            continue
        for line in range(tok.start[0], tok.end[0] + 1):
            if line not in doc_lines:
                code.add(line)
    return len(code)


def test_code_lines_counts_code_only() -> None:
    def sample(x: int) -> int:
        """A docstring
        over two lines."""
        # a comment

        y = x + 1  # trailing comment
        return max(
            x,
            y,
        )

    assert code_lines(sample) == 6  # def, y = ..., and the four lines of the return


READING_PATH: list[tuple[str, list[Callable[..., Any] | type], int]] = [
    ("the backward walk", [backward_mod.run_backward], 40),
]


@pytest.mark.parametrize("idea, parts, limit", READING_PATH, ids=[r[0] for r in READING_PATH])
def test_each_idea_fits_on_one_screen(
    idea: str, parts: list[Callable[..., Any] | type], limit: int
) -> None:
    counted = {getattr(p, "__qualname__", str(p)): code_lines(p) for p in parts}
    total = sum(counted.values())
    assert total <= limit, f"{idea}: {total} code lines > {limit}: {counted}"
