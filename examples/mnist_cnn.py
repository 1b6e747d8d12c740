"""Train the LeNet CNN on MNIST and print the lab's summary row.
=============================================================

    python examples/mnist_cnn.py                  # embedded 5,000-digit sample, CPU, ~1 min
    python examples/mnist_cnn.py --device cuda    # the same on a GPU
    python examples/mnist_cnn.py --dataset fashion --epochs 3
    python examples/mnist_cnn.py --help           # every option

Ctrl-C stops after the current batch and saves a checkpoint; the message says how to
resume. Same as ``python -m minitorch_accel train``; the code is in
``minitorch_accel/train/``.
"""

from __future__ import annotations

import sys

from minitorch_accel.train.cli import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], prog=f"python {sys.argv[0]}"))
