"""Sphinx configuration of the minitorch_accel tutorial site.

Build with ``make -C docs html`` and check every code example with
``make -C docs doctest`` (both run with ``-W``: a warning fails the build).
"""

from __future__ import annotations

import doctest
import importlib.util
import os
import re
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

import api_pages  # noqa: E402
import pytorch_names  # noqa: E402

import minitorch_accel  # noqa: E402

api_pages.write_pages()
pytorch_names.write_table()

project = "minitorch_accel"
author = "minitorch_accel developers"
copyright = "minitorch_accel developers"
release = minitorch_accel.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.doctest",
    "sphinx.ext.viewcode",
    "sphinx.ext.mathjax",
    "sphinx_gallery.gen_gallery",
]

# ---------------------------------------------------------------- examples gallery
import gallery_conf  # noqa: E402

sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "examples",
    "filename_pattern": "/(" + "|".join(n[:-3] for n in gallery_conf.RUN_AT_BUILD) + r")\.py$",
    "reset_argv": "gallery_conf.reset_argv",
    "download_all_examples": False,
    "write_computation_times": False,
    "show_signature": False,
    "remove_config_comments": True,
}

# figures/*.rst are fragments (benchmark outputs) that benchmarks.rst includes.
# generated/*.rst: fragments written by pytorch_names.py, included by coming_from_pytorch.rst.
exclude_patterns = [
    "_build",
    "Thumbs.db",
    ".DS_Store",
    "figures/*.rst",
    "generated/*.rst",
    "examples/*.ipynb",
]
templates_path: list[str] = []

# ---------------------------------------------------------------- autodoc, napoleon
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_default_options = {"show-inheritance": True}
# Optional dependencies are mocked only when absent, so an installed one is documented as is.
autodoc_mock_imports = [m for m in ("mpi4py",) if importlib.util.find_spec(m) is None]
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
# Attributes sections as fields, not attribute entries: a NamedTuple documents its fields
# already, and two entries for one name would clash.
napoleon_use_ivar = True
python_use_unqualified_type_names = True
# Unresolved references (NumPy types, ``array_like`` in parameter lists) are not errors.
nitpicky = False

# ---------------------------------------------------------------- doctest
# Only the ``.. doctest::`` / ``.. testcode::`` blocks of the pages run here. The ``>>>``
# examples of docstrings run under ``pytest --doctest-modules``, in the namespace of their
# own module; Sphinx would run them in one namespace per page, without the module's names.
doctest_test_doctest_blocks = ""
# ``has_cuda`` lets a page run its GPU blocks only where a GPU is usable (``:skipif:``).
doctest_global_setup = """
import numpy as np
import minitorch_accel as mta
from minitorch_accel import backends as _backends

has_cuda = "cuda" in _backends.available()
mta.manual_seed(0)
"""
doctest_default_flags = (
    doctest.ELLIPSIS
    | doctest.NORMALIZE_WHITESPACE
    | doctest.IGNORE_EXCEPTION_DETAIL
    | doctest.DONT_ACCEPT_TRUE_FOR_1
)

# ---------------------------------------------------------------- HTML
html_theme = "furo"
html_title = f"minitorch_accel {release}"
html_static_path = ["_static"]
# MathJax 3 (Apache-2.0) is bundled: the site renders its equations with no network.
mathjax_path = "mathjax/tex-mml-chtml.js"
# Code and outputs wrap at the column's edge rather than scroll sideways (check_pages.py).
html_css_files = ["site.css"]


VIEWCODE_BACKLINK = re.compile(
    r'(<div class="viewcode-block" id="([^"]+)">\s*<a class="viewcode-back" href=")([^"]*)"'
)


def fix_viewcode_backlinks(
    app: Any, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """Point every "[docs]" link of a source page at an anchor that exists.

    viewcode keeps one module name per source file (the first page that documented it)
    but the last page per object, so an object documented twice (``ops.dropout.dropout``
    and its re-export ``nn.functional.dropout``) gets a link to the anchor of one module on
    the page of the other. Here each link goes to the object's entry under the module it
    is defined in, or else under the nearest package that documents it.
    """
    if not pagename.startswith("_modules/") or "body" not in context:
        return
    modname = pagename[len("_modules/") :].replace("/", ".")
    objects = app.env.get_domain("py").objects

    def target(match: re.Match[str]) -> str:
        name = match.group(2)
        keys = [k for k in objects if k == f"{modname}.{name}" or k.endswith("." + name)]
        if not keys:
            return match.group(0)
        key = max(
            keys, key=lambda k: (k == f"{modname}.{name}", len(os.path.commonprefix([k, modname])))
        )
        entry = objects[key]
        href = app.builder.get_relative_uri(pagename, entry.docname) + "#" + entry.node_id
        return f'{match.group(1)}{href}"'

    context["body"] = VIEWCODE_BACKLINK.sub(target, context["body"])


def add_recorded_outputs(app: Any, docname: str, source: list[str]) -> None:
    """Append the recorded output of a slow example to its gallery page."""
    name = docname.removeprefix("examples/")
    if docname.startswith("examples/") and name in gallery_conf.RECORDED:
        source[0] += gallery_conf.recorded_section(name)


def setup(app: Any) -> None:
    app.connect("html-page-context", fix_viewcode_backlinks)
    app.connect("source-read", add_recorded_outputs)
