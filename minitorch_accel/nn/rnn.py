"""Recurrent layers, as ``torch.nn``: :class:`RNN`, :class:`LSTM`, :class:`GRU` and their
one-step cells :class:`RNNCell`, :class:`LSTMCell`, :class:`GRUCell`.

A recurrent layer reads a sequence one step at a time and carries a state ``h`` (an
LSTM also a cell ``c``) from step to step. Each step is a few matrix multiplies and
elementwise gates, written below once (``_rnn_step``, ``_lstm_step``, ``_gru_step``) and
shared by the cells and the layers. Everything is composed of differentiable ops
(``linear``, ``sigmoid``, ``tanh``, ``chunk``, slicing, ``cat``), so gradients of every
order work and it runs on every backend. The input's part of every step's gates,
``x W_ih^T + b_ih``, is one matrix multiply for the whole sequence, done before the loop.

Parameter names, shapes, gate order, initialization (``U(-1/sqrt(hidden_size),
1/sqrt(hidden_size))`` for every parameter, drawn from the framework's generator) and
the order of ``state_dict`` are PyTorch's, so its weights load unchanged.

Differences from PyTorch: the dropout between layers draws its masks from this
framework's generator, so with ``dropout > 0`` in training the numbers differ from
PyTorch's (in evaluation mode they agree); there is no cuDNN, and
:meth:`RNNBase.flatten_parameters` does nothing.

Examples
--------
>>> import minitorch_accel as mta
>>> from minitorch_accel import nn
>>> lstm = nn.LSTM(input_size=3, hidden_size=5, num_layers=2, batch_first=True)
>>> output, (h_n, c_n) = lstm(mta.randn(4, 7, 3))  # (batch, time, features)
>>> output.shape, h_n.shape, c_n.shape
((4, 7, 5), (2, 4, 5), (2, 4, 5))
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from ..backends import DeviceLike
from ..core import factories
from ..core.convert import DTypeLike
from ..core.tensor import Tensor
from ..ops.shape import cat, stack
from ..ops.split import split
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter
from .utils.rnn import PackedSequence

State = tuple[Tensor, ...]  # (h,) or, for an LSTM, (h, c)


# ---------------------------------------------------------------- one step of each cell
# ``gates_x`` is the input's share of the gates, ``x @ W_ih.T + b_ih``, already computed.


def _rnn_step(
    gates_x: Tensor, state: State, w_hh: Tensor, b_hh: Tensor | None, relu: bool
) -> State:
    """``h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh)``, act = tanh or relu."""
    pre = gates_x + F.linear(state[0], w_hh, b_hh)
    return (F.relu(pre) if relu else F.tanh(pre),)


def _lstm_step(
    gates_x: Tensor, state: State, w_hh: Tensor, b_hh: Tensor | None, w_hr: Tensor | None
) -> State:
    """One LSTM step, gates in PyTorch's order i, f, g, o.

    ``c' = sigmoid(f) * c + sigmoid(i) * tanh(g)``, ``h' = sigmoid(o) * tanh(c')``, and
    with a projection ``h' = h' @ W_hr^T``.
    """
    h, c = state
    i, f, g, o = (gates_x + F.linear(h, w_hh, b_hh)).chunk(4, 1)
    c_next = F.sigmoid(f) * c + F.sigmoid(i) * F.tanh(g)
    h_next = F.sigmoid(o) * F.tanh(c_next)
    if w_hr is not None:
        h_next = F.linear(h_next, w_hr)
    return (h_next, c_next)


def _gru_step(gates_x: Tensor, state: State, w_hh: Tensor, b_hh: Tensor | None) -> State:
    """One GRU step, gates in PyTorch's order r, z, n.

    ``r = sigmoid(x_r + h_r)``, ``z = sigmoid(x_z + h_z)``, ``n = tanh(x_n + r * h_n)``
    (``h_n = W_hn h + b_hn``: the reset gate scales the hidden part with its bias, as
    PyTorch), ``h' = (1 - z) * n + z * h``.
    """
    h = state[0]
    x_r, x_z, x_n = gates_x.chunk(3, 1)
    h_r, h_z, h_n = F.linear(h, w_hh, b_hh).chunk(3, 1)
    r = F.sigmoid(x_r + h_r)
    z = F.sigmoid(x_z + h_z)
    n = F.tanh(x_n + r * h_n)
    return ((1 - z) * n + z * h,)


def _stepper(
    mode: str, w_hh: Tensor, b_hh: Tensor | None, w_hr: Tensor | None
) -> Callable[[Tensor, State], State]:
    """The step function of ``mode`` with its hidden-side weights bound."""
    if mode == "LSTM":
        return lambda gx, s: _lstm_step(gx, s, w_hh, b_hh, w_hr)
    if mode == "GRU":
        return lambda gx, s: _gru_step(gx, s, w_hh, b_hh)
    return lambda gx, s: _rnn_step(gx, s, w_hh, b_hh, mode == "RNN_RELU")


# ---------------------------------------------------------------- one direction of one layer


def _run_direction(
    step: Callable[[Tensor, State], State],
    gates_x: Tensor,
    batch_sizes: Sequence[int],
    state: State,
    reverse: bool,
) -> tuple[Tensor, State]:
    """Run ``step`` over a packed sequence; return the packed outputs and each
    sequence's final state.

    ``gates_x`` is ``(sum(batch_sizes), G)``: step ``t``'s rows are the first
    ``batch_sizes[t]`` sequences (longest first; a padded batch has them all equal).
    Forward, the batch shrinks as sequences end, and the rows that stop are kept as
    their final state; in reverse, each sequence starts from its initial state at its
    own last step, so the batch grows.
    """
    per_step = split(gates_x, list(batch_sizes), 0)
    outputs: list[Tensor | None] = [None] * len(batch_sizes)
    if not reverse:
        finished: list[State] = []  # rows that stopped, latest last
        current = state
        for t, size in enumerate(batch_sizes):
            if size < current[0].shape[0]:
                finished.append(tuple(s[size:] for s in current))
                current = tuple(s[:size] for s in current)
            current = step(per_step[t], current)
            outputs[t] = current[0]
        for rows in reversed(finished):
            current = tuple(cat([s, r], 0) for s, r in zip(current, rows, strict=True))
    else:
        last = batch_sizes[-1]
        current = tuple(s[:last] for s in state) if last < state[0].shape[0] else state
        for t in range(len(batch_sizes) - 1, -1, -1):
            size, have = batch_sizes[t], current[0].shape[0]
            if size > have:  # sequences that end at step t start here
                current = tuple(
                    cat([c, s[have:size]], 0) for c, s in zip(current, state, strict=True)
                )
            current = step(per_step[t], current)
            outputs[t] = current[0]
    return cat([o for o in outputs if o is not None], 0), current


# ---------------------------------------------------------------- the layers


class RNNBase(Module):
    """The common machinery of :class:`RNN`, :class:`LSTM` and :class:`GRU` (as PyTorch's
    ``nn.RNNBase``): parameters, checks, and the loop over layers and directions.

    ``mode`` is ``"RNN_TANH"``, ``"RNN_RELU"``, ``"LSTM"`` or ``"GRU"``; the other
    arguments are those of the subclasses.
    """

    def __init__(
        self,
        mode: str,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device: DeviceLike | None = None,
        dtype: DTypeLike = None,
    ) -> None:
        super().__init__()
        gates = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}
        if mode not in gates:
            raise ValueError("Unrecognized RNN mode: " + mode)
        _check_sizes(type(self).__name__, input_size, hidden_size, bias)
        _check_layer_args(num_layers, batch_first, dropout, proj_size, hidden_size)
        self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional = float(dropout), bidirectional
        self.proj_size = proj_size
        directions = 2 if bidirectional else 1
        real_hidden = proj_size if proj_size > 0 else hidden_size
        gate_size = gates[mode] * hidden_size
        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else real_hidden * directions
            shapes = {
                "weight_ih": (gate_size, layer_input),
                "weight_hh": (gate_size, real_hidden),
                **({"bias_ih": (gate_size,), "bias_hh": (gate_size,)} if bias else {}),
                **({"weight_hr": (proj_size, hidden_size)} if proj_size > 0 else {}),
            }
            for suffix in ("", "_reverse")[:directions]:
                names = [f"{stem}_l{layer}{suffix}" for stem in shapes]
                for name, shape in zip(names, shapes.values(), strict=True):
                    weight = factories.empty(*shape, device=device, dtype=dtype)
                    setattr(self, name, Parameter(weight))
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw every parameter from ``U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))``, in
        the order of :meth:`parameters` (as PyTorch).
        """
        stdv = 1.0 / math.sqrt(self.hidden_size)
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def flatten_parameters(self) -> None:
        """Does nothing: PyTorch packs the weights for cuDNN here; there is no cuDNN."""

    @property
    def all_weights(self) -> list[list[Parameter]]:
        """The parameters of each layer and direction, in PyTorch's order."""
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    # ------------------------------------------------------------ checks
    def _expected_state_shapes(self, batch: int) -> list[tuple[int, int, int]]:
        layers = self.num_layers * (2 if self.bidirectional else 1)
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        shapes = [(layers, batch, real_hidden)]
        if self.mode == "LSTM":
            shapes.append((layers, batch, self.hidden_size))
        return shapes

    def _check_input(self, data: Tensor, described: str) -> None:
        weight = getattr(self, self._flat_weights_names[0])
        if data.dtype != weight.dtype:
            raise ValueError(
                f"RNN input dtype ({data.dtype}) does not match weight dtype "
                f"({weight.dtype}). Convert input: input.to({weight.dtype}), or convert "
                f"model: model.to({data.dtype})"
            )
        if data.shape[-1] != self.input_size:
            raise RuntimeError(
                f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                f"got {data.shape[-1]} ({type(self).__name__} got {described})"
            )

    def _initial_state(self, hx: Any, batch: int, like: Tensor, unbatched: bool) -> State:
        """``hx`` as a tuple of ``(layers * directions, batch, size)`` tensors (zeros when
        None), its shapes checked.
        """
        shapes = self._expected_state_shapes(batch)
        if hx is None:
            return tuple(factories.zeros(*s, dtype=like.dtype, device=like.device) for s in shapes)
        if self.mode == "LSTM":
            given = tuple(hx) if isinstance(hx, (tuple, list)) else (hx,)
        else:
            given = (hx,)
        if len(given) != len(shapes) or not all(isinstance(h, Tensor) for h in given):
            what = "a tuple (h_0, c_0) of tensors" if self.mode == "LSTM" else "a Tensor h_0"
            raise TypeError(f"{type(self).__name__}: hx must be {what}, got {type(hx).__name__}")
        want = 2 if unbatched else 3
        if any(h.ndim != want for h in given):
            kind = "unbatched 2-D" if unbatched else "batched 3-D"
            dims = ", ".join(f"{h.ndim}-D" for h in given)
            raise RuntimeError(
                f"For {kind} input, hx should also be {want}-D but got ({dims}) tensors "
                f"of shapes {[tuple(h.shape) for h in given]}"
            )
        if unbatched:
            given = tuple(h.unsqueeze(1) for h in given)
        for k, (h, shape) in enumerate(zip(given, shapes, strict=True)):
            if tuple(h.shape) != shape:
                which = "hidden" if k == 0 else "hidden[1]"
                raise RuntimeError(
                    f"Expected {which} size {shape}, got {list(h.shape)} "
                    "(num_layers * num_directions, batch, hidden)"
                )
        return given

    # ------------------------------------------------------------ the computation
    def forward(self, input: Tensor | PackedSequence, hx: Any = None) -> tuple[Any, Any]:
        """Run the layer over a sequence.

        Parameters
        ----------
        input : Tensor or PackedSequence
            ``(L, N, H_in)`` (``(N, L, H_in)`` with ``batch_first``), unbatched
            ``(L, H_in)``, or a :class:`~minitorch_accel.nn.utils.rnn.PackedSequence`.
        hx : Tensor, or (Tensor, Tensor) for an LSTM, optional
            The initial state(s), ``(num_layers * num_directions, N, H_out)`` (without
            the ``N`` dim for unbatched input); zeros when omitted.

        Returns
        -------
        (output, h_n), or (output, (h_n, c_n)) for an LSTM
            ``output`` holds the last layer's ``h`` at every step, both directions
            concatenated: ``(L, N, D * H_out)`` (or a PackedSequence when the input is
            one); ``h_n`` (and ``c_n``) each layer's and direction's final state, for a
            packed input at each sequence's own last step.
        """
        name = type(self).__name__
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        if not isinstance(input, Tensor):
            raise TypeError(
                f"{name}: input must be a Tensor or a PackedSequence, got {type(input).__name__}"
            )
        if input.ndim not in (2, 3):
            raise ValueError(
                f"{name}: Expected input to be 2D or 3D, got {input.ndim}D instead (shape "
                f"{tuple(input.shape)}; expected (L, N, H_in), (N, L, H_in) with "
                "batch_first, or unbatched (L, H_in))"
            )
        unbatched = input.ndim == 2
        self._check_input(input, f"input of shape {tuple(input.shape)}")
        batch_dim = 0 if self.batch_first else 1
        x = input.unsqueeze(batch_dim) if unbatched else input
        if self.batch_first:
            x = x.transpose(0, 1)
        steps, batch = x.shape[0], x.shape[1]
        if steps == 0:
            raise ValueError(f"{name}: the input of shape {tuple(input.shape)} has no time step")
        state = self._initial_state(hx, batch, x, unbatched)
        output, final = self._run(x.reshape(steps * batch, -1), [batch] * steps, state)
        output = output.reshape(steps, batch, -1)
        if self.batch_first:
            output = output.transpose(0, 1)
        if unbatched:
            output = output.squeeze(batch_dim)
            final = tuple(s.squeeze(1) for s in final)
        return output, self._pack_state(final)

    def _forward_packed(self, input: PackedSequence, hx: Any) -> tuple[PackedSequence, Any]:
        """:meth:`forward` of a packed batch: the states are permuted into the sorted
        order of ``data`` and back.
        """
        data, sizes_tensor, sorted_indices, unsorted_indices = input
        batch_sizes = [int(b) for b in sizes_tensor.tolist()]
        if data.ndim != 2:
            raise RuntimeError(
                f"input must have 2 dimensions, got {data.ndim} ({type(self).__name__} got "
                f"packed data of shape {tuple(data.shape)})"
            )
        self._check_input(data, f"packed data of shape {tuple(data.shape)}")
        state = self._initial_state(hx, batch_sizes[0], data, False)
        if sorted_indices is not None:
            state = tuple(s.index_select(1, sorted_indices) for s in state)
        output, final = self._run(data, batch_sizes, state)
        if unsorted_indices is not None:
            final = tuple(s.index_select(1, unsorted_indices) for s in final)
        packed = PackedSequence(output, sizes_tensor, sorted_indices, unsorted_indices)
        return packed, self._pack_state(final)

    def _pack_state(self, final: State) -> Any:
        return final if self.mode == "LSTM" else final[0]

    def _run(self, data: Tensor, batch_sizes: Sequence[int], state: State) -> tuple[Tensor, State]:
        """Every layer and direction over packed ``data``; the last layer's output and
        the final states stacked as ``(layers * directions, batch, size)``.
        """
        directions = 2 if self.bidirectional else 1
        finals: list[State] = []
        layer_input = data
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                index = layer * directions + direction
                w_ih, w_hh, b_ih, b_hh, w_hr = self._weights(index)
                step = _stepper(self.mode, w_hh, b_hh, w_hr)
                gates_x = F.linear(layer_input, w_ih, b_ih)
                start = tuple(s[index] for s in state)
                out, last = _run_direction(step, gates_x, batch_sizes, start, direction == 1)
                outputs.append(out)
                finals.append(last)
            layer_input = outputs[0] if directions == 1 else cat(outputs, 1)
            if self.dropout > 0 and self.training and layer < self.num_layers - 1:
                layer_input = F.dropout(layer_input, self.dropout, True)
        stacked = tuple(stack([f[k] for f in finals], 0) for k in range(len(state)))
        return layer_input, stacked

    def _weights(self, index: int) -> tuple[Any, ...]:
        """``(w_ih, w_hh, b_ih, b_hh, w_hr)`` of one layer and direction (None if absent)."""
        names = self._all_weights[index]
        found = {name.split("_l")[0]: getattr(self, name) for name in names}
        return tuple(
            found.get(stem)
            for stem in ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr")
        )

    def extra_repr(self) -> str:
        """The settings shown inside this layer's ``repr`` (as PyTorch prints them)."""
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s


def _check_layer_args(
    num_layers: Any, batch_first: Any, dropout: Any, proj_size: int, hidden_size: int
) -> None:
    """PyTorch's checks of ``RNNBase``'s arguments, with its messages."""
    is_number = isinstance(dropout, numbers.Real) and not isinstance(dropout, bool)
    if not is_number or not 0 <= float(dropout) <= 1:
        raise ValueError(
            "dropout should be a number in range [0, 1] representing the probability "
            f"of an element being zeroed, got {dropout!r}"
        )
    if float(dropout) > 0 and num_layers == 1:
        warnings.warn(
            "dropout option adds dropout after all but last recurrent layer, so "
            "non-zero dropout expects num_layers greater than 1, but got "
            f"dropout={dropout} and num_layers={num_layers}",
            stacklevel=4,
        )
    if not isinstance(batch_first, bool):
        raise TypeError(f"batch_first should be of type bool, got: {type(batch_first).__name__}")
    if not isinstance(num_layers, int) or num_layers <= 0:
        raise ValueError(f"num_layers must be greater than zero, got {num_layers!r}")
    if proj_size < 0:
        raise ValueError("proj_size should be a positive integer or zero to disable projections")
    if proj_size >= hidden_size:
        raise ValueError(
            f"proj_size has to be smaller than hidden_size, got {proj_size} >= {hidden_size}"
        )


def _check_sizes(name: str, input_size: Any, hidden_size: Any, bias: Any) -> None:
    if not isinstance(bias, bool):
        raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
    for what, value in (("input_size", input_size), ("hidden_size", hidden_size)):
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"{what} should be of type int, got: {type(value).__name__}")
        if value <= 0:
            raise ValueError(f"{name}: {what} must be greater than zero, got {value}")


