"""``examples/memory_limits.py`` runs on a capped ``cpu:1``, in under 60 s."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_example_grows_the_batch_to_out_of_memory_and_tries_the_remedies(
    tmp_path: Path,
) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    png = tmp_path / "memory.png"
    args = ["--device", "cpu:1", "--limit-mib", "16", "--png", str(png)]
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "memory_limits.py"), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    rows = re.findall(r"^\s+(\d+)\s+([\d.]+) M\s+([\d.]+) M\s+yes$", out, re.M)
    assert rows, out
    for _, predicted, measured in rows:  # the estimate within 10% of the measured peak
        assert abs(float(predicted) - float(measured)) <= 0.1 * float(measured)
    assert re.search(r"^\s+\d+\s+[\d.]+ M\s+-\s+NO$", out, re.M)
    assert "OutOfMemoryError: Out of memory on cpu:1: tried to allocate" in out
    # a remedy that does not fit at the plain step's largest batch has no time ("-")
    remedies = re.findall(r"^(\S.*?)\s+(\d+)\s+(?:[\d.]+x|-)$", out, re.M)
    largest = {name: int(batch) for name, batch in remedies}
    assert set(largest) == {"plain", "accumulate 4", "checkpoint", "float16 (amp)"}
    assert largest["accumulate 4"] > largest["plain"]
    assert largest["float16 (amp)"] > largest["plain"]
    assert "np.memmap dataset" in out
    mib = re.search(r"A ([\d.]+) MiB np.memmap dataset \(the cap is 16 MiB\)", out)
    assert mib is not None and float(mib.group(1)) > 16
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert "matplotlib is not installed" in out
    else:
        assert png.stat().st_size > 0
