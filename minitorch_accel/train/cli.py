"""``python -m minitorch_accel train``: LeNet on MNIST, with every option of a real run.

Trains, validates on the test split after each epoch, and ends with one table row
(the lab's: device, step time, final train loss, test accuracy) to compare runs on
different devices::

    python -m minitorch_accel train                      # the embedded sample, on the CPU
    python -m minitorch_accel train --device cuda        # the same on a GPU
    python -m minitorch_accel train --dataset fashion --epochs 3 --checkpoint run.npz
    python -m minitorch_accel train --resume run.npz     # continue a stopped run
    python -m minitorch_accel train --plot curves.png    # the loss/accuracy curves

``examples/mnist_cnn.py`` is the same lesson written out in one short script (its own
model, loop and evaluation; ``--device`` and ``--epochs`` only); this command packages
the loop in :func:`~minitorch_accel.train.fit` and adds checkpoints, resuming, curves,
full MNIST and Fashion-MNIST.

Ctrl-C or SIGTERM stops after the current batch and saves a checkpoint (exit status
130 or 143); ``--resume`` continues
it with the settings stored inside, and on the CPU ends with exactly the numbers of
an uninterrupted run.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .history import History
from .recipe import DATASETS, DEFAULT_LR, RunConfig

__all__ = ["build_parser", "format_summary", "main"]

DEFAULT_PROG = "python -m minitorch_accel train"
#: Exit status after Ctrl-C, as shells report a process stopped by SIGINT.
EXIT_INTERRUPTED = 130
#: Exit status after SIGTERM (a checkpoint was saved), as shells report it.
EXIT_TERMINATED = 143
#: Exit status when training diverged (a NaN or infinite loss).
EXIT_DIVERGED = 3
#: The largest --seed (NumPy seeds are 32-bit).
MAX_SEED = 2**32 - 1
#: Options whose value is stored in checkpoints and must not change on --resume.
RUN_OPTIONS = ("dataset", "epochs", "batch_size", "lr", "optimizer", "seed", "amp", "limit")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text}")
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
    return value


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if not 0 <= value <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"must be in [0, {MAX_SEED}], got {value}")
    return value


def build_parser(prog: str = DEFAULT_PROG) -> argparse.ArgumentParser:
    """The argument parser (options left out stay None, so --resume can tell them apart)."""
    defaults = RunConfig()
    p = argparse.ArgumentParser(
        prog=prog,
        description="Train the LeNet CNN on MNIST and print the lab's summary row.",
    )
    p.add_argument(
        "--dataset",
        choices=sorted(DATASETS),
        help="sample: 5,000 digits embedded in the package (default); mnist: the "
        "full 70,000 (downloaded); fashion: Fashion-MNIST",
    )
    p.add_argument("--device", default="cpu", help="cpu (default), cuda, cuda:1, cpu:1...")
    p.add_argument("--epochs", type=_positive_int, help=f"default {defaults.epochs}")
    p.add_argument("--batch-size", type=_positive_int, help=f"default {defaults.batch_size}")
    p.add_argument(
        "--lr",
        type=_positive_float,
        help="peak learning rate of the one-cycle schedule (default "
        + ", ".join(f"{k} {v}" for k, v in DEFAULT_LR.items())
        + ")",
    )
    p.add_argument(
        "--optimizer",
        choices=["sgd", "adam"],
        help="adam (default), or sgd with Nesterov momentum 0.9",
    )
    p.add_argument("--seed", type=_seed, help=f"weights and shuffling (default {defaults.seed})")
    p.add_argument(
        "--limit",
        type=_positive_int,
        help="use only the first N training and test images (quick runs)",
    )
    p.add_argument("--data-dir", help="folder with the IDX files (searched first)")
    p.add_argument("--checkpoint", metavar="PATH", help="save a checkpoint there after every epoch")
    p.add_argument("--resume", metavar="PATH", help="continue the run saved in PATH")
    p.add_argument("--plot", metavar="PATH", help="write the loss/accuracy curves (PNG)")
    p.add_argument(
        "--amp",
        action="store_true",
        default=None,
        help="mixed precision (float16 compute, float32 weights)",
    )
    p.add_argument(
        "--on-nonfinite",
        choices=["stop", "warn", "ignore"],
        default="stop",
        help="at a NaN or infinite loss: stop (default, exit status 3, the checkpoint keeps "
        "the last finite state), warn and go on, or ignore",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bars, only the summary")
    return p


def format_summary(row: dict[str, Any]) -> str:
    """The lab's summary table: a header, a rule and one row, Markdown style.

    ``row`` holds ``device``, ``epochs``, ``step_time`` (s/batch), ``train_loss``,
    ``test_accuracy`` (a fraction) and ``wall_time`` (s).
    """
    cells = [
        ("device", str(row["device"])),
        ("epochs", str(row["epochs"])),
        ("step time (s/batch)", f"{row['step_time']:.4f}"),
        ("final train loss", f"{row['train_loss']:.4f}"),
        ("test accuracy", f"{100 * row['test_accuracy']:.2f}%"),
        ("wall time (s)", f"{row['wall_time']:.1f}"),
    ]
    widths = [max(len(h), len(v)) for h, v in cells]
    header = "| " + " | ".join(h.ljust(w) for (h, _), w in zip(cells, widths, strict=True)) + " |"
    rule = "| " + " | ".join("-" * w for w in widths) + " |"
    values = "| " + " | ".join(v.ljust(w) for (_, v), w in zip(cells, widths, strict=True)) + " |"
    return "\n".join([header, rule, values])


class UsageError(Exception):
    """A bad command line detected after parsing (exit status 2)."""


class InputError(Exception):
    """Data or a checkpoint that cannot be read, or a file that cannot be written (status 1)."""


def _amp_available() -> bool:
    try:
        from .. import amp
    except ImportError:
        return False
    return hasattr(amp, "autocast") and hasattr(amp, "GradScaler")


def _config(args: argparse.Namespace, saved: dict[str, Any] | None) -> RunConfig:
    """The run's settings: the command line over the defaults, or a checkpoint's."""
    given = {name: getattr(args, name) for name in RUN_OPTIONS if getattr(args, name) is not None}
    if saved is None:
        return RunConfig(**given)
    config = RunConfig.from_dict(saved)
    for name, value in given.items():
        if value != getattr(config, name):
            flag = "--" + name.replace("_", "-")
            raise UsageError(
                f"{flag} {value} differs from the checkpoint's {getattr(config, name)}: leave "
                f"{flag} out to resume that run, or start a new one without --resume"
            )
    return config


def _check_saved_config(config: RunConfig, path: str) -> None:  # noqa: C901  (one check per setting)
    """The settings read from a checkpoint pass the command line's own checks."""
    checks: list[tuple[str, Any, Callable[[str], Any]]] = [
        ("epochs", config.epochs, _positive_int),
        ("batch_size", config.batch_size, _positive_int),
        ("seed", config.seed, _seed),
    ]
    if config.lr is not None:
        checks.append(("lr", config.lr, _positive_float))
    if config.limit is not None:
        checks.append(("limit", config.limit, _positive_int))
    problems = []
    for name, value, parse in checks:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            problems.append(f"{name} is {value!r}")
            continue
        try:
            if parse(repr(value)) != value:
                problems.append(f"{name} is {value!r}")
        except argparse.ArgumentTypeError as exc:
            problems.append(f"{name} {exc}")
    if config.dataset not in DATASETS:
        problems.append(f"dataset is {config.dataset!r}")
    if config.optimizer not in DEFAULT_LR:
        problems.append(f"optimizer is {config.optimizer!r}")
    if not isinstance(config.amp, bool):
        problems.append(f"amp is {config.amp!r}")
    if problems:
        raise InputError(
            f"--resume {path}: the checkpoint's settings are invalid: " + "; ".join(problems)
        )


