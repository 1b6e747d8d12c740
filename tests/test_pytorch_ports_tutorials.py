"""The official PyTorch tutorials a beginner copies first, ported by renaming ``torch``.

Each program is written after its tutorial's structure and idioms ("Quickstart", "What
is torch.nn really?", "Learning PyTorch with Examples", "A Gentle Introduction to
torch.autograd") inside a function whose parameters are the tutorial's imports
(``torch``, ``nn``, ``F``, ``optim``, ``DataLoader`` ...), so that the very same lines
run once on minitorch_accel and once on PyTorch. Nothing else differs, except lines
marked ``# shared`` (the random initial weights and shuffles of the first run are handed
to the second, so the two runs can be compared step by step) and ``# recorded`` (a loss
kept for the comparison). Data: the MNIST sample embedded in the package, or synthetic.

Float32 runs are compared with a stated tolerance: NumPy's and PyTorch's matrix products
add in different orders, so each product differs in the last bits (about 1e-7
relative), and training carries those differences along.
"""

# The tutorials' own names and loops are what is being ported: CamelCase arguments
# (DataLoader), X and Q, Mnist_CNN, unused loop variables, one long program.
# ruff: noqa: N801, N803, N806, B007, C901
# nn_tutorial rebinds model, fit and preprocess to other kinds of thing:
# mypy: disable-error-code="no-redef, call-arg, attr-defined, assignment"

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import minitorch_accel as mta
import minitorch_accel.nn.functional as mta_F
from minitorch_accel import datasets, transforms
from minitorch_accel.core.tensor import Tensor


# ------------------------------------------------------------------------ the harness
class Shared:
    """The random values of the first run (minitorch_accel), handed to the second.

    ``share(x)`` in the first run records ``x`` (a tensor, or a module's state dict)
    and returns it; in the second run it returns the recorded values in the second
    framework (loaded into the module for a module), in the same order.
    """

    def __init__(self) -> None:
        self.values: list[Any] = []
        self.orders: list[list[int]] = []
        self.replaying = False
        self.position = 0
        self.order_position = 0

    def replay(self) -> None:
        self.replaying, self.position, self.order_position = True, 0, 0

    def __call__(self, thing: Any) -> Any:
        if not self.replaying:
            if hasattr(thing, "state_dict"):
                state = thing.state_dict()
                self.values.append([np.array(v.detach().cpu().numpy()) for v in state.values()])
            else:
                self.values.append(np.array(thing.detach().cpu().numpy()))
            return thing
        import torch

        value = self.values[self.position]
        self.position += 1
        if hasattr(thing, "state_dict"):
            keys = list(thing.state_dict())
            thing.load_state_dict(dict(zip(keys, map(torch.from_numpy, value), strict=True)))
            return thing
        return torch.from_numpy(value.copy())

    def loader(self, data_loader: Any) -> Callable[..., Any]:
        """``DataLoader`` for the program: the framework's own, but with ``shuffle=True``
        the first run records each epoch's order and the second replays it."""

        def make(dataset: Any, batch_size: int = 1, shuffle: bool = False, **kw: Any) -> Any:
            if not shuffle:
                return data_loader(dataset, batch_size=batch_size, **kw)
            if self.replaying:
                return data_loader(dataset, batch_size=batch_size, sampler=_Replay(self), **kw)
            loader = data_loader(dataset, batch_size=batch_size, shuffle=True, **kw)
            loader.batch_sampler.sampler = _Record(loader.batch_sampler.sampler, self.orders)
            return loader

        return make


class _Record:
    def __init__(self, sampler: Any, orders: list[list[int]]) -> None:
        self.sampler, self.orders = sampler, orders

    def __len__(self) -> int:
        return len(self.sampler)

    def __iter__(self) -> Iterator[int]:
        order = [int(i) for i in self.sampler]
        self.orders.append(order)
        return iter(order)


class _Replay:
    def __init__(self, shared: Shared) -> None:
        self.shared = shared

    def __len__(self) -> int:
        return len(self.shared.orders[0])

    def __iter__(self) -> Iterator[int]:
        order = self.shared.orders[self.shared.order_position]
        self.shared.order_position += 1
        return iter(order)


class Printed(list[tuple[Any, ...]]):
    """A ``print`` for the program that keeps what it prints (numbers as floats)."""

    def __call__(self, *args: Any, **kw: Any) -> None:
        self.append(tuple(_plain(a) for a in args))


def _plain(value: Any) -> Any:
    if hasattr(value, "detach") and hasattr(value, "numel"):
        return np.array(value.detach().cpu().numpy(), dtype=np.float64)
    return value


def _numpy(state: dict[str, Any]) -> dict[str, np.ndarray]:
    return {k: np.array(v.detach().cpu().numpy(), dtype=np.float64) for k, v in state.items()}


def assert_states_close(ours: Any, theirs: Any, rtol: float, atol: float) -> None:
    a, b = _numpy(ours), _numpy(theirs)
    assert list(a) == list(b)
    for key in a:
        np.testing.assert_allclose(a[key], b[key], rtol=rtol, atol=atol, err_msg=key)


def mnist_arrays(n_train: int, n_valid: int, dtype: Any = np.float32) -> tuple[np.ndarray, ...]:
    """The tutorial's ``x_train, y_train, x_valid, y_valid``: flattened images in [0, 1]
    (float32, or ``dtype``) and int64 labels, from the embedded sample."""
    train = datasets.MNIST(sample=True, train=True)
    valid = datasets.MNIST(sample=True, train=False)
    x_train = train.raw_images[:n_train].reshape(n_train, 784).astype(dtype) / 255
    x_valid = valid.raw_images[:n_valid].reshape(n_valid, 784).astype(dtype) / 255
    return x_train, train.labels[:n_train], x_valid, valid.labels[:n_valid]


def torch_modules() -> SimpleNamespace:
    torch = pytest.importorskip("torch")
    import torch.nn.functional as F
    from torch import nn, optim
    from torch.utils.data import DataLoader, TensorDataset

    return SimpleNamespace(
        torch=torch, nn=nn, F=F, optim=optim, DataLoader=DataLoader, TensorDataset=TensorDataset
    )


def mta_modules() -> SimpleNamespace:
    from minitorch_accel import nn, optim
    from minitorch_accel.utils.data import DataLoader, TensorDataset

    return SimpleNamespace(
        torch=mta, nn=nn, F=mta_F, optim=optim, DataLoader=DataLoader, TensorDataset=TensorDataset
    )


