"""Recurrent layers (``nn.RNN``, ``nn.LSTM``, ``nn.GRU`` and their cells) and
``nn.utils.rnn`` (padded and packed sequences).

Against PyTorch where installed, with its weights copied in float64: outputs, final
states and the gradients of the input, the initial states and every parameter, for
every layer type, 1 and 2 layers, both directions, batch_first, unbatched and packed
uneven (unsorted) lengths. Without PyTorch: a NumPy LSTM step written here, float64
finite differences of first and second order, the shapes, the initialization and the
error messages."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pytest
from support.helpers import to_host

import minitorch_accel as mta
from minitorch_accel import nn
from minitorch_accel.core.tensor import Tensor
from minitorch_accel.nn.utils.rnn import (
    PackedSequence,
    invert_permutation,
    pack_padded_sequence,
    pack_sequence,
    pad_packed_sequence,
    pad_sequence,
    unpack_sequence,
    unpad_sequence,
)
from minitorch_accel.utils.gradcheck import gradcheck, gradgradcheck

F64 = np.float64
RTOL, ATOL = 1e-10, 1e-12

# (name, our class, constructor kwargs); torch's class has the same name
KINDS: list[tuple[str, str, dict[str, Any]]] = [
    ("RNN_tanh", "RNN", {}),
    ("RNN_relu", "RNN", {"nonlinearity": "relu"}),
    ("LSTM", "LSTM", {}),
    ("LSTM_proj", "LSTM", {"proj_size": 2}),
    ("GRU", "GRU", {}),
]


def _pair(torch: Any, cls: str, kwargs: dict[str, Any], seed: int = 0) -> tuple[Any, nn.Module]:
    """A PyTorch module in float64 and ours with its weights (checking the keys)."""
    torch.manual_seed(seed)
    theirs = getattr(torch.nn, cls)(**kwargs).double()
    ours = getattr(nn, cls)(**kwargs, dtype=mta.float64)
    state = {k: v.detach().numpy() for k, v in theirs.state_dict().items()}
    assert list(ours.state_dict()) == list(state)
    assert [tuple(p.shape) for p in ours.parameters()] == [
        tuple(p.shape) for p in theirs.parameters()
    ]
    ours.load_state_dict(state)
    return theirs, ours


def _as_tuple(states: Any) -> tuple[Any, ...]:
    return tuple(states) if isinstance(states, tuple) else (states,)


def _close(ours: Tensor | None, theirs: Any, what: str) -> None:
    assert ours is not None, f"{what}: no gradient"
    expected = theirs.detach().numpy()
    np.testing.assert_allclose(to_host(ours), expected, err_msg=what, rtol=RTOL, atol=ATOL)


def _states(rng: np.random.Generator, shapes: list[tuple[int, ...]]) -> list[np.ndarray]:
    return [rng.standard_normal(s) for s in shapes]


def _run_both(
    torch: Any,
    theirs: Any,
    ours: nn.Module,
    x: np.ndarray,
    h0: list[np.ndarray] | None,
    lstm: bool,
    pack: dict[str, Any] | None = None,
) -> None:
    """Run both on ``x`` (and ``h0``), backpropagate one random projection of every
    result, and compare results and gradients."""
    tx = torch.tensor(x, requires_grad=True)
    mx = mta.tensor(x, requires_grad=True)
    th = [torch.tensor(h, requires_grad=True) for h in h0] if h0 is not None else None
    mh = [mta.tensor(h, requires_grad=True) for h in h0] if h0 is not None else None

    def hx(states: list[Any] | None) -> Any:
        if states is None:
            return None
        return tuple(states) if lstm else states[0]

    if pack is None:
        t_out, t_fin = theirs(tx, hx(th))
        m_out, m_fin = ours(mx, hx(mh))
    else:
        tp = torch.nn.utils.rnn.pack_padded_sequence(tx, **pack)
        mp = pack_padded_sequence(mx, **pack)
        np.testing.assert_array_equal(mp.batch_sizes.numpy(), tp.batch_sizes.numpy())
        _close(mp.data, tp.data, "packed data")
        t_po, t_fin = theirs(tp, hx(th))
        m_po, m_fin = ours(mp, hx(mh))
        assert isinstance(m_po, PackedSequence)
        np.testing.assert_array_equal(m_po.batch_sizes.numpy(), t_po.batch_sizes.numpy())
        first = pack.get("batch_first", False)
        t_out, t_len = torch.nn.utils.rnn.pad_packed_sequence(t_po, batch_first=first)
        m_out, m_len = pad_packed_sequence(m_po, batch_first=first)
        np.testing.assert_array_equal(m_len.numpy(), t_len.numpy())
    _close(m_out, t_out, "output")
    t_fin, m_fin = _as_tuple(t_fin), _as_tuple(m_fin)
    assert len(t_fin) == len(m_fin) == (2 if lstm else 1)
    rng = np.random.default_rng(7)
    t_loss: Any = 0
    m_loss: Any = 0
    for k, (t, m) in enumerate(zip((t_out, *t_fin), (m_out, *m_fin), strict=True)):
        if k:
            _close(m, t, f"final state {k - 1}")
        w = rng.standard_normal(tuple(t.shape))
        t_loss = t_loss + (t * torch.tensor(w)).sum()
        m_loss = m_loss + (m * mta.tensor(w)).sum()
    t_loss.backward()
    m_loss.backward()
    _close(mx.grad, tx.grad, "input grad")
    for k, (t, m) in enumerate(zip(th or [], mh or [], strict=True)):
        _close(m.grad, t.grad, f"initial state {k} grad")
    for (name, tp_), (_, mp_) in zip(
        theirs.named_parameters(), ours.named_parameters(), strict=True
    ):
        _close(mp_.grad, tp_.grad, f"grad of {name}")


@pytest.mark.parametrize("kind,cls,extra", KINDS, ids=[k[0] for k in KINDS])
@pytest.mark.parametrize("layers", [1, 2])
@pytest.mark.parametrize("bidirectional", [False, True], ids=["uni", "bi"])
@pytest.mark.parametrize("batch_first", [False, True], ids=["LNH", "NLH"])
def test_layer_matches_torch(
    kind: str, cls: str, extra: dict[str, Any], layers: int, bidirectional: bool, batch_first: bool
) -> None:
    torch = pytest.importorskip("torch")
    kwargs = dict(
        input_size=3,
        hidden_size=4,
        num_layers=layers,
        bidirectional=bidirectional,
        batch_first=batch_first,
        **extra,
    )
    theirs, ours = _pair(torch, cls, kwargs)
    lstm = cls == "LSTM"
    rng = np.random.default_rng(layers * 4 + bidirectional * 2 + batch_first)
    length, batch, d = 5, 3, 2 if bidirectional else 1
    x = rng.standard_normal((batch, length, 3) if batch_first else (length, batch, 3))
    out_size = extra.get("proj_size", 4)
    shapes = [(d * layers, batch, out_size)] + ([(d * layers, batch, 4)] if lstm else [])
    _run_both(torch, theirs, ours, x, _states(rng, shapes), lstm)  # given states
    for p in (*theirs.parameters(), *ours.parameters()):
        p.grad = None
    _run_both(torch, theirs, ours, x, None, lstm)  # zeros
    # unbatched (L, H_in) with 2-d states
    for p in (*theirs.parameters(), *ours.parameters()):
        p.grad = None
    unbatched = [s[:, 0] for s in _states(rng, shapes)]
    _run_both(torch, theirs, ours, rng.standard_normal((length, 3)), unbatched, lstm)


@pytest.mark.parametrize("kind,cls,extra", KINDS, ids=[k[0] for k in KINDS])
@pytest.mark.parametrize("bidirectional", [False, True], ids=["uni", "bi"])
@pytest.mark.parametrize("sorted_", [False, True], ids=["unsorted", "sorted"])
def test_packed_matches_torch(
    kind: str, cls: str, extra: dict[str, Any], bidirectional: bool, sorted_: bool
) -> None:
    torch = pytest.importorskip("torch")
    kwargs = dict(input_size=3, hidden_size=4, num_layers=2, bidirectional=bidirectional, **extra)
    batch_first = not sorted_
    theirs, ours = _pair(torch, cls, {**kwargs, "batch_first": batch_first}, seed=1)
    lstm = cls == "LSTM"
    rng = np.random.default_rng(3)
    lengths = [6, 4, 4, 2, 1] if sorted_ else [2, 6, 1, 4, 3]
    shape = (5, 6, 3) if batch_first else (6, 5, 3)
    x = rng.standard_normal(shape)
    d = 2 if bidirectional else 1
    shapes = [(2 * d, 5, extra.get("proj_size", 4))] + ([(2 * d, 5, 4)] if lstm else [])
    pack = {"lengths": lengths, "batch_first": batch_first, "enforce_sorted": sorted_}
    _run_both(torch, theirs, ours, x, _states(rng, shapes), lstm, pack)


CELLS = [
    ("RNNCell_tanh", "RNNCell", {}),
    ("RNNCell_relu", "RNNCell", {"nonlinearity": "relu"}),
    ("LSTMCell", "LSTMCell", {}),
    ("GRUCell", "GRUCell", {}),
    ("GRUCell_nobias", "GRUCell", {"bias": False}),
]


@pytest.mark.parametrize("kind,cls,extra", CELLS, ids=[c[0] for c in CELLS])
@pytest.mark.parametrize("batched", [True, False], ids=["batched", "unbatched"])
@pytest.mark.parametrize("given", [True, False], ids=["hx", "no_hx"])
def test_cell_matches_torch(
    kind: str, cls: str, extra: dict[str, Any], batched: bool, given: bool
) -> None:
    torch = pytest.importorskip("torch")
    theirs, ours = _pair(torch, cls, {"input_size": 3, "hidden_size": 4, **extra})
    if not extra.get("bias", True):
        assert ours.bias_ih is None and ours.bias_hh is None
    rng = np.random.default_rng(5)
    lead = (2,) if batched else ()
    x = rng.standard_normal((*lead, 3))
    count = 2 if cls == "LSTMCell" else 1
    tx, mx = torch.tensor(x, requires_grad=True), mta.tensor(x, requires_grad=True)
    hs = [rng.standard_normal((*lead, 4)) for _ in range(count)] if given else []
    th = [torch.tensor(h, requires_grad=True) for h in hs]
    mh = [mta.tensor(h, requires_grad=True) for h in hs]
    hx_t = (tuple(th) if count == 2 else th[0]) if given else None
    hx_m = (tuple(mh) if count == 2 else mh[0]) if given else None
    t_out, m_out = _as_tuple(theirs(tx, hx_t)), _as_tuple(ours(mx, hx_m))
    t_loss: Any = 0
    m_loss: Any = 0
    for t, m in zip(t_out, m_out, strict=True):
        _close(m, t, "cell output")
        w = rng.standard_normal(tuple(t.shape))
        t_loss = t_loss + (t * torch.tensor(w)).sum()
        m_loss = m_loss + (m * mta.tensor(w)).sum()
    t_loss.backward()
    m_loss.backward()
    _close(mx.grad, tx.grad, "input grad")
    for t, m in zip(th, mh, strict=True):
        _close(m.grad, t.grad, "hx grad")
    for (name, tp), (_, mp) in zip(theirs.named_parameters(), ours.named_parameters(), strict=True):
        _close(mp.grad, tp.grad, name)


NONFINITE = [-math.inf, -2.0, -0.0, 0.0, 0.5, 2.0, math.inf, math.nan]


def _same_bits(ours: np.ndarray, theirs: np.ndarray, what: str) -> None:
    assert np.array_equal(np.isnan(ours), np.isnan(theirs)), what
    assert np.array_equal(np.isposinf(ours), np.isposinf(theirs)), what
    assert np.array_equal(np.isneginf(ours), np.isneginf(theirs)), what
    finite = np.isfinite(theirs)
    np.testing.assert_allclose(ours[finite], theirs[finite], err_msg=what, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("cls", ["RNNCell", "LSTMCell", "GRUCell"])
@pytest.mark.parametrize("incoming", [1.0, math.inf], ids=["grad1", "grad_inf"])
def test_cell_nonfinite_inputs_match_torch(cls: str, incoming: float) -> None:
    torch = pytest.importorskip("torch")
    theirs, ours = _pair(torch, cls, {"input_size": 1, "hidden_size": 2})
    x = np.asarray(NONFINITE, dtype=F64)[:, None]  # one special value per batch row
    h = np.asarray(NONFINITE[::-1], dtype=F64)[:, None].repeat(2, 1)
    h[:, 1] = 0.25
    count = 2 if cls == "LSTMCell" else 1
    tx, mx = torch.tensor(x, requires_grad=True), mta.tensor(x, requires_grad=True)
    th = [torch.tensor(h, requires_grad=True) for _ in range(count)]
    mh = [mta.tensor(h, requires_grad=True) for _ in range(count)]
    t_out = _as_tuple(theirs(tx, tuple(th) if count == 2 else th[0]))
    m_out = _as_tuple(ours(mx, tuple(mh) if count == 2 else mh[0]))
    for t, m in zip(t_out, m_out, strict=True):
        _same_bits(to_host(m), t.detach().numpy(), "output")
    grad = np.full((8, 2), incoming)
    t_out[0].backward(torch.tensor(grad))
    m_out[0].backward(mta.tensor(grad))
    assert mx.grad is not None and tx.grad is not None
    _same_bits(to_host(mx.grad), tx.grad.numpy(), "input grad")
    for t, m in zip(th, mh, strict=True):
        assert m.grad is not None and t.grad is not None
        _same_bits(to_host(m.grad), t.grad.numpy(), "hx grad")


# ---------------------------------------------------------------- without torch


def _sigmoid(v: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-v))


def test_lstm_step_matches_numpy_reference(device: str) -> None:
    rng = np.random.default_rng(11)
    cell = nn.LSTMCell(3, 4, dtype=mta.float64, device=device)
    x, h, c = rng.standard_normal((2, 3)), rng.standard_normal((2, 4)), rng.standard_normal((2, 4))
    w_ih, w_hh = to_host(cell.weight_ih), to_host(cell.weight_hh)
    assert cell.bias_ih is not None and cell.bias_hh is not None
    b = to_host(cell.bias_ih) + to_host(cell.bias_hh)
    # the textbook step, one gate at a time (rows i, f, g, o of the stacked weights)
    gate = [
        x @ w_ih[k * 4 : (k + 1) * 4].T + h @ w_hh[k * 4 : (k + 1) * 4].T + b[k * 4 : (k + 1) * 4]
        for k in range(4)
    ]
    c_ref = _sigmoid(gate[1]) * c + _sigmoid(gate[0]) * np.tanh(gate[2])
    h_ref = _sigmoid(gate[3]) * np.tanh(c_ref)
    h_new, c_new = cell(
        mta.tensor(x, device=device), (mta.tensor(h, device=device), mta.tensor(c, device=device))
    )
    np.testing.assert_allclose(to_host(h_new), h_ref, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(to_host(c_new), c_ref, rtol=RTOL, atol=ATOL)
    # the layer over one step is the cell
    lstm = nn.LSTM(3, 4, dtype=mta.float64, device=device)
    lstm.load_state_dict({k + "_l0": v for k, v in cell.state_dict().items()})
    out, (h_n, c_n) = lstm(
        mta.tensor(x[None], device=device),
        (mta.tensor(h[None], device=device), mta.tensor(c[None], device=device)),
    )
    np.testing.assert_allclose(to_host(out[0]), h_ref, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(to_host(c_n[0]), c_ref, rtol=RTOL, atol=ATOL)
    assert out.device == h_n.device == cell.weight_ih.device


@pytest.mark.parametrize("cls", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cell_gradcheck_and_gradgradcheck(cls: str) -> None:
    rng = np.random.default_rng(2)
    cell = getattr(nn, cls)(2, 2, dtype=mta.float64)
    x = mta.tensor(rng.standard_normal((2, 2)), requires_grad=True)
    h = mta.tensor(rng.standard_normal((2, 2)), requires_grad=True)
    params = list(cell.parameters())

    def fn(x: Tensor, h: Tensor, *weights: Tensor) -> Tensor:
        out = _as_tuple(cell(x, (h, h * 0.5) if cls == "LSTMCell" else h))
        return mta.cat([o.reshape(-1) for o in out])

    assert gradcheck(fn, [x, h, *params])
    assert gradgradcheck(fn, [x, h, *params])


def test_packed_bidirectional_lstm_gradcheck() -> None:
    rng = np.random.default_rng(4)
    lstm = nn.LSTM(2, 2, num_layers=2, bidirectional=True, dtype=mta.float64)
    x = mta.tensor(rng.standard_normal((3, 3, 2)), requires_grad=True)
    h0 = mta.tensor(rng.standard_normal((4, 3, 2)), requires_grad=True)

    def fn(x: Tensor, h0: Tensor, w: Tensor) -> Tensor:
        packed = pack_padded_sequence(x, [2, 3, 1], enforce_sorted=False)
        out, (h_n, c_n) = lstm(packed, (h0, h0 * 0.5))
        return mta.cat([out.data.reshape(-1), h_n.reshape(-1), c_n.reshape(-1)])

    assert gradcheck(fn, [x, h0, lstm.weight_hh_l0_reverse])


def test_packed_final_state_is_each_sequences_own_last_step() -> None:
    rng = np.random.default_rng(8)
    gru = nn.GRU(3, 4, dtype=mta.float64)
    seqs = [mta.tensor(rng.standard_normal((n, 3))) for n in (2, 5, 3)]
    out, h_n = gru(pack_sequence(seqs, enforce_sorted=False))
    padded, lengths = pad_packed_sequence(out)
    assert lengths.tolist() == [2, 5, 3] and padded.shape == (5, 3, 4)
    for b, s in enumerate(seqs):  # each alone gives the same steps and final state
        alone, h_alone = gru(s)
        np.testing.assert_allclose(
            to_host(padded[: s.shape[0], b]), to_host(alone), rtol=RTOL, atol=ATOL
        )
        np.testing.assert_allclose(to_host(h_n[0, b]), to_host(h_alone[0]), rtol=RTOL, atol=ATOL)
        assert np.all(to_host(padded[s.shape[0] :, b]) == 0)


def test_init_is_uniform_from_the_framework_generator() -> None:
    mta.manual_seed(3)
    a = nn.GRU(5, 16, num_layers=2)
    mta.manual_seed(3)
    b = nn.GRU(5, 16, num_layers=2)
    bound = 1 / math.sqrt(16)
    for p, q in zip(a.parameters(), b.parameters(), strict=True):
        assert np.array_equal(to_host(p), to_host(q))
        assert np.abs(to_host(p)).max() <= bound
    every = np.concatenate([to_host(p).ravel() for p in a.parameters()])
    assert every.min() < -0.9 * bound and every.max() > 0.9 * bound
    assert len(a.all_weights) == 2 and a.all_weights[1][0] is a.weight_ih_l1


def test_state_dict_keys_match_torch() -> None:
    torch = pytest.importorskip("torch")
    cases: list[tuple[str, dict[str, Any]]] = [
        ("LSTM", {"num_layers": 2, "bidirectional": True, "proj_size": 2}),
        ("GRU", {"num_layers": 3, "bias": False}),
        ("RNN", {"bidirectional": True, "nonlinearity": "relu"}),
        ("LSTMCell", {"bias": False}),
        ("RNNCell", {}),
    ]
    for cls, kwargs in cases:
        theirs = getattr(torch.nn, cls)(4, 3, **kwargs)
        ours = getattr(nn, cls)(4, 3, **kwargs)
        assert list(ours.state_dict()) == list(theirs.state_dict()), cls
        assert repr(ours) == repr(theirs), cls
        for (n, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters(), strict=True):
            assert tuple(p.shape) == tuple(q.shape), n


def test_dropout_between_layers() -> None:
    x = mta.randn(6, 2, 3)
    rnn = nn.RNN(3, 8, num_layers=2, dropout=0.5)
    rnn.eval()
    first, _ = rnn(x)
    again, _ = rnn(x)
    assert np.array_equal(to_host(first), to_host(again))
    rnn.train()
    trained, _ = rnn(x)
    assert not np.allclose(to_host(trained), to_host(first))
    single = nn.RNN(3, 8, dropout=0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        single(x)
    with pytest.warns(UserWarning, match="num_layers greater than 1"):
        nn.LSTM(3, 8, dropout=0.2)


def test_packed_sequence_on_a_device(device: str) -> None:
    lstm = nn.LSTM(2, 3, bidirectional=True, device=device)
    seqs = [mta.randn(n, 2, device=device) for n in (1, 3, 2)]
    packed = pack_sequence(seqs, enforce_sorted=False)
    assert packed.batch_sizes.device == mta.device("cpu")
    assert packed.sorted_indices is not None and packed.sorted_indices.device == mta.device(device)
    out, (h_n, c_n) = lstm(packed)
    assert out.data.shape == (6, 6) and out.data.device == mta.device(device)
    assert h_n.shape == c_n.shape == (2, 3, 3)


# ---------------------------------------------------------------- nn.utils.rnn


def test_sequence_utils_match_torch() -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(9)
    arrays = [rng.standard_normal((n, 2)) for n in (3, 5, 1, 4)]
    ts, ms = [torch.tensor(a) for a in arrays], [mta.tensor(a) for a in arrays]
    tru = torch.nn.utils.rnn
    for first in (False, True):
        for side in ("right", "left"):
            expected = tru.pad_sequence(
                ts, batch_first=first, padding_value=-7.0, padding_side=side
            )
            found = pad_sequence(ms, batch_first=first, padding_value=-7.0, padding_side=side)
            np.testing.assert_array_equal(to_host(found), expected.numpy())
    tp, mp = tru.pack_sequence(ts, enforce_sorted=False), pack_sequence(ms, enforce_sorted=False)
    for t, m in zip(tp, mp, strict=True):
        np.testing.assert_array_equal(to_host(m), t.numpy())
    for total in (None, 7):
        t_pad, t_len = tru.pad_packed_sequence(tp, True, 2.5, total)
        m_pad, m_len = pad_packed_sequence(mp, True, 2.5, total)
        np.testing.assert_array_equal(to_host(m_pad), t_pad.numpy())
        np.testing.assert_array_equal(m_len.numpy(), t_len.numpy())
        assert m_len.dtype == np.int64
    for t, m in zip(tru.unpack_sequence(tp), unpack_sequence(mp), strict=True):
        np.testing.assert_array_equal(to_host(m), t.numpy())
    padded = pad_sequence(ms)
    for t, m in zip(
        tru.unpad_sequence(tru.pad_sequence(ts), torch.tensor([3, 5, 1, 4])),
        unpad_sequence(padded, [3, 5, 1, 4]),
        strict=True,
    ):
        np.testing.assert_array_equal(to_host(m), t.numpy())
    perm = mta.tensor([2, 0, 3, 1])
    assert invert_permutation(perm) is not None
    assert (
        invert_permutation(perm).tolist()
        == tru.invert_permutation(torch.tensor([2, 0, 3, 1])).tolist()
    )  # type: ignore[union-attr]


def test_packing_is_differentiable() -> None:
    rng = np.random.default_rng(6)
    x = mta.tensor(rng.standard_normal((4, 3, 2)), requires_grad=True)

    def fn(x: Tensor) -> Tensor:
        packed = pack_padded_sequence(x, [2, 4, 3], enforce_sorted=False)
        padded, _ = pad_packed_sequence(packed, batch_first=True, total_length=5)
        return padded * padded

    assert gradcheck(fn, [x])
    assert gradgradcheck(fn, [x])


# ---------------------------------------------------------------- errors


def test_layer_errors_name_the_shapes() -> None:
    lstm = nn.LSTM(3, 4, num_layers=2)
    with pytest.raises(
        RuntimeError, match=r"Expected 3, got 5 \(LSTM got input of shape \(6, 2, 5\)\)"
    ):
        lstm(mta.zeros(6, 2, 5))
    with pytest.raises(
        ValueError, match=r"LSTM: Expected input to be 2D or 3D, got 4D.*\(1, 6, 2, 3\)"
    ):
        lstm(mta.zeros(1, 6, 2, 3))
    with pytest.raises(RuntimeError, match=r"Expected hidden size \(2, 2, 4\), got \[1, 2, 4\]"):
        lstm(mta.zeros(6, 2, 3), (mta.zeros(1, 2, 4), mta.zeros(2, 2, 4)))
    with pytest.raises(
        RuntimeError, match=r"Expected hidden\[1\] size \(2, 2, 4\), got \[2, 3, 4\]"
    ):
        lstm(mta.zeros(6, 2, 3), (mta.zeros(2, 2, 4), mta.zeros(2, 3, 4)))
    with pytest.raises(RuntimeError, match="For unbatched 2-D input, hx should also be 2-D"):
        lstm(mta.zeros(6, 3), (mta.zeros(2, 1, 4), mta.zeros(2, 1, 4)))
    with pytest.raises(TypeError, match=r"hx must be a tuple \(h_0, c_0\)"):
        lstm(mta.zeros(6, 2, 3), mta.zeros(2, 2, 4))
    with pytest.raises(ValueError, match=r"input dtype \(float64\) does not match weight dtype"):
        nn.GRU(3, 4)(mta.zeros(6, 2, 3, dtype=mta.float64))
    with pytest.raises(RuntimeError, match=r"For batched 3-D input, hx should also be 3-D"):
        nn.GRU(3, 4)(mta.zeros(6, 2, 3), mta.zeros(2, 4))
    with pytest.raises(ValueError, match="Unknown nonlinearity 'gelu'"):
        nn.RNN(3, 4, nonlinearity="gelu")
    with pytest.raises(ValueError, match="proj_size has to be smaller than hidden_size"):
        nn.LSTM(3, 4, proj_size=4)
    with pytest.raises(ValueError, match=r"dropout should be a number in range \[0, 1\]"):
        nn.GRU(3, 4, dropout=1.5)
    with pytest.raises(ValueError, match="hidden_size must be greater than zero"):
        nn.GRU(3, 0)


def test_cell_errors_name_the_shapes() -> None:
    cell = nn.LSTMCell(3, 4)
    with pytest.raises(
        RuntimeError, match=r"inconsistent input_size: got 5 expected 3 \(input of shape \(2, 5\)\)"
    ):
        cell(mta.zeros(2, 5))
    with pytest.raises(ValueError, match="LSTMCell: Expected input to be 1D or 2D, got 3D"):
        cell(mta.zeros(1, 2, 3))
    with pytest.raises(
        RuntimeError,
        match=r"hx\[1\] of shape \(3, 4\) does not fit the input of shape \(2, 3\); "
        r"expected \(2, 4\)",
    ):
        cell(mta.zeros(2, 3), (mta.zeros(2, 4), mta.zeros(3, 4)))
    with pytest.raises(
        ValueError, match=r"Expected hidden to be 1D like the input of shape \(3,\), got 2D"
    ):
        nn.GRUCell(3, 4)(mta.zeros(3), mta.zeros(1, 4))


def test_packing_errors() -> None:
    x = mta.zeros(4, 3, 2)
    with pytest.raises(RuntimeError, match="must be sorted in decreasing order"):
        pack_padded_sequence(x, [2, 4, 3])
    with pytest.raises(
        RuntimeError,
        match=r"Expected `len\(lengths\)` to be equal to batch_size, but got 2 \(batch_size=3\)",
    ):
        pack_padded_sequence(x, [4, 3])
    with pytest.raises(RuntimeError, match="greater than 0"):
        pack_padded_sequence(x, [4, 3, 0])
    with pytest.raises(
        RuntimeError, match=r"a length 5 is longer than the 4 steps.*check batch_first"
    ):
        pack_padded_sequence(x, [5, 3, 1])
    packed = pack_padded_sequence(x, [4, 3, 1])
    with pytest.raises(ValueError, match="total_length=2 and max sequence length being 4"):
        pad_packed_sequence(packed, total_length=2)
    with pytest.raises(ValueError, match="padding_side"):
        pad_sequence([mta.zeros(2)], padding_side="middle")
    with pytest.raises(RuntimeError, match="same trailing dims"):
        pad_sequence([mta.zeros(2, 3), mta.zeros(2, 4)])
