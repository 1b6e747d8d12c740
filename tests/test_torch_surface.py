"""The PyTorch surface: selection with named (values, indices), Size, the Tensor methods
and top-level functions PyTorch code uses.

Each against a reference written here with PyTorch's semantics (NumPy where they agree;
a plain-Python reference for tie order), on ``cpu`` and ``cpu:1`` (and ``cuda`` when
present), against PyTorch itself where it is installed, and with gradcheck and
gradgradcheck for the differentiable ones. The strict stand-in runs the same ops in
``test_torch_surface_strict.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from support.helpers import check_op, to_host

import minitorch_accel as mta
from minitorch_accel.core.tensor import Tensor
from minitorch_accel.utils.gradcheck import gradcheck, gradgradcheck

TIES = np.array([[1.0, 5.0, 5.0, -2.0], [7.0, 7.0, 0.0, 7.0], [3.0, 3.0, 3.0, 3.0]])


def first_extreme(row: list[float], largest: bool) -> int:
    """Index of the first max (or min) of ``row``: PyTorch's choice among ties."""
    best = max(row) if largest else min(row)
    return row.index(best)


def stable_order(row: list[float], descending: bool) -> list[int]:
    """Indices sorting ``row``; equal values keep their order (a stable sort)."""
    return sorted(range(len(row)), key=lambda i: (-row[i] if descending else row[i], i))


def check_grads(fn: Callable[..., Tensor], *arrays: np.ndarray, device: str = "cpu") -> None:
    """gradcheck and gradgradcheck of ``fn`` in float64 on ``device``."""
    leaves = [mta.tensor(a, dtype=mta.float64, device=device, requires_grad=True) for a in arrays]
    assert gradcheck(fn, leaves)
    assert gradgradcheck(fn, leaves)


# ------------------------------------------------------------------ max / min with a dim
@pytest.mark.parametrize("largest", [True, False], ids=["max", "min"])
def test_max_min_dim_return_values_and_first_index_among_ties(largest: bool, device: str) -> None:
    x = mta.tensor(TIES, device=device)
    out = x.max(1) if largest else x.min(1)
    values, indices = out  # unpacks as a pair
    expected_idx = [first_extreme(row, largest) for row in TIES.tolist()]
    assert indices.tolist() == expected_idx and indices.dtype == np.int64
    assert values.tolist() == [TIES[i, j] for i, j in enumerate(expected_idx)]
    assert out.values is out[0] and out.indices is out[1]
    assert type(out).__name__ == ("max" if largest else "min")
    assert values.device == mta.Device(device) and indices.device == mta.Device(device)


def test_max_keepdim_index_1_is_the_indices_not_row_1() -> None:
    """``out.max(1, keepdim=True)[1]`` is the MNIST example's prediction: the indices."""
    logits = mta.tensor([[0.1, 0.9, 0.0], [0.8, 0.1, 0.1]])
    pred = logits.max(1, keepdim=True)[1]
    assert pred.shape == (2, 1) and pred.tolist() == [[1], [0]]
    target = mta.tensor([1, 2])
    assert pred.eq(target.view_as(pred)).sum().item() == 1
    _, pred2 = mta.max(logits, 1)
    assert pred2.tolist() == [1, 0]


def test_max_forms() -> None:
    a, b = mta.tensor([1.0, 4.0]), mta.tensor([3.0, 2.0])
    assert isinstance(a.max(), Tensor) and a.max().shape == ()
    assert mta.max(a, b).tolist() == [3.0, 4.0]  # elementwise with another tensor
    assert mta.min(a, b).tolist() == [1.0, 2.0]
    assert a.max(dim=0, keepdim=True).values.shape == (1,)
    assert mta.tensor(2.0).max(0).indices.item() == 0  # a 0-d tensor takes dim 0


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_max_min_dim_gradients(dim: int, keepdim: bool, device: str) -> None:
    x = np.random.default_rng(0).uniform(-2, 2, (3, 4))
    check_grads(lambda t: t.max(dim, keepdim).values, x, device=device)
    check_grads(lambda t: mta.min(t, dim, keepdim)[0], x, device=device)


def test_max_dim_gradient_goes_to_the_first_maximum() -> None:
    x = mta.tensor(TIES, requires_grad=True)
    x.max(1).values.sum().backward()
    assert x.grad is not None
    expected = np.zeros_like(TIES)
    for i, row in enumerate(TIES.tolist()):
        expected[i, first_extreme(row, True)] = 1.0
    np.testing.assert_array_equal(x.grad.numpy(), expected)


# ------------------------------------------------------------------ sort, topk, ...
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dim", [0, 1])
def test_sort_is_stable(descending: bool, dim: int, device: str) -> None:
    x = np.round(np.random.default_rng(1).uniform(0, 3, (5, 6)))  # many ties
    values, indices = mta.tensor(x, device=device).sort(dim, descending=descending)
    moved = np.moveaxis(x, dim, -1)
    expected = np.array(
        [stable_order(r, descending) for r in moved.reshape(-1, moved.shape[-1]).tolist()]
    )
    expected = np.moveaxis(expected.reshape(moved.shape), -1, dim)
    np.testing.assert_array_equal(to_host(indices), expected)
    np.testing.assert_array_equal(to_host(values), np.take_along_axis(x, expected, dim))
    assert mta.argsort(mta.tensor(x), dim, descending).tolist() == expected.tolist()


def test_sort_of_bools_and_ints() -> None:
    assert mta.tensor([True, False, True]).sort(descending=True).indices.tolist() == [0, 2, 1]
    assert mta.tensor([3, 1, 2]).sort().values.tolist() == [1, 2, 3]


