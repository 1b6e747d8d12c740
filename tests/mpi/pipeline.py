"""Run under mpiexec: pipeline stages as ranks reproduce one process on the whole batch.

Every rank builds the whole model (same seed), keeps its stage and trains it with
MPIPipeline; it also trains the whole model alone as the reference, and compares its
own stage's parameters with the matching ones. Rank 0 writes the largest differences
to the JSON file named by argv[1]; argv[2] is the schedule.
"""

import json
import sys

import numpy as np

import minitorch_accel as mta
from minitorch_accel import distributed as dist
from minitorch_accel import nn, optim
from minitorch_accel.parallel import MPIPipeline, split_model


def make_model() -> nn.Sequential:
    mta.manual_seed(0)
    layers: list[nn.Module] = []
    for i in range(4):
        layers += [nn.Linear(5 if i == 0 else 7, 3 if i == 3 else 7)]
        if i < 3:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers).double()


def main() -> None:
    dist.init(timeout=120)
    rank, size = dist.rank(), dist.world_size()
    schedule = sys.argv[2]
    rng = np.random.default_rng(1)
    data = [(rng.standard_normal((12, 5)), rng.integers(0, 3, 12)) for _ in range(3)]
    model = make_model()
    devices = [f"cpu:{r + 1}" for r in range(size)]
    boundaries = [1, 6] if size == 3 else None  # an uneven split with 3 ranks
    stage = split_model(model, devices, boundaries).stages[rank].to("cpu")
    opt = optim.Adam(stage.parameters(), lr=0.01)
    pipe = MPIPipeline(stage, 5, schedule, nn.functional.cross_entropy, optimizer=opt)
    losses = [pipe.step(mta.tensor(x), mta.tensor(y)) for x, y in data]
    out = pipe.forward(mta.tensor(data[0][0]))

    ref = make_model()
    ref_opt = optim.Adam(ref.parameters(), lr=0.01)
    ref_losses = []
    for x, y in data:
        ref_opt.zero_grad()
        loss = nn.functional.cross_entropy(ref(mta.tensor(x)), mta.tensor(y))
        loss.backward()
        ref_opt.step()
        ref_losses.append(loss.item())
    mine = {id(p) for p in stage.parameters()}
    pairs = [
        (p, q) for p, q in zip(model.parameters(), ref.parameters(), strict=True) if id(p) in mine
    ]
    diff = max(float(np.abs(p.detach().numpy() - q.detach().numpy()).max()) for p, q in pairs)
    out_diff = 0.0
    if out is not None:
        out_diff = float(np.abs(out.numpy() - ref(mta.tensor(data[0][0])).detach().numpy()).max())
    loss_diff = max(abs(a - b) for a, b in zip(losses, ref_losses, strict=True))
    from mpi4py import MPI

    results = MPI.COMM_WORLD.gather(
        (diff, loss_diff, out_diff, len(pairs), pipe.bytes_sent), root=0
    )
    if rank == 0:
        assert results is not None
        with open(sys.argv[1], "w") as f:
            json.dump(
                {
                    "size": size,
                    "param_diff": max(r[0] for r in results),
                    "loss_diff": max(r[1] for r in results),
                    "output_diff": max(r[2] for r in results),
                    "params_per_rank": [r[3] for r in results],
                    "bytes_sent": [r[4] for r in results],
                },
                f,
            )


if __name__ == "__main__":
    main()
