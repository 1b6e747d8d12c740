"""Tutorial 8: the rounding error of a float16 dot product, by how it accumulates."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .common import save, write_text

LENGTHS = [2**k for k in range(4, 17, 2)]  # 16 .. 65536 terms
SHORT = ["float16 running sum", "mta float16 matmul", "float32 accumulation"]


def relative_errors(k: int, trials: int = 8) -> dict[str, float]:
    """Median relative error of ``a . b`` (``k`` terms, values in [0, 1)) against float64."""
    import minitorch_accel as mta

    rng = np.random.default_rng(k)
    found: dict[str, list[float]] = {}
    for _ in range(trials):
        a = rng.random(k)
        b = rng.random(k)
        a16, b16 = a.astype(np.float16), b.astype(np.float16)
        exact = float(a16.astype(np.float64) @ b16.astype(np.float64))  # same rounded inputs
        running = np.cumsum((a16 * b16).astype(np.float16), dtype=np.float16)[-1]
        results = {
            "float16 products, float16 running sum": float(running),
            "mta float16 matmul (NumPy on this machine)": float(
                (mta.tensor(a16).reshape(1, k) @ mta.tensor(b16).reshape(k, 1)).item()
            ),
            "float16 inputs, float32 accumulation (tensor cores)": float(
                a16.astype(np.float32) @ b16.astype(np.float32)
            ),
        }
        for name, value in results.items():
            found.setdefault(name, []).append(abs(value - exact) / exact)
    return {name: float(np.median(errs)) for name, errs in found.items()}


def make_fp16(out_dir: Path) -> list[Path]:
    """Error against dot-product length, one curve per way of accumulating."""
    import matplotlib.pyplot as plt

    rows = {k: relative_errors(k) for k in LENGTHS}
    names = list(rows[LENGTHS[0]])
    fig, ax = plt.subplots(figsize=(7.5, 3.4))
    for name in names:
        errs = [max(rows[k][name], 1e-9) for k in LENGTHS]
        ax.loglog(LENGTHS, errs, "o-", ms=3, label=name)
    ax.axhline(2.0**-11, color="0.5", ls=":", lw=1)
    ax.text(LENGTHS[0], 2.0**-11 * 1.3, "float16 unit roundoff 2^-11", fontsize=8, color="0.4")
    ax.set(
        xlabel="terms in the dot product (K)",
        ylabel="relative error vs float64",
        title="A float16 dot product: where the sum is kept decides the error",
    )
    ax.legend(fontsize=8)
    lines = [f"{'K':>6}  " + "  ".join(f"{short:>22s}" for short in SHORT)]
    for k in LENGTHS:
        lines.append(f"{k:>6}  " + "  ".join(f"{rows[k][n]:22.1e}" for n in names))
    return [save(fig, out_dir / "fp16.png"), write_text(out_dir / "fp16.txt", "\n".join(lines))]
