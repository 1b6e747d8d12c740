"""A backend is one folder: the lint checks that hold it (tools/check_backend_names.py and
ruff's banned-api rule) pass on the package and catch planted violations.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "tools" / "check_backend_names.py"


@pytest.fixture(scope="module")
def checker() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_backend_names", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _plant(tmp_path: Path, relative: str, source: str) -> Path:
    path = tmp_path / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


def test_the_package_passes() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "minitorch_accel"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout == ""


PLANTED = """\
import importlib

import cupy
from cupy.cuda import nccl


def f(device, other):
    if device.type == "cuda":
        pass
    if "cpu" != device.type:
        pass
    if device.type in ("cpu", "cuda"):
        pass
    if device.type == other.type:  # two devices compared: fine
        pass
    if device.type in other.names:  # no literal: fine
        pass
    importlib.import_module("cupyx.scipy")
    __import__("cupy")
    importlib.import_module("numpy")  # fine
    if other.xp.__name__ == "cupy" or type(other).__module__.startswith("cupyx"):
        pass
    if other.__name__ == "numpy":  # fine
        pass
"""


def test_planted_violations_are_named_by_file_and_line(checker: ModuleType, tmp_path: Path) -> None:
    path = _plant(tmp_path, "minitorch_accel/parallel/planted.py", PLANTED)
    findings = checker.check([tmp_path / "minitorch_accel"], tmp_path)
    lines = sorted(int(f.split(":")[1]) for f in findings)
    assert lines == [3, 4, 8, 10, 12, 18, 19, 21, 21]
    assert all(f.startswith(f"{path}:") for f in findings)
    assert any("branches on a device type's name (device.type == 'cuda')" in f for f in findings)
    assert any("imports 'cupyx.scipy' through import_module()" in f for f in findings)
    assert any("imports from cupy.cuda" in f for f in findings)
    assert any("recognises arrays by the library name 'cupy'" in f for f in findings)
    assert any("library name 'cupyx'" in f for f in findings)


def test_relative_imports_of_a_backend_folder_are_caught(
    checker: ModuleType, tmp_path: Path
) -> None:
    _plant(
        tmp_path,
        "minitorch_accel/utils/planted.py",
        """\
        from ..backends.cupy.memory import oom_guard
        from ..backends import cupy
        from ..backends import registry  # fine
        from ..backends.oom import OutOfMemoryError  # fine
        import minitorch_accel.backends.cupy.backend
        """,
    )
    findings = checker.check([tmp_path / "minitorch_accel"], tmp_path)
    assert [int(f.split(":")[1]) for f in findings] == [1, 2, 5]
    assert "imports minitorch_accel.backends.cupy.memory" in findings[0]
    assert "imports minitorch_accel.backends.cupy," in findings[1]


def test_the_backends_folder_is_exempt(checker: ModuleType, tmp_path: Path) -> None:
    _plant(tmp_path, "minitorch_accel/backends/planted/backend.py", PLANTED)
    assert checker.check([tmp_path / "minitorch_accel"], tmp_path) == []


def test_the_script_fails_with_the_findings(tmp_path: Path) -> None:
    _plant(tmp_path, "minitorch_accel/planted.py", PLANTED)
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "minitorch_accel"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1
    assert done.stdout.splitlines()[0].startswith("minitorch_accel/planted.py:3: imports cupy")
    assert "9 finding(s)" in done.stderr


def test_ruff_bans_cupy_outside_the_backends(tmp_path: Path) -> None:
    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    if not Path(ruff).exists():
        pytest.skip("ruff is not installed")
    shutil.copy(ROOT / "ruff.toml", tmp_path / "ruff.toml")
    source = "import cupy\nfrom cupyx import scipy\n\nprint(cupy, scipy)\n"
    _plant(tmp_path, "minitorch_accel/parallel/planted.py", source)
    _plant(tmp_path, "minitorch_accel/backends/planted.py", source)
    done = subprocess.run(
        [ruff, "check", "--select", "TID251", "--no-cache", "minitorch_accel"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1
    flagged = [line for line in done.stdout.splitlines() if "TID251" in line]
    assert len(flagged) == 2 and "`cupy` is banned" in flagged[0]
    assert "minitorch_accel/parallel/planted.py" in done.stdout
    assert "minitorch_accel/backends/planted.py" not in done.stdout
