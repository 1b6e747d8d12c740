"""Run under mpiexec: after broadcast_parameters every rank holds rank 0's values."""

import json
import sys

import numpy as np

import minitorch_accel as mta
from minitorch_accel import distributed as dist
from minitorch_accel import nn


def main() -> None:
    comm = dist.init(timeout=60)
    mta.manual_seed(100 + dist.rank())  # different on every rank
    model = nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6), nn.Linear(6, 2))
    dist.broadcast_parameters(model)
    mine = np.concatenate([t.detach().numpy().ravel() for t in model.state_dict().values()])
    everyone = comm.gather(mine, root=0)
    local = comm.gather(dist.local_rank(), root=0)  # one machine: local rank == rank
    if dist.rank() == 0:
        equal = all(np.array_equal(everyone[0], other) for other in everyone[1:])
        with open(sys.argv[1], "w") as f:
            json.dump({"equal": equal, "size": dist.world_size(), "local": local}, f)


if __name__ == "__main__":
    main()
