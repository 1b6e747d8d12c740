"""The in-place shape/view methods (``unsqueeze_``, ``t_``, ``resize_``, ``as_strided_``...),
``detach_``, ``fill_diagonal_``, ``put_``, ``index_reduce_``, the Python callbacks
(``apply_``, ``map_``, ``map2_``) and ``is_inference_mode_enabled``, each against PyTorch
(skipped where it is absent) and against a PyTorch-free reference.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import minitorch_accel as mta

MODIFIED = "modified by an inplace operation"
LEAF = "a leaf Variable that requires grad is being used in an in-place operation"


@pytest.fixture
def torch() -> Any:
    return pytest.importorskip("torch")


def _both(torch: Any, run: Callable[[Any], Any]) -> None:
    """``run(lib)`` gives the same observable result for minitorch_accel and PyTorch."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # index_reduce is "beta" in PyTorch
        assert _plain(run(mta)) == _plain(run(torch))


def _plain(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "tolist") and hasattr(value, "shape"):
        return ("tensor", tuple(value.shape), value.detach().tolist())
    return value


def _observe(x: Any, returned: Any) -> list[Any]:
    return [
        returned is x,
        tuple(x.shape),
        x.detach().tolist(),
        x.requires_grad,
        x.grad_fn is not None,
        x.is_leaf,
        x._version,
    ]


# ------------------------------------------------------------------ shape changes in place
SHAPE_OPS: list[tuple[str, Callable[[Any], Any]]] = [
    ("unsqueeze_(0)", lambda t: t.unsqueeze_(0)),
    ("unsqueeze_(-1)", lambda t: t.unsqueeze_(-1)),
    ("squeeze_()", lambda t: t.unsqueeze_(0).squeeze_()),
    ("squeeze_(0)", lambda t: t.unsqueeze_(1).squeeze_(1)),
    ("t_()", lambda t: t.t_()),
    ("transpose_(0, 1)", lambda t: t.transpose_(0, 1)),
    ("swapaxes_(1, 0)", lambda t: t.swapaxes_(1, 0)),
    ("swapdims_(-1, 0)", lambda t: t.swapdims_(-1, 0)),
    ("as_strided_", lambda t: t.as_strided_((2, 2), (1, 2))),
    ("as_strided_ offset", lambda t: t.as_strided_((3,), (2,), 1)),
    ("as_strided_ overlapping", lambda t: t.as_strided_((3, 2), (1, 1))),
]
GRAD_WEIGHTS = np.arange(1.0, 7.0)


@pytest.mark.parametrize("name", [n for n, _ in SHAPE_OPS])
@pytest.mark.parametrize("kind", ["plain", "non_leaf", "leaf_requires_grad", "no_grad_non_leaf"])
def test_shape_changes_in_place_match_torch(torch: Any, name: str, kind: str) -> None:
    op = dict(SHAPE_OPS)[name]

    def run(lib: Any) -> Any:
        a = lib.arange(6.0, dtype=lib.float64).reshape(2, 3).requires_grad_()
        x = {
            "plain": lambda: lib.arange(6.0, dtype=lib.float64).reshape(2, 3).clone(),
            "non_leaf": lambda: a * 1,
            "leaf_requires_grad": lambda: a,
            "no_grad_non_leaf": lambda: a * 1,
        }[kind]()
        try:
            if kind == "no_grad_non_leaf":
                with lib.no_grad():
                    returned = op(x)
            else:
                returned = op(x)
        except RuntimeError as error:
            return ["raised", LEAF in str(error)]
        seen = _observe(x, returned)
        if x.requires_grad and x.grad_fn is not None:
            weights = lib.tensor(GRAD_WEIGHTS[: x.numel()], dtype=lib.float64).reshape(x.shape)
            try:  # under no_grad the old grad_fn stays: a changed shape then fails
                (x * weights).sum().backward()
                seen.append(a.grad.tolist())
            except (RuntimeError, ValueError):
                seen.append("backward raised")
        return seen

    _both(torch, run)


