"""nn layers, containers and init: values, initialization, PyTorch agreement."""

from __future__ import annotations

import importlib.util
import math
from collections import OrderedDict

import numpy as np
import pytest

import minitorch_accel as mta
from minitorch_accel import nn


# ------------------------------------------------------------------ containers
def test_sequential_indexing_and_growth() -> None:
    a, b, c = nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)
    seq = nn.Sequential(a, b)
    assert len(seq) == 2 and seq[0] is a and seq[-1] is b and list(seq) == [a, b]
    seq.append(c)
    assert seq[2] is c and isinstance(seq[1:], nn.Sequential) and list(seq[1:]) == [b, c]
    x = mta.randn(4, 2)
    np.testing.assert_allclose(seq(x).detach().numpy(), c(b(a(x))).detach().numpy())
    del seq[1]
    assert list(seq) == [a, c] and list(seq._modules) == ["0", "1"]
    seq.insert(1, b)
    assert list(seq) == [a, b, c]
    named = nn.Sequential(OrderedDict([("first", a), ("act", b)]))
    assert named.act is b and named[1] is b
    with pytest.raises(IndexError, match="index 3 is out of range for a Sequential of length 2"):
        named[3]
    with pytest.raises(TypeError, match="argument 0 is a int, not a Module"):
        nn.Sequential(3)  # type: ignore[arg-type]


def test_module_list_registers_its_modules() -> None:
    layers = nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2)])
    layers += [nn.Linear(2, 1)]
    layers.append(nn.ReLU())
    assert len(layers) == 4 and len(list(layers.parameters())) == 6
    assert list(layers.state_dict())[:2] == ["0.weight", "0.bias"]
    layers[3] = nn.Identity()
    assert isinstance(layers[-1], nn.Identity) and len(layers[1:3]) == 2
    with pytest.raises(NotImplementedError, match="ModuleList has no forward"):
        layers(mta.ones(1))


# ------------------------------------------------------------------ layers
def test_linear_and_conv_initialization_follow_pytorch_bounds_and_seed() -> None:
    mta.manual_seed(0)
    first = nn.Linear(400, 300)
    mta.manual_seed(0)
    second = nn.Linear(400, 300)
    np.testing.assert_array_equal(first.weight.detach().numpy(), second.weight.detach().numpy())
    w = first.weight.detach().numpy()
    bound = 1 / math.sqrt(400)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.99 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.01 * bound  # U(-b, b) has std b/sqrt(3)
    assert first.bias is not None and np.abs(first.bias.detach().numpy()).max() <= bound
    conv = nn.Conv2d(8, 16, (3, 5), groups=2)
    assert conv.weight.shape == (16, 4, 3, 5)
    conv_bound = 1 / math.sqrt(4 * 3 * 5)
    assert np.abs(conv.weight.detach().numpy()).max() <= conv_bound
    with pytest.raises(ValueError, match=r"divisible by groups \(3\)"):
        nn.Conv2d(4, 6, 3, groups=3)


def test_layers_forward() -> None:
    x = mta.randn(2, 3, 4, 5)
    assert nn.Flatten()(x).shape == (2, 60)
    assert nn.Flatten(0, 1)(x).shape == (6, 4, 5)
    assert nn.Identity()(x) is x
    np.testing.assert_array_equal(nn.ReLU()(x).numpy(), np.maximum(x.numpy(), 0))
    lin = nn.Linear(5, 2, dtype="float64")
    assert lin(mta.randn(3, 5, dtype="float64")).dtype == np.float64
    y = mta.tensor([1, 0])
    logits = mta.randn(2, 3)
    ce = nn.CrossEntropyLoss(label_smoothing=0.1)(logits, y)
    assert ce.item() == pytest.approx(
        mta.nn.functional.cross_entropy(logits, y, label_smoothing=0.1).item()
    )
    assert nn.MSELoss(reduction="sum")(logits, logits * 0).item() == pytest.approx(
        float((logits.numpy() ** 2).sum()), rel=1e-6
    )
    log_probs = logits.log_softmax(1)
    assert nn.NLLLoss()(log_probs, y).item() == pytest.approx(ce.item(), rel=0.2)
    with pytest.raises(ValueError, match="CrossEntropyLoss: reduction must be one of"):
        nn.CrossEntropyLoss(reduction="avg")
    with pytest.raises(ValueError, match=r"Dropout: probability p must be in \[0, 1\], got 2"):
        nn.Dropout(2)


def test_batchnorm_module_matches_torch_in_train_and_eval() -> None:
    torch = pytest.importorskip("torch")
    for momentum in (0.1, None):
        ours, ref = nn.BatchNorm2d(3, momentum=momentum), torch.nn.BatchNorm2d(3, momentum=momentum)
        for _ in range(3):
            x = (np.random.default_rng(0).standard_normal((4, 3, 5, 5)) * 2 + 1).astype(np.float32)
            np.testing.assert_allclose(
                ours(mta.tensor(x)).detach().numpy(),
                ref(torch.tensor(x)).detach().numpy(),
                atol=1e-5,
            )
        assert ours.num_batches_tracked is not None and ours.num_batches_tracked.item() == 3
        for name, value in ref.state_dict().items():
            np.testing.assert_allclose(ours.state_dict()[name].numpy(), value.numpy(), rtol=1e-5)
        ours.eval(), ref.eval()
        x = np.random.default_rng(1).standard_normal((2, 3, 5, 5)).astype(np.float32)
        np.testing.assert_allclose(
            ours(mta.tensor(x)).detach().numpy(), ref(torch.tensor(x)).detach().numpy(), atol=1e-5
        )


