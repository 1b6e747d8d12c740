"""Command line: ``python -m minitorch_accel info|train|bench``."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m minitorch_accel`` and of the ``minitorch-accel`` script."""
    parser = argparse.ArgumentParser(prog="python -m minitorch_accel")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("info", help="print versions, backends and devices")
    train = sub.add_parser("train", help="train the LeNet CNN on MNIST (see examples/mnist_cnn.py)")
    train.add_argument("args", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if args.command == "info":
        from .utils.env import report

        print(report())
        return 0
    from .train.cli import main as train_main

    return train_main(args.args)


if __name__ == "__main__":
    sys.exit(main())