def _check_writable(flag: str, path: str) -> None:
    """Fail before training when ``path`` cannot be written (its folder may be created)."""
    target = Path(path)
    if target.is_dir():
        raise UsageError(f"{flag} {path}: is a folder; give a file name")
    folder = target.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise UsageError(f"{flag} {path}: {folder} is not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"{flag} {path}: the folder {folder} is not writable")


def _check_device(name: str) -> Any:
    from ..backends import Device

    try:
        device = Device(name)
        device.backend.check_device(device)
    except (ValueError, RuntimeError, ImportError, TypeError) as exc:
        raise UsageError(f"--device {name}: {exc}") from exc
    return device


def _describe(config: RunConfig, parts: dict[str, Any], device: Any) -> str:
    loader = parts["loader"]
    opt = "SGD (Nesterov momentum 0.9)" if config.optimizer == "sgd" else "Adam"
    return (
        f"LeNet on {DATASETS[config.dataset]}: {len(loader.dataset):,} training / "
        f"{len(parts['val_loader'].dataset):,} test images, device {device}, "
        f"{config.epochs} epochs of {len(loader)} batches of {config.batch_size}, "
        f"{opt} with a one-cycle schedule peaking at lr {config.peak_lr}, seed {config.seed}"
        + (", mixed precision" if config.amp else "")
    )


def _run(args: argparse.Namespace, prog: str, start: float) -> int:  # noqa: C901  (the CLI steps in order: data, model, resume, fit, save, report)
    from .checkpoint import ResumeError, load_checkpoint
    from .interrupt import Terminated
    from .loop import NonFiniteLossError

    device = _check_device(args.device)
    ckpt = None
    if args.resume:
        try:
            ckpt = load_checkpoint(args.resume, map_location=device)
        except (OSError, ValueError) as exc:
            raise InputError(f"--resume {args.resume}: {exc}") from exc
    saved = None if ckpt is None else ckpt["metadata"].get("config")
    if ckpt is not None and saved is None:
        raise UsageError(f"--resume {args.resume}: the checkpoint holds no command-line settings")
    if saved is not None and not isinstance(saved, dict):
        raise InputError(f"--resume {args.resume}: its settings are a {type(saved).__name__}")
    config = _config(args, saved)
    if saved is not None:
        _check_saved_config(config, args.resume)
    for flag, path in (("--checkpoint", args.checkpoint), ("--plot", args.plot)):
        if path:
            _check_writable(flag, path)
    if args.plot:
        from .plot import _figure_class

        try:
            _figure_class()
        except ImportError as exc:
            raise UsageError(f"--plot: {exc}") from exc
    if config.amp and not _amp_available():
        raise UsageError(
            "--amp: mixed precision is not available yet in this version "
            "(minitorch_accel.amp is missing)"
        )
    from .recipe import build_data, build_training

    try:
        train_set, test_set = build_data(config, args.data_dir)
    except (OSError, RuntimeError, ValueError) as exc:
        raise InputError(str(exc)) from exc
    parts = build_training(config, train_set, test_set)
    if not args.quiet:
        print(_describe(config, parts, device), flush=True)
    checkpoint = args.checkpoint or args.resume
    try:
        history = _fit(args, prog, config, parts, device, ckpt, checkpoint)
    except NonFiniteLossError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr, flush=True)
        return EXIT_DIVERGED
    except Terminated:
        return EXIT_TERMINATED
    except ResumeError as exc:
        raise InputError(f"--resume {args.resume}: {exc}") from exc
    return _after_fit(args, config, history, device, prog, start)


