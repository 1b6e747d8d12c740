"""Type promotion, casts, factories and the autograd engine against PyTorch.

Each case runs through minitorch_accel and through PyTorch (the oracle; skipped where it
is not installed) and compares dtypes, values (NaN and inf positions, signs of zeros),
``requires_grad`` and gradients. The promotion rule is also checked against a reference
written here, independently of both: the highest category (bool < integer < float)
among the operands wins, and the dtype comes from the highest-ranked operands of that
category (tensors with dimensions, then 0-d tensors, then Python numbers).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest

import minitorch_accel as mta
from minitorch_accel.utils.gradcheck import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]
SPECIAL = [-np.inf, -2.0, -0.0, 0.0, 0.5, 2.0, np.inf, np.nan]


def tdt(name: str) -> Any:
    """The torch dtype of a NumPy dtype name."""
    return getattr(torch, name)


def same(mine: Any, theirs: Any, atol: float = 0.0, rtol: float = 0.0) -> None:
    """Equal dtype, shape and values (NaN where NaN, equal infinities, signs of zeros)."""
    if isinstance(theirs, torch.Tensor):
        assert isinstance(mine, mta.Tensor), f"expected a Tensor, got {type(mine).__name__}"
        assert str(mine.dtype) == str(theirs.dtype).replace("torch.", "")
        theirs = theirs.detach().numpy()
        mine = mine.detach().numpy()
    a, b = np.asarray(mine), np.asarray(theirs)
    assert a.shape == b.shape, f"shape {a.shape} != torch's {b.shape}"
    if a.dtype.kind == "f":
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        np.testing.assert_array_equal(np.isnan(a64), np.isnan(b64), err_msg="NaN positions")
        ok = ~np.isnan(a64)
        np.testing.assert_allclose(a64[ok], b64[ok], atol=atol, rtol=rtol)
        exact = ok & ((a64 == 0) | np.isinf(a64))
        np.testing.assert_array_equal(np.signbit(a64[exact]), np.signbit(b64[exact]), "signs")
    else:
        np.testing.assert_array_equal(a, b)


@contextmanager
def default_float64() -> Iterator[None]:
    mta.set_default_dtype(mta.float64)
    torch.set_default_dtype(torch.float64)
    try:
        yield
    finally:
        mta.set_default_dtype(mta.float32)
        torch.set_default_dtype(torch.float32)


# ------------------------------------------------------------------ A2: integer casts
CASTS: list[tuple[str, Callable[[Any], Any]]] = [
    ("long", lambda x: x.long()),
    ("int", lambda x: x.int()),
    ("short", lambda x: x.short()),
    ("byte", lambda x: x.byte()),
    ("char", lambda x: x.char()),
    ("bool", lambda x: x.bool()),
    ("to_int64", lambda x: x.to(mta.int64 if isinstance(x, mta.Tensor) else torch.int64)),
    ("type_int32", lambda x: x.type(mta.int32 if isinstance(x, mta.Tensor) else torch.int32)),
]


@pytest.mark.parametrize("name,cast", CASTS, ids=[c[0] for c in CASTS])
def test_integer_and_bool_casts_cut_the_graph(name: str, cast: Callable[[Any], Any]) -> None:
    values = [1.5, -2.7, 0.0]
    mine = cast(mta.tensor(values, requires_grad=True))
    theirs = cast(torch.tensor(values, requires_grad=True))
    same(mine, theirs)
    assert mine.requires_grad is theirs.requires_grad is False
    assert mine.grad_fn is None and theirs.grad_fn is None


def test_gradient_does_not_flow_through_an_integer_cast() -> None:
    x = mta.tensor([1.5, 2.7], dtype=mta.float64, requires_grad=True)
    tx = torch.tensor([1.5, 2.7], dtype=torch.float64, requires_grad=True)
    (x * x.long().double()).sum().backward()
    (tx * tx.long().double()).sum().backward()
    same(x.grad, tx.grad)
    with pytest.raises(RuntimeError, match="does not require grad"):
        x.long().float().sum().backward()
    with pytest.raises(RuntimeError, match="does not require grad"):
        tx.long().float().sum().backward()
    # a float cast stays differentiable
    y = x.float()
    assert y.requires_grad and y.grad_fn is not None


# ------------------------------------------------------------------ A4: the promotion rule
def reference_promote(a: str, b: str) -> str:
    """PyTorch's ``promote_types``, written from its documented table."""
    if a == b:
        return a
    fa, fb = a.startswith("float"), b.startswith("float")
    if fa and fb:
        return max(a, b, key=lambda n: np.dtype(n).itemsize)
    if fa or fb:
        return a if fa else b
    if {"uint16", "uint32", "uint64"} & {a, b}:
        raise TypeError("not promoted")
    for x, y in ((a, b), (b, a)):
        if x == "bool":
            return y
    sa, sb = np.dtype(a), np.dtype(b)
    if (sa.kind == "u") == (sb.kind == "u"):
        return max(a, b, key=lambda n: np.dtype(n).itemsize)
    unsigned, signed = (sa, sb) if sa.kind == "u" else (sb, sa)
    return f"int{max(2 * unsigned.itemsize, signed.itemsize) * 8}"


