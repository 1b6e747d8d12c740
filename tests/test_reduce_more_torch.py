"""Reductions and scans against PyTorch: the audit's silent differences (var's signature,
softmax's implicit dim, uint8 and float16 sums, NaN in median and mode, var with too few
samples, ``dim=()``, 0-d scans, ``dtype=``) and the added reductions (prod, std,
std_mean, var_mean, nansum, nanmean, nanmedian, quantile, nanquantile, count_nonzero,
cummax, cummin, logcumsumexp, aminmax, diff).

Each is checked against PyTorch (values, dtypes, shapes, float64 gradients, non-finite
points included), against a NumPy reference written here, and with gradcheck and
gradgradcheck, which need no PyTorch.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import minitorch_accel as mta
from minitorch_accel.core.tensor import Tensor
from minitorch_accel.utils.gradcheck import gradcheck, gradgradcheck

nan, inf = float("nan"), float("inf")
SPECIAL = [-inf, -2.0, -0.0, 0.0, 0.5, 2.0, inf, nan]
INT_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64"]
ALL_DTYPES = [*INT_DTYPES, "float16", "float32", "float64"]


def torch_or_skip() -> Any:
    return pytest.importorskip("torch")


def same(ours: Tensor, theirs: Any, rtol: float = 1e-6, atol: float = 0.0) -> None:
    """Equal shapes and dtypes, and values: NaN where PyTorch has NaN, equal infinities,
    finite values within the tolerance.
    """
    expected = theirs.detach().numpy()
    got = np.asarray(ours.detach())
    assert got.shape == expected.shape
    assert str(got.dtype) == str(theirs.dtype).replace("torch.", "")
    if got.dtype.kind == "f":
        np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)
    else:
        np.testing.assert_array_equal(got, expected)


def grads_of(
    fn_ours: Callable[[Tensor], Any],
    fn_theirs: Callable[[Any], Any],
    data: np.ndarray,
    seed_value: float | None = None,
) -> tuple[Tensor, Any]:
    """The float64 gradients of ``(out * w).sum()`` (``w`` all ``seed_value``, or fixed
    random numbers) in both libraries.
    """
    torch = torch_or_skip()
    ours = mta.tensor(data, dtype=mta.float64, requires_grad=True)
    theirs = torch.tensor(data, dtype=torch.float64, requires_grad=True)
    out_ours, out_theirs = fn_ours(ours), fn_theirs(theirs)
    same(out_ours, out_theirs, rtol=1e-12)
    if seed_value is None:
        w = np.random.default_rng(1).uniform(0.5, 1.5, out_theirs.shape)
    else:
        w = np.full(out_theirs.shape, seed_value)
    (out_ours * mta.tensor(w, dtype=mta.float64)).sum().backward()
    (out_theirs * torch.tensor(w, dtype=torch.float64)).sum().backward()
    assert ours.grad is not None
    same(ours.grad, theirs.grad, rtol=1e-10, atol=1e-12)
    return ours.grad, theirs.grad


def check_grads(fn: Callable[..., Tensor], *arrays: np.ndarray) -> None:
    leaves = [mta.tensor(a, dtype=mta.float64, requires_grad=True) for a in arrays]
    assert gradcheck(fn, leaves)
    assert gradgradcheck(fn, leaves)


RNG = np.random.default_rng(0)
DATA = RNG.standard_normal((3, 4, 5))


# ------------------------------------------------------------------ A5: var / std signature
@pytest.mark.parametrize("name", ["var", "std"])
def test_var_std_take_pytorchs_positional_order_and_unbiased(name: str) -> None:
    torch = torch_or_skip()
    x = np.array([[1.0, 2.0, 4.0], [3.0, 3.0, 9.0]])
    ours, theirs = mta.tensor(x), torch.tensor(x)
    for args, kwargs in [
        ((1, False), {}),
        ((1, True), {}),
        ((1, False, True), {}),
        ((1,), {"unbiased": False}),
        ((False,), {}),
        ((), {"dim": 0, "correction": 0, "keepdim": True}),
        ((), {"dim": (0, 1), "correction": 2}),
    ]:
        same(getattr(ours, name)(*args, **kwargs), getattr(theirs, name)(*args, **kwargs))
        same(
            getattr(mta, name)(ours, *args, **kwargs), getattr(torch, name)(theirs, *args, **kwargs)
        )
    with pytest.raises(TypeError, match="pass unbiased or correction, not both"):
        getattr(ours, name)(1, unbiased=True, correction=1)
    with pytest.raises(TypeError, match=f"{name} needs a floating-point tensor, got int64"):
        getattr(mta.tensor([1, 2]), name)()


def test_var_numpy_reference() -> None:
    cases: list[tuple[Any, int]] = [(None, 0), (1, 1), ((0, 2), 2)]
    for dim, ddof in cases:
        axis = dim
        got = mta.tensor(DATA).var(dim, correction=ddof).numpy()
        np.testing.assert_allclose(got, np.var(DATA, axis=axis, ddof=ddof), rtol=1e-12)
        got = mta.tensor(DATA).std(dim, correction=ddof).numpy()
        np.testing.assert_allclose(got, np.std(DATA, axis=axis, ddof=ddof), rtol=1e-12)


# ------------------------------------------------------------------ A6: implicit softmax dim
@pytest.mark.parametrize("ndim", [0, 1, 2, 3, 4])
def test_softmax_without_dim_uses_pytorchs_legacy_dim_and_warns(ndim: int) -> None:
    torch = torch_or_skip()
    x = RNG.standard_normal((2, 3, 2, 2)[:ndim])
    ours, theirs = mta.tensor(x), torch.tensor(x)
    pairs: list[tuple[Callable[[Any], Any], Callable[[Any], Any]]] = [
        (mta.nn.functional.softmax, torch.nn.functional.softmax),
        (mta.nn.functional.log_softmax, torch.nn.functional.log_softmax),
        (mta.nn.functional.softmin, torch.nn.functional.softmin),
        (mta.nn.Softmax(), torch.nn.Softmax()),
        (mta.nn.LogSoftmax(), torch.nn.LogSoftmax()),
        (mta.nn.Softmin(), torch.nn.Softmin()),
    ]
    for fn_ours, fn_theirs in pairs:
        with pytest.warns(UserWarning, match="Implicit dimension choice") as record:
            got = fn_ours(ours)
        assert record[0].filename == __file__  # the warning names the caller
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            same(got, fn_theirs(theirs), rtol=1e-12)


def test_softmax_layer_defaults_and_explicit_dim_do_not_warn() -> None:
    assert mta.nn.Softmax().dim is None and mta.nn.LogSoftmax().dim is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mta.nn.Softmax(1)(mta.ones(2, 3))
        mta.softmax(mta.ones(2, 3), 0)
    with pytest.raises(TypeError):
        mta.ones(2).softmax()  # type: ignore[call-arg]  # the method needs dim, as PyTorch's


# ------------------------------------------------------------------ A8, A9, A10, B4: dtypes
REDUCTIONS: list[tuple[str, Callable[[Any], Any]]] = [
    ("sum", lambda x: x.sum()),
    ("sum(1)", lambda x: x.sum(1)),
    ("sum(())", lambda x: x.sum(())),
    ("cumsum", lambda x: x.cumsum(1)),
    ("cumprod", lambda x: x.cumprod(1)),
    ("prod", lambda x: x.prod()),
    ("prod(1)", lambda x: x.prod(1, keepdim=True)),
    ("nansum", lambda x: x.nansum(1)),
    ("count_nonzero", lambda x: x.count_nonzero(1)),
    ("any", lambda x: x.any()),
    ("all(1)", lambda x: x.all(1)),
    ("amax", lambda x: x.amax(1)),
    ("aminmax", lambda x: x.aminmax(dim=1).min),
    ("cummax", lambda x: x.cummax(1).values),
    ("cummin", lambda x: x.cummin(1).indices),
    ("mode", lambda x: x.mode(1).values),
    ("diff", lambda x: x.diff(dim=1)),
]


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_reduction_dtypes_and_values_follow_pytorch(dtype: str) -> None:
    torch = torch_or_skip()
    x = np.array([[1, 0, 3, 200], [7, 7, 0, 1]]).astype(dtype)
    ours, theirs = mta.tensor(x), torch.tensor(x)
    for name, fn in REDUCTIONS:
        if name == "diff" and dtype == "float16":
            continue
        got, expected = fn(ours), fn(theirs)
        assert str(got.dtype) == str(expected.dtype).replace("torch.", ""), name
        same(got, expected, rtol=1e-3 if dtype == "float16" else 1e-7)
    lse = torch.tensor(x).logsumexp(1) if dtype != "float16" else None
    if lse is not None:
        same(ours.logsumexp(1), lse)  # ints and bools: float32, uint8 without wrapping


@pytest.mark.parametrize("dtype", ["uint8", "int8", "bool"])
def test_any_all_dtypes(dtype: str) -> None:
    x = np.array([[1, 0, 3], [1, 1, 1]]).astype(dtype)
    kept = np.uint8 if dtype == "uint8" else np.bool_  # PyTorch keeps uint8, else bool
    t = mta.tensor(x)
    for got, want in ((t.all(), np.all(x)), (t.all(1), np.all(x, 1)), (t.any(1), np.any(x, 1))):
        assert got.dtype == kept
        np.testing.assert_array_equal(got.numpy(), np.asarray(want).astype(kept))
    torch = torch_or_skip()
    for fn in (lambda t: t.all(), lambda t: t.any(1, keepdim=True), lambda t: t.all(1)):
        same(fn(mta.tensor(x)), fn(torch.tensor(x)))


# ------------------------------------------------------------------ A12: float16 accumulation
def test_float16_sum_and_mean_accumulate_in_float32() -> None:
    torch = torch_or_skip()
    big = np.array([60000.0, 60000.0], dtype=np.float16)
    same(mta.tensor(big).mean(), torch.tensor(big).mean())  # 60000, not inf
    same(mta.tensor(big).sum(), torch.tensor(big).sum())  # inf: the result overflows
    many = np.full((4, 5000), 0.1, dtype=np.float16)
    for fn in (lambda t: t.sum(), lambda t: t.sum(1), lambda t: t.mean(1)):
        same(fn(mta.tensor(many)), fn(torch.tensor(many)), rtol=1e-3)
    # the float32 accumulation is exact here (NumPy's float16 steps are not)
    assert mta.tensor(many).sum(1).tolist() == [500.0] * 4


# ------------------------------------------------------------------ A13: too few samples
@pytest.mark.parametrize("correction", [2, 3, 5, 2.5])
@pytest.mark.parametrize("dim", [None, 1])
@pytest.mark.parametrize("name", ["var", "std"])
def test_var_std_with_correction_at_least_n(name: str, dim: Any, correction: float) -> None:
    torch_or_skip()
    for row in ([1.0, 2.0, 4.0], [1.0, 1.0, 1.0]):
        data = np.array([row])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for w in (None, 1.0, inf):
                grads_of(
                    lambda t: getattr(t, name)(dim, correction=correction),
                    lambda t: getattr(t, name)(dim, correction=correction),
                    data,
                    w,
                )
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        mta.tensor([1.0]).var()


@pytest.mark.parametrize("name", ["var", "std"])
def test_var_std_gradients_against_pytorch(name: str) -> None:
    cases: list[tuple[Any, dict[str, Any]]] = [
        (None, {}),
        (1, {"keepdim": True}),
        ((0, 2), {"correction": 0}),
    ]
    for dim, kw in cases:

        def fn(t: Any, dim: Any = dim, kw: dict[str, Any] = kw) -> Any:
            return getattr(t, name)(dim, **kw)

        for w in (None, inf):
            grads_of(fn, fn, DATA, w)
    grads_of(lambda t: t.std(1), lambda t: t.std(1), np.ones((2, 3)))  # std 0: grad 0
    check_grads(lambda t: t.var(1), DATA)
    check_grads(lambda t: t.std((0, 2), correction=0), DATA)


# ------------------------------------------------------------------ A14, C24: empty dim tuple
def test_empty_dim_tuple_reduces_every_dim() -> None:
    torch = torch_or_skip()
    x = np.array([[1.0, 2.0], [3.0, 5.0]])
    for fn in (
        lambda t: t.sum(()),
        lambda t: t.mean(()),
        lambda t: t.var(()),
        lambda t: t.nansum(()),
        lambda t: t.nanmean(()),
        lambda t: t.count_nonzero(()),
        lambda t: t.sum((), keepdim=True),
    ):
        same(fn(mta.tensor(x)), fn(torch.tensor(x)))
    with pytest.raises(ValueError, match=r"logsumexp: dim=\(\) names no dim"):
        mta.logsumexp(mta.tensor(x), dim=())


# ------------------------------------------------------------------ A15: 0-d scans
def test_scans_of_a_0d_tensor_keep_shape() -> None:
    scans = ("cumsum", "cumprod", "logcumsumexp", "prod")
    for got in [getattr(mta.tensor(2.5), name)(0) for name in scans] + [
        mta.tensor(2.5).cummax(0).values,
        mta.tensor(2.5).cummin(0).values,
    ]:
        assert got.shape == () and got.item() == 2.5  # a scan of one element is itself
    torch = torch_or_skip()
    for fn in (
        lambda t: t.cumsum(0),
        lambda t: t.cumprod(-1),
        lambda t: t.logcumsumexp(0),
        lambda t: t.cummax(0).values,
        lambda t: t.cummin(0).values,
        lambda t: t.prod(0),
    ):
        grads_of(fn, fn, np.array(2.5))
    same(mta.tensor(2.5).cummin(0).indices, torch.tensor(2.5).cummin(0).indices)


# ------------------------------------------------------------------ B6, C3, A28: softmax dtypes
def test_dtype_arguments() -> None:
    torch = torch_or_skip()
    x = np.array([[1, 0, 3], [2, 2, 2]])
    ours, theirs = mta.tensor(x), torch.tensor(x)
    same(ours.sum(dtype=mta.float64), theirs.sum(dtype=torch.float64))
    same(ours.sum(1, dtype=mta.int8), theirs.sum(1, dtype=torch.int8))
    same(ours.mean(dtype=mta.float64), theirs.mean(dtype=torch.float64))
    same(ours.softmax(1, dtype=mta.float64), theirs.softmax(1, dtype=torch.float64))
    same(ours.log_softmax(0, mta.float32), theirs.log_softmax(0, torch.float32))
    same(ours.prod(1, dtype=mta.float32), theirs.prod(1, dtype=torch.float32))
    same(ours.cumsum(1, dtype=mta.float64), theirs.cumsum(1, dtype=torch.float64))
    with pytest.raises(TypeError, match="mean: dtype must be a floating-point dtype"):
        mta.tensor([1.0]).mean(dtype=mta.int64)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "int64", "bool"])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_of_integers_raises(name: str, dtype: str) -> None:
    x = mta.tensor(np.array([[1, 0, 3]]).astype(dtype))
    with pytest.raises(TypeError, match=f"{name} needs a floating-point tensor, got {dtype}"):
        getattr(x, name)(1)


def test_float16_softmax_is_computed_in_float32() -> None:
    torch = torch_or_skip()
    x = (RNG.standard_normal((50, 37)) * 4).astype(np.float16)
    same(mta.tensor(x).softmax(1), torch.tensor(x).softmax(1), rtol=0)  # bit for bit
    expected = torch.tensor(x).float().log_softmax(0).half()
    same(mta.tensor(x).log_softmax(0), expected, rtol=0)


# ------------------------------------------------------------------ A11: median, mode, NaN
MEDIAN_ROWS = np.array(
    [[1.0, nan, 3.0, nan, 2.0], [1.0, 2.0, 3.0, 4.0, 5.0], [nan, nan, nan, nan, 1.0]]
)


def test_median_nanmedian_propagate_and_skip_nan_as_pytorch() -> None:
    for fn in (
        lambda t: t.median(),
        lambda t: t.nanmedian(),
        lambda t: t.median(1).values,
        lambda t: t.nanmedian(1).values,
        lambda t: t.median(0, keepdim=True).values,
    ):
        grads_of(fn, fn, MEDIAN_ROWS)
    torch = torch_or_skip()
    for fn in (lambda t: t.median(1).indices, lambda t: t.nanmedian(1).indices):
        same(fn(mta.tensor(MEDIAN_ROWS)), fn(torch.tensor(MEDIAN_ROWS)))
    # ties: the gradient of median() is shared by the equal elements, as PyTorch's
    grads_of(lambda t: t.median(), lambda t: t.median(), np.array([1.0, 3.0, 3.0]))
    all_nan = np.full((2, 3), nan)
    same(mta.tensor(all_nan).nanmedian(1).values, torch.tensor(all_nan).nanmedian(1).values)
    same(mta.tensor(all_nan).nanmedian(), torch.tensor(all_nan).nanmedian())
    assert type(mta.tensor(all_nan).nanmedian(0)).__name__ == "nanmedian"


def test_median_numpy_reference() -> None:
    data = RNG.permutation(24).reshape(4, 6).astype(np.float64)  # no ties
    lower = np.sort(data, axis=1)[:, (6 - 1) // 2]
    assert mta.tensor(data).median(1).values.tolist() == lower.tolist()
    with_nan = data.copy()
    with_nan[0, 2] = nan
    nan_skipped = [np.sort(r[~np.isnan(r)])[(np.sum(~np.isnan(r)) - 1) // 2] for r in with_nan]
    assert mta.tensor(with_nan).nanmedian(1).values.tolist() == nan_skipped
    assert np.isnan(mta.tensor(with_nan).median())


def test_mode_with_nan() -> None:
    for row in ([nan, nan, 1.0], [nan, 1.0, nan, 1.0], [nan, nan, nan, 1.0], [2.0, 2.0, 1.0]):
        fn = lambda t: t.mode(0).values  # noqa: E731
        grads_of(fn, fn, np.array(row))
        torch = torch_or_skip()
        same(mta.tensor(row).mode().indices, torch.tensor(row).mode().indices)


@pytest.mark.parametrize("name", ["median", "nanmedian", "kthvalue"])
def test_median_of_bool_raises(name: str) -> None:
    args = (1,) if name == "kthvalue" else ()
    with pytest.raises(TypeError, match=f"{name} is not defined for bool tensors"):
        getattr(mta.tensor([True, False]), name)(*args)


# ------------------------------------------------------------------ A23: cumprod gradient
@pytest.mark.parametrize(
    "row",
    [[1.0, -inf, 0.0, 2.0], [inf, 0.0, 2.0], [2.0, 0.0, 3.0, 0.0, 5.0], [0.0, 0.0, 2.0], [inf]],
)
def test_cumprod_gradient_at_zeros_and_inf_follows_pytorch(row: list[float]) -> None:
    for w in (None, 1.0, inf):
        with np.errstate(all="ignore"):
            grads_of(lambda t: t.cumprod(0), lambda t: t.cumprod(0), np.array(row), w)


def test_cumprod_gradients_with_zeros_along_every_dim() -> None:
    data = DATA.copy()
    data[1, 2, :] = 0.0
    data[0, :, 3] = 0.0
    for dim in range(3):

        def fn(t: Any, d: int = dim) -> Any:
            return t.cumprod(d)

        grads_of(fn, fn, data)
        check_grads(fn, data)


# ------------------------------------------------------------------ the added reductions
ADDED: list[tuple[str, Callable[[Any], Any]]] = [
    ("prod", lambda t: t.prod()),
    ("prod(0)", lambda t: t.prod(0)),
    ("prod(-1, keepdim)", lambda t: t.prod(-1, keepdim=True)),
    ("nansum(1)", lambda t: t.nansum(1)),
    ("nansum((0, 2))", lambda t: t.nansum((0, 2), keepdim=True)),
    ("nanmean", lambda t: t.nanmean()),
    ("nanmean(2)", lambda t: t.nanmean(2)),
    ("quantile", lambda t: t.quantile(0.3)),
    ("quantile(1)", lambda t: t.quantile(0.7, dim=1, keepdim=True)),
    ("nanquantile(2)", lambda t: t.nanquantile(0.5, dim=2)),
    ("cummax(0)", lambda t: t.cummax(0).values),
    ("cummin(2)", lambda t: t.cummin(2).values),
    ("logcumsumexp(1)", lambda t: t.logcumsumexp(1)),
    ("logcumsumexp(-1)", lambda t: t.logcumsumexp(-1)),
    ("aminmax", lambda t: t.aminmax().max),
    ("aminmax(1)", lambda t: t.aminmax(dim=1, keepdim=True).min),
    ("diff", lambda t: t.diff()),
    ("diff(n=2, dim=0)", lambda t: t.diff(n=2, dim=0)),
    ("std_mean", lambda t: t.std(1) + t.mean(1)),
]


@pytest.mark.parametrize("name,fn", ADDED, ids=[n for n, _ in ADDED])
def test_added_reductions_values_and_gradients(name: str, fn: Callable[[Any], Any]) -> None:
    grads_of(fn, fn, DATA)
    grads_of(fn, fn, DATA, inf)


@pytest.mark.parametrize("name,fn", ADDED, ids=[n for n, _ in ADDED])
def test_added_reductions_at_special_values(name: str, fn: Callable[[Any], Any]) -> None:
    special = np.array(SPECIAL).reshape(2, 2, 2)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for w in (1.0, inf):
            grads_of(fn, fn, special, w)
        grads_of(fn, fn, special[::-1].copy(), 1.0)


@pytest.mark.parametrize(
    "name,fn",
    [
        ("prod(1)", lambda t: t.prod(1)),
        ("prod", lambda t: t.prod()),
        ("nanmean(1)", lambda t: t.nanmean(1)),
        ("quantile", lambda t: t.quantile(0.3, dim=1)),
        ("nanquantile", lambda t: t.nanquantile(0.6)),
        ("cummax", lambda t: t.cummax(1).values),
        ("logcumsumexp", lambda t: t.logcumsumexp(1)),
        ("diff", lambda t: t.diff(dim=1, prepend=t[:, :1] * 2)),
        ("std", lambda t: t.std(1)),
    ],
)
def test_gradcheck_and_gradgradcheck(name: str, fn: Callable[[Tensor], Tensor]) -> None:
    data = RNG.uniform(0.5, 2.0, (3, 4))
    data[1, 1] = nan if name.startswith("nan") else data[1, 1]
    check_grads(fn, data)


def test_prod_gradient_with_zeros_needs_no_division() -> None:
    for row in ([2.0, 0.0, 3.0], [2.0, 0.0, 0.0], [inf, 0.0, 3.0], [nan, 2.0], [0.0]):
        for w in (1.0, inf):
            grads_of(lambda t: t.prod(), lambda t: t.prod(), np.array(row), w)
            grads_of(lambda t: t.prod(0), lambda t: t.prod(0), np.array(row), w)
    with_zeros = RNG.uniform(0.5, 2.0, (3, 4))
    with_zeros[0, 1] = with_zeros[2, 0] = with_zeros[2, 3] = 0.0
    check_grads(lambda t: t.prod(1), with_zeros)
    check_grads(lambda t: t.prod(), with_zeros[0])


INTERPOLATIONS = ["linear", "lower", "higher", "midpoint", "nearest"]


@pytest.mark.parametrize("interpolation", INTERPOLATIONS)
def test_quantile_interpolation_against_pytorch_and_numpy(interpolation: str) -> None:
    torch = torch_or_skip()
    x = np.array([1.0, 5.0, 2.0, 8.0, 4.0, 3.0])
    q = np.array([0.0, 0.25, 0.3, 0.5, 0.9, 1.0])
    for data in (x, x.astype(np.float32)):
        got = mta.tensor(data).quantile(
            mta.tensor(q.astype(data.dtype)), interpolation=interpolation
        )
        same(
            got,
            torch.tensor(data).quantile(
                torch.tensor(q.astype(data.dtype)), interpolation=interpolation
            ),
            rtol=0,
        )
    expected = np.quantile(x, q, method=interpolation)  # type: ignore[call-overload]
    got = mta.tensor(x).quantile(mta.tensor(q), interpolation=interpolation)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12)


def test_quantile_shapes_with_vector_q() -> None:
    torch = torch_or_skip()
    q = np.array([0.1, 0.5, 0.75])
    for dim in (None, 0, 1, 2, -1):
        for keepdim in (False, True):
            for fn_name in ("quantile", "nanquantile"):

                def fn(
                    t: Any, lib: Any, name: str = fn_name, d: Any = dim, k: bool = keepdim
                ) -> Any:
                    return getattr(t, name)(lib.tensor(q, dtype=t.dtype), d, k)

                grads_of(lambda t: fn(t, mta), lambda t: fn(t, torch), DATA)
    np.testing.assert_allclose(
        mta.tensor(DATA).quantile(mta.tensor(q), dim=1).numpy(),
        np.quantile(DATA, q, axis=1),
        rtol=1e-12,
    )


def test_quantile_errors() -> None:
    x = mta.tensor([1.0, 2.0])
    with pytest.raises(ValueError, match=r"q must be in the range \[0, 1\] but got 1.5"):
        x.quantile(1.5)
    with pytest.raises(TypeError, match="q tensor must be same dtype as the input tensor"):
        x.quantile(mta.tensor([0.5], dtype=mta.float64))
    with pytest.raises(ValueError, match="q must be a scalar or 1D tensor"):
        x.quantile(mta.tensor([[0.5]]))
    with pytest.raises(ValueError, match="interpolation must be one of linear"):
        x.quantile(0.5, interpolation="cubic")
    with pytest.raises(TypeError, match="input tensor must be either float or double"):
        mta.tensor([1, 2]).quantile(0.5)
    with pytest.raises(ValueError, match="input tensor must be non-empty"):
        mta.zeros(0).quantile(0.5)


def test_numpy_references_for_the_added_reductions() -> None:
    x = DATA.copy()
    x[0, 1, 2] = nan
    t = mta.tensor(x)
    np.testing.assert_allclose(t.nansum(1).numpy(), np.nansum(x, axis=1), rtol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_allclose(t.nanmean(2).numpy(), np.nanmean(x, axis=2), rtol=1e-12)
        np.testing.assert_allclose(
            t.nanquantile(0.4, dim=2).numpy(), np.nanquantile(x, 0.4, axis=2), rtol=1e-12
        )
    y = mta.tensor(DATA)
    np.testing.assert_allclose(y.prod(2).numpy(), np.prod(DATA, axis=2), rtol=1e-12)
    np.testing.assert_allclose(
        y.logcumsumexp(1).numpy(), np.logaddexp.accumulate(DATA, axis=1), rtol=1e-12
    )
    np.testing.assert_array_equal(y.cummax(2).values.numpy(), np.maximum.accumulate(DATA, axis=2))
    np.testing.assert_array_equal(y.cummin(0).values.numpy(), np.minimum.accumulate(DATA, axis=0))
    np.testing.assert_array_equal(y.diff(n=2, dim=1).numpy(), np.diff(DATA, n=2, axis=1))
    ints = np.array([[3, 0, 2], [0, 0, 7]])
    assert mta.tensor(ints).count_nonzero(1).tolist() == np.count_nonzero(ints, axis=1).tolist()
    amin, amax = mta.tensor(DATA).aminmax(dim=0)
    np.testing.assert_array_equal(amin.numpy(), DATA.min(0))
    np.testing.assert_array_equal(amax.numpy(), DATA.max(0))
    v, m = mta.var_mean(y, 1, unbiased=False)
    np.testing.assert_allclose(v.numpy(), DATA.var(1), rtol=1e-12)
    np.testing.assert_allclose(m.numpy(), DATA.mean(1), rtol=1e-12)
    s, m = mta.std_mean(y, (0, 2), keepdim=True)
    np.testing.assert_allclose(s.numpy(), DATA.std((0, 2), ddof=1, keepdims=True), rtol=1e-12)


def test_cummax_cummin_ties_and_nan_indices_follow_pytorch() -> None:
    torch = torch_or_skip()
    rows = np.array([[1.0, 3.0, 3.0, 2.0, nan, 5.0, nan], [3.0, 1.0, 1.0, 4.0, 1.0, 0.0, 0.0]])
    for name in ("cummax", "cummin"):
        ours, theirs = getattr(mta.tensor(rows), name)(1), getattr(torch.tensor(rows), name)(1)
        same(ours.values, theirs.values)
        same(ours.indices, theirs.indices)
        assert type(ours).__name__ == name
        for dtype in ("bool", "uint8", "int8"):
            ints = np.array([[1, 3, 3, 0, 2]]).astype(dtype)
            ours = getattr(mta.tensor(ints), name)(1)
            theirs = getattr(torch.tensor(ints), name)(1)
            same(ours.values, theirs.values)
            same(ours.indices, theirs.indices)


def test_diff_prepend_append_bool_and_errors() -> None:
    torch = torch_or_skip()
    x = np.array([[1, 3], [7, 2]])
    pre, app = np.array([[0, 0]]), np.array([[1.5, 1.0]])
    for fn in (
        lambda t, lib: lib.diff(t, dim=0, prepend=lib.tensor(pre), append=lib.tensor(app)),
        lambda t, lib: lib.diff(t, n=5),
        lambda t, lib: lib.diff(t, n=0),
        lambda t, lib: lib.diff(t.to(lib.uint8), dim=0),
        lambda t, lib: lib.diff(t > 2, dim=0),
    ):
        same(fn(mta.tensor(x), mta), fn(torch.tensor(x), torch))
    with pytest.raises(ValueError, match="at least one-dimensional"):
        mta.diff(mta.tensor(1.0))
    with pytest.raises(ValueError, match="order must be non-negative but got -1"):
        mta.diff(mta.tensor([1.0, 2.0]), n=-1)
    with pytest.raises(ValueError, match="same dimension as input"):
        mta.diff(mta.tensor([1.0, 2.0]), prepend=mta.tensor([[1.0]]))


def test_other_errors() -> None:
    with pytest.raises(TypeError, match="logcumsumexp needs a floating-point tensor, got int64"):
        mta.tensor([1, 2]).logcumsumexp(0)
    with pytest.raises(TypeError, match="nanmean needs a floating-point tensor, got int64"):
        mta.tensor([1, 2]).nanmean()
    with pytest.raises(ValueError, match="cannot compute aminmax over an empty dimension"):
        mta.zeros(0).aminmax()
    with pytest.raises(TypeError, match="aminmax\\(\\): dim must be an int or None"):
        mta.aminmax(mta.zeros(2, 2), dim=(0, 1))  # type: ignore[arg-type]
    with pytest.raises(IndexError, match="out of range"):
        mta.tensor([1.0]).prod(3)
