"""The "Coming from PyTorch" table (``docs/pytorch_names.py``) tells the truth: every name
marked available resolves in minitorch_accel, every name marked missing does not."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"
sys.path.insert(0, str(DOCS))

import pytorch_names  # noqa: E402

NAMES = pytorch_names.all_names()


@pytest.mark.parametrize("entry", NAMES, ids=[n.torch for n in NAMES])
def test_status_matches_the_package(entry: pytorch_names.Name) -> None:
    found = pytorch_names.exists(entry.ours)
    if entry.status == pytorch_names.MISSING:
        assert not found, (
            f"minitorch_accel.{entry.ours} exists now: mark {entry.torch} available in "
            "docs/pytorch_names.py"
        )
    else:
        assert found, (
            f"{entry.torch} is listed as {entry.status} but minitorch_accel.{entry.ours} "
            "does not exist"
        )


def test_statuses_and_notes() -> None:
    for entry in NAMES:
        assert entry.status in (
            pytorch_names.AVAILABLE,
            pytorch_names.DIFFERS,
            pytorch_names.MISSING,
        )
        if entry.status == pytorch_names.DIFFERS:
            assert entry.note, f"{entry.torch} differs: say how"


def test_the_issue_names_are_listed() -> None:
    listed = {n.torch for n in NAMES}
    for required in (
        "torch.max",
        "Tensor.topk",
        "torch.Size",
        "Tensor.element_size",
        "Tensor.mT",
        "torch.einsum",
        "torch.inference_mode",
        "torch.accelerator.current_accelerator",
        "torch.nn.GroupNorm",
        "torch.nn.Module.register_buffer",
        "torch.optim.RMSprop",
        "torch.nn.DataParallel",
    ):
        assert required in listed, required


def test_table_is_written(tmp_path: Path) -> None:
    path = pytorch_names.write_table(tmp_path / "table.rst")
    text = path.read_text(encoding="utf-8")
    assert "``torch.topk``" in text and ".. list-table::" in text
    assert text.count("   * - ``") == len(NAMES)
