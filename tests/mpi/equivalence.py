"""Run under mpiexec: R ranks with uneven batches reproduce one process on the union.

Rank 0 also trains a single-process reference on the concatenated batches and writes
the largest parameter difference to the JSON file named by argv[1].
"""

import json
import sys

import numpy as np

import minitorch_accel as mta
from minitorch_accel import distributed as dist
from minitorch_accel import nn, optim


def make_model() -> nn.Module:
    mta.manual_seed(0)
    return nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 3)).to(dtype="float64")


def main() -> None:
    dist.init(timeout=120)
    rank, size = dist.rank(), dist.world_size()
    sizes = [3 + r for r in range(size)]  # uneven batches
    rng = np.random.default_rng(1)
    steps = 4
    data = [
        (rng.standard_normal((sum(sizes), 5)), rng.integers(0, 3, sum(sizes))) for _ in range(steps)
    ]
    model = make_model()
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-3)
    trainer = dist.DistributedTrainer(model, nn.CrossEntropyLoss(), opt, "cpu")
    start = sum(sizes[:rank])
    losses = []
    for x, y in data:
        xb = mta.tensor(x[start : start + sizes[rank]])
        yb = mta.tensor(y[start : start + sizes[rank]])
        losses.append(trainer.step(xb, yb))
    if rank == 0:
        ref = make_model()
        ref_opt = optim.SGD(
            ref.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-3
        )
        ref_losses = []
        for x, y in data:
            ref_opt.zero_grad()
            loss = nn.functional.cross_entropy(ref(mta.tensor(x)), mta.tensor(y))
            loss.backward()
            ref_opt.step()
            ref_losses.append(loss.item())
        diff = max(
            float(np.abs(p.detach().numpy() - q.detach().numpy()).max())
            for p, q in zip(model.parameters(), ref.parameters(), strict=True)
        )
        loss_diff = max(abs(a - b) for a, b in zip(losses, ref_losses, strict=True))
        with open(sys.argv[1], "w") as f:
            json.dump({"param_diff": diff, "loss_diff": loss_diff, "size": size}, f)


if __name__ == "__main__":
    main()
