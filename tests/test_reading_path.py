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

from minitorch_accel.core import backward
from minitorch_accel.ops import conv, linear, loss, norm, pool
from minitorch_accel.optim import adam, sgd


def code_lines(obj: Callable[..., Any] | type) -> int:
    """Lines of ``obj``'s source that hold code: no docstring, comment or blank line, and
    for a function only its body (not its signature).
    """
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
    top = tree.body[0]
    if isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef)):  # the body, not the signature
        doc_lines.update(range(1, top.body[0].lineno))
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

    assert code_lines(sample) == 5  # y = ..., and the four lines of the return


def _methods(*classes: type, names: tuple[str, ...] = ("forward", "backward")) -> list[Any]:
    return [getattr(c, n) for c in classes for n in names]


# Each op: its Functions' forward and backward, and the helpers they call; a gradient
# node's forward (the gradient's formula) is part of its op's path.
READING_PATH: list[tuple[str, list[Any], int]] = [
    ("the backward walk", [backward.run_backward, backward._run_node], 40),
    (
        "conv2d forward and backward",
        [
            conv.im2col,
            conv.col2im,
            conv.weight_matrix,
            *_methods(
                conv.Conv2d, conv.Conv2dGradInput, conv.Conv2dGradWeight, conv.Conv2dGradBias
            ),
        ],
        60,
    ),
    (
        "max and average pooling",
        [
            pool.taps,
            pool.first_max,
            pool.scatter,
            pool.window_size,
            *_methods(
                pool.MaxPool2d,
                pool.MaxPool2dBackward,
                pool.MaxPool2dPick,
                pool.AvgPool2d,
                pool.AvgPool2dBackward,
            ),
        ],
        40,
    ),
    ("linear", _methods(linear.Linear, linear.LinearGradWeight), 20),
    (
        "cross-entropy",
        [
            *_methods(loss.CrossEntropy),
            loss.CrossEntropy.targets,
            loss.CrossEntropyBackward.forward,
        ],
        30,
    ),
    (
        "batch norm",
        [*_methods(norm.BatchNorm), norm.batch_norm_grad, norm.BatchNormGrad.forward],
        50,
    ),
    ("SGD (momentum, Nesterov, weight decay)", [sgd.SGD.step], 15),
    ("Adam and AdamW", [adam.Adam.step], 20),
]


def test_adamw_reads_adams_step() -> None:
    assert "step" not in vars(adam.AdamW)  # AdamW differs only in its constructor


@pytest.mark.parametrize("idea, parts, limit", READING_PATH, ids=[r[0] for r in READING_PATH])
def test_each_idea_fits_on_one_screen(idea: str, parts: list[Any], limit: int) -> None:
    counted = {getattr(p, "__qualname__", str(p)): code_lines(p) for p in parts}
    total = sum(counted.values())
    assert total <= limit, f"{idea}: {total} code lines > {limit}: {counted}"
