"""Everyday PyTorch utilities: ``F.pad`` and the padding layers, ``F.one_hot``,
``F.normalize``, ``F.cosine_similarity``, ``F.pairwise_distance`` and their layers,
``nn.ModuleDict`` / ``nn.ParameterList`` / ``nn.ParameterDict``, and channel dropout
(``F.dropout1d/2d/3d``, ``nn.Dropout1d/2d/3d``).

Values and gradients against PyTorch (skipped where it is not installed), including
non-finite inputs and incoming gradients; against NumPy references written here
(``np.pad`` for padding, ``np.eye`` for one_hot, ``np.linalg.norm`` for the norms); and
gradcheck / gradgradcheck in float64. The containers are built beside the same
structure in PyTorch and their ``state_dict`` keys compared. Channel dropout is checked
by properties exact by construction (each channel all zero or exactly ``x * scale``)
and a one-sided bound on each side of the dropped fraction with a fixed seed.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
import test_strict_backend as strict_suite
from support.helpers import to_host
from support.strict_backend import registered
from support.strict_xp import StrictArray
from test_strict_backend import INT, POS, check
from test_strict_backend import F as floats

import minitorch_accel as mta
from minitorch_accel import nn
from minitorch_accel.core.tensor import Tensor
from minitorch_accel.nn import functional as F
from minitorch_accel.utils.gradcheck import gradcheck, gradgradcheck

FLOATS = [np.float32, np.float64]
NONFINITE = [-np.inf, -2.0, -0.0, 0.0, 0.5, 2.0, np.inf, np.nan]
TOL = {np.float32: (2e-6, 1e-6), np.float64: (1e-12, 1e-12)}


def assert_close(ours: Any, theirs: Any, dtype: Any = np.float64) -> None:
    """Equal shapes and values within ``dtype``'s tolerance; NaN where NaN, and
    infinities of the same sign where infinite."""
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.shape == theirs.shape, f"shape {ours.shape} != {theirs.shape}"
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol, equal_nan=True)


def check_grads(fn: Callable[..., Tensor], *arrays: np.ndarray) -> None:
    """gradcheck and gradgradcheck of ``fn`` in float64."""
    leaves = [mta.tensor(a, dtype=mta.float64, requires_grad=True) for a in arrays]
    assert gradcheck(fn, leaves)
    assert gradgradcheck(fn, leaves)


def against_torch(
    ours: Callable[..., Tensor],
    theirs: Callable[..., Any],
    arrays: list[np.ndarray],
    dtype: Any,
    grad_output: float | None = None,
    device: str = "cpu",
) -> None:
    """The output and every input's gradient of ``ours`` equal PyTorch's ``theirs`` for
    ``arrays`` cast to ``dtype``; the incoming gradient is random (or ``grad_output``
    everywhere)."""
    torch = pytest.importorskip("torch")
    cast = [a.astype(dtype) for a in arrays]
    a = [mta.tensor(x, device=device, requires_grad=True) for x in cast]
    b = [torch.tensor(x, requires_grad=True) for x in cast]
    ya, yb = ours(*a), theirs(*b)
    assert ya.dtype == yb.detach().numpy().dtype
    assert ya.device == mta.Device(device)
    assert_close(to_host(ya), yb.detach().numpy(), dtype)
    if grad_output is None:
        g = np.random.default_rng(7).standard_normal(ya.shape).astype(ya.dtype)
    else:
        g = np.full(ya.shape, grad_output, dtype=ya.dtype)
    ya.backward(mta.tensor(g, device=device))
    yb.backward(torch.tensor(g))
    for x, y in zip(a, b, strict=True):
        theirs_grad = np.zeros(x.shape, x.dtype) if y.grad is None else y.grad.numpy()
        assert x.grad is not None and x.grad.dtype == x.dtype
        assert_close(to_host(x.grad), theirs_grad, dtype)


# ================================================================== pad
NUMPY_MODE = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def pad_ref(x: np.ndarray, pad: tuple[int, ...], mode: str, value: float = 0.0) -> np.ndarray:
    """PyTorch's padding with ``np.pad``: grow by the positive widths (mirrored or
    repeated about the original edges), then crop the negative ones; circular mode crops
    first and wraps what is left."""
    widths = [(0, 0)] * x.ndim
    for i in range(len(pad) // 2):
        widths[x.ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    grown = [(max(left, 0), max(right, 0)) for left, right in widths]

    def crop(a: np.ndarray) -> np.ndarray:
        return a[
            tuple(slice(max(-lo, 0), a.shape[d] - max(-hi, 0)) for d, (lo, hi) in enumerate(widths))
        ]

    if mode == "circular":
        return np.pad(crop(x), grown, mode="wrap")
    extra = {"constant_values": value} if mode == "constant" else {}
    return crop(np.pad(x, grown, mode=NUMPY_MODE[mode], **extra))  # type: ignore[call-overload]


def pad_grad_ref(
    shape: tuple[int, ...], pad: tuple[int, ...], mode: str, g: np.ndarray
) -> np.ndarray:
    """The gradient of padding: each output's gradient added to the input it copies
    (found by padding the input's flat positions; -1 marks constant fill)."""
    positions = np.arange(math.prod(shape), dtype=np.float64).reshape(shape)
    source = pad_ref(positions, pad, mode, value=-1.0)
    grad = np.zeros(math.prod(shape))
    copied = source >= 0
    np.add.at(grad, source[copied].astype(np.int64), g[copied])
    return grad.reshape(shape)


PAD_CASES = [
    ((5,), (1, 2), "constant"),
    ((2, 3, 4), (1, -1, 2, 0), "constant"),
    ((2, 3, 4), (-2, -1, 0, 0, 1, 1), "constant"),
    ((2, 3, 4, 5), (1, 2, 3, 4, 0, 1, 1, 0), "constant"),
    ((3, 4), (-4, 0), "constant"),
    ((2, 5), (2, 1), "reflect"),
    ((2, 3, 5), (-1, 3), "reflect"),
    ((2, 3, 4, 5), (1, 2, 3, 0), "reflect"),
    ((3, 4, 5), (2, 2, -1, 3), "reflect"),
    ((1, 2, 3, 4, 5), (1, 2, 0, 2, 1, 1), "reflect"),
    ((2, 3, 4, 4), (1, 1, 2, 0, 2, 1), "reflect"),
    ((2, 5), (3, 7), "replicate"),
    ((2, 3, 4, 5), (-1, 2, 3, 1), "replicate"),
    ((1, 2, 3, 2, 2), (2, 1, 0, 3, 1, 1), "replicate"),
    ((2, 5), (5, 2), "circular"),
    ((2, 3, 4, 5), (2, -1, 1, 4), "circular"),
    ((1, 2, 3, 2, 2), (1, 1, 2, 1, -1, 2), "circular"),
]
PAD_IDS = [f"{mode}-{shape}-{pad}" for shape, pad, mode in PAD_CASES]


@pytest.mark.parametrize("shape,pad,mode", PAD_CASES, ids=PAD_IDS)
def test_pad_matches_numpy_pad(
    shape: tuple[int, ...], pad: tuple[int, ...], mode: str, device: str
) -> None:
    x = np.random.default_rng(0).standard_normal(shape)
    value = 2.5 if mode == "constant" else None
    t = mta.tensor(x, device=device, requires_grad=True)
    out = F.pad(t, pad, mode, value)
    expected = pad_ref(x, pad, mode, 2.5)
    assert out.device == mta.Device(device) and out.dtype == np.float64
    np.testing.assert_array_equal(to_host(out), expected)  # copies: exact
    g = np.random.default_rng(1).standard_normal(expected.shape)
    out.backward(mta.tensor(g, device=device))
    np.testing.assert_allclose(
        to_host(t.grad), pad_grad_ref(shape, pad, mode, g), rtol=1e-12, atol=1e-14
    )


@pytest.mark.parametrize("dtype", FLOATS, ids=["float32", "float64"])
@pytest.mark.parametrize("shape,pad,mode", PAD_CASES, ids=PAD_IDS)
def test_pad_values_and_gradients_match_torch(
    shape: tuple[int, ...], pad: tuple[int, ...], mode: str, dtype: Any
) -> None:
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(2).standard_normal(shape)
    value = -1.5 if mode == "constant" else None
    against_torch(
        lambda t: F.pad(t, pad, mode, value),
        lambda t: torch.nn.functional.pad(t, pad, mode, value),
        [x],
        dtype,
    )


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad_gradcheck_and_gradgradcheck(mode: str) -> None:
    x = np.random.default_rng(3).standard_normal((2, 3, 4))
    check_grads(lambda t: F.pad(t, (2, -1, 1, 2), mode), x)


@pytest.mark.parametrize("grad_output", [1.0, np.inf])
@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad_of_non_finite_values_matches_torch(mode: str, grad_output: float) -> None:
    torch = pytest.importorskip("torch")
    x = np.array([NONFINITE, NONFINITE[::-1]])
    value = np.nan if mode == "constant" else None
    for dtype in FLOATS:
        against_torch(
            lambda t: F.pad(t, (3, 4), mode, value),
            lambda t: torch.nn.functional.pad(t, (3, 4), mode, value),
            [x],
            dtype,
            grad_output,
        )


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad_of_integers_matches_torch(mode: str) -> None:
    torch = pytest.importorskip("torch")
    x = np.arange(24).reshape(2, 3, 4)
    value = 2.5 if mode == "constant" else None  # truncated to 2 in an integer tensor
    ours = F.pad(mta.tensor(x), (2, 1, 1, 1), mode, value)
    theirs = torch.nn.functional.pad(torch.tensor(x), (2, 1, 1, 1), mode, value)
    assert ours.dtype == np.int64
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_pad_without_widths_returns_a_new_tensor() -> None:
    x = mta.tensor([[1.0, 2.0]], requires_grad=True)
    for mode in ["constant", "reflect"]:
        y = F.pad(x, (0, 0), mode)
        assert y is not x and y.tolist() == x.tolist()
        y.sum().backward()
    assert x.grad is not None and x.grad.tolist() == [[2.0, 2.0]]


PAD_ERRORS = [
    ((1, 3, 4), (1,), "constant", None, ValueError, "divisible by 2"),
    (
        (1, 3, 4),
        (1, 1) * 4,
        "constant",
        None,
        ValueError,
        "padding length 8 and input of dimension 3",
    ),
    ((1, 3, 4), (1.5, 1), "constant", None, TypeError, "tuple of ints"),
    ((1, 3, 4), 2, "constant", None, TypeError, "tuple of ints"),
    ((1, 3, 4), (1, 1), "bogus", None, ValueError, "unrecognised padding mode 'bogus'"),
    ((1, 3, 4), (-5, 0), "constant", None, ValueError, "negative output size"),
    ((1, 3, 4), (1, 1), "reflect", 2.0, ValueError, "doesn't take in value"),
    (
        (1, 3, 4),
        (4, 1),
        "reflect",
        None,
        ValueError,
        r"less than the corresponding input dim.*\(4, 1\)",
    ),
    ((1, 3, 4), (1, 1, 3, 0), "reflect", None, ValueError, "at dimension 1"),
    ((1, 3, 4), (5, 0), "circular", None, ValueError, "wrapping around more than once"),
    ((1, 3, 4), (-4, -1), "replicate", None, ValueError, "too small"),
    ((1, 3, 4), (-4, 0), "reflect", None, ValueError, "calculated output size 0"),
    ((1, 0, 3), (1, 1), "reflect", None, ValueError, "non-zero dimensions"),
    ((0, 3), (1, 1), "replicate", None, ValueError, "non-zero dimensions"),
    ((4,), (1, 1), "reflect", None, NotImplementedError, "padding size 2 is not supported for 1D"),
    ((1, 3, 4), (1, 1, 1, 1, 1, 1), "replicate", None, NotImplementedError, "3D input"),
    ((1, 1, 1, 1, 1, 3, 4), (1, 1), "circular", None, NotImplementedError, "7D"),
]


@pytest.mark.parametrize("shape,pad,mode,value,error,match", PAD_ERRORS)
def test_pad_refuses_bad_arguments_like_torch(
    shape: tuple[int, ...], pad: Any, mode: str, value: Any, error: type, match: str
) -> None:
    x = mta.zeros(*shape)
    with pytest.raises(error, match=match):
        F.pad(x, pad, mode, value)
    torch = pytest.importorskip("torch")
    with pytest.raises((RuntimeError, NotImplementedError, TypeError)):  # refused there too
        torch.nn.functional.pad(torch.zeros(*shape), pad, mode, value)


def test_pad_accepts_what_torch_accepts_at_the_edges() -> None:
    torch = pytest.importorskip("torch")
    cases = [
        ((0, 2, 3), (1, 1), "replicate"),  # an empty batch
        ((1, 0, 3), (1, 1), "circular"),
        ((1, 3, 4), (4, 4), "circular"),  # a whole period on each side
        ((1, 3, 4), (3, 3), "reflect"),
        ((1, 3, 4), (-4, 0), "constant"),  # cropped to nothing
        ((1, 3, 4), (-3, -1), "circular"),
    ]
    for shape, pad, mode in cases:
        x = np.random.default_rng(4).standard_normal(shape)
        ours = F.pad(mta.tensor(x), pad, mode)
        theirs = torch.nn.functional.pad(torch.tensor(x), pad, mode)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


PAD_LAYERS: list[tuple[str, tuple[Any, ...], tuple[int, ...]]] = [
    ("ZeroPad1d", (2,), (2, 3, 5)),
    ("ZeroPad1d", ((1, -2),), (3, 5)),
    ("ZeroPad2d", ((1, 0, 2, 3),), (2, 3, 4, 5)),
    ("ZeroPad3d", (1,), (1, 2, 3, 4, 5)),
    ("ConstantPad1d", ((3, 1), 3.5), (2, 3, 5)),
    ("ConstantPad2d", (2, -1.0), (3, 4, 5)),
    ("ConstantPad3d", ((1, 0, 0, 1, 2, 0), 7.0), (2, 3, 4, 5)),
    ("ReflectionPad1d", (3,), (2, 3, 5)),
    ("ReflectionPad2d", ((1, 3, 2, 0),), (2, 3, 4, 5)),
    ("ReflectionPad3d", (1,), (1, 2, 3, 4, 5)),
    ("ReplicationPad1d", ((0, 6),), (3, 5)),
    ("ReplicationPad2d", (2,), (3, 4, 5)),
    ("ReplicationPad3d", ((1, 2, 0, 1, 3, 0),), (1, 2, 3, 4, 5)),
    ("CircularPad1d", ((5, 2),), (2, 3, 5)),
    ("CircularPad2d", ((1, 2, 4, 0),), (2, 3, 4, 5)),
    ("CircularPad3d", (1,), (2, 3, 4, 5)),
]


@pytest.mark.parametrize("name,args,shape", PAD_LAYERS, ids=[f"{c[0]}-{c[1]}" for c in PAD_LAYERS])
def test_padding_layers_match_torch(
    name: str, args: tuple[Any, ...], shape: tuple[int, ...]
) -> None:
    torch = pytest.importorskip("torch")
    ours, theirs = getattr(nn, name)(*args), getattr(torch.nn, name)(*args)
    assert repr(ours) == repr(theirs)
    assert tuple(ours.padding) == tuple(theirs.padding)
    x = np.random.default_rng(5).standard_normal(shape).astype(np.float32)
    against_torch(ours, theirs, [x], np.float32)


def test_padding_layers_refuse_a_wrong_number_of_widths_and_dims() -> None:
    with pytest.raises(ValueError, match="an int or a tuple of 4 ints"):
        nn.ReflectionPad2d((1, 2))
    with pytest.raises(ValueError, match=r"expected 3D or 4D input \(got 2D input\)"):
        nn.CircularPad2d(1)(mta.zeros(3, 4))
    with pytest.raises(NotImplementedError, match="not supported"):
        nn.ReflectionPad1d(1)(mta.zeros(4))


# ================================================================== one_hot
@pytest.mark.parametrize("shape,num_classes", [((5,), -1), ((2, 3), 7), ((), 4), ((2, 0), 3)])
def test_one_hot_matches_numpy_and_torch(
    shape: tuple[int, ...], num_classes: int, device: str
) -> None:
    high = 4 if num_classes == -1 else num_classes
    labels = np.random.default_rng(6).integers(0, high, size=shape)
    out = F.one_hot(mta.tensor(labels, device=device), num_classes)
    classes = labels.max() + 1 if num_classes == -1 else num_classes
    expected = np.eye(classes, dtype=np.int64)[labels]
    assert out.dtype == np.int64 and not out.requires_grad and out.device == mta.Device(device)
    np.testing.assert_array_equal(to_host(out), expected)
    torch = pytest.importorskip("torch")
    theirs = torch.nn.functional.one_hot(torch.tensor(labels), num_classes)
    np.testing.assert_array_equal(to_host(out), theirs.numpy())


def test_one_hot_accepts_every_integer_dtype() -> None:
    for dtype in [np.int8, np.uint8, np.int32, np.int64]:
        out = F.one_hot(mta.tensor(np.array([2, 0], dtype=dtype)), 300)
        assert out.dtype == np.int64 and out.shape == (2, 300)
        assert out.numpy().argmax(1).tolist() == [2, 0] and out.numpy().sum() == 2


@pytest.mark.parametrize(
    "labels,num_classes,error,match",
    [
        (np.array([0.0, 1.0]), -1, TypeError, "index tensor of integers.*float64"),
        (np.array([True, False]), -1, TypeError, "index tensor of integers.*bool"),
        (np.array([0, -1]), -1, IndexError, "non-negative, got -1"),
        (np.array([0, 3]), 3, IndexError, "smaller than num_classes=3, got 3"),
        (np.array([0, 1]), 0, IndexError, "smaller than num_classes=0"),
        (np.array([], dtype=np.int64), -1, ValueError, "can not infer total number of classes"),
        (np.array([0, 1]), -2, ValueError, "num_classes must be -1"),
        (np.array([0, 1]), 2.0, TypeError, "num_classes must be an int"),
    ],
)
def test_one_hot_refuses_bad_input(
    labels: np.ndarray, num_classes: Any, error: type, match: str
) -> None:
    with pytest.raises(error, match=match):
        F.one_hot(mta.tensor(labels), num_classes)
    torch = pytest.importorskip("torch")
    with pytest.raises((RuntimeError, TypeError)):  # refused there too
        torch.nn.functional.one_hot(torch.tensor(labels), num_classes)


# ================================================================== norms and distances
def norm_ref(x: np.ndarray, p: float, axis: int, keepdims: bool = False) -> np.ndarray:
    """The vector p-norm written with NumPy."""
    a = np.abs(x)
    if p == np.inf:
        return a.max(axis, keepdims=keepdims)  # type: ignore[no-any-return]
    if p == 0:
        return (x != 0).sum(axis, keepdims=keepdims).astype(x.dtype)  # type: ignore[no-any-return]
    return (a**p).sum(axis, keepdims=keepdims) ** (1 / p)  # type: ignore[no-any-return]


NORM_P = [2.0, 1.0, 3.0, 1.5, 0.5, np.inf, 0.0, -1.0]


@pytest.mark.parametrize("p", NORM_P)
@pytest.mark.parametrize("shape,dim", [((4, 5), 1), ((3, 4, 2), 0), ((6,), -1), ((2, 3, 4), -1)])
def test_normalize_matches_numpy_and_torch(
    shape: tuple[int, ...], dim: int, p: float, device: str
) -> None:
    x = np.random.default_rng(8).standard_normal(shape)
    out = F.normalize(mta.tensor(x, device=device), p, dim)
    expected = x / np.maximum(norm_ref(x, p, dim, keepdims=True), 1e-12)
    assert_close(to_host(out), expected)
    if p == 2.0:
        np.testing.assert_allclose(np.linalg.norm(to_host(out), axis=dim), 1.0, rtol=1e-12)
    torch = pytest.importorskip("torch")
    for dtype in FLOATS:
        against_torch(
            lambda t: F.normalize(t, p, dim),
            lambda t: torch.nn.functional.normalize(t, p, dim),
            [x],
            dtype,
            device=device,
        )


@pytest.mark.parametrize("eps", [1e-12, 1e-2])
def test_normalize_of_short_vectors_divides_by_eps_like_torch(eps: float) -> None:
    torch = pytest.importorskip("torch")
    x = np.array([[3e-13, -4e-13], [0.0, 0.0], [3.0, 4.0], [1e-3, 0.0]])
    expected = x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), eps)
    assert_close(F.normalize(mta.tensor(x), eps=eps).numpy(), expected)
    for dtype in FLOATS:
        against_torch(
            lambda t: F.normalize(t, eps=eps),
            lambda t: torch.nn.functional.normalize(t, eps=eps),
            [x],
            dtype,
        )


