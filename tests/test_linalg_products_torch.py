"""Matrix products and ``linalg``: values, dtypes, shapes and float64 gradients against
PyTorch, a NumPy reference, gradcheck/gradgradcheck, and the errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import minitorch_accel as mta
from minitorch_accel.utils.gradcheck import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)


def arr(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1, 1, shape)


def spd(n: int, batch: tuple[int, ...] = (), seed: int = 0) -> np.ndarray:
    a = arr(*batch, n, n, seed=seed)
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def compare(
    fn_mta: Callable[..., Any],
    fn_torch: Callable[..., Any],
    arrays: list[np.ndarray],
    grad: bool = True,
    atol: float = 1e-10,
    **kwargs: Any,
) -> None:
    """Values, dtypes, shapes and (float64) gradients of one op against PyTorch."""
    ours = [mta.tensor(a, requires_grad=grad and a.dtype.kind == "f") for a in arrays]
    theirs = [torch.tensor(a, requires_grad=grad and a.dtype.kind == "f") for a in arrays]
    out, ref = fn_mta(*ours, **kwargs), fn_torch(*theirs, **kwargs)
    assert out.shape == tuple(ref.shape)
    assert str(out.dtype) == str(ref.dtype).replace("torch.", "")
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), atol=atol, rtol=1e-10)
    if not grad or not any(t.requires_grad for t in ours):
        return
    g = np.random.default_rng(1).normal(size=out.shape)
    out.backward(mta.tensor(g))
    ref.backward(torch.tensor(g))
    for t, r in zip(ours, theirs, strict=True):
        if t.requires_grad:
            np.testing.assert_allclose(t.grad.numpy(), r.grad.numpy(), atol=atol, rtol=1e-9)


PRODUCTS = [
    ("mm", [(3, 4), (4, 2)], {}),
    ("bmm", [(2, 3, 4), (2, 4, 5)], {}),
    ("mv", [(3, 4), (4,)], {}),
    ("dot", [(5,), (5,)], {}),
    ("vdot", [(5,), (5,)], {}),
    ("inner", [(2, 3, 4), (5, 4)], {}),
    ("inner", [(), (2, 3)], {}),
    ("outer", [(3,), (4,)], {}),
    ("ger", [(3,), (4,)], {}),
    ("addmm", [(2, 5), (2, 3), (3, 5)], {}),
    ("addmm", [(5,), (2, 3), (3, 5)], {"beta": 0.5, "alpha": -2.0}),
    ("addmv", [(2,), (2, 3), (3,)], {"beta": 2.0, "alpha": 0.5}),
    ("addr", [(2, 3), (2,), (3,)], {"alpha": 3.0}),
    ("baddbmm", [(2, 3, 5), (2, 3, 4), (2, 4, 5)], {"beta": -1.0}),
    ("addbmm", [(3, 5), (4, 3, 2), (4, 2, 5)], {"beta": 0.5, "alpha": 2.0}),
    ("kron", [(2, 3), (4, 2)], {}),
    ("kron", [(2, 1, 3), (4,)], {}),
    ("tensordot", [(2, 3, 4), (3, 4, 5)], {"dims": 2}),
    ("tensordot", [(3, 2, 4), (4, 5, 3)], {"dims": ([0, 2], [2, 0])}),
    ("tensordot", [(2, 3), (4, 5)], {"dims": 0}),
    ("cross", [(4, 3), (4, 3)], {"dim": 1}),
    ("cross", [(3, 2), (3, 1)], {"dim": 0}),
    ("cross", [(2, 1, 3), (1, 4, 3)], {"dim": -1}),
    ("block_diag", [(2, 3), (4,), ()], {}),
    ("cartesian_prod", [(2,), (3,), (2,)], {}),
    ("cdist", [(2, 4, 3), (2, 5, 3)], {}),
    ("cdist", [(4, 3), (5, 3)], {"p": 1.0}),
    ("cdist", [(4, 3), (5, 3)], {"p": 3.0}),
    ("cdist", [(4, 3), (5, 3)], {"p": float("inf")}),
    ("chain_matmul", [(3, 4), (4, 2), (2, 5)], {}),
]


@pytest.mark.parametrize(
    "name, shapes, kwargs", PRODUCTS, ids=[f"{p[0]}-{i}" for i, p in enumerate(PRODUCTS)]
)
def test_products_match_pytorch(name: str, shapes: list[tuple[int, ...]], kwargs: dict) -> None:
    arrays = [arr(*s, seed=i) for i, s in enumerate(shapes)]
    if name == "cdist":
        kwargs = {**kwargs, "compute_mode": "donot_use_mm_for_euclid_dist"}
    compare(getattr(mta, name), getattr(torch, name), arrays, **kwargs)


@pytest.mark.parametrize("name, shapes, kwargs", PRODUCTS[:16], ids=[p[0] for p in PRODUCTS[:16]])
def test_products_integer_dtypes(name: str, shapes: list[tuple[int, ...]], kwargs: dict) -> None:
    kwargs = {k: int(v) for k, v in kwargs.items()}
    arrays = [np.random.default_rng(i).integers(-3, 4, s) for i, s in enumerate(shapes)]
    compare(getattr(mta, name), getattr(torch, name), arrays, grad=False, **kwargs)


def test_products_against_numpy_reference() -> None:
    a, b, c = arr(3, 4), arr(4, 5, seed=1), arr(3, 5, seed=2)
    np.testing.assert_allclose(mta.mm(mta.tensor(a), mta.tensor(b)).numpy(), a @ b)
    out = mta.addmm(mta.tensor(c), mta.tensor(a), mta.tensor(b), beta=0.5, alpha=2.0)
    np.testing.assert_allclose(out.numpy(), 0.5 * c + 2 * a @ b)
    x, y = arr(2, 3, seed=3), arr(4, 2, seed=4)
    np.testing.assert_allclose(mta.kron(mta.tensor(x), mta.tensor(y)).numpy(), np.kron(x, y))
    t1, t2 = arr(2, 3, 4), arr(4, 3, 5, seed=1)
    np.testing.assert_allclose(
        mta.tensordot(mta.tensor(t1), mta.tensor(t2), ([1, 2], [1, 0])).numpy(),
        np.tensordot(t1, t2, ([1, 2], [1, 0])),
    )
    u, v = arr(5, 3), arr(5, 3, seed=1)
    np.testing.assert_allclose(
        mta.linalg.cross(mta.tensor(u), mta.tensor(v)).numpy(), np.cross(u, v), atol=1e-15
    )
    p, q = arr(4, 3), arr(6, 3, seed=1)
    dist = np.sqrt(((p[:, None, :] - q[None, :, :]) ** 2).sum(-1))
    np.testing.assert_allclose(mta.cdist(mta.tensor(p), mta.tensor(q)).numpy(), dist)
    mats = [arr(2, 30), arr(30, 3, seed=1), arr(3, 40, seed=2), arr(40, 2, seed=3)]
    np.testing.assert_allclose(
        mta.linalg.multi_dot([mta.tensor(m) for m in mats]).numpy(), np.linalg.multi_dot(mats)
    )


def test_multi_dot_vectors_and_combinations_match_pytorch() -> None:
    arrays = [arr(3), arr(3, 4, seed=1), arr(4, 2, seed=2), arr(2, seed=3)]
    compare(lambda *t: mta.linalg.multi_dot(t), lambda *t: torch.linalg.multi_dot(t), arrays)
    x = np.array([1.0, 2.0, 3.0, 4.0])
    for r, rep in [(2, False), (3, False), (2, True), (5, False), (1, False)]:
        compare(mta.combinations, torch.combinations, [x], r=r, with_replacement=rep)


@pytest.mark.parametrize("factor", ["beta", "alpha"])
def test_zero_factor_ignores_nan_and_scales_gradients(factor: str) -> None:
    nan = float("nan")
    inp, m1, m2 = np.array([[nan, 1.0], [2.0, 3.0]]), np.eye(2), np.ones((2, 2))
    if factor == "alpha":
        inp, m1 = m1, inp
    for grad_value in (1.0, float("inf")):
        ours = [mta.tensor(a, requires_grad=True) for a in (inp, m1, m2)]
        theirs = [torch.tensor(a, requires_grad=True) for a in (inp, m1, m2)]
        out = mta.addmm(*ours, **{factor: 0})
        ref = torch.addmm(*theirs, **{factor: 0})
        np.testing.assert_array_equal(out.detach().numpy(), ref.detach().numpy())
        out.backward(mta.full((2, 2), grad_value, dtype=mta.float64))
        ref.backward(torch.full((2, 2), grad_value, dtype=torch.float64))
        for t, r in zip(ours, theirs, strict=True):
            np.testing.assert_array_equal(t.grad.numpy(), r.grad.numpy())


def test_cdist_gradient_at_zero_distance_matches_pytorch() -> None:
    x = np.array([[0.0, 1.0], [2.0, 2.0]])
    for p in (2.0, 1.0, 3.0, 0.5, float("inf")):
        kw = {"p": p}
        compare(
            mta.cdist,
            lambda a, b, **k: torch.cdist(a, b, compute_mode="donot_use_mm_for_euclid_dist", **k),
            [x, x.copy()],
            **kw,
        )


@pytest.mark.parametrize(
    "fn",
    [
        lambda a, b: mta.mm(a, b),
        lambda a, b: mta.tensordot(a, b, ([0], [1])),
        lambda a, b: mta.kron(a, b),
        lambda a, b: mta.addmm(a.T @ a, a, b.T, beta=0.5, alpha=2.0),
        lambda a, b: mta.cross(a[:, :3], b[:3, :].T, dim=1),
        lambda a, b: mta.cdist(a, b.T),
        lambda a, b: mta.linalg.multi_dot([a, b, a]),
    ],
)
def test_products_gradcheck_and_gradgradcheck(fn: Callable[..., Any]) -> None:
    a = mta.tensor(arr(3, 3), requires_grad=True)
    b = mta.tensor(arr(3, 3, seed=1), requires_grad=True)
    assert gradcheck(fn, (a, b))
    assert gradgradcheck(fn, (a, b))


@pytest.mark.parametrize(
    "call, error, message",
    [
        (
            lambda: mta.mm(mta.ones(3), mta.ones(3, 3)),
            ValueError,
            r"input must be a matrix.*\(3,\)",
        ),
        (lambda: mta.mm(mta.ones(2, 3), mta.ones(2, 3)), ValueError, r"2x3 and 2x3"),
        (lambda: mta.bmm(mta.ones(2, 2, 3), mta.ones(3, 3, 2)), ValueError, r"\(2, 3, p\)"),
        (lambda: mta.dot(mta.ones(3), mta.ones(4)), ValueError, r"\(3,\) and \(4,\)"),
        (lambda: mta.mv(mta.ones(2, 3), mta.ones(2)), ValueError, "size mismatch"),
        (
            lambda: mta.dot(mta.ones(3), mta.ones(3, dtype=mta.float64)),
            TypeError,
            "same dtype",
        ),
        (
            lambda: mta.mm(mta.ones(2, 2, dtype=mta.bool), mta.ones(2, 2, dtype=mta.bool)),
            TypeError,
            "bool",
        ),
        (
            lambda: mta.addmm(mta.ones(3, 3), mta.ones(2, 2), mta.ones(2, 2)),
            ValueError,
            "broadcast",
        ),
        (lambda: mta.cross(mta.ones(2), mta.ones(2), dim=0), ValueError, "length 3"),
        (lambda: mta.cross(mta.ones(2, 3), mta.ones(3)), ValueError, "same number of dims"),
        (lambda: mta.block_diag(mta.ones(2, 2, 2)), ValueError, "2 or fewer dims"),
        (lambda: mta.cdist(mta.ones(2, 3, dtype=mta.int64), mta.ones(2, 3)), TypeError, "floating"),
        (lambda: mta.linalg.multi_dot([mta.ones(2, 2)]), ValueError, "at least 2"),
        (lambda: mta.tensordot(mta.ones(2, 3), mta.ones(2, 3), 1), ValueError, "differ in size"),
    ],
)
def test_product_errors_name_the_problem(
    call: Callable[[], Any], error: type, message: str
) -> None:
    with pytest.raises(error, match=message):
        call()


# ---------------------------------------------------------------- linalg

LINALG = [
    ("det", lambda a: a, (3, 3)),
    ("det", lambda a: a, (2, 4, 4)),
    ("slogdet-logabs", lambda a: a, (2, 3, 3)),
    ("inv", lambda a: a + 3 * np.eye(a.shape[-1]), (2, 3, 3)),
    ("cholesky", None, (2, 3, 3)),
    ("pinv", lambda a: a, (4, 3)),
    ("pinv", lambda a: a, (2, 3, 5)),
    ("eigvalsh", None, (2, 4, 4)),
    ("svdvals", lambda a: a, (2, 4, 3)),
    ("svdvals", lambda a: a, (3, 5)),
]


def _linalg_pair(name: str) -> tuple[Callable[..., Any], Callable[..., Any]]:
    if name == "slogdet-logabs":
        return (lambda a: mta.linalg.slogdet(a).logabsdet), (
            lambda a: torch.linalg.slogdet(a).logabsdet
        )
    return getattr(mta.linalg, name), getattr(torch.linalg, name)


@pytest.mark.parametrize("name, make, shape", LINALG, ids=[x[0] for x in LINALG])
def test_linalg_matches_pytorch(name: str, make: Any, shape: tuple[int, ...]) -> None:
    a = spd(shape[-1], shape[:-2]) if make is None else make(arr(*shape))
    ours, theirs = _linalg_pair(name)
    if make is None:  # only one triangle is read: differentiate a symmetric function of A
        ours_raw, theirs_raw = ours, theirs
        ours = lambda x: ours_raw((x + x.transpose(-1, -2)) * 0.5)  # noqa: E731
        theirs = lambda x: theirs_raw((x + x.mT) * 0.5)  # noqa: E731
    compare(ours, theirs, [a], atol=1e-9)
    t = mta.tensor(a, requires_grad=True)
    assert gradcheck(ours, (t,))
    if name not in ("pinv",):
        assert gradgradcheck(ours, (t,))


def test_solve_and_matrix_power_match_pytorch() -> None:
    a = arr(2, 3, 3) + 3 * np.eye(3)
    compare(mta.linalg.solve, torch.linalg.solve, [a, arr(2, 3, 2, seed=1)])
    compare(mta.linalg.solve, torch.linalg.solve, [a, arr(3, seed=1)])
    compare(mta.linalg.solve, torch.linalg.solve, [a, arr(2, 3, seed=1)])
    compare(mta.linalg.solve, torch.linalg.solve, [a[0], arr(4, 3, 2, seed=1)])
    compare(mta.linalg.solve, torch.linalg.solve, [a, arr(2, 4, 3, seed=1)], left=False)
    for n in (0, 1, 2, 5, -1, -3):
        compare(mta.linalg.matrix_power, torch.linalg.matrix_power, [a], n=n, atol=1e-8)
    ints = np.array([[1, 2], [0, 1]])
    compare(mta.matrix_power, torch.matrix_power, [ints], grad=False, n=4)
    ta, tb = mta.tensor(a, requires_grad=True), mta.tensor(arr(2, 3, seed=1), requires_grad=True)
    assert gradcheck(mta.linalg.solve, (ta, tb))
    assert gradgradcheck(mta.linalg.solve, (ta, tb))
    assert gradgradcheck(lambda x: mta.linalg.matrix_power(x, -2), (ta,))


def test_det_at_singular_matrix_gradient_is_the_cofactor_matrix() -> None:
    # PyTorch gives the cofactor matrix under create_graph=True (0 without: documented)
    a = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
    at = torch.tensor(a, requires_grad=True)
    (expected,) = torch.autograd.grad(torch.linalg.det(at), at, create_graph=True)
    x = mta.tensor(a, requires_grad=True)
    assert float(mta.linalg.det(x)) == 0.0
    (g,) = mta.autograd.grad(mta.linalg.det(x), x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), expected.detach().numpy(), atol=1e-12)
    cofactor = np.array([[4.0, 4.0, -4.0], [-2.0, -2.0, 2.0], [0.0, 0.0, 0.0]])  # by hand
    np.testing.assert_allclose(g.detach().numpy(), cofactor, atol=1e-12)
    with pytest.raises(NotImplementedError, match="det: the second derivative"):
        g.sum().backward()


def test_det_slogdet_logdet_against_numpy() -> None:
    a = arr(3, 4, 4)
    np.testing.assert_allclose(mta.det(mta.tensor(a)).numpy(), np.linalg.det(a))
    sign, logabs = mta.slogdet(mta.tensor(a))
    np.testing.assert_array_equal(sign.numpy(), np.linalg.slogdet(a)[0])
    np.testing.assert_allclose(logabs.numpy(), np.linalg.slogdet(a)[1])
    for m in (np.diag([2.0, 3.0]), np.diag([-2.0, 3.0]), np.zeros((2, 2))):
        np.testing.assert_array_equal(
            mta.logdet(mta.tensor(m)).numpy(), torch.logdet(torch.tensor(m)).numpy()
        )


@pytest.mark.parametrize("ord", ["fro", "nuc", float("inf"), -float("inf"), 1, -1, 2, -2])
def test_matrix_norm_matches_pytorch(ord: Any) -> None:
    a = arr(2, 3, 4)
    compare(mta.linalg.matrix_norm, torch.linalg.matrix_norm, [a], ord=ord)
    compare(
        mta.linalg.matrix_norm, torch.linalg.matrix_norm, [a], ord=ord, dim=(0, 2), keepdim=True
    )
    compare(mta.linalg.norm, torch.linalg.norm, [a[0]], ord=ord)


@pytest.mark.parametrize("ord", [2, 1, 3, 0.5, 0, -1, float("inf"), -float("inf")])
def test_vector_norm_matches_pytorch_with_nonfinite(ord: float) -> None:
    x = np.array([[-np.inf, -2.0, -0.0, 0.0], [0.5, 2.0, np.inf, np.nan], [0.0, 0.0, 0.0, 0.0]])
    finite = np.array([[1.0, -2.0, 0.5], [0.0, 0.0, 0.0]])
    for values in (x, finite):
        out = mta.linalg.vector_norm(mta.tensor(values, requires_grad=True), ord, dim=1)
        ref = torch.linalg.vector_norm(torch.tensor(values, requires_grad=True), ord, dim=1)
        np.testing.assert_array_equal(
            np.isnan(out.detach().numpy()), np.isnan(ref.detach().numpy())
        )
        np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-12)
    # ord 0: PyTorch's gradient is zeros, Tensor.norm's (VectorNorm, not ours) None
    grad = ord != 0
    compare(mta.linalg.vector_norm, torch.linalg.vector_norm, [finite], grad=grad, ord=ord)
    compare(mta.linalg.norm, torch.linalg.norm, [finite], grad=grad, ord=ord, dim=1, keepdim=True)


def test_norm_defaults_and_dtype() -> None:
    a = arr(2, 3, 4).astype(np.float32)
    compare(mta.linalg.norm, torch.linalg.norm, [a], grad=False, atol=1e-6)
    out = mta.linalg.vector_norm(mta.tensor(a), dtype=mta.float64)
    assert out.dtype == np.float64
    with pytest.raises(TypeError, match="floating point"):
        mta.linalg.vector_norm(mta.ones(2, dtype=mta.int64))


def test_qr_eigh_svd_reconstruct_and_gradients_match_pytorch() -> None:
    a = arr(2, 4, 3)
    q, r = mta.linalg.qr(mta.tensor(a))
    np.testing.assert_allclose((q @ r).numpy(), a, atol=1e-12)
    compare(lambda x: mta.linalg.qr(x).R.abs(), lambda x: torch.linalg.qr(x).R.abs(), [a])
    # sign-invariant functions of the factors, so the gradients are defined
    compare(
        lambda x: (mta.linalg.qr(x).Q * mta.linalg.qr(x).R.sum(-1, keepdim=True).T).sum(),
        lambda x: (torch.linalg.qr(x).Q * torch.linalg.qr(x).R.sum(-1, keepdim=True).mT).sum(),
        [a[0]],
    )
    s = spd(4, (2,))
    compare(
        lambda x: (
            mta.linalg.eigh(x).eigenvectors ** 2 * mta.linalg.eigh(x).eigenvalues.unsqueeze(-2)
        ),
        lambda x: (
            torch.linalg.eigh(x).eigenvectors ** 2 * torch.linalg.eigh(x).eigenvalues.unsqueeze(-2)
        ),
        [s],
        atol=1e-8,
    )
    for shape in [(4, 3), (3, 5), (3, 3)]:
        m = arr(*shape)
        compare(
            lambda x: mta.linalg.svd(x, full_matrices=False).U ** 2,
            lambda x: torch.linalg.svd(x, full_matrices=False).U ** 2,
            [m],
            atol=1e-8,
        )
        compare(
            lambda x: mta.linalg.svd(x, full_matrices=False).Vh ** 2,
            lambda x: torch.linalg.svd(x, full_matrices=False).Vh ** 2,
            [m],
            atol=1e-8,
        )
        t = mta.tensor(m, requires_grad=True)
        assert gradcheck(lambda x: mta.linalg.svd(x, full_matrices=False).U ** 2, (t,))


def test_matrix_rank_and_decomposition_errors() -> None:
    a = np.array([[1.0, 2.0], [2.0, 4.0], [0.0, 1.0]])
    for kw in ({}, {"atol": 1.0}, {"rtol": 0.5}):
        assert int(mta.linalg.matrix_rank(mta.tensor(a), **kw)) == int(
            torch.linalg.matrix_rank(torch.tensor(a), **kw)
        )
    assert mta.linalg.matrix_rank(mta.tensor(a)).dtype == np.int64
    with pytest.raises(np.linalg.LinAlgError, match="not positive-definite"):
        mta.linalg.cholesky(-mta.eye(2))
    with pytest.raises(np.linalg.LinAlgError, match="singular"):
        mta.linalg.solve(mta.zeros(2, 2), mta.ones(2))
    with pytest.raises(ValueError, match=r"square matrices .* \(2, 3\)"):
        mta.linalg.det(mta.ones(2, 3))
    with pytest.raises(TypeError, match="float32 or float64 tensor, got int64"):
        mta.det(mta.ones(2, 2, dtype=mta.int64))
    x = mta.tensor(arr(3, 2), requires_grad=True)
    with pytest.raises(RuntimeError, match="mode='r'"):
        mta.linalg.qr(x, mode="r").R.sum().backward()
    y = mta.tensor(arr(2, 3), requires_grad=True)
    with pytest.raises(NotImplementedError, match="linalg.qr"):
        mta.linalg.qr(y).R.sum().backward()
