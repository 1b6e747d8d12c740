"""The tutorial "How big a model fits": examples/memory_limits.py on a capped cpu:1, the
estimate against the measured peak, and benchmarks/memory.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .common import machine_line, write_text
from .fig_examples import ROOT, benchmark_fragment, run_benchmark, run_example

#: The cap of the CPU figures: small enough that LeNet runs out of memory in seconds.
LIMIT_MIB = 64


def estimate_table(batches: tuple[int, ...] = (16, 64, 256, 1024)) -> str:
    """``utils.memory_estimate`` beside the measured peak of a second training step."""
    import minitorch_accel as mta
    from minitorch_accel import memory, nn, optim
    from minitorch_accel.nn.models import LeNet, SmallVGG
    from minitorch_accel.utils import memory_estimate

    def deep_mlp() -> nn.Module:
        layers: list[nn.Module] = [nn.Flatten(), nn.Linear(784, 256), nn.ReLU()]
        for _ in range(12):
            layers += [nn.Linear(256, 256), nn.ReLU()]
        return nn.Sequential(*layers, nn.Linear(256, 10))

    models = {
        "LeNet": (LeNet, (1, 28, 28)),
        "SmallVGG(width=8)": (lambda: SmallVGG(width=8), (1, 16, 16)),
        "MLP 14 x 256": (deep_mlp, (1, 28, 28)),
    }
    lines = [f"{'model':<18} {'batch':>5} {'predicted MiB':>13} {'measured MiB':>12} {'ratio':>6}"]
    device_index = 50
    for name, (make, image) in models.items():
        for batch in batches:
            device = f"cpu:{device_index}"
            device_index += 1
            shape = (batch, *image)
            with memory.tracking():
                mta.manual_seed(0)
                model = make().to(device)
                opt = optim.Adam(model.parameters(), lr=1e-3)
                rng = np.random.default_rng(0)
                x = mta.tensor(rng.random(shape, dtype=np.float32), device=device)
                y = mta.tensor(rng.integers(0, 10, batch), device=device)
                for step in range(2):
                    if step == 1:
                        memory.reset_peak_memory_stats(device)
                    opt.zero_grad()
                    nn.CrossEntropyLoss()(model(x), y).backward()
                    opt.step()
                peak = memory.max_memory_allocated(device)
                predicted = memory_estimate(model, shape, opt, device=device).total
            lines.append(
                f"{name:<18} {batch:>5} {predicted / 2**20:>13.2f} {peak / 2**20:>12.2f} "
                f"{predicted / peak:>6.3f}"
            )
    return "\n".join(lines)


def make_memory(out_dir: Path) -> list[Path] | None:
    """The example's output and figure, the estimate table, the benchmark's output."""
    png = out_dir / "memory_by_category.png"
    args = ("--device", "cpu:1", "--limit-mib", str(LIMIT_MIB), "--png", str(png))
    output = run_example("memory_limits.py", *args)
    if output is None:
        return None
    shown = f"$ python examples/memory_limits.py {' '.join(args[:4])}"
    written = [
        write_text(out_dir / "memory_limits.txt", machine_line() + "\n\n" + shown + "\n" + output),
        png,
        write_text(out_dir / "memory_estimate.txt", machine_line() + "\n\n" + estimate_table()),
    ]
    found, why = run_benchmark(ROOT / "benchmarks" / "memory.py", [], timeout=600)
    written.append(write_text(out_dir / "bench_memory.rst", benchmark_fragment([([], found, why)])))
    return written
