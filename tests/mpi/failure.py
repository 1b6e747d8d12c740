"""Run under mpiexec: rank 1 fails (raises, dies or hangs) while rank 0 waits in a
collective. Every rank must end, with an error, within a bounded time."""

import os
import sys
import time

import numpy as np

from minitorch_accel import distributed as dist


def main() -> None:
    mode = sys.argv[1]
    dist.init(timeout=float(sys.argv[2]) if len(sys.argv) > 2 else 60)
    buffer = np.ones(4)
    dist.allreduce_array(buffer)  # everyone is up
    if dist.rank() == 1:
        if mode == "raise":
            raise RuntimeError("boom on rank 1")
        if mode == "exit":
            os._exit(7)
        if mode == "hang":
            time.sleep(600)
    dist.allreduce_array(buffer)
    print(f"rank {dist.rank()} finished", flush=True)


if __name__ == "__main__":
    main()