def category(name: str) -> int:
    return 0 if name == "bool" else 2 if name.startswith("float") else 1


def reference_result_type(specs: list[tuple[int, str]]) -> str:
    """``specs``: (rank, dtype) with rank 0 a tensor with dims, 1 a 0-d tensor, 2 a
    number (counted as bool, int64 or the default float dtype).
    """
    top = max(category(d) for _, d in specs)
    rank = min(r for r, d in specs if category(d) == top)
    chosen = [d for r, d in specs if r == rank and category(d) == top]
    result = chosen[0]
    for d in chosen[1:]:
        result = reference_promote(result, d)
    return result


def test_promote_types_table() -> None:
    names = [*DTYPES, "uint16"]
    for a, b in itertools.product(names, names):
        try:
            expected = reference_promote(a, b)
        except TypeError:
            with pytest.raises(TypeError, match="cannot be combined"):
                mta.promote_types(a, b)
            with pytest.raises(RuntimeError):
                torch.promote_types(tdt(a), tdt(b))
            continue
        assert str(mta.promote_types(a, b)) == expected, (a, b)
        assert str(torch.promote_types(tdt(a), tdt(b))) == f"torch.{expected}", (a, b)


def test_can_cast_table() -> None:
    for a, b in itertools.product(DTYPES, DTYPES):
        assert mta.can_cast(a, b) == torch.can_cast(tdt(a), tdt(b)), (a, b)


# An operand: ("dim", dtype) a tensor with dimensions, ("0d", dtype) a 0-d tensor, or
# ("num", value) a Python number.
NUMBERS: list[Any] = [True, -1, 300, 2**40, 2.5]
OPERANDS = (
    [("dim", d) for d in DTYPES] + [("0d", d) for d in DTYPES] + [("num", v) for v in NUMBERS]
)


def make(spec: tuple[str, Any], lib: Any) -> Any:
    kind, what = spec
    if kind == "num":
        return what
    values = [True, False, True] if what == "bool" else [1, 2, 3]
    data = values if kind == "dim" else values[0]
    if lib is torch:
        return torch.tensor(data, dtype=tdt(what))
    return mta.tensor(data, dtype=what)


def spec_rank(spec: tuple[str, Any]) -> tuple[int, str]:
    kind, what = spec
    if kind == "num":
        name = (
            "bool"
            if isinstance(what, bool)
            else "int64"
            if isinstance(what, int)
            else str(mta.get_default_dtype())
        )
        return 2, name
    return (0 if kind == "dim" else 1), what


PAIRS = [
    (a, b) for a, b in itertools.product(OPERANDS, OPERANDS) if "num" not in (a[0], b[0]) or a != b
]
PAIRS = [(a, b) for a, b in PAIRS if not (a[0] == "num" and b[0] == "num")]


def test_result_type_table_against_torch_and_the_reference() -> None:
    for a, b in PAIRS:
        ma, mb, ta, tb = make(a, mta), make(b, mta), make(a, torch), make(b, torch)
        expected = reference_result_type([spec_rank(a), spec_rank(b)])
        assert str(mta.result_type(ma, mb)) == expected, (a, b)
        assert str(torch.result_type(ta, tb)) == f"torch.{expected}", (a, b)


def test_result_type_follows_the_default_dtype() -> None:
    with default_float64():
        for a, b in PAIRS:
            if "num" not in (a[0], b[0]):
                continue
            ma, mb, ta, tb = make(a, mta), make(b, mta), make(a, torch), make(b, torch)
            expected = reference_result_type([spec_rank(a), spec_rank(b)])
            assert str(mta.result_type(ma, mb)) == expected, (a, b)
            assert str(torch.result_type(ta, tb)) == f"torch.{expected}", (a, b)


OPS: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("add", lambda a, b: a + b),
    ("mul", lambda a, b: a * b),
    ("lt", lambda a, b: a < b),
    ("eq", lambda a, b: a == b),
    ("ge", lambda a, b: a >= b),
    ("truediv", lambda a, b: a / b),
    (
        "maximum",
        lambda a, b: (
            mta if isinstance(a, mta.Tensor) or isinstance(b, mta.Tensor) else torch
        ).maximum(a, b),
    ),
]


@pytest.mark.parametrize("name,op", OPS, ids=[o[0] for o in OPS])
def test_binary_ops_promote_and_wrap_as_torch(name: str, op: Callable[[Any, Any], Any]) -> None:
    """Dtype and values of every operand pair; ints out of range wrap around (B1)."""
    checked = 0
    for a, b in PAIRS:
        if name == "maximum" and "num" in (a[0], b[0]):
            continue  # torch.maximum takes tensors only
        try:
            theirs = op(make(a, torch), make(b, torch))
        except (RuntimeError, TypeError):
            continue  # torch refuses (e.g. 2**40 next to float16 is fine, bool - bool not)
        mine = op(make(a, mta), make(b, mta))
        same(mine, theirs)
        checked += 1
    assert checked > len(PAIRS) // 2


def test_the_audit_cases() -> None:
    t = mta
    assert (t.tensor([1.0, 2.0]) + t.tensor(1.5, dtype=t.float64)).dtype == t.float32
    assert (t.tensor([1.0, 2.0], dtype=t.float16) + t.tensor(1.5)).dtype == t.float16
    assert (t.tensor([1, 2], dtype=t.int8) + t.tensor(5)).dtype == t.int8
    assert (t.tensor([1, 2], dtype=t.int32) + t.tensor(1.5, dtype=t.float64)).dtype == t.float64
    same(t.tensor([True, False]) ** 2, torch.tensor([True, False]) ** 2)  # A17: int64
    same(
        t.tensor([16777217]) == t.tensor([16777216.0]),
        torch.tensor([16777217]) == torch.tensor([16777216.0]),
    )
    same(t.tensor([-1], dtype=t.uint8), torch.tensor([-1], dtype=torch.uint8))  # B1
    same(t.tensor([-255, 255], dtype=t.uint8), torch.tensor([-255, 255], dtype=torch.uint8))
    for values, dtype in [
        ([300], "int8"),
        ([-129], "int8"),
        ([256], "uint8"),
        ([-256], "uint8"),
        ([1.5e10], "int32"),
    ]:
        with pytest.raises(
            RuntimeError, match=f"cannot be converted to type {dtype} without overflow"
        ):
            torch.tensor(values, dtype=tdt(dtype))
        with pytest.raises(
            RuntimeError, match=f"cannot be converted to type {dtype} without overflow"
        ):
            t.tensor(values, dtype=dtype)
    same(t.tensor([1, 2], dtype=t.uint8) < -1, torch.tensor([1, 2], dtype=torch.uint8) < -1)
    # with inplace: x *= 0-d float64 keeps float32
    x = t.ones(2)
    x *= t.tensor(0.1, dtype=t.float64)
    assert x.dtype == t.float32


def test_default_float64_int_division_and_scalars() -> None:
    """A19."""
    with default_float64():
        for fn in (
            lambda lib: lib.tensor([1, 2]) / 2,
            lambda lib: lib.tensor([1, 2]) + 1.5,
            lambda lib: 1.5 * lib.tensor([True]),
            lambda lib: lib.tensor([1], dtype=lib.int8) + lib.tensor(1.5, dtype=lib.float32),
            lambda lib: lib.where(lib.tensor([True, False]), 1.5, 0),
            lambda lib: lib.tensor([1, 2]).exp(),
            lambda lib: lib.tensor([1.5]),
        ):
            same(fn(mta), fn(torch), rtol=1e-12)


def test_where_with_numbers() -> None:
    """A16: numbers take part as in PyTorch's ``where``."""
    cond = [True, False, True]
    for a, b in [(1, 0), (1.0, 0), (True, False), (1, 2.5)]:
        same(mta.where(mta.tensor(cond), a, b), torch.where(torch.tensor(cond), a, b))
    for dtype in ["int8", "float16", "float64"]:
        mine = mta.where(mta.tensor(cond), mta.tensor([1, 2, 3], dtype=dtype), 7)
        theirs = torch.where(torch.tensor(cond), torch.tensor([1, 2, 3], dtype=tdt(dtype)), 7)
        same(mine, theirs)
        mine = mta.where(
            mta.tensor(cond), mta.ones(3, dtype=dtype), mta.tensor(2.0, dtype=mta.float64)
        )
        theirs = torch.where(
            torch.tensor(cond),
            torch.ones(3, dtype=tdt(dtype)),
            torch.tensor(2.0, dtype=torch.float64),
        )
        same(mine, theirs)


def test_comparison_with_a_list_falls_back_to_identity() -> None:
    """A27: ``==``/``!=`` with a list give a Python bool; ``<`` raises; ``eq`` too."""
    for lib in (mta, torch):
        x = lib.tensor([1.0, 2.0])
        assert (x == [1.0, 3.0]) is False and (x != [1.0, 3.0]) is True
        assert (x == None) is False and (x == "a") is False  # noqa: E711
        with pytest.raises(TypeError, match="not supported between"):
            x < [1.0, 3.0]  # noqa: B015
        with pytest.raises(TypeError):
            lib.eq(x, [1.0, 3.0])
    # arrays still compare elementwise, as in PyTorch
    same(
        mta.tensor([1.0, 2.0]) == np.array([1.0, 3.0]),
        torch.tensor([1.0, 2.0]) == np.array([1.0, 3.0]),
    )
    with pytest.raises(TypeError, match="expected a Tensor or a number, got list"):
        mta.eq(mta.tensor([1.0]), [1.0])


# ------------------------------------------------------------------ A20, A21, B6: factories
TENSOR_DATA: list[Callable[[Any], Any]] = [
    lambda lib: [np.float64(1.5), 2.0],
    lambda lib: [np.float32(1.5), 2.0],
    lambda lib: [np.array([1.0, 2.0]), np.array([3.0, 4.0])],
    lambda lib: [np.array([1, 2], dtype=np.int8), np.array([1, 2], dtype=np.uint8)],
    lambda lib: [[np.float64(1.5)], [2]],
    lambda lib: [True, np.int32(1)],
    lambda lib: [np.float16(1.5), 1],
    lambda lib: [np.int8(1), 2.5],
    lambda lib: [lib.tensor([1.0]), lib.tensor([2.0])],
    lambda lib: [lib.tensor(1.0), lib.tensor(2.0)],
    lambda lib: [lib.tensor([[1]]), lib.tensor([[2]])],
    lambda lib: [lib.tensor([1.0], dtype=lib.float64), 2.0],
    lambda lib: [],
    lambda lib: [[], []],
    lambda lib: np.float64(1.5),
    lambda lib: [1, 2.5, True],
]


@pytest.mark.parametrize("make_data", TENSOR_DATA)
def test_tensor_dtype_and_shape_inference(make_data: Callable[[Any], Any]) -> None:
    same(mta.tensor(make_data(mta)), torch.tensor(make_data(torch)))
    with default_float64():
        same(mta.tensor(make_data(mta)), torch.tensor(make_data(torch)))


EXPLICIT = [
    (0.1, "float64"),
    ([0.1, 2], "float64"),
    ([16777217.0, -3.0], "int64"),
    ([1.7, -1.7], "int32"),
    ([True, 2.5], "float16"),
    ([-1, 255], "uint8"),
    ([np.float64(0.1), 1], "float64"),
]


@pytest.mark.parametrize("data,dtype", EXPLICIT)
def test_tensor_with_an_explicit_dtype_converts_each_number_once(data: Any, dtype: str) -> None:
    """A Python float given with dtype=float64 keeps its float64 value (not rounded
    through float32 first); floats given an integer dtype truncate from float64.
    """
    same(mta.tensor(data, dtype=dtype), torch.tensor(data, dtype=tdt(dtype)))


def test_tensor_of_a_list_of_multi_element_tensors_is_refused() -> None:
    with pytest.raises(ValueError, match="only one element tensors"):
        torch.tensor([torch.tensor([1.0, 2.0]), torch.tensor([2.0, 3.0])])
    with pytest.raises(ValueError, match="only one element tensors"):
        mta.tensor([mta.tensor([1.0, 2.0]), mta.tensor([2.0, 3.0])])


def test_arange_with_tensor_arguments() -> None:
    for fn in (
        lambda lib: lib.arange(lib.tensor(3)),
        lambda lib: lib.arange(lib.tensor(3.0)),
        lambda lib: lib.arange(0, lib.tensor(3), 1.0),
    ):
        same(fn(mta), fn(torch))


LIKE = ["zeros_like", "ones_like", "empty_like", "rand_like", "randn_like"]


@pytest.mark.parametrize("name", LIKE)
def test_like_factories_keywords(name: str) -> None:
    for lib in (mta, torch):
        x = lib.ones(2, 3, dtype=lib.float64)
        fn = getattr(lib, name)
        out = fn(x, requires_grad=True)
        assert out.requires_grad and out.is_leaf and tuple(out.shape) == (2, 3)
        assert str(out.dtype).endswith("float64")
        assert str(fn(x, dtype=lib.float32).dtype).endswith("float32")
        if not name.startswith("rand"):
            assert str(fn(x, dtype=lib.int64).dtype).endswith("int64")
            with pytest.raises(RuntimeError, match="floating"):
                fn(lib.tensor([1, 2]), requires_grad=True)


def test_full_like_keywords() -> None:
    for fn in (
        lambda lib: lib.full_like(lib.ones(2, dtype=lib.float64), 3.0, requires_grad=True),
        lambda lib: lib.full_like(lib.ones(2, dtype=lib.int32), 3.7),
        lambda lib: lib.full_like(lib.ones(2), 3.0, dtype=lib.int64),
    ):
        mine, theirs = fn(mta), fn(torch)
        same(mine, theirs)
        assert mine.requires_grad == theirs.requires_grad


# ------------------------------------------------------------------ B2: tensor clamp bounds
def _clamp_case(lib: Any, x: np.ndarray, lo: np.ndarray | None, hi: np.ndarray | None) -> Any:
    xt = lib.tensor(x, requires_grad=True)
    lt = None if lo is None else lib.tensor(lo, requires_grad=True)
    ht = None if hi is None else lib.tensor(hi, requires_grad=True)
    out = lib.clamp(xt, lt, ht)
    out.backward(lib.tensor(np.arange(1.0, out.numel() + 1).reshape(tuple(out.shape))))
    return out, [t.grad for t in (xt, lt, ht) if t is not None]


