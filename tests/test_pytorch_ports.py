"""PyTorch programs ported by renaming ``torch`` to ``minitorch_accel``.

Each is written here after the structure of a well-known PyTorch program (the
pytorch/examples MNIST script; "Learning PyTorch with Examples": the polynomial fitted with
autograd and a hand-written update), differing only in the imports and where the data
comes from (the MNIST sample embedded in the package; nothing is downloaded).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import minitorch_accel as torch
import minitorch_accel.nn as nn
import minitorch_accel.nn.functional as F
import minitorch_accel.optim as optim
from minitorch_accel import datasets, transforms
from minitorch_accel.optim.lr_scheduler import StepLR


# ---------------------------------------------------------------- pytorch/examples MNIST
class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x: Any) -> Any:
        x = self.conv1(x)
        x = F.relu(x)
        x = self.conv2(x)
        x = F.relu(x)
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.dropout2(x)
        x = self.fc2(x)
        output = F.log_softmax(x, dim=1)
        return output


def train(model: Any, device: Any, train_loader: Any, optimizer: Any, epoch: int) -> list[float]:
    model.train()
    losses = []
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        if batch_idx % 10 == 0:
            print(
                f"Train Epoch: {epoch} [{batch_idx * len(data)}/{len(train_loader.dataset)}"
                f" ({100.0 * batch_idx / len(train_loader):.0f}%)]\tLoss: {loss.item():.6f}"
            )
    return losses


def test(model: Any, device: Any, test_loader: Any) -> tuple[float, float]:
    model.eval()
    test_loss = 0.0
    correct = 0
    with torch.no_grad():
        for data, target in test_loader:
            data, target = data.to(device), target.to(device)
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction="sum").item()
            pred = output.argmax(dim=1, keepdim=True)
            correct += pred.eq(target.view_as(pred)).sum().item()
    test_loss /= len(test_loader.dataset)
    return test_loss, correct / len(test_loader.dataset)


test.__test__ = False  # type: ignore[attr-defined]  # the script's name, not a pytest test


# One epoch over 2,000 training digits (Adadelta, lr 1.0), seeds 0-3: test accuracy
# 0.838-0.898 on 500 digits, and the mean of the last four batch losses 0.19-0.22 of the
# first. The bounds sit several spreads below: this checks that the script learns.
MNIST_PORT_FLOOR = 0.70
SEED = 1
LOSS_FALLS_TO = 0.5


@pytest.mark.slow
def test_the_pytorch_examples_mnist_script_trains_an_epoch(tmp_path: Path) -> None:
    torch.manual_seed(SEED)
    if torch.accelerator.is_available():
        device = torch.accelerator.current_accelerator()
    else:
        device = torch.device("cpu")
    transform = transforms.Compose(
        [transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))]
    )
    dataset1: Any = datasets.MNIST(sample=True, train=True, transform=transform)  # data location
    dataset2: Any = datasets.MNIST(sample=True, train=False, transform=transform)
    dataset1 = torch.utils.data.Subset(dataset1, range(2000))
    dataset2 = torch.utils.data.Subset(dataset2, range(500))
    train_loader = torch.utils.data.DataLoader(dataset1, batch_size=64, shuffle=True)
    test_loader = torch.utils.data.DataLoader(dataset2, batch_size=1000)

    model = Net().to(device)
    optimizer = optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = StepLR(optimizer, step_size=1, gamma=0.7)
    losses = train(model, device, train_loader, optimizer, 1)
    test_loss, accuracy = test(model, device, test_loader)
    scheduler.step()

    assert len(losses) == math.ceil(2000 / 64)
    assert np.mean(losses[-4:]) < LOSS_FALLS_TO * losses[0], losses
    assert accuracy >= MNIST_PORT_FLOOR, accuracy
    assert math.isfinite(test_loss)
    assert optimizer.param_groups[0]["lr"] == pytest.approx(0.7)

    torch.save(model.state_dict(), tmp_path / "mnist_cnn.pt")
    again = Net()
    again.load_state_dict(torch.load(tmp_path / "mnist_cnn.pt"))
    again.eval()
    model.eval()
    x = next(iter(test_loader))[0][:8]
    with torch.no_grad():
        np.testing.assert_array_equal(again(x).numpy(), model(x).numpy())


# ------------------------------------------------------------ polynomial with autograd
def test_the_polynomial_fit_with_a_manual_update_matches_numpy() -> None:
    """ "Learning PyTorch with Examples": y = sin(x) fitted by a + b x + c x^2 + d x^3,
    gradients by autograd, the update by hand under no_grad (``a -= lr * a.grad``).
    Compared with the same loop written with NumPy and hand-derived gradients (float64,
    same order of operations: equal to 1e-10)."""
    dtype = torch.float64
    x = torch.linspace(-math.pi, math.pi, 2000, dtype=dtype)
    y = torch.sin(x)
    a = torch.tensor(0.1, dtype=dtype, requires_grad=True)
    b = torch.tensor(-0.2, dtype=dtype, requires_grad=True)
    c = torch.tensor(0.05, dtype=dtype, requires_grad=True)
    d = torch.tensor(0.3, dtype=dtype, requires_grad=True)
    learning_rate = 1e-6
    ids = [id(t) for t in (a, b, c, d)]
    for _ in range(300):
        y_pred = a + b * x + c * x**2 + d * x**3
        loss = (y_pred - y).pow(2).sum()
        loss.backward()
        with torch.no_grad():
            a -= learning_rate * a.grad
            b -= learning_rate * b.grad
            c -= learning_rate * c.grad
            d -= learning_rate * d.grad
            a.grad = None
            b.grad = None
            c.grad = None
            d.grad = None
    assert [id(t) for t in (a, b, c, d)] == ids  # updated in place, not rebound
    assert all(t.requires_grad for t in (a, b, c, d))

    xn = np.linspace(-math.pi, math.pi, 2000)
    yn = np.sin(xn)
    coef = np.array([0.1, -0.2, 0.05, 0.3])
    powers = np.stack([np.ones_like(xn), xn, xn**2, xn**3])
    for _ in range(300):
        residual = powers.T @ coef - yn
        coef = coef - learning_rate * (2.0 * powers @ residual)
    got = np.array([t.item() for t in (a, b, c, d)])
    np.testing.assert_allclose(got, coef, rtol=1e-10)
    assert float(loss.item()) < 0.5 * float(((powers.T @ [0.1, -0.2, 0.05, 0.3] - yn) ** 2).sum())
