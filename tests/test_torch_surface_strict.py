"""The ops of the PyTorch surface on the ``strict`` stand-in (NumPy behind CuPy's rules,
see ``strict_xp.py``) against the CPU: forward values, gradients and second derivatives
must agree, and nothing may call what a GPU would refuse."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
import test_strict_backend as strict_suite
from support.strict_backend import registered
from test_strict_backend import BOOL, INT, POS, F, check

import minitorch_accel as mta
from minitorch_accel.core.tensor import Tensor


@pytest.fixture(scope="module", autouse=True)
def strict_backend() -> Iterator[None]:
    """Register the ``strict`` backend for this module, and remove it afterwards."""
    with registered():
        yield


@pytest.fixture(autouse=True, params=["strict", "strict:1"])
def strict_device(request: pytest.FixtureRequest) -> Iterator[None]:
    """Every case on the stand-in's device 0 and on its device 1 (where work outside the
    device's context fails, as on the wrong GPU)."""
    strict_suite.STRICT_DEVICE = request.param
    yield
    strict_suite.STRICT_DEVICE = "strict"


def index(values: list[Any], like: Tensor) -> Tensor:
    """An int64 index tensor on ``like``'s device."""
    return mta.tensor(values, device=like.device)


CASES: list[tuple[str, Callable[..., Tensor], list[Any], int]] = [
    ("max_dim_values", lambda a: a.max(1).values, [F(3, 4)], 2),
    ("max_dim_indices", lambda a: a.max(1, keepdim=True)[1] * 1.0, [F(3, 4)], 0),
    ("min_dim", lambda a: mta.min(a, 0).values + a.min(0).indices, [F(3, 4)], 2),
    ("max_of_two", lambda a, b: mta.max(a, b), [F(3, 4), F(3, 4)], 2),
    ("sort", lambda a: a.sort(1).values, [F(3, 5)], 2),
    ("sort_desc_indices", lambda a: a.sort(0, descending=True).indices * 1.0, [INT(3, 6, 4)], 0),
    ("argsort", lambda a: mta.argsort(a, 1) * 1.0, [F(3, 5)], 0),
    ("topk", lambda a: a.topk(2, 1).values * a.topk(2, 1).indices, [F(3, 5)], 2),
    ("topk_smallest", lambda a: a.topk(3, 0, largest=False).values, [F(5, 2)], 2),
    ("kthvalue", lambda a: a.kthvalue(2, 1).values, [F(3, 5)], 2),
    ("median_dim", lambda a: a.median(1).values, [F(3, 4)], 2),
    ("median_all", lambda a: a.median(), [F(3, 4)], 2),
    ("mode", lambda a: a.mode(1).values * 1.0 + a.mode(1).indices, [INT(3, 4, 6)], 0),
    ("rsqrt", mta.rsqrt, [POS(3, 2)], 2),
    ("log1p", mta.log1p, [POS(3, 2)], 2),
    ("sin", mta.sin, [F(3, 2)], 2),
    ("cos", lambda a: a.cos(), [F(3, 2)], 2),
    ("tan", mta.tan, [F(3, 2)], 2),
    ("sign", lambda a: a.sign() * a, [F(3, 2)], 2),
    ("cumsum", lambda a: a.cumsum(1), [F(3, 4)], 2),
    ("cumprod", lambda a: mta.cumprod(a, 0), [F(3, 4)], 2),
    ("cumprod_zeros", lambda a: (a * (a > 0.5)).cumprod(1), [F(3, 4)], 2),
    ("norm", lambda a: a.norm(), [F(3, 4)], 2),
    ("norm_p_dim", lambda a: a.norm(3, 1), [F(3, 4)], 2),
    ("norm_inf", lambda a: a.norm(float("inf"), 0), [F(3, 4)], 1),
    ("gather", lambda a: a.gather(1, index([[0, 2], [1, 1], [3, 0]], a)), [F(3, 4)], 2),
    ("scatter", lambda a, s: a.scatter(1, index([[2], [0], [1]], a), s), [F(3, 4), F(3, 1)], 2),
    ("scatter_value", lambda a: a.scatter(0, index([[1, 0, 2, 1]], a), value=2.0), [F(3, 4)], 2),
    ("index_select", lambda a: a.index_select(1, index([2, 0, 2], a)), [F(3, 4)], 2),
    ("masked_fill", lambda a, m: a.masked_fill(m, -1.0), [F(3, 4), BOOL(3, 4)], 2),
    ("repeat", lambda a: a.repeat(2, 1, 3), [F(3, 2)], 2),
    ("split_chunk", lambda a: mta.cat([*a.chunk(2, 1)[::-1], *a.split(1, 1)[:1]], 1), [F(3, 4)], 2),
    ("unflatten_mT", lambda a: a.unflatten(1, (2, 2)).mT, [F(3, 4)], 2),
    ("einsum", lambda a, b: mta.einsum("bij,jk->bki", a, b), [F(2, 3, 4), F(4, 5)], 2),
    ("einsum_sum_only_here", lambda a, b: mta.einsum("ij,k->k", a, b), [F(2, 3), F(4)], 2),
    ("where", mta.where, [BOOL(3, 4), F(3, 4), F(4)], 2),
    ("gelu", lambda a: mta.nn.functional.gelu(a), [F(3, 4)], 2),
    (
        "gelu_tanh_silu",
        lambda a: mta.nn.functional.gelu(a, "tanh") + mta.nn.functional.silu(a),
        [F(3, 4)],
        2,
    ),
    (
        "elu_leaky",
        lambda a: mta.nn.functional.elu(a) * mta.nn.functional.leaky_relu(a, 0.1),
        [F(3, 4)],
        2,
    ),
    (
        "layer_norm",
        lambda a, w, b: mta.nn.functional.layer_norm(a, (4,), w, b),
        [F(3, 4), F(4), F(4)],
        2,
    ),
    (
        "group_norm",
        lambda a, w, b: mta.nn.functional.group_norm(a, 2, w, b),
        [F(2, 4, 3), F(4), F(4)],
        2,
    ),
    (
        "embedding",
        lambda w: mta.nn.functional.embedding(index([[1, 0, 1]], w), w, padding_idx=0),
        [F(3, 2)],
        2,
    ),
    (
        "conv1d",
        lambda x, w, b: mta.nn.functional.conv1d(x, w, b, padding=1),
        [F(2, 3, 6), F(4, 3, 3), F(4)],
        1,
    ),
    ("type_as_clip", lambda a, b: a.type_as(b).clip(-0.5, 0.5), [F(3, 4), F(2)], 2),
]


@pytest.mark.parametrize("fn, makers, order", [pytest.param(*c[1:], id=c[0]) for c in CASES])
def test_op_matches_cpu(fn: Callable[..., Tensor], makers: list[Any], order: int) -> None:
    check(fn, makers, order)


def test_factories_on_the_stand_in() -> None:
    device = strict_suite.STRICT_DEVICE
    for t in (
        mta.linspace(0, 1, 5, device=device),
        mta.logspace(0, 1, 3, device=device),
        mta.randperm(4, device=device),
        mta.full((2,), 1.5, device=device),
        mta.eye(3, device=device),
    ):
        assert t.device == mta.Device(device)
    assert mta.linspace(0, 1, 5, device=device).tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert sorted(mta.randperm(6, device=device).tolist()) == list(range(6))


def test_in_place_on_the_stand_in() -> None:
    device = strict_suite.STRICT_DEVICE
    t = mta.tensor([4.0, -8.0, 2.0], device=device)
    t.sub_(mta.tensor([1.0, 1.0, 1.0], device=device), alpha=2.0).div_(2.0).clamp_(-3.0, 0.5)
    t.masked_fill_(mta.tensor([False, False, True], device=device), 9.0)
    t.scatter_(0, mta.tensor([0], device=device), value=-1.0)
    assert t.tolist() == [-1.0, -3.0, 9.0]
