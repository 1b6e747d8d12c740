"""A weight-stationary systolic array, as in a TPU's matrix unit, simulated cycle by cycle.

The array is a ``size x size`` grid of processing elements (PEs). Each PE holds one weight
and, every cycle, does one multiply-accumulate::

    a_out   = a_in                       (the activation moves one PE to the right)
    sum_out = sum_in + a_in * weight     (the partial sum moves one PE down)

To compute ``C = A @ B`` (``A`` is ``m x k``, ``B`` is ``k x n``), a ``size x size`` tile
of ``B`` is loaded into the grid (PE ``(i, j)`` holds ``B[i, j]``: rows of the grid run
along ``k``, columns along ``n``), then the rows of ``A`` stream in from the left edge,
skewed by one cycle per grid row, so that ``A[r, i]`` reaches PE ``(i, j)`` at cycle
``r + i + j``, exactly when the partial sum of output row ``r`` arrives from above. Output
``C[r, j]`` leaves the bottom of column ``j`` at cycle ``r + (size - 1) + j``. The data
moves as a diagonal wavefront; no PE ever reads memory, which is what makes the array
cheap in power and area.

A matrix larger than the grid is cut into tiles of ``B`` (over ``k`` and over ``n``), each
padded with zeros to ``size x size``; partial results of the ``k`` tiles are added in
accumulators below the array. One tile costs (the closed form of :func:`cycle_count`)::

    size            cycles to shift the weights in, one grid row per cycle
    + m + 2*size - 2  cycles to stream m rows through: fill, steady state, drain

and a matrix ``ceil(k / size) * ceil(n / size)`` tiles. The utilisation, useful
multiply-accumulates ``m*k*n`` over the ``size**2`` PEs times the cycles, is high only
when ``m`` (the batch) is large against ``3 * size`` and ``k`` and ``n`` are multiples
of ``size``: why a TPU wants big batches and dimensions in multiples of 128.

This simulator does one tile after another; real arrays also load the next tile's
weights while the current one streams (double buffering), hiding the ``size`` cycles.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

IDLE = -1  # in a wavefront trace: the PE holds no row of A this cycle


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def cycle_count(m: int, k: int, n: int, size: int) -> int:
    """Cycles the simulated array takes for an ``(m, k) @ (k, n)`` product.

    ``ceil(k/size) * ceil(n/size)`` tiles, each ``size`` cycles of weight loading and
    ``m + 2*size - 2`` of streaming (see the module docstring).

    Examples
    --------
    >>> cycle_count(m=256, k=128, n=128, size=128)
    638
    """
    for name, value in (("m", m), ("k", k), ("n", n), ("size", size)):
        if value < 1:
            raise ValueError(f"cycle_count: {name} must be at least 1, got {value}")
    tiles = _ceil_div(k, size) * _ceil_div(n, size)
    return tiles * (size + m + 2 * size - 2)


def utilisation(m: int, k: int, n: int, size: int) -> float:
    """Share of PE-cycles that do a useful multiply-accumulate: ``m*k*n / (size**2 * cycles)``.

    Examples
    --------
    >>> round(utilisation(m=4096, k=128, n=128, size=128), 3)
    0.915
    >>> round(utilisation(m=4096, k=130, n=128, size=128), 3)  # 2 rows past a multiple
    0.464
    """
    return m * k * n / (size * size * cycle_count(m, k, n, size))


@dataclass(frozen=True)
class SystolicResult:
    """What a run of the array produced.

    Attributes
    ----------
    output : ndarray
        ``A @ B``, shape ``(m, n)``.
    cycles : int
        Clock cycles, weight loading included.
    macs : int
        Useful multiply-accumulates, ``m * k * n`` (padding excluded).
    size : int
        The side of the PE grid.
    wavefront : list of ndarray
        When recorded, one ``size x size`` int array per streaming cycle of the first
        tile: the row of ``A`` each PE works on, or ``-1`` (idle).
    """

    output: NDArray[Any]
    cycles: int
    macs: int
    size: int
    wavefront: list[NDArray[np.int64]] = field(default_factory=list)

    @property
    def utilisation(self) -> float:
        """Useful multiply-accumulates over the PE-cycles the run took."""
        return self.macs / (self.size * self.size * self.cycles)


class SystolicArray:
    """A ``size x size`` weight-stationary array of multiply-accumulate PEs.

    Examples
    --------
    >>> import numpy as np
    >>> array = SystolicArray(2)
    >>> array.load_weights(np.array([[1, 2], [3, 4]]))
    2
    >>> out, cycles, _ = array.stream(np.array([[1, 1], [1, 0]]))
    >>> out, cycles
    (array([[4, 6],
           [1, 2]]), 4)
    """

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError(f"SystolicArray: size must be at least 1, got {size}")
        self.size = size
        self.weights: NDArray[Any] = np.zeros((size, size))

    def load_weights(self, tile: NDArray[Any]) -> int:
        """Shift a ``size x size`` tile of weights in, one grid row per cycle; return the cycles."""
        if tile.shape != (self.size, self.size):
            raise ValueError(
                f"load_weights: the tile must be {self.size}x{self.size} (pad it with zeros), "
                f"got shape {tile.shape}"
            )
        self.weights = np.zeros_like(tile)
        for cycle in range(self.size):  # every row moves down one PE, the next enters on top
            entering = tile[self.size - 1 - cycle]
            self.weights = np.concatenate([entering[None], self.weights[:-1]])
        return self.size

    def stream(
        self, a: NDArray[Any], record: bool = False
    ) -> tuple[NDArray[Any], int, list[NDArray[np.int64]]]:
        """Stream the rows of ``a`` (``m x size``) through; return ``a @ weights``, cycles, trace.

        Every cycle: activations move one PE right (grid row ``i`` takes ``a[t - i, i]``
        at its left edge), partial sums move one PE down, each PE adds ``a_in * weight``.
        """
        m, size = a.shape[0], self.size
        dtype = np.result_type(a, self.weights)
        acts = np.zeros((size, size), dtype)  # the activation each PE holds
        rows = np.full((size, size), IDLE, np.int64)  # which row of A it belongs to
        sums = np.zeros((size, size), dtype)  # the partial sum each PE passes down
        out = np.zeros((m, size), dtype)
        grid_rows = np.arange(size)
        trace = []
        cycles = m + 2 * size - 2
        for t in range(cycles):
            feed = t - grid_rows  # the row of A entering each grid row now
            valid = (feed >= 0) & (feed < m)
            acts = np.concatenate([np.zeros((size, 1), dtype), acts[:, :-1]], axis=1)
            rows = np.concatenate([np.full((size, 1), IDLE), rows[:, :-1]], axis=1)
            acts[valid, 0] = a[feed[valid], grid_rows[valid]]
            rows[:, 0] = np.where(valid, feed, IDLE)
            above = np.concatenate([np.zeros((1, size), dtype), sums[:-1]])
            sums = above + acts * self.weights
            done = t - (size - 1) - grid_rows  # the output row leaving each column now
            leaving = (done >= 0) & (done < m)
            out[done[leaving], grid_rows[leaving]] = sums[-1, leaving]
            if record:
                trace.append(rows.copy())
        return out, cycles, trace


def systolic_matmul(
    a: NDArray[Any], b: NDArray[Any], size: int = 8, record: bool = False
) -> SystolicResult:
    """``a @ b`` on a simulated ``size x size`` array, tile by tile, with its cycle count.

    Parameters
    ----------
    a, b : ndarray
        2-D, shapes ``(m, k)`` and ``(k, n)``.
    size : int
        The side of the PE grid (a TPU v4 core's is 128).
    record : bool
        Keep the wavefront of the first tile (see :class:`SystolicResult`).

    Examples
    --------
    >>> import numpy as np
    >>> a, b = np.ones((10, 3)), np.ones((3, 5))
    >>> run = systolic_matmul(a, b, size=4)
    >>> bool((run.output == a @ b).all()), run.cycles, round(run.utilisation, 3)
    (True, 40, 0.234)
    """
    a, b = np.asarray(a), np.asarray(b)
    if a.ndim != 2 or b.ndim != 2:
        raise ValueError(
            f"systolic_matmul: a and b must be 2-D, got shapes {a.shape} and {b.shape}"
        )
    if a.shape[1] != b.shape[0]:
        raise ValueError(
            f"systolic_matmul: inner dimensions differ, a is {a.shape} and b is {b.shape}"
        )
    if min(a.shape + b.shape) < 1:
        raise ValueError(f"systolic_matmul: empty operand, shapes {a.shape} and {b.shape}")
    (m, k), n = a.shape, b.shape[1]
    array = SystolicArray(size)
    out = np.zeros((m, n), np.result_type(a, b))
    cycles = 0
    wavefront: list[NDArray[np.int64]] = []
    for k0 in range(0, k, size):
        for n0 in range(0, n, size):
            tile = np.zeros((size, size), b.dtype)
            block = b[k0 : k0 + size, n0 : n0 + size]
            tile[: block.shape[0], : block.shape[1]] = block
            a_tile = np.zeros((m, size), a.dtype)
            a_tile[:, : block.shape[0]] = a[:, k0 : k0 + size]
            cycles += array.load_weights(tile)
            part, streamed, trace = array.stream(a_tile, record=record and not wavefront)
            cycles += streamed
            wavefront = wavefront or trace
            out[:, n0 : n0 + size] += part[:, : block.shape[1]]  # the accumulators
    return SystolicResult(out, cycles, m * k * n, size, wavefront)