class RNN(RNNBase):
    r"""An Elman RNN: ``h_t = act(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)``, stacked
    ``num_layers`` deep, optionally in both directions.

    Parameters
    ----------
    input_size, hidden_size : int
        Features of ``x`` and of ``h``.
    num_layers : int
        Stacked layers; layer ``k > 0`` reads layer ``k - 1``'s output (default 1).
    nonlinearity : {"tanh", "relu"}
    bias : bool
        Use ``b_ih`` and ``b_hh`` (default True).
    batch_first : bool
        Input and output are ``(N, L, H)`` instead of ``(L, N, H)`` (not the states).
    dropout : float
        Dropout on each layer's output but the last, in training (default 0).
    bidirectional : bool
        Also run each layer from the end to the start; outputs are concatenated.
    device, dtype : optional
        Where the parameters live and their dtype.

    Attributes
    ----------
    weight_ih_l[k], weight_hh_l[k], bias_ih_l[k], bias_hh_l[k] : Parameter
        ``(hidden_size, input_size)`` for ``k = 0`` (else ``(hidden_size, D *
        hidden_size)``), ``(hidden_size, hidden_size)``, ``(hidden_size,)`` twice; the
        reverse direction's have the suffix ``_reverse``. All from ``U(-1/sqrt(hidden),
        1/sqrt(hidden))``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> rnn = nn.RNN(4, 6, num_layers=2, bidirectional=True)
    >>> output, h_n = rnn(mta.randn(5, 3, 4))
    >>> output.shape, h_n.shape
    ((5, 3, 12), (4, 3, 6))
    >>> [name for name, _ in rnn.named_parameters()][:4]
    ['weight_ih_l0', 'weight_hh_l0', 'bias_ih_l0', 'bias_hh_l0']
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        nonlinearity: str = "tanh",
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        device: DeviceLike | None = None,
        dtype: DTypeLike = None,
    ) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(
                f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'."
            )
        super().__init__(
            "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU",
            input_size, hidden_size, num_layers, bias, batch_first, dropout,
            bidirectional, 0, device, dtype,
        )  # fmt: skip
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    r"""Long short-term memory, stacked ``num_layers`` deep, optionally bidirectional.

    Each step, with gates in PyTorch's order ``i, f, g, o`` (rows of ``W_ih`` and
    ``W_hh``)::

        i, f, g, o = split(x W_ih^T + b_ih + h W_hh^T + b_hh, 4)
        c' = sigmoid(f) * c + sigmoid(i) * tanh(g)
        h' = sigmoid(o) * tanh(c')           (then h' W_hr^T when proj_size > 0)

    Parameters
    ----------
    input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional
        As :class:`RNN`.
    proj_size : int
        If positive, ``h`` is projected to this size by ``weight_hr_l[k]``
        ``(proj_size, hidden_size)``; ``h_0``/``h_n`` and the output then have
        ``proj_size`` features, ``c`` keeps ``hidden_size``.
    device, dtype : optional

    Attributes
    ----------
    weight_ih_l[k], weight_hh_l[k], bias_ih_l[k], bias_hh_l[k] : Parameter
        ``(4 * hidden_size, ...)``, as :class:`RNN`'s with four gates stacked.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> lstm = nn.LSTM(4, 6, proj_size=2)
    >>> output, (h_n, c_n) = lstm(mta.randn(5, 4))  # unbatched (L, H_in)
    >>> output.shape, h_n.shape, c_n.shape
    ((5, 2), (1, 2), (1, 6))
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device: DeviceLike | None = None,
        dtype: DTypeLike = None,
    ) -> None:
        super().__init__(
            "LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout,
            bidirectional, proj_size, device, dtype,
        )  # fmt: skip


