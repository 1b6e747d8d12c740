"""Every example opens with what it teaches, what it prints and how long it takes."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
PARTS = ("Teaches:", "Prints:", "Takes:")
#: "Takes:" states a duration: a number (or "a"/"a few") and a unit of time.
DURATION = re.compile(r"\b(\d+(\.\d+)?|a|a few)\s*(-\s*\d+\s*)?(s|ms|seconds?|minutes?|min)\b")


def _paragraphs(doc: str) -> dict[str, str]:
    """The docstring's paragraphs that open with one of :data:`PARTS`, by that word."""
    found: dict[str, str] = {}
    for paragraph in re.split(r"\n(?=\S+:)|\n\s*\n", doc):
        for part in PARTS:
            if paragraph.startswith(part):
                found[part] = paragraph[len(part) :].strip()
    return found


def test_there_are_examples() -> None:
    assert len(EXAMPLES) >= 9 and ROOT / "examples" / "mnist_cnn.py" in EXAMPLES


@pytest.mark.parametrize("script", EXAMPLES, ids=lambda p: p.name)
def test_every_example_says_what_it_teaches_prints_and_takes(script: Path) -> None:
    doc = ast.get_docstring(ast.parse(script.read_text()), clean=True)
    assert doc is not None, f"{script.name}: no module docstring"
    lines = doc.splitlines()
    starts = {part: [i for i, line in enumerate(lines) if line.startswith(part)] for part in PARTS}
    for part, where in starts.items():
        assert len(where) == 1, f"{script.name}: one line must start with {part!r}, found {where}"
    order = [starts[part][0] for part in PARTS]
    assert order == sorted(order), f"{script.name}: write {', '.join(PARTS)} in that order"
    # right after the title (and its underline), before the rest of the description
    assert order[0] <= 3, f"{script.name}: {PARTS[0]!r} must open the docstring after the title"
    text = _paragraphs(doc)
    for part in PARTS:
        assert len(text[part]) >= 20, f"{script.name}: {part!r} says too little: {text[part]!r}"
    assert DURATION.search(text["Takes:"]), (
        f"{script.name}: 'Takes:' must give a duration (e.g. 'about 15 s on 2 CPU cores'), "
        f"got {text['Takes:']!r}"
    )


@pytest.mark.parametrize(
    "doc, problem",
    [
        ("T\n=\n\nTeaches: a lot of things here.\nPrints: many lines of text here.\n", "'Takes:'"),
        (
            "T\n=\n\nPrints: many lines of text here.\nTeaches: a lot of things here.\n"
            "Takes: about 5 s on 2 cores.\n",
            "in that order",
        ),
        (
            "T\n=\n\nTeaches: a lot of things here.\nPrints: many lines of text here.\n"
            "Takes: a while, it depends on things.\n",
            "must give a duration",
        ),
    ],
)
def test_the_check_catches_a_bad_docstring(doc: str, problem: str, tmp_path: Path) -> None:
    script = tmp_path / "bad.py"
    script.write_text(f'"""{doc}"""\n')
    with pytest.raises(AssertionError, match=re.escape(problem)):
        test_every_example_says_what_it_teaches_prints_and_takes(script)