def _shuffled_pairs() -> tuple[np.ndarray, np.ndarray]:
    """Every pair of NONFINITE values as a 2-vector, and the same rows shuffled."""
    pairs = np.array(list(itertools.product(NONFINITE, NONFINITE)))
    return pairs, pairs[np.random.default_rng(9).permutation(len(pairs))]


@pytest.mark.parametrize("grad_output", [1.0, np.inf])
@pytest.mark.parametrize("p", NORM_P)
def test_normalize_of_non_finite_values_matches_torch(p: float, grad_output: float) -> None:
    torch = pytest.importorskip("torch")
    pairs, _ = _shuffled_pairs()
    with np.errstate(all="ignore"):
        for dtype in FLOATS:
            against_torch(
                lambda t: F.normalize(t, p, 1),
                lambda t: torch.nn.functional.normalize(t, p, 1),
                [pairs],
                dtype,
                grad_output,
            )


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, 1.5, 0.5, np.inf, -1.0])
def test_normalize_gradcheck_and_gradgradcheck(p: float) -> None:
    x = np.random.default_rng(10).uniform(0.5, 2.0, (3, 4)) * np.array([1, -1, 1, -1])
    x[1, 2] = 3.0  # one largest magnitude per row for the inf-norm
    x[2, 0] = -3.5
    x[0, 3] = 2.5
    check_grads(lambda t: F.normalize(t, p, 1), x)