class GRU(RNNBase):
    r"""Gated recurrent unit, stacked ``num_layers`` deep, optionally bidirectional.

    Each step, with gates in PyTorch's order ``r, z, n``::

        r = sigmoid(W_ir x + b_ir + W_hr h + b_hr)
        z = sigmoid(W_iz x + b_iz + W_hz h + b_hz)
        n = tanh(W_in x + b_in + r * (W_hn h + b_hn))
        h' = (1 - z) * n + z * h

    Parameters
    ----------
    input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional
        As :class:`RNN`.
    device, dtype : optional

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> gru = nn.GRU(4, 6, batch_first=True)
    >>> output, h_n = gru(mta.randn(3, 5, 4), mta.zeros(1, 3, 6))
    >>> output.shape, h_n.shape
    ((3, 5, 6), (1, 3, 6))
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        device: DeviceLike | None = None,
        dtype: DTypeLike = None,
    ) -> None:
        super().__init__(
            "GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout,
            bidirectional, 0, device, dtype,
        )  # fmt: skip


# ---------------------------------------------------------------- the cells


class RNNCellBase(Module):
    """The parameters and checks shared by the cells (as PyTorch's ``nn.RNNCellBase``):
    ``weight_ih`` ``(chunks * hidden_size, input_size)``, ``weight_hh`` ``(chunks *
    hidden_size, hidden_size)``, ``bias_ih`` and ``bias_hh`` ``(chunks * hidden_size,)``
    (None without ``bias``), all from ``U(-1/sqrt(hidden), 1/sqrt(hidden))``.
    """

    weight_ih: Parameter
    weight_hh: Parameter
    bias_ih: Parameter | None
    bias_hh: Parameter | None

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool,
        num_chunks: int,
        device: DeviceLike | None = None,
        dtype: DTypeLike = None,
    ) -> None:
        super().__init__()
        _check_sizes(type(self).__name__, input_size, hidden_size, bias)
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        rows = num_chunks * hidden_size
        self.weight_ih = Parameter(factories.empty(rows, input_size, device=device, dtype=dtype))
        self.weight_hh = Parameter(factories.empty(rows, hidden_size, device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(factories.empty(rows, device=device, dtype=dtype))
            self.bias_hh = Parameter(factories.empty(rows, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw every parameter from ``U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))``."""
        stdv = 1.0 / math.sqrt(self.hidden_size)
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _prepare(
        self, input: Tensor, hx: Sequence[Tensor] | None, count: int
    ) -> tuple[Tensor, State, bool]:
        """``input`` as ``(N, H_in)``, the states as ``(N, hidden)`` (zeros if None),
        and whether the input was batched; every shape checked.
        """
        name = type(self).__name__
        if not isinstance(input, Tensor) or input.ndim not in (1, 2):
            got = f"{input.ndim}D" if isinstance(input, Tensor) else type(input).__name__
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {got} instead")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(
                f"{name}: input has inconsistent input_size: got {input.shape[-1]} expected "
                f"{self.input_size} (input of shape {tuple(input.shape)})"
            )
        if input.dtype != self.weight_ih.dtype:
            raise ValueError(
                f"{name}: input dtype ({input.dtype}) does not match weight dtype "
                f"({self.weight_ih.dtype}); convert one with .to(dtype=...)"
            )
        batched = input.ndim == 2
        x = input if batched else input.unsqueeze(0)
        if hx is None:
            zeros = factories.zeros(x.shape[0], self.hidden_size, dtype=x.dtype, device=x.device)
            return x, (zeros,) * count, batched
        for k, h in enumerate(hx):
            label = "hidden" if count == 1 else f"hx[{k}]"
            if h.ndim != input.ndim:
                raise ValueError(
                    f"{name}: Expected {label} to be {input.ndim}D like the input of shape "
                    f"{tuple(input.shape)}, got {h.ndim}D of shape {tuple(h.shape)}"
                )
            expected = (x.shape[0], self.hidden_size)
            if tuple(h.shape if batched else (1, *h.shape)) != expected:
                raise RuntimeError(
                    f"{name}: {label} of shape {tuple(h.shape)} does not fit the input of "
                    f"shape {tuple(input.shape)}; expected {expected if batched else expected[1:]}"
                )
        return x, tuple(h if batched else h.unsqueeze(0) for h in hx), batched

    def _gates_x(self, x: Tensor) -> Tensor:
        return F.linear(x, self.weight_ih, self.bias_ih)

    def extra_repr(self) -> str:
        """The settings shown inside this cell's ``repr`` (as PyTorch prints them)."""
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        nonlinearity = getattr(self, "nonlinearity", "tanh")
        if nonlinearity != "tanh":
            s += f", nonlinearity={nonlinearity}"
        return s


