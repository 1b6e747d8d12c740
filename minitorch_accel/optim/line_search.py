"""The strong-Wolfe line search of :class:`~minitorch_accel.optim.LBFGS`.

Ported from PyTorch's ``torch/optim/lbfgs.py`` (itself from Lua Torch's ``lswolfe.lua``
and ``polyinterp.lua``), step for step, so that L-BFGS takes the same steps: first
*bracket* an interval of step lengths holding a point that satisfies the strong Wolfe
conditions, then *zoom* into it by cubic interpolation.

Along a direction ``d`` from ``x`` with loss ``f`` and slope ``gtd = g . d < 0``, a
step ``t`` is accepted when::

    f(x + t d) <= f + c1 * t * gtd          (sufficient decrease, Armijo)
    |g(x + t d) . d| <= -c2 * gtd           (the slope has flattened enough)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

#: ``obj_func(x, t, d) -> (loss, flat gradient)`` at ``x + t * d``.
Objective = Callable[[Any, float, Any], tuple[float, Any]]


def cubic_interpolate(
    x1: float,
    f1: float,
    g1: float,
    x2: float,
    f2: float,
    g2: float,
    bounds: tuple[float, float] | None = None,
) -> float:
    """The minimiser of the cubic through ``(x1, f1)`` and ``(x2, f2)`` with slopes
    ``g1``, ``g2``, clamped to ``bounds`` (default: between ``x1`` and ``x2``); the
    middle of the bounds when the cubic has no minimum.

    Examples
    --------
    >>> cubic_interpolate(0.0, 1.0, -2.0, 2.0, 1.0, 2.0)  # (x - 1)**2: minimum at 1
    1.0
    """
    if bounds is not None:
        low, high = bounds
    else:
        low, high = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1**2 - g1 * g2
    if d2_square < 0:
        return (low + high) / 2.0
    d2 = math.sqrt(d2_square)
    if x1 <= x2:
        min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(min_pos, low), high)


def strong_wolfe(  # noqa: C901  (PyTorch's algorithm, kept whole to compare line by line)
    obj_func: Objective,
    x: Any,
    t: float,
    d: Any,
    f: float,
    g: Any,
    gtd: float,
    c1: float = 1e-4,
    c2: float = 0.9,
    tolerance_change: float = 1e-9,
    max_ls: int = 25,
) -> tuple[float, Any, float, int]:
    """Search a step length ``t`` along ``d`` satisfying the strong Wolfe conditions.

    Parameters
    ----------
    obj_func : callable
        ``obj_func(x, t, d)``: the loss and the flat gradient at ``x + t * d``.
    x : list of arrays
        The parameters at the start (``obj_func`` restores them after each evaluation).
    t : float
        The first step length tried.
    d : array
        The search direction (flat).
    f, g, gtd : float, array, float
        The loss, flat gradient and slope ``g . d`` at ``x``.
    c1, c2 : float
        The constants of the two conditions (module docstring).
    tolerance_change : float
        Stop zooming when the bracket is shorter than this (times ``max |d|``).
    max_ls : int
        The most evaluations of ``obj_func``.

    Returns
    -------
    (float, array, float, int)
        The loss and flat gradient at the step found, the step length, and how many
        times ``obj_func`` ran.
    """
    d_norm = float(abs(d).max())
    g = g.copy()
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = float(g_new.dot(d))

    # bracket an interval containing a point satisfying the Wolfe criteria
    t_prev, f_prev, g_prev, gtd_prev = 0.0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        # extrapolate: a longer step, by cubic interpolation within [1.01 t, 10 t]
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        tmp = t
        t = cubic_interpolate(
            t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(min_step, max_step)
        )
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new.copy(), gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = float(g_new.dot(d))
        ls_iter += 1

    if ls_iter == max_ls:  # reached the most evaluations while bracketing
        bracket, bracket_f, bracket_g = [0.0, t], [f, f_new], [g, g_new]

    # zoom: shrink the bracket until a point satisfies the criteria
    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = cubic_interpolate(
            bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1]
        )
        # too close to an end of the bracket twice in a row (or outside it): move 10%
        # of its length inside
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                if abs(t - max(bracket)) < abs(t - min(bracket)):
                    t = max(bracket) - eps
                else:
                    t = min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False

        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = float(g_new.dot(d))
        ls_iter += 1

        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            # not a sufficient decrease, or not lower than the lowest point: new high end
            bracket[high_pos], bracket_f[high_pos] = t, f_new
            bracket_g[high_pos], bracket_gtd[high_pos] = g_new.copy(), gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True  # the Wolfe conditions hold
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                # the old high end becomes the new low end
                bracket[high_pos], bracket_f[high_pos] = bracket[low_pos], bracket_f[low_pos]
                bracket_g[high_pos] = bracket_g[low_pos]
                bracket_gtd[high_pos] = bracket_gtd[low_pos]
            # the new point becomes the low end
            bracket[low_pos], bracket_f[low_pos] = t, f_new
            bracket_g[low_pos], bracket_gtd[low_pos] = g_new.copy(), gtd_new

    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals
