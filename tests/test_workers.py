"""DataLoader(num_workers=N): worker processes that load in parallel, batches in order,
PyTorch's seeding (base_seed + worker_id), worker_init_fn, get_worker_info, errors
carried to the caller, and no process left behind."""

from __future__ import annotations

import multiprocessing
import os
import random
from typing import Any

import numpy as np
import pytest

from minitorch_accel.data import DataLoader, Dataset, TensorDataset, get_worker_info

pytestmark = pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="needs the fork start method"
)
FORK = "fork"


class Probe(Dataset[Any]):
    """Sample ``i`` says which process made it, with what seed, and random draws."""

    def __init__(self, n: int, barrier: Any = None, fail_at: int | None = None) -> None:
        self.n, self.barrier, self.fail_at = n, barrier, fail_at

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> Any:
        if self.barrier is not None:
            self.barrier.wait()  # passes only when every worker is loading at once
        if i == self.fail_at:
            raise KeyError(f"sample {i} is missing")
        info = get_worker_info()
        return {
            "i": i,
            "pid": os.getpid(),
            "worker": -1 if info is None else info.id,
            "seed": -1 if info is None else info.seed,
            "np": float(np.random.random()),
            "py": random.random(),
            "init": _INIT.get("value", -1),
        }


_INIT: dict[str, int] = {}


def _record_init(worker_id: int) -> None:
    _INIT["value"] = 100 + worker_id


def _epoch(loader: DataLoader) -> list[dict[str, Any]]:
    rows = []
    for batch in loader:
        for k in range(len(batch["i"])):
            rows.append(
                {key: (v[k].item() if hasattr(v[k], "item") else v[k]) for key, v in batch.items()}
            )
    return rows


def _no_children_left() -> None:
    assert multiprocessing.active_children() == []


def test_batches_in_order_and_equal_to_one_process() -> None:
    ds = TensorDataset(np.arange(37, dtype=np.float32))

    class Plain(Dataset[Any]):
        def __len__(self) -> int:
            return 37

        def __getitem__(self, i: int) -> Any:
            return ds[i][0] * 2, i

    single = [b for b in DataLoader(Plain(), batch_size=4, shuffle=True, seed=3)]
    multi = [
        b
        for b in DataLoader(
            Plain(), batch_size=4, shuffle=True, seed=3, num_workers=3, multiprocessing_context=FORK
        )
    ]
    assert len(single) == len(multi) == 10
    for (xa, ya), (xb, yb) in zip(single, multi, strict=True):
        np.testing.assert_array_equal(xa.numpy(), xb.numpy())
        np.testing.assert_array_equal(ya.numpy(), yb.numpy())
    _no_children_left()


def test_workers_load_at_the_same_time() -> None:
    ctx = multiprocessing.get_context(FORK)
    barrier = ctx.Barrier(2, timeout=30)
    loader = DataLoader(Probe(8, barrier), batch_size=2, num_workers=2, multiprocessing_context=ctx)
    rows = _epoch(loader)
    assert [r["i"] for r in rows] == list(range(8))
    pids = {r["pid"] for r in rows}
    assert len(pids) == 2 and os.getpid() not in pids
    assert [r["worker"] for r in rows] == [0, 0, 1, 1, 0, 0, 1, 1]  # round robin
    _no_children_left()


def test_seeding_follows_pytorch_and_worker_init_fn_runs() -> None:
    def make() -> DataLoader:
        return DataLoader(
            Probe(12),
            batch_size=3,
            num_workers=2,
            seed=7,
            worker_init_fn=_record_init,
            multiprocessing_context=FORK,
        )

    loader = make()
    base_seed = int(np.random.default_rng(7).integers(2**62))  # drawn as the loader does
    rows = _epoch(loader)
    for r in rows:
        assert r["seed"] == base_seed + r["worker"]
        assert r["init"] == 100 + r["worker"]
    first_of = {w: next(r for r in rows if r["worker"] == w) for w in (0, 1)}
    assert first_of[0]["np"] != first_of[1]["np"] and first_of[0]["py"] != first_of[1]["py"]
    random.seed(first_of[0]["seed"])
    assert first_of[0]["py"] == random.random()  # Python's random seeded with base_seed + id
    again = _epoch(make())
    assert [r["np"] for r in again] == [r["np"] for r in rows]  # the same seed, the same draws
    second_epoch = _epoch(loader)
    assert {r["seed"] for r in second_epoch}.isdisjoint({r["seed"] for r in rows})
    assert get_worker_info() is None
    _no_children_left()


def test_worker_error_is_raised_in_the_caller() -> None:
    loader = DataLoader(
        Probe(10, fail_at=5), batch_size=2, num_workers=2, multiprocessing_context=FORK
    )
    with pytest.raises(
        KeyError, match=r"(?s)Caught KeyError in DataLoader worker process 0.*sample 5 is missing"
    ):
        _epoch(loader)
    _no_children_left()


class Dying(Dataset[Any]):
    def __len__(self) -> int:
        return 4

    def __getitem__(self, i: int) -> Any:
        os._exit(3)


def test_worker_that_dies_is_reported() -> None:
    loader = DataLoader(Dying(), batch_size=2, num_workers=1, multiprocessing_context=FORK)
    with pytest.raises(RuntimeError, match="exited unexpectedly with exit code 3"):
        _epoch(loader)
    _no_children_left()


def test_leaving_early_stops_the_workers() -> None:
    big = Probe(400)
    loader = DataLoader(big, batch_size=2, num_workers=2, multiprocessing_context=FORK)
    for k, batch in enumerate(loader):
        # the workers are running and made this batch, so stopping them is needed
        assert len(multiprocessing.active_children()) == 2
        assert all(pid != os.getpid() for pid in batch["pid"].tolist())
        if k == 3:
            break
    _no_children_left()
    it = iter(DataLoader(big, batch_size=2, num_workers=2, multiprocessing_context=FORK))
    assert next(it)["worker"].tolist() == [0, 0]
    assert len(multiprocessing.active_children()) == 2
    it.close()  # type: ignore[attr-defined]
    _no_children_left()


def test_workers_with_device_prefetch() -> None:
    loader = DataLoader(
        Probe(6), batch_size=3, num_workers=2, device="cpu:1", multiprocessing_context=FORK
    )
    batches = list(loader)
    assert [b["i"].numpy().tolist() for b in batches] == [[0, 1, 2], [3, 4, 5]]
    assert batches[0]["i"].device.type == "cpu" and str(batches[0]["i"].device) == "cpu:1"
    _no_children_left()


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="num_workers must be an integer >= 0"):
        DataLoader(Probe(2), num_workers=-1)
    with pytest.raises(ValueError, match="prefetch_factor option could only be specified"):
        DataLoader(Probe(2), prefetch_factor=2)
    with pytest.raises(TypeError, match="numpy.random.Generator"):
        DataLoader(Probe(2), generator=42)  # type: ignore[arg-type]