def cosine_ref(x1: np.ndarray, x2: np.ndarray, dim: int, eps: float = 1e-8) -> np.ndarray:
    """PyTorch's formula with NumPy: each input divided by its clamped 2-norm."""
    x1, x2 = np.broadcast_arrays(x1, x2)
    n1 = np.maximum(np.linalg.norm(x1, axis=dim, keepdims=True), eps)
    n2 = np.maximum(np.linalg.norm(x2, axis=dim, keepdims=True), eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)  # type: ignore[no-any-return]


COSINE_CASES = [
    ((4, 5), (4, 5), 1),
    ((3, 1, 4), (1, 5, 4), -1),
    ((4, 6), (6,), -1),
    ((2, 3), (2, 3), 0),
    ((5,), (5,), 0),
]


@pytest.mark.parametrize("shape1,shape2,dim", COSINE_CASES)
def test_cosine_similarity_matches_numpy_and_torch(
    shape1: tuple[int, ...], shape2: tuple[int, ...], dim: int, device: str
) -> None:
    rng = np.random.default_rng(11)
    x1, x2 = rng.standard_normal(shape1), rng.standard_normal(shape2)
    out = F.cosine_similarity(mta.tensor(x1, device=device), mta.tensor(x2, device=device), dim)
    assert_close(to_host(out), cosine_ref(x1, x2, dim))
    assert np.all(np.abs(to_host(out)) <= 1.0)
    torch = pytest.importorskip("torch")
    for dtype in FLOATS:
        against_torch(
            lambda a, b: F.cosine_similarity(a, b, dim),
            lambda a, b: torch.nn.functional.cosine_similarity(a, b, dim),
            [x1, x2],
            dtype,
            device=device,
        )