@pytest.mark.parametrize("largest", [True, False])
def test_topk(largest: bool, device: str) -> None:
    x = np.round(np.random.default_rng(2).uniform(0, 4, (3, 7)))
    values, indices = mta.tensor(x, device=device).topk(3, dim=1, largest=largest)
    expected = np.array([stable_order(r, largest)[:3] for r in x.tolist()])
    np.testing.assert_array_equal(to_host(indices), expected)
    np.testing.assert_array_equal(to_host(values), np.take_along_axis(x, expected, 1))
    with pytest.raises(ValueError, match="k=8 is out of range for dim 1 of size 7"):
        mta.tensor(x).topk(8, dim=1)


def test_kthvalue_and_median_are_the_lower_middle(device: str) -> None:
    x = np.random.default_rng(3).permutation(24).reshape(4, 6).astype(np.float64)
    t = mta.tensor(x, device=device)
    for k in (1, 3, 6):
        values, indices = t.kthvalue(k, dim=1)
        np.testing.assert_array_equal(to_host(values), np.sort(x, 1)[:, k - 1])
        np.testing.assert_array_equal(to_host(indices), np.argsort(x, 1)[:, k - 1])
    values, indices = t.median(1)  # six per row: the 3rd smallest, not NumPy's mean
    np.testing.assert_array_equal(to_host(values), np.sort(x, 1)[:, 2])
    np.testing.assert_array_equal(
        np.take_along_axis(x, to_host(indices)[:, None], 1)[:, 0], np.sort(x, 1)[:, 2]
    )
    assert t.median().item() == np.sort(x.reshape(-1))[11]
    assert t.median(0, keepdim=True).values.shape == (1, 6)


def test_mode(device: str) -> None:
    x = np.array([[2, 1, 2, 1, 3], [4, 4, 0, 0, 4], [5, 6, 7, 8, 9]])
    values, indices = mta.tensor(x, device=device).mode(1)
    # the most frequent value, the smallest among equally frequent; its last position
    assert values.tolist() == [1, 4, 5]
    assert indices.tolist() == [3, 4, 0]


@pytest.mark.parametrize(
    "fn",
    [
        lambda t: t.sort(1, descending=True).values,
        lambda t: t.topk(2, dim=0).values,
        lambda t: t.kthvalue(2, 1).values,
        lambda t: t.median(0).values,
        lambda t: t.median(),
        lambda t: t.sort(0)[0] * t,
    ],
    ids=["sort", "topk", "kthvalue", "median_dim", "median_all", "sort_times_input"],
)
def test_selection_gradients(fn: Callable[[Tensor], Tensor], device: str) -> None:
    x = np.random.default_rng(4).permutation(12).reshape(3, 4) / 3.0  # distinct values
    check_grads(fn, x, device=device)


def test_selection_against_torch() -> None:
    torch = pytest.importorskip("torch")
    x = np.round(np.random.default_rng(5).uniform(0, 5, (4, 9)), 1)
    ours, theirs = mta.tensor(x), torch.tensor(x)
    for dim in (0, 1):
        for name in ("max", "min"):
            o, t = getattr(ours, name)(dim), getattr(theirs, name)(dim)
            np.testing.assert_array_equal(o.values.numpy(), t.values.numpy())
            np.testing.assert_array_equal(o.indices.numpy(), t.indices.numpy())
        o, t = ours.sort(dim, descending=True), theirs.sort(dim=dim, descending=True, stable=True)
        np.testing.assert_array_equal(o.indices.numpy(), t.indices.numpy())
        o, t = ours.kthvalue(3, dim), theirs.kthvalue(3, dim)
        np.testing.assert_array_equal(o.values.numpy(), t.values.numpy())
        o, t = ours.median(dim), theirs.median(dim)
        np.testing.assert_array_equal(o.values.numpy(), t.values.numpy())
        o, t = ours.topk(3, dim), theirs.topk(3, dim)
        np.testing.assert_array_equal(o.values.numpy(), t.values.numpy())
    ints = np.array([[2, 1, 2, 1, 3], [4, 4, 0, 0, 4]])
    o, t = mta.tensor(ints).mode(1), torch.tensor(ints).mode(1)
    np.testing.assert_array_equal(o.values.numpy(), t.values.numpy())
    np.testing.assert_array_equal(o.indices.numpy(), t.indices.numpy())
    assert mta.tensor(x).median().item() == theirs.median().item()


# ------------------------------------------------------------------ sizes
def test_size_and_friends() -> None:
    x = mta.zeros(2, 3, 4)
    assert isinstance(x.size(), mta.Size) and isinstance(x.shape, mta.Size)
    assert x.size() == (2, 3, 4) and x.size(1) == 3 and x.size(-1) == 4
    assert x.shape == x.size() and x.size().numel() == 24
    assert x.dim() == x.ndimension() == 3
    assert x.numel() == x.nelement() == 24
    assert x.element_size() == 4 and x.double().element_size() == 8
    n, c, h = x.size()  # unpacks as a tuple
    assert (n, c, h) == (2, 3, 4)
    with pytest.raises(IndexError, match=r"size: dim 3 is out of range .*\(expected -3..2\)"):
        x.size(3)


# ------------------------------------------------------------------ elementwise math
UNARY = [
    ("rsqrt", lambda x: 1 / np.sqrt(x), 0.5, 2.0),
    ("log1p", np.log1p, -0.5, 2.0),
    ("sin", np.sin, -2.0, 2.0),
    ("cos", np.cos, -2.0, 2.0),
    ("tan", np.tan, -1.2, 1.2),
    ("exp", np.exp, -2.0, 2.0),
    ("log", np.log, 0.5, 2.0),
    ("sqrt", np.sqrt, 0.5, 2.0),
    ("sigmoid", lambda x: 1 / (1 + np.exp(-x)), -2.0, 2.0),
    ("tanh", np.tanh, -2.0, 2.0),
    ("abs", np.abs, -2.0, 2.0),
]


