"""Version counters: backward refuses tensors modified in place after they were saved,
augmented assignment is in place with PyTorch's rules, and ``.data`` escapes the counter."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import minitorch_accel as mta
from minitorch_accel import nn, optim

MODIFIED = "modified by an inplace operation"
LEAF = "a leaf Variable that requires grad is being used in an in-place operation"


# ------------------------------------------------------------------ the counter itself
def test_every_inplace_write_bumps_the_version() -> None:
    t = mta.zeros(3)
    writes: list[Callable[[], Any]] = [
        lambda: t.add_(1.0),
        lambda: t.sub_(1.0),
        lambda: t.mul_(2.0),
        lambda: t.div_(2.0),
        lambda: t.fill_(1.0),
        lambda: t.zero_(),
        lambda: t.copy_(mta.ones(3)),
        lambda: t.__setitem__(0, 5.0),
        lambda: t.__iadd__(1.0),
    ]
    for expected, write in enumerate(writes, start=1):
        write()
        assert t._version == expected


def test_views_and_detach_share_the_counter_but_data_does_not() -> None:
    base = mta.zeros(2, 3)
    views = [base.reshape(6), base.view(3, 2), base[0], base[:, 1:], base.transpose(0, 1)]
    views += [base.T, base.detach(), base.unsqueeze(0), base.flatten()]
    base.add_(1.0)
    assert [v._version for v in views] == [1] * len(views)
    views[2].mul_(3.0)  # a write through a view is a write to the base
    assert base._version == 2 and base.tolist()[0] == [3.0, 3.0, 3.0]
    data = base.data
    assert data._version == 0
    data.add_(1.0)  # shares the memory, not the counter
    assert base._version == 2 and base.tolist()[0] == [4.0, 4.0, 4.0]


def test_advanced_indexing_is_a_copy_with_its_own_counter() -> None:
    base = mta.zeros(4)
    picked = base[mta.tensor([0, 2])]
    picked.add_(1.0)
    assert base._version == 0 and base.tolist() == [0.0] * 4


# ------------------------------------------------------------------ the cases that must raise
def test_input_modified_after_use_raises() -> None:
    w = mta.tensor([1.0], requires_grad=True)
    x = mta.tensor([2.0])
    y = (w * x).sum()
    x.mul_(10)
    with pytest.raises(RuntimeError, match=MODIFIED) as info:
        y.backward()
    message = str(info.value)
    assert "[float32 [1]]" in message and "MulBackward" in message
    assert "is at version 1; expected version 0 instead" in message
    assert w.grad is None  # nothing silently wrong was accumulated


def test_setitem_after_use_raises() -> None:
    w = mta.tensor([1.0, 1.0], requires_grad=True)
    x = mta.tensor([2.0, 3.0])
    y = (w * x).sum()
    x[0] = 100.0
    with pytest.raises(RuntimeError, match=r"\[float32 \[2\]\], which is input 1 of MulBackward"):
        y.backward()


def test_saved_output_modified_under_no_grad_raises() -> None:
    w = mta.tensor([0.0, 1.0, 2.0], requires_grad=True)
    e = w.exp()  # exp saves its output
    with mta.no_grad():
        e.add_(100)
    with pytest.raises(RuntimeError, match=r"\[float32 \[3\]\], which is output 0 of ExpBackward"):
        e.sum().backward()


def test_write_through_a_view_of_a_saved_tensor_raises() -> None:
    w = mta.tensor([1.0, 1.0], requires_grad=True)
    x = mta.tensor([2.0, 3.0])
    y = (w * x).sum()
    x.view(2, 1)[1].fill_(0.0)
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.backward()


def test_write_through_detach_raises() -> None:
    w = mta.tensor([1.0, 2.0], requires_grad=True)
    out = w.sigmoid()
    out.detach().zero_()
    with pytest.raises(RuntimeError, match=r"output 0 of SigmoidBackward"):
        out.sum().backward()


@pytest.mark.parametrize("make", [optim.SGD, optim.Adam], ids=["sgd", "adam"])
def test_parameter_updated_between_forward_and_backward_raises(make: Any) -> None:
    mta.manual_seed(0)
    model = nn.Linear(3, 2)
    opt = make(model.parameters(), lr=0.1)
    x = mta.randn(4, 3)
    stale = model(x).sum()  # saved the weight at this version
    model(x).sum().backward()
    opt.step()
    with pytest.raises(RuntimeError, match=MODIFIED):
        stale.backward()


def test_manual_parameter_update_between_forward_and_backward_raises() -> None:
    w = mta.tensor([1.0, 2.0], requires_grad=True)
    loss = (w * w).sum()
    with mta.no_grad():
        w -= 0.1
    with pytest.raises(RuntimeError, match=r"is at version 1; expected version 0"):
        loss.backward()


# ------------------------------------------------------------------ correct uses still work
def test_inplace_before_the_forward_under_no_grad_works() -> None:
    w = mta.tensor([1.0, 2.0], requires_grad=True)
    with mta.no_grad():
        w.mul_(3.0)
        w[0] = 5.0
    (w * w).sum().backward()
    assert w.grad is not None and w.grad.tolist() == [10.0, 12.0]


def test_inplace_on_a_tensor_that_was_not_saved_works() -> None:
    w = mta.tensor([1.0, 2.0], requires_grad=True)
    x = mta.tensor([3.0, 4.0])
    y = (w + x).sum()  # add saves neither input
    x.mul_(10)
    y.backward()
    assert w.grad is not None and w.grad.tolist() == [1.0, 1.0]


def test_writes_through_data_are_invisible_to_autograd() -> None:
    w = mta.tensor([1.0, 2.0], requires_grad=True)
    x = mta.tensor([3.0, 4.0])
    y = (w * x).sum()
    x.data.mul_(10)  # as in PyTorch: no error, the new values are used
    y.backward()
    assert w.grad is not None and w.grad.tolist() == [30.0, 40.0]


def test_training_loop_with_step_after_backward_works() -> None:
    mta.manual_seed(0)
    model = nn.Linear(3, 1)
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x, y = mta.randn(8, 3), mta.randn(8, 1)
    losses = []
    for _ in range(5):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]


def test_retain_graph_second_backward_checks_versions_again() -> None:
    w = mta.tensor([1.0], requires_grad=True)
    x = mta.tensor([2.0])
    y = (w * x).sum()
    y.backward(retain_graph=True)
    x.add_(1.0)
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.backward()


# ------------------------------------------------------------------ augmented assignment
def test_augmented_assignment_on_a_leaf_under_no_grad_keeps_the_object() -> None:
    w = mta.tensor([1.0, 2.0], requires_grad=True)
    (w * w).sum().backward()
    before = id(w)
    lr = 0.1
    with mta.no_grad():
        assert w.grad is not None
        w -= lr * w.grad
        w += 1.0
        w *= 2.0
        w /= 4.0
    assert id(w) == before and w.requires_grad and w.is_leaf
    np.testing.assert_allclose(w.tolist(), [(1.0 - 0.2 + 1) / 2, (2.0 - 0.4 + 1) / 2], rtol=1e-6)


def test_parameter_loop_with_augmented_assignment_really_updates() -> None:
    mta.manual_seed(0)
    model = nn.Linear(2, 1)
    before = [p.detach().clone() for p in model.parameters()]
    model(mta.ones(3, 2)).sum().backward()
    with mta.no_grad():
        for p in model.parameters():
            p -= 0.5 * p.grad  # type: ignore[misc,operator]  # as PyTorch code writes it
    for old, p in zip(before, model.parameters(), strict=True):
        assert p.grad is not None
        expected = old.numpy() - 0.5 * p.grad.numpy()
        np.testing.assert_allclose(p.detach().numpy(), expected, rtol=1e-6)
        assert isinstance(p, nn.Parameter) and p.requires_grad


@pytest.mark.parametrize("op", ["+=", "-=", "*=", "/="])
def test_augmented_assignment_on_a_leaf_requiring_grad_is_refused(op: str) -> None:
    w = mta.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=LEAF):
        exec(f"w {op} 2.0", {}, {"w": w})
    assert w.tolist() == [1.0, 2.0] and w._version == 0


def test_augmented_assignment_on_a_non_leaf_is_recorded() -> None:
    a = mta.tensor([1.0, 2.0, 3.0], dtype=mta.float64, requires_grad=True)
    b = mta.tensor([0.5, -1.0, 2.0], dtype=mta.float64, requires_grad=True)
    y = a * 2.0
    y *= b  # needs y's old values for b's gradient
    y += a
    y -= 1.0
    y /= b
    y.sum().backward()
    # y = (2ab + a - 1) / b: dy/da = 2 + 1/b, dy/db = -(a - 1)/b**2
    av, bv = np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 2.0])
    assert a.grad is not None and b.grad is not None
    np.testing.assert_allclose(a.grad.numpy(), 2.0 + 1.0 / bv)
    np.testing.assert_allclose(b.grad.numpy(), -(av - 1.0) / bv**2)
    assert y.grad_fn is not None and y.grad_fn.name() == "DivBackward"


def test_inplace_with_an_operand_requiring_grad_is_recorded() -> None:
    w = mta.tensor([1.0, 2.0], requires_grad=True)
    acc = mta.zeros(2)
    acc += w * 3.0  # acc now depends on w
    assert acc.requires_grad and not acc.is_leaf
    acc.sum().backward()
    assert w.grad is not None and w.grad.tolist() == [3.0, 3.0]


def test_setitem_and_copy_are_recorded() -> None:
    w = mta.tensor([1.0, 2.0], requires_grad=True)
    v = mta.tensor([5.0], requires_grad=True)
    y = w * 1.0
    y[0] = (v * 2.0)[0]
    (y * mta.tensor([10.0, 100.0])).sum().backward()
    assert w.grad is not None and v.grad is not None
    assert w.grad.tolist() == [0.0, 100.0] and v.grad.tolist() == [20.0]
    target = mta.zeros(2)
    target.copy_(w)
    (target * 3.0).sum().backward()
    assert w.grad.tolist() == [3.0, 103.0]


def test_recorded_inplace_on_a_view_is_refused() -> None:
    a = mta.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = a * 2.0
    part = y[0:2]
    with pytest.raises(RuntimeError, match="view"):
        part *= 3.0


def test_gradcheck_of_recorded_inplace_ops() -> None:
    from minitorch_accel.utils import gradcheck

    def f(a: mta.Tensor, b: mta.Tensor) -> mta.Tensor:
        y = a * 1.0
        y *= b
        y += a * a
        y[1] = b[0] * 3.0
        return y

    a = mta.tensor([0.3, -1.2, 0.7], dtype=mta.float64, requires_grad=True)
    b = mta.tensor([1.1, 0.4, -0.9], dtype=mta.float64, requires_grad=True)
    assert gradcheck(f, (a, b))


# ------------------------------------------------------------------ against PyTorch
def test_errors_and_values_match_pytorch() -> None:
    torch = pytest.importorskip("torch")
    for lib in (torch, mta):
        w = lib.tensor([1.0], requires_grad=True)
        x = lib.tensor([2.0])
        y = (w * x).sum()
        x.mul_(10)
        with pytest.raises(RuntimeError, match=MODIFIED):
            y.backward()
        with pytest.raises(RuntimeError, match=LEAF):
            w += 1
        e = w.exp()
        with lib.no_grad():
            e.add_(100)
        with pytest.raises(RuntimeError, match=r"is at version 1; expected version 0 instead"):
            e.sum().backward()
    values = {}
    for name, lib in (("torch", torch), ("mta", mta)):
        a = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        y = a * 2.0
        y *= a
        y += 1.0
        y.sum().backward()
        base = lib.ones(3)
        view = base[1:]
        base.add_(1.0)
        values[name] = (a.grad.tolist(), view._version, base.data._version, base.detach()._version)
    assert values["mta"] == values["torch"]


def test_ops_recorded_before_an_inplace_op_keep_the_old_history() -> None:
    """Edges point at nodes, not tensors: rebasing ``b`` does not reroute ``c``."""
    a = mta.tensor([1.0, 2.0], requires_grad=True)
    b = a * 1.0
    c = b + 3.0  # add saves nothing, so the later write is allowed
    b *= 2.0
    c.sum().backward(retain_graph=True)  # the node of a * 1 is used again below
    assert a.grad is not None and a.grad.tolist() == [1.0, 1.0]
    a.grad = None
    b.sum().backward()  # b's new history: (a * 1) * 2
    assert a.grad.tolist() == [2.0, 2.0]  # type: ignore[attr-defined]  # set by backward


# ------------------------------------------------------------------ on every device
@pytest.fixture(params=["cpu", "cpu:1", "strict:1"])
def device(request: pytest.FixtureRequest) -> Any:
    """A CPU device, a virtual one, and device 1 of the strict stand-in (NumPy behind
    CuPy's rules: work outside the device's context fails)."""
    if request.param.startswith("strict"):
        from support.strict_backend import registered

        with registered():
            yield request.param
    else:
        yield request.param


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")
def test_the_checks_on_every_device(device: str) -> None:
    w = mta.tensor([1.0, 2.0], requires_grad=True, device=device)
    x = mta.tensor([3.0, 4.0], device=device)
    y = (w * x).sum()
    x[0] = 100.0
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.backward()
    e = w.exp()
    with mta.no_grad():
        e.mul_(2.0)
    with pytest.raises(RuntimeError, match="output 0 of ExpBackward"):
        e.sum().backward()
    h = w * 1.0
    h *= x  # recorded; x is now [100, 4]
    h += w
    h.sum().backward()
    assert w.grad is not None and w.grad.tolist() == [101.0, 5.0]
    with mta.no_grad():
        w -= 0.5 * w.grad
    assert w.tolist() == [-49.5, -0.5] and w.requires_grad and str(w.device) == device
    z = mta.tensor([0.0, 1.0], requires_grad=True, device=device)
    with mta.autograd.detect_anomaly(), pytest.raises(RuntimeError, match="SqrtBackward"):
        z.sqrt().sum().backward()


def test_a_tensor_wrapping_another_without_a_copy_shares_its_counter() -> None:
    source = mta.ones(3)
    alias = mta.Tensor(source)  # same device and dtype: the same array
    assert np.shares_memory(alias.array, source.array)
    alias.add_(1.0)
    assert source._version == 1
    copy = mta.Tensor(source.to(mta.float64))  # a converted copy: a counter of its own
    copy.add_(1.0)
    assert source._version == 1 and source.tolist() == [2.0, 2.0, 2.0]