# ------------------------------------------------------------------------- Quickstart
def quickstart(
    torch: Any,
    nn: Any,
    DataLoader: Any,
    training_data: Any,
    test_data: Any,
    share: Shared,
    print: Printed,
    path: Path,
) -> SimpleNamespace:
    """beginner_source/basics/quickstart_tutorial.py (FashionMNIST replaced by the
    datasets passed in; 2 epochs over a few batches)."""
    trace: list[float] = []  # recorded

    batch_size = 64

    # Create data loaders.
    train_dataloader = DataLoader(training_data, batch_size=batch_size)
    test_dataloader = DataLoader(test_data, batch_size=batch_size)

    for X, y in test_dataloader:
        print(f"Shape of X [N, C, H, W]: {X.shape}")
        print(f"Shape of y: {y.shape} {y.dtype}")
        break

    device = (
        torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
    )
    print(f"Using {device} device")

    # Define model
    class NeuralNetwork(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.flatten = nn.Flatten()
            self.linear_relu_stack = nn.Sequential(
                nn.Linear(28 * 28, 512),
                nn.ReLU(),
                nn.Linear(512, 512),
                nn.ReLU(),
                nn.Linear(512, 10),
            )

        def forward(self, x: Any) -> Any:
            x = self.flatten(x)
            logits = self.linear_relu_stack(x)
            return logits

    model = share(NeuralNetwork().to(device))  # shared
    print(model)

    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)

    def train(dataloader: Any, model: Any, loss_fn: Any, optimizer: Any) -> None:
        size = len(dataloader.dataset)
        model.train()
        for batch, (X, y) in enumerate(dataloader):
            X, y = X.to(device), y.to(device)

            # Compute prediction error
            pred = model(X)
            loss = loss_fn(pred, y)

            # Backpropagation
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()

            trace.append(loss.item())  # recorded
            if batch % 100 == 0:
                loss, current = loss.item(), (batch + 1) * len(X)
                print(f"loss: {loss:>7f}  [{current:>5d}/{size:>5d}]")

    def test(dataloader: Any, model: Any, loss_fn: Any) -> tuple[float, float]:
        size = len(dataloader.dataset)
        num_batches = len(dataloader)
        model.eval()
        test_loss, correct = 0, 0
        with torch.no_grad():
            for X, y in dataloader:
                X, y = X.to(device), y.to(device)
                pred = model(X)
                test_loss += loss_fn(pred, y).item()
                correct += (pred.argmax(1) == y).type(torch.float).sum().item()
        test_loss /= num_batches
        correct /= size
        print(f"Test Error: \n Accuracy: {(100 * correct):>0.1f}%, Avg loss: {test_loss:>8f} \n")
        return test_loss, correct  # recorded

    results = []
    epochs = 2
    for t in range(epochs):
        print(f"Epoch {t + 1}\n-------------------------------")
        train(train_dataloader, model, loss_fn, optimizer)
        results.append(test(test_dataloader, model, loss_fn))
    print("Done!")

    torch.save(model.state_dict(), path / "model.pth")
    print("Saved PyTorch Model State to model.pth")

    model = NeuralNetwork().to(device)
    model.load_state_dict(torch.load(path / "model.pth", weights_only=True))

    classes = [
        "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
        "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot",
    ]  # fmt: skip

    model.eval()
    x, y = test_data[0][0], test_data[0][1]
    with torch.no_grad():
        x = x.to(device)
        pred = model(x)
        predicted, actual = classes[pred[0].argmax(0)], classes[y]
        print(f'Predicted: "{predicted}", Actual: "{actual}"')
    return SimpleNamespace(
        trace=trace, results=results, model=model, predicted=predicted, actual=actual
    )


QUICKSTART_TRAIN, QUICKSTART_TEST = 256, 128


def quickstart_data() -> tuple[Any, Any]:
    transform = transforms.ToTensor()
    training_data = datasets.MNIST(sample=True, train=True, transform=transform)
    test_data = datasets.MNIST(sample=True, train=False, transform=transform)
    return (
        mta.utils.data.Subset(training_data, range(QUICKSTART_TRAIN)),
        mta.utils.data.Subset(test_data, range(QUICKSTART_TEST)),
    )


def test_quickstart_matches_pytorch_step_by_step(tmp_path: Path) -> None:
    """Every batch's loss, each epoch's test loss and accuracy, the trained weights and
    the reloaded model's prediction equal PyTorch's from the same initial weights
    (float32, different summation orders: rtol 1e-5)."""
    t = torch_modules()
    from minitorch_accel import nn

    share, printed = Shared(), Printed()
    training_data, test_data = quickstart_data()
    (tmp_path / "mta").mkdir()
    ours = quickstart(
        mta, nn, mta.utils.data.DataLoader, training_data, test_data, share, printed,
        tmp_path / "mta",
    )  # fmt: skip

    # The same images for PyTorch: ToTensor is uint8 / 255 in float32, as torchvision's.
    def as_torch(ds: Any) -> Any:
        xs = np.stack([np.asarray(ds[i][0]) for i in range(len(ds))])
        ys = np.array([ds[i][1] for i in range(len(ds))])
        return t.TensorDataset(t.torch.from_numpy(xs), t.torch.from_numpy(ys))

    share.replay()
    theirs_printed = Printed()
    (tmp_path / "torch").mkdir()
    theirs = quickstart(
        t.torch, t.nn, t.DataLoader, as_torch(training_data), as_torch(test_data), share,
        theirs_printed, tmp_path / "torch",
    )  # fmt: skip

    assert len(ours.trace) == 2 * math.ceil(QUICKSTART_TRAIN / 64)
    np.testing.assert_allclose(ours.trace, theirs.trace, rtol=1e-5)
    np.testing.assert_allclose(
        [r[0] for r in ours.results], [r[0] for r in theirs.results], rtol=1e-5
    )
    assert [r[1] for r in ours.results] == [r[1] for r in theirs.results]
    assert_states_close(ours.model.state_dict(), theirs.model.state_dict(), 1e-5, 1e-6)
    assert (ours.predicted, ours.actual) == (theirs.predicted, theirs.actual)
    # the model's printout is PyTorch's, line for line
    assert str(printed[3][0]) == str(theirs_printed[3][0])