@pytest.mark.parametrize("name,ref,low,high", UNARY, ids=[u[0] for u in UNARY])
def test_unary_function_and_method(
    name: str, ref: Any, low: float, high: float, device: str
) -> None:
    fn = getattr(mta, name)
    check_op(fn, ref, [(3, 4)], device, low=low, high=high, margin=0.05 if name == "abs" else 0)
    check_op(lambda t: getattr(t, name)(), ref, [(5,)], device, low=low, high=high, margin=0.05)


def test_sign_clamp_clip_pow(device: str) -> None:
    check_op(mta.sign, np.sign, [(3, 4)], device, margin=0.05)
    assert mta.sign(mta.tensor([-3, 0, 2])).tolist() == [-1, 0, 1]
    check_op(
        lambda t: t.clip(-0.5, 0.7), lambda x: np.clip(x, -0.5, 0.7), [(10,)], device, margin=0.05
    )
    check_op(
        lambda t: mta.clip(t, min=0.1), lambda x: np.maximum(x, 0.1), [(10,)], device, margin=0.05
    )
    check_op(lambda t: t.pow(3), lambda x: x**3, [(4,)], device)
    check_op(lambda a, b: a.pow(b), lambda a, b: a**b, [(4,), (4,)], device, low=0.5, high=2.0)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cumsum_cumprod(dim: int, device: str) -> None:
    check_op(lambda t: t.cumsum(dim), lambda x: np.cumsum(x, dim), [(3, 4)], device)
    check_op(
        lambda t: mta.cumprod(t, dim), lambda x: np.cumprod(x, dim), [(3, 4)], device, margin=0.2
    )
    assert mta.tensor([1, 2, 3], dtype=mta.int32).cumsum(0).dtype == np.int64  # as PyTorch


def test_cumprod_gradient_with_zeros() -> None:
    x = np.array([[2.0, 0.0, 3.0, 0.5], [0.0, 0.0, 1.5, 2.0], [1.0, 2.0, 3.0, 0.0]])
    check_grads(lambda t: t.cumprod(1), x)
    t = mta.tensor([2.0, 0.0, 3.0], requires_grad=True)
    t.cumprod(0).sum().backward()  # d/dx of x0 + x0 x1 + x0 x1 x2 at (2, 0, 3)
    assert t.grad is not None and t.grad.tolist() == [1.0, 2.0 + 6.0, 0.0]


@pytest.mark.parametrize("p", [1, 2, 3, float("inf"), "fro"])
@pytest.mark.parametrize("dim", [None, 1, (0, 1)], ids=str)
def test_norm(p: Any, dim: Any, device: str) -> None:
    order = 2 if p == "fro" else p
    axis = dim if dim is None or isinstance(dim, int) else tuple(dim)

    def ref(x: np.ndarray) -> Any:
        a = np.abs(x)
        if order == float("inf"):
            return a.max(axis=axis)
        return (a**order).sum(axis=axis) ** (1 / order)

    check_op(
        lambda t: t.norm(p, dim), ref, [(3, 4)], device, margin=0.1, gradgrad=order != float("inf")
    )
    assert mta.norm(mta.ones(2, 3), p, dim, keepdim=True).ndim == 2


def test_comparison_methods(device: str) -> None:
    a = np.array([1.0, 2.0, 3.0])
    t = mta.tensor(a, device=device)
    for name, ref in [
        ("eq", np.equal),
        ("ne", np.not_equal),
        ("lt", np.less),
        ("le", np.less_equal),
        ("gt", np.greater),
        ("ge", np.greater_equal),
    ]:
        got = getattr(t, name)(2.0)
        assert got.dtype == np.bool_ and got.tolist() == ref(a, 2.0).tolist()
        assert getattr(mta, name)(t, t).tolist() == ref(a, a).tolist()


def test_add_sub_mul_div_methods(device: str) -> None:
    check_op(lambda a, b: a.add(b, alpha=2.0), lambda a, b: a + 2 * b, [(3,), (3,)], device)
    check_op(lambda a, b: a.sub(b, alpha=0.5), lambda a, b: a - 0.5 * b, [(3,), (3,)], device)
    check_op(lambda a, b: a.mul(b), lambda a, b: a * b, [(3,), (3,)], device)
    check_op(lambda a, b: a.div(b), lambda a, b: a / b, [(3,), (3,)], device, low=0.5)


