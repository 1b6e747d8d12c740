"""``GradScaler``: loss scaling, so small float16 gradients do not underflow to zero."""

from __future__ import annotations

from typing import Any

from ..core.grad_mode import no_grad
from ..core.tensor import Tensor


class GradScaler:
    """Dynamic loss scaling with PyTorch's semantics.

    float16 flushes values below about 6e-8 to zero, and many gradients are that small.
    Multiplying the loss by ``scale`` multiplies every gradient by it too, lifting them
    into float16's range; :meth:`unscale_` divides them back (in float32) before the
    optimizer uses them. When a gradient overflows (inf or NaN) the step is skipped and
    the scale shrinks by ``backoff_factor``; after ``growth_interval`` clean steps in a
    row it grows by ``growth_factor``.

    Parameters
    ----------
    init_scale : float
    growth_factor : float
    backoff_factor : float
    growth_interval : int
    enabled : bool
        False turns every method into a pass-through.

    Examples
    --------
    ``scaler.scale(loss).backward(); scaler.step(optimizer); scaler.update()``; call
    ``scaler.unscale_(optimizer)`` before clipping gradients.
    """

    def __init__(
        self,
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        if growth_factor <= 1.0:
            raise ValueError(f"growth_factor must be > 1, got {growth_factor}")
        if not 0.0 < backoff_factor < 1.0:
            raise ValueError(f"backoff_factor must be in (0, 1), got {backoff_factor}")
        if growth_interval < 1:
            raise ValueError(f"growth_interval must be >= 1, got {growth_interval}")
        self.enabled = bool(enabled)
        self._scale = float(init_scale)
        self.growth_factor = float(growth_factor)
        self.backoff_factor = float(backoff_factor)
        self.growth_interval = int(growth_interval)
        self._growth_tracker = 0
        self._found_inf: dict[int, bool] = {}  # per optimizer, since the last update()

    def get_scale(self) -> float:
        """The current scale (1.0 when disabled)."""
        return self._scale if self.enabled else 1.0

    def scale(self, loss: Tensor) -> Tensor:
        """``loss * scale`` (the loss itself when disabled)."""
        if not self.enabled:
            return loss
        return loss * self._scale

    def unscale_(self, optimizer: Any) -> None:
        """Divide the gradients of ``optimizer``'s parameters by the scale, in float32,
        and note whether any is inf or NaN. At most once per optimizer per update().
        """
        if not self.enabled:
            return
        key = id(optimizer)
        if key in self._found_inf:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last update()"
            )
        finite: dict[Any, Any] = {}  # device -> "every gradient so far is finite", on it
        inverse = 1.0 / self._scale
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    with p.device.guard():
                        grad = p.grad.array * inverse  # new: gradients never change in place
                        ok = p.xp.isfinite(grad).all()
                        before = finite.get(p.device)
                        finite[p.device] = ok if before is None else before & ok
                        grad = grad.astype(p.dtype, copy=False)
                    p.grad = Tensor._make(grad, p.device, False, None)
        # one read back per device (a GPU waits for its queue once, not once per parameter)
        self._found_inf[key] = not all(bool(ok) for ok in finite.values())

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """Unscale (if not done yet) and take ``optimizer.step()`` unless a gradient was
        inf/NaN, in which case the step is skipped and None returned.
        """
        if not self.enabled:
            return optimizer.step(*args, **kwargs)
        if id(optimizer) not in self._found_inf:
            self.unscale_(optimizer)
        if self._found_inf[id(optimizer)]:
            return None
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale: float | None = None) -> None:
        """Adjust the scale after this iteration's steps: back off after an overflow,
        grow after ``growth_interval`` clean iterations.
        """
        if not self.enabled:
            return
        if new_scale is not None:
            self._scale = float(new_scale)
        else:
            if not self._found_inf:
                raise RuntimeError(
                    "update(): no inf checks were recorded; call step() (or unscale_()) first"
                )
            if any(self._found_inf.values()):
                self._scale *= self.backoff_factor
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self.growth_interval:
                    self._scale *= self.growth_factor
                    self._growth_tracker = 0
        self._found_inf.clear()

    def state_dict(self) -> dict[str, Any]:
        """Scale, factors, interval and the count of clean steps so far."""
        if not self.enabled:
            return {}
        return {
            "scale": self._scale,
            "growth_factor": self.growth_factor,
            "backoff_factor": self.backoff_factor,
            "growth_interval": self.growth_interval,
            "_growth_tracker": self._growth_tracker,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` returned."""
        missing = {
            "scale",
            "growth_factor",
            "backoff_factor",
            "growth_interval",
            "_growth_tracker",
        } - set(state)
        if missing:
            raise KeyError(f"GradScaler state is missing {sorted(missing)}")
        self._scale = float(state["scale"])
        self.growth_factor = float(state["growth_factor"])
        self.backoff_factor = float(state["backoff_factor"])
        self.growth_interval = int(state["growth_interval"])
        self._growth_tracker = int(state["_growth_tracker"])
