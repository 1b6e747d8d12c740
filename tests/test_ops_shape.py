"""Shape ops and indexing: values against NumPy, gradients in float64, on every device."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from support.helpers import check_op

import minitorch_accel as mta
from minitorch_accel.core.tensor import Tensor


def np_pad(x: np.ndarray, widths: list[tuple[int, int]], value: float = 0.0) -> np.ndarray:
    return np.pad(x, widths, constant_values=value)


SHAPE_CASES: list[tuple[str, tuple[int, ...], Callable[..., Any], Callable[..., Any]]] = [
    ("reshape", (2, 3, 4), lambda x: x.reshape(6, 4), lambda x: x.reshape(6, 4)),
    ("reshape_-1", (2, 3, 4), lambda x: x.reshape(4, -1), lambda x: x.reshape(4, -1)),
    ("reshape_tuple", (2, 3, 4), lambda x: mta.reshape(x, (3, 8)), lambda x: x.reshape(3, 8)),
    ("reshape_0d", (1, 1), lambda x: x.reshape(()), lambda x: x.reshape(())),
    ("view", (2, 3, 4), lambda x: x.view(2, 12), lambda x: x.reshape(2, 12)),
    ("view_-1", (2, 3, 4), lambda x: x.view(-1), lambda x: x.reshape(-1)),
    ("transpose", (2, 3, 4), lambda x: x.transpose(0, 2), lambda x: x.swapaxes(0, 2)),
    ("transpose_default", (2, 3, 4), lambda x: x.transpose(), lambda x: x.swapaxes(-2, -1)),
    ("transpose_fn", (3, 4), lambda x: mta.transpose(x, 1, 0), lambda x: x.T),
    ("T", (2, 3, 4), lambda x: x.T, lambda x: x.T),
    ("permute", (2, 3, 4), lambda x: x.permute(2, 0, 1), lambda x: x.transpose(2, 0, 1)),
    (
        "permute_tuple",
        (2, 3, 4),
        lambda x: mta.permute(x, (1, -1, 0)),
        lambda x: x.transpose(1, 2, 0),
    ),
    ("flatten", (2, 3, 4), lambda x: x.flatten(), lambda x: x.reshape(-1)),
    ("flatten_1", (2, 3, 4), lambda x: x.flatten(1), lambda x: x.reshape(2, 12)),
    ("flatten_0_1", (2, 3, 4), lambda x: mta.flatten(x, 0, 1), lambda x: x.reshape(6, 4)),
    ("flatten_0d", (), lambda x: x.flatten(), lambda x: x.reshape(1)),
    ("squeeze", (1, 3, 1, 4), lambda x: x.squeeze(), lambda x: x.squeeze()),
    ("squeeze_0", (1, 3, 1, 4), lambda x: x.squeeze(0), lambda x: x.squeeze(0)),
    ("squeeze_-2", (1, 3, 1, 4), lambda x: mta.squeeze(x, -2), lambda x: x.squeeze(-2)),
    ("squeeze_noop", (1, 3, 1, 4), lambda x: x.squeeze(1), lambda x: x),
    ("unsqueeze_0", (3, 4), lambda x: x.unsqueeze(0), lambda x: x[None]),
    ("unsqueeze_-1", (3, 4), lambda x: x.unsqueeze(-1), lambda x: x[..., None]),
    ("unsqueeze_1", (3, 4), lambda x: mta.unsqueeze(x, 1), lambda x: x[:, None]),
    ("expand", (3, 1), lambda x: x.expand(2, 3, 4), lambda x: np.broadcast_to(x, (2, 3, 4))),
    ("expand_-1", (3, 1), lambda x: x.expand(2, -1, 4), lambda x: np.broadcast_to(x, (2, 3, 4))),
    ("expand_tuple", (1, 4), lambda x: mta.expand(x, (3, 4)), lambda x: np.broadcast_to(x, (3, 4))),
    ("pad_last", (2, 3), lambda x: mta.pad(x, (1, 2)), lambda x: np_pad(x, [(0, 0), (1, 2)])),
    (
        "pad_two",
        (2, 3),
        lambda x: mta.pad(x, (1, 0, 2, 1), value=-1.5),
        lambda x: np_pad(x, [(2, 1), (1, 0)], -1.5),
    ),
    (
        "pad_nchw",
        (1, 2, 2, 3),
        lambda x: mta.pad(x, (1, 1, 1, 1)),
        lambda x: np_pad(x, [(0, 0), (0, 0), (1, 1), (1, 1)]),
    ),
]


@pytest.mark.parametrize("name,shape,fn,ref", SHAPE_CASES, ids=[c[0] for c in SHAPE_CASES])
def test_shape_op(
    name: str,
    shape: tuple[int, ...],
    fn: Callable[..., Tensor],
    ref: Callable[..., Any],
    device: str,
) -> None:
    check_op(fn, ref, [shape], device)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat(dim: int, device: str) -> None:
    shapes = []
    for size in (1, 2, 3):
        shape = [2, 3, 2]
        shape[dim] = size
        shapes.append(tuple(shape))
    check_op(
        lambda a, b, c: mta.cat([a, b, c], dim),
        lambda a, b, c: np.concatenate([a, b, c], axis=dim),
        shapes,
        device,
    )


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_stack(dim: int, device: str) -> None:
    check_op(
        lambda a, b: mta.stack([a, b], dim),
        lambda a, b: np.stack([a, b], axis=dim),
        [(2, 3), (2, 3)],
        device,
    )


def test_cat_promotes_dtypes() -> None:
    out = mta.cat([mta.tensor([1, 2]), mta.tensor([0.5])])
    assert out.dtype == np.float32
    assert out.tolist() == [1.0, 2.0, 0.5]


def test_same_tensor_twice_in_cat(device: str) -> None:
    x = mta.tensor([1.0, 2.0], device=device, requires_grad=True)
    (mta.cat([x, x]) * mta.tensor([1.0, 2.0, 3.0, 4.0], device=device)).sum().backward()
    assert x.grad is not None
    assert x.grad.tolist() == [4.0, 6.0]


def index_cases(device: str) -> list[tuple[str, Any, Any]]:
    """(name, index for our tensor, index for NumPy) on a (4, 5) input."""
    rng = np.random.default_rng(5)
    mask = rng.random((4, 5)) > 0.5
    rows = np.array([3, 0, 3, 3])
    return [
        ("int", 1, 1),
        ("negative_int", -1, -1),
        ("slice", slice(1, 3), slice(1, 3)),
        ("step", slice(None, None, 2), slice(None, None, 2)),
        ("negative_step", slice(None, None, -1), slice(None, None, -1)),
        ("int_slice", (2, slice(1, None)), (2, slice(1, None))),
        ("column", (slice(None), 1), (slice(None), 1)),
        ("ellipsis", (Ellipsis, 0), (Ellipsis, 0)),
        ("none", None, None),
        ("none_mixed", (slice(None), None, slice(1, 4)), (slice(None), None, slice(1, 4))),
        ("int_ellipsis_none", (1, Ellipsis, None), (1, Ellipsis, None)),
        ("bool_mask_tensor", mta.tensor(mask, device=device), mask),
        ("bool_mask_array", mask, mask),
        ("bool_rows", mta.tensor(mask[:, 0], device=device), mask[:, 0]),
        ("int_list_repeated", [0, 2, 0, 0], [0, 2, 0, 0]),
        ("int_array_repeated", rows, rows),
        ("int_tensor_repeated", mta.tensor(rows, device=device), rows),
        ("int_array_2d", np.array([[0, 1], [1, 1]]), np.array([[0, 1], [1, 1]])),
        ("list_in_tuple", (slice(None), [0, 0, 4]), (slice(None), [0, 0, 4])),
        ("array_in_tuple", (slice(1, 3), np.array([4, 4])), (slice(1, 3), np.array([4, 4]))),
        (
            "tensor_in_tuple",
            (mta.tensor([1, 1], device=device), slice(None)),
            (np.array([1, 1]), slice(None)),
        ),
        ("two_arrays", ([0, 0, 2], [1, 1, 3]), ([0, 0, 2], [1, 1, 3])),
    ]


INDEX_NAMES = [case[0] for case in index_cases("cpu")]


@pytest.mark.parametrize("case", range(len(INDEX_NAMES)), ids=INDEX_NAMES)
def test_getitem(case: int, device: str) -> None:
    _, index, np_index = index_cases(device)[case]
    check_op(lambda x: x[index], lambda x: x[np_index], [(4, 5)], device)


def test_repeated_indices_accumulate(device: str) -> None:
    x = mta.tensor([10.0, 20.0, 30.0], device=device, requires_grad=True)
    x[[0, 2, 0, 0]].sum().backward()
    assert x.grad is not None
    assert x.grad.tolist() == [3.0, 0.0, 1.0]
    y = mta.tensor(np.ones((2, 3)), device=device, requires_grad=True)
    y[:, [1, 1]].sum().backward()
    assert y.grad is not None
    assert y.grad.tolist() == [[0.0, 2.0, 0.0], [0.0, 2.0, 0.0]]


def test_indexing_is_a_view_of_basic_slices() -> None:
    x = mta.tensor([[1.0, 2.0], [3.0, 4.0]])
    row = x[1]
    assert np.shares_memory(row.array, x.array)
    assert row.tolist() == [3.0, 4.0]


def test_iteration_yields_rows() -> None:
    x = mta.tensor([[1, 2], [3, 4]])
    assert [row.tolist() for row in x] == [[1, 2], [3, 4]]
    assert len(x) == 2


def test_setitem_under_no_grad() -> None:
    x = mta.zeros(2, 3)
    x[0, [0, 2]] = 5.0
    x[1] = mta.tensor([1.0, 2.0, 3.0])
    assert x.tolist() == [[5.0, 0.0, 5.0], [1.0, 2.0, 3.0]]


def test_reshape_returns_a_view() -> None:
    x = mta.zeros(2, 3)
    y = x.view(6)
    assert np.shares_memory(x.array, y.array)


def test_shape_ops_match_torch(rng: Any) -> None:
    torch = pytest.importorskip("torch")
    data = rng.standard_normal((2, 3, 4)).astype(np.float32)
    weights = rng.standard_normal((3, 2, 10)).astype(np.float32)

    def run(lib: Any, x: Any, w: Any) -> Any:
        y = x.permute(1, 0, 2).reshape(3, 2, 4)
        y = lib.cat([y, y[:, :, :2] * 2], 2)[:, :, [0, 0, 5, 1, 2, 3, 4, 5, 1, 0]]
        y = lib.stack([y, y.transpose(0, 1).transpose(0, 1)], 1).sum(1)
        return (y * w).sum()

    x_ours, x_theirs = mta.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    loss_ours = run(mta, x_ours, mta.tensor(weights))
    loss_theirs = run(torch, x_theirs, torch.tensor(weights))
    loss_ours.backward()
    loss_theirs.backward()
    assert loss_ours.item() == pytest.approx(loss_theirs.item(), rel=1e-5)
    assert x_ours.grad is not None
    np.testing.assert_allclose(np.asarray(x_ours.grad), x_theirs.grad.numpy(), rtol=1e-5)