# ------------------------------------------------------------------ shapes
def test_shape_methods(device: str) -> None:
    x = np.random.default_rng(6).uniform(-1, 1, (2, 3, 4))
    check_op(
        lambda t: t.view_as(mta.zeros(4, 6)), lambda a: a.reshape(4, 6), [], device, arrays=[x]
    )
    check_op(
        lambda t: t.reshape_as(mta.zeros(6, 4)), lambda a: a.reshape(6, 4), [], device, arrays=[x]
    )
    check_op(
        lambda t: t.expand_as(mta.zeros(5, 2, 3, 4)),
        lambda a: np.broadcast_to(a, (5, 2, 3, 4)),
        [],
        device,
        arrays=[x],
    )
    check_op(lambda t: t.repeat(2, 1, 3), lambda a: np.tile(a, (2, 1, 3)), [], device, arrays=[x])
    check_op(
        lambda t: t.repeat(2, 1, 1, 2), lambda a: np.tile(a, (2, 1, 1, 2)), [], device, arrays=[x]
    )
    check_op(lambda t: t.permute(2, 0, 1), lambda a: a.transpose(2, 0, 1), [], device, arrays=[x])
    check_op(lambda t: t.mT, lambda a: a.swapaxes(-1, -2), [], device, arrays=[x])
    check_op(lambda t: t.T, lambda a: a.transpose(2, 1, 0), [], device, arrays=[x])
    check_op(lambda t: t[0].t(), lambda a: a[0].T, [], device, arrays=[x])
    check_op(lambda t: t.flatten(1), lambda a: a.reshape(2, 12), [], device, arrays=[x])
    check_op(
        lambda t: t.flatten().unflatten(0, (4, -1)),
        lambda a: a.reshape(4, 6),
        [],
        device,
        arrays=[x],
    )
    check_op(lambda t: t.unsqueeze(1).squeeze(1), lambda a: a, [], device, arrays=[x])
    check_op(
        lambda t: t.expand(3, 2, 3, 4),
        lambda a: np.broadcast_to(a, (3, 2, 3, 4)),
        [],
        device,
        arrays=[x],
    )
    with pytest.raises(ValueError, match="t\\(\\) expects a tensor with at most 2 dims"):
        mta.tensor(x).t()


def test_split_chunk_cat_stack(device: str) -> None:
    x = np.arange(20.0).reshape(4, 5)
    t = mta.tensor(x, device=device)
    for got, ref in zip(t.split(2, 1), np.split(x, [2, 4], 1), strict=True):
        np.testing.assert_array_equal(to_host(got), ref)
    assert [p.shape for p in mta.split(t, [1, 3], 0)] == [(1, 5), (3, 5)]
    assert [p.shape for p in t.chunk(3, 1)] == [(4, 2), (4, 2), (4, 1)]
    assert [p.shape for p in mta.chunk(mta.zeros(2), 5)] == [(1,), (1,)]  # fewer pieces, as PyTorch
    with pytest.raises(ValueError, match="do not add up to the size 4"):
        mta.split(t, [1, 2])
    check_op(
        lambda a: mta.cat(mta.split(a, 2, 1)[::-1], 1),
        lambda a: np.concatenate([a[:, 4:], a[:, 2:4], a[:, :2]], 1),
        [(3, 5)],
        device,
    )
    check_op(
        lambda a: mta.stack(a.chunk(2, 0), 2),
        lambda a: np.stack(np.split(a, 2, 0), 2),
        [(4, 3)],
        device,
    )


# ------------------------------------------------------------------ indexing
def gather_ref(a: np.ndarray, dim: int, index: np.ndarray) -> np.ndarray:
    """``out[i][j] = a[i][index[i][j]]`` (dim 1), written with loops."""
    out = np.empty(index.shape, a.dtype)
    for pos in np.ndindex(*index.shape):
        src = list(pos)
        src[dim] = index[pos]
        out[pos] = a[tuple(src)]
    return out


def scatter_ref(a: np.ndarray, dim: int, index: np.ndarray, src: np.ndarray) -> np.ndarray:
    out = a.copy()
    for pos in np.ndindex(*index.shape):
        dst = list(pos)
        dst[dim] = index[pos]
        out[tuple(dst)] = src[pos]
    return out


@pytest.mark.parametrize("dim", [0, 1])
def test_gather(dim: int, device: str) -> None:
    rng = np.random.default_rng(7)
    index = rng.integers(0, 3, (2, 3)) if dim == 0 else rng.integers(0, 4, (3, 2))
    idx = mta.tensor(index, device=device)
    check_op(lambda a: a.gather(dim, idx), lambda a: gather_ref(a, dim, index), [(3, 4)], device)
    x = mta.tensor(np.arange(12.0).reshape(3, 4), device=device)
    assert (
        mta.gather(x, dim, idx).tolist()
        == gather_ref(np.arange(12.0).reshape(3, 4), dim, index).tolist()
    )


@pytest.mark.parametrize("dim", [0, 1])
def test_scatter(dim: int, device: str) -> None:
    index = np.array([[2, 0, 1], [0, 1, 2]]) if dim == 0 else np.array([[3, 0], [1, 2], [0, 3]])
    idx = mta.tensor(index, device=device)
    shape = index.shape
    check_op(
        lambda a, s: a.scatter(dim, idx, s),
        lambda a, s: scatter_ref(a, dim, index, s),
        [(3, 4), shape],
        device,
    )
    t = mta.zeros(3, 4, device=device)
    expected = scatter_ref(np.zeros((3, 4)), dim, index, np.full(shape, 2.5))
    np.testing.assert_array_equal(to_host(t.scatter(dim, idx, value=2.5)), expected)
    same = t.scatter_(dim, idx, value=2.5)
    assert same is t
    np.testing.assert_array_equal(to_host(t), expected)


def test_index_select_and_masked_fill(device: str) -> None:
    idx = mta.tensor([2, 0, 2], device=device)
    check_op(lambda a: a.index_select(1, idx), lambda a: a[:, [2, 0, 2]], [(3, 4)], device)
    check_op(lambda a: mta.index_select(a, 0, idx), lambda a: a[[2, 0, 2]], [(3, 4)], device)
    mask_array = np.array([[True, False, True, False]])
    mask = mta.tensor(mask_array, device=device)
    check_op(
        lambda a: a.masked_fill(mask, -1.5),
        lambda a: np.where(mask_array, -1.5, a),
        [(3, 4)],
        device,
    )
    t = mta.ones(3, 4, device=device)
    assert t.masked_fill_(mask, 0.0) is t
    np.testing.assert_array_equal(to_host(t), np.where(mask_array, 0.0, 1.0).repeat(3, 0))
    assert mta.tensor([1, 2]).masked_fill(mta.tensor([True, False]), 9).dtype == np.int64


