"""The docs cover the package: API pages for every public module, figures that exist.

The Sphinx builds themselves (``make docs``) check the rendering and run the pages'
examples; these tests catch what a build would silently skip: a module that fails to
import (its API page would just be left out), a public name missing from the pages, a
figure or an included file that is missing or too large.
"""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
sys.path.insert(0, str(DOCS))

import api_pages  # noqa: E402
import make_figures  # noqa: E402

PAGE_FILES = sorted(DOCS.glob("*.rst")) + sorted((DOCS / "tutorials").glob("*.rst"))


def module_file_exists(name: str) -> bool:
    """Whether ``name`` has a source file (``a/b.py`` or ``a/b/__init__.py``)."""
    path = ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The API pages as the docs build writes them, by file name."""
    out = tmp_path_factory.mktemp("api")
    api_pages.write_pages(out)
    return {path.name: path.read_text(encoding="utf-8") for path in out.glob("*.rst")}


@pytest.mark.parametrize("name", [m for page in api_pages.PAGES for m in page.modules])
def test_every_listed_module_that_exists_imports(name: str) -> None:
    # A module that exists but fails to import would silently vanish from the reference.
    if not module_file_exists(name):
        pytest.skip(f"{name} is not in the package (yet)")
    assert api_pages.try_import(name) is not None, f"{name} exists but does not import"


def test_public_subpackages_are_listed() -> None:
    import minitorch_accel

    listed = {m for page in api_pages.PAGES for m in page.modules}
    for path in sorted(Path(minitorch_accel.__file__).parent.iterdir()):
        if path.name.startswith("_") or not (path / "__init__.py").exists():
            continue
        package = f"minitorch_accel.{path.name}"
        assert any(m == package or m.startswith(package + ".") for m in listed), (
            f"the package minitorch_accel.{path.name} has no API page: add it to "
            "docs/api_pages.py PAGES"
        )


def test_every_public_name_is_on_a_page(written: dict[str, str]) -> None:
    documented = api_pages.documented_modules()
    text = "\n".join(written.values())
    for name, module in documented.items():
        members = re.search(rf"automodule:: {re.escape(name)}\n(?:   :members: (.*))?", text)
        assert members is not None, f"{name} has no section"
        on_page = set((members.group(1) or "").split(", ")) - {""}
        missing = set(api_pages.public_names(module)) - on_page
        assert not missing, f"{name}: {sorted(missing)} missing from its API page"


def test_top_level_page_links_every_exported_name(written: dict[str, str]) -> None:
    import minitorch_accel as mta

    page = written["minitorch_accel.rst"]
    for name in mta.__all__:
        obj = getattr(mta, name)
        if isinstance(obj, ModuleType):
            continue
        assert re.search(rf"(`{re.escape(name)} <|``{re.escape(name)}``)", page), name


def test_a_module_that_fails_to_import_is_skipped(tmp_path: Path) -> None:
    page = api_pages.Page("broken", "Broken", "x", ("minitorch_accel.no_such_module",))
    assert api_pages.page_text(page, api_pages.documented_modules()) is None
    assert api_pages.try_import("minitorch_accel.no_such_module") is None


def test_public_names_follow_all() -> None:
    module = importlib.import_module("minitorch_accel.data")
    assert api_pages.public_names(module) == [
        n for n in module.__all__ if not isinstance(getattr(module, n), ModuleType)
    ]


def referenced_files(page: Path) -> list[Path]:
    """Figures, literal includes and includes named by a page, resolved from it."""
    targets = re.findall(
        r"^\s*\.\. (?:figure|image|literalinclude|include):: (\S+)",
        page.read_text(encoding="utf-8"),
        flags=re.M,
    )
    return [(page.parent / t).resolve() for t in targets]


@pytest.mark.parametrize("page", PAGE_FILES, ids=lambda p: p.name)
def test_referenced_files_exist(page: Path) -> None:
    generated = DOCS / "generated"  # written by conf.py at build time (pytorch_names.py)
    missing = [
        str(p.relative_to(ROOT))
        for p in referenced_files(page)
        if not p.exists() and not p.is_relative_to(generated)
    ]
    assert not missing, f"{page.name} refers to missing files {missing}; run make -C docs figures"


def test_figures_are_small_pngs() -> None:
    pngs = sorted((DOCS / "figures").glob("*.png"))
    assert pngs, "no figures: run python docs/make_figures.py"
    for png in pngs:
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", png.name
        assert png.stat().st_size < 200 * 1024, f"{png.name} is over 200 KB"


def test_every_figure_maker_exists() -> None:
    for name, (module_name, _) in make_figures.MAKERS.items():
        module = importlib.import_module(f"figure_code.{module_name}")
        assert callable(getattr(module, f"make_{name}", None)), name


def test_figure_of_the_graph_comes_from_the_real_graph() -> None:
    from figure_code.fig_autograd import depths, record_example, walk

    loss, names = record_example()
    nodes, edges = walk(loss)
    ops = sorted(type(n).__name__ for n in nodes.values() if hasattr(n, "inputs"))
    assert ops == ["Add", "MatMul", "Mul", "PowScalar", "Sum", "Tanh"]
    depth = depths(nodes, edges)
    assert max(depth.values()) == 6  # leaves at 0, six ops in a chain
    assert set(names.values()) == {"x", "w", "b"}


def test_im2col_example_matches_conv2d() -> None:
    from figure_code.fig_conv import small_example

    example = small_example()  # asserts cols @ W == conv2d_forward itself
    assert example["rows"].shape == (4, 9)


@pytest.mark.parametrize("script", sorted((ROOT / "examples").glob("*.py")), ids=lambda p: p.name)
def test_every_example_opens_with_a_gallery_title(script: Path) -> None:
    """The examples gallery makes a page of each script: its docstring must open with a
    title line underlined with ``=`` (else the page has no title and the build warns)."""
    lines = script.read_text().splitlines()
    assert lines[0].startswith('"""') and len(lines[0]) > 3, script.name
    title = lines[0][3:]
    assert lines[1] == "=" * len(title), f"{script.name}: underline the first line with '='"