def test_quickstart_training_equals_a_numpy_mlp(tmp_path: Path) -> None:
    """The same two epochs written in NumPy (float64, hand-derived gradients of the
    3-layer ReLU network and of the mean cross entropy) from the recorded initial
    weights: every loss within 1e-5 (float32 against float64)."""
    share, printed = Shared(), Printed()
    training_data, test_data = quickstart_data()
    from minitorch_accel import nn

    ours = quickstart(
        mta, nn, mta.utils.data.DataLoader, training_data, test_data, share, printed, tmp_path
    )
    w = [v.astype(np.float64) for v in share.values[0]]  # w1 b1 w2 b2 w3 b3
    images = np.stack([np.asarray(training_data[i][0]) for i in range(QUICKSTART_TRAIN)])
    labels = np.array([training_data[i][1] for i in range(QUICKSTART_TRAIN)])
    images = images.reshape(QUICKSTART_TRAIN, 784).astype(np.float64)
    losses = []
    for _ in range(2):
        for start in range(0, QUICKSTART_TRAIN, 64):
            x, y = images[start : start + 64], labels[start : start + 64]
            h1 = np.maximum(x @ w[0].T + w[1], 0)
            h2 = np.maximum(h1 @ w[2].T + w[3], 0)
            z = h2 @ w[4].T + w[5]
            z = z - z.max(1, keepdims=True)
            p = np.exp(z) / np.exp(z).sum(1, keepdims=True)
            losses.append(-np.log(p[np.arange(len(y)), y]).mean())
            dz = (p - np.eye(10)[y]) / len(y)
            dh2 = (dz @ w[4]) * (h2 > 0)
            dh1 = (dh2 @ w[2]) * (h1 > 0)
            grads = [dz.T @ h2, dz.sum(0), dh2.T @ h1, dh2.sum(0), dh1.T @ x, dh1.sum(0)]
            grads = [grads[4], grads[5], grads[2], grads[3], grads[0], grads[1]]
            w = [p_ - 1e-3 * g for p_, g in zip(w, grads, strict=True)]
    np.testing.assert_allclose(ours.trace, losses, rtol=1e-5)
    final = [v for v in _numpy(ours.model.state_dict()).values()]
    for got, want in zip(final, w, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)