def test_shape_changes_without_torch() -> None:
    base = np.arange(6.0).reshape(2, 3)
    x = mta.tensor(base)
    assert x.t_() is x and x.shape == (3, 2) and x._version == 1
    np.testing.assert_array_equal(x.numpy(), base.T)
    x.unsqueeze_(0).transpose_(0, 2)
    np.testing.assert_array_equal(x.numpy(), base.T[None].transpose(2, 1, 0))
    x.add_(1)  # the memory is still the tensor's: shape changes copied nothing
    assert x.squeeze_().shape == (2, 3) and x.tolist() == (base + 1).tolist()
    a = mta.tensor(base, requires_grad=True)
    y = a * 2
    y.t_()
    (y * mta.tensor(base.T)).sum().backward()  # d/da sum(2 a^T * b^T) = 2 b
    assert a.grad is not None and a.grad.tolist() == (2 * base).tolist()


def test_a_shape_change_over_a_saved_tensor_makes_backward_raise(torch: Any) -> None:
    for lib in (mta, torch):
        a = lib.ones(2, 3, requires_grad=True)
        y = a * 2
        z = y.sin()  # saves y
        y.t_()
        with pytest.raises(RuntimeError, match=MODIFIED):
            z.sum().backward()


def test_shape_changes_of_a_view_leave_its_base(torch: Any) -> None:
    def run(lib: Any) -> Any:
        x = lib.arange(6.0).reshape(2, 3)
        v = x[0]
        v.unsqueeze_(0)
        v.t_()
        v.mul_(10)
        return [tuple(v.shape), tuple(x.shape), x.tolist(), x._version]

    _both(torch, run)


@pytest.mark.parametrize(
    "call",
    [
        lambda t: t.reshape(2, 2, 2).t_(),
        lambda t: t.unsqueeze_(5),
        lambda t: t.squeeze_(4),
        lambda t: t.transpose_(0, 3),
    ],
)
def test_shape_changes_refuse_what_torch_refuses(torch: Any, call: Callable[[Any], Any]) -> None:
    for lib in (mta, torch):
        with pytest.raises((RuntimeError, IndexError)):
            call(lib.zeros(8))


# ------------------------------------------------------------------ detach_
def test_detach_in_place_matches_torch(torch: Any) -> None:
    def run(lib: Any) -> Any:
        a = lib.ones(3, requires_grad=True)
        y = a * 2
        seen = [_observe(y, y.detach_())]
        seen.append(_observe(a, a.detach_()))  # a leaf too
        base = lib.ones(3, requires_grad=True)
        view = base.view(1, 3)
        seen.append(_observe(base, base.detach_()))  # the base of a view: allowed
        for v in (view, (lib.ones(3, requires_grad=True) * 2)[:2], lib.ones(3)[:2]):
            try:
                v.detach_()
                seen.append("detached")
            except RuntimeError as error:
                seen.append("Can't detach views in-place" in str(error))
        return seen

    _both(torch, run)


def test_detach_in_place_without_torch() -> None:
    a = mta.ones(2, requires_grad=True)
    y = a * 3
    y.retain_grad()
    assert y.detach_() is y and not y.requires_grad and y.grad_fn is None and y.is_leaf
    assert (y * 2).grad_fn is None
    with pytest.raises(RuntimeError, match="Can't detach views in-place"):
        mta.zeros(4)[1:].detach_()


# ------------------------------------------------------------------ resize_
@pytest.mark.parametrize("sizes", [(2, 2), ((3, 2),), (6,), (2, 3), (0,), (3, 4), ((1, 2, 3),)])
def test_resize_keeps_the_leading_values_as_torch(torch: Any, sizes: tuple[Any, ...]) -> None:
    shape = sizes[0] if isinstance(sizes[0], tuple) else sizes
    n_kept = min(6, int(np.prod(shape)))

    def run(lib: Any) -> Any:
        x = lib.arange(6.0).reshape(2, 3)
        returned = x.resize_(*sizes)
        values = x.reshape(-1)[:n_kept].tolist()  # what PyTorch leaves uninitialized differs
        return [returned is x, tuple(x.shape), values, x._version]

    _both(torch, run)
    ours = mta.arange(6.0).reshape(2, 3).resize_(*sizes)  # PyTorch-free: NumPy's resize
    expected = np.resize(np.arange(6.0), int(np.prod(shape)))
    expected[6:] = 0
    np.testing.assert_array_equal(ours.numpy().reshape(-1), expected)