def test_indexing_errors() -> None:
    x = mta.zeros(3, 4)
    with pytest.raises(TypeError, match="gather: index must be an integer tensor"):
        x.gather(1, mta.zeros(3, 1))
    with pytest.raises(ValueError, match="gather: index has 1 dims but the tensor has 2"):
        x.gather(1, mta.tensor([0]))
    with pytest.raises(TypeError, match="masked_fill: mask must be a bool tensor"):
        x.masked_fill(mta.zeros(3, 4), 1.0)


def test_indexing_against_torch() -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(8)
    a = rng.standard_normal((3, 5))
    index = rng.integers(0, 5, (3, 2))
    ours, theirs = mta.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    (ours.gather(1, mta.tensor(index)) ** 2).sum().backward()
    (theirs.gather(1, torch.tensor(index)) ** 2).sum().backward()
    assert ours.grad is not None
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-12)
    unique = np.array([[4, 0], [1, 2], [3, 1]])
    o = mta.tensor(a).scatter(1, mta.tensor(unique), mta.tensor(a[:, :2] * 10))
    t = torch.tensor(a).scatter(1, torch.tensor(unique), torch.tensor(a[:, :2] * 10))
    np.testing.assert_array_equal(o.numpy(), t.numpy())
    np.testing.assert_array_equal(
        mta.tensor(a).index_select(1, mta.tensor([4, 4, 0])).numpy(),
        torch.tensor(a).index_select(1, torch.tensor([4, 4, 0])).numpy(),
    )


# ------------------------------------------------------------------ einsum
@pytest.mark.parametrize(
    "equation,shapes",
    [
        ("ij,jk->ik", [(2, 3), (3, 4)]),
        ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
        ("ij->ji", [(2, 3)]),
        ("ij->", [(2, 3)]),
        ("i,j->ij", [(3,), (4,)]),
        ("ij,j", [(3, 4), (4,)]),
        ("ijk,ik->j", [(2, 3, 4), (2, 4)]),
        ("...ij,...jk->...ik", [(5, 2, 3), (3, 4)]),  # '...' broadcasts, right-aligned
        ("...ij,...jk", [(2, 2, 3), (2, 3, 4)]),  # implicit: '...' first
        ("b...,b...->b...", [(2, 3, 4), (2, 3, 4)]),
        ("...j,...j->...", [(4, 1, 3), (2, 3)]),  # size 1 broadcasts inside '...'
        ("i...->...", [(2, 3, 4)]),
        ("ij,ij->ij", [(1, 3), (2, 3)]),  # and under a letter
    ],
)
def test_einsum(equation: str, shapes: list[tuple[int, ...]], device: str) -> None:
    check_op(
        lambda *ts: mta.einsum(equation, *ts), lambda *xs: np.einsum(equation, *xs), shapes, device
    )


def test_einsum_errors() -> None:
    with pytest.raises(ValueError, match="names 2 dims of a 3-d operand"):
        mta.einsum("ij->i", mta.zeros(2, 3, 4))
    with pytest.raises(TypeError, match="wrap it with minitorch_accel.tensor"):
        mta.einsum("ij->i", np.zeros((2, 3)))
    with pytest.raises(ValueError, match="has a '.' outside '...'"):
        mta.einsum("i.j", mta.zeros(2, 3))
    with pytest.raises(ValueError, match="names more dims than an operand has"):
        mta.einsum("...ijk", mta.zeros(2, 3))
    with pytest.raises(ValueError, match="dim 'j' has sizes 3 and 4; they must match or be 1"):
        mta.einsum("ij,jk", mta.zeros(2, 3), mta.zeros(4, 5))
    with pytest.raises(ValueError, match="repeated within one operand"):
        mta.einsum("ii->i", mta.zeros(2, 2))


def test_einsum_with_ellipsis_equals_pytorchs() -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    for equation, shapes in [
        ("...ij,...jk->...ik", [(5, 2, 3), (3, 4)]),
        ("...j,...j", [(4, 1, 3), (2, 3)]),
    ]:
        xs = [rng.standard_normal(s) for s in shapes]
        ours = [mta.tensor(x, requires_grad=True) for x in xs]
        theirs = [torch.tensor(x, requires_grad=True) for x in xs]
        y, z = mta.einsum(equation, *ours), torch.einsum(equation, *theirs)
        y.sum().backward()
        z.sum().backward()
        assert y.shape == tuple(z.shape)
        np.testing.assert_allclose(y.array, z.detach().numpy(), rtol=1e-12)
        for a, b in zip(ours, theirs, strict=True):
            assert a.grad is not None and b.grad is not None
            np.testing.assert_allclose(a.grad.array, b.grad.numpy(), rtol=1e-12)


# ------------------------------------------------------------------ in place
def test_in_place_methods_stay_in_place(device: str) -> None:
    t = mta.tensor([4.0, 8.0, -2.0], device=device)
    storage = t.array
    assert t.add_(mta.tensor([1.0, 1.0, 1.0], device=device), alpha=2.0) is t
    assert t.sub_(1.0, alpha=3.0) is t
    assert t.mul_(2.0) is t
    assert t.div_(mta.tensor([2.0, 2.0, 2.0], device=device)) is t
    assert to_host(t).tolist() == [3.0, 7.0, -3.0]
    assert t.clamp_(-1.0, 5.0) is t and to_host(t).tolist() == [3.0, 5.0, -1.0]
    assert t.clip_(max=4.0) is t and to_host(t).tolist() == [3.0, 4.0, -1.0]
    assert t.copy_(mta.tensor([1.0, 2.0, 3.0], device=device)) is t
    assert t.fill_(7.0) is t and to_host(t).tolist() == [7.0, 7.0, 7.0]
    assert t.zero_() is t and to_host(t).tolist() == [0.0, 0.0, 0.0]
    assert t.array is storage  # every one wrote into the same array
    view = mta.zeros(2, 3, device=device)
    row = view[1]
    row.add_(1.0)
    assert to_host(view).tolist() == [[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]]


