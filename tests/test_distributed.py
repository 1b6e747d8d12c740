"""Data parallel over MPI: sampler, packing, and real multi-process runs under mpiexec."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import minitorch_accel as mta
from minitorch_accel.distributed import DistributedSampler, pack, unpack

HERE = Path(__file__).parent / "mpi"
ROOT = Path(__file__).parent.parent


def _mpiexec() -> str:
    pytest.importorskip("mpi4py", reason="mpi4py is not installed (pip install '.[dist]')")
    candidates: list[Path | str | None] = [
        Path(sys.executable).parent / "mpiexec",
        shutil.which("mpiexec"),
    ]
    for c in candidates:
        if c and Path(c).exists():
            return str(c)
    pytest.skip("no mpiexec found")


def _run(
    n: int, script: str, *args: str, timeout: float = 120, abort_log: Path | None = None
) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    if abort_log is not None:
        env["MINITORCH_ACCEL_ABORT_LOG"] = str(abort_log)
    return subprocess.run(
        [_mpiexec(), "-n", str(n), sys.executable, str(HERE / script), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


@pytest.mark.parametrize("n, replicas", [(10, 3), (12, 4), (7, 2), (5, 5)])
@pytest.mark.parametrize("shuffle", [False, True])
def test_sampler_shards_are_disjoint_and_cover_the_epoch(
    n: int, replicas: int, shuffle: bool
) -> None:
    shards = [
        DistributedSampler(
            n, num_replicas=replicas, rank=r, shuffle=shuffle, seed=3, drop_last=True
        )
        for r in range(replicas)
    ]
    seen = [set(s) for s in shards]
    assert all(len(s) == n // replicas for s in shards)
    for i in range(replicas):
        for j in range(i + 1, replicas):
            assert not seen[i] & seen[j]
    padded = [DistributedSampler(n, replicas, r, shuffle=shuffle, seed=3) for r in range(replicas)]
    union = set().union(*[set(s) for s in padded])
    assert union == set(range(n))
    assert len({len(s) for s in padded}) == 1


def test_sampler_is_reproducible_and_changes_with_epoch() -> None:
    a = DistributedSampler(100, 2, 0, seed=7)
    b = DistributedSampler(100, 2, 0, seed=7)
    assert list(a) == list(b)
    first = list(a)
    a.set_epoch(1)
    assert list(a) != first
    with pytest.raises(ValueError, match="rank 2 is not in"):
        DistributedSampler(10, num_replicas=2, rank=2)


@pytest.mark.parametrize("n, replicas, drop_last", [(10, 3, False), (10, 3, True), (7, 4, False)])
def test_sampler_is_a_sampler_with_pytorchs_arguments_and_split(
    n: int, replicas: int, drop_last: bool
) -> None:
    """A :class:`~minitorch_accel.data.Sampler` a DataLoader takes, built from the
    dataset itself (``dataset=`` as PyTorch names it); unshuffled, each rank's indices
    are PyTorch's (its shuffled order comes from another generator)."""
    from minitorch_accel.data import DataLoader, Sampler, TensorDataset

    data = TensorDataset(mta.arange(n))
    shards = [
        DistributedSampler(
            dataset=data, num_replicas=replicas, rank=r, shuffle=False, drop_last=drop_last
        )
        for r in range(replicas)
    ]
    assert all(isinstance(s, Sampler) for s in shards)
    for shard in shards:
        loader = DataLoader(data, batch_size=2, sampler=shard)
        got = [int(v) for (batch,) in loader for v in batch.tolist()]
        assert got == list(shard) and len(loader) == -(-len(shard) // 2)
    pytest.importorskip("torch")
    from torch.utils.data.distributed import DistributedSampler as TorchSampler

    for r, shard in enumerate(shards):
        theirs: Any = TorchSampler(
            list(range(n)), num_replicas=replicas, rank=r, shuffle=False, drop_last=drop_last
        )
        assert list(shard) == list(theirs) and len(shard) == len(theirs)


def test_pack_unpack_round_trip() -> None:
    arrays = [np.arange(6.0).reshape(2, 3), np.ones(4), np.full((1, 1, 2), 7.0)]
    flat = pack(np, arrays, extra=(5.0, 9.0))
    assert flat.shape == (14,)
    assert flat[-2:].tolist() == [5.0, 9.0]
    for original, view in zip(arrays, unpack(flat, [a.shape for a in arrays]), strict=True):
        np.testing.assert_array_equal(original, view)


@pytest.mark.slow
@pytest.mark.parametrize("ranks", [2, 3])
def test_ranks_reproduce_one_process_on_the_union_of_batches(ranks: int, tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    proc = _run(ranks, "equivalence.py", str(out))
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["size"] == ranks
    assert result["param_diff"] < 1e-10
    assert result["loss_diff"] < 1e-10


@pytest.mark.slow
@pytest.mark.parametrize("ranks", [2, 3])
def test_broadcast_makes_all_ranks_equal(ranks: int, tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    proc = _run(ranks, "broadcast.py", str(out))
    assert proc.returncode == 0, proc.stderr[-3000:]
    expected = {"equal": True, "size": ranks, "local": list(range(ranks))}
    assert json.loads(out.read_text()) == expected


@pytest.mark.slow
@pytest.mark.parametrize(
    "mode, timeout, expected",
    [
        ("raise", "20", "boom on rank 1"),
        ("exit", "20", ""),
        ("hang", "3", "did not finish within 3 s"),
    ],
)
def test_a_failing_rank_ends_every_rank(
    mode: str, timeout: str, expected: str, tmp_path: Path
) -> None:
    log = tmp_path / "abort.log"
    start = time.monotonic()
    proc = _run(2, "failure.py", mode, timeout, timeout=150, abort_log=log)
    elapsed = time.monotonic() - start
    assert proc.returncode != 0
    assert "rank 0 finished" not in proc.stdout
    if expected:  # the reason is printed, and kept in the abort log even if the launcher
        assert expected in log.read_text()  # drops the output of a job it tears down
    # Bounded: MPI_Abort ends the job at once; failing that, the collective deadline
    # (20 s here) does. The margin covers starting Python twice on a loaded machine.
    assert elapsed < 90


def _run_bounded(
    n: int, script: str, *args: str, bound: float = 30, env_extra: dict[str, str] | None = None
) -> tuple[subprocess.CompletedProcess[str], float]:
    """Run ``script`` on ``n`` ranks; kill the whole process group if it outlives
    ``bound`` seconds (so that a hang fails the test instead of hanging it)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1", **(env_extra or {}))
    command = [_mpiexec(), "-n", str(n), sys.executable, str(HERE / script), *args]
    start = time.monotonic()
    proc = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=bound)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"the MPI job still ran after {bound:g} s:\n{err[-3000:]}")
    return subprocess.CompletedProcess(command, proc.returncode, out, err), time.monotonic() - start


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["hang", "raise"])
def test_an_unwritable_abort_log_still_aborts_the_job(mode: str, tmp_path: Path) -> None:
    # The log's folder does not exist: opening it fails. The abort must happen anyway
    # (it used to kill the watchdog thread, and a hung rank then hung the job forever).
    log = tmp_path / "missing-folder" / "abort.log"
    env = {"MINITORCH_ACCEL_ABORT_LOG": str(log)}
    proc, elapsed = _run_bounded(2, "failure.py", mode, "3", env_extra=env)
    assert proc.returncode != 0
    assert elapsed < 30
    assert "rank 0 finished" not in proc.stdout
    expected = "did not finish within 3 s" if mode == "hang" else "boom on rank 1"
    assert expected in proc.stderr
    assert "could not write MINITORCH_ACCEL_ABORT_LOG" in proc.stderr


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["trainer", "broadcast", "allreduce"])
def test_ranks_with_different_models_are_refused(mode: str, tmp_path: Path) -> None:
    # Same total size (23 numbers), 4 tensors on rank 0 and 6 on rank 1: flat buffers of
    # equal length used to be averaged without any error.
    proc, elapsed = _run_bounded(2, "mismatch.py", mode, str(tmp_path / "out.json"))
    assert proc.returncode != 0
    assert elapsed < 30
    assert "finished" not in proc.stdout
    assert "the ranks' models differ" in proc.stderr
    assert "parameter '0.weight' is float32 (3, 4) on rank 0 but float32 (1, 4) on rank 1" in (
        proc.stderr
    )


@pytest.mark.slow
def test_the_model_check_runs_once_per_model(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    proc, _ = _run_bounded(2, "mismatch.py", "same", str(out))
    assert proc.returncode == 0, proc.stderr[-3000:]
    # construction checks once; five steps and five allreduce_gradients reuse it
    assert json.loads(out.read_text()) == {"fingerprint_collectives": 1}


@pytest.mark.slow
def test_sigterm_on_one_rank_stops_every_rank_at_the_same_step(tmp_path: Path) -> None:
    full, ckpt, resumed = tmp_path / "full.npz", tmp_path / "stop.ckpt", tmp_path / "resumed.npz"
    proc, _ = _run_bounded(2, "sigterm.py", "full", str(full))
    assert proc.returncode == 0, proc.stderr[-3000:]
    # Rank 1 alone receives SIGTERM after step 3; it used to die with no checkpoint.
    proc, elapsed = _run_bounded(2, "sigterm.py", "stop", str(ckpt))
    assert proc.returncode == 143, proc.stderr[-3000:]
    assert elapsed < 30
    assert "[rank 1] SIGTERM: every rank stops after the next step" in proc.stderr
    assert "Training stopped by SIGTERM after step 4 on every rank" in proc.stderr
    assert f"Resume with: mpiexec -n 2 python sigterm.py resume {ckpt}" in proc.stderr
    from minitorch_accel.serialization import load

    assert int(load(ckpt)["step"]) == 4
    proc, _ = _run_bounded(2, "sigterm.py", "resume", str(ckpt), str(resumed))
    assert proc.returncode == 0, proc.stderr[-3000:]
    with np.load(full) as a, np.load(resumed) as b:
        assert a.files == b.files
        for name in a.files:
            np.testing.assert_array_equal(a[name], b[name])


@pytest.mark.slow
@pytest.mark.parametrize("first, second", [(2, 3), (3, 2)])
def test_checkpoint_by_rank_0_resumes_on_another_world_size(
    first: int, second: int, tmp_path: Path
) -> None:
    checkpoint, out = tmp_path / "state.ckpt", tmp_path / "result.json"
    proc = _run(first, "resume.py", "first", str(checkpoint), str(out))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert checkpoint.exists() and not list(tmp_path.glob("*.tmp*"))
    proc = _run(second, "resume.py", "second", str(checkpoint), str(out))
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["size"] == second
    assert result["param_diff"] < 1e-10


def test_first_difference_names_the_tensor_and_the_ranks() -> None:
    from minitorch_accel import nn
    from minitorch_accel.distributed.fingerprint import describe, first_difference

    four = describe(nn.Sequential(nn.Linear(4, 3), nn.Linear(3, 2)))
    six = describe(nn.Sequential(nn.Linear(4, 3), nn.Linear(3, 2), nn.Linear(2, 2)))
    assert first_difference(four, six, 0, 1) == (
        "rank 0 has 4 tensors and rank 1 has 6; the first one only rank 1 has is "
        "parameter '2.weight'"
    )
    double = describe(nn.Linear(3, 2).to(dtype="float64"))
    assert first_difference(describe(nn.Linear(3, 2)), double, 0, 3) == (
        "parameter 'weight' is float32 (2, 3) on rank 0 but float64 (2, 3) on rank 3"
    )
    renamed = [("buffer 'w'", (2, 3), "float32")] + double[1:]
    assert first_difference(double, renamed, 1, 0).startswith(
        "rank 1 has parameter 'weight' where rank 0 has buffer 'w'"
    )
