"""Activation layers, as ``torch.nn``: each applies the function of
:mod:`~minitorch_accel.nn.functional` of the same name.
"""

from __future__ import annotations

from ..backends import DeviceLike
from ..core import factories
from ..core.convert import DTypeLike
from ..core.tensor import Tensor
from . import functional as F
from . import init as nn_init
from .module import Module
from .parameter import Parameter


class Sigmoid(Module):
    """``1 / (1 + exp(-x))`` elementwise.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.Sigmoid()(mta.zeros(1)).item()
    0.5
    """

    def forward(self, input: Tensor) -> Tensor:
        """Apply :func:`~minitorch_accel.sigmoid`."""
        return F.sigmoid(input)


class Tanh(Module):
    """The hyperbolic tangent elementwise."""

    def forward(self, input: Tensor) -> Tensor:
        """Apply :func:`~minitorch_accel.tanh`."""
        return F.tanh(input)


class LeakyReLU(Module):
    """``x`` for ``x > 0``, else ``negative_slope * x``; ``inplace`` writes the result
    into the input.
    """

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input: Tensor) -> Tensor:
        """Apply :func:`~minitorch_accel.nn.functional.leaky_relu`."""
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        """The settings shown inside this layer's ``repr``."""
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class ELU(Module):
    """``x`` for ``x > 0``, else ``alpha * (exp(x) - 1)``; ``inplace`` writes the result
    into the input.
    """

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input: Tensor) -> Tensor:
        """Apply :func:`~minitorch_accel.nn.functional.elu`."""
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        """The settings shown inside this layer's ``repr``."""
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class RReLU(Module):
    """Randomized leaky ReLU: negative inputs times a slope drawn uniformly from
    ``[lower, upper)`` per element in training mode, ``(lower + upper) / 2`` in eval
    mode (:func:`~minitorch_accel.nn.functional.rrelu`); ``inplace`` writes the result
    into the input.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.RReLU(0.2, 0.4).eval()(mta.tensor([-1.0, 2.0]))
    tensor([-0.3,  2. ])
    """

    def __init__(
        self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False
    ) -> None:
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input: Tensor) -> Tensor:
        """Apply :func:`~minitorch_accel.nn.functional.rrelu`."""
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        """The settings shown inside this layer's ``repr``."""
        return f"lower={self.lower}, upper={self.upper}" + (
            ", inplace=True" if self.inplace else ""
        )


class GELU(Module):
    """``x * Phi(x)`` (``approximate="tanh"``: the tanh approximation)."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        """Apply :func:`~minitorch_accel.nn.functional.gelu`."""
        return F.gelu(input, self.approximate)

    def extra_repr(self) -> str:
        """The settings shown inside this layer's ``repr``."""
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """``x * sigmoid(x)``; ``inplace`` writes the result into the input."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        """Apply :func:`~minitorch_accel.nn.functional.silu`."""
        return F.silu(input, self.inplace)

    def extra_repr(self) -> str:
        """``inplace=True`` when set (as PyTorch prints it)."""
        return "inplace=True" if self.inplace else ""


class Softmax(Module):
    """``exp(x) / sum(exp(x))`` along ``dim``. Without ``dim`` (None, the default, as
    PyTorch's) the legacy choice applies, with PyTorch's warning: dim 0 for 0-, 1- and
    3-D input, dim 1 otherwise.
    """

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        """Apply :func:`~minitorch_accel.softmax`."""
        return F.softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        """The settings shown inside this layer's ``repr``."""
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    """``log(softmax(x))`` along ``dim``, computed stably."""

    def forward(self, input: Tensor) -> Tensor:
        """Apply :func:`~minitorch_accel.log_softmax`."""
        return F.log_softmax(input, self.dim, _stacklevel=5)


def _inplace_repr(inplace: bool, leading: str = "") -> str:
    """``leading`` followed by ``inplace=True`` when set, as PyTorch prints it."""
    if not inplace:
        return leading
    return f"{leading}, inplace=True" if leading else "inplace=True"


class Softplus(Module):
    """``log(1 + exp(beta * x)) / beta``, linear where ``beta * x > threshold``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.Softplus(beta=2.0)
    Softplus(beta=2.0, threshold=20.0)
    """

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input: Tensor) -> Tensor:
        """Apply :func:`~minitorch_accel.nn.functional.softplus`."""
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        """The settings shown inside this layer's ``repr``."""
        return f"beta={self.beta}, threshold={self.threshold}"


class Hardtanh(Module):
    """``x`` limited to ``[min_val, max_val]``; ``inplace`` writes the result into the input.

    Raises
    ------
    ValueError
        If ``max_val <= min_val`` (as PyTorch's assertion).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.Hardtanh(-2.0, 2.0)(mta.tensor([-3.0, 1.0])).tolist()
    [-2.0, 1.0]
    """

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        if not max_val > min_val:
            raise ValueError(
                f"Hardtanh: max_val ({max_val}) must be greater than min_val ({min_val})"
            )
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace

    def forward(self, input: Tensor) -> Tensor:
        """Apply :func:`~minitorch_accel.nn.functional.hardtanh`."""
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        """The settings shown inside this layer's ``repr``."""
        return _inplace_repr(self.inplace, f"min_val={self.min_val}, max_val={self.max_val}")


class ReLU6(Hardtanh):
    """``min(max(x, 0), 6)``; ``inplace`` writes the result into the input.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.ReLU6()(mta.tensor([-1.0, 7.0])).tolist()
    [0.0, 6.0]
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        """``inplace=True`` when set (as PyTorch prints it)."""
        return _inplace_repr(self.inplace)


class Hardsigmoid(Module):
    """``clip(x / 6 + 1/2, 0, 1)``; ``inplace`` writes the result into the input (PyTorch
    does not show it in the ``repr``, nor does this).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.Hardsigmoid()(mta.tensor([0.0])).item()
    0.5
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        """Apply :func:`~minitorch_accel.nn.functional.hardsigmoid`."""
        return F.hardsigmoid(input, self.inplace)