def test_in_place_refuses_a_result_it_cannot_hold() -> None:
    with pytest.raises(
        TypeError, match="div_: the result is float32, which a int64 tensor cannot hold"
    ):
        mta.tensor([1, 2]).div_(2)


def test_in_place_on_a_leaf_that_requires_grad_needs_no_grad() -> None:
    w = mta.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="no_grad"):
        w.sub_(1.0)
    with mta.no_grad():
        w.sub_(mta.tensor([0.5, 0.25]), alpha=2.0)
    assert w.tolist() == [0.0, 0.5] and w.requires_grad


# ------------------------------------------------------------------ dtypes
def test_dtype_methods(device: str) -> None:
    t = mta.tensor([1.7, -2.2, 0.0], device=device)
    assert t.double().dtype == np.float64 and t.half().dtype == np.float16
    assert t.float().dtype == np.float32 and t.long().dtype == np.int64
    assert t.int().dtype == np.int32 and t.int().tolist() == [1, -2, 0]
    assert t.bool().tolist() == [True, True, False]
    assert (
        t.type() == "minitorch_accel.FloatTensor"
        and t.long().type() == "minitorch_accel.LongTensor"
    )
    assert t.type(mta.float64).dtype == np.float64
    assert t.type_as(mta.tensor([1])).dtype == np.int64
    assert t.to(mta.float64).dtype == np.float64 and t.to(mta.float64).device == mta.Device(device)
    other = mta.zeros(1, dtype=mta.float16, device="cpu:2")
    moved = t.to(other)
    assert moved.dtype == np.float16 and moved.device == mta.Device("cpu:2")
    assert t.to(device, mta.float64).dtype == np.float64


def test_bfloat16_is_a_clear_error() -> None:
    with pytest.raises(
        TypeError, match="bfloat16 is not available: NumPy and CuPy have no bfloat16"
    ):
        mta.ones(2).bfloat16()


def test_tolist_item() -> None:
    assert mta.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert mta.tensor([2.5]).item() == 2.5 and isinstance(mta.tensor(3).item(), int)


# ------------------------------------------------------------------ factories
def test_ranges(device: str) -> None:
    np.testing.assert_allclose(
        to_host(mta.linspace(-1, 2, 7, device=device)), np.linspace(-1, 2, 7), rtol=1e-6
    )
    np.testing.assert_allclose(
        to_host(mta.logspace(-1, 2, 4, device=device)), np.logspace(-1, 2, 4), rtol=1e-6
    )
    np.testing.assert_allclose(to_host(mta.logspace(0, 3, 4, base=2.0)), [1, 2, 4, 8])
    assert mta.linspace(0, 1, 3, dtype=mta.float64).dtype == np.float64
    assert mta.arange(5, device=device).tolist() == [0, 1, 2, 3, 4]
    assert mta.arange(0, 1, 0.25).tolist() == [0.0, 0.25, 0.5, 0.75]
    assert mta.eye(2, 3, device=device).tolist() == [[1, 0, 0], [0, 1, 0]]
    assert mta.full((2,), 3.5, device=device).tolist() == [3.5, 3.5]


def test_like_factories(device: str) -> None:
    t = mta.tensor([[1, 2]], dtype=mta.int32, device=device)
    for made, value in ((mta.zeros_like(t), 0), (mta.ones_like(t), 1), (mta.full_like(t, 7), 7)):
        assert made.shape == (1, 2) and made.dtype == np.int32 and made.device == t.device
        assert made.tolist() == [[value, value]]


def test_random_factories(device: str) -> None:
    mta.manual_seed(0)
    perm = mta.randperm(10, device=device)
    assert perm.dtype == np.int64 and sorted(to_host(perm).tolist()) == list(range(10))
    mta.manual_seed(0)
    assert mta.randperm(10, device=device).tolist() == perm.tolist()  # seeded
    r = mta.randint(3, 7, (1000,), device=device)
    assert int(r.min()) >= 3 and int(r.max()) <= 6
    u = mta.rand(1000, device=device)
    assert float(u.min()) >= 0.0 and float(u.max()) < 1.0
    assert mta.randn(2, 3, device=device).shape == (2, 3)


def test_where(device: str) -> None:
    cond_array = np.array([True, False, True])
    cond = mta.tensor(cond_array, device=device)
    check_op(
        lambda a, b: mta.where(cond, a, b),
        lambda a, b: np.where(cond_array, a, b),
        [(3,), (2, 3)],
        device,
    )


# ------------------------------------------------------------------ defaults, modes
def test_set_default_dtype() -> None:
    try:
        mta.set_default_dtype(mta.float64)
        assert mta.get_default_dtype() == np.float64
        for t in (
            mta.zeros(2),
            mta.ones(1),
            mta.randn(2),
            mta.rand(2),
            mta.tensor([1.5]),
            mta.arange(0.0, 1.0),
            mta.linspace(0, 1, 2),
            mta.eye(2),
        ):
            assert t.dtype == np.float64
        assert mta.tensor([1]).dtype == np.int64  # ints stay int64
    finally:
        mta.set_default_dtype(mta.float32)
    assert mta.zeros(1).dtype == np.float32
    with pytest.raises(TypeError, match="expected a floating-point dtype, got int64"):
        mta.set_default_dtype(mta.int64)


