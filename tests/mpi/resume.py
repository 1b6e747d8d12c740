"""Run under mpiexec, twice: ``first CKPT OUT`` trains 3 steps and writes a checkpoint
(rank 0 only); ``second CKPT OUT``, with another number of ranks, resumes and trains 3
more. Rank 0 of the second run compares with one process doing all 6 steps."""

import json
import sys

import numpy as np

import minitorch_accel as mta
from minitorch_accel import distributed as dist
from minitorch_accel import nn, optim

STEPS, BATCH = 6, 12  # 12 samples per step: 6 per rank on 2 ranks, 4 on 3


def make() -> tuple[nn.Module, optim.Optimizer]:
    mta.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 3)).to(dtype="float64")
    return model, optim.SGD(model.parameters(), lr=0.1, momentum=0.9)


def main() -> None:
    phase, checkpoint, out = sys.argv[1:4]
    dist.init(timeout=120)
    rank, size = dist.rank(), dist.world_size()
    rng = np.random.default_rng(5)
    data = [(rng.standard_normal((BATCH, 5)), rng.integers(0, 3, BATCH)) for _ in range(STEPS)]
    model, opt = make()
    start = 0
    if phase == "second":
        state = dist.load_checkpoint(checkpoint)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        start = int(state["step"])
    trainer = dist.DistributedTrainer(model, nn.CrossEntropyLoss(), opt)
    share = BATCH // size
    stop = STEPS // 2 if phase == "first" else STEPS
    for x, y in data[start:stop]:
        part = slice(rank * share, (rank + 1) * share)
        trainer.step(mta.tensor(x[part]), mta.tensor(y[part]))
    if phase == "first":
        dist.save_checkpoint(
            {"model": model.state_dict(), "optimizer": opt.state_dict(), "step": stop}, checkpoint
        )
        return
    if rank == 0:
        ref, ref_opt = make()
        for x, y in data:
            ref_opt.zero_grad()
            nn.functional.cross_entropy(ref(mta.tensor(x)), mta.tensor(y)).backward()
            ref_opt.step()
        diff = max(
            float(np.abs(p.detach().numpy() - q.detach().numpy()).max())
            for p, q in zip(model.parameters(), ref.parameters(), strict=True)
        )
        with open(out, "w") as f:
            json.dump({"param_diff": diff, "size": size}, f)


if __name__ == "__main__":
    main()
