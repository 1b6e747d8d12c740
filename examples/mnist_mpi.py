"""Train LeNet data-parallel over MPI processes on the embedded MNIST sample.
==========================================================================

Teaches: data parallelism across processes (what ``torch.distributed`` and Horovod do):
every rank holds a copy of the model, trains on its own share of each batch, and one
all-reduce per step averages the gradients so that every copy takes the same step.
Prints: one line per epoch from rank 0: processes, loss, test accuracy, seconds per
step and samples per second.
Takes: about 15-20 s for the default 3 epochs with 2 processes on 2 CPU cores.

Run: ``mpiexec -n 2 python examples/mnist_mpi.py`` (add ``--device cuda`` for one GPU
per process: the r-th process of each machine uses ``cuda:r``). Each rank reads its own
part of every epoch (DistributedSampler), gradients are averaged over the ranks in one
all-reduce per step, and rank 0 evaluates, prints and writes checkpoints. ``--resume``
continues from one, with any number of processes. SIGTERM (a scheduler preempting the
job) or Ctrl-C on any rank stops every rank after the same step: rank 0 saves, and the
job exits with status 143 (130 for Ctrl-C).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import minitorch_accel as mta
from minitorch_accel import distributed as dist
from minitorch_accel import nn, optim
from minitorch_accel.data import DataLoader
from minitorch_accel.datasets import MNIST
from minitorch_accel.nn.models import LeNet


def evaluate(model: nn.Module, loader: DataLoader, device: str) -> float:
    model.eval()
    correct = total = 0
    with mta.no_grad():
        for x, y in loader:
            pred = model(x.to(device)).argmax(1).cpu()
            correct += int((pred == y).numpy().sum())
            total += len(y)
    return correct / total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=64, help="per process")
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--device", default="cpu", help="cpu, or cuda (one GPU per rank)")
    parser.add_argument("--checkpoint", type=Path, default=None)
    parser.add_argument("--resume", type=Path, default=None)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    dist.init()
    rank, size = dist.rank(), dist.world_size()
    device = f"cuda:{dist.local_rank()}" if args.device == "cuda" else args.device
    mta.manual_seed(args.seed)
    train_set, test_set = MNIST(sample=True, train=True), MNIST(sample=True, train=False)
    sampler = dist.DistributedSampler(len(train_set), seed=args.seed)
    loader = DataLoader(train_set, batch_size=args.batch_size, sampler=sampler, drop_last=True)
    model = LeNet()
    optimizer = optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, nesterov=True)
    start_epoch, skip = 0, 0
    if args.resume is not None:
        state = dist.load_checkpoint(args.resume)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        start_epoch = int(state["epoch"])
        skip = int(state["batch"]) if "batch" in state else 0  # batches already done
    trainer = dist.DistributedTrainer(model, nn.CrossEntropyLoss(), optimizer, device)
    for epoch in range(start_epoch, args.epochs):
        sampler.set_epoch(epoch)
        start, losses = time.perf_counter(), []
        for batch, (x, y) in enumerate(loader):
            if epoch == start_epoch and batch < skip:
                continue
            losses.append(trainer.step(x, y))
            if trainer.should_stop:  # SIGTERM or Ctrl-C on any rank: all stop here
                state = {
                    "model": model.state_dict(),
                    "optimizer": optimizer.state_dict(),
                    "epoch": epoch + (batch + 1 == len(loader)),
                    "batch": (batch + 1) % len(loader),
                }
                path = args.checkpoint or Path("lenet-mpi-interrupted.npz")
                trainer.stop(state, path, f"mpiexec -n {size} python {__file__} --resume {{path}}")
        seconds = time.perf_counter() - start
        if rank == 0:
            accuracy = evaluate(model, DataLoader(test_set, batch_size=500), device)
            print(
                f"epoch {epoch + 1}: {size} processes, loss {sum(losses) / len(losses):.4f}, "
                f"test accuracy {accuracy:.2%}, {seconds / len(losses):.4f} s/step, "
                f"{len(losses) * args.batch_size * size / seconds:.0f} samples/s",
                flush=True,
            )
        if args.checkpoint is not None:
            state = {
                "model": model.state_dict(),
                "optimizer": optimizer.state_dict(),
                "epoch": epoch + 1,
            }
            dist.save_checkpoint(state, args.checkpoint)


if __name__ == "__main__":
    main()
