"""The package as a user installs it: ``python -m build`` makes an sdist and a wheel, and
the wheel, installed into a fresh virtual environment, runs the main job from outside the
source tree, on the MNIST sample embedded in the wheel.

No registry is needed: the build runs without isolation (setuptools is in the dev
environment), and the new environment reuses this one's NumPy and tqdm through a ``.pth``
file, so ``pip install --no-deps`` installs the wheel alone.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _run(*args: str | Path, cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, f"{args} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.mark.slow
def test_the_wheel_installs_and_trains_outside_the_source_tree(tmp_path: Path) -> None:
    pytest.importorskip("build", reason="needs the build package (pip install -e '.[dev]')")
    source = tmp_path / "source"  # a copy: the build must not write into the checkout
    shutil.copytree(
        ROOT,
        source,
        ignore=shutil.ignore_patterns(
            ".git", ".venv", "_build", "build", "dist", "*.egg-info", "__pycache__", ".*cache"
        ),
    )
    dist = tmp_path / "dist"
    _run(sys.executable, "-m", "build", "--no-isolation", "--outdir", dist, ".", cwd=source)
    wheels, sdists = list(dist.glob("*.whl")), list(dist.glob("*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, list(dist.iterdir())
    names = zipfile.ZipFile(wheels[0]).namelist()
    assert any(
        n.startswith("minitorch_accel/datasets/sample/") and n.endswith(".gz") for n in names
    )
    assert "minitorch_accel/py.typed" in names

    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", "--system-site-packages", venv, cwd=tmp_path)
    python = venv / "bin" / "python"
    site = Path(
        _run(
            python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))", cwd=tmp_path
        ).strip()
    )
    # This environment's packages (NumPy, tqdm) after the new one's own, so that the
    # installed wheel, not the checkout, provides minitorch_accel.
    (site / "outer_environment.pth").write_text(sysconfig.get_path("purelib") + "\n")
    _run(python, "-m", "pip", "install", "-q", "--no-deps", "--no-index", wheels[0], cwd=tmp_path)

    work = tmp_path / "elsewhere"
    work.mkdir()
    shutil.copy(ROOT / "examples" / "mnist_cnn.py", work / "mnist_cnn.py")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    where = _run(python, "-c", "import minitorch_accel as m; print(m.__file__)", cwd=work, env=env)
    assert Path(where.strip()).is_relative_to(venv), where
    out = _run(python, "mnist_cnn.py", "--epochs", "1", cwd=work, env=env)
    assert "accuracy" in out.lower(), out