@pytest.mark.parametrize("which", ["both", "min", "max"])
def test_clamp_with_tensor_bounds_values_and_gradients(which: str) -> None:
    rng = np.random.default_rng(0)
    x = np.array([-2.0, 0.0, 2.0, 1.0, np.nan, 0.5, -1.0, 3.0])
    lo = np.array([-1.0, 1.0, 1.0, 2.0, 0.0, np.nan, -1.0, 0.0])  # 1.0 > 0.0 at index 3
    hi = np.array([0.0, 2.0, 1.5, 0.5, 1.0, 1.0, 1.0, np.inf])
    lo_, hi_ = (lo if which != "max" else None), (hi if which != "min" else None)
    mine, mine_grads = _clamp_case(mta, x, lo_, hi_)
    theirs, their_grads = _clamp_case(torch, x, lo_, hi_)
    same(mine, theirs)
    for g, tg in zip(mine_grads, their_grads, strict=True):
        same(g, tg)
    # broadcasting bounds: their gradients are summed to their shapes
    x2 = rng.standard_normal((2, 3))
    lo2, hi2 = rng.standard_normal((2, 1)) - 0.5, rng.standard_normal(3) + 0.5
    mine, mine_grads = _clamp_case(
        mta, x2, lo2 if which != "max" else None, hi2 if which != "min" else None
    )
    theirs, their_grads = _clamp_case(
        torch, x2, lo2 if which != "max" else None, hi2 if which != "min" else None
    )
    same(mine, theirs, rtol=1e-6)
    for g, tg in zip(mine_grads, their_grads, strict=True):
        same(g, tg, rtol=1e-6)


def test_clamp_tensor_bounds_gradcheck_and_dtype() -> None:
    x = np.array([-2.0, 0.3, 2.0, 0.9])
    lo, hi = np.array([-1.0, -0.5, 1.0, 0.2]), np.array([0.0, 0.8, 1.5, 1.3])
    leaves = [mta.tensor(a, dtype=mta.float64, requires_grad=True) for a in (x, lo, hi)]
    assert gradcheck(lambda a, b, c: mta.clamp(a, b, c), leaves)
    assert gradgradcheck(lambda a, b, c: mta.clamp(a, b, c) ** 2, leaves)
    for fn in (
        lambda lib: lib.tensor([1, 2]).clamp(lib.tensor([0.5, 1.5])),
        lambda lib: lib.tensor([1, 2], dtype=lib.int8).clamp(lib.tensor(3)),
        lambda lib: lib.tensor([1.0, 2.0]).clamp(lib.tensor([0.5], dtype=lib.float64)),
        lambda lib: lib.tensor([1, 2]).clamp(0.5),
        lambda lib: lib.tensor([1.0, 2.0]).clip(min=lib.tensor([[0.0], [1.5]])),
    ):
        same(fn(mta), fn(torch))


def test_clamp_bad_bounds_errors() -> None:
    x = mta.tensor([-2.0, 0.0, 2.0])
    with pytest.raises(TypeError, match="min=str"):
        x.clamp(min="a")
    with pytest.raises(TypeError, match="both be numbers or both be Tensors"):
        x.clamp(min=0.0, max=mta.ones(3))
    with pytest.raises(TypeError):
        torch.tensor([-2.0, 0.0, 2.0]).clamp(min=0.0, max=torch.ones(3))
    with pytest.raises(ValueError, match="at least one of min and max"):
        mta.clamp(x)


# ------------------------------------------------------------------ B6: alpha, rounding_mode
def test_add_sub_alpha() -> None:
    for fn in (
        lambda lib: lib.add(lib.tensor([1.0, 2.0]), lib.tensor([1.0, 3.0]), alpha=3),
        lambda lib: lib.sub(lib.tensor([1, 2]), lib.tensor([5, 1]), alpha=2),
        lambda lib: lib.add(lib.tensor([1.0, 2.0]), 2, alpha=0.5),
        lambda lib: lib.tensor([1.0, 2.0]).sub(lib.tensor([1.0, 3.0]), alpha=-1.5),
    ):
        same(fn(mta), fn(torch))
    with pytest.raises(TypeError, match="alpha=1.5 is a float"):
        mta.add(mta.tensor([1, 2]), mta.tensor([1, 2]), alpha=1.5)
    x = mta.tensor([1.0, 2.0], requires_grad=True)
    y = mta.tensor([3.0, 4.0], requires_grad=True)
    mta.sub(x, y, alpha=3).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0] and y.grad.tolist() == [-3.0, -3.0]


