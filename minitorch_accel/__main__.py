"""Command line: ``python -m minitorch_accel info|train|bench``."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m minitorch_accel`` and of the ``minitorch-accel`` script."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["train"]:  # every option after "train" belongs to the trainer's parser
        from .train.cli import main as train_main

        return train_main(argv[1:], prog="python -m minitorch_accel train")
    if argv[:1] == ["bench"]:
        from .train.bench import main as bench_main

        return bench_main(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m minitorch_accel")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("info", help="print versions, backends and devices")
    sub.add_parser("train", help="train LeNet on MNIST (--dataset, --resume, --plot...)")
    sub.add_parser("bench", help="time one LeNet training step (--device, --batch-size)")
    parser.parse_args(argv)
    from .utils.env import report

    print(report())
    return 0


if __name__ == "__main__":
    sys.exit(main())