def test_resize_of_a_transposed_tensor_reads_memory_order(torch: Any) -> None:
    def run(lib: Any) -> Any:
        x = lib.arange(6.0).reshape(2, 3).t()
        same = x.clone().resize_(3, 2)  # the same shape: nothing moves
        return [x.resize_(6).tolist(), same.tolist()]

    _both(torch, run)


def test_resize_as_and_what_resize_refuses(torch: Any) -> None:
    _both(torch, lambda lib: tuple(lib.arange(6.0).resize_as_(lib.zeros(3, 2)).shape))
    for lib in (mta, torch):
        a = lib.ones(3, requires_grad=True)
        for x in (a, a * 2):
            with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
                x.resize_(2)
        with pytest.raises(RuntimeError):
            lib.zeros(3).resize_(-1)


def test_a_smaller_resize_shares_memory() -> None:
    x = mta.arange(6.0)
    y = x.view(2, 3)
    x.resize_(4)
    x.mul_(10)
    assert y.tolist() == [[0.0, 10.0, 20.0], [30.0, 4.0, 5.0]]


# ------------------------------------------------------------------ as_strided_
def test_as_strided_out_of_bounds_is_refused(torch: Any) -> None:
    for lib in (mta, torch):
        with pytest.raises(RuntimeError, match="out of bounds for storage of size 16"):
            lib.zeros(4).as_strided_((3,), (2,))


def test_as_strided_without_torch() -> None:
    memory = np.arange(12.0)
    x = mta.tensor(memory)
    x.as_strided_((3, 2), (4, 1), 1)
    expected = np.lib.stride_tricks.as_strided(memory[1:], (3, 2), (32, 8))
    np.testing.assert_array_equal(x.numpy(), expected)
    assert x._version == 1
    a = mta.tensor(memory, dtype=mta.float64, requires_grad=True)

    def overlapping(t: mta.Tensor) -> mta.Tensor:
        y = t * 1
        y.as_strided_((3, 3), (1, 1))  # element k read min(k+1, 3, ...) times
        return y

    assert mta.utils.gradcheck(overlapping, (a,))


# ------------------------------------------------------------------ fill_diagonal_
@pytest.mark.parametrize(
    "shape, wrap",
    [((3, 4), False), ((7, 3), True), ((7, 3), False), ((3, 7), True), ((2, 2, 2), False)],
)
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_fill_diagonal_matches_torch(torch: Any, shape: Any, wrap: bool, dtype: str) -> None:
    value = {"float32": 2.5, "int64": 2.7, "bool": 1}[dtype]
    _both(
        torch,
        lambda lib: lib.zeros(*shape, dtype=getattr(lib, dtype)).fill_diagonal_(value, wrap=wrap),
    )
    if len(shape) == 2:  # PyTorch-free: NumPy's fill_diagonal
        expected = np.zeros(shape, dtype=dtype)
        np.fill_diagonal(expected, value, wrap=wrap)
        ours = mta.zeros(*shape, dtype=dtype).fill_diagonal_(value, wrap=wrap)
        np.testing.assert_array_equal(ours.numpy(), expected)


def test_fill_diagonal_gradient_and_errors(torch: Any) -> None:
    def run(lib: Any) -> Any:
        a = lib.ones(3, 3, requires_grad=True)
        y = a * 2
        y.fill_diagonal_(0)
        y.sum().backward()
        return [_observe(y, y), a.grad.tolist()]

    _both(torch, run)
    for lib in (mta, torch):
        with pytest.raises(RuntimeError, match="all dimensions of input must be of equal length"):
            lib.zeros(2, 3, 2).fill_diagonal_(1)
        with pytest.raises(RuntimeError, match="dimensions must larger than 1"):
            lib.zeros(3).fill_diagonal_(1)