@pytest.mark.parametrize("eps", [1e-8, 0.5])
def test_cosine_similarity_of_short_and_zero_vectors_matches_torch(eps: float) -> None:
    """The norms are clamped to eps, but the gradient flows through them unclamped."""
    torch = pytest.importorskip("torch")
    x1 = np.array([[0.0, 0.0], [1e-9, 2e-9], [1.0, 2.0], [3e-9, 0.0]])
    x2 = np.array([[1.0, 2.0], [3.0, -1.0], [0.0, 0.0], [2e-9, 1e-9]])
    assert_close(
        F.cosine_similarity(mta.tensor(x1), mta.tensor(x2), eps=eps).numpy(),
        cosine_ref(x1, x2, 1, eps),
    )
    for dtype in FLOATS:
        against_torch(
            lambda a, b: F.cosine_similarity(a, b, eps=eps),
            lambda a, b: torch.nn.functional.cosine_similarity(a, b, eps=eps),
            [x1, x2],
            dtype,
        )


@pytest.mark.parametrize("grad_output", [1.0, np.inf])
def test_cosine_similarity_of_non_finite_values_matches_torch(grad_output: float) -> None:
    torch = pytest.importorskip("torch")
    pairs, shuffled = _shuffled_pairs()
    with np.errstate(all="ignore"):
        for dtype in FLOATS:
            against_torch(
                F.cosine_similarity,
                torch.nn.functional.cosine_similarity,
                [pairs, shuffled],
                dtype,
                grad_output,
            )


def test_cosine_similarity_of_mixed_dtypes_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(12)
    x1, x2 = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal((3, 4))
    ours = F.cosine_similarity(mta.tensor(x1), mta.tensor(x2))
    theirs = torch.nn.functional.cosine_similarity(torch.tensor(x1), torch.tensor(x2))
    assert ours.dtype == np.float64
    assert_close(ours.numpy(), theirs.numpy())
    ints = F.cosine_similarity(mta.tensor([[1, 2]]), mta.tensor([[2.0, 4.0]]))
    theirs_ints = torch.nn.functional.cosine_similarity(
        torch.tensor([[1, 2]]), torch.tensor([[2.0, 4.0]])
    )
    assert ints.dtype == np.float32
    assert_close(ints.numpy(), theirs_ints.numpy(), np.float32)


def test_cosine_similarity_gradcheck_and_gradgradcheck() -> None:
    rng = np.random.default_rng(13)
    check_grads(
        lambda a, b: F.cosine_similarity(a, b, dim=1),
        rng.standard_normal((3, 4)),
        rng.standard_normal((1, 4)),
    )
    check_grads(
        lambda a, b: F.cosine_similarity(a, b, dim=0),
        rng.standard_normal((3, 2)),
        rng.standard_normal((3, 2)),
    )