def test_set_default_device() -> None:
    try:
        mta.set_default_device("cpu:1")
        assert mta.get_default_device() == mta.Device("cpu:1")
        for t in (
            mta.zeros(2),
            mta.randn(2),
            mta.tensor([1.0]),
            mta.arange(3),
            mta.randperm(3),
            mta.full((1,), 2.0),
        ):
            assert t.device == mta.Device("cpu:1")
        assert mta.zeros(1, device="cpu").device == mta.Device("cpu")
    finally:
        mta.set_default_device(None)
    assert mta.zeros(1).device == mta.Device("cpu")
    with pytest.raises(RuntimeError, match="does not exist"):
        mta.set_default_device("cpu:99")


def test_inference_mode() -> None:
    w = mta.ones(2, requires_grad=True)
    with mta.inference_mode():
        assert not mta.is_grad_enabled()
        assert not (w * 2).requires_grad
    with mta.inference_mode(False):
        assert (w * 2).requires_grad

    @mta.inference_mode()
    def predict(x: Tensor) -> Tensor:
        return x * w

    assert not predict(mta.ones(2)).requires_grad


def test_accelerator_namespace() -> None:
    available = mta.accelerator.is_available()
    assert available == mta.cuda.is_available()
    current = mta.accelerator.current_accelerator()
    assert (current is None) == (not available)
    if current is not None:
        assert current.type == "cuda"
    assert mta.accelerator.device_count() == mta.cuda.device_count()
    device = mta.accelerator.current_accelerator().type if mta.accelerator.is_available() else "cpu"
    assert mta.zeros(1, device=device).device.type == device


def test_dtype_names_match_torch() -> None:
    assert mta.int == np.int32 and mta.bool == np.bool_ and mta.double == np.float64
    assert mta.half == np.float16 and mta.long == np.int64 and mta.float == np.float32
    assert mta.zeros(2, dtype=mta.bool).dtype == np.bool_


def test_functions_against_torch() -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(9)
    x = rng.uniform(0.5, 2.0, (3, 4))
    cases = [
        ("rsqrt", lambda m, t: m.rsqrt(t)),
        ("log1p", lambda m, t: m.log1p(t)),
        ("sin", lambda m, t: m.sin(t)),
        ("cos", lambda m, t: m.cos(t)),
        ("tan", lambda m, t: m.tan(t)),
        ("sign", lambda m, t: m.sign(t - 1.0)),
        ("cumsum", lambda m, t: m.cumsum(t, 1)),
        ("cumprod", lambda m, t: m.cumprod(t, 0)),
        ("norm", lambda m, t: t.norm(3, 1)),
        ("norm_all", lambda m, t: t.norm()),
        ("repeat", lambda m, t: t.repeat(2, 1, 2)),
        ("einsum", lambda m, t: m.einsum("ij,kj->ik", t, t)),
        ("clip", lambda m, t: m.clip(t, 0.8, 1.5)),
        ("unflatten", lambda m, t: t.unflatten(1, (2, 2))),
        ("mT", lambda m, t: t.mT),
    ]
    for name, fn in cases:
        ours_in = mta.tensor(x, requires_grad=True)
        theirs_in = torch.tensor(x, requires_grad=True)
        ours, theirs = fn(mta, ours_in), fn(torch, theirs_in)
        np.testing.assert_allclose(
            ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12, err_msg=name
        )
        if name != "sign":
            ours.sum().backward()
            theirs.sum().backward()
            assert ours_in.grad is not None
            np.testing.assert_allclose(
                ours_in.grad.numpy(), theirs_in.grad.numpy(), rtol=1e-10, err_msg=name
            )
    np.testing.assert_allclose(mta.linspace(-3, 5, 9).numpy(), torch.linspace(-3, 5, 9).numpy())
    np.testing.assert_allclose(
        mta.logspace(-1, 1, 5).numpy(), torch.logspace(-1, 1, 5).numpy(), rtol=1e-6
    )
    assert [p.shape for p in mta.zeros(7, 2).chunk(3)] == [
        tuple(p.shape) for p in torch.zeros(7, 2).chunk(3)
    ]
    assert [p.shape for p in mta.zeros(7).split([2, 5])] == [
        tuple(p.shape) for p in torch.zeros(7).split([2, 5])
    ]