# ------------------------------------------------------------------ put_
def test_put_matches_torch(torch: Any) -> None:
    def run(lib: Any) -> Any:
        x = lib.zeros(2, 3)
        x.put_(lib.tensor([1, 5, -2]), lib.tensor([9.0, 8.0, 7.0]))
        y = lib.zeros(2, 3)
        y.put_(lib.tensor([[1, 1], [0, -1]]), lib.tensor([[9.0, 8.0], [1.0, 2.0]]), True)
        return [x, y, x._version]

    _both(torch, run)


@pytest.mark.parametrize("accumulate", [False, True])
def test_put_gradients_match_torch(torch: Any, accumulate: bool) -> None:
    def run(lib: Any) -> Any:
        a = lib.ones(2, 3, dtype=lib.float64, requires_grad=True)
        s = lib.tensor([2.0, 3.0], dtype=lib.float64, requires_grad=True)
        y = a * 2
        y.put_(lib.tensor([0, 4]), s, accumulate=accumulate)
        (y * lib.arange(1.0, 7.0, dtype=lib.float64).reshape(2, 3)).sum().backward()
        return [_observe(y, y), a.grad, s.grad]

    _both(torch, run)


def test_put_refuses_what_torch_refuses(torch: Any) -> None:
    calls: list[tuple[Callable[[Any], Any], type[Exception], str]] = [
        (lambda lib: lib.zeros(2, 3).put_(lib.tensor([6]), lib.tensor([1.0])), IndexError, "6"),
        (
            lambda lib: lib.zeros(2, 3).put_(lib.tensor([1.0]), lib.tensor([1.0])),
            RuntimeError,
            "Expected a long tensor for index",
        ),
        (
            lambda lib: lib.zeros(2, 3).put_(lib.tensor([1, 2]), lib.tensor([1.0])),
            IndexError,
            "same number of elements",
        ),
    ]
    for call, error, message in calls:
        for lib in (mta, torch):
            with pytest.raises(error, match=message):
                call(lib)


