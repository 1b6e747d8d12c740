"""Attention and the Transformer: ``F.scaled_dot_product_attention``,
``nn.MultiheadAttention`` and ``nn.Transformer*``, against PyTorch and against NumPy.

- sdpa against a NumPy reference written here (batch dims, bool and float masks that
  broadcast, causal masks with L < S and L > S, scale, GQA, fully masked rows) on every
  device; gradcheck and gradgradcheck in float64 (no PyTorch needed); dropout's mask.
- sdpa against PyTorch's math path: values and the gradients of query, key, value and a
  float mask; non-finite inputs and incoming gradients of 1 and inf, bit pattern for bit
  pattern.
- MultiheadAttention and the Transformer layers with PyTorch's weights copied in, in
  float64 with dropout 0: outputs, attention weights, and the gradients of the inputs
  and of every parameter, across masks, layouts and options; ``state_dict`` keys both
  ways; initialization; errors.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from support.helpers import to_host

import minitorch_accel as mta
from minitorch_accel import nn
from minitorch_accel.core.tensor import Tensor
from minitorch_accel.nn import functional as F
from minitorch_accel.utils.gradcheck import gradcheck, gradgradcheck

INF, NAN = math.inf, math.nan
SPECIALS = [-INF, -2.0, -0.0, 0.0, 0.5, 2.0, INF, NAN]


def assert_close(actual: Any, expected: Any, err_msg: str = "") -> None:
    """Equal to float64 rounding (the two libraries sum in different orders)."""
    np.testing.assert_allclose(actual, expected, rtol=1e-10, atol=1e-12, err_msg=err_msg)


@pytest.fixture(scope="module")
def torch() -> Any:
    return pytest.importorskip("torch")


# --------------------------------------------------------------- NumPy reference
def sdpa_ref(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    mask: np.ndarray | None = None,
    is_causal: bool = False,
    scale: float | None = None,
) -> np.ndarray:
    """Attention written from the definition, one query at a time."""
    s = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    q_len, k_len = q.shape[-2], k.shape[-2]
    scores = np.einsum("...le,...se->...ls", q, k) * s
    if is_causal:
        mask = np.arange(k_len)[None, :] <= np.arange(q_len)[:, None]
    if mask is not None:
        bias = np.where(mask, 0.0, -np.inf) if mask.dtype == bool else mask
        scores = scores + bias
    lead = scores.shape[:-2]
    weights = np.zeros(scores.shape)
    for idx in np.ndindex(*lead, q_len):
        row = scores[idx]
        if np.all(row == -np.inf):
            continue  # a query that may attend to nothing: a row of 0
        e = np.exp(row - row.max())
        weights[idx] = e / e.sum()
    return np.einsum("...ls,...sd->...ld", weights, np.broadcast_to(v, (*lead, *v.shape[-2:])))


SDPA_CASES: list[tuple[str, tuple[int, ...], tuple[int, ...], dict[str, Any]]] = [
    ("plain_4d", (2, 3, 4, 5), (2, 3, 6, 5), {}),
    ("3d", (2, 4, 5), (2, 6, 5), {}),
    ("2d", (4, 5), (6, 5), {"scale": 0.3}),
    ("bool_mask_2d", (2, 3, 4, 5), (2, 3, 6, 5), {"mask": (4, 6)}),
    ("bool_mask_bcast", (2, 3, 4, 5), (2, 3, 6, 5), {"mask": (3, 1, 6)}),
    ("float_mask", (2, 3, 4, 5), (2, 3, 6, 5), {"mask": (2, 1, 4, 6), "float": True}),
    ("causal_short", (2, 4, 5), (2, 6, 5), {"is_causal": True}),
    ("causal_long", (2, 6, 5), (2, 3, 5), {"is_causal": True}),
    ("kv_bcast", (2, 3, 4, 5), (1, 1, 6, 5), {}),
]


@pytest.mark.parametrize("name,qshape,kshape,opts", SDPA_CASES, ids=[c[0] for c in SDPA_CASES])
def test_sdpa_against_numpy(
    name: str, qshape: tuple[int, ...], kshape: tuple[int, ...], opts: dict[str, Any], device: str
) -> None:
    rng = np.random.default_rng(0)
    q, k = rng.standard_normal(qshape), rng.standard_normal(kshape)
    v = rng.standard_normal((*kshape[:-1], 3))
    mask = None
    if "mask" in opts:
        mask = rng.random(opts["mask"]) > 0.4
        if opts.get("float"):
            mask = np.where(mask, rng.standard_normal(opts["mask"]), -np.inf)
    kwargs: dict[str, Any] = {"is_causal": opts.get("is_causal", False), "scale": opts.get("scale")}
    mta_mask = None if mask is None else mta.tensor(mask, device=device)
    mq, mk, mv = (mta.tensor(a, device=device) for a in (q, k, v))
    out = F.scaled_dot_product_attention(mq, mk, mv, attn_mask=mta_mask, **kwargs)
    assert out.device == mta.Device(device)
    assert_close(to_host(out), sdpa_ref(q, k, v, mask, **kwargs))


def test_sdpa_fully_masked_row_is_zero(device: str) -> None:
    """A query whose every key is masked gives 0 (PyTorch's CPU math path), and no NaN
    reaches any gradient."""
    rng = np.random.default_rng(1)
    q, k, v = (mta.tensor(rng.standard_normal(s), device=device, requires_grad=True)
               for s in ((3, 4), (5, 4), (5, 2)))  # fmt: skip
    mask = np.ones((3, 5), bool)
    mask[1] = False
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mta.tensor(mask, device=device))
    assert to_host(out)[1].tolist() == [0.0, 0.0]
    out.sum().backward()
    assert q.grad is not None and k.grad is not None and v.grad is not None
    assert to_host(q.grad)[1].tolist() == [0.0] * 4
    assert all(np.isfinite(to_host(g)).all() for g in (q.grad, k.grad, v.grad))


def test_sdpa_gqa_against_numpy() -> None:
    rng = np.random.default_rng(2)
    q, k, v = (rng.standard_normal(s) for s in ((2, 6, 3, 4), (2, 2, 5, 4), (2, 2, 5, 3)))
    out = F.scaled_dot_product_attention(
        mta.tensor(q), mta.tensor(k), mta.tensor(v), enable_gqa=True
    )
    expected = sdpa_ref(q, np.repeat(k, 3, axis=1), np.repeat(v, 3, axis=1))
    assert_close(to_host(out), expected)


@pytest.mark.parametrize("kind", ["none", "bool", "float", "causal"])
def test_sdpa_gradcheck(kind: str) -> None:
    rng = np.random.default_rng(3)
    q, k, v = (
        mta.tensor(rng.standard_normal(s), requires_grad=True)
        for s in ((2, 3, 2), (2, 4, 2), (2, 4, 3))
    )
    inputs: list[Any] = [q, k, v]
    if kind == "float":
        inputs.append(mta.tensor(rng.standard_normal((3, 4)), requires_grad=True))
    mask = mta.tensor(rng.random((3, 4)) > 0.3) if kind == "bool" else None

    def fn(*xs: Tensor) -> Tensor:
        m = xs[3] if len(xs) == 4 else mask
        return F.scaled_dot_product_attention(
            xs[0], xs[1], xs[2], attn_mask=m, is_causal=kind == "causal"
        )

    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


def test_sdpa_dropout_drops_weights_from_the_generator() -> None:
    """With value = identity the output is the dropped weights: 0 or w / (1 - p)."""
    rng = np.random.default_rng(4)
    q, k = mta.tensor(rng.standard_normal((8, 4))), mta.tensor(rng.standard_normal((6, 4)))
    eye = mta.tensor(np.eye(6))
    weights = to_host(F.scaled_dot_product_attention(q, k, eye))
    mta.manual_seed(7)
    dropped = to_host(F.scaled_dot_product_attention(q, k, eye, dropout_p=0.5))
    mta.manual_seed(7)
    again = to_host(F.scaled_dot_product_attention(q, k, eye, dropout_p=0.5))
    assert np.array_equal(dropped, again)
    kept = dropped != 0
    assert 0 < kept.sum() < kept.size
    assert_close(dropped[kept], weights[kept] * 2)


# --------------------------------------------------------------- against PyTorch
def _math_sdpa(torch: Any, *args: Any, **kwargs: Any) -> Any:
    from torch.nn.attention import SDPBackend, sdpa_kernel

    with sdpa_kernel(SDPBackend.MATH):
        return torch.nn.functional.scaled_dot_product_attention(*args, **kwargs)


@pytest.mark.parametrize("mask_kind", ["none", "bool", "float", "causal"])
def test_sdpa_against_torch(torch: Any, mask_kind: str) -> None:
    rng = np.random.default_rng(5)
    arrays = [rng.standard_normal(s) for s in ((2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 3))]
    mask = {"bool": rng.random((3, 5)) > 0.5, "float": rng.standard_normal((2, 1, 3, 5))}.get(
        mask_kind
    )
    if mask_kind == "bool":
        assert mask is not None
        mask[0] = False  # a fully masked row
    t_in = [torch.tensor(a, requires_grad=True) for a in arrays]
    m_in = [mta.tensor(a, requires_grad=True) for a in arrays]
    grad_mask = mask is not None and mask.dtype != bool
    t_mask = None if mask is None else torch.tensor(mask, requires_grad=grad_mask)
    m_mask = None if mask is None else mta.tensor(mask, requires_grad=grad_mask)
    causal = mask_kind == "causal"
    t_out = _math_sdpa(torch, *t_in, attn_mask=t_mask, is_causal=causal)
    m_out = F.scaled_dot_product_attention(m_in[0], m_in[1], m_in[2], m_mask, is_causal=causal)
    assert_close(to_host(m_out), t_out.detach().numpy())
    g = rng.standard_normal(t_out.shape)
    (t_out * torch.tensor(g)).sum().backward()
    (m_out * mta.tensor(g)).sum().backward()
    pairs = list(zip(t_in, m_in, strict=True)) + ([(t_mask, m_mask)] if grad_mask else [])
    for t, m in pairs:
        assert_close(to_host(m.grad), t.grad.numpy())


def assert_same_values(actual: np.ndarray, expected: np.ndarray) -> None:
    """NaN where PyTorch has NaN, the same infinities, finite values close."""
    assert actual.shape == expected.shape
    for check in (np.isnan, np.isposinf, np.isneginf):
        assert np.array_equal(check(actual), check(expected)), (check.__name__, actual, expected)
    finite = np.isfinite(expected)
    assert_close(actual[finite], expected[finite])


@pytest.mark.parametrize("where", ["query", "key", "value"])
@pytest.mark.parametrize("incoming", [1.0, INF])
def test_sdpa_nonfinite_against_torch(torch: Any, where: str, incoming: float) -> None:
    """Each special value in its own row (of the query) or key (of key or value)."""
    rng = np.random.default_rng(6)
    arrays = {"query": rng.standard_normal((3, 2)), "key": rng.standard_normal((3, 2)),
              "value": rng.standard_normal((3, 2))}  # fmt: skip
    specials = np.column_stack([SPECIALS, np.full(len(SPECIALS), 0.5)])
    arrays[where] = specials
    if where != "query":  # key and value share the sequence length
        other = "value" if where == "key" else "key"
        arrays[other] = rng.standard_normal((len(SPECIALS), 2))
    order = ("query", "key", "value")
    t_in = [torch.tensor(arrays[n], requires_grad=True) for n in order]
    m_in = [mta.tensor(arrays[n], requires_grad=True) for n in order]
    t_out = _math_sdpa(torch, *t_in)
    m_out = F.scaled_dot_product_attention(*m_in)
    assert_same_values(to_host(m_out), t_out.detach().numpy())
    t_out.backward(torch.full(t_out.shape, incoming, dtype=torch.float64))
    m_out.backward(mta.tensor(np.full(t_out.shape, incoming)))
    for t, m in zip(t_in, m_in, strict=True):
        assert_same_values(to_host(m.grad), t.grad.numpy())


# --------------------------------------------------------------- MultiheadAttention
def copy_weights(ours: nn.Module, theirs: Any) -> None:
    state = {k: mta.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()}
    assert list(state) == list(ours.state_dict())
    ours.load_state_dict(state)


def compare_grads(ours: nn.Module, theirs: Any, pairs: list[tuple[Any, Tensor]]) -> None:
    """The gradients of the inputs in ``pairs`` and of every parameter agree."""
    for t, m in pairs:
        assert_close(to_host(m.grad), t.grad.numpy())
    theirs_params = dict(theirs.named_parameters())
    names = [name for name, _ in ours.named_parameters()]
    assert names == list(theirs_params)
    for name, p in ours.named_parameters():
        assert p.grad is not None, name
        assert_close(to_host(p.grad), theirs_params[name].grad.numpy(), err_msg=name)


MHA_CASES: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("plain", {}, {}),
    ("batch_first", {"batch_first": True}, {}),
    ("kdim_vdim", {"kdim": 5, "vdim": 3}, {}),
    (
        "bias_kv_zero_attn",
        {"add_bias_kv": True, "add_zero_attn": True},
        {"kpm": "bool", "mask": "bool2"},
    ),
    ("no_bias", {"bias": False}, {"mask": "float2"}),
    ("kpm_float", {}, {"kpm": "float"}),
    ("mask3d_per_head", {"batch_first": True}, {"mask": "float3", "average_attn_weights": False}),
    ("sdpa_path", {}, {"kpm": "bool", "mask": "bool3", "need_weights": False}),
    (
        "sdpa_bias_kv",
        {"add_bias_kv": True, "add_zero_attn": True},
        {"mask": "float2", "need_weights": False},
    ),
    (
        "causal_hint",
        {"batch_first": True},
        {"mask": "causal", "is_causal": True, "need_weights": False},
    ),
    ("causal_with_weights", {}, {"mask": "causal", "is_causal": True}),
    ("unbatched", {}, {"unbatched": True, "kpm": "bool", "mask": "float3"}),
    ("unbatched_sdpa", {"kdim": 5}, {"unbatched": True, "mask": "bool2", "need_weights": False}),
]


def _masks(
    rng: np.random.Generator, opts: dict[str, Any], n: int, heads: int, q_len: int, k_len: int
) -> dict[str, Any]:
    batch = () if opts.get("unbatched") else (n,)
    found: dict[str, Any] = {}
    if opts.get("kpm") == "bool":
        found["key_padding_mask"] = np.zeros((*batch, k_len), bool)
        found["key_padding_mask"][..., -1] = True
    elif opts.get("kpm") == "float":
        found["key_padding_mask"] = rng.standard_normal((*batch, k_len))
    kind = opts.get("mask")
    shape3 = ((n if batch else 1) * heads, q_len, k_len)
    if kind == "bool2":
        found["attn_mask"] = rng.random((q_len, k_len)) > 0.7
        found["attn_mask"][:, 0] = False
    elif kind == "bool3":
        found["attn_mask"] = rng.random(shape3) > 0.7
        found["attn_mask"][..., 0] = False
    elif kind == "float2":
        found["attn_mask"] = rng.standard_normal((q_len, k_len))
    elif kind == "float3":
        found["attn_mask"] = rng.standard_normal(shape3)
    elif kind == "causal":
        found["attn_mask"] = np.triu(np.ones((q_len, k_len), bool), 1)
    return found


@pytest.mark.parametrize("name,init_kw,opts", MHA_CASES, ids=[c[0] for c in MHA_CASES])
def test_multihead_attention_against_torch(
    torch: Any, name: str, init_kw: dict[str, Any], opts: dict[str, Any]
) -> None:
    embed, heads, n, q_len, k_len = 8, 2, 3, 4, 5
    torch.manual_seed(0)
    theirs = torch.nn.MultiheadAttention(embed, heads, dtype=torch.float64, **init_kw)
    ours = nn.MultiheadAttention(embed, heads, dtype=mta.float64, **init_kw)
    copy_weights(ours, theirs)
    rng = np.random.default_rng(8)
    kd, vd = init_kw.get("kdim", embed), init_kw.get("vdim", embed)

    def shape(length: int, features: int) -> tuple[int, ...]:
        if opts.get("unbatched"):
            return (length, features)
        return (n, length, features) if init_kw.get("batch_first") else (length, n, features)

    arrays = [
        rng.standard_normal(shape(q_len, embed)),
        rng.standard_normal(shape(k_len, kd)),
        rng.standard_normal(shape(k_len, vd)),
    ]
    masks = _masks(rng, opts, n, heads, q_len, k_len)
    flags = {k: opts[k] for k in ("need_weights", "average_attn_weights", "is_causal") if k in opts}
    t_in = [torch.tensor(a, requires_grad=True) for a in arrays]
    m_in = [mta.tensor(a, requires_grad=True) for a in arrays]
    t_out, t_w = theirs(*t_in, **{k: torch.tensor(v) for k, v in masks.items()}, **flags)
    m_out, m_w = ours(*m_in, **{k: mta.tensor(v) for k, v in masks.items()}, **flags)
    assert_close(to_host(m_out), t_out.detach().numpy())
    assert (m_w is None) == (t_w is None)
    if t_w is not None:
        assert m_w is not None
        assert_close(to_host(m_w), t_w.detach().numpy())
    g = rng.standard_normal(t_out.shape)
    loss_t = (t_out * torch.tensor(g)).sum() + (t_w.sum() if t_w is not None else 0)
    loss_m = (m_out * mta.tensor(g)).sum() + (m_w.sum() if m_w is not None else 0)
    loss_t.backward()
    loss_m.backward()
    compare_grads(ours, theirs, list(zip(t_in, m_in, strict=True)))


@pytest.mark.parametrize("need_weights", [True, False])
def test_multihead_attention_fully_masked_query(torch: Any, need_weights: bool) -> None:
    """PyTorch's slow path: NaN with the explicit weights, 0 through sdpa."""
    theirs = torch.nn.MultiheadAttention(4, 2, dtype=torch.float64)
    ours = nn.MultiheadAttention(4, 2, dtype=mta.float64)
    copy_weights(ours, theirs)
    x = np.random.default_rng(9).standard_normal((3, 2, 4))
    mask = np.zeros((3, 3), bool)
    mask[1] = True
    t_out = theirs(*[torch.tensor(x)] * 3, attn_mask=torch.tensor(mask), need_weights=need_weights)[
        0
    ]
    m_out = ours(*[mta.tensor(x)] * 3, attn_mask=mta.tensor(mask), need_weights=need_weights)[0]
    assert_same_values(to_host(m_out), t_out.detach().numpy())
    assert np.isnan(to_host(m_out)[1]).all() == need_weights


def test_multihead_attention_state_dict_and_init(torch: Any) -> None:
    for kw in ({}, {"kdim": 3, "vdim": 5, "add_bias_kv": True}, {"bias": False}):
        theirs = torch.nn.MultiheadAttention(6, 3, **kw)
        ours = nn.MultiheadAttention(6, 3, **kw)
        assert list(ours.state_dict()) == list(theirs.state_dict())
        for key, value in theirs.state_dict().items():
            assert ours.state_dict()[key].shape == tuple(value.shape), key
    mha = nn.MultiheadAttention(6, 3)
    bound = math.sqrt(6.0 / (18 + 6))  # xavier_uniform_ on the (18, 6) in_proj_weight
    w = to_host(mha.in_proj_weight)
    assert np.abs(w).max() <= bound and np.abs(w).max() > bound / 2
    assert not to_host(mha.in_proj_bias).any() and not to_host(mha.out_proj.bias).any()
    assert mha.bias_k is None and mha.q_proj_weight is None


def test_multihead_attention_dropout_only_while_training() -> None:
    mha = nn.MultiheadAttention(4, 2, dropout=0.5, dtype=mta.float64)
    x = mta.tensor(np.random.default_rng(10).standard_normal((3, 2, 4)))
    mha.eval()
    first, _ = mha(x, x, x)
    assert np.array_equal(to_host(first), to_host(mha(x, x, x)[0]))
    mha.train()
    mta.manual_seed(1)
    w1 = to_host(mha(x, x, x, average_attn_weights=False)[1])
    mta.manual_seed(1)
    w2 = to_host(mha(x, x, x, average_attn_weights=False)[1])
    assert np.array_equal(w1, w2)  # returned weights are before dropout, as in PyTorch
    assert not np.array_equal(to_host(mha(x, x, x)[0]), to_host(first))


def _mha(*args: Any, **kwargs: Any) -> Any:
    """An nn.MultiheadAttention(4, 2) called on zeros of the given shapes."""
    layer = nn.MultiheadAttention(4, 2, kdim=kwargs.pop("kdim", None))
    return layer(*(mta.zeros(*shape) for shape in args), **kwargs)


def _sdpa(*args: Any, **kwargs: Any) -> Any:
    return F.scaled_dot_product_attention(*(mta.zeros(*shape) for shape in args), **kwargs)


ERROR_CASES: list[tuple[str, Callable[[], Any], type[Exception], str]] = [
    (
        "heads",
        lambda: nn.MultiheadAttention(6, 4),
        ValueError,
        r"embed_dim \(6\) must be divisible by num_heads \(4\)",
    ),
    ("zero", lambda: nn.MultiheadAttention(0, 1), ValueError, "greater than 0"),
    ("query_dims", lambda: _mha((4,), (4,), (4,)), ValueError, r"query must be \(L, E\) unbatched"),
    ("embed", lambda: _mha((3, 2, 5), (3, 2, 4), (3, 2, 4)), ValueError, r"E=4, got \(3, 2, 5\)"),
    (
        "kdim",
        lambda: _mha((3, 2, 4), (3, 2, 4), (3, 2, 4), kdim=3),
        ValueError,
        r"key must end with 3 features, got \(3, 2, 4\)",
    ),
    ("kv_len", lambda: _mha((3, 2, 4), (5, 2, 4), (6, 2, 4)), ValueError, "must share S"),
    ("batch", lambda: _mha((3, 2, 4), (5, 1, 4), (5, 1, 4)), ValueError, "must share N"),
    (
        "kpm",
        lambda: _mha((3, 2, 4), (5, 2, 4), (5, 2, 4), key_padding_mask=mta.zeros(2, 4)),
        ValueError,
        r"key_padding_mask must be \(N, S\) = \(2, 5\)",
    ),
    (
        "attn_mask",
        lambda: _mha((3, 2, 4), (5, 2, 4), (5, 2, 4), attn_mask=mta.zeros(3, 4)),
        ValueError,
        r"attn_mask must be \(L, S\) = \(3, 5\) or \(N \* num_heads, L, S\) = \(4, 3, 5\), "
        r"got \(3, 4\)",
    ),
    (
        "mask_dtype",
        lambda: _mha((3, 4), (5, 4), (5, 4), attn_mask=mta.zeros(3, 5, dtype=mta.int64)),
        TypeError,
        "attn_mask must be a bool or floating-point",
    ),
    ("hint", lambda: _mha((3, 4), (5, 4), (5, 4), is_causal=True), ValueError, "needs attn_mask"),
    (
        "sdpa_e",
        lambda: _sdpa((2, 3), (4, 2), (4, 2)),
        ValueError,
        r"query \(2, 3\) and key \(4, 2\) must share the last dim",
    ),
    ("sdpa_s", lambda: _sdpa((2, 3), (4, 3), (5, 2)), ValueError, "must share the sequence dim"),
    (
        "sdpa_mask",
        lambda: _sdpa((2, 3), (4, 3), (4, 3), attn_mask=mta.zeros(3, 4)),
        ValueError,
        r"attn_mask of shape \(3, 4\) does not broadcast .* \(2, 4\)",
    ),
    (
        "sdpa_both",
        lambda: _sdpa((2, 3), (4, 3), (4, 3), attn_mask=mta.zeros(2, 4), is_causal=True),
        ValueError,
        "not both",
    ),
    (
        "sdpa_gqa",
        lambda: _sdpa((4, 2, 3), (3, 2, 3), (3, 2, 3), enable_gqa=True),
        ValueError,
        r"heads \(4\) to be a multiple of .* \(3\)",
    ),
    (
        "sdpa_int",
        lambda: F.scaled_dot_product_attention(
            mta.zeros(2, 3, dtype=mta.int64), mta.zeros(4, 3), mta.zeros(4, 3)
        ),
        TypeError,
        "query must be floating point",
    ),
    (
        "sdpa_p",
        lambda: _sdpa((2, 3), (4, 3), (4, 3), dropout_p=1.5),
        ValueError,
        r"dropout_p must be in \[0, 1\]",
    ),
    (
        "activation",
        lambda: nn.TransformerEncoderLayer(4, 2, activation="tanh"),
        ValueError,
        "'relu', 'gelu' or a callable, not 'tanh'",
    ),
    (
        "tr_batch",
        lambda: nn.Transformer(4, 2, 1, 1, 8)(mta.zeros(3, 2, 4), mta.zeros(3, 1, 4)),
        ValueError,
        "batch sizes of src",
    ),
    (
        "tr_features",
        lambda: nn.Transformer(4, 2, 1, 1, 8)(mta.zeros(3, 2, 4), mta.zeros(3, 2, 5)),
        ValueError,
        "d_model=4",
    ),
]


@pytest.mark.parametrize("name,call,error,message", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_errors(name: str, call: Callable[[], Any], error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        call()


# --------------------------------------------------------------- the Transformer
def _seq(
    rng: np.random.Generator, batch_first: bool, length: int, n: int = 2, e: int = 8
) -> np.ndarray:
    return rng.standard_normal((n, length, e) if batch_first else (length, n, e))


LAYER_CASES = [
    pytest.param(bf, nf, act, id=f"bf={bf}-norm_first={nf}-{act}")
    for bf, nf, act in [
        (False, False, "relu"),
        (True, True, "gelu"),
        (True, False, "function"),
        (False, True, "relu"),
    ]
]


def _activation(torch: Any, act: str) -> tuple[Any, Any]:
    if act == "function":
        return torch.nn.functional.silu, F.silu
    if act == "module":  # registered as a submodule in both
        return torch.nn.Tanh(), nn.Tanh()
    return act, act


@pytest.mark.parametrize(
    "batch_first,norm_first,act", [*LAYER_CASES, pytest.param(True, False, "module", id="module")]
)
def test_encoder_against_torch(torch: Any, batch_first: bool, norm_first: bool, act: str) -> None:
    t_act, m_act = _activation(torch, act)
    kw = {
        "dim_feedforward": 16,
        "dropout": 0.0,
        "batch_first": batch_first,
        "norm_first": norm_first,
    }
    torch.manual_seed(1)
    theirs = torch.nn.TransformerEncoder(
        torch.nn.TransformerEncoderLayer(8, 2, activation=t_act, dtype=torch.float64, **kw),
        2, norm=torch.nn.LayerNorm(8, dtype=torch.float64), enable_nested_tensor=False,
    )  # fmt: skip
    ours = nn.TransformerEncoder(
        nn.TransformerEncoderLayer(8, 2, activation=m_act, dtype=mta.float64, **kw),
        2,
        norm=nn.LayerNorm(8, dtype=mta.float64),
    )
    copy_weights(ours, theirs)
    rng = np.random.default_rng(11)
    src = _seq(rng, batch_first, 5)
    kpm = np.zeros((2, 5), bool)
    kpm[1, 3:] = True
    mask = rng.standard_normal((5, 5))
    t_src, m_src = torch.tensor(src, requires_grad=True), mta.tensor(src, requires_grad=True)
    t_out = theirs(t_src, mask=torch.tensor(mask), src_key_padding_mask=torch.tensor(kpm))
    m_out = ours(m_src, mask=mta.tensor(mask), src_key_padding_mask=mta.tensor(kpm))
    assert_close(to_host(m_out), t_out.detach().numpy())
    g = rng.standard_normal(t_out.shape)
    (t_out * torch.tensor(g)).sum().backward()
    (m_out * mta.tensor(g)).sum().backward()
    compare_grads(ours, theirs, [(t_src, m_src)])


@pytest.mark.parametrize("batch_first,norm_first,act", LAYER_CASES)
def test_transformer_against_torch(
    torch: Any, batch_first: bool, norm_first: bool, act: str
) -> None:
    t_act, m_act = _activation(torch, act)
    kw = {
        "dim_feedforward": 16,
        "dropout": 0.0,
        "batch_first": batch_first,
        "norm_first": norm_first,
    }
    torch.manual_seed(2)
    theirs = torch.nn.Transformer(8, 2, 2, 1, activation=t_act, dtype=torch.float64, **kw)
    ours = nn.Transformer(8, 2, 2, 1, activation=m_act, dtype=mta.float64, **kw)
    copy_weights(ours, theirs)
    rng = np.random.default_rng(12)
    src, tgt = _seq(rng, batch_first, 5), _seq(rng, batch_first, 4)
    pad = np.zeros((2, 5), bool)
    pad[0, 4] = True
    t_masks = {
        "tgt_mask": torch.nn.Transformer.generate_square_subsequent_mask(4, dtype=torch.float64),
        "src_key_padding_mask": torch.tensor(pad),
        "memory_key_padding_mask": torch.tensor(pad),
        "memory_mask": torch.tensor(rng.random((4, 5)) > 0.8),
    }
    m_masks = {k: mta.tensor(v.numpy()) for k, v in t_masks.items()}
    t_in = [torch.tensor(a, requires_grad=True) for a in (src, tgt)]
    m_in = [mta.tensor(a, requires_grad=True) for a in (src, tgt)]
    t_out = theirs(*t_in, **t_masks)
    m_out = ours(*m_in, **m_masks)
    assert_close(to_host(m_out), t_out.detach().numpy())
    g = rng.standard_normal(t_out.shape)
    (t_out * torch.tensor(g)).sum().backward()
    (m_out * mta.tensor(g)).sum().backward()
    compare_grads(ours, theirs, list(zip(t_in, m_in, strict=True)))


def test_decoder_layer_unbatched_causal_hint(torch: Any) -> None:
    torch.manual_seed(3)
    theirs = torch.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, dtype=torch.float64)
    ours = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, dtype=mta.float64)
    copy_weights(ours, theirs)
    rng = np.random.default_rng(13)
    tgt, memory = rng.standard_normal((4, 8)), rng.standard_normal((6, 8))
    t_mask = torch.nn.Transformer.generate_square_subsequent_mask(4, dtype=torch.float64)
    t_out = theirs(torch.tensor(tgt), torch.tensor(memory), tgt_mask=t_mask, tgt_is_causal=True)
    mask = nn.Transformer.generate_square_subsequent_mask(4, dtype=mta.float64)
    m_out = ours(mta.tensor(tgt), mta.tensor(memory), tgt_mask=mask, tgt_is_causal=True)
    assert_close(to_host(m_out), t_out.detach().numpy())
    assert np.array_equal(to_host(mask), t_mask.numpy())


def test_state_dicts_load_both_ways(torch: Any) -> None:
    ours = nn.Transformer(8, 2, 1, 2, 16, dropout=0.0, dtype=mta.float64)
    theirs = torch.nn.Transformer(8, 2, 1, 2, 16, dropout=0.0, dtype=torch.float64)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    theirs.load_state_dict({k: torch.tensor(to_host(v)) for k, v in ours.state_dict().items()})
    rng = np.random.default_rng(14)
    src, tgt = rng.standard_normal((5, 2, 8)), rng.standard_normal((3, 2, 8))
    assert_close(
        to_host(ours(mta.tensor(src), mta.tensor(tgt))),
        theirs(torch.tensor(src), torch.tensor(tgt)).detach().numpy(),
    )


def test_stacks_are_deep_copies() -> None:
    layer = nn.TransformerEncoderLayer(4, 2, 8)
    encoder = nn.TransformerEncoder(layer, 2)
    first, second = encoder.layers[0], encoder.layers[1]
    assert first is not layer and first.linear1.weight is not second.linear1.weight
    assert np.array_equal(to_host(first.linear1.weight), to_host(second.linear1.weight))
    with mta.no_grad():
        first.linear1.weight.fill_(0.0)
    assert to_host(second.linear1.weight).any()
