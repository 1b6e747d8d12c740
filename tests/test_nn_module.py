"""nn.Module and Parameter: registration, traversal, state_dict, devices, modes, repr."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
from support.helpers import DEVICES, to_host

import minitorch_accel as mta
from minitorch_accel import nn
from minitorch_accel.backends import transfer_stats


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 4)
        self.bn = nn.BatchNorm1d(4)
        self.scale = nn.Parameter(mta.ones(4))
        self.register_buffer("steps", mta.zeros((), dtype="int64"))
        self.register_buffer("cache", mta.zeros(4), persistent=False)

    def forward(self, x: mta.Tensor) -> mta.Tensor:
        out: mta.Tensor = self.bn(self.fc(x)) * self.scale
        return out


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.block = Block()
        self.drop = nn.Dropout(0.5)
        self.head = nn.Linear(4, 2, bias=False)

    def forward(self, x: mta.Tensor) -> mta.Tensor:
        out: mta.Tensor = self.head(self.drop(self.block(x)))
        return out


NET_KEYS = [
    "block.scale",
    "block.steps",
    "block.fc.weight",
    "block.fc.bias",
    "block.bn.weight",
    "block.bn.bias",
    "block.bn.running_mean",
    "block.bn.running_var",
    "block.bn.num_batches_tracked",
    "head.weight",
]


# ------------------------------------------------------------------ Parameter
def test_parameter_is_a_leaf_tensor_sharing_memory() -> None:
    base = mta.zeros(3)
    p = nn.Parameter(base)
    assert isinstance(p, mta.Tensor) and p.requires_grad and p.is_leaf
    p.array[0] = 5.0
    assert base.numpy()[0] == 5.0
    assert repr(p).startswith("Parameter containing:\ntensor([5., 0., 0.], requires_grad=True)")
    assert not nn.Parameter(mta.zeros(2), requires_grad=False).requires_grad
    assert nn.Parameter().shape == (0,)
    with pytest.raises(RuntimeError, match="only floating-point tensors can require gradients"):
        nn.Parameter(mta.tensor([1, 2]))
    with pytest.raises(TypeError, match="Parameter wraps a Tensor, got list"):
        nn.Parameter([1.0])  # type: ignore[arg-type]


def test_parameter_survives_deepcopy_and_pickle() -> None:
    p = nn.Parameter(mta.ones(2))
    p.grad = mta.full((2,), 3.0)
    for clone in (copy.deepcopy(p), pickle.loads(pickle.dumps(p))):
        assert type(clone) is nn.Parameter and clone.requires_grad
        assert clone.array is not p.array
        assert clone.grad is not None and clone.grad.tolist() == [3.0, 3.0]


def test_ops_on_parameters_give_plain_tensors() -> None:
    p = nn.Parameter(mta.ones(2))
    assert type(p * 2) is mta.Tensor and type(p.detach()) is mta.Tensor


# ------------------------------------------------------------------ registration
def test_attributes_register_parameters_buffers_and_modules() -> None:
    net = Net()
    assert [name for name, _ in net.named_parameters()] == [
        "block.scale",
        "block.fc.weight",
        "block.fc.bias",
        "block.bn.weight",
        "block.bn.bias",
        "head.weight",
    ]
    assert [name for name, _ in net.named_buffers()] == [
        "block.steps",
        "block.cache",
        "block.bn.running_mean",
        "block.bn.running_var",
        "block.bn.num_batches_tracked",
    ]
    assert [name for name, _ in net.named_children()] == ["block", "drop", "head"]
    assert [name for name, _ in net.named_modules()] == [
        "",
        "block",
        "block.fc",
        "block.bn",
        "drop",
        "head",
    ]
    assert list(net.children())[0] is net.block
    assert len(list(net.modules())) == 6
    assert [n for n, _ in net.block.named_parameters(recurse=False)] == ["scale"]
    assert net.get_submodule("block.fc") is net.block.fc
    assert "fc" in dir(net.block)


def test_shared_parameters_and_modules_are_listed_once() -> None:
    shared = nn.Linear(2, 2)
    seq = nn.Sequential(shared, nn.ReLU(), shared)
    assert len(list(seq.parameters())) == 2
    assert len(list(seq.modules())) == 3
    assert list(seq.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]


def test_reassignment_clearing_and_deleting_members() -> None:
    m = nn.Module()
    m.x = 3  # a plain attribute
    m.x = nn.Parameter(mta.ones(1))  # now a parameter
    assert "x" not in m.__dict__ and [n for n, _ in m.named_parameters()] == ["x"]
    m.x = None  # a registered parameter may be cleared, and is then left out
    assert list(m.parameters()) == [] and m.x is None
    with pytest.raises(TypeError, match=r"cannot assign a Linear as parameter 'x'"):
        m.x = nn.Linear(1, 1)
    del m.x
    m.x = nn.Linear(1, 1)
    assert [n for n, _ in m.named_parameters()] == ["x.weight", "x.bias"]
    del m.x
    with pytest.raises(AttributeError, match="'Module' object has no attribute 'x'"):
        _ = m.x


def test_registration_errors() -> None:
    lin = nn.Linear(2, 2)
    with pytest.raises(TypeError, match=r"cannot assign a Tensor as parameter 'weight'"):
        lin.weight = mta.ones(2, 2)  # type: ignore[assignment]
    with pytest.raises(KeyError, match=r'contain no "\."'):
        lin.register_parameter("a.b", None)
    with pytest.raises(KeyError, match='attribute "forward" already exists'):
        lin.register_buffer("forward", mta.ones(1))
    with pytest.raises(TypeError, match="cannot register a Tensor as parameter 'w'"):
        lin.register_parameter("w", mta.ones(1))  # type: ignore[arg-type]

    class Forgot(nn.Module):
        def __init__(self) -> None:
            self.w = nn.Parameter(mta.ones(1))

    with pytest.raises(AttributeError, match=r"call super\(\).__init__\(\) first"):
        Forgot()


def test_module_without_forward_says_so() -> None:
    with pytest.raises(NotImplementedError, match="Module does not define forward"):
        nn.Module()(mta.ones(1))


# ------------------------------------------------------------------ state_dict
def test_state_dict_has_dotted_keys_and_detached_shared_tensors() -> None:
    net = Net()
    state = net.state_dict()
    assert list(state) == NET_KEYS  # the non-persistent buffer is left out
    weight = state["block.fc.weight"]
    assert type(weight) is mta.Tensor and not weight.requires_grad
    assert weight.array is net.block.fc.weight.array  # no copy
    assert net.state_dict(keep_vars=True)["head.weight"] is net.head.weight


def test_state_dict_round_trip_reproduces_outputs() -> None:
    mta.manual_seed(1)
    source = Net().eval()
    mta.manual_seed(2)
    target = Net().eval()
    x = mta.randn(5, 3)
    assert not np.allclose(source(x).detach().numpy(), target(x).detach().numpy())
    result = target.load_state_dict(source.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    np.testing.assert_array_equal(source(x).detach().numpy(), target(x).detach().numpy())
    # loading copies: the two models do not share memory afterwards
    assert target.head.weight.array is not source.head.weight.array


def test_load_state_dict_accepts_numpy_arrays_and_casts() -> None:
    lin = nn.Linear(2, 3)
    state = {"weight": np.arange(6, dtype=np.float64).reshape(3, 2), "bias": np.zeros(3)}
    lin.load_state_dict(state)
    assert lin.weight.dtype == np.float32 and lin.weight.requires_grad
    np.testing.assert_array_equal(lin.weight.detach().numpy(), state["weight"])


def test_load_state_dict_reports_every_problem_and_changes_nothing() -> None:
    net = Net()
    before = {k: v.numpy().copy() for k, v in net.state_dict().items()}
    bad = {k: v.numpy().copy() + 1 for k, v in net.state_dict().items()}
    del bad["head.weight"]
    bad["extra.thing"] = np.zeros(1)
    bad["block.fc.weight"] = np.zeros((3, 4))
    message = (
        r"Error\(s\) in loading state_dict for Net:\n"
        r'\tMissing key\(s\) in state_dict: "head.weight"\n'
        r'\tUnexpected key\(s\) in state_dict: "extra.thing"\n'
        r"\tsize mismatch for block.fc.weight: expected shape \(4, 3\) \(the module's\), "
        r"got \(3, 4\) \(the state_dict's\)"
    )
    with pytest.raises(RuntimeError, match=message):
        net.load_state_dict(bad)
    for key, value in net.state_dict().items():
        np.testing.assert_array_equal(value.numpy(), before[key])


def test_load_state_dict_non_strict_returns_the_mismatched_keys() -> None:
    lin = nn.Linear(2, 2)
    result = lin.load_state_dict({"weight": np.ones((2, 2)), "other": np.ones(1)}, strict=False)
    assert result == nn.IncompatibleKeys(["bias"], ["other"])
    np.testing.assert_array_equal(lin.weight.detach().numpy(), np.ones((2, 2)))
    with pytest.raises(RuntimeError, match=r"size mismatch for weight"):
        lin.load_state_dict({"weight": np.ones((3, 2))}, strict=False)
    with pytest.raises(TypeError, match="expects a mapping"):
        lin.load_state_dict([1, 2])  # type: ignore[arg-type]


# ------------------------------------------------------------------ to(), modes, grads
def test_to_moves_in_place_keeping_parameter_identity() -> None:
    net = Net()
    params = list(net.parameters())
    net.head.weight.grad = mta.ones(2, 4)
    transfer_stats.reset()
    assert net.to("cpu:1") is net
    assert [id(p) for p in net.parameters()] == [id(p) for p in params]
    assert all(p.device == "cpu:1" and isinstance(p, nn.Parameter) for p in net.parameters())
    assert all(b.device == "cpu:1" for b in net.buffers())
    assert net.head.weight.grad is not None and net.head.weight.grad.device == "cpu:1"
    assert transfer_stats.copies >= len(params)
    out = net(mta.ones(2, 3, device="cpu:1"))
    assert out.device == "cpu:1"
    with pytest.raises(RuntimeError, match="cpu:1"):
        net(mta.ones(2, 3))


@pytest.mark.parametrize("device", DEVICES)
def test_a_moved_model_computes_what_it_did_on_the_host(device: str) -> None:
    net = Net().eval()
    x = mta.randn(5, 3)
    expected = to_host(net(x))
    net.to(device)
    np.testing.assert_allclose(to_host(net(x.to(device))), expected, rtol=1e-5, atol=1e-6)
    net.train()
    net(x.to(device)).sum().backward()
    assert all(p.grad is not None and p.grad.device == mta.Device(device) for p in net.parameters())
    state = net.state_dict()
    assert all(t.device == mta.Device(device) for t in state.values())
    fresh = Net()
    fresh.load_state_dict(state)  # values cross back to the host model's device
    assert all(p.device == mta.Device("cpu") for p in fresh.parameters())
    np.testing.assert_array_equal(fresh.head.weight.detach().numpy(), to_host(net.head.weight))
    net.cpu()
    assert all(t.device == mta.Device("cpu") for t in net.state_dict().values())


def test_to_dtype_casts_only_floating_point_state() -> None:
    net = Net().to(dtype="float64")
    assert all(p.dtype == np.float64 for p in net.parameters())
    buffers = dict(net.named_buffers())
    assert buffers["block.bn.running_mean"].dtype == np.float64
    assert buffers["block.bn.num_batches_tracked"].dtype == np.int64
    net.to(np.float32)
    assert net.head.weight.dtype == np.float32
    assert net.double().head.weight.dtype == np.float64
    with pytest.raises(TypeError, match="only accepts floating-point dtypes"):
        net.to(dtype="int32")


def test_train_and_eval_switch_every_submodule_and_change_dropout() -> None:
    net = Net()
    assert all(m.training for m in net.modules())
    assert net.eval() is net
    assert not any(m.training for m in net.modules())
    x = mta.ones(4, 10)
    drop = nn.Dropout(0.5)
    np.testing.assert_array_equal(drop.eval()(x).numpy(), x.numpy())
    trained = drop.train()(x).numpy()
    assert set(np.unique(trained).tolist()) == {0.0, 2.0}
    with pytest.raises(TypeError, match="expects a bool"):
        net.train("no")  # type: ignore[arg-type]


def test_zero_grad_to_none_or_zeros_and_requires_grad() -> None:
    lin = nn.Linear(2, 2)
    lin(mta.ones(1, 2)).sum().backward()
    shared = lin.weight.grad
    lin.zero_grad(set_to_none=False)
    assert lin.weight.grad is not None and lin.weight.grad.tolist() == [[0.0, 0.0], [0.0, 0.0]]
    assert shared is not None and shared.numpy().any()  # the old gradient object is untouched
    lin.zero_grad()
    assert lin.weight.grad is None and lin.bias is not None and lin.bias.grad is None
    lin.requires_grad_(False)
    assert not any(p.requires_grad for p in lin.parameters())


def test_apply_visits_children_first() -> None:
    seen: list[str] = []
    Net().apply(lambda m: seen.append(type(m).__name__))
    assert seen == ["Linear", "BatchNorm1d", "Block", "Dropout", "Linear", "Net"]


def test_repr_is_a_tree() -> None:
    assert repr(Net()) == (
        "Net(\n"
        "  (block): Block(\n"
        "    (fc): Linear(in_features=3, out_features=4, bias=True)\n"
        "    (bn): BatchNorm1d(4, eps=1e-05, momentum=0.1, affine=True, "
        "track_running_stats=True)\n"
        "  )\n"
        "  (drop): Dropout(p=0.5, inplace=False)\n"
        "  (head): Linear(in_features=4, out_features=2, bias=False)\n"
        ")"
    )
    assert repr(nn.ReLU()) == "ReLU()"
    assert repr(nn.Conv2d(1, 8, 3, padding=1, bias=False)) == (
        "Conv2d(1, 8, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), bias=False)"
    )