PAIRWISE_CASES = [((4, 5), (4, 5)), ((3, 1, 4), (5, 4)), ((6,), (6,)), ((4, 3), (3,)), ((), ())]


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, 0.5, np.inf, 0.0])
@pytest.mark.parametrize("shape1,shape2", PAIRWISE_CASES)
def test_pairwise_distance_matches_numpy_and_torch(
    shape1: tuple[int, ...], shape2: tuple[int, ...], p: float, keepdim: bool
) -> None:
    rng = np.random.default_rng(14)
    x1, x2 = rng.standard_normal(shape1), rng.standard_normal(shape2)
    out = F.pairwise_distance(mta.tensor(x1), mta.tensor(x2), p, 1e-6, keepdim)
    difference = np.asarray(x1 - x2 + 1e-6)
    expected = norm_ref(
        difference.reshape(-1) if difference.ndim == 0 else difference, p, -1, keepdim
    )
    assert_close(out.numpy(), np.asarray(expected).reshape(out.shape))
    torch = pytest.importorskip("torch")
    for dtype in FLOATS:
        against_torch(
            lambda a, b: F.pairwise_distance(a, b, p, 1e-6, keepdim),
            lambda a, b: torch.nn.functional.pairwise_distance(a, b, p, 1e-6, keepdim),
            [x1, x2],
            dtype,
        )


@pytest.mark.parametrize("grad_output", [1.0, np.inf])
@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, 0.5, np.inf, 0.0])
def test_pairwise_distance_of_non_finite_values_matches_torch(p: float, grad_output: float) -> None:
    torch = pytest.importorskip("torch")
    pairs, shuffled = _shuffled_pairs()
    with np.errstate(all="ignore"):
        for dtype in FLOATS:
            against_torch(
                lambda a, b: F.pairwise_distance(a, b, p),
                lambda a, b: torch.nn.functional.pairwise_distance(a, b, p),
                [pairs, shuffled],
                dtype,
                grad_output,
            )


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, 1.5, 0.5, np.inf])
def test_pairwise_distance_gradcheck_and_gradgradcheck(p: float) -> None:
    rng = np.random.default_rng(15)
    x1 = rng.uniform(0.5, 2.0, (3, 4)) * np.array([1, -1, 1, -1])
    check_grads(lambda a, b: F.pairwise_distance(a, b, p), x1, rng.uniform(-0.2, 0.2, (3, 4)))


def test_pairwise_distance_of_integers_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    ours = F.pairwise_distance(mta.tensor([[1, 2], [3, 5]]), mta.tensor([[2, 3], [0, 1]]))
    theirs = torch.nn.functional.pairwise_distance(
        torch.tensor([[1, 2], [3, 5]]), torch.tensor([[2, 3], [0, 1]])
    )
    assert ours.dtype == np.float32
    assert_close(ours.numpy(), theirs.numpy(), np.float32)


def test_distance_functions_refuse_bad_input() -> None:
    with pytest.raises(TypeError, match="floating-point tensor, got int64"):
        F.normalize(mta.tensor([[1, 2]]))
    with pytest.raises(IndexError, match="dim 1 is out of range"):
        F.normalize(mta.tensor([1.0, 2.0]))  # dim=1 by default, as in PyTorch
    with pytest.raises(TypeError, match="common dtype to be floating point"):
        F.cosine_similarity(mta.tensor([[1, 2]]), mta.tensor([[1, 2]]))
    with pytest.raises(ValueError, match=r"x1 \(3, 4\) and x2 \(2, 4\) do not broadcast"):
        F.cosine_similarity(mta.zeros(3, 4), mta.zeros(2, 4))
    with pytest.raises(ValueError, match="do not broadcast"):
        F.pairwise_distance(mta.zeros(3, 4), mta.zeros(2, 4))
    with pytest.raises(TypeError, match="p must be a number"):
        F.normalize(mta.zeros(2, 2), p="fro")  # type: ignore[arg-type]


def test_distance_layers_match_torch() -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(16)
    x1, x2 = rng.standard_normal((3, 4, 2)), rng.standard_normal((3, 4, 2))
    pairs = [
        (nn.CosineSimilarity(), torch.nn.CosineSimilarity()),
        (nn.CosineSimilarity(dim=2, eps=0.1), torch.nn.CosineSimilarity(dim=2, eps=0.1)),
        (nn.PairwiseDistance(), torch.nn.PairwiseDistance()),
        (
            nn.PairwiseDistance(p=1.0, eps=0.0, keepdim=True),
            torch.nn.PairwiseDistance(1.0, 0.0, True),
        ),
    ]
    for ours, theirs in pairs:
        assert repr(ours) == repr(theirs)
        against_torch(ours, theirs, [x1, x2], np.float64)


# ================================================================== containers
def build(nn_lib: Any, ones: Callable[..., Any], zeros: Callable[..., Any]) -> Any:
    """The same model in either library: every container, nested, plus plain layers."""

    class Model(nn_lib.Module):  # type: ignore[misc,name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.stem = nn_lib.Linear(3, 4)
            self.blocks = nn_lib.ModuleDict(
                {"proj": nn_lib.Linear(4, 4), "act": nn_lib.ReLU(), "head": nn_lib.Linear(4, 2)}
            )
            self.scales = nn_lib.ParameterList([ones(4), nn_lib.Parameter(zeros(2)), 7])
            self.bias = nn_lib.ParameterDict(
                {"user": zeros(4), "item": ones(2), "global": zeros(1)}
            )
            self.nested = nn_lib.ModuleDict(
                [
                    ("inner", nn_lib.ModuleList([nn_lib.Linear(2, 2)])),
                    ("pd", nn_lib.ParameterDict(OrderedDict([("z", ones(2)), ("a", zeros(3))]))),
                    ("pl", nn_lib.ParameterList()),
                ]
            )
            self.nested["pl"].append(ones(1))

        def forward(self, x: Any) -> Any:
            h = self.blocks["act"](
                self.blocks["proj"](self.stem(x) * self.scales[0] + self.bias["user"])
            )
            out = self.blocks["head"](h) * self.scales[1] + self.bias["item"] + self.bias["global"]
            out = self.nested["inner"][0](out) + self.nested["pl"][0]
            return out.sum() + self.nested["pd"]["z"].sum() + self.nested["pd"]["a"].sum()

    return Model()


def test_containers_register_with_torchs_state_dict_keys() -> None:
    torch = pytest.importorskip("torch")
    ours, theirs = build(nn, mta.ones, mta.zeros), build(torch.nn, torch.ones, torch.zeros)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    named_ours = [(k, tuple(v.shape)) for k, v in ours.named_parameters()]
    named_theirs = [(k, tuple(v.shape)) for k, v in theirs.named_parameters()]
    assert named_ours == named_theirs
    assert "bias.global" in dict(named_ours) and "scales.2" not in ours.state_dict()
    assert [k for k, _ in ours.named_modules()] == [k for k, _ in theirs.named_modules()]