@pytest.mark.parametrize("mode", [None, "trunc", "floor"])
def test_div_rounding_modes(mode: str | None) -> None:
    grid = np.array([*SPECIAL, 7.0, -7.0, 5.5])
    a, b = np.meshgrid(grid, grid)
    for dtype in ("float32", "float64"):
        mine = mta.div(mta.tensor(a, dtype=dtype), mta.tensor(b, dtype=dtype), rounding_mode=mode)
        theirs = torch.div(
            torch.tensor(a, dtype=tdt(dtype)), torch.tensor(b, dtype=tdt(dtype)), rounding_mode=mode
        )
        same(mine, theirs)
    ints = np.array([7, -7, 6, -6, 1, 0])
    ia, ib = np.meshgrid(ints, np.array([2, -2, 3, -3, 1, -1]))
    for dtype in ("int8", "int64", "uint8"):
        if dtype == "uint8":
            ia, ib = np.abs(ia), np.abs(ib)
        mine = mta.div(mta.tensor(ia, dtype=dtype), mta.tensor(ib, dtype=dtype), rounding_mode=mode)
        theirs = torch.div(
            torch.tensor(ia, dtype=tdt(dtype)),
            torch.tensor(ib, dtype=tdt(dtype)),
            rounding_mode=mode,
        )
        same(mine, theirs)
        same(
            mta.div(mta.tensor(ia, dtype=dtype), 2, rounding_mode=mode),
            torch.div(torch.tensor(ia, dtype=tdt(dtype)), 2, rounding_mode=mode),
        )
    # the gradient of a rounded division is 0 (also for an infinite incoming gradient)
    x = mta.tensor([1.5, -2.5], requires_grad=True)
    tx = torch.tensor([1.5, -2.5], requires_grad=True)
    mta.div(x, 2.0, rounding_mode=mode).backward(mta.tensor([1.0, np.inf]))
    torch.div(tx, 2.0, rounding_mode=mode).backward(torch.tensor([1.0, np.inf]))
    same(x.grad, tx.grad)


def test_div_errors_and_in_place() -> None:
    with pytest.raises(ZeroDivisionError):
        mta.div(mta.tensor([1, 2]), 0, rounding_mode="floor")
    with pytest.raises(ValueError, match="rounding_mode must be None, 'trunc' or 'floor'"):
        mta.div(mta.tensor([1.0]), 2.0, rounding_mode="round")
    for mode in ("floor", "trunc"):
        i, ti = mta.tensor([7, -7]), torch.tensor([7, -7])
        i.div_(2, rounding_mode=mode)
        ti.div_(2, rounding_mode=mode)
        same(i, ti)
    with pytest.raises(TypeError, match="cannot hold"):
        mta.tensor([7, -7]).div_(2.5, rounding_mode="floor")
    with pytest.raises(TypeError, match="cannot hold"):
        mta.tensor([7, -7]).div_(2)


# ------------------------------------------------------------------ A22, A23: pow gradients
def _pow_grads(lib: Any, base: np.ndarray, exponent: Any, seed: float) -> tuple[Any, ...]:
    x = lib.tensor(base, dtype=lib.float64, requires_grad=True)
    y = (
        lib.tensor(exponent, dtype=lib.float64, requires_grad=True)
        if isinstance(exponent, np.ndarray)
        else exponent
    )
    out = x**y
    out.backward(lib.full_like(out, seed))
    return out, x.grad, (y.grad if isinstance(exponent, np.ndarray) else None)


@pytest.mark.parametrize("seed", [1.0, np.inf])
def test_pow_tensor_exponent_gradients_on_the_grid(seed: float) -> None:
    exps = np.array([-np.inf, -2.0, -0.5, 0.0, 0.5, 1.0, 2.0, 3.0, np.inf, np.nan])
    base, exponent = np.meshgrid(np.array(SPECIAL), exps)
    mine = _pow_grads(mta, base.ravel(), exponent.ravel(), seed)
    theirs = _pow_grads(torch, base.ravel(), exponent.ravel(), seed)
    for m, t in zip(mine, theirs, strict=True):
        same(m, t, rtol=1e-12)


