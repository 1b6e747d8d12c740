"""Tutorial 4: the training curves of LeNet on MNIST, and the script's own output."""

from __future__ import annotations

from pathlib import Path

from .common import machine_line, write_text
from .fig_examples import ROOT, run_example


def make_mnist(out_dir: Path) -> list[Path] | None:
    """Run ``examples/mnist_cnn.py`` on the embedded sample; keep its output and curves.

    The script is asked for its curves with ``--plot``; if it does not take that
    option, the run fails and the figure is skipped with the script's message.
    """
    if not (ROOT / "examples" / "mnist_cnn.py").exists():
        print("examples/mnist_cnn.py does not exist yet")
        return None
    png = out_dir / "mnist_curves.png"
    output = run_example("mnist_cnn.py", "--quiet", "--plot", str(png))
    if output is None:
        return None
    text = machine_line() + "\n\n" + output.strip()
    return [png, write_text(out_dir / "mnist_cnn.txt", text)]