def test_containers_load_state_dict_round_trips() -> None:
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    theirs = build(torch.nn, torch.randn, torch.randn)
    ours = build(nn, mta.ones, mta.zeros)
    state = {k: v.detach().numpy().astype(np.float32) for k, v in theirs.state_dict().items()}
    assert ours.load_state_dict(state) == ([], [])
    x = np.random.default_rng(17).standard_normal((5, 3)).astype(np.float32)
    np.testing.assert_allclose(
        ours(mta.tensor(x)).item(), theirs(torch.tensor(x)).item(), rtol=1e-5
    )
    again = build(nn, mta.zeros, mta.ones)
    again.load_state_dict(ours.state_dict())
    for (name, a), (_, b) in zip(
        again.state_dict().items(), ours.state_dict().items(), strict=True
    ):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=name)
    mismatched = dict(state, **{"bias.user": np.zeros(5, np.float32)})
    with pytest.raises(RuntimeError, match=r"size mismatch for bias.user"):
        ours.load_state_dict(mismatched)


def test_containers_move_zero_and_train_with_their_contents(device: str) -> None:
    model = build(nn, mta.ones, mta.zeros)
    model.to(device).to(mta.float64)
    for name, param in model.named_parameters():
        assert param.device == mta.Device(device) and param.dtype == np.float64, name
    model(mta.ones(2, 3, device=device, dtype=mta.float64)).backward()
    grads = {name: p.grad for name, p in model.named_parameters()}
    assert all(g is not None for g in grads.values()), [k for k, g in grads.items() if g is None]
    before = [model.nested["pl"][0].tolist(), model.bias["item"].tolist()]
    mta.optim.SGD(model.parameters(), lr=0.1).step()
    # the optimizer updated a list entry (its gradient: 2 rows x 2 columns) and a dict entry
    assert model.nested["pl"][0].tolist() == [before[0][0] - 0.4]
    assert model.bias["item"].tolist() != before[1]
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())


def test_module_dict_behaves_like_torchs() -> None:
    torch = pytest.importorskip("torch")
    for lib in (nn, torch.nn):
        d = lib.ModuleDict({"b": lib.ReLU(), "a": lib.Linear(1, 2)})
        assert list(d) == ["b", "a"] and list(d.keys()) == ["b", "a"]  # insertion order
        d["c"] = lib.Tanh()
        d.update([("d", lib.Sigmoid()), ("b", lib.Identity())])
        assert list(d) == ["b", "a", "c", "d"] and type(d["b"]).__name__ == "Identity"
        assert "a" in d and "z" not in d and len(d) == 4
        assert type(d.pop("a")).__name__ == "Linear" and list(d) == ["b", "c", "d"]
        del d["c"]
        assert [k for k, _ in d.items()] == ["b", "d"] and len(list(d.values())) == 2
        assert len(list(d.parameters())) == 0
        d.clear()
        assert len(d) == 0
        with pytest.raises(KeyError):
            d["missing"]
    ours, theirs = nn.ModuleDict({"act": nn.ReLU()}), torch.nn.ModuleDict({"act": torch.nn.ReLU()})
    assert repr(ours) == repr(theirs)
    assert repr(nn.ModuleDict()) == repr(torch.nn.ModuleDict())


def test_module_dict_refuses_bad_updates() -> None:
    with pytest.raises(
        TypeError,
        match="ModuleDict.update should be called with an iterable of key/value pairs, but got int",
    ):
        nn.ModuleDict(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="element #0 should be Iterable; is ReLU"):
        nn.ModuleDict([nn.ReLU()])
    with pytest.raises(ValueError, match="element #1 has length 3; 2 is required"):
        nn.ModuleDict([("a", nn.ReLU()), ("b", nn.ReLU(), 1)])
    with pytest.raises(TypeError, match="is not a Module"):
        nn.ModuleDict({"a": 3})  # type: ignore[dict-item]
    with pytest.raises(KeyError, match='attribute "keys" already exists'):
        nn.ModuleDict({"keys": nn.ReLU()})
    with pytest.raises(NotImplementedError):
        nn.ModuleDict()(mta.zeros(1))


def test_parameter_list_behaves_like_torchs() -> None:
    torch = pytest.importorskip("torch")
    for lib, tensor in ((nn, mta.tensor), (torch.nn, torch.tensor)):
        pl = lib.ParameterList([tensor([1.0]), tensor([2.0, 3.0])])
        assert len(pl) == 2 and all(isinstance(p, lib.Parameter) for p in pl)
        pl.append(tensor([4.0])).extend([tensor([5.0]), "note"])
        pl += [tensor([6.0])]
        assert len(pl) == 6 and pl[4] == "note" and pl[-1].tolist() == [6.0]
        pl[0] = tensor([9.0])
        assert isinstance(pl[0], lib.Parameter) and pl[0].tolist() == [9.0]
        part = pl[1:4:2]
        assert type(part) is lib.ParameterList and [p.tolist() for p in part] == [[2.0, 3.0], [5.0]]
        assert [name for name, _ in pl.named_parameters()] == ["0", "1", "2", "3", "5"]
        with pytest.raises(IndexError, match="out of range"):
            pl[6]
        with pytest.raises(
            TypeError, match="ParameterList.extend should be called with an iterable, but got"
        ):
            pl.extend(tensor([1.0]))
        with pytest.raises(RuntimeError, match="ParameterList should not be called."):
            pl()
    ours = nn.ParameterList([mta.zeros(2, 3), mta.zeros(2), 3])
    theirs = torch.nn.ParameterList([torch.zeros(2, 3), torch.zeros(2), 3])
    assert repr(ours) == repr(theirs).replace("torch.float32", "float32")
    one_ours, one_theirs = (
        nn.ParameterList([mta.zeros(2)]),
        torch.nn.ParameterList([torch.zeros(2)]),
    )
    assert repr(one_ours) == repr(one_theirs).replace("torch.float32", "float32")
    assert repr(nn.ParameterList()) == "ParameterList()"


def test_parameter_list_shares_memory_with_the_tensors_given() -> None:
    t = mta.zeros(3)
    pl = nn.ParameterList([t])
    with mta.no_grad():
        pl[0].add_(1.0)
    assert t.tolist() == [1.0, 1.0, 1.0]
    p = nn.Parameter(mta.zeros(1))
    assert nn.ParameterList([p])[0] is p  # a Parameter is kept, not wrapped again