def test_batchnorm_without_running_stats_and_input_checks() -> None:
    bn = nn.BatchNorm1d(3, affine=False, track_running_stats=False).eval()
    assert list(bn.state_dict()) == [] and list(bn.parameters()) == []
    x = mta.randn(6, 3, dtype="float64")
    out = bn(x).numpy()  # batch statistics, even in eval
    np.testing.assert_allclose(out.mean(axis=0), 0, atol=1e-12)
    with pytest.raises(
        ValueError, match=r"BatchNorm1d\(3\): input of shape \(6, 4\) has 4 channels"
    ):
        nn.BatchNorm1d(3)(mta.randn(6, 4))
    with pytest.raises(ValueError, match=r"expected a 4-D input, got shape \(6, 3\)"):
        nn.BatchNorm2d(3)(mta.randn(6, 3))


# ------------------------------------------------------------------ init
def test_init_gains_and_fans_match_torch() -> None:
    torch = pytest.importorskip("torch")
    for name, param in [
        ("relu", None),
        ("tanh", None),
        ("leaky_relu", 0.2),
        ("selu", None),
        ("conv2d", None),
        ("leaky_relu", None),
    ]:
        assert nn.init.calculate_gain(name, param) == pytest.approx(
            torch.nn.init.calculate_gain(name, param)
        )
    for shape in [(5, 3), (8, 4, 3, 2)]:
        assert nn.init._calculate_fan_in_and_fan_out(mta.zeros(*shape)) == (
            torch.nn.init._calculate_fan_in_and_fan_out(torch.zeros(*shape))
        )
    with pytest.raises(ValueError, match="unsupported nonlinearity 'swish'"):
        nn.init.calculate_gain("swish")
    with pytest.raises(ValueError, match="at least 2 dims"):
        nn.init.xavier_uniform_(mta.zeros(3))


def test_init_distributions_in_place() -> None:
    w = nn.Parameter(mta.zeros(200, 300))
    assert nn.init.xavier_uniform_(w) is w
    bound = math.sqrt(6 / 500)
    assert np.abs(w.detach().numpy()).max() <= bound and w.requires_grad
    nn.init.xavier_normal_(w, gain=2.0)
    assert w.detach().numpy().std() == pytest.approx(2 * math.sqrt(2 / 500), rel=0.02)
    nn.init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu")
    assert w.detach().numpy().std() == pytest.approx(math.sqrt(2 / 200), rel=0.02)
    nn.init.kaiming_uniform_(w, nonlinearity="relu")
    assert np.abs(w.detach().numpy()).max() <= math.sqrt(6 / 300)
    nn.init.normal_(w, 3.0, 0.5)
    assert w.detach().numpy().mean() == pytest.approx(3.0, abs=0.01)
    nn.init.uniform_(w, -2.0, -1.0)
    assert w.detach().numpy().min() >= -2.0 and w.detach().numpy().max() < -1.0
    nn.init.constant_(w, 0.25)
    assert np.all(w.detach().numpy() == 0.25)
    nn.init.zeros_(w)
    assert not w.detach().numpy().any()
    nn.init.ones_(w)
    assert np.all(w.detach().numpy() == 1.0)
    with pytest.raises(ValueError, match="mode must be 'fan_in' or 'fan_out'"):
        nn.init.kaiming_uniform_(w, mode="fan")


HAS_CONV = all(
    importlib.util.find_spec(name) is not None
    for name in ("minitorch_accel.ops.conv", "minitorch_accel.ops.pool")
)


@pytest.mark.skipif(not HAS_CONV, reason="minitorch_accel.ops.conv / ops.pool not present yet")
def test_conv_and_pool_layers_match_torch() -> None:
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    x = np.random.default_rng(3).standard_normal((2, 4, 9, 8)).astype(np.float32)
    conv = nn.Conv2d(4, 6, (3, 2), stride=(2, 1), padding=1, dilation=(1, 2), groups=2)
    assert conv.bias is not None
    expected = tf.conv2d(
        torch.tensor(x),
        torch.tensor(conv.weight.detach().numpy()),
        torch.tensor(conv.bias.detach().numpy()),
        stride=(2, 1),
        padding=1,
        dilation=(1, 2),
        groups=2,
    )
    np.testing.assert_allclose(
        conv(mta.tensor(x)).detach().numpy(), expected.numpy(), rtol=1e-4, atol=1e-5
    )
    tx = torch.tensor(x)
    cases = [
        (nn.MaxPool2d(3, stride=2, padding=1), tf.max_pool2d(tx, 3, 2, 1)),
        (nn.AvgPool2d(2), tf.avg_pool2d(tx, 2)),
        (
            nn.AvgPool2d(3, 2, 1, count_include_pad=False),
            tf.avg_pool2d(tx, 3, 2, 1, count_include_pad=False),
        ),
        (nn.AdaptiveAvgPool2d((2, 3)), tf.adaptive_avg_pool2d(tx, (2, 3))),
    ]
    for layer, ref in cases:
        np.testing.assert_allclose(layer(mta.tensor(x)).numpy(), ref.numpy(), rtol=1e-5, atol=1e-6)
    assert repr(cases[2][0]) == "AvgPool2d(kernel_size=3, stride=2, padding=1)"
