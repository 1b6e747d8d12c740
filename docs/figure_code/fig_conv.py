"""Tutorial 2: im2col drawn from the real cols matrix, and the GEMM share of conv time."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from .common import best_seconds, machine_line, save, write_text

COLORS = ["#e41a1c", "#377eb8", "#4daf4a", "#984ea3"]


def small_example() -> dict[str, Any]:
    """A 4x4 image, a 3x3 kernel, their cols matrix and the output, from the real kernels."""
    from minitorch_accel.backends import conv_kernels as ck

    x = np.random.default_rng(3).integers(0, 10, (1, 1, 4, 4)).astype(np.float32)
    w = np.array([[1, 0, -1], [2, 0, -2], [1, 0, -1]], dtype=np.float32).reshape(1, 1, 3, 3)
    geo = ck.conv_geometry(x.shape, w.shape, stride=1, padding=0, dilation=1, groups=1)
    cols = ck.im2col(np, x, geo).matrix[0]
    rows = cols if geo.channels_last else cols.T  # one receptive field per row
    y, _ = ck.conv2d_forward(np, x, w)
    gemm = rows @ ck.weight_matrix(np, w, 1)[0].T
    assert np.array_equal(gemm.reshape(2, 2), y[0, 0]), "cols @ W must equal conv2d's output"
    return {"x": x[0, 0], "w": w[0, 0], "rows": rows.copy(), "y": np.asarray(y[0, 0])}


def _grid(
    ax: Any,
    values: np.ndarray,
    x0: float,
    y0: float,
    fill: list[str] | None = None,
    fmt: str = "{:.0f}",
) -> None:
    """Draw ``values`` as a grid of numbered cells with its top-left corner at (x0, y0)."""
    from matplotlib.patches import Rectangle

    for (i, j), v in np.ndenumerate(values):
        face = fill[i] if fill is not None else "white"
        ax.add_patch(
            Rectangle(
                (x0 + j, y0 - i - 1),
                1,
                1,
                facecolor=face,
                alpha=0.25 if fill is not None else 1,
                edgecolor="0.5",
                lw=0.6,
            )
        )
        ax.text(x0 + j + 0.5, y0 - i - 0.5, fmt.format(v), ha="center", va="center", fontsize=8)


def make_im2col(out_dir: Path) -> list[Path]:
    """Image and windows | cols matrix | weights | output, all from one real run."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    ex = small_example()
    fig, ax = plt.subplots(figsize=(10, 3.3))
    _grid(ax, ex["x"], 0, 4)
    for k, (i, j) in enumerate([(0, 0), (0, 1), (1, 0), (1, 1)]):
        pad = 0.06 * (k + 1)
        ax.add_patch(
            Rectangle(
                (j + pad, 4 - i - 3 + pad),
                3 - 2 * pad,
                3 - 2 * pad,
                fill=False,
                edgecolor=COLORS[k],
                lw=2,
            )
        )
    ax.text(2, 4.4, "input x (1x1x4x4)\nfour 3x3 windows", ha="center", fontsize=9)
    _grid(ax, ex["rows"], 5.5, 4, fill=COLORS)
    ax.text(10, 4.4, "cols = im2col(x)\none window per row (4 x 9)", ha="center", fontsize=9)
    ax.text(15.1, 2, "@", ha="center", va="center", fontsize=16)
    _grid(ax, ex["w"].reshape(9, 1), 16, 4.5)
    ax.text(16.5, 4.9, "W (9 x 1)", ha="center", fontsize=9)
    ax.text(17.8, 2, "=", ha="center", va="center", fontsize=16)
    _grid(ax, ex["y"].reshape(4, 1), 18.5, 4, fill=COLORS)
    ax.text(19, 4.4, "y (4 x 1)", ha="center", fontsize=9)
    ax.text(20.2, 2, "->", ha="center", va="center", fontsize=12)
    _grid(ax, ex["y"], 21, 3)
    ax.text(22, 3.4, "reshape\n(2 x 2)", ha="center", fontsize=9)
    ax.set_xlim(-0.3, 23.3)
    ax.set_ylim(-5.2, 5.5)
    ax.set_aspect("equal")
    ax.axis("off")
    return [save(fig, out_dir / "im2col.png")]


# the convolutions of the MNIST CNN (conv 1->32, pool, conv 32->64), batch 64
LAYERS = {"conv1": ((64, 1, 28, 28), (32, 1, 3, 3)), "conv2": ((64, 32, 13, 13), (64, 32, 3, 3))}


