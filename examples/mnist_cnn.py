"""Train a small CNN on MNIST: a whole training program, read top to bottom.
=========================================================================

Teaches: the five parts of every training script, written out: the data (the embedded
MNIST sample in mini-batches), the model (a LeNet-style ``nn.Module``), the training loop
(``zero_grad``, forward, loss, ``backward``, ``step``), evaluation without gradients, and
saving the weights (``mta.save`` of the ``state_dict``).
Prints: one line per epoch (training loss, test accuracy, seconds), then the final test
accuracy (98.1% with the fixed seed) and the file the weights went to (``mnist_cnn.npz``).
Takes: about 15 s on 2 CPU cores (6 epochs of 4,000 digits).

    python examples/mnist_cnn.py                  # on the CPU
    python examples/mnist_cnn.py --device cuda    # the same on a GPU

Checkpoints, resuming, curves, full MNIST: ``python -m minitorch_accel train --help``.
"""

from __future__ import annotations

import argparse
import time

import minitorch_accel as mta
from minitorch_accel import nn, optim
from minitorch_accel.data import DataLoader
from minitorch_accel.datasets import MNIST
from minitorch_accel.nn import functional as F

parser = argparse.ArgumentParser(description="Train a small CNN on the embedded MNIST sample.")
parser.add_argument("--device", default="cpu", help="cpu (default), cuda, cuda:1, cpu:1...")
parser.add_argument("--epochs", type=int, default=6, help="passes over the training set")
args = parser.parse_args()
if args.epochs < 1:
    parser.error(f"--epochs must be at least 1, got {args.epochs}")
mta.manual_seed(0)  # the same weights, the same shuffles, the same numbers on every run

# 1. The data: 4,000 training and 1,000 test digits shipped inside the package,
#    (N, 1, 28, 28) float32 images standardized to mean 0, std 1, and int64 labels.
train_set = MNIST(sample=True, train=True, normalize=True)
test_set = MNIST(sample=True, train=False, normalize=True)
train_loader = DataLoader(train_set, batch_size=32, shuffle=True, seed=0)
test_loader = DataLoader(test_set, batch_size=500)


# 2. The model: two convolutions find strokes, then parts of digits; each is followed by
#    ReLU and a 2 x 2 max-pool that halves the image. Two linear layers turn what they
#    found into 10 scores, one per digit.
class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, kernel_size=5)  # 1 x 28 x 28 -> 16 x 24 x 24
        self.conv2 = nn.Conv2d(16, 32, kernel_size=5)  # 16 x 12 x 12 -> 32 x 8 x 8
        self.fc1 = nn.Linear(32 * 4 * 4, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x: mta.Tensor) -> mta.Tensor:
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)  # 16 x 12 x 12
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)  # 32 x 4 x 4
        return self.fc2(F.relu(self.fc1(x.flatten(1))))


model = Net().to(args.device)
optimizer = optim.Adam(model.parameters(), lr=2e-3)
scheduler = optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.6)  # lr x 0.6 each epoch
loss_fn = nn.CrossEntropyLoss()


# 3. Evaluation: no graph (no_grad), eval mode; the share of test digits guessed right.
def evaluate() -> float:
    model.eval()
    correct = 0
    with mta.no_grad():
        for x, y in test_loader:
            x, y = x.to(args.device), y.to(args.device)
            correct += int((model(x).argmax(dim=1) == y).sum().item())
    return correct / len(test_set)


# 4. The training loop: one step per mini-batch, one epoch per pass over the data.
start = time.perf_counter()
for epoch in range(1, args.epochs + 1):
    model.train()
    epoch_start, total_loss = time.perf_counter(), 0.0
    for x, y in train_loader:
        x, y = x.to(args.device), y.to(args.device)
        optimizer.zero_grad()  # gradients add up: forget the previous step's
        loss = loss_fn(model(x), y)  # forward: scores, then how wrong they are
        loss.backward()  # backward: d loss / d every parameter, into .grad
        optimizer.step()  # update: move every parameter a little downhill
        total_loss += loss.item()
    scheduler.step()
    accuracy = evaluate()
    seconds, mean_loss = time.perf_counter() - epoch_start, total_loss / len(train_loader)
    print(f"epoch {epoch}: loss {mean_loss:.4f}, test accuracy {accuracy:.2%}, {seconds:.1f} s")

# 5. Saving: the state_dict, every parameter by name (Net().load_state_dict(mta.load(path))).
mta.save(model.state_dict(), "mnist_cnn.npz")
elapsed = time.perf_counter() - start
print(f"{args.epochs} epochs on {args.device} in {elapsed:.1f} s: test accuracy {accuracy:.2%}")
print("weights saved to mnist_cnn.npz")
