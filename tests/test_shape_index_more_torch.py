"""Shape and indexing ops as PyTorch's: the fixes of the audit (0-d views from integer
indexing, uint8 masks, ``x[[]]``, ``squeeze`` with a tuple, one-argument ``where``,
``cat`` skipping empty 1-d tensors, negative indices in ``gather``/``index_select``,
``view`` that never copies) and the added ops (flip ... histc).

Values, dtypes, shapes and float64 gradients against PyTorch; values against NumPy
references written here; gradcheck/gradgradcheck without torch; views vs copies;
error messages.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import minitorch_accel as mta
from minitorch_accel.core.tensor import Tensor
from minitorch_accel.utils.gradcheck import gradcheck, gradgradcheck

SPECIALS = [-np.inf, -2.0, -0.0, 0.0, 0.5, 2.0, np.inf, np.nan]


# ------------------------------------------------------------------ A1: 0-d views
def test_integer_index_to_one_element_is_a_view() -> None:
    a = mta.arange(3.0)
    a[0].fill_(9.0)
    a[1].add_(9.0)
    assert a.tolist() == [9.0, 10.0, 2.0]
    b = mta.arange(4.0).reshape(2, 2)
    b[1, 1].mul_(0.0)
    assert b.tolist() == [[0.0, 1.0], [2.0, 0.0]]
    c = mta.arange(3.0)
    e = c[0]
    e += 5
    assert c.tolist() == [5.0, 1.0, 2.0] and e.shape == ()
    d = mta.arange(3.0)
    for item in d:
        item.mul_(2)
    assert d.tolist() == [0.0, 2.0, 4.0]
    f = mta.arange(12.0).reshape(3, 4)
    f.flatten()[0].fill_(9.0)
    f[..., 1][0].fill_(7.0)
    f[2, ...][3].fill_(5.0)
    assert f[0].tolist()[:2] == [9.0, 7.0] and f[2, 3].item() == 5.0


def test_zero_d_view_shares_the_version_counter_and_autograd_rules() -> None:
    a = mta.arange(3.0)
    e = a[1]
    before = a._version
    e.fill_(1.0)
    assert a._version == e._version == before + 1
    w = mta.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="in-place"):
        w[0].fill_(3.0)
    y = w * 2
    saved = y[0] * y[1]  # Mul saves y's views
    with mta.no_grad():
        y[0].fill_(0.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        saved.backward()
    x = mta.tensor([3.0, 4.0], requires_grad=True)
    (x[0] * x[1]).backward()
    assert x.grad is not None and x.grad.tolist() == [4.0, 3.0]


# ------------------------------------------------------------------ A7, B7
def test_uint8_index_is_a_mask_with_a_warning() -> None:
    x = mta.arange(3.0)
    with pytest.warns(UserWarning, match="indexing with dtype uint8 is now deprecated"):
        got = x[mta.tensor([1, 0, 1], dtype=mta.uint8)]
    assert got.tolist() == [0.0, 2.0]
    with pytest.warns(UserWarning, match="uint8"):
        x[mta.tensor([0, 1, 0], dtype=mta.uint8)] = 7.0
    assert x.tolist() == [0.0, 7.0, 2.0]


def test_indexing_forms_of_b7() -> None:
    torch = pytest.importorskip("torch")
    x = mta.zeros(3, 2)
    assert x[[]].shape == tuple(torch.zeros(3, 2)[[]].shape) == (0, 2)
    assert mta.zeros(1, 3, 1).squeeze((0, 2)).shape == (3,)
    assert mta.zeros(1, 3, 1).squeeze((0, 1)).shape == (3, 1)
    cond = [[True, False], [True, True]]
    ours, theirs = mta.where(mta.tensor(cond)), torch.where(torch.tensor(cond))
    assert isinstance(ours, tuple) and [t.tolist() for t in ours] == [t.tolist() for t in theirs]
    assert mta.where(mta.tensor([True, False]), 1.0, 0.0).tolist() == [1.0, 0.0]
    layouts: list[list[Any]] = [[[], (2, 3)], [(2, 3), [], (1, 3)], [[], []]]
    for parts in layouts:

        def make(lib: Any, parts: Any = parts) -> list[Any]:
            return [lib.tensor([], dtype=lib.float64) if p == [] else lib.ones(*p) for p in parts]

        got, want = mta.cat(make(mta)), torch.cat(make(torch))
        assert got.shape == tuple(want.shape) and str(got.dtype) == str(want.dtype)[6:]


# ------------------------------------------------------------------ C13, C10
def test_negative_indices_raise_as_pytorch() -> None:
    x = mta.arange(12.0).reshape(3, 4)
    with pytest.raises(IndexError, match="index out of range in self"):
        x.index_select(0, mta.tensor([-1]))
    with pytest.raises(IndexError, match="index out of range in self"):
        x.index_select(0, mta.tensor([3]))
    with pytest.raises(RuntimeError, match="index -1 is out of bounds for dimension 1 with size 4"):
        x.gather(1, mta.tensor([[-1], [0], [0]]))
    with pytest.raises(RuntimeError, match="index 4 is out of bounds for dimension 1 with size 4"):
        x.scatter(1, mta.tensor([[4], [0], [0]]), 1.0)
    with pytest.raises(RuntimeError, match="out of bounds"):
        x.scatter_add(1, mta.tensor([[-1], [0], [0]]), x)


def test_view_never_copies() -> None:
    x = mta.arange(6.0).reshape(2, 3)
    with pytest.raises(RuntimeError, match=r"view size is not compatible .* Use \.reshape"):
        x.t().view(6)
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        mta.ones(3).expand(2, 3).view(6)
    v = x.t().view(3, 1, 2)  # splitting a dim is a view of strided memory too
    v[0, 0, 1] = 50.0
    assert x[1, 0].item() == 50.0
    flat = x.view(-1)
    flat[5] = -1.0
    assert x[1, 2].item() == -1.0
    y = x.t().contiguous()
    assert y.is_contiguous() and not x.t().is_contiguous() and y.view(6).shape == (6,)
    # an op's output laid out otherwise than PyTorch would: still a view as in PyTorch
    out = mta.nn.functional.conv2d(mta.ones(2, 3, 5, 5), mta.ones(4, 3, 3, 3))
    flat = out.view(2, -1)
    flat.fill_(1.0)
    assert out.sum().item() == out.numel()


# ------------------------------------------------------------------ against PyTorch
def _w(shape: tuple[int, ...]) -> np.ndarray:
    return np.random.default_rng(sum(shape) + 7).standard_normal(shape)


def _run(lib: Any, fn: Callable[..., Any], arrays: list[np.ndarray], grad: bool) -> Any:
    inputs = [lib.tensor(a, requires_grad=grad and a.dtype == np.float64) for a in arrays]
    out = fn(lib, *inputs)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    grads = []
    if grad and any(o.requires_grad for o in outs):
        total = sum((o * lib.tensor(_w(tuple(o.shape)))).sum() for o in outs if o.requires_grad)
        total.backward()
        grads = [t.grad.numpy() for t in inputs if t.requires_grad]
    values = [
        (str(o.dtype).replace("torch.", ""), tuple(o.shape), o.detach().numpy()) for o in outs
    ]
    return values, grads


RNG = np.random.default_rng(0)
A34 = RNG.standard_normal((3, 4))
A234 = RNG.standard_normal((2, 3, 4))
I34 = RNG.integers(-5, 5, (3, 4))
IDX = RNG.integers(0, 4, (3, 5))

CASES: list[tuple[str, Callable[..., Any], list[np.ndarray]]] = [
    ("flip", lambda t, a: t.flip(a, (0, 2)), [A234]),
    ("flip_method", lambda t, a: a.flip(1), [A234]),
    ("fliplr", lambda t, a: t.fliplr(a), [A34]),
    ("flipud", lambda t, a: t.flipud(a), [A34]),
    ("roll", lambda t, a: t.roll(a, 2), [A34]),
    ("roll_dims", lambda t, a: t.roll(a, (1, -3), (0, 2)), [A234]),
    ("rot90", lambda t, a: t.rot90(a, 1, (1, 2)), [A234]),
    ("rot90_k3", lambda t, a: t.rot90(a, -1), [A34]),
    ("rot90_k2", lambda t, a: t.rot90(a, 2), [A34]),
    ("tril", lambda t, a: t.tril(a, -1), [A234]),
    ("triu", lambda t, a: t.triu(a, 1), [A34]),
    ("tril_int", lambda t, a: t.tril(a, 1), [I34]),
    ("diag_1d", lambda t, a: t.diag(a[0], 1), [A34]),
    ("diag_2d", lambda t, a: t.diag(a, -1), [A34]),
    ("diagonal", lambda t, a: t.diagonal(a, 1, 2, 0), [A234]),
    ("diagonal_neg", lambda t, a: a.diagonal(-1, -1, 1), [A234]),
    ("diag_embed", lambda t, a: t.diag_embed(a, 1, 0, 2), [A34]),
    ("diag_embed_swap", lambda t, a: t.diag_embed(a, -1, 2, 0), [A34]),
    ("trace", lambda t, a: t.trace(a), [A34]),
    ("trace_int", lambda t, a: t.trace(a), [I34]),
    ("movedim", lambda t, a: t.movedim(a, (0, 1), (2, 0)), [A234]),
    ("moveaxis", lambda t, a: a.moveaxis(-1, 0), [A234]),
    ("swapaxes", lambda t, a: t.swapaxes(a, 0, 2), [A234]),
    ("swapdims", lambda t, a: a.swapdims(1, 2), [A234]),
    ("narrow", lambda t, a: t.narrow(a, 2, -3, 2), [A234]),
    ("take", lambda t, a: t.take(a, t.tensor([[0, -1], [5, 3]])), [A34]),
    ("take_along_dim", lambda t, a: t.take_along_dim(a, a.argsort(1), 1), [A34]),
    ("take_along_dim_bcast", lambda t, a: t.take_along_dim(a, t.tensor([[-1, 0]]), 1), [A34]),
    ("take_along_dim_none", lambda t, a: t.take_along_dim(a, t.tensor([11, 0])), [A34]),
    ("ravel", lambda t, a: t.ravel(a.transpose(0, 1)), [A34]),
    ("tile", lambda t, a: t.tile(a, (2, 1, 2)), [A34]),
    ("tile_short", lambda t, a: a.tile(2), [A34]),
    ("tensor_split", lambda t, a: t.tensor_split(a, 3, 2), [A234]),
    ("tensor_split_idx", lambda t, a: t.tensor_split(a, [1, -1, 9], 2), [A234]),
    ("unbind", lambda t, a: t.unbind(a, 1), [A234]),
    ("vsplit", lambda t, a: t.vsplit(a, [1]), [A34]),
    ("hsplit", lambda t, a: t.hsplit(a, 2), [A34]),
    ("dsplit", lambda t, a: t.dsplit(a, [1, 3]), [A234]),
    ("hstack", lambda t, a: t.hstack([a, a[:, :1]]), [A34]),
    ("vstack", lambda t, a: t.vstack([a[0], a]), [A34]),
    ("dstack", lambda t, a: t.dstack([a, a]), [A34]),
    ("column_stack", lambda t, a: t.column_stack([a[0], a[1], a.t()]), [A34]),
    ("broadcast_to", lambda t, a: t.broadcast_to(a, (2, 3, 4)), [A34]),
    ("broadcast_tensors", lambda t, a, b: t.broadcast_tensors(a, b[0, :1]), [A34, A234]),
    ("meshgrid_ij", lambda t, a: t.meshgrid(a[0], a[1, :2], indexing="ij"), [A34]),
    ("meshgrid_xy", lambda t, a: t.meshgrid(a[0], a[1, :2], a[2, :3], indexing="xy"), [A34]),
    ("atleast_3d", lambda t, a: t.atleast_3d(a[0, 0], a[0], a), [A34]),
    ("atleast_2d", lambda t, a: t.atleast_2d(a[0]), [A34]),
    (
        "scatter_add",
        lambda t, a, s: t.scatter_add(a, 1, t.tensor(IDX[:, :3]), s[:, :3]),
        [A34, A234[0]],
    ),
    (
        "scatter_value_add",
        lambda t, a: a.detach().scatter(1, t.tensor(IDX[:, :2]), 2.0, reduce="add"),
        [A34],
    ),
    (
        "index_add",
        lambda t, a, s: t.index_add(a, 1, t.tensor([3, 0, 3]), s[:, :3], alpha=2),
        [A34, A34],
    ),
    ("index_fill", lambda t, a: t.index_fill(a, 1, t.tensor([2, 0]), -1.5), [A34]),
    ("index_fill_tensor", lambda t, a, v: a.index_fill(0, t.tensor([1]), v[0, 0]), [A34, A34]),
    ("index_copy", lambda t, a, s: t.index_copy(a, 0, t.tensor([2, 0]), s[:2]), [A34, A34]),
    (
        "index_put",
        lambda t, a, v: t.index_put(a, (t.tensor([0, 2]), t.tensor([1, 1])), v[0, :2]),
        [A34, A34],
    ),
    ("index_put_acc", lambda t, a, v: a.index_put((t.tensor([0, 0, 2]),), v[0], True), [A34, A34]),
    ("masked_select", lambda t, a: t.masked_select(a, a > 0), [A34]),
    (
        "masked_select_bcast",
        lambda t, a: t.masked_select(a, t.tensor([True, False, True, True])),
        [A34],
    ),
    ("masked_scatter", lambda t, a, s: t.masked_scatter(a, a < 0, s), [A34, A34]),
    ("nonzero", lambda t, a: t.nonzero(a), [I34]),
    ("nonzero_tuple", lambda t, a: t.nonzero(a, as_tuple=True), [I34]),
    ("argwhere", lambda t, a: t.argwhere(a), [I34]),
    ("repeat_interleave", lambda t, a: t.repeat_interleave(a, 2), [A34]),
    ("repeat_interleave_dim", lambda t, a: a.repeat_interleave(t.tensor([1, 0, 3]), dim=0), [A34]),
    ("repeat_interleave_counts", lambda t, a: t.repeat_interleave(t.tensor([2, 0, 1])), [A34]),
    ("contiguous", lambda t, a: a.transpose(0, 2).contiguous(), [A234]),
    ("view_strided", lambda t, a: a.transpose(0, 1).view(3, 2, 2, 2), [A234]),
    ("squeeze_tuple", lambda t, a: a[:, :1].squeeze((1, 0)), [A34]),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_matches_torch(case: tuple[str, Callable[..., Any], list[np.ndarray]]) -> None:
    torch = pytest.importorskip("torch")
    _, fn, arrays = case
    (ours, our_grads), (theirs, their_grads) = (
        _run(mta, fn, arrays, True),
        _run(torch, fn, arrays, True),
    )
    assert len(ours) == len(theirs)
    for (dt_o, shape_o, v_o), (dt_t, shape_t, v_t) in zip(ours, theirs, strict=True):
        assert (dt_o, shape_o) == (dt_t, shape_t)
        np.testing.assert_allclose(v_o, v_t, rtol=1e-12, atol=0)
    assert len(our_grads) == len(their_grads)
    for g_o, g_t in zip(our_grads, their_grads, strict=True):
        np.testing.assert_allclose(g_o, g_t, rtol=1e-12, atol=1e-15)


REDUCE_CASES = [(r, s) for r in ("sum", "prod", "mean", "amax", "amin") for s in (True, False)]


@pytest.mark.parametrize("reduce,include_self", REDUCE_CASES)
def test_scatter_reduce_matches_torch(reduce: str, include_self: bool) -> None:
    torch = pytest.importorskip("torch")
    a = np.round(A34 * 2) / 2  # ties among maxima and exact zeros
    a[0, 1] = 0.0
    src = RNG.integers(-2, 3, (3, 5)).astype(np.float64)
    src[1, 1:3] = 0.0

    def fn(t: Any, x: Any, s: Any) -> Any:
        return t.scatter_reduce(x, 1, t.tensor(IDX), s, reduce, include_self=include_self)

    (ours, our_grads), (theirs, their_grads) = (
        _run(mta, fn, [a, src], True),
        _run(torch, fn, [a, src], True),
    )
    np.testing.assert_allclose(ours[0][2], theirs[0][2], rtol=1e-12)
    for g_o, g_t in zip(our_grads, their_grads, strict=True):
        np.testing.assert_allclose(g_o, g_t, rtol=1e-12, atol=1e-15)
    ints = mta.tensor(I34).scatter_reduce(1, mta.tensor(IDX[:, :2]), mta.tensor(I34[:, :2]), reduce)
    want = torch.tensor(I34).scatter_reduce(
        1, torch.tensor(IDX[:, :2]), torch.tensor(I34[:, :2]), reduce
    )
    assert ints.dtype == np.int64 and ints.tolist() == want.tolist()


def test_non_finite_values_and_gradients_match_torch() -> None:
    torch = pytest.importorskip("torch")
    x = np.array(SPECIALS).reshape(2, 4)
    index = np.array([[0, 0, 1, 1], [2, 2, 3, 3]])
    fns: list[Callable[..., Any]] = [
        lambda t, a: t.flip(a, (1,)),
        lambda t, a: t.roll(a, 1, 1),
        lambda t, a: t.tril(a),
        lambda t, a: t.diagonal(a, 1),
        lambda t, a: t.take_along_dim(a, t.tensor(index), 1),
        lambda t, a: t.zeros(2, 4, dtype=t.float64).scatter_reduce(1, t.tensor(index), a, "amax"),
        lambda t, a: t.ones(2, 4, dtype=t.float64).scatter_reduce(1, t.tensor(index), a, "prod"),
        lambda t, a: t.masked_select(a, t.tensor([[True] * 4, [False, True] * 2])),
    ]
    for fn in fns:
        for seed in (1.0, np.inf):
            results = []
            for lib in (mta, torch):
                leaf = lib.tensor(x, requires_grad=True)
                out = fn(lib, leaf)
                out.backward(lib.full(tuple(out.shape), seed, dtype=lib.float64))
                results.append((out.detach().numpy(), leaf.grad.numpy()))
            (v_o, g_o), (v_t, g_t) = results
            np.testing.assert_array_equal(v_o, v_t)  # NaN and inf positions included
            np.testing.assert_array_equal(g_o, g_t)


SET_CASES: list[tuple[str, Callable[..., Any]]] = [
    ("unique", lambda t, a: t.unique(a, return_inverse=True, return_counts=True)),
    ("unique_method", lambda t, a: a.unique()),
    (
        "unique_dim",
        lambda t, a: t.unique(a[:, :2] % 2, dim=0, return_inverse=True, return_counts=True),
    ),
    (
        "unique_consecutive",
        lambda t, a: t.unique_consecutive(t.tensor([1, 1, 2, 2, 3, 1, 1]), True, True),
    ),
    (
        "unique_consecutive_dim",
        lambda t, a: t.unique_consecutive((a % 2)[[0, 0, 1]], dim=0, return_counts=True),
    ),
    ("searchsorted", lambda t, a: t.searchsorted(t.tensor([-3, 0, 0, 2]), a)),
    (
        "searchsorted_right",
        lambda t, a: t.searchsorted(t.tensor([-3, 0, 0, 2]), a, right=True, out_int32=True),
    ),
    ("searchsorted_side_2d", lambda t, a: t.searchsorted(a.sort(1).values, a, side="right")),
    ("bucketize", lambda t, a: t.bucketize(a, t.tensor([-3, 0, 2]))),
    ("bucketize_right", lambda t, a: t.bucketize(a, t.tensor([-3, 0, 2]), right=True)),
    ("isin", lambda t, a: t.isin(a, t.tensor([0, 2, -5]))),
    ("isin_invert", lambda t, a: t.isin(a, 2, invert=True)),
    ("bincount", lambda t, a: t.bincount(a.reshape(-1) + 5, minlength=12)),
    ("bincount_weights", lambda t, a: t.bincount(a[0] + 5, weights=t.tensor([0.5, 1.0, 2.0, 3.0]))),
    ("bincount_int_weights", lambda t, a: t.bincount(a[0] + 5, weights=a[1])),
    ("histc", lambda t, a: t.histc(a.double(), bins=5)),
    ("histc_range", lambda t, a: a.float().histc(bins=4, min=-2, max=2)),
    ("tril_indices", lambda t, a: t.tril_indices(3, 4, 1)),
    ("triu_indices", lambda t, a: t.triu_indices(4, 3, -1)),
]


@pytest.mark.parametrize("case", SET_CASES, ids=[c[0] for c in SET_CASES])
def test_set_and_count_ops_match_torch(case: tuple[str, Callable[..., Any]]) -> None:
    torch = pytest.importorskip("torch")
    _, fn = case
    ours, _ = _run(mta, fn, [I34], False)
    theirs, _ = _run(torch, fn, [I34], False)
    assert [(d, s) for d, s, _ in ours] == [(d, s) for d, s, _ in theirs]
    for (_, _, v_o), (_, _, v_t) in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(v_o, v_t)


def test_new_methods_match_torch() -> None:
    torch = pytest.importorskip("torch")
    for lib in (mta, torch):
        x = lib.zeros(2, dtype=lib.int32)
        made = [
            x.new_zeros(2, 3),
            x.new_ones((1, 2)),
            x.new_full((2,), 7),
            x.new_empty(3),
            x.new_tensor([1.5, 2.5]),
            x.new_zeros(2, dtype=lib.float64, requires_grad=True),
        ]
        described = [
            (str(m.dtype).replace("torch.", ""), tuple(m.shape), m.requires_grad) for m in made
        ]
        if lib is mta:
            ours = described
    assert ours == described
    assert mta.zeros(1).new_full((2,), 3.0).tolist() == [3.0, 3.0]


# ------------------------------------------------------------------ NumPy references
def test_against_numpy_references() -> None:
    a = mta.tensor(A234)
    np.testing.assert_array_equal(mta.flip(a, (0, 2)).numpy(), A234[::-1, :, ::-1])
    np.testing.assert_array_equal(mta.roll(a, 5).numpy(), np.roll(A234, 5))
    np.testing.assert_array_equal(mta.rot90(mta.tensor(A34), 3).numpy(), np.rot90(A34, 3))
    np.testing.assert_array_equal(mta.tril(a, 1).numpy(), np.tril(A234, 1))
    np.testing.assert_array_equal(mta.triu(a, -1).numpy(), np.triu(A234, -1))
    np.testing.assert_array_equal(mta.diagonal(a, 1, 1, 2).numpy(), np.diagonal(A234, 1, 1, 2))
    embedded = np.zeros((3, 5, 5))
    for i in range(3):
        for j in range(4):
            embedded[i, j, j + 1] = A34[i, j]
    np.testing.assert_array_equal(mta.diag_embed(mta.tensor(A34), 1).numpy(), embedded)
    np.testing.assert_array_equal(mta.movedim(a, 0, 2).numpy(), np.moveaxis(A234, 0, 2))
    np.testing.assert_array_equal(mta.tile(a, (2, 1)).numpy(), np.tile(A234, (2, 1)))
    np.testing.assert_array_equal(
        mta.take_along_dim(mta.tensor(A34), mta.tensor(IDX[:, :2]), 1).numpy(),
        np.take_along_axis(A34, IDX[:, :2], 1),
    )
    added = A34.copy()
    np.add.at(added, (np.arange(3)[:, None], IDX), 1.0)
    np.testing.assert_array_equal(
        mta.scatter_add(
            mta.tensor(A34), 1, mta.tensor(IDX), mta.ones(3, 5, dtype=mta.float64)
        ).numpy(),
        added,
    )
    biggest = A34.copy()
    for i in range(3):
        for j in range(5):
            biggest[i, IDX[i, j]] = max(biggest[i, IDX[i, j]], A34[i, j % 4] * 3)
    src = mta.tensor(np.concatenate([A34, A34[:, :1]], 1) * 3)
    np.testing.assert_array_equal(
        mta.scatter_reduce(mta.tensor(A34), 1, mta.tensor(IDX), src, "amax").numpy(), biggest
    )
    values, inverse, counts = mta.unique(mta.tensor(I34), return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(values.numpy()[inverse.numpy()], I34)
    np.testing.assert_array_equal(counts.numpy(), [np.sum(v == I34) for v in values.numpy()])
    np.testing.assert_array_equal(
        mta.repeat_interleave(mta.tensor([1, 2]), mta.tensor([3, 1])).numpy(), [1, 1, 1, 2]
    )
    assert mta.broadcast_shapes((3, 1), (1, 4), 4) == np.broadcast_shapes((3, 1), (1, 4), (4,))


# ------------------------------------------------------------------ gradients without torch
GRAD_FNS: list[tuple[str, Callable[..., Tensor], int]] = [
    ("flip", lambda a: mta.flip(a, (0, 1)), 2),
    ("roll", lambda a: mta.roll(a, (1, 2), (0, 1)), 2),
    ("rot90", lambda a: mta.rot90(a), 2),
    ("tril", lambda a: mta.tril(a, 1), 2),
    ("diagonal", lambda a: mta.diagonal(a, -1) * 3, 2),
    ("diag_embed", lambda a: mta.diag_embed(a, -1, 0, 1), 2),
    ("trace", lambda a: mta.trace(a * a), 2),
    ("take_along_dim", lambda a: mta.take_along_dim(a, mta.tensor([[2], [0], [1]]), 1) ** 2, 2),
    ("scatter_add", lambda a: mta.scatter_add(a, 1, mta.tensor(IDX[:, :2]), a * a), 2),
    (
        "scatter_amax",
        lambda a: mta.scatter_reduce(a, 1, mta.tensor(IDX), a.repeat(1, 2)[:, :5] * 2, "amax"),
        1,
    ),
    (
        "scatter_prod",
        lambda a: mta.scatter_reduce(a, 1, mta.tensor(IDX), a.repeat(1, 2)[:, :5], "prod"),
        1,
    ),
    (
        "scatter_mean",
        lambda a: mta.scatter_reduce(
            a, 1, mta.tensor(IDX), a.repeat(1, 2)[:, :5], "mean", include_self=False
        ),
        2,
    ),
    ("index_put_acc", lambda a: mta.index_put(a, (mta.tensor([0, 0]),), a[1] * a[2], True), 2),
    ("index_copy", lambda a: mta.index_copy(a, 1, mta.tensor([3, 1]), a[:, :2] ** 2), 2),
    ("masked_scatter", lambda a: mta.masked_scatter(a, a > 0, a.flip(0) ** 2), 2),
    ("repeat_interleave", lambda a: mta.repeat_interleave(a, mta.tensor([2, 0, 1]), 0) ** 2, 2),
]


@pytest.mark.parametrize("case", GRAD_FNS, ids=[c[0] for c in GRAD_FNS])
def test_gradcheck(case: tuple[str, Callable[..., Tensor], int]) -> None:
    _, fn, order = case
    x = mta.tensor(A34 + np.arange(12).reshape(3, 4) * 0.01, requires_grad=True)
    assert gradcheck(fn, [x])
    if order == 2:
        assert gradgradcheck(fn, [x])


# ------------------------------------------------------------------ views and copies
def test_views_share_memory_and_copies_do_not() -> None:
    x = mta.zeros(3, 4)
    x.diagonal().fill_(1.0)
    x.narrow(1, 2, 1).fill_(2.0)
    x.movedim(0, 1)[3, 0] = 5.0
    x.unbind(0)[2][0] = 6.0
    x.tensor_split(2, 1)[0][1, 0] = 7.0
    x.swapaxes(0, 1)[1, 2] = 8.0
    expected = np.zeros((3, 4))
    np.fill_diagonal(expected, 1.0)
    expected[:, 2] = 2.0
    expected[0, 3], expected[2, 0], expected[1, 0], expected[2, 1] = 5.0, 6.0, 7.0, 8.0
    np.testing.assert_array_equal(x.numpy(), expected)
    base = mta.arange(4.0)
    grid = mta.broadcast_to(base, (2, 4))
    assert np.shares_memory(grid.array, base.array)
    for copy in (mta.flip(base, 0), mta.roll(base, 1), mta.tril(x), mta.diag(x), mta.rot90(x)):
        copy.fill_(-1.0)
    assert base.tolist() == [0.0, 1.0, 2.0, 3.0] and x.numpy().min() == 0.0
    y = mta.zeros(3, 3)
    assert y.scatter_add_(0, mta.tensor([[0, 1, 2]]), mta.ones(1, 3)) is y
    y.index_fill_(1, mta.tensor([0]), 4.0).tril_()
    assert y.tolist() == [[4.0, 0.0, 0.0], [4.0, 1.0, 0.0], [4.0, 0.0, 1.0]]


def test_in_place_variants_match_torch() -> None:
    torch = pytest.importorskip("torch")
    results = []
    for lib in (mta, torch):
        y = lib.tensor(A34)
        y.index_add_(0, lib.tensor([2, 2]), lib.tensor(A34[:2]))
        y.index_copy_(1, lib.tensor([0]), lib.tensor(A34[:, 3:]))
        y.index_put_((lib.tensor([1]),), lib.tensor(2.0, dtype=lib.float64), accumulate=True)
        y.masked_scatter_(y > 1, lib.tensor(A234).reshape(-1))
        y.scatter_reduce_(1, lib.tensor(IDX), lib.tensor(A234)[0, :, :].repeat(1, 2)[:, :5], "amin")
        y.triu_(-1)
        results.append(y.numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-12)


# ------------------------------------------------------------------ errors
@pytest.mark.parametrize(
    "call,exc,pattern",
    [
        (lambda: mta.fliplr(mta.zeros(3)), RuntimeError, "fliplr: input must be >= 2-d"),
        (
            lambda: mta.roll(mta.zeros(3), (1, 2), 0),
            RuntimeError,
            "shifts and dimensions must align",
        ),
        (lambda: mta.tril(mta.zeros(3)), RuntimeError, "at least 2 dimensions"),
        (lambda: mta.diagonal(mta.zeros(3, 3), 0, 1, -1), RuntimeError, "cannot be identical"),
        (lambda: mta.diag(mta.zeros(2, 2, 2)), RuntimeError, "Supports 1D or 2D"),
        (lambda: mta.trace(mta.zeros(3)), RuntimeError, "expected a matrix"),
        (lambda: mta.narrow(mta.zeros(4), 0, 3, 2), RuntimeError, "exceeds dimension size"),
        (lambda: mta.movedim(mta.zeros(2, 3), (0, 1), 0), RuntimeError, "same number of dims"),
        (lambda: mta.vsplit(mta.zeros(4, 2), 3), RuntimeError, "not divisible by the split_size 3"),
        (lambda: mta.hsplit(mta.tensor(1.0), 1), RuntimeError, "at least 1 dimension"),
        (lambda: mta.broadcast_shapes((2,), (3,)), RuntimeError, "cannot be broadcast"),
        (
            lambda: mta.scatter_reduce(mta.zeros(3), 0, mta.tensor([0]), mta.ones(1), "max"),
            ValueError,
            "reduce must be one of",
        ),
        (
            lambda: mta.scatter_add(
                mta.zeros(3), 0, mta.tensor([0]), mta.ones(1, dtype=mta.float64)
            ),
            RuntimeError,
            "Expected self.dtype to be equal to src.dtype",
        ),
        (
            lambda: mta.index_add(mta.zeros(3), 0, mta.tensor([-1]), mta.ones(1)),
            IndexError,
            "index out of range",
        ),
        (lambda: mta.take(mta.zeros(3), mta.tensor([3])), IndexError, "out of range"),
        (
            lambda: mta.masked_select(mta.zeros(3), mta.ones(3)),
            RuntimeError,
            "expected a bool mask",
        ),
        (
            lambda: mta.masked_scatter(mta.zeros(3), mta.tensor([True] * 3), mta.ones(2)),
            RuntimeError,
            "only 2 elements",
        ),
        (
            lambda: mta.repeat_interleave(mta.zeros(3), mta.tensor([1, 2])),
            RuntimeError,
            "same size as input",
        ),
        (
            lambda: mta.searchsorted(mta.tensor([1]), mta.tensor([1]), right=True, side="left"),
            RuntimeError,
            "can't be set to opposites",
        ),
        (lambda: mta.bincount(mta.tensor([-1, 2])), RuntimeError, "non-negative"),
        (lambda: mta.histc(mta.tensor([1, 2])), NotImplementedError, "not implemented for int64"),
        (
            lambda: mta.meshgrid(mta.zeros(2), indexing="ab"),
            ValueError,
            'indexing must be "ij" or "xy"',
        ),
    ],
)
def test_errors(call: Callable[[], Any], exc: type[Exception], pattern: str) -> None:
    with pytest.raises(exc, match=pattern):
        call()


def test_meshgrid_without_indexing_warns() -> None:
    with pytest.warns(UserWarning, match="indexing"):
        a, b = mta.meshgrid(mta.arange(2), mta.arange(3))
    assert a.shape == b.shape == (2, 3)
