"""The ready-made models: structure, forward shapes, agreement with PyTorch, training."""

from __future__ import annotations

import numpy as np
import pytest

import minitorch_accel as mta
import minitorch_accel.nn.functional as F
from minitorch_accel import nn
from minitorch_accel.nn.models import LeNet, SmallVGG


def test_lenet_structure() -> None:
    model = LeNet()
    shapes = {name: p.shape for name, p in model.named_parameters()}
    assert shapes == {
        "features.0.weight": (32, 1, 3, 3),
        "features.0.bias": (32,),
        "features.3.weight": (64, 32, 3, 3),
        "features.3.bias": (64,),
        "classifier.1.weight": (128, 1600),
        "classifier.1.bias": (128,),
        "classifier.3.weight": (10, 128),
        "classifier.3.bias": (10,),
    }
    assert sum(p.numel() for p in model.parameters()) == 225_034
    assert [type(m).__name__ for m in model.features] == [
        "Conv2d",
        "ReLU",
        "MaxPool2d",
        "Conv2d",
        "ReLU",
        "MaxPool2d",
    ]
    assert LeNet(num_classes=5, in_channels=3, image_size=32).classifier[1].weight.shape == (
        128,
        64 * 6 * 6,
    )
    with pytest.raises(ValueError, match="image_size must be at least 10"):
        LeNet(image_size=8)


def test_small_vgg_structure() -> None:
    model = SmallVGG(num_classes=7, in_channels=3, width=8)
    convs = [m for m in model.modules() if isinstance(m, nn.Conv2d)]
    assert [(c.in_channels, c.out_channels) for c in convs] == [
        (3, 8),
        (8, 8),
        (8, 16),
        (16, 16),
        (16, 32),
    ]
    assert all(c.padding == (1, 1) and c.kernel_size == (3, 3) and c.bias is None for c in convs)
    assert sum(isinstance(m, nn.BatchNorm2d) for m in model.modules()) == 5
    assert model.classifier[1].weight.shape == (7, 32)


def test_lenet_forward_shape_and_agreement_with_torch() -> None:
    model = LeNet()
    x = mta.randn(2, 1, 28, 28)
    out = model(x)
    assert out.shape == (2, 10) and out.dtype == np.float32
    torch = pytest.importorskip("torch")
    tnn = torch.nn
    ref = tnn.Module()
    ref.features = tnn.Sequential(
        tnn.Conv2d(1, 32, 3),
        tnn.ReLU(),
        tnn.MaxPool2d(2),
        tnn.Conv2d(32, 64, 3),
        tnn.ReLU(),
        tnn.MaxPool2d(2),
    )
    ref.classifier = tnn.Sequential(
        tnn.Flatten(), tnn.Linear(1600, 128), tnn.ReLU(), tnn.Linear(128, 10)
    )
    ref.load_state_dict({k: torch.tensor(v.numpy()) for k, v in model.state_dict().items()})
    expected = ref.classifier(ref.features(torch.tensor(x.numpy()))).detach().numpy()
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-4, atol=1e-5)


def sgd_losses(
    model: nn.Module, x: mta.Tensor, y: mta.Tensor, steps: int, lr: float
) -> list[float]:
    losses = []
    for _ in range(steps):
        model.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        with mta.no_grad():
            for p in model.parameters():
                assert p.grad is not None
                p.array -= lr * p.grad.array
        losses.append(loss.item())
    return losses


def test_mlp_sgd_steps_lower_the_loss() -> None:
    mta.manual_seed(0)
    model = nn.Sequential(
        nn.Flatten(), nn.Linear(16, 32), nn.ReLU(), nn.Dropout(0.1), nn.Linear(32, 3)
    )
    x, y = mta.randn(24, 4, 4), mta.randint(0, 3, (24,))
    losses = sgd_losses(model, x, y, steps=30, lr=0.2)
    assert losses[-1] < 0.6 * losses[0]


def test_lenet_sgd_steps_lower_the_loss() -> None:
    mta.manual_seed(0)
    model = LeNet()
    x, y = mta.randn(8, 1, 28, 28), mta.randint(0, 10, (8,))
    losses = sgd_losses(model, x, y, steps=5, lr=0.05)
    assert losses[-1] < losses[0]


def test_small_vgg_trains_and_evaluates() -> None:
    mta.manual_seed(0)
    model = SmallVGG(num_classes=4, width=4)
    x, y = mta.randn(6, 1, 12, 12), mta.randint(0, 4, (6,))
    losses = sgd_losses(model, x, y, steps=5, lr=0.1)
    assert losses[-1] < losses[0]
    bn = model.features[1]
    assert isinstance(bn, nn.BatchNorm2d) and bn.num_batches_tracked is not None
    assert bn.num_batches_tracked.item() == 5
    model.eval()
    with mta.no_grad():
        first, second = model(x).numpy(), model(x[:3]).numpy()
    np.testing.assert_allclose(first[:3], second, rtol=1e-5, atol=1e-6)  # no batch dependence