class Hardswish(Module):
    """``x * hardsigmoid(x)``; ``inplace`` writes the result into the input (not shown in
    the ``repr``, as PyTorch).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.Hardswish()(mta.tensor([4.0])).item()
    4.0
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        """Apply :func:`~minitorch_accel.nn.functional.hardswish`."""
        return F.hardswish(input, self.inplace)


class Mish(Module):
    """``x * tanh(softplus(x))``; ``inplace`` writes the result into the input.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.Mish(inplace=True)
    Mish(inplace=True)
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        """Apply :func:`~minitorch_accel.nn.functional.mish`."""
        return F.mish(input, self.inplace)

    def extra_repr(self) -> str:
        """``inplace=True`` when set (as PyTorch prints it)."""
        return _inplace_repr(self.inplace)


class LogSigmoid(Module):
    """``log(sigmoid(x))``, without overflow for large ``|x|``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.LogSigmoid()(mta.tensor([1000.0])).item()
    0.0
    """

    def forward(self, input: Tensor) -> Tensor:
        """Apply :func:`~minitorch_accel.nn.functional.logsigmoid`."""
        return F.logsigmoid(input)


class Softsign(Module):
    """``x / (1 + |x|)``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.Softsign()(mta.tensor([1.0])).item()
    0.5
    """

    def forward(self, input: Tensor) -> Tensor:
        """Apply :func:`~minitorch_accel.nn.functional.softsign`."""
        return F.softsign(input)


class Tanhshrink(Module):
    """``x - tanh(x)``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.Tanhshrink()(mta.tensor([0.0])).item()
    0.0
    """

    def forward(self, input: Tensor) -> Tensor:
        """Apply :func:`~minitorch_accel.nn.functional.tanhshrink`."""
        return F.tanhshrink(input)


class SELU(Module):
    """``scale * elu(x, alpha)`` with the self-normalizing constants; ``inplace`` writes
    the result into the input.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.SELU()(mta.tensor([0.0])).item()
    0.0
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        """Apply :func:`~minitorch_accel.nn.functional.selu`."""
        return F.selu(input, self.inplace)

    def extra_repr(self) -> str:
        """``inplace=True`` when set (as PyTorch prints it)."""
        return _inplace_repr(self.inplace)


class CELU(Module):
    """``x`` for ``x > 0``, else ``alpha * (exp(x / alpha) - 1)``; ``inplace`` writes the
    result into the input.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.CELU(2.0)
    CELU(alpha=2.0)
    """

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input: Tensor) -> Tensor:
        """Apply :func:`~minitorch_accel.nn.functional.celu`."""
        return F.celu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        """The settings shown inside this layer's ``repr``."""
        return _inplace_repr(self.inplace, f"alpha={self.alpha}")


class Threshold(Module):
    """``value`` where ``x <= threshold``, else ``x``; ``inplace`` writes the result into
    the input.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.Threshold(0.1, 20.0)(mta.tensor([0.0, 1.0])).tolist()
    [20.0, 1.0]
    """

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input: Tensor) -> Tensor:
        """Apply :func:`~minitorch_accel.nn.functional.threshold`."""
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        """The settings shown inside this layer's ``repr``."""
        return _inplace_repr(self.inplace, f"threshold={self.threshold}, value={self.value}")


class Hardshrink(Module):
    """0 where ``|x| <= lambd``, else ``x``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.Hardshrink(0.3)
    Hardshrink(0.3)
    """

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:
        """Apply :func:`~minitorch_accel.nn.functional.hardshrink`."""
        return F.hardshrink(input, self.lambd)

    def extra_repr(self) -> str:
        """``lambd``, as PyTorch prints it (without its name)."""
        return f"{self.lambd}"


class Softshrink(Hardshrink):
    """``x`` moved ``lambd`` towards 0, and 0 where ``|x| <= lambd``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.Softshrink()(mta.tensor([2.0])).item()
    1.5
    """

    def forward(self, input: Tensor) -> Tensor:
        """Apply :func:`~minitorch_accel.nn.functional.softshrink`."""
        return F.softshrink(input, self.lambd)


class Softmin(Module):
    """``softmax(-x)`` along ``dim``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.Softmin(dim=1)(mta.zeros(1, 2)).tolist()
    [[0.5, 0.5]]
    """

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        """Apply :func:`~minitorch_accel.nn.functional.softmin`."""
        return F.softmin(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        """The settings shown inside this layer's ``repr``."""
        return f"dim={self.dim}"


class PReLU(Module):
    """``x`` for ``x > 0``, else ``weight * x`` with a learned ``weight``: one slope for
    all channels (``num_parameters=1``) or one per channel (dim 1 of the input), each
    starting at ``init``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> layer = mta.nn.PReLU(3)
    >>> layer, layer.weight.shape
    (PReLU(num_parameters=3), (3,))
    """

    weight: Parameter

    def __init__(
        self,
        num_parameters: int = 1,
        init: float = 0.25,
        device: DeviceLike | None = None,
        dtype: DTypeLike = None,
    ) -> None:
        super().__init__()
        self.num_parameters, self.init = num_parameters, init
        self.weight = Parameter(factories.empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Set every slope to ``init``."""
        nn_init.constant_(self.weight, self.init)

    def forward(self, input: Tensor) -> Tensor:
        """Apply :func:`~minitorch_accel.nn.functional.prelu`."""
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        """The settings shown inside this layer's ``repr``."""
        return f"num_parameters={self.num_parameters}"