def _fit(
    args: argparse.Namespace,
    prog: str,
    config: RunConfig,
    parts: dict[str, Any],
    device: Any,
    ckpt: Any,
    checkpoint: str | None,
) -> History:
    from .config import FitConfig
    from .loop import fit

    settings = FitConfig(
        epochs=config.epochs,
        device=device,
        scheduler=parts["scheduler"],
        checkpoint=checkpoint,
        progress=not args.quiet,
        resume=ckpt,
        interrupt_checkpoint=checkpoint or f"lenet-{config.dataset}-interrupted.npz",
        resume_command=f"{prog} --resume {{path}}",
        metadata={"config": config.to_dict()},
        amp=config.amp,
        on_nonfinite=args.on_nonfinite,
    )
    return fit(
        parts["model"],
        parts["loader"],
        parts["optimizer"],
        parts["loss_fn"],
        settings,
        val_loader=parts["val_loader"],
    )


def _after_fit(
    args: argparse.Namespace,
    config: RunConfig,
    history: History,
    device: Any,
    prog: str,
    start: float,
) -> int:
    if args.plot and len(history):
        from .plot import plot_history

        try:
            path = plot_history(history, args.plot, title=f"LeNet on {DATASETS[config.dataset]}")
        except (ImportError, OSError) as exc:
            raise InputError(f"--plot {args.plot}: {exc}") from exc
        if not args.quiet:
            print(f"curves written to {path}")
    if len(history) < config.epochs:
        return EXIT_INTERRUPTED
    if not math.isfinite(history.train_loss[-1]):
        print(f"{prog}: error: the final training loss is not finite", file=sys.stderr)
        return EXIT_DIVERGED
    print(format_summary(_summary_row(history, device, config, start)), flush=True)
    return 0


def _summary_row(history: History, device: Any, config: RunConfig, start: float) -> dict[str, Any]:
    return {
        "device": device,
        "epochs": config.epochs,
        # the median epoch: the first one may include warm-up (GPU kernels compiling)
        "step_time": statistics.median(history.step_time),
        "train_loss": history.train_loss[-1],
        "test_accuracy": history.val_accuracy[-1],
        "wall_time": time.perf_counter() - start,
    }


def main(argv: list[str] | None = None, prog: str = DEFAULT_PROG) -> int:
    """Run the command line; return the exit status.

    Parameters
    ----------
    argv : list of str, optional
        The arguments (``sys.argv[1:]`` by default).
    prog : str
        How the command is invoked, for help and the resume hint.

    Returns
    -------
    int
        0 on success, 1 when data cannot be found or a file cannot be written, 2 for a
        bad command line, 3 when training diverged (a NaN or infinite loss), 130 when
        training was interrupted by Ctrl-C, 143 by SIGTERM (a checkpoint was saved).
    """
    start = time.perf_counter()
    parser = build_parser(prog)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, or a bad option (argparse printed why)
        return exc.code if isinstance(exc.code, int) else 2
    try:
        return _run(args, prog, start)
    except UsageError as exc:
        parser.print_usage(sys.stderr)
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    except InputError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 1