def layer_calls(
    x_shape: tuple[int, ...], w_shape: tuple[int, ...]
) -> dict[str, tuple[Callable[[], object], Callable[[], object]]]:
    """For each pass of one conv layer: (the whole kernel, its GEMM alone).

    "GEMM alone" multiplies the layer's own operands (the cols matrix, the weight matrix,
    the output gradient as rows) with the same shapes as the kernel does, so the
    difference is what the kernel spends around them: im2col copies, col2im adds, layout.
    """
    from minitorch_accel.backends import conv_kernels as ck

    rng = np.random.default_rng(0)
    x = rng.standard_normal(x_shape, dtype=np.float32)
    w = rng.standard_normal(w_shape, dtype=np.float32)
    geo = ck.conv_geometry(x_shape, w_shape, 1, 0, 1, 1)
    y, cols = ck.conv2d_forward(np, x, w)
    gy = np.empty_like(y)  # channels-last in memory, as the gradient that reaches a conv is
    gy[...] = rng.standard_normal(y.shape, dtype=np.float32)
    rows_mk = cols.matrix[0] if geo.channels_last else cols.matrix[0].T  # (M, K), a view
    w_ok = ck.weight_matrix(np, w, 1)[0]
    gy_mo = ck.grad_rows(np, gy, geo).copy()
    m, k, o = geo.rows, w_ok.shape[1], w_shape[0]
    out_mo, out_ok, out_mk = (
        np.empty((m, o), np.float32),
        np.empty((o, k), np.float32),
        np.empty((m, k), np.float32),
    )
    calls: dict[str, tuple[Callable[[], object], Callable[[], object]]] = {
        "forward": (
            lambda: ck.conv2d_forward(np, x, w),
            lambda: np.matmul(rows_mk, w_ok.T, out=out_mo),
        ),
        "grad weight": (
            lambda: ck.conv2d_grad_weight(np, gy, cols, w_shape),
            lambda: np.matmul(gy_mo.T, rows_mk, out=out_ok),
        ),
        "grad input": (
            lambda: ck.conv2d_grad_input(np, gy, w, x_shape),
            lambda: np.matmul(gy_mo, w_ok, out=out_mk),
        ),
    }
    if x_shape[1] == 1:  # the first layer: the images need no gradient, training skips it
        del calls["grad input"]
    return calls


def best_of_interleaved(calls: dict[str, Callable[[], object]], repeats: int) -> dict[str, float]:
    """Shortest time of each call, measured round-robin so that load changes hit all alike."""
    best = {name: float("inf") for name in calls}
    for fn in calls.values():  # warm-up: first allocations, the buffer cache
        fn()
    for _ in range(repeats):
        for name, fn in calls.items():
            best[name] = min(best[name], best_seconds(fn, 1, warmup=0))
    return best


def make_conv_split(out_dir: Path, repeats: int = 30) -> list[Path]:
    """Stacked bars: GEMM vs the rest, per conv layer and pass; the numbers as text."""
    import matplotlib.pyplot as plt

    labels, gemm_ms, rest_ms = [], [], []
    lines = [machine_line(), "", "stage                 total ms   GEMM ms   rest ms   GEMM share"]
    calls: dict[str, Callable[[], object]] = {}
    for layer, (x_shape, w_shape) in LAYERS.items():
        for stage, (whole, gemm_only) in layer_calls(x_shape, w_shape).items():
            calls[f"{layer} {stage}"] = whole
            calls[f"{layer} {stage} GEMM"] = gemm_only
    best = best_of_interleaved(calls, repeats)
    for layer in LAYERS:
        for stage in ("forward", "grad weight", "grad input"):
            if f"{layer} {stage}" not in best:
                continue
            total = best[f"{layer} {stage}"]
            gemm = min(best[f"{layer} {stage} GEMM"], total)
            labels.append(f"{layer} {stage}")
            gemm_ms.append(1e3 * gemm)
            rest_ms.append(1e3 * (total - gemm))
            lines.append(
                f"{labels[-1]:20s} {1e3 * total:9.2f} {1e3 * gemm:9.2f} "
                f"{1e3 * (total - gemm):9.2f} {gemm / total:10.0%}"
            )
    share = sum(gemm_ms) / (sum(gemm_ms) + sum(rest_ms))
    lines.append(
        f"{'all':20s} {sum(gemm_ms) + sum(rest_ms):9.2f} {sum(gemm_ms):9.2f} "
        f"{sum(rest_ms):9.2f} {share:10.0%}"
    )
    fig, ax = plt.subplots(figsize=(8, 3.2))
    ypos = np.arange(len(labels))[::-1]
    ax.barh(ypos, gemm_ms, color="#377eb8", label="GEMM (matrix multiply)")
    ax.barh(
        ypos,
        rest_ms,
        left=gemm_ms,
        color="#ff7f00",
        label="the rest: im2col copies, col2im adds, layout",
    )
    ax.set_yticks(ypos, labels)
    ax.set_xlabel("milliseconds per call (best of 30, batch 64, float32, NumPy)")
    ax.legend(loc="upper right", fontsize=8)
    ax.set_title(f"Convolutions of the MNIST CNN: GEMM is {share:.0%} of their time", fontsize=10)
    return [
        save(fig, out_dir / "conv_split.png"),
        write_text(out_dir / "conv_split.txt", "\n".join(lines)),
    ]