def test_put_without_torch() -> None:
    x = mta.zeros(3, 2)
    x.put_(mta.tensor([0, -1, 3]), mta.tensor([1.0, 2.0, 3.0]))
    expected = np.zeros((3, 2))
    np.put(expected, [0, -1, 3], [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(x.numpy(), expected)


# ------------------------------------------------------------------ index_reduce_
@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_index_reduce_matches_torch(torch: Any, reduce: str, include_self: bool, dim: int) -> None:
    def run(lib: Any) -> Any:
        a = lib.tensor([[2.0, -1.0, 3.0], [0.5, 4.0, -2.0]], dtype=lib.float64)
        a.requires_grad_()
        source = lib.tensor([[1.5, 2.0], [3.0, -4.0]], dtype=lib.float64, requires_grad=True)
        if dim == 0:
            source = lib.tensor([[1.5, 2.0, -1.0], [3.0, -4.0, 0.5]], dtype=lib.float64)
            source.requires_grad_()
        y = a * 1
        y.index_reduce_(
            dim,
            lib.tensor([1, 1]) if dim == 0 else lib.tensor([2, 0]),
            source,
            reduce,
            include_self=include_self,
        )
        (y * y).sum().backward()
        return [_observe(y, y), a.grad, source.grad]

    _both(torch, run)


def test_index_reduce_integers_and_errors(torch: Any) -> None:
    _both(
        torch,
        lambda lib: lib.full((3,), 7).index_reduce_(
            0, lib.tensor([0, 0]), lib.tensor([2, 2]), "mean"
        ),
    )
    for lib in (mta, torch):
        with pytest.raises(RuntimeError, match="prod, mean, amax or amin but got sum"):
            lib.zeros(3).index_reduce_(0, lib.tensor([0]), lib.ones(1), "sum")


def test_index_reduce_without_torch() -> None:
    x = mta.full((3, 2), 2.0)
    source = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    x.index_reduce_(0, mta.tensor([0, 2, 0]), mta.tensor(source, dtype=mta.float32), "amax")
    expected = np.full((3, 2), 2.0)
    for i, row in zip([0, 2, 0], source, strict=True):
        expected[i] = np.maximum(expected[i], row)
    np.testing.assert_array_equal(x.numpy(), expected)


# ------------------------------------------------------------------ apply_, map_, map2_
def test_python_callbacks_match_torch(torch: Any) -> None:
    def run(lib: Any) -> Any:
        floats = lib.tensor([1.0, -2.5])
        ints = lib.tensor([1, 2])
        bools = lib.tensor([True, False])
        out = [
            floats.apply_(lambda v: v * 10),
            ints.apply_(lambda v: v * 2.7),  # truncated into int64
            bools.apply_(lambda v: not v),
            lib.tensor([[1.0, 2.0]]).map_(lib.tensor([10.0]), lambda v, w: v + w),
            lib.tensor([1.0, 2.0]).map2_(
                lib.tensor([10.0, 20.0]), lib.tensor([100.0, 200.0]), lambda v, p, q: v + p * q
            ),
        ]
        types: list[str] = []

        def record(v: Any) -> Any:
            types.append(type(v).__name__)
            return v

        lib.tensor([1, 2]).apply_(record)
        return [*out, types, floats._version]

    _both(torch, run)


CALLBACK_ERRORS: list[tuple[Callable[[Any], Any], type[Exception], str]] = [
    (lambda lib: lib.ones(2, requires_grad=True).apply_(lambda v: v), RuntimeError, "apply_()"),
    (lambda lib: (lib.ones(2, requires_grad=True) * 2).apply_(abs), RuntimeError, "requires grad"),
    (
        lambda lib: lib.ones(2).map_(lib.ones(2, requires_grad=True), max),
        RuntimeError,
        "map_()",
    ),
    (
        lambda lib: lib.ones(2).map2_(lib.ones(2), lib.ones(2, requires_grad=True), max),
        RuntimeError,
        "map2_()",
    ),
    (lambda lib: lib.ones(2).map_(lib.ones(2, dtype=lib.int64), max), TypeError, "map_"),
    (lambda lib: lib.ones(1).map_(lib.ones(2), max), RuntimeError, "size"),
    (lambda lib: lib.ones(1).apply_(lambda v: None), TypeError, "must be real number"),
    (lambda lib: lib.ones(1).apply_(lambda v: "a"), TypeError, "must be real number"),
]


@pytest.mark.parametrize("index", range(len(CALLBACK_ERRORS)))
def test_python_callbacks_refuse_what_torch_refuses(torch: Any, index: int) -> None:
    call, error, message = CALLBACK_ERRORS[index]
    for lib in (mta, torch):
        with pytest.raises(error, match=message):
            call(lib)


def test_python_callbacks_without_torch() -> None:
    data = np.array([[0.5, -1.0], [2.0, 3.0]])
    x = mta.tensor(data, dtype=mta.float64)
    assert x.apply_(lambda v: v * v + 1) is x
    np.testing.assert_array_equal(x.numpy(), data * data + 1)
    assert mta.tensor([-1.0], device="cpu:1").apply_(abs).tolist() == [1.0]  # a CPU too


# ------------------------------------------------------------------ share_memory_, inference mode
def test_share_memory_returns_the_tensor(torch: Any) -> None:
    _both(torch, lambda lib: [(x := lib.ones(2, requires_grad=True)).share_memory_() is x])


def test_is_inference_mode_enabled_matches_torch(torch: Any) -> None:
    def run(lib: Any) -> Any:
        seen = [lib.is_inference_mode_enabled()]
        with lib.inference_mode():
            seen.append(lib.is_inference_mode_enabled())
            with lib.inference_mode(False):
                seen += [lib.is_inference_mode_enabled(), lib.is_grad_enabled()]
            seen.append(lib.is_inference_mode_enabled())
        with lib.no_grad():
            seen.append(lib.is_inference_mode_enabled())

        @lib.inference_mode()
        def decorated() -> Any:
            return [lib.is_inference_mode_enabled(), lib.is_grad_enabled()]

        return [*seen, decorated(), lib.is_inference_mode_enabled()]

    _both(torch, run)


def test_is_inference_mode_enabled_is_per_thread() -> None:
    import threading

    seen: list[bool] = []
    with mta.inference_mode():
        worker = threading.Thread(target=lambda: seen.append(mta.is_inference_mode_enabled()))
        worker.start()
        worker.join()
        assert mta.is_inference_mode_enabled()
    assert seen == [False] and not mta.is_inference_mode_enabled()
