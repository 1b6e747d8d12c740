"""Run under mpiexec: ``full OUT`` trains 6 steps; ``stop CKPT`` trains until rank 1
receives SIGTERM after step 3 (rank 0 receives none): every rank must stop after step
4, rank 0 save, and every rank exit 143; ``resume CKPT OUT`` continues to step 6.
OUT gets rank 0's parameters (.npz), to compare the resumed run with the full one."""

import os
import signal
import sys

import numpy as np

import minitorch_accel as mta
from minitorch_accel import distributed as dist
from minitorch_accel import nn, optim

STEPS, SHARE = 6, 5


def main() -> None:
    mode, path = sys.argv[1], sys.argv[2]
    dist.init(timeout=20)
    rank = dist.rank()
    rng = np.random.default_rng(3)
    data = [
        (rng.standard_normal((2 * SHARE, 4)), rng.integers(0, 3, 2 * SHARE)) for _ in range(STEPS)
    ]
    mta.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3)).to(dtype="float64")
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    start = 0
    if mode == "resume":
        state = dist.load_checkpoint(path)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        start = int(state["step"])
    trainer = dist.DistributedTrainer(model, nn.CrossEntropyLoss(), opt)
    for step in range(start, STEPS):
        x, y = data[step]
        part = slice(rank * SHARE, (rank + 1) * SHARE)
        trainer.step(mta.tensor(x[part]), mta.tensor(y[part]))
        if mode == "stop" and rank == 1 and step == 2:
            os.kill(os.getpid(), signal.SIGTERM)
        if trainer.should_stop:
            state = {"model": model.state_dict(), "optimizer": opt.state_dict(), "step": step + 1}
            trainer.stop(state, path, resume_command="mpiexec -n 2 python sigterm.py resume {path}")
    out = sys.argv[3] if mode == "resume" else path
    if rank == 0:
        np.savez(out, *[p.detach().numpy() for p in model.parameters()])


if __name__ == "__main__":
    main()