class RNNCell(RNNCellBase):
    """One step of :class:`RNN`: ``h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh)``.

    Parameters
    ----------
    input_size, hidden_size : int
    bias : bool
    nonlinearity : {"tanh", "relu"}
    device, dtype : optional

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> cell = nn.RNNCell(3, 4, nonlinearity="relu")
    >>> h = cell(mta.randn(2, 3))  # h starts at zeros
    >>> cell(mta.randn(2, 3), h).shape
    (2, 4)
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        nonlinearity: str = "tanh",
        device: DeviceLike | None = None,
        dtype: DTypeLike = None,
    ) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(
                f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'."
            )
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        """The next state ``(N, hidden_size)`` (or ``(hidden_size,)`` unbatched)."""
        x, state, batched = self._prepare(input, None if hx is None else (hx,), 1)
        (h,) = _rnn_step(
            self._gates_x(x), state, self.weight_hh, self.bias_hh, self.nonlinearity == "relu"
        )
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    """One step of :class:`LSTM` (gates i, f, g, o; no projection).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> cell = nn.LSTMCell(3, 4)
    >>> h, c = cell(mta.randn(3))  # unbatched; (h, c) start at zeros
    >>> h.shape, c.shape
    ((4,), (4,))
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        device: DeviceLike | None = None,
        dtype: DTypeLike = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(
        self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, Tensor]:
        """The next ``(h, c)``, each ``(N, hidden_size)`` (or ``(hidden_size,)``)."""
        if hx is not None and (not isinstance(hx, (tuple, list)) or len(hx) != 2):
            raise TypeError(f"LSTMCell: hx must be a tuple (h, c), got {type(hx).__name__}")
        x, state, batched = self._prepare(input, hx, 2)
        h, c = _lstm_step(self._gates_x(x), state, self.weight_hh, self.bias_hh, None)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One step of :class:`GRU` (gates r, z, n; ``n = tanh(W_in x + b_in + r * (W_hn h +
    b_hn))``).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> nn.GRUCell(3, 4)(mta.randn(2, 3), mta.zeros(2, 4)).shape
    (2, 4)
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        device: DeviceLike | None = None,
        dtype: DTypeLike = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        """The next state ``(N, hidden_size)`` (or ``(hidden_size,)`` unbatched)."""
        x, state, batched = self._prepare(input, None if hx is None else (hx,), 1)
        (h,) = _gru_step(self._gates_x(x), state, self.weight_hh, self.bias_hh)
        return h if batched else h.squeeze(0)


__all__ = ["GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell", "RNNCellBase"]