def test_parameter_dict_behaves_like_torchs() -> None:
    torch = pytest.importorskip("torch")
    for lib, tensor in ((nn, mta.tensor), (torch.nn, torch.tensor)):
        pd = lib.ParameterDict({"b": tensor([1.0]), "a": tensor([2.0])})
        assert list(pd) == ["a", "b"]  # a plain dict is added in sorted order
        pd.update(OrderedDict([("z", tensor([3.0])), ("c", 5)]))
        pd.update([("y", tensor([4.0]))])
        assert list(pd.keys()) == ["a", "b", "z", "c", "y"]
        assert isinstance(pd["z"], lib.Parameter) and pd["c"] == 5
        assert [k for k, _ in pd.named_parameters()] == ["a", "b", "z", "y"]
        assert "c" in pd and "q" not in pd and len(pd) == 5 and list(reversed(pd))[0] == "y"
        assert pd.get("q", 0) == 0 and pd.setdefault("q", tensor([7.0])).tolist() == [7.0]
        assert pd.pop("b").tolist() == [1.0] and "b" not in pd
        key, value = pd.popitem()
        assert key == "q" and value.tolist() == [7.0]
        del pd["c"]
        assert [k for k, _ in pd.items()] == ["a", "z", "y"] and len(list(pd.values())) == 3
        merged = pd | lib.ParameterDict(OrderedDict([("w", tensor([0.0]))]))
        assert list(merged) == ["a", "z", "y", "w"] and merged["a"] is pd["a"]
        copy = pd.copy()
        assert list(copy) == list(pd) and copy["z"] is pd["z"]
        assert list(pd.fromkeys(["m", "n"], tensor([1.0]))) == ["m", "n"]
        pd |= lib.ParameterDict(OrderedDict([("v", tensor([0.0]))]))
        assert list(pd)[-1] == "v"
        pd.clear()
        assert len(pd) == 0 and list(pd.parameters()) == []
        with pytest.raises(TypeError, match="not a string"):
            pd[1] = tensor([1.0])
        with pytest.raises(RuntimeError, match="ParameterDict should not be called."):
            pd(0)
    ours = nn.ParameterDict({"w": mta.zeros(2, 3), "n": 4})
    theirs = torch.nn.ParameterDict({"w": torch.zeros(2, 3), "n": 4})
    assert repr(ours) == repr(theirs).replace("torch.FloatTensor", "float32")


def test_parameter_dict_refuses_bad_keys_and_updates() -> None:
    pd = nn.ParameterDict()
    with pytest.raises(KeyError, match="contain no"):
        pd["a.b"] = mta.zeros(1)
    assert len(pd) == 0  # a refused key is not half-added
    with pytest.raises(KeyError):
        pd["missing"]
    with pytest.raises(TypeError, match="ParameterDict.update should be called with an iterable"):
        pd.update(3)
    with pytest.raises(ValueError, match="element #0 has length 1; 2 is required"):
        pd.update([("a",)])


# ================================================================== channel dropout
def channel_views(x: np.ndarray, y: np.ndarray, batched: bool) -> tuple[np.ndarray, np.ndarray]:
    """``x`` and ``y`` as (channels, values of one channel)."""
    lead = 2 if batched else 1
    count = math.prod(x.shape[:lead])
    return x.reshape(count, -1), y.reshape(count, -1)


CHANNEL_CASES = [
    (F.dropout1d, (40, 50, 3), True),
    (F.dropout1d, (500, 7), False),
    (F.dropout2d, (20, 100, 2, 3), True),
    (F.dropout2d, (20, 100, 5), True),  # a 3-D input is (N, C, L), as PyTorch
    (F.dropout3d, (10, 200, 2, 1, 2), True),
    (F.dropout3d, (300, 2, 2, 2), False),
]


@pytest.mark.filterwarnings("ignore:dropout2d. Received a 3D input")
@pytest.mark.parametrize("dtype", FLOATS, ids=["float32", "float64"])
@pytest.mark.parametrize("p", [0.2, 0.5, 0.75])
@pytest.mark.parametrize(
    "fn,shape,batched", CHANNEL_CASES, ids=[f"{c[0].__name__}-{c[1]}" for c in CHANNEL_CASES]
)
def test_channel_dropout_zeroes_whole_channels_and_scales_the_rest(
    fn: Callable[..., Tensor],
    shape: tuple[int, ...],
    batched: bool,
    p: float,
    dtype: Any,
    device: str,
) -> None:
    mta.manual_seed(0)
    x = np.random.default_rng(18).uniform(0.5, 2.0, shape).astype(dtype)  # no zeros
    y = to_host(fn(mta.tensor(x, device=device), p))
    assert y.dtype == dtype and y.shape == x.shape
    xs, ys = channel_views(x, y, batched)
    dropped = (ys == 0).all(axis=1)
    scale = dtype(1.0 / (1.0 - p))
    kept = ys[~dropped]
    np.testing.assert_array_equal(kept, xs[~dropped] * scale)  # exactly x * (1 / (1 - p))
    np.testing.assert_allclose(kept, xs[~dropped] / (1.0 - p), rtol=2 * np.finfo(dtype).eps)
    # the dropped fraction, one bound on each side: 5 standard deviations of a binomial
    margin = 5.0 * math.sqrt(p * (1 - p) / len(dropped))
    assert dropped.mean() <= p + margin, f"dropped {dropped.mean():.4f} > {p} + {margin:.4f}"
    assert dropped.mean() >= p - margin, f"dropped {dropped.mean():.4f} < {p} - {margin:.4f}"


def test_channel_dropout_gradient_is_the_same_mask() -> None:
    mta.manual_seed(1)
    x = mta.tensor(np.random.default_rng(19).uniform(1.0, 2.0, (8, 16, 3, 3)), requires_grad=True)
    y = F.dropout2d(x, 0.4)
    g = np.random.default_rng(20).standard_normal(x.shape)
    y.backward(mta.tensor(g))
    kept = y.detach().numpy() != 0
    np.testing.assert_array_equal(x.grad.numpy(), np.where(kept, g * (1.0 / 0.6), 0.0))

    def seeded(t: Tensor) -> Tensor:
        mta.manual_seed(2)  # the same mask on every call: a linear map to check
        return F.dropout3d(t, 0.5)

    check_grads(seeded, np.random.default_rng(21).standard_normal((2, 3, 2, 1, 2)))


