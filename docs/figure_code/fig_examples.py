"""Figures and outputs that come from running the scripts in ``examples/``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from .common import machine_line, write_text

ROOT = Path(__file__).resolve().parents[2]


def example_env() -> dict[str, str]:
    """The environment of a script run: this one, with the repository importable."""
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    return dict(os.environ, PYTHONPATH=path)


def run_example(script: str, *args: str) -> str | None:
    """Run ``examples/<script>`` with this Python and the repository importable; its output.

    None (with a message) when the script does not exist yet.
    """
    path = ROOT / "examples" / script
    if not path.exists():
        print(f"examples/{script} does not exist yet")
        return None
    done = subprocess.run(
        [sys.executable, str(path), *args],
        cwd=ROOT,
        env=example_env(),
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def make_cpu_vs_gpu(out_dir: Path) -> list[Path] | None:
    """``examples/cpu_vs_gpu.py``: its tables (text) and its bar chart.

    On a machine without a GPU the tables hold the CPU columns only; run this on a GPU
    machine to fill in the rest.
    """
    png = out_dir / "cpu_vs_gpu.png"
    output = run_example("cpu_vs_gpu.py", "--plot", str(png))
    if output is None:
        return None
    lines = [line for line in output.splitlines() if not line.startswith("wrote ")]
    text = machine_line() + "\n\n" + "\n".join(lines).strip()
    return [png, write_text(out_dir / "cpu_vs_gpu.txt", text)]


# benchmark script -> extra runs (argument lists) made on every machine
CPU_RUNS: dict[str, list[list[str]]] = {
    # a core per stage; then stages of more work per micro-batch, where the bubble's bound
    # is stated (benchmarks page), the median of more steps
    "pipeline": [
        ["--stages", "2"],
        ["--stages", "2", "--layers", "8", "--micro", "512", "--bubble-repeat", "9"],
    ],
}
# benchmark script -> extra runs (argument lists) made only where a GPU is usable
GPU_RUNS: dict[str, list[list[str]]] = {
    "autograd_overhead": [["--device", "cuda"]],
    "lenet_step": [["--device", "cuda"]],
    "dataloader": [["--device", "cuda"]],
    "step_profile": [["--device", "cuda", "--kernels"]],
}
# The targets of the benchmarks were set for 2 CPU threads on both sides.
THREADS = {name: "2" for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}


def machine_summary() -> str:
    """The environment report of ``python -m minitorch_accel info``, first lines only."""
    from minitorch_accel.utils.env import report

    keep = ("python", "numpy", "cpu cores", "torch", "  cuda")
    lines = [line for line in report().splitlines() if line.startswith(keep)]
    return machine_line() + "\n" + "\n".join(lines)


def run_benchmark(script: Path, args: list[str], timeout: int) -> tuple[str | None, str]:
    """(output, "") of one run, or (None, why it gave none)."""
    env = dict(example_env(), **THREADS)
    try:
        done = subprocess.run(
            [sys.executable, str(script), *args],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return None, f"it ran past {timeout} s"
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        return None, f"it failed: ``{last[:160]}``"
    return done.stdout.strip(), ""


def benchmark_fragment(runs: list[tuple[list[str], str | None, str]]) -> str:
    """The reST that ``benchmarks.rst`` includes for one script: each run's output or why
    there is none."""
    parts = []
    for args, output, why in runs:
        label = f"With ``{' '.join(args)}``: " if args else ""
        if output is None:
            parts.append(f"{label}*to be measured* ({why}).\n")
            continue
        body = "\n".join("   " + line if line.strip() else "" for line in output.splitlines())
        parts.append(
            f"{label}\n\n.. code-block:: text\n\n{body}\n"
            if label
            else f".. code-block:: text\n\n{body}\n"
        )
    return "\n".join(parts)


def make_benchmarks(out_dir: Path, timeout: int = 240) -> list[Path]:
    """Run every ``benchmarks/*.py`` with its defaults (BLAS on 2 threads), plus its GPU
    variants where a GPU is usable; keep each output or say why there is none."""
    from minitorch_accel import cuda

    written = [write_text(out_dir / "bench_machine.txt", machine_summary())]
    gpu = cuda.is_available()
    for script in sorted((ROOT / "benchmarks").glob("*.py")):
        variants: list[list[str]] = [[], *CPU_RUNS.get(script.stem, [])]
        variants += GPU_RUNS.get(script.stem, []) if gpu else []
        runs = []
        for args in variants:
            print(f"benchmarks: running {script.name} {' '.join(args)} ...", flush=True)
            runs.append((args, *run_benchmark(script, args, timeout)))
        written.append(write_text(out_dir / f"bench_{script.stem}.rst", benchmark_fragment(runs)))
    return written


def make_mpi(out_dir: Path, processes: int = 2, epochs: int = 2) -> list[Path] | None:
    """``mpiexec -n 2 python examples/mnist_mpi.py``: its output, where MPI is installed."""
    import shutil

    mpiexec = shutil.which("mpiexec") or str(Path(sys.executable).parent / "mpiexec")
    script = ROOT / "examples" / "mnist_mpi.py"
    if not Path(mpiexec).exists() or not script.exists():
        print("mpiexec (pip install -e '.[dist]') or examples/mnist_mpi.py is missing")
        return None
    command = [mpiexec, "-n", str(processes), sys.executable, str(script), "--epochs", str(epochs)]
    done = subprocess.run(
        command,
        cwd=ROOT,
        env=example_env(),
        capture_output=True,
        text=True,
        check=True,
        timeout=900,
    )
    shown = f"$ mpiexec -n {processes} python examples/mnist_mpi.py --epochs {epochs}"
    text = machine_line() + "\n\n" + shown + "\n" + done.stdout.strip()
    return [write_text(out_dir / "mnist_mpi.txt", text)]


def make_systolic(out_dir: Path) -> list[Path] | None:
    """``examples/systolic_array.py``: its tables and the wavefront figure."""
    png = out_dir / "systolic_wavefront.png"
    output = run_example("systolic_array.py", "--plot", str(png))
    if output is None:
        return None
    lines = [line for line in output.splitlines() if not line.startswith("wrote ")]
    return [png, write_text(out_dir / "systolic.txt", "\n".join(lines))]


def make_roofline(out_dir: Path) -> list[Path] | None:
    """``examples/roofline.py``: the measured ceilings, the points and the chart."""
    png = out_dir / "roofline.png"
    output = run_example("roofline.py", "--plot", str(png))
    if output is None:
        return None
    lines = [line for line in output.splitlines() if not line.startswith("wrote ")]
    return [png, write_text(out_dir / "roofline.txt", "\n".join(lines))]


def make_threads(out_dir: Path) -> list[Path] | None:
    """``examples/thread_scaling.py``: 1..N threads, ours beside PyTorch, Amdahl fits."""
    png = out_dir / "thread_scaling.png"
    output = run_example("thread_scaling.py", "--plot", str(png))
    if output is None:
        return None
    lines = [line for line in output.splitlines() if not line.startswith("wrote ")]
    return [png, write_text(out_dir / "thread_scaling.txt", "\n".join(lines))]


def make_tensor_cores(out_dir: Path) -> list[Path]:
    """TFLOP/s of square matmuls per number format on a GPU: ``benchmarks/matmul.py``
    rerun where a GPU is usable, else the stored output of the last GPU run
    (``matmul_dtypes_gpu.txt``); a bar chart of it either way.
    """
    import matplotlib.pyplot as plt

    from minitorch_accel import cuda

    from .common import save

    text_path = out_dir / "matmul_dtypes_gpu.txt"
    if cuda.is_available():
        script = str(ROOT / "benchmarks" / "matmul.py")
        args = ["--device", "cuda", "--dtype", "float32", "tf32", "float16"]
        done = subprocess.run(
            [sys.executable, script, *args], cwd=ROOT, env=example_env(),
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        command = f"$ python benchmarks/matmul.py {' '.join(args)}"
        write_text(text_path, "\n".join([machine_line(), command, done.stdout]))
    rates: dict[str, dict[int, float]] = {}
    for line in text_path.read_text().splitlines():
        parts = line.split()
        if len(parts) == 6 and parts[0] in ("float32", "tf32", "float16"):
            rates.setdefault(parts[0], {})[int(parts[1])] = float(parts[5]) / 1e3
    sizes = sorted({n for by_n in rates.values() for n in by_n if n >= 1024})
    fig, ax = plt.subplots(figsize=(6.4, 3.2))
    width = 0.8 / len(rates)
    for i, (dtype, by_n) in enumerate(rates.items()):
        xs = [k + i * width for k, n in enumerate(sizes) if n in by_n]
        bars = ax.bar(xs, [by_n[n] for n in sizes if n in by_n], width, label=dtype)
        ax.bar_label(bars, fmt="%.0f", fontsize=7)
    ax.set_xticks([k + width * (len(rates) - 1) / 2 for k in range(len(sizes))])
    ax.set_xticklabels([f"n = {n}" for n in sizes])
    ax.set_ylabel("TFLOP/s")
    ax.set_title("Square matmul on the GPU, per number format (measured)", fontsize=10)
    ax.legend(fontsize=8)
    return [save(fig, out_dir / "tensor_cores.png"), text_path]