# ------------------------------------------------------------------ a PyTorch-style script
class _ExampleNet(mta.nn.Module):
    """The model of pytorch/examples' MNIST script, written with the names it uses."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = mta.nn.Conv2d(1, 8, 3, 1)
        self.conv2 = mta.nn.Conv2d(8, 16, 3, 1)
        self.dropout1 = mta.nn.Dropout(0.25)
        self.fc1 = mta.nn.Linear(2304, 32)
        self.fc2 = mta.nn.Linear(32, 10)

    def forward(self, x: Tensor) -> Tensor:
        F = mta.nn.functional
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = mta.flatten(x, 1)
        x = F.relu(self.fc1(x))
        return F.log_softmax(self.fc2(x), dim=1)


def test_the_mnist_example_loop_runs_and_counts_correct_predictions() -> None:
    """The train and test loops of pytorch/examples' MNIST script, names unchanged
    (``output.argmax(dim=1, keepdim=True)``, ``pred.eq(target.view_as(pred))``,
    ``output.max(1, keepdim=True)[1]``), on the embedded sample; the counted accuracy
    equals one computed with NumPy from the same outputs."""
    from minitorch_accel.data import DataLoader, TensorDataset
    from minitorch_accel.datasets import MNIST

    F = mta.nn.functional
    mta.manual_seed(0)
    images, labels = MNIST(sample=True, normalize=True).arrays
    loader = DataLoader(TensorDataset(images[:512], labels[:512]), 64, shuffle=True, seed=0)
    model = _ExampleNet()
    optimizer = mta.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    model.train()
    for data, target in loader:
        optimizer.zero_grad()
        loss = F.nll_loss(model(data), target)
        loss.backward()
        optimizer.step()
    model.eval()
    test_loss, correct, correct_max, outputs = 0.0, 0, 0, []
    with mta.no_grad():
        for data, target in DataLoader(TensorDataset(images[512:768], labels[512:768]), 64):
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction="sum").item()
            pred = output.argmax(dim=1, keepdim=True)
            correct += pred.eq(target.view_as(pred)).sum().item()
            correct_max += output.max(1, keepdim=True)[1].eq(target.view_as(pred)).sum().item()
            outputs.append(output.numpy())
    expected = int((np.concatenate(outputs).argmax(1) == labels[512:768]).sum())
    assert correct == correct_max == expected
    assert correct > 256 * 0.25  # well above chance (10%) after one pass over 512 images
    assert np.isfinite(test_loss)


def _same_code_cases() -> list[tuple[str, Callable[[Any, Any], Any]]]:
    """Code written once, run with ``lib`` = minitorch_accel and = torch on ``t``
    (a float64 (3, 4) tensor)."""
    return [
        ("eq_ne", lambda lib, t: (t.eq(t[0]).int() + t.ne(0.5).int()) * 1.0),
        (
            "lt_le_gt_ge",
            lambda lib, t: (
                t.lt(0).double()
                + t.le(0.1).double() * 2
                + t.gt(1).double() * 4
                + t.ge(-1).double() * 8
            ),
        ),
        (
            "view_as_expand_as",
            lambda lib, t: (
                t.view_as(lib.zeros(2, 6)) + t[:1].reshape(1, 4).expand_as(t).reshape(2, 6)
            ),
        ),
        ("repeat_permute_t", lambda lib, t: t.repeat(2, 1).t().permute(1, 0)),
        (
            "flatten_squeeze_unsqueeze",
            lambda lib, t: t.unsqueeze(0).unsqueeze(-1).squeeze(0).flatten(1),
        ),
        ("sub_div_alpha", lambda lib, t: t.add(t, alpha=0.5).sub(t, alpha=2.0).div(t.abs() + 1)),
        (
            "in_place_chain",
            lambda lib, t: (
                t.clone()
                .add_(t, alpha=2.0)
                .sub_(1.0, alpha=0.5)
                .mul_(t)
                .div_(3.0)
                .clamp_(-1.0, 1.0)
            ),
        ),
        (
            "masked_fill_",
            lambda lib, t: t.clone().masked_fill_(t > 0, -2.0).masked_fill(t < -1, 7.0),
        ),
        ("zero_fill_", lambda lib, t: lib.stack([t.clone().zero_(), t.clone().fill_(3.0)])),
        (
            "int_long_bool_half",
            lambda lib, t: (
                t.int().double() + t.long().double() + t.bool().double() + t.half().double()
            ),
        ),
        ("type_as", lambda lib, t: t.type_as(lib.tensor([1])).double()),
        ("where_cat", lambda lib, t: lib.cat([lib.where(t > 0, t, t * 2), t], 1)),
        (
            "like_factories",
            lambda lib, t: lib.zeros_like(t) + lib.ones_like(t) * 2 + lib.full_like(t, 3.0),
        ),
        (
            "arange_full_eye",
            lambda lib, t: (
                lib.arange(12, dtype=t.dtype).reshape(3, 4)
                + lib.full((3, 4), 2.0, dtype=t.dtype)
                + lib.eye(3, 4, dtype=t.dtype)
            ),
        ),
        ("split_chunk", lambda lib, t: lib.cat([*t.split([1, 3], 1)[::-1], *t.chunk(2, 1)], 1)),
        (
            "index_gather",
            lambda lib, t: (
                t.index_select(0, lib.tensor([2, 0]))
                + t[:2].gather(1, lib.tensor([[3, 1, 0, 0], [2, 2, 1, 0]]))
            ),
        ),
        ("scatter_value", lambda lib, t: t.scatter(1, lib.tensor([[0], [3], [1]]), 9.0)),
        (
            "sort_values",
            lambda lib, t: t.sort(0, descending=True).values + t.max(1, keepdim=True).values,
        ),
    ]


@pytest.mark.parametrize("name,fn", _same_code_cases(), ids=[c[0] for c in _same_code_cases()])
def test_same_code_as_torch(name: str, fn: Callable[[Any, Any], Any]) -> None:
    torch = pytest.importorskip("torch")
    x = np.round(np.random.default_rng(10).uniform(-2, 2, (3, 4)), 1)
    ours, theirs = fn(mta, mta.tensor(x)), fn(torch, torch.tensor(x))
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype) == str(theirs.dtype).replace("torch.", "")
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-12)


def test_sizes_against_torch() -> None:
    torch = pytest.importorskip("torch")
    ours, theirs = mta.zeros(2, 3, 5, dtype=mta.float16), torch.zeros(2, 3, 5, dtype=torch.float16)
    assert ours.size() == tuple(theirs.size()) and ours.size(-2) == theirs.size(-2)
    assert (ours.dim(), ours.ndimension(), ours.numel(), ours.nelement(), ours.element_size()) == (
        theirs.dim(),
        theirs.ndimension(),
        theirs.numel(),
        theirs.nelement(),
        theirs.element_size(),
    )
    assert ours.size().numel() == theirs.size().numel()
    assert mta.tensor([[1.5, 2]]).tolist() == torch.tensor([[1.5, 2]]).tolist()
