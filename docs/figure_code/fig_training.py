"""Tutorial 4: the output of ``examples/mnist_cnn.py``, and the curves of the command line."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from .common import machine_line, write_text
from .fig_examples import ROOT, example_env


def _run(args: list[str], cwd: Path) -> str:
    done = subprocess.run(
        [sys.executable, *args], cwd=cwd, env=example_env(), capture_output=True, text=True
    )
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed:\n{done.stderr}")
    return done.stdout.strip()


def make_mnist(out_dir: Path) -> list[Path] | None:
    """Run ``examples/mnist_cnn.py`` (its printed lines), then ``python -m minitorch_accel
    train --plot`` on the embedded sample (its summary row and training curves).

    Both run in a temporary folder, where the example leaves its ``mnist_cnn.npz``.
    """
    png = out_dir / "mnist_curves.png"
    with tempfile.TemporaryDirectory() as work:
        lesson = _run([str(ROOT / "examples" / "mnist_cnn.py")], Path(work))
        train = _run(["-m", "minitorch_accel", "train", "--quiet", "--plot", str(png)], Path(work))
    train = "\n".join(line for line in train.splitlines() if not line.startswith("curves "))
    return [
        write_text(out_dir / "mnist_cnn.txt", machine_line() + "\n\n" + lesson),
        write_text(out_dir / "mnist_train.txt", machine_line() + "\n\n" + train),
        png,
    ]