# ------------------------------------------------------------ What is torch.nn really?
def nn_tutorial(
    torch: Any,
    nn: Any,
    F: Any,
    optim: Any,
    TensorDataset: Any,
    DataLoader: Any,
    arrays: tuple[np.ndarray, ...],
    share: Shared,
    print: Printed,
) -> dict[str, Any]:
    """beginner_source/nn_tutorial.py, every refactoring step (MNIST from the embedded
    sample instead of the pickle; fewer rows)."""
    out: dict[str, Any] = {}  # recorded: each step's model after training
    x_train, y_train, x_valid, y_valid = arrays
    x_train, y_train, x_valid, y_valid = map(torch.tensor, (x_train, y_train, x_valid, y_valid))
    n, c = x_train.shape
    print(x_train, y_train)
    print(x_train.shape)
    print(y_train.min(), y_train.max())

    # Neural net from scratch (without torch.nn)
    weights = share(torch.randn(784, 10) / math.sqrt(784))  # shared
    weights.requires_grad_()
    bias = torch.zeros(10, requires_grad=True)

    def log_softmax(x: Any) -> Any:
        return x - x.exp().sum(-1).log().unsqueeze(-1)

    def model(xb: Any) -> Any:
        return log_softmax(xb @ weights + bias)

    bs = 64  # batch size
    xb = x_train[0:bs]  # a mini-batch from x
    preds = model(xb)  # predictions
    preds[0], preds.shape
    print(preds[0], preds.shape)

    def nll(input: Any, target: Any) -> Any:
        return -input[range(target.shape[0]), target].mean()

    loss_func = nll
    yb = y_train[0:bs]
    print(loss_func(preds, yb))

    def accuracy(out: Any, yb: Any) -> Any:
        preds = torch.argmax(out, dim=1)
        return (preds == yb).float().mean()

    print(accuracy(preds, yb))

    lr = 0.5  # learning rate
    epochs = 2  # how many epochs to train for

    for epoch in range(epochs):
        for i in range((n - 1) // bs + 1):
            start_i = i * bs
            end_i = start_i + bs
            xb = x_train[start_i:end_i]
            yb = y_train[start_i:end_i]
            pred = model(xb)
            loss = loss_func(pred, yb)

            loss.backward()
            with torch.no_grad():
                weights -= weights.grad * lr
                bias -= bias.grad * lr
                weights.grad.zero_()
                bias.grad.zero_()

    print(loss_func(model(xb), yb), accuracy(model(xb), yb))
    out["manual"] = {"weights": weights, "bias": bias}

    # Using torch.nn.functional
    loss_func = F.cross_entropy

    def model(xb: Any) -> Any:
        return xb @ weights + bias

    print(loss_func(model(xb), yb), accuracy(model(xb), yb))

    # Refactor using nn.Module
    class Mnist_Logistic(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.weights = nn.Parameter(share(torch.randn(784, 10) / math.sqrt(784)))  # shared
            self.bias = nn.Parameter(torch.zeros(10))

        def forward(self, xb: Any) -> Any:
            return xb @ self.weights + self.bias

    model = Mnist_Logistic()
    print(loss_func(model(xb), yb))

    def fit() -> None:
        for epoch in range(epochs):
            for i in range((n - 1) // bs + 1):
                start_i = i * bs
                end_i = start_i + bs
                xb = x_train[start_i:end_i]
                yb = y_train[start_i:end_i]
                pred = model(xb)
                loss = loss_func(pred, yb)

                loss.backward()
                with torch.no_grad():
                    for p in model.parameters():
                        p -= p.grad * lr
                    model.zero_grad()

    fit()
    print(loss_func(model(xb), yb))
    out["module"] = model

    # Refactor using nn.Linear
    class Mnist_Logistic(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = nn.Linear(784, 10)

        def forward(self, xb: Any) -> Any:
            return self.lin(xb)

    model = share(Mnist_Logistic())  # shared
    print(loss_func(model(xb), yb))
    fit()
    print(loss_func(model(xb), yb))
    out["linear"] = model

    # Refactor using torch.optim
    def get_model() -> Any:
        model = share(Mnist_Logistic())  # shared
        return model, optim.SGD(model.parameters(), lr=lr)

    model, opt = get_model()
    print(loss_func(model(xb), yb))

    for epoch in range(epochs):
        for i in range((n - 1) // bs + 1):
            start_i = i * bs
            end_i = start_i + bs
            xb = x_train[start_i:end_i]
            yb = y_train[start_i:end_i]
            pred = model(xb)
            loss = loss_func(pred, yb)

            loss.backward()
            opt.step()
            opt.zero_grad()

    print(loss_func(model(xb), yb))
    out["optim"] = model

    # Refactor using Dataset
    train_ds = TensorDataset(x_train, y_train)
    model, opt = get_model()

    for epoch in range(epochs):
        for i in range((n - 1) // bs + 1):
            xb, yb = train_ds[i * bs : i * bs + bs]
            pred = model(xb)
            loss = loss_func(pred, yb)

            loss.backward()
            opt.step()
            opt.zero_grad()

    print(loss_func(model(xb), yb))
    out["dataset"] = model

    # Refactor using DataLoader
    train_ds = TensorDataset(x_train, y_train)
    train_dl = DataLoader(train_ds, batch_size=bs)

    model, opt = get_model()

    for epoch in range(epochs):
        for xb, yb in train_dl:
            pred = model(xb)
            loss = loss_func(pred, yb)

            loss.backward()
            opt.step()
            opt.zero_grad()

    print(loss_func(model(xb), yb))
    out["dataloader"] = model

    # Add validation
    train_ds = TensorDataset(x_train, y_train)
    train_dl = DataLoader(train_ds, batch_size=bs, shuffle=True)

    valid_ds = TensorDataset(x_valid, y_valid)
    valid_dl = DataLoader(valid_ds, batch_size=bs * 2)

    model, opt = get_model()
    for epoch in range(epochs):
        model.train()
        for xb, yb in train_dl:
            pred = model(xb)
            loss = loss_func(pred, yb)

            loss.backward()
            opt.step()
            opt.zero_grad()

        model.eval()
        with torch.no_grad():
            valid_loss = sum(loss_func(model(xb), yb) for xb, yb in valid_dl)

        print(epoch, valid_loss / len(valid_dl))
    out["validation"] = model

    # Create fit() and get_data()
    def loss_batch(model: Any, loss_func: Any, xb: Any, yb: Any, opt: Any = None) -> Any:
        loss = loss_func(model(xb), yb)

        if opt is not None:
            loss.backward()
            opt.step()
            opt.zero_grad()

        return loss.item(), len(xb)

    def fit(
        epochs: int, model: Any, loss_func: Any, opt: Any, train_dl: Any, valid_dl: Any
    ) -> None:
        for epoch in range(epochs):
            model.train()
            for xb, yb in train_dl:
                loss_batch(model, loss_func, xb, yb, opt)

            model.eval()
            with torch.no_grad():
                losses, nums = zip(
                    *[loss_batch(model, loss_func, xb, yb) for xb, yb in valid_dl], strict=True
                )
            val_loss = np.sum(np.multiply(losses, nums)) / np.sum(nums)

            print(epoch, val_loss)

    def get_data(train_ds: Any, valid_ds: Any, bs: int) -> Any:
        return (
            DataLoader(train_ds, batch_size=bs, shuffle=True),
            DataLoader(valid_ds, batch_size=bs * 2),
        )

    train_dl, valid_dl = get_data(train_ds, valid_ds, bs)
    model, opt = get_model()
    fit(epochs, model, loss_func, opt, train_dl, valid_dl)
    out["fit"] = model

    # Switch to CNN
    class Mnist_CNN(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(1, 16, kernel_size=3, stride=2, padding=1)
            self.conv2 = nn.Conv2d(16, 16, kernel_size=3, stride=2, padding=1)
            self.conv3 = nn.Conv2d(16, 10, kernel_size=3, stride=2, padding=1)

        def forward(self, xb: Any) -> Any:
            xb = xb.view(-1, 1, 28, 28)
            xb = F.relu(self.conv1(xb))
            xb = F.relu(self.conv2(xb))
            xb = F.relu(self.conv3(xb))
            xb = F.avg_pool2d(xb, 4)
            return xb.view(-1, xb.size(1))

    lr = 0.1
    model = share(Mnist_CNN())  # shared
    opt = optim.SGD(model.parameters(), lr=lr, momentum=0.9)

    fit(epochs, model, loss_func, opt, train_dl, valid_dl)
    out["cnn"] = model

    # Using nn.Sequential
    class Lambda(nn.Module):
        def __init__(self, func: Any) -> None:
            super().__init__()
            self.func = func

        def forward(self, x: Any) -> Any:
            return self.func(x)

    def preprocess(x: Any) -> Any:
        return x.view(-1, 1, 28, 28)

    model = share(  # shared
        nn.Sequential(
            Lambda(preprocess),
            nn.Conv2d(1, 16, kernel_size=3, stride=2, padding=1),
            nn.ReLU(),
            nn.Conv2d(16, 16, kernel_size=3, stride=2, padding=1),
            nn.ReLU(),
            nn.Conv2d(16, 10, kernel_size=3, stride=2, padding=1),
            nn.ReLU(),
            nn.AvgPool2d(4),
            Lambda(lambda x: x.view(x.size(0), -1)),
        )
    )

    opt = optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    fit(epochs, model, loss_func, opt, train_dl, valid_dl)
    out["sequential"] = model

    # Wrapping DataLoader
    def preprocess(x: Any, y: Any) -> Any:
        return x.view(-1, 1, 28, 28), y

    class WrappedDataLoader:
        def __init__(self, dl: Any, func: Any) -> None:
            self.dl = dl
            self.func = func

        def __len__(self) -> int:
            return len(self.dl)

        def __iter__(self) -> Any:
            for b in self.dl:
                yield (self.func(*b))

    train_dl, valid_dl = get_data(train_ds, valid_ds, bs)
    train_dl = WrappedDataLoader(train_dl, preprocess)
    valid_dl = WrappedDataLoader(valid_dl, preprocess)

    model = share(  # shared
        nn.Sequential(
            nn.Conv2d(1, 16, kernel_size=3, stride=2, padding=1),
            nn.ReLU(),
            nn.Conv2d(16, 16, kernel_size=3, stride=2, padding=1),
            nn.ReLU(),
            nn.Conv2d(16, 10, kernel_size=3, stride=2, padding=1),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d(1),
            Lambda(lambda x: x.view(x.size(0), -1)),
        )
    )

    opt = optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    fit(epochs, model, loss_func, opt, train_dl, valid_dl)
    out["wrapped"] = model

    # Using your GPU
    dev = (
        torch.accelerator.current_accelerator()
        if torch.accelerator.is_available()
        else torch.device("cpu")
    )

    def preprocess(x: Any, y: Any) -> Any:
        return x.view(-1, 1, 28, 28).to(dev), y.to(dev)

    train_dl, valid_dl = get_data(train_ds, valid_ds, bs)
    train_dl = WrappedDataLoader(train_dl, preprocess)
    valid_dl = WrappedDataLoader(valid_dl, preprocess)
    model.to(dev)
    opt = optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    fit(epochs, model, loss_func, opt, train_dl, valid_dl)
    out["device"] = model
    return out


NN_TRAIN, NN_VALID = 640, 256


def run_nn_tutorial(
    fw: SimpleNamespace, share: Shared, printed: Printed, dtype: Any = np.float32
) -> dict[str, Any]:
    return nn_tutorial(
        fw.torch, fw.nn, fw.F, fw.optim, fw.TensorDataset, share.loader(fw.DataLoader),
        mnist_arrays(NN_TRAIN, NN_VALID, dtype), share, printed,
    )  # fmt: skip


@pytest.mark.slow
def test_nn_tutorial_matches_pytorch_at_every_step() -> None:
    """Everything the tutorial prints (losses, accuracies, validation losses per epoch)
    and each refactoring step's trained weights equal PyTorch's, from the same initial
    weights and shuffles: rtol 2e-5. In float64 (the default dtype of both, and the
    data): in float32 the CNN steps' 40 momentum steps carry each BLAS kernel's own
    rounding beyond these bounds, so the result would depend on the CPU."""
    t = torch_modules()
    mta.manual_seed(0)
    share, ours_printed, theirs_printed = Shared(), Printed(), Printed()
    before, before_t = mta.get_default_dtype(), t.torch.get_default_dtype()
    mta.set_default_dtype(mta.float64)
    t.torch.set_default_dtype(t.torch.float64)
    try:
        ours = run_nn_tutorial(mta_modules(), share, ours_printed, np.float64)
        share.replay()
        theirs = run_nn_tutorial(t, share, theirs_printed, np.float64)
    finally:
        mta.set_default_dtype(before)
        t.torch.set_default_dtype(before_t)
    assert share.position == len(share.values)
    assert share.order_position == len(share.orders) == 2 * 6  # 6 fits over shuffles
    assert len(ours_printed) == len(theirs_printed)
    for a, b in zip(ours_printed, theirs_printed, strict=True):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            if isinstance(x, np.ndarray | float):
                np.testing.assert_allclose(x, y, rtol=2e-5, atol=1e-6)
            else:
                assert x == y
    assert list(ours) == list(theirs)
    for step in ours:
        a, b = ours[step], theirs[step]
        a, b = (a, b) if isinstance(a, dict) else (a.state_dict(), b.state_dict())
        if step in ("cnn", "sequential", "wrapped", "device"):
            # momentum 0.9 over 40 steps of a ReLU CNN carries the last-bit differences
            # further: within 1e-3 of each tensor's own scale (a bound kept from float32)
            for key, value in _numpy(a).items():
                scale = float(np.abs(value).max())
                assert_states_close({key: a[key]}, {key: b[key]}, 1e-3, 1e-3 * scale)
        else:
            assert_states_close(a, b, rtol=2e-4, atol=2e-6)


def softmax_regression_sgd(
    weights: np.ndarray, bias: np.ndarray, x: np.ndarray, y: np.ndarray, orders: list[Any]
) -> tuple[np.ndarray, np.ndarray]:
    """Plain SGD on the mean cross entropy of ``x @ weights + bias`` in NumPy (float64),
    batches of 64 rows taken from each epoch's order, lr 0.5."""
    w, b = weights.astype(np.float64), bias.astype(np.float64)
    for order in orders:
        for start in range(0, len(order), 64):
            rows = np.asarray(order[start : start + 64])
            z = x[rows] @ w + b
            p = np.exp(z - z.max(1, keepdims=True))
            p /= p.sum(1, keepdims=True)
            dz = (p - np.eye(10)[y[rows]]) / len(rows)
            w, b = w - 0.5 * x[rows].T @ dz, b - 0.5 * dz.sum(0)
    return w, b


def test_nn_tutorial_logistic_steps_equal_numpy_sgd() -> None:
    """Each refactoring of the logistic regression (by hand, F.cross_entropy, nn.Module,
    nn.Linear, optim, Dataset, DataLoader, shuffled with validation, fit/get_data)
    trains to the weights of the same SGD written in NumPy from its recorded initial
    weights and order (float32 against float64: rtol 1e-4)."""
    share = Shared()
    out = run_nn_tutorial(mta_modules(), share, Printed())
    x, y = mnist_arrays(NN_TRAIN, NN_VALID)[:2]
    x = x.astype(np.float64)
    in_order = [list(range(NN_TRAIN))] * 2
    cases = [
        ("manual", share.values[0], in_order),
        ("module", share.values[1], in_order),
        ("linear", share.values[2], in_order),
        ("optim", share.values[3], in_order),
        ("dataset", share.values[4], in_order),
        ("dataloader", share.values[5], in_order),
        ("validation", share.values[6], share.orders[0:2]),
        ("fit", share.values[7], share.orders[2:4]),
    ]
    for step, initial, orders in cases:
        if isinstance(initial, list):  # nn.Linear: weight (10, 784), bias
            w0, b0 = initial[0].T, initial[1]
        else:  # 784 x 10 weights, zero bias
            w0, b0 = initial, np.zeros(10)
        want_w, want_b = softmax_regression_sgd(w0, b0, x, y, orders)
        model = out[step]
        got = _numpy(model if isinstance(model, dict) else model.state_dict())
        got_w, got_b = list(got.values())
        got_w = got_w if got_w.shape == (784, 10) else got_w.T
        np.testing.assert_allclose(got_w, want_w, rtol=1e-4, atol=1e-6, err_msg=step)
        np.testing.assert_allclose(got_b, want_b, rtol=1e-4, atol=1e-6, err_msg=step)


# ------------------------------------------------------- Learning PyTorch with Examples
def polynomial_nn(torch: Any, share: Shared, print: Printed, steps: int) -> Any:
    """polynomial_nn.py: nn.Sequential(Linear(3, 1), Flatten(0, 1)) on x ** (1, 2, 3),
    the update by hand."""
    # Create Tensors to hold input and outputs.
    x = torch.linspace(-math.pi, math.pi, 2000)
    y = torch.sin(x)

    # For this example, the output y is a linear function of (x, x^2, x^3), so
    # we can consider it as a linear layer neural network. Let's prepare the
    # tensor (x, x^2, x^3).
    p = torch.tensor([1, 2, 3])
    xx = x.unsqueeze(-1).pow(p)

    model = torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Flatten(0, 1))
    share(model)  # shared
    loss_fn = torch.nn.MSELoss(reduction="sum")

    learning_rate = 1e-6
    for t in range(steps):
        y_pred = model(xx)
        loss = loss_fn(y_pred, y)
        if t % 100 == 99:
            print(t, loss.item())
        model.zero_grad()
        loss.backward()
        with torch.no_grad():
            for param in model.parameters():
                param -= learning_rate * param.grad

    # You can access the first layer of `model` like accessing the first item of a list
    linear_layer = model[0]
    print(
        f"Result: y = {linear_layer.bias.item()} + {linear_layer.weight[:, 0].item()} x + "
        f"{linear_layer.weight[:, 1].item()} x^2 + {linear_layer.weight[:, 2].item()} x^3"
    )
    return model


def polynomial_custom_function(torch: Any, print: Printed, steps: int) -> Any:
    """polynomial_custom_function.py: y = a + b P3(c + d x) with the Legendre polynomial
    P3 as a custom autograd Function."""

    class LegendrePolynomial3(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, input: Any) -> Any:
            ctx.save_for_backward(input)
            return 0.5 * (5 * input**3 - 3 * input)

        @staticmethod
        def backward(ctx: Any, grad_output: Any) -> Any:
            (input,) = ctx.saved_tensors
            return grad_output * 1.5 * (5 * input**2 - 1)

    dtype = torch.float
    device = torch.device("cpu")
    x = torch.linspace(-math.pi, math.pi, 2000, device=device, dtype=dtype)
    y = torch.sin(x)

    a = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
    b = torch.full((), -1.0, device=device, dtype=dtype, requires_grad=True)
    c = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
    d = torch.full((), 0.3, device=device, dtype=dtype, requires_grad=True)

    learning_rate = 5e-6
    for t in range(steps):
        P3 = LegendrePolynomial3.apply
        y_pred = a + b * P3(c + d * x)
        loss = (y_pred - y).pow(2).sum()
        if t % 100 == 99:
            print(t, loss.item())
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

    print(f"Result: y = {a.item()} + {b.item()} * P3({c.item()} + {d.item()} x)")
    return a, b, c, d


def dynamic_net(torch: Any, share: Shared, print: Printed, steps: int) -> Any:
    """dynamic_net.py: a random number (0 to 2) of x^4, x^5 terms per forward pass, all
    sharing the weight e."""

    class DynamicNet(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.a = torch.nn.Parameter(torch.randn(()))
            self.b = torch.nn.Parameter(torch.randn(()))
            self.c = torch.nn.Parameter(torch.randn(()))
            self.d = torch.nn.Parameter(torch.randn(()))
            self.e = torch.nn.Parameter(torch.randn(()))

        def forward(self, x: Any) -> Any:
            y = self.a + self.b * x + self.c * x**2 + self.d * x**3
            for exp in range(4, random.randint(4, 6)):
                y = y + self.e * x**exp
            return y

        def string(self) -> str:
            return (
                f"y = {self.a.item()} + {self.b.item()} x + {self.c.item()} x^2 + "
                f"{self.d.item()} x^3 + {self.e.item()} x^4 ? + {self.e.item()} x^5 ?"
            )

    x = torch.linspace(-math.pi, math.pi, 2000)
    y = torch.sin(x)

    model = share(DynamicNet())  # shared
    criterion = torch.nn.MSELoss(reduction="sum")
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-8, momentum=0.9)
    for t in range(steps):
        y_pred = model(x)
        loss = criterion(y_pred, y)
        if t % 100 == 99:
            print(t, loss.item())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    print(f"Result: {model.string()}")
    return model


def _compare_printed(ours: Printed, theirs: Printed, rtol: float) -> None:
    assert len(ours) == len(theirs)
    for a, b in zip(ours[:-1], theirs[:-1], strict=True):
        assert a[0] == b[0]
        np.testing.assert_allclose(a[1], b[1], rtol=rtol)
    numbers = [
        [float(s) for s in line[0].replace("?", "").split() if _is_number(s)]
        for line in (ours[-1], theirs[-1])
    ]
    np.testing.assert_allclose(numbers[0], numbers[1], rtol=rtol, atol=1e-6)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def test_polynomial_nn_matches_pytorch() -> None:
    """The Sequential(Linear, Flatten(0, 1)) fit: every printed loss and the result line
    (read through model[0].weight[:, i].item()) equal PyTorch's (float32: rtol 1e-5)."""
    t = torch_modules()
    share, ours, theirs = Shared(), Printed(), Printed()
    model = polynomial_nn(mta, share, ours, 300)
    share.replay()
    reference = polynomial_nn(t.torch, share, theirs, 300)
    assert len(ours) == 4
    _compare_printed(ours, theirs, 1e-5)
    assert_states_close(model.state_dict(), reference.state_dict(), 1e-5, 1e-7)


def test_polynomial_nn_equals_numpy_gradient_descent() -> None:
    """The same fit in NumPy (float64, the gradient of the summed squared error by
    hand) from the recorded initial weights: equal within float32 rounding."""
    share = Shared()
    model = polynomial_nn(mta, share, Printed(), 300)
    weight, bias = (v.astype(np.float64) for v in share.values[0])
    x = np.linspace(-math.pi, math.pi, 2000, dtype=np.float32).astype(np.float64)
    xx, y = np.stack([x, x**2, x**3], 1), np.sin(x)
    for _ in range(300):
        residual = xx @ weight[0] + bias[0] - y
        weight = weight - 1e-6 * 2 * (residual @ xx)[None]
        bias = bias - 1e-6 * 2 * residual.sum()
    state = _numpy(model.state_dict())
    np.testing.assert_allclose(state["0.weight"], weight, rtol=1e-4)
    np.testing.assert_allclose(state["0.bias"], bias, rtol=1e-4, atol=1e-6)


def test_legendre_custom_function_matches_pytorch_and_numpy() -> None:
    """The custom Function's fit equals PyTorch's loss for loss (float32: rtol 1e-5),
    and its backward is the derivative of P3 (float64 finite differences)."""
    t = torch_modules()
    ours, theirs = Printed(), Printed()
    got = polynomial_custom_function(mta, ours, 300)
    want = polynomial_custom_function(t.torch, theirs, 300)
    _compare_printed(ours, theirs, 1e-5)
    # a and c stay near 0 (odd data: their gradients cancel), so also an atol
    np.testing.assert_allclose(
        [v.item() for v in got], [v.item() for v in want], rtol=1e-5, atol=1e-7
    )

    class P3(mta.autograd.Function):
        @staticmethod
        def forward(ctx: Any, input: Any) -> Any:
            ctx.save_for_backward(input)
            return 0.5 * (5 * input**3 - 3 * input)

        @staticmethod
        def backward(ctx: Any, grad_output: Any) -> Any:  # type: ignore[override]
            (input,) = ctx.saved_tensors
            return grad_output * 1.5 * (5 * input**2 - 1)

    from minitorch_accel.utils.gradcheck import gradcheck

    x = mta.tensor(np.linspace(-1.5, 1.5, 7), dtype=mta.float64, requires_grad=True)
    assert gradcheck(P3.apply, (x,))


def test_dynamic_net_matches_pytorch_with_the_same_random_depths() -> None:
    """DynamicNet's random control flow (random.randint, seeded alike) and shared
    weight e: every printed loss and the final parameters equal PyTorch's (float32,
    momentum SGD: rtol 1e-5); the depths drawn differ between steps, so both the x^4
    and the x^5 branches ran."""
    t = torch_modules()
    share, ours, theirs = Shared(), Printed(), Printed()
    random.seed(0)
    depths = [random.randint(4, 6) for _ in range(300)]
    assert {4, 5, 6} <= set(depths)
    random.seed(0)
    model = dynamic_net(mta, share, ours, 300)
    random.seed(0)
    share.replay()
    reference = dynamic_net(t.torch, share, theirs, 300)
    _compare_printed(ours, theirs, 1e-5)
    assert_states_close(model.state_dict(), reference.state_dict(), 1e-5, 1e-7)


# ------------------------------------------------- A Gentle Introduction to torch.autograd
def autograd_tutorial(torch: Any, nn: Any, optim: Any, share: Shared, print: Printed) -> Any:
    """beginner_source/blitz/autograd_tutorial.py; torchvision's resnet18 is replaced by
    a small network with the same ``fc`` head (a convolution, pooling, ``fc``)."""

    class SmallResNetLike(nn.Module):  # stands in for resnet18(weights=...)
        def __init__(self) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(3, 8, kernel_size=3, padding=1)
            self.relu = nn.ReLU()
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(8, 1000)

        def forward(self, x: Any) -> Any:
            x = self.avgpool(self.relu(self.conv1(x)))
            return self.fc(torch.flatten(x, 1))

    model = share(SmallResNetLike())  # shared
    data = share(torch.rand(1, 3, 64, 64))  # shared
    labels = share(torch.rand(1, 1000))  # shared

    prediction = model(data)  # forward pass
    loss = (prediction - labels).sum()
    loss.backward()  # backward pass
    optim_ = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
    optim_.step()  # gradient descent
    after_step = {k: v.clone() for k, v in model.state_dict().items()}  # recorded

    # Differentiation in Autograd
    a = torch.tensor([2.0, 3.0], requires_grad=True)
    b = torch.tensor([6.0, 4.0], requires_grad=True)
    Q = 3 * a**3 - b**2
    external_grad = torch.tensor([1.0, 1.0])
    Q.backward(gradient=external_grad)
    # check if collected gradients are correct
    print(9 * a**2 == a.grad)
    print(-2 * b == b.grad)

    # Exclusion from the DAG
    x = share(torch.rand(5, 5))  # shared
    y = share(torch.rand(5, 5))  # shared
    z = share(torch.rand((5, 5))).requires_grad_()  # shared (the tutorial: requires_grad=True)
    a = x + y
    print(f"Does `a` require gradients?: {a.requires_grad}")
    b = x + z
    print(f"Does `b` require gradients?: {b.requires_grad}")

    model = share(SmallResNetLike())  # shared
    # Freeze all the parameters in the network
    for param in model.parameters():
        param.requires_grad = False
    model.fc = share(nn.Linear(8, 10))  # shared
    # Optimize only the classifier
    optimizer = optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)

    # (beyond the tutorial's text: one step of that fine-tuning, as a reader goes on)
    for _ in range(2):
        optimizer.zero_grad()
        out = model(data)
        loss = nn.functional.cross_entropy(out, torch.tensor([3]))
        loss.backward()
        optimizer.step()
    print(loss.item())
    with torch.no_grad():
        no_grad_out = model(data)
    print(no_grad_out.requires_grad, out.detach().requires_grad, out.requires_grad)
    print([p.grad is None for p in model.parameters()])
    return after_step, model


def test_autograd_tutorial_matches_pytorch() -> None:
    """The resnet step, the external gradient of Q, what requires gradients, and
    fine-tuning with frozen parameters and a replaced ``fc`` equal PyTorch (float32:
    rtol 1e-5); frozen parameters keep no gradient and do not move."""
    t = torch_modules()
    mta.manual_seed(0)  # the same weights and data whatever ran before
    share, ours, theirs = Shared(), Printed(), Printed()
    step, model = autograd_tutorial(mta, mta.nn, mta.optim, share, ours)
    share.replay()
    step_t, model_t = autograd_tutorial(t.torch, t.nn, t.optim, share, theirs)
    assert_states_close(step, step_t, 1e-5, 1e-7)
    assert_states_close(model.state_dict(), model_t.state_dict(), 1e-5, 1e-7)
    assert len(ours) == len(theirs) == 7
    for a, b in zip(ours, theirs, strict=True):
        if isinstance(a[0], np.ndarray):
            np.testing.assert_array_equal(a[0], b[0])
        elif isinstance(a[0], float):
            np.testing.assert_allclose(a[0], b[0], rtol=1e-5)
        else:
            assert a == b
    # PyTorch-free: Q's gradients are 9 a^2 and -2 b; the frozen convolution did not move
    assert ours[0][0].all() and ours[1][0].all()
    assert ours[2] == ("Does `a` require gradients?: False",)
    assert ours[3] == ("Does `b` require gradients?: True",)
    assert ours[6][0] == [True, True, False, False]
    frozen = share.values[6]  # the second SmallResNetLike's initial state
    np.testing.assert_array_equal(model.conv1.weight.numpy(), frozen[0])
    assert not np.array_equal(model.fc.weight.detach().numpy(), share.values[7][0])


# ------------------------------------------------ regressions found by the ports above
INDEX_CASES = [
    (3, "int64", ()),
    ([3], "int64", (1,)),
    ([[3]], "int32", (1, 1)),
    (3, "uint8", ()),
    (True, "bool", ()),
    (3.0, "float32", ()),
    ([1, 2], "int64", (2,)),
]


@pytest.mark.parametrize("value, dtype, shape", INDEX_CASES)
def test_a_tensor_is_a_list_index_as_in_pytorch(value: Any, dtype: str, shape: Any) -> None:
    """Quickstart's ``classes[pred[0].argmax(0)]``: a one-element integer or bool tensor
    is an index (``__index__``); any other raises PyTorch's TypeError."""
    torch = pytest.importorskip("torch")
    ours = mta.tensor(np.array(value, dtype=dtype))
    theirs = torch.from_numpy(np.array(value, dtype=dtype))
    items = list("abcde")
    try:
        want = items[theirs]
    except TypeError:
        with pytest.raises(TypeError, match="only integer tensors of a single element"):
            items[ours]
        return
    assert items[ours] == want == items[int(np.array(value).reshape(-1)[0])]
    assert range(10)[ours:] == range(10)[int(np.array(value).reshape(-1)[0]) :]


def test_a_tensor_index_names_its_dtype_and_shape() -> None:
    with pytest.raises(TypeError, match=r"dtype float32 and shape \(\)"):
        [0, 1][mta.tensor(1.0)]
    with pytest.raises(TypeError, match=r"dtype int64 and shape \(2,\)"):
        [0, 1][mta.tensor([0, 1])]


def test_indexing_a_tensor_with_a_one_element_tensor_keeps_its_dims() -> None:
    """``__index__`` must not turn a tensor index into an int: ``x[t]`` with ``t`` of
    shape (1,) keeps a dimension, as in PyTorch and NumPy's own arrays."""
    x = mta.arange(10.0)
    assert x[mta.tensor([3])].shape == (1,)
    assert x[mta.tensor(3)].shape == ()
    np.testing.assert_array_equal(x[mta.tensor([3])].numpy(), np.arange(10.0)[np.array([3])])


def test_load_takes_weights_only_as_pytorch(tmp_path: Path) -> None:
    """``torch.load(path, weights_only=True)`` (Quickstart) loads the state dict; so does
    ``weights_only=False``; the keyword is keyword-only, as in PyTorch."""
    torch = pytest.importorskip("torch")
    model = mta.nn.Linear(3, 2)
    mta.save(model.state_dict(), tmp_path / "m.pth")
    for weights_only in (True, False, None):
        state = mta.load(tmp_path / "m.pth", weights_only=weights_only)
        again = mta.nn.Linear(3, 2)
        again.load_state_dict(state)
        np.testing.assert_array_equal(again.weight.detach().numpy(), model.weight.detach().numpy())
    import inspect

    ours = inspect.signature(mta.load).parameters["weights_only"]
    theirs = inspect.signature(torch.load).parameters["weights_only"]
    assert ours.kind == theirs.kind == inspect.Parameter.KEYWORD_ONLY


def test_tensor_dataset_items_are_tensors_as_in_pytorch() -> None:
    """nn_tutorial's ``xb, yb = train_ds[i * bs : i * bs + bs]``: a TensorDataset of
    tensors gives tensors (a slice gives a batch), equal to PyTorch's; one of NumPy
    arrays still gives arrays."""
    torch = pytest.importorskip("torch")
    x = np.arange(24, dtype=np.float32).reshape(6, 4)
    y = np.arange(6)
    ours = mta.utils.data.TensorDataset(mta.tensor(x), mta.tensor(y))
    theirs = torch.utils.data.TensorDataset(torch.from_numpy(x), torch.from_numpy(y))
    for index in (2, -1, slice(1, 4), slice(None, None, 2)):
        got, want = ours[index], theirs[index]
        assert all(isinstance(part, Tensor) for part in got)
        for g, w in zip(got, want, strict=True):
            assert g.shape == tuple(w.shape) and str(g.dtype) == str(w.dtype).split(".")[1]
            np.testing.assert_array_equal(g.numpy(), w.numpy())
    assert len(ours.tensors) == len(theirs.tensors) == 2
    arrays = mta.utils.data.TensorDataset(x, y)[1:3]
    assert all(isinstance(part, np.ndarray) for part in arrays)
    np.testing.assert_array_equal(arrays[0], x[1:3])
    batch = next(iter(mta.utils.data.DataLoader(ours, batch_size=4)))
    np.testing.assert_array_equal(batch[0].numpy(), x[:4])


def autograd_mechanics(torch: Any, print: Printed) -> None:
    """notes/autograd.rst, "Locally disabling gradient computation": the grad modes as
    context managers, as decorators, and set_grad_enabled as a plain call."""
    x = torch.zeros(1, requires_grad=True)
    with torch.no_grad():
        y = x * 2
    print(y.requires_grad)

    is_train = False
    with torch.set_grad_enabled(is_train):
        y = x * 2
    print(y.requires_grad)

    torch.set_grad_enabled(True)  # this can also be used as a function
    y = x * 2
    print(y.requires_grad)

    torch.set_grad_enabled(False)
    y = x * 2
    print(y.requires_grad)
    torch.set_grad_enabled(True)

    @torch.no_grad()
    def doubler(x: Any) -> Any:
        return x * 2

    z = doubler(x)
    print(z.requires_grad, torch.is_grad_enabled())

    with torch.no_grad():
        with torch.enable_grad():
            y = x * 2
        print(y.requires_grad, torch.is_grad_enabled())
        with torch.set_grad_enabled(True):
            print(torch.is_grad_enabled())
        print(torch.is_grad_enabled())

    @torch.set_grad_enabled(False)
    def tripler(x: Any) -> Any:
        return x * 3

    print(torch.is_grad_enabled(), tripler(x).requires_grad, torch.is_grad_enabled())
    with torch.inference_mode():
        print((x * 2).requires_grad)
    print((x * 2).requires_grad, x.detach().requires_grad)


def test_autograd_mechanics_grad_modes_match_pytorch() -> None:
    """``torch.set_grad_enabled(False)`` as a plain call switches recording off at once
    (it only did so inside a ``with`` block before); every grad-mode idiom of the note
    gives PyTorch's answers."""
    t = torch_modules()
    ours, theirs = Printed(), Printed()
    try:
        autograd_mechanics(mta, ours)
    finally:
        mta.set_grad_enabled(True)
    autograd_mechanics(t.torch, theirs)
    assert ours == theirs
    assert [line[0] for line in ours[:4]] == [False, False, True, False]  # without PyTorch


def test_set_grad_enabled_as_a_call_and_as_a_context() -> None:
    """The regression on its own, PyTorch-free: a plain call switches at once; a
    ``with`` block returns to the mode before the call that made it; a decorator leaves
    the mode as it was when decorating."""
    x = mta.ones(2, requires_grad=True)
    try:
        mta.set_grad_enabled(False)
        assert not mta.is_grad_enabled() and not (x * 2).requires_grad
        with mta.set_grad_enabled(True):
            assert (x * 2).requires_grad
        assert not mta.is_grad_enabled()
        mta.set_grad_enabled(True)
        assert mta.is_grad_enabled()

        @mta.set_grad_enabled(False)
        def f() -> bool:
            return mta.is_grad_enabled()

        assert mta.is_grad_enabled() and not f() and mta.is_grad_enabled()
        no_grad = mta.no_grad()  # making a no_grad changes nothing until entered
        assert mta.is_grad_enabled()
        with no_grad:
            assert not mta.is_grad_enabled()
    finally:
        mta.set_grad_enabled(True)
