"""L-BFGS: a quasi-Newton method that learns the curvature from its last steps.

Each iteration turns the gradient into a search direction by the *two-loop recursion*
over the last ``history_size`` pairs ``s = x_{k+1} - x_k`` (a step), ``y = g_{k+1} -
g_k`` (how the gradient changed), an approximation of the inverse Hessian times the
gradient that costs ``O(history_size * n)``; then steps along it, by ``lr`` or by a
strong-Wolfe line search (:mod:`~minitorch_accel.optim.line_search`).

Every parameter is handled as one flat vector, on raw arrays through ``xp``. One
``step(closure)`` runs up to ``max_iter`` iterations and calls ``closure`` (which
recomputes the loss and the gradients) once or more per iteration. The rule and its
stopping tests are PyTorch's ``torch.optim.LBFGS``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..core.grad_mode import no_grad
from ..core.tensor import Tensor
from ..core.versions import bump_version
from .line_search import strong_wolfe
from .optimizer import Optimizer, ParamsLike, check_non_negative

#: The state entries that hold a list of flat vectors.
_HISTORY = ("old_dirs", "old_stps")


def two_loop_direction(
    flat_grad: Any, old_dirs: list[Any], old_stps: list[Any], ro: list[float], h_diag: float
) -> tuple[Any, list[float]]:
    """The L-BFGS direction ``-H g`` by the two-loop recursion (Nocedal and Wright,
    Algorithm 7.4), with ``H0 = h_diag * I``; ``old_dirs`` are the ``y``, ``old_stps``
    the ``s`` and ``ro`` the ``1 / (y . s)``, oldest first.

    Returns the direction and the coefficients ``al`` of the first loop.

    Examples
    --------
    >>> import numpy as np
    >>> y, s = np.array([2.0, 0.0]), np.array([1.0, 0.0])  # curvature 2 along x
    >>> d, al = two_loop_direction(np.array([4.0, 0.0]), [y], [s], [0.5], 0.5)
    >>> d
    array([-2.,  0.])
    """
    num_old = len(old_dirs)
    al: list[float] = [0.0] * num_old
    q = -flat_grad
    for i in range(num_old - 1, -1, -1):
        al[i] = float(old_stps[i].dot(q)) * ro[i]
        q += -al[i] * old_dirs[i]
    r = q * h_diag
    for i in range(num_old):
        be_i = float(old_dirs[i].dot(r)) * ro[i]
        r += (al[i] - be_i) * old_stps[i]
    return r, al


class LBFGS(Optimizer):
    """Limited-memory BFGS (Liu and Nocedal, 1989), as PyTorch implements it (heavily
    inspired by minFunc).

    Parameters
    ----------
    params : iterable of Tensor
        The tensors to optimize, all on one device; one parameter group only.
    lr : float, default 1
        The step length (the first guess of the line search, if one is used).
    max_iter : int, default 20
        The most iterations per :meth:`step`.
    max_eval : int, optional
        The most calls of the closure per :meth:`step` (default ``max_iter * 5 // 4``).
    tolerance_grad : float, default 1e-7
        Stop when the largest gradient entry is at most this.
    tolerance_change : float, default 1e-9
        Stop when the loss or the parameters change less than this.
    history_size : int, default 100
        How many ``(s, y)`` pairs to remember.
    line_search_fn : {None, "strong_wolfe"}
        None steps by ``lr``; ``"strong_wolfe"`` searches the step length.

    Notes
    -----
    The scalars of the recursion (``ro``, ``H_diag``, ``t``...) are Python floats here,
    0-d tensors of the parameters' dtype in PyTorch: in float64 the steps are the same,
    in float32 they may differ in the last bits. An unknown ``line_search_fn`` is
    refused here when the optimizer is built (PyTorch refuses it at the first step).
    The state, as in PyTorch, is kept under the first parameter.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> w = mta.tensor([3.0, -1.0], requires_grad=True)
    >>> opt = LBFGS([w], line_search_fn="strong_wolfe")
    >>> def closure():
    ...     opt.zero_grad()
    ...     loss = ((w - 1.0) ** 2).sum()
    ...     loss.backward()
    ...     return loss
    >>> float(opt.step(closure))  # the loss before the step
    8.0
    >>> [round(v, 4) for v in w.tolist()]
    [1.0, 1.0]
    """

    def __init__(
        self,
        params: ParamsLike,
        lr: float = 1,
        max_iter: int = 20,
        max_eval: int | None = None,
        tolerance_grad: float = 1e-7,
        tolerance_change: float = 1e-9,
        history_size: int = 100,
        line_search_fn: str | None = None,
    ) -> None:
        check_non_negative("learning rate", lr)
        if line_search_fn not in (None, "strong_wolfe"):
            raise ValueError(
                f"LBFGS line_search_fn must be None or 'strong_wolfe', got {line_search_fn!r}"
            )
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {
            "lr": lr,
            "max_iter": max_iter,
            "max_eval": max_eval,
            "tolerance_grad": tolerance_grad,
            "tolerance_change": tolerance_change,
            "history_size": history_size,
            "line_search_fn": line_search_fn,
        }
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params: list[Tensor] = self.param_groups[0]["params"]
        devices = {p.device for p in self._params}
        if len(devices) > 1:
            raise ValueError(
                f"LBFGS needs every parameter on one device, got {sorted(map(str, devices))}"
            )

    has_fast_step = False  # the step calls its closure many times

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One L-BFGS step: up to ``max_iter`` iterations, each calling ``closure``.

        Parameters
        ----------
        closure : callable
            Clears the gradients, recomputes the loss, calls ``backward()`` and
            returns the loss (it runs with gradients enabled).

        Returns
        -------
        The loss of the first call of ``closure`` (before this step moved anything).
        """
        if closure is None or not callable(closure):
            raise TypeError(
                "LBFGS.step needs a closure that clears the gradients, recomputes the loss, "
                "calls backward() and returns the loss: opt.step(closure)"
            )
        with no_grad(), self._params[0].device.guard():
            return self._iterate(closure)

    # ------------------------------------------------------------ the flat vector
    def _gather_flat_grad(self) -> Any:
        """Every parameter's gradient, raveled and concatenated (zeros where None)."""
        xp = self._params[0].xp
        views = []
        for p in self._params:
            if p.grad is None:
                views.append(xp.zeros(p.numel(), dtype=p.dtype))
            else:
                if p.grad.device is not p.device:
                    raise RuntimeError(
                        f"a parameter on {p.device} has its gradient on {p.grad.device}"
                    )
                views.append(p.grad.array.reshape(-1))
        return xp.concatenate(views)

    def _add_grad(self, step_size: float, update: Any) -> None:
        """``params += step_size * update`` (``update`` flat)."""
        offset = 0
        for p in self._params:
            n = p.numel()
            bump_version(p)
            p.array[...] += step_size * update[offset : offset + n].reshape(p.shape)
            offset += n

    def _clone_param(self) -> list[Any]:
        return [p.array.copy() for p in self._params]

    def _set_param(self, arrays: list[Any]) -> None:
        for p, array in zip(self._params, arrays, strict=True):
            bump_version(p)
            p.array[...] = array

    def _evaluate(self, closure: Callable[[], Any]) -> tuple[Any, float, Any]:
        """Call ``closure``: its loss as returned, as a float, and the flat gradient."""
        loss = self._run_closure(closure)
        return loss, float(loss), self._gather_flat_grad()

    def _directional_evaluate(
        self, closure: Callable[[], Any], x: list[Any], t: float, d: Any
    ) -> tuple[float, Any]:
        """The loss and flat gradient at ``x + t * d``; the parameters go back to ``x``."""
        self._add_grad(t, d)
        _, loss, flat_grad = self._evaluate(closure)
        self._set_param(x)
        return loss, flat_grad

    # ------------------------------------------------------------ the iterations
    def _iterate(self, closure: Callable[[], Any]) -> Any:  # noqa: C901  (PyTorch's loop, whole)
        group = self.param_groups[0]
        lr, max_iter, max_eval = float(group["lr"]), group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        history_size = group["history_size"]

        state = self.state.setdefault(self._params[0], {})
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss, loss, flat_grad = self._evaluate(closure)
        current_evals = 1
        state["func_evals"] += 1
        if float(abs(flat_grad).max()) <= tolerance_grad:  # already optimal
            return orig_loss

        d = _array(state.get("d"))
        t = state.get("t")
        old_dirs = [_array(v) for v in state.get("old_dirs", [])]
        old_stps = [_array(v) for v in state.get("old_stps", [])]
        ro = list(state.get("ro", []))
        h_diag = state.get("H_diag", 1.0)
        prev_flat_grad = _array(state.get("prev_flat_grad"))
        prev_loss = state.get("prev_loss")

        n_iter, opt_cond = 0, False
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1

            # the search direction
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro, h_diag = [], [], [], 1.0
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = float(y.dot(s))
                if ys > 1e-10:  # keep the pair only where the curvature is positive
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    h_diag = ys / float(y.dot(y))
                d, al = two_loop_direction(flat_grad, old_dirs, old_stps, ro, h_diag)
                state["al"] = al + [None] * (history_size - len(al))
            prev_flat_grad = flat_grad
            prev_loss = loss

            # the step length: a small first step, then lr
            first = state["n_iter"] == 1
            t = min(1.0, 1.0 / float(abs(flat_grad).sum())) * lr if first else lr
            gtd = float(flat_grad.dot(d))
            if gtd > -tolerance_change:  # not a descent direction any more
                break

            ls_func_evals = 0
            if group["line_search_fn"] == "strong_wolfe":
                x_init = self._clone_param()

                def obj_func(x: list[Any], step: float, direction: Any) -> tuple[float, Any]:
                    return self._directional_evaluate(closure, x, step, direction)

                loss, flat_grad, t, ls_func_evals = strong_wolfe(
                    obj_func, x_init, t, d, loss, flat_grad, gtd, max_ls=max_eval - current_evals
                )
                self._add_grad(t, d)
                opt_cond = float(abs(flat_grad).max()) <= tolerance_grad
            else:
                self._add_grad(t, d)
                if n_iter != max_iter:  # the last iteration's loss would go unused
                    _, loss, flat_grad = self._evaluate(closure)
                    opt_cond = float(abs(flat_grad).max()) <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            # stopping tests
            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if float(abs(d * t).max()) <= tolerance_change:  # the parameters hardly move
                break
            if abs(loss - prev_loss) < tolerance_change:  # the loss hardly changes
                break

        state["d"] = _state_tensor(d, self._params[0])
        state["t"] = t
        state["old_dirs"] = [_state_tensor(v, self._params[0]) for v in old_dirs]
        state["old_stps"] = [_state_tensor(v, self._params[0]) for v in old_stps]
        state["ro"] = ro
        state["H_diag"] = h_diag
        state["prev_flat_grad"] = _state_tensor(prev_flat_grad, self._params[0])
        state["prev_loss"] = prev_loss
        return orig_loss

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """Restore a :meth:`state_dict`; the history vectors are copied onto the
        parameters' device and dtype, like every state tensor.
        """
        super().load_state_dict(state_dict)
        for index, p in enumerate(self._params[:1]):
            state = self.state.get(p, {})
            for name in _HISTORY:
                if name in state:
                    state[name] = [self._restore_value(p, index, name, v) for v in state[name]]
            for name in ("ro", "al"):
                if name in state:
                    state[name] = list(state[name])


def _array(value: Any) -> Any:
    """The raw array of a state tensor (None stays None)."""
    return value.array if isinstance(value, Tensor) else value


def _state_tensor(array: Any, p: Tensor) -> Tensor | None:
    """``array`` as a state tensor on ``p``'s device (None stays None)."""
    if array is None:
        return None
    return Tensor._make(array, p.device, False, None)
