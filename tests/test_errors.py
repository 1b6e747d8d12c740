"""Bad input raises at the call that caused it, with a message that says what is wrong."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import minitorch_accel as mta


def check_raises(exc: type[Exception], pattern: str, fn: Callable[[], Any]) -> None:
    with pytest.raises(exc, match=pattern):
        fn()


# ------------------------------------------------------------------ broadcasting
@pytest.mark.parametrize(
    "name,fn",
    [
        ("add", lambda a, b: a + b),
        ("sub", lambda a, b: a - b),
        ("mul", lambda a, b: a * b),
        ("div", lambda a, b: a / b),
        ("pow", lambda a, b: a**b),
        ("maximum", mta.maximum),
        ("minimum", mta.minimum),
        ("less", lambda a, b: a < b),
        ("equal", lambda a, b: a == b),
    ],
)
def test_shapes_that_do_not_broadcast(name: str, fn: Callable[..., Any]) -> None:
    a, b = mta.ones(2, 3), mta.ones(4)
    check_raises(
        ValueError, rf"{name}: shapes \(2, 3\) and \(4,\) do not broadcast", lambda: fn(a, b)
    )


def test_where_shapes_that_do_not_broadcast() -> None:
    cond = mta.tensor([True, False])
    check_raises(
        ValueError,
        r"where: shapes \(2,\), \(3,\) and \(2,\) do not broadcast",
        lambda: mta.where(cond, mta.ones(3), mta.ones(2)),
    )


def test_expand_to_an_incompatible_shape() -> None:
    check_raises(
        ValueError,
        r"expand: shape \(3,\) cannot be broadcast to \(2, 4\)",
        lambda: mta.ones(3).expand(2, 4),
    )
    check_raises(ValueError, "fewer dims", lambda: mta.ones(2, 3).expand(3))
    check_raises(
        ValueError, "-1 .* only allowed for existing dims", lambda: mta.ones(3).expand(-1, 3)
    )


# ------------------------------------------------------------------ matmul
def test_matmul_inner_dims() -> None:
    check_raises(
        ValueError,
        r"matmul: shapes \(2, 3\) and \(4, 5\) do not match: 3 != 4",
        lambda: mta.ones(2, 3) @ mta.ones(4, 5),
    )
    check_raises(
        ValueError, r"shapes \(3,\) and \(2,\) do not match", lambda: mta.ones(3) @ mta.ones(2)
    )
    check_raises(
        ValueError,
        r"matmul: batch dims of \(2, 2, 3\) and \(3, 3, 2\) do not broadcast",
        lambda: mta.ones(2, 2, 3) @ mta.ones(3, 3, 2),
    )
    check_raises(ValueError, "at least 1 dim", lambda: mta.tensor(1.0) @ mta.ones(1))
    check_raises(
        TypeError,
        "matmul: dtypes float32 and float64 differ",
        lambda: mta.ones(2, 2) @ mta.tensor(np.ones((2, 2))),
    )


# ------------------------------------------------------------------ devices
@pytest.mark.parametrize(
    "fn",
    [
        lambda a, b: a + b,
        lambda a, b: a * b,
        lambda a, b: a @ b,
        lambda a, b: a < b,
        lambda a, b: mta.cat([a, b]),
        lambda a, b: mta.stack([a, b]),
        lambda a, b: mta.where(a > 0, a, b),
        lambda a, b: mta.maximum(a, b),
    ],
    ids=["add", "mul", "matmul", "less", "cat", "stack", "where", "maximum"],
)
def test_mixed_devices_name_both(fn: Callable[..., Any]) -> None:
    a, b = mta.ones(2, 2), mta.ones(2, 2, device="cpu:1")
    check_raises(RuntimeError, r"\bcpu and cpu:1\b", lambda: fn(a, b))


def test_mixed_virtual_devices() -> None:
    a, b = mta.ones(2, device="cpu:1"), mta.ones(2, device="cpu:2")
    check_raises(
        RuntimeError,
        r"Add: expected all tensors on the same device, got cpu:1 and cpu:2; move them",
        lambda: a + b,
    )


# ------------------------------------------------------------------ dtypes
def test_non_promotable_dtypes() -> None:
    signed = mta.tensor([1, 2])
    unsigned = mta.tensor(np.array([1, 2], dtype=np.uint64))
    check_raises(
        TypeError,
        "add: dtypes int64 and uint64 cannot be combined without losing precision",
        lambda: signed + unsigned,
    )
    check_raises(TypeError, "mul: dtypes uint64 and int64", lambda: unsigned * signed)


@pytest.mark.parametrize(
    "data", [["a", "b"], [1j], np.array(["x"])], ids=["str", "complex", "ndarray_str"]
)
def test_unsupported_data(data: Any) -> None:
    check_raises(
        TypeError,
        "unsupported dtype .*tensors hold bool, integers or floating",
        lambda: mta.tensor(data),
    )


def test_bad_dtype_names() -> None:
    check_raises(
        TypeError, "unsupported dtype complex64", lambda: mta.ones(1).to(dtype="complex64")
    )
    check_raises(TypeError, "not a dtype: 'nonsense'", lambda: mta.zeros(1, dtype="nonsense"))


def test_requires_grad_on_an_int_tensor() -> None:
    pattern = "only floating-point tensors can require gradients, this one is int64"
    check_raises(RuntimeError, pattern, lambda: mta.tensor([1, 2], requires_grad=True))
    check_raises(RuntimeError, pattern, lambda: mta.arange(3).requires_grad_())
    check_raises(RuntimeError, "bool", lambda: mta.zeros(2, dtype=mta.bool_, requires_grad=True))


# ------------------------------------------------------------------ dims
@pytest.mark.parametrize(
    "fn,pattern",
    [
        (lambda x: x.sum(dim=2), "dim 2 is out of range for a tensor with 2 dimension"),
        (lambda x: x.mean(dim=-3), "dim -3 is out of range"),
        (lambda x: x.var(dim=(0, 5)), "dim 5 is out of range"),
        (lambda x: x.max(dim=2), "dim 2 is out of range"),
        (lambda x: x.argmin(dim=-3), "dim -3 is out of range"),
        (lambda x: x.softmax(dim=2), "dim 2 is out of range"),
        (lambda x: x.log_softmax(dim=7), "dim 7 is out of range"),
        (lambda x: x.logsumexp(dim=2), "dim 2 is out of range"),
        (lambda x: x.transpose(0, 2), r"transpose: dim 2 is out of range .*\(expected -2..1\)"),
        (lambda x: x[0].transpose(), "transpose: dim -2 is out of range for a tensor with 1"),
        (lambda x: x.permute(0, 5), "permute: dim 5 is out of range"),
        (lambda x: x.squeeze(2), "squeeze: dim 2 is out of range"),
        (lambda x: x.unsqueeze(4), r"unsqueeze: dim 4 is out of range .*\(expected -3..2\)"),
        (lambda x: x.flatten(0, 3), "flatten: dim 3 is out of range"),
        (lambda x: mta.cat([x, x], dim=2), "cat: dim 2 is out of range"),
        (lambda x: mta.stack([x, x], dim=4), "unsqueeze: dim 4 is out of range"),
    ],
)
def test_bad_dims(fn: Callable[..., Any], pattern: str) -> None:
    check_raises(IndexError, pattern, lambda: fn(mta.ones(2, 3)))


def test_bad_dim_values() -> None:
    x = mta.ones(2, 3)
    check_raises(ValueError, r"dim \(0, -2\) names a dimension twice", lambda: x.sum(dim=(0, -2)))
    check_raises(
        ValueError, r"permute: \(0,\) is not a permutation of the 2 dims", lambda: x.permute(0)
    )
    check_raises(ValueError, r"permute: \(1, 1\) is not a permutation", lambda: x.permute(1, 1))
    check_raises(ValueError, "start_dim 1 comes after end_dim 0", lambda: x.flatten(1, 0))


# ------------------------------------------------------------------ reshape and friends
@pytest.mark.parametrize("shape", [(4, 2), (-1, 4), (-1, -1), (5,), (7, -1)], ids=str)
def test_bad_reshape(shape: tuple[int, ...]) -> None:
    expected = rf"cannot reshape a tensor of shape \(2, 3\) \(6 elements\) into \({shape[0]}"
    check_raises(ValueError, expected, lambda: mta.ones(2, 3).reshape(*shape))
    check_raises(ValueError, "cannot reshape", lambda: mta.ones(2, 3).view(shape))


def test_bad_cat_stack_pad() -> None:
    check_raises(ValueError, "non-empty sequence", lambda: mta.cat([]))
    check_raises(ValueError, "non-empty sequence", lambda: mta.stack([]))
    check_raises(
        ValueError,
        r"cat: shapes \(2, 3\) and \(2, 4\) differ outside dim 0",
        lambda: mta.cat([mta.ones(2, 3), mta.ones(2, 4)]),
    )
    check_raises(ValueError, "0-d tensors cannot be joined", lambda: mta.cat([mta.tensor(1.0)]))
    check_raises(
        ValueError,
        r"stack: all tensors need the same shape, got \[\(2,\), \(3,\)\]",
        lambda: mta.stack([mta.ones(2), mta.ones(3)]),
    )
    check_raises(
        ValueError, r"pad: expected pairs .*\(1, 2, 3\)", lambda: mta.pad(mta.ones(2), (1, 2, 3))
    )
    check_raises(ValueError, "negative padding", lambda: mta.pad(mta.ones(2), (-1, 0)))


def test_bad_index() -> None:
    x = mta.ones(3)
    check_raises(IndexError, r"index 5 is invalid for a tensor of shape \(3,\)", lambda: x[5])
    check_raises(
        IndexError,
        r"is invalid for a tensor of shape \(3,\): boolean index did not match",
        lambda: x[mta.tensor([True, False])],
    )
    check_raises(IndexError, "too many indices", lambda: x[0, 0])


def test_bad_arguments() -> None:
    check_raises(
        TypeError,
        "matmul: both operands must be tensors",
        lambda: mta.matmul(mta.ones(2), [1.0, 2.0]),  # type: ignore[arg-type]
    )
    check_raises(
        TypeError, "condition must be a bool tensor", lambda: mta.where(mta.ones(1), 1.0, 0.0)
    )