def test_channel_dropout_of_non_finite_values_follows_torch() -> None:
    """Kept channels are ``x * scale``, dropped ones ``x * 0`` (NaN for inf and NaN, as
    PyTorch's ``input * noise``); with ``p == 1`` every channel is ``x * 0``."""
    torch = pytest.importorskip("torch")
    x = np.tile(np.array(NONFINITE, dtype=np.float32), (64, 1)).reshape(8, 8, 8)
    mta.manual_seed(3)
    with np.errstate(invalid="ignore"):
        y = F.dropout1d(mta.tensor(x), 0.5).numpy()
        dropped = np.isnan(y[..., 0]) & (y[..., 1] == 0)
        assert dropped.any() and not dropped.all()
        np.testing.assert_array_equal(y[dropped], x[dropped] * np.float32(0))
        np.testing.assert_array_equal(y[~dropped], x[~dropped] * np.float32(2))
    for fn in ["dropout1d", "dropout2d"]:
        ours = getattr(F, fn)(mta.tensor(x), 1.0).numpy()
        theirs = getattr(torch.nn.functional, fn)(torch.tensor(x), 1.0).numpy()
        np.testing.assert_array_equal(ours, theirs)


def test_channel_dropout_identity_cases_and_inplace() -> None:
    x = mta.ones(2, 3, 4)
    assert F.dropout1d(x, 0.5, training=False).tolist() == x.tolist()
    y = mta.ones(2, 3, 2, 2)
    assert F.dropout2d(y, 0.0).tolist() == y.tolist()
    mta.manual_seed(4)
    target = mta.ones(30, 20, 4)
    out = F.dropout1d(target, 0.5, inplace=True)
    assert out is target
    values = set(np.unique(target.numpy()).tolist())
    assert values == {0.0, 2.0}
    layer = nn.Dropout2d(0.5, inplace=True).eval()
    z = mta.ones(2, 3, 2, 2)
    assert layer(z) is z and z.tolist() == mta.ones(2, 3, 2, 2).tolist()


def test_channel_dropout_layers_match_torch_and_follow_the_mode() -> None:
    torch = pytest.importorskip("torch")
    for name in ["Dropout1d", "Dropout2d", "Dropout3d"]:
        assert repr(getattr(nn, name)(0.3, True)) == repr(getattr(torch.nn, name)(0.3, True))
        assert repr(getattr(nn, name)()) == repr(getattr(torch.nn, name)())
        with pytest.raises(ValueError, match="between 0 and 1, but got 1.5"):
            getattr(nn, name)(1.5)
    mta.manual_seed(5)
    layer = nn.Dropout3d(0.5)
    x = mta.ones(4, 6, 2, 2, 2)
    y = layer(x).numpy().reshape(24, 8)
    assert all(set(row.tolist()) in ({0.0}, {2.0}) for row in y)
    assert layer.eval()(x).tolist() == x.tolist()


def test_channel_dropout_refuses_and_warns_like_torch() -> None:
    torch = pytest.importorskip("torch")
    with pytest.raises(ValueError, match="between 0 and 1, but got -0.1"):
        F.dropout2d(mta.ones(2, 2, 2, 2), -0.1)
    with pytest.raises(
        ValueError, match="dropout1d: Expected 2D or 3D input, but received a 4D input"
    ):
        F.dropout1d(mta.ones(2, 2, 2, 2))
    with pytest.raises(TypeError, match="floating point"):
        F.dropout2d(mta.ones(2, 2, 2, 2, dtype=mta.int64))
    for fn, shape in [
        ("dropout2d", (2, 3, 4)),
        ("dropout2d", (2, 3, 4, 5, 6)),
        ("dropout3d", (2, 3, 4)),
    ]:
        with warnings.catch_warnings(record=True) as ours_caught:
            warnings.simplefilter("always")
            getattr(F, fn)(mta.ones(*shape), 0.5)
        with warnings.catch_warnings(record=True) as theirs_caught:
            warnings.simplefilter("always")
            getattr(torch.nn.functional, fn)(torch.ones(*shape), 0.5)
        assert [str(w.message) for w in ours_caught] == [str(w.message) for w in theirs_caught]
        assert ours_caught and all(w.filename == __file__ for w in ours_caught)


# ================================================================== on the strict stand-in
@pytest.fixture(params=["strict", "strict:1"])
def strict(request: pytest.FixtureRequest) -> Iterator[str]:
    """The ``strict`` stand-in (NumPy behind CuPy's rules, see ``support/strict_xp.py``)
    registered, on its device 0 and on its device 1: what a GPU would refuse raises."""
    with registered():
        strict_suite.STRICT_DEVICE = request.param
        try:
            yield str(request.param)
        finally:
            strict_suite.STRICT_DEVICE = "strict"


STRICT_CASES: list[tuple[str, Callable[..., Tensor], list[Any], int]] = [
    ("pad_constant", lambda a: F.pad(a, (2, -1, 1, 1), value=0.5), [floats(2, 3, 4)], 2),
    ("pad_reflect", lambda a: F.pad(a, (2, 1, -1, 2), "reflect"), [floats(2, 3, 4)], 2),
    ("pad_replicate", lambda a: F.pad(a, (3, 0, 1, 1, 1, 0), "replicate"), [floats(1, 2, 2, 3)], 2),
    ("pad_circular", lambda a: F.pad(a, (2, -1, 1, 2), "circular"), [floats(2, 3, 4)], 2),
    ("one_hot", lambda a: F.one_hot(a, 5) * 1.0, [INT(5, 3, 4)], 0),
    ("normalize", lambda a: F.normalize(a), [floats(3, 4)], 2),
    ("normalize_p", lambda a: F.normalize(a, 3.0, 0) + F.normalize(a, 0.5, 1), [floats(3, 4)], 2),
    ("normalize_inf", lambda a: F.normalize(a, float("inf")) * F.normalize(a, 1.0), [POS(3, 4)], 2),
    ("cosine", lambda a, b: F.cosine_similarity(a, b), [floats(3, 4), floats(1, 4)], 2),
    (
        "pairwise",
        lambda a, b: F.pairwise_distance(a, b, 3.0, keepdim=True),
        [floats(3, 4), floats(4)],
        2,
    ),
]


@pytest.mark.parametrize("fn,makers,order", [pytest.param(*c[1:], id=c[0]) for c in STRICT_CASES])
def test_utilities_on_the_strict_stand_in_match_the_cpu(
    fn: Callable[..., Tensor], makers: list[Any], order: int, strict: str
) -> None:
    check(fn, makers, order)


def test_channel_dropout_on_the_strict_stand_in(strict: str) -> None:
    mta.manual_seed(6)
    x = mta.ones(6, 8, 2, 2, device=strict, requires_grad=True)
    y = F.dropout2d(x, 0.5)
    assert isinstance(y.array, StrictArray) and y.device == mta.Device(strict)
    y.sum().backward()
    values = y.detach().to("cpu").numpy().reshape(48, 4)
    assert all(set(row.tolist()) in ({0.0}, {2.0}) for row in values)
    np.testing.assert_array_equal(x.grad.to("cpu").numpy().reshape(48, 4), values)
