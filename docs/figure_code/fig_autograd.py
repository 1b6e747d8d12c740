"""Tutorial 1: the graph that a small forward pass records, drawn from the real nodes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .common import save


def record_example() -> tuple[Any, dict[int, str]]:
    """The forward pass of tutorial 1; returns the loss and names for the leaves."""
    import minitorch_accel as mta

    x = mta.tensor([[1.0, 2.0], [3.0, 4.0]])
    w = mta.tensor([[0.5], [-1.0]], requires_grad=True)
    b = mta.tensor(0.1, requires_grad=True)
    y = (x @ w + b).tanh()
    loss = (y**2).mean()
    return loss, {id(x): "x", id(w): "w", id(b): "b"}


def walk(root: Any) -> tuple[dict[int, Any], list[tuple[int, int]]]:
    """Every node (Function or leaf Tensor) reachable from ``root`` and the edges input->node.

    Iterative, as the engine's own walk: deep graphs must not overflow the stack.
    """
    nodes: dict[int, Any] = {id(root._node): root._node}
    edges: list[tuple[int, int]] = []
    stack = [root._node]
    while stack:
        fn = stack.pop()
        for t in fn.inputs:
            if t is None:
                continue
            source = t._node if t._node is not None else t
            edges.append((id(source), id(fn)))
            if id(source) not in nodes:
                nodes[id(source)] = source
                if t._node is not None:
                    stack.append(t._node)
    return nodes, edges


def depths(nodes: dict[int, Any], edges: list[tuple[int, int]]) -> dict[int, int]:
    """Column of each node: the longest path from a leaf to it."""
    depth = {k: 0 for k in nodes}
    for _ in range(len(nodes)):  # relax; the graph is small and acyclic
        for src, dst in edges:
            depth[dst] = max(depth[dst], depth[src] + 1)
    return depth


def make_graph(out_dir: Path) -> list[Path]:
    """Draw the graph of ``loss = tanh(x @ w + b).pow(2).mean()``."""
    import matplotlib.pyplot as plt

    from minitorch_accel import Tensor

    loss, names = record_example()
    nodes, edges = walk(loss)
    depth = depths(nodes, edges)
    pos: dict[int, tuple[float, float]] = {}
    ops = [k for k in nodes if not isinstance(nodes[k], Tensor)]
    rows: dict[int, int] = {}
    for key in sorted(ops, key=lambda k: depth[k]):
        row = rows.get(depth[key], 0)
        rows[depth[key]] = row + 1
        pos[key] = (depth[key] * 1.9, -row * 1.3)
    below: dict[int, int] = {}
    for src, dst in edges:  # each leaf goes under the op that consumes it
        if src in pos:
            continue
        slot = below.get(dst, 0)
        below[dst] = slot + 1
        x, y = pos[dst]
        pos[src] = (x - 0.95 + 0.95 * slot, y - 1.25)
    fig, ax = plt.subplots(figsize=(10, 2.4))
    for src, dst in edges:
        (x0, y0), (x1, y1) = pos[src], pos[dst]
        same_row = y0 == y1
        start = (x0 + 0.55, y0) if same_row else (x0, y0 + 0.3)
        end = (x1 - 0.55, y1) if same_row else (x1 + 0.25 * (x0 - x1), y1 - 0.3)
        ax.annotate("", xy=end, xytext=start, arrowprops={"arrowstyle": "->", "color": "0.35"})
    for key, node in nodes.items():
        if isinstance(node, Tensor):
            label = names.get(key, "const")
            label += f"\n{tuple(node.shape)}"
            face = "#cfe8cf" if node.requires_grad else "#e6e6e6"
        else:
            label = f"{type(node).__name__}\n(Function)"
            face = "#cddcf0"
        ax.text(
            *pos[key],
            label,
            ha="center",
            va="center",
            fontsize=9,
            bbox={"boxstyle": "round,pad=0.4", "facecolor": face, "edgecolor": "0.3"},
        )
    xs = [p[0] for p in pos.values()]
    ys = [p[1] for p in pos.values()]
    ax.text(max(xs) + 0.9, 0, f"loss\n{loss.item():.4f}", ha="left", va="center", fontsize=9)
    ax.annotate(
        "",
        xy=(max(xs) + 0.85, 0),
        xytext=(max(xs) + 0.55, 0),
        arrowprops={"arrowstyle": "->", "color": "0.35"},
    )
    ax.text(
        min(xs),
        min(ys) - 0.9,
        "forward: left to right.  backward(): the same edges, right to left, in reverse "
        "topological order.  green = requires_grad leaf, grey = constant",
        fontsize=8,
        color="0.25",
    )
    ax.set_xlim(min(xs) - 0.8, max(xs) + 1.7)
    ax.set_ylim(min(ys) - 1.2, max(ys) + 0.6)
    ax.axis("off")
    return [save(fig, out_dir / "autograd_graph.png")]
