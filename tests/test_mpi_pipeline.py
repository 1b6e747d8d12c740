"""Pipeline stages as MPI ranks (mpiexec -n 2 and -n 3) equal one process."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent / "mpi"
ROOT = Path(__file__).parent.parent


def _mpiexec() -> str:
    pytest.importorskip("mpi4py", reason="mpi4py is not installed (pip install '.[dist]')")
    for candidate in (Path(sys.executable).parent / "mpiexec", shutil.which("mpiexec")):
        if candidate and Path(candidate).exists():
            return str(candidate)
    pytest.skip("no mpiexec found")


@pytest.mark.parametrize("schedule", ["1f1b", "gpipe"])
@pytest.mark.parametrize("ranks", [2, 3])
def test_ranks_as_stages_reproduce_one_process(ranks: int, schedule: str, tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    proc = subprocess.run(
        [
            _mpiexec(),
            "-n",
            str(ranks),
            sys.executable,
            str(HERE / "pipeline.py"),
            str(out),
            schedule,
        ],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["size"] == ranks
    assert result["param_diff"] < 1e-10  # 3 Adam steps, 12 samples in 5 uneven micro-batches
    assert result["loss_diff"] < 1e-10
    assert result["output_diff"] < 1e-10  # inference through the ranks
    # every rank holds its own layers only (3 ranks: an uneven split, 1 | 2 | 1 Linear)
    assert result["params_per_rank"] == ([4, 4] if ranks == 2 else [2, 4, 2])
    # activations forward (3 steps + 1 inference), gradients back: (12, 7) float64 each
    act = 12 * 7 * 8
    expected = [4 * act] + [7 * act] * (ranks - 2) + [3 * act]
    assert result["bytes_sent"] == expected