@pytest.mark.parametrize("seed", [1.0, np.inf])
@pytest.mark.parametrize("p", [0, 0.5, -0.5, 1, 2, 3, -1, -2, 1.5, 2.5, -1.5])
def test_pow_scalar_exponent_values_and_gradients(p: float, seed: float) -> None:
    base = np.array([*SPECIAL, -3.0, 1.0])
    for m, t in zip(_pow_grads(mta, base, p, seed), _pow_grads(torch, base, p, seed), strict=True):
        if t is not None:
            same(m, t, rtol=1e-12)
    for dtype in ("float32", "float64"):  # the forward's special cases, in both dtypes
        same(
            mta.tensor(base, dtype=dtype) ** p, torch.tensor(base, dtype=tdt(dtype)) ** p, rtol=1e-6
        )


def test_pow_scalar_base_gradients() -> None:
    exps = np.array([-np.inf, -2.0, -0.0, 0.0, 0.5, 2.0, np.inf, np.nan])
    for base in (0.0, 2.0, 0.5):
        y, ty = (
            mta.tensor(exps, dtype=mta.float64, requires_grad=True),
            torch.tensor(exps, requires_grad=True),
        )
        out, tout = base**y, base**ty
        out.sum().backward()
        tout.sum().backward()
        same(out, tout)
        same(y.grad, ty.grad, rtol=1e-12)


def test_pow_gradcheck_away_from_zero() -> None:
    rng = np.random.default_rng(1)
    a = rng.uniform(0.5, 2.0, (3, 4))
    b = rng.uniform(-1.5, 2.5, (3, 4))
    leaves = [mta.tensor(v, dtype=mta.float64, requires_grad=True) for v in (a, b)]
    assert gradcheck(lambda x, y: x**y, leaves)
    assert gradgradcheck(lambda x, y: x**y, leaves)
    for p in (0.5, -0.5, 3, 1.5):
        assert gradgradcheck(lambda x, p=p: x**p, leaves[:1])


# ------------------------------------------------------------------ A24, A25, B6: autograd
def test_grad_allow_unused_gives_none_and_materialize_gives_zeros() -> None:
    for lib in (mta, torch):
        x, y = lib.ones(3, requires_grad=True), lib.ones(3, requires_grad=True)
        assert lib.autograd.grad((x * 2).sum(), [x, y], allow_unused=True)[1] is None
        gx, gy = lib.autograd.grad((x * 2).sum(), [x, y], materialize_grads=True)
        assert gy.tolist() == [0.0, 0.0, 0.0] and gx.tolist() == [2.0, 2.0, 2.0]
        with pytest.raises(ValueError, match="allow_unused"):
            lib.autograd.grad((x * 2).sum(), [x, y], materialize_grads=True, allow_unused=False)
        with pytest.raises(RuntimeError, match="allow_unused=True"):
            lib.autograd.grad((x * 2).sum(), [x, y])


def test_retains_grad_stays_true_after_backward() -> None:
    for lib in (mta, torch):
        x = lib.ones(3, requires_grad=True)
        y = x * 2
        y.retain_grad()
        assert y.retains_grad
        y.sum().backward()
        assert y.retains_grad and y.grad.tolist() == [1.0, 1.0, 1.0]
        assert not x.retains_grad


def _backward_inputs(lib: Any) -> list[Any]:
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = lib.tensor([3.0, 4.0], requires_grad=True)
    z = lib.tensor([5.0], requires_grad=True)
    h = x * y
    (h * h).sum().backward(inputs=[x, z])  # only x; z is unused
    first = [x.grad, y.grad, z.grad]
    h2 = x * 3
    (h2 * y).sum().backward(inputs=[h2])  # a non-leaf input
    return [*first, h2.grad, x.grad]


def test_backward_inputs_accumulates_only_into_those() -> None:
    mine, theirs = _backward_inputs(mta), _backward_inputs(torch)
    for m, t in zip(mine, theirs, strict=True):
        if t is None:
            assert m is None
        else:
            same(m, t)
    for lib in (mta, torch):
        x = lib.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError, match="cannot be empty"):
            (x * 2).sum().backward(inputs=[])
        # one tensor, not a list
        (x * 2).sum().backward(inputs=x)
        assert x.grad.tolist() == [2.0, 2.0]
    with pytest.raises(RuntimeError, match="does not require grad"):
        (mta.ones(2, requires_grad=True) * 2).sum().backward(inputs=[mta.ones(2)])
