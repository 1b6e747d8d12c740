"""Run under mpiexec: rank 0 and rank 1 build different models with the same total
parameter count (4 tensors vs 6). Every entry point must refuse before averaging."""

import json
import sys

import minitorch_accel as mta
from minitorch_accel import distributed as dist
from minitorch_accel import nn, optim
from minitorch_accel.distributed import comm


def make_model(same: bool) -> nn.Module:
    mta.manual_seed(0)
    if same or dist.rank() == 0:  # 4*3+3 + 3*2+2 = 23 numbers in 4 tensors
        return nn.Sequential(nn.Linear(4, 3), nn.Linear(3, 2))
    # 4*1+1 + 1*4+4 + 4*2+2 = 23 numbers in 6 tensors
    return nn.Sequential(nn.Linear(4, 1), nn.Linear(1, 4), nn.Linear(4, 2))


def main() -> None:
    mode = sys.argv[1]
    dist.init(timeout=20)
    gathers = 0
    original = comm.allgather_object

    def counting(obj):  # type: ignore[no-untyped-def]
        nonlocal gathers
        gathers += 1
        return original(obj)

    comm.allgather_object = counting
    model = make_model(same=mode == "same")
    x, y = mta.randn(6, 4), mta.tensor([0, 1, 0, 1, 1, 0])
    if mode == "broadcast":
        dist.broadcast_parameters(model)
    elif mode == "allreduce":
        nn.functional.cross_entropy(model(x), y).backward()
        dist.allreduce_gradients(model)
    else:  # "trainer" or "same"
        opt = optim.SGD(model.parameters(), lr=0.1)
        trainer = dist.DistributedTrainer(model, nn.CrossEntropyLoss(), opt)
        for _ in range(5):
            trainer.step(x, y)
            dist.allreduce_gradients(model)
    if dist.rank() == 0:
        with open(sys.argv[2], "w") as f:
            json.dump({"fingerprint_collectives": gathers}, f)
    print(f"rank {dist.rank()} finished", flush=True)


if __name__ == "__main__":
    main()
