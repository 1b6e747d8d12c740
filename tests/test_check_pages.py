"""docs/check_pages.py's link check, and the files the gallery pages show, without a browser."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs"))

import check_pages  # noqa: E402
import gallery_conf  # noqa: E402

BASE = "http://127.0.0.1:8000/"


def test_links_to_missing_pages_and_anchors_are_reported(tmp_path: Path) -> None:
    (tmp_path / "a.html").write_text("a")
    (tmp_path / "b.html").write_text("b")
    reports = {
        BASE + "a.html": check_pages.PageReport(
            ids={"top"},
            links=[
                BASE + "b.html#here",  # exists
                BASE + "b.html#gone",  # missing anchor
                BASE + "c.html",  # missing page
                "https://example.org/x#y",  # another site: not checked
            ],
        ),
        BASE + "b.html": check_pages.PageReport(ids={"here"}, links=[BASE + "a.html#top"]),
    }
    missing = check_pages.check_links(reports, BASE, tmp_path)
    assert missing == {
        BASE + "a.html": [
            f"link to a missing anchor: {BASE}b.html#gone",
            f"link to a missing page: {BASE}c.html",
        ]
    }


def test_gallery_runs_and_recorded_outputs_exist() -> None:
    for script in gallery_conf.RUN_AT_BUILD:
        assert (ROOT / "examples" / script).exists(), script
    for name, files in gallery_conf.RECORDED.items():
        assert (ROOT / "examples" / f"{name}.py").exists(), name
        for item in files:
            assert (ROOT / "docs" / "figures" / item).exists(), item
    section = gallery_conf.recorded_section("mnist_cnn")
    assert ".. literalinclude:: ../figures/mnist_cnn.txt" in section
    section = gallery_conf.recorded_section("cpu_vs_gpu")
    assert ".. image:: ../figures/cpu_vs_gpu.png" in section
