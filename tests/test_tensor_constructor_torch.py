"""``Tensor(...)`` follows PyTorch's legacy ``torch.Tensor`` constructor, ``copy_`` keeps
autograd's meaning, and a copying reshape gets a version counter of its own.

Each behaviour is checked against PyTorch (skipped where it is absent) and against a
PyTorch-free statement of it.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import minitorch_accel as mta
from minitorch_accel import nn

MODIFIED = "modified by an inplace operation"


@pytest.fixture
def torch() -> Any:
    return pytest.importorskip("torch")


@pytest.fixture
def float64_default(torch: Any) -> Iterator[None]:
    mta.set_default_dtype(mta.float64)
    torch.set_default_dtype(torch.float64)
    try:
        yield
    finally:
        mta.set_default_dtype(mta.float32)
        torch.set_default_dtype(torch.float32)


# ------------------------------------------------------------------ part 1: Tensor(...)
def _forms(lib: Any) -> list[tuple[str, Callable[[], Any]]]:
    """The same constructor calls, written against ``lib`` (``torch`` or ``mta``)."""
    size = lib.Size([2, 3])
    return [
        ("empty", lambda: lib.Tensor()),
        ("sizes", lambda: lib.Tensor(2, 3)),
        ("one size", lambda: lib.Tensor(4)),
        ("zero size", lambda: lib.Tensor(0)),
        ("Size", lambda: lib.Tensor(size)),
        ("Size()", lambda: lib.Tensor(lib.Size([]))),
        ("size=", lambda: lib.Tensor(size=(2, 3))),
        ("size=Size", lambda: lib.Tensor(size=size)),
        ("numpy int size", lambda: lib.Tensor(np.int64(3), 2)),
        ("0-d array size", lambda: lib.Tensor(np.array(3))),
        ("nested ints", lambda: lib.Tensor([[3]])),
        ("ints", lambda: lib.Tensor([1, 2])),
        ("tuple data", lambda: lib.Tensor((2, 3))),
        ("bools", lambda: lib.Tensor([True, False])),
        ("mixed", lambda: lib.Tensor((1, 2.5))),
        ("empty list", lambda: lib.Tensor([])),
        ("empty rows", lambda: lib.Tensor([[], []])),
        ("range", lambda: lib.Tensor(range(3))),
        ("data=", lambda: lib.Tensor(data=[1, 2])),
        ("numpy float in list", lambda: lib.Tensor([np.float64(1.5)])),
        ("tensors in list", lambda: lib.Tensor([lib.tensor(1), lib.tensor(2.5)])),
        ("big int", lambda: lib.Tensor([2**70])),
        ("overflow", lambda: lib.Tensor([1e40, -1e40])),
        ("device=", lambda: lib.Tensor([1, 2], device="cpu")),
        ("sizes device=", lambda: lib.Tensor(2, 3, device="cpu")),
        ("empty device=", lambda: lib.Tensor(device="cpu")),
        ("0-d float array", lambda: lib.Tensor(np.array(3.5))),
        ("transposed array", lambda: lib.Tensor(np.arange(6.0).reshape(2, 3).T)),
        ("array of rows", lambda: lib.Tensor([np.array([1, 2]), np.array([3, 4])])),
        ("size tensors", lambda: lib.Tensor(lib.tensor(2), lib.tensor([3]))),
    ] + [
        (f"ndarray {dt}", lambda dt=dt: lib.Tensor(np.array([1, 0, 2], dtype=dt)))
        for dt in ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32")
        + ("float64", "uint16", "uint32", "uint64")
    ]


def _values(t: Any) -> tuple[str, tuple[int, ...], Any]:
    """dtype name, shape and values (zeros where PyTorch leaves memory uninitialized)."""
    return str(t.dtype).replace("torch.", ""), tuple(t.shape), np.asarray(t.detach()).tolist()


@pytest.mark.parametrize("name", [name for name, _ in _forms(mta)])
def test_every_accepted_form_matches_torch(torch: Any, name: str) -> None:
    ours_call = dict(_forms(mta))[name]
    theirs_call = dict(_forms(torch))[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = ours_call(), theirs_call()
    dtype, shape, values = _values(ours)
    t_dtype, t_shape, t_values = _values(theirs)
    assert (dtype, shape) == (t_dtype, t_shape)
    assert type(ours) is mta.Tensor and not ours.requires_grad and ours.is_leaf
    if name.startswith(("empty", "sizes", "one size", "zero size", "Size", "size", "numpy int")):
        assert not np.any(ours.numpy())  # uninitialized in PyTorch: zeros here
        return
    if name.startswith("0-d array"):
        assert not np.any(ours.numpy())
        return
    np.testing.assert_array_equal(np.asarray(values), np.asarray(t_values))


@pytest.mark.parametrize("dt", ["float32", "float64", "int64", "bool"])
def test_a_tensor_argument_is_an_alias(torch: Any, dt: str) -> None:
    source = mta.tensor([1, 0, 2], dtype=dt)
    alias = mta.Tensor(source)
    t_source = torch.tensor([1, 0, 2], dtype=getattr(torch, dt))
    t_alias = torch.Tensor(t_source)
    assert str(alias.dtype) == str(t_alias.dtype).replace("torch.", "") == dt
    assert alias is not source and np.shares_memory(alias.array, source.array)
    alias.add_(True if dt == "bool" else 1)
    t_alias.add_(True if dt == "bool" else 1)
    assert source.tolist() == t_source.tolist()
    assert source._version == t_source._version == 1


def test_an_alias_of_a_tensor_that_requires_grad_passes_gradients_back(torch: Any) -> None:
    for make in (lambda lib: lib.ones(3, requires_grad=True), None):
        a, t_a = mta.ones(3, requires_grad=True), torch.ones(3, requires_grad=True)
        source = a if make else a * 2
        t_source = t_a if make else t_a * 2
        alias, t_alias = mta.Tensor(source), torch.Tensor(t_source)
        assert alias.requires_grad == t_alias.requires_grad is True
        assert (alias.grad_fn is not None) == (t_alias.grad_fn is not None) is True
        assert alias.grad_fn is not None and alias.grad_fn.name() == "AliasBackward"
        w = [1.0, 2.0, 3.0]
        (alias * mta.tensor(w)).sum().backward()
        (t_alias * torch.tensor(w)).sum().backward()
        assert a.grad is not None and t_a.grad is not None
        assert a.grad.tolist() == t_a.grad.tolist() == [x * (1 if make else 2) for x in w]
    with mta.no_grad():
        quiet = mta.Tensor(a)
    with torch.no_grad():
        t_quiet = torch.Tensor(t_a)
    assert (quiet.requires_grad, quiet.grad_fn) == (t_quiet.requires_grad, t_quiet.grad_fn)


def test_an_array_of_the_default_dtype_shares_memory_others_are_copied(torch: Any) -> None:
    for dt in ("float32", "float64", "int64"):
        ours_src, theirs_src = np.arange(3, dtype=dt), np.arange(3, dtype=dt)
        mta.Tensor(ours_src).add_(1)
        torch.Tensor(theirs_src).add_(1)
        assert ours_src.tolist() == theirs_src.tolist()
        assert (ours_src[0] == 1) == (dt == "float32")  # PyTorch-free: shared iff float32


def test_the_default_dtype_is_followed(float64_default: None, torch: Any) -> None:
    calls: list[Callable[[Any], Any]] = [
        lambda lib: lib.Tensor([[3]]),
        lambda lib: lib.Tensor(2),
        lambda lib: lib.Tensor(),
        lambda lib: lib.Tensor(np.array([1, 2], dtype=np.float32)),
        lambda lib: lib.Tensor(lib.tensor([1.0, 2.0], dtype=lib.float32)),  # an alias
    ]
    for call in calls:
        ours, theirs = call(mta), call(torch)
        assert str(ours.dtype) == str(theirs.dtype).replace("torch.", "")
    assert mta.Tensor([1]).dtype == np.float64 and mta.tensor([1.5]).dtype == np.float64


REFUSED: list[tuple[str, Callable[[Any], Any], type[Exception], str]] = [
    ("dtype=", lambda lib: lib.Tensor([1, 2], dtype=lib.float32), TypeError, "dtype"),
    ("requires_grad=", lambda lib: lib.Tensor([1], requires_grad=True), TypeError, "requires"),
    ("pin_memory=", lambda lib: lib.Tensor([1], pin_memory=False), TypeError, "pin_memory"),
    ("a float", lambda lib: lib.Tensor(3.5), TypeError, "must be a sequence"),
    ("a bool", lambda lib: lib.Tensor(True), TypeError, "must be a sequence"),
    ("a numpy float", lambda lib: lib.Tensor(np.float64(3.5)), TypeError, "must be a sequence"),
    ("None", lambda lib: lib.Tensor(None), TypeError, "must be a sequence"),
    ("a dict", lambda lib: lib.Tensor({1: 2}), TypeError, "must be a sequence"),
    ("a str", lambda lib: lib.Tensor("abc"), TypeError, "invalid data type 'str'"),
    ("a float size", lambda lib: lib.Tensor(2, 3.0), TypeError, ""),
    ("a tuple size", lambda lib: lib.Tensor(2, (3,)), TypeError, ""),
    ("data and size", lambda lib: lib.Tensor([1, 2], 3), TypeError, ""),
    ("a bool size", lambda lib: lib.Tensor(True, 2), TypeError, ""),
    ("size=int", lambda lib: lib.Tensor(size=2), TypeError, ""),
    ("data and size=", lambda lib: lib.Tensor([1], size=(1,)), TypeError, ""),
    ("negative", lambda lib: lib.Tensor(-1), RuntimeError, "negative dimension -1"),
    ("a str array", lambda lib: lib.Tensor(np.array(["a"])), TypeError, ""),
    ("an object array", lambda lib: lib.Tensor(np.array([1, None])), TypeError, ""),
    (
        "tensor and device=",
        lambda lib: lib.Tensor(lib.tensor([1.0]), device="cpu"),
        RuntimeError,
        r"Tensor\(tensor, device=device\) is not supported",
    ),
]


@pytest.mark.parametrize("name", [r[0] for r in REFUSED])
def test_what_torch_refuses_is_refused(torch: Any, name: str) -> None:
    _, call, error, message = next(r for r in REFUSED if r[0] == name)
    with pytest.raises(error, match=message):
        call(torch)
    with pytest.raises(error, match=message):
        call(mta)


def test_complex_arrays_lose_their_imaginary_part_with_a_warning(torch: Any) -> None:
    data = np.array([1.5 + 2j, -3 - 1j])
    with pytest.warns(UserWarning, match="discards the imaginary part"):
        ours = mta.Tensor(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = torch.Tensor(data)
    assert ours.tolist() == theirs.tolist() == [1.5, -3.0]


def test_constructor_without_torch() -> None:
    assert mta.Tensor([[3]]).dtype == mta.get_default_dtype() == np.float32
    assert mta.tensor([[3]]).dtype == np.int64  # lower case still infers
    assert mta.Tensor(np.array([1, 2])).dtype == np.float32
    shaped = mta.Tensor(2, 3)
    assert shaped.shape == (2, 3) and shaped.tolist() == [[0.0] * 3] * 2
    assert mta.Tensor().shape == (0,) and mta.Tensor(mta.zeros(2, 5).shape).shape == (2, 5)
    assert mta.Tensor((2, 3)).tolist() == [2.0, 3.0]  # a tuple is data, a Size a shape
    on_other = mta.Tensor([1, 2], device="cpu:1")
    assert str(on_other.device) == "cpu:1" and on_other.dtype == np.float32
    assert str(mta.Tensor(3, device="cpu:1").device) == "cpu:1"
    ints = mta.tensor([1, 2])
    alias = mta.Tensor(ints)
    assert alias.dtype == np.int64 and np.shares_memory(alias.array, ints.array)
    with pytest.raises(TypeError, match=r"minitorch_accel\.tensor\(data, dtype"):
        mta.Tensor([1.0], dtype=mta.float64)


def test_subclasses_parameters_and_copies_keep_working() -> None:
    import copy
    import pickle

    class Sub(mta.Tensor):
        __slots__ = ()

    made = Sub([1, 2])
    assert type(made) is Sub and made.dtype == np.float32 and Sub(2, 3).shape == (2, 3)
    p = nn.Parameter(mta.tensor([1, 2], dtype=mta.float64))
    assert p.dtype == np.float64 and p.requires_grad and p.is_leaf
    assert nn.Parameter().dtype == mta.get_default_dtype()
    mta.set_default_dtype(mta.float64)
    try:
        assert nn.Parameter().dtype == np.float64
    finally:
        mta.set_default_dtype(mta.float32)
    ints = mta.tensor([[1, 2]])
    for again in (pickle.loads(pickle.dumps(ints)), copy.deepcopy(ints), copy.copy(ints)):
        assert again.dtype == np.int64 and again.tolist() == [[1, 2]]


def test_memory_accounting_counts_constructed_tensors() -> None:
    from minitorch_accel import memory

    device = "cpu:3"
    memory.set_memory_limit(device, 1 << 30)
    try:
        before = memory.memory_allocated(device)
        made = mta.Tensor(256, device=device)
        assert memory.memory_allocated(device) == before + 256 * 4
        alias = mta.Tensor(made)  # the same storage: nothing new
        assert memory.memory_allocated(device) == before + 256 * 4
        del made, alias
    finally:
        memory.set_memory_limit(device, None)


# ------------------------------------------------------------------ part 2: copy_
SELF_KINDS = ("leaf", "leaf_requires_grad", "non_leaf", "detached")


def _copy_case(
    lib: Any, self_kind: str, src_grad: bool, no_grad: bool, src_shape: int, src_dtype: str
) -> Any:
    """Run ``x.copy_(src)`` in ``lib`` and report what a user can observe."""
    a = lib.ones(3, requires_grad=True)
    x: Any = {
        "leaf": lambda: lib.zeros(3),
        "leaf_requires_grad": lambda: lib.zeros(3, requires_grad=True),
        "non_leaf": lambda: a * 2,
        "detached": lambda: (a * 2).detach(),
    }[self_kind]()
    dtype = getattr(lib, src_dtype)
    src = lib.tensor([5.0, 6.0, 7.0][:src_shape], dtype=dtype)
    if src_grad:
        src.requires_grad_()
    try:
        if no_grad:
            with lib.no_grad():
                out = x.copy_(src)
        else:
            out = x.copy_(src)
    except RuntimeError as error:
        return ("raised", "leaf" in str(error))
    seen = [out is x, x.tolist(), x.requires_grad, x.grad_fn is not None, x.is_leaf, x._version]
    if x.requires_grad:
        (x * lib.tensor([1.0, 2.0, 3.0])).sum().backward()
        for t in (a, src):
            seen.append(None if t.grad is None else (t.grad.tolist(), str(t.grad.dtype)[-7:]))
    return seen


@pytest.mark.parametrize("self_kind", SELF_KINDS)
@pytest.mark.parametrize("src_grad", [False, True])
@pytest.mark.parametrize("no_grad", [False, True])
@pytest.mark.parametrize("src_shape, src_dtype", [(3, "float32"), (1, "float32"), (3, "float64")])
def test_copy_matches_torch(
    torch: Any, self_kind: str, src_grad: bool, no_grad: bool, src_shape: int, src_dtype: str
) -> None:
    args = (self_kind, src_grad, no_grad, src_shape, src_dtype)
    assert _copy_case(mta, *args) == _copy_case(torch, *args)


def test_copy_into_a_non_leaf_keeps_the_graph_without_torch() -> None:
    a = mta.ones(3, requires_grad=True)
    x = a * 2
    x.copy_(mta.tensor([5.0, 6.0, 7.0]))
    assert x.requires_grad and x.grad_fn is not None and x.tolist() == [5.0, 6.0, 7.0]
    x.sum().backward()
    assert a.grad is not None and a.grad.tolist() == [0.0, 0.0, 0.0]  # overwritten: zero
    src = mta.tensor([[2.0]], dtype=mta.float64, device="cpu:1", requires_grad=True)
    y = mta.zeros(2, 3)
    y.copy_(src)  # broadcast, another dtype and device
    assert y.requires_grad and y.dtype == np.float32 and y.tolist() == [[2.0] * 3] * 2
    (y * mta.arange(6.0).reshape(2, 3)).sum().backward()
    assert src.grad is not None and src.grad.dtype == np.float64
    assert str(src.grad.device) == "cpu:1" and src.grad.tolist() == [[15.0]]


def test_copy_from_another_device_and_of_numbers(torch: Any) -> None:
    a = mta.ones(3, requires_grad=True)
    x = a * 2
    x.copy_(mta.tensor([1.0, 2.0, 3.0], device="cpu:1", requires_grad=True))
    assert x.requires_grad and str(x.device) == "cpu" and x.tolist() == [1.0, 2.0, 3.0]
    ours, theirs = (a * 2).copy_(4.0), (torch.ones(3, requires_grad=True) * 2).copy_(4.0)
    assert ours.tolist() == theirs.tolist() and ours.requires_grad == theirs.requires_grad


def test_copy_into_integers_is_never_recorded(torch: Any) -> None:
    for lib in (mta, torch):
        x = lib.zeros(3, dtype=lib.int64)
        x.copy_(lib.tensor([5.5, 6.5, -7.5], requires_grad=True))
        assert x.tolist() == [5, 6, -7] and not x.requires_grad and x.grad_fn is None


@pytest.mark.parametrize("saved_by", ["sin of it", "exp (saves its output)"])
def test_copy_over_a_saved_tensor_makes_backward_raise(torch: Any, saved_by: str) -> None:
    for lib in (mta, torch):
        a = lib.ones(3, requires_grad=True)
        if saved_by == "sin of it":
            x = a * 2
            y = x.sin()
        else:
            x = a.exp()
            y = x
        x.copy_(lib.zeros(3))
        with pytest.raises(RuntimeError, match=MODIFIED):
            y.sum().backward()


def test_copy_of_an_expression_of_itself(torch: Any) -> None:
    grads = []
    for lib in (mta, torch):
        a = lib.ones(3, requires_grad=True)
        x = a * 2
        x.copy_(x + 3)  # (``x * 3`` would raise here: Mul saves x whatever it needs)
        x.sum().backward()
        grads.append(a.grad.tolist())
    assert grads[0] == grads[1] == [2.0, 2.0, 2.0]


def test_in_place_methods_built_on_copy_keep_the_graph(torch: Any) -> None:
    for method in ("floor_", "relu_", "sigmoid_", "square_", "tanh_"):
        grads = []
        for lib in (mta, torch):
            a = lib.tensor([-1.5, 0.25, 2.0], dtype=lib.float64, requires_grad=True)
            x = a * 3
            getattr(x, method)()
            assert x.requires_grad and x.grad_fn is not None
            (x * lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)).sum().backward()
            grads.append(a.grad.tolist())
        np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)


# ------------------------------------------------------------------ part 4: reshape's counter
def test_a_copying_reshape_has_its_own_version_counter(torch: Any) -> None:
    for lib in (mta, torch):
        x = lib.arange(6.0).reshape(2, 3)
        y = x.t().reshape(-1)  # not viewable: a copy
        y.add_(1)
        assert (x._version, y._version) == (0, 1)
        assert x.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
        x.add_(1)
        assert (x._version, y._version) == (1, 1)
        view = x.reshape(3, 2)  # viewable: shares memory and counter
        view.add_(1)
        assert x._version == view._version == 2 and x[0, 0].item() == 2.0


def test_a_copying_reshape_keeps_a_saved_tensor_valid(torch: Any) -> None:
    for lib in (mta, torch):
        a = lib.arange(6.0).reshape(2, 3).requires_grad_()
        x = a * 1
        y = x.sin()  # saves x
        z = x.t().reshape(-1)
        with lib.no_grad():
            z.mul_(2)  # a copy: x is unchanged
        y.sum().backward()
        np.testing.assert_allclose(a.grad.tolist(), np.cos(np.arange(6.0).reshape(2, 3)))


@pytest.mark.parametrize(
    "shape, reps",
    [((2, 1), (2, 3)), ((2,), (2,)), ((1,), (3,)), ((2, 3), (1, 1)), ((2,), (1, 2)), ((3,), (0,))],
)
def test_repeat_returns_memory_of_its_own(shape: tuple[int, ...], reps: tuple[int, ...]) -> None:
    x = mta.arange(float(np.prod(shape))).reshape(*shape)
    out = x.repeat(*reps)
    np.testing.assert_array_equal(out.numpy(), np.tile(x.numpy(), reps))
    out.add_(1)
    assert x._version == 0 and not np.shares_memory(out.array, x.array)
    np.testing.assert_array_equal(x.numpy(), np.arange(float(np.prod(shape))).reshape(shape))


# ------------------------------------------------------------------ non-finite values
NON_FINITE = [-np.inf, -2.0, -0.0, 0.0, 0.5, 2.0, np.inf, np.nan]


def _bits(values: Any) -> list[int]:
    return np.asarray(values, dtype=np.float32).view(np.int32).tolist()


def test_non_finite_values_keep_their_bits(torch: Any) -> None:
    assert _bits(mta.Tensor(NON_FINITE)) == _bits(torch.Tensor(NON_FINITE)) == _bits(NON_FINITE)
    array = np.array(NON_FINITE)
    assert _bits(mta.Tensor(array)) == _bits(torch.Tensor(array)) == _bits(NON_FINITE)


@pytest.mark.parametrize("incoming", [1.0, np.inf])
def test_copy_of_non_finite_values_and_gradients(torch: Any, incoming: float) -> None:
    found = []
    for lib in (mta, torch):
        a = lib.ones(8, requires_grad=True)
        src = lib.tensor(NON_FINITE, requires_grad=True)
        x = (a * 2).copy_(src)
        x.backward(lib.full((8,), incoming))
        found.append((_bits(x.detach()), _bits(a.grad), _bits(src.grad)))
    assert found[0] == found[1]
    assert found[0][1] == _bits(np.zeros(8))  # overwritten: zero, even for an inf gradient
    assert found[0][2] == _bits(np.full(8, incoming))
