"""The package's layers (``.importlinter``): every module is placed, and the contracts hold."""

from __future__ import annotations

import configparser
import pathlib
import shutil
import subprocess
import sys

import pytest

import minitorch_accel

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = pathlib.Path(minitorch_accel.__file__).parent


def _placed() -> set[str]:
    config = configparser.ConfigParser()
    config.read(ROOT / ".importlinter")
    names: set[str] = set()
    for layer in config["importlinter:contract:layers"]["layers"].split("\n"):
        for part in layer.replace("|", ":").split(":"):
            if part.strip():
                names.add(part.strip())
    for module in config["importlinter:contract:sim"]["source_modules"].split():
        names.add(module.removeprefix("minitorch_accel."))
    return names


def test_every_module_of_the_package_has_a_layer() -> None:
    placed = _placed()
    unplaced = []
    for path in sorted(PACKAGE.iterdir()):
        if path.name.startswith("_") and path.name != "__main__.py":
            continue
        if path.suffix == ".py" or (path.is_dir() and (path / "__init__.py").exists()):
            name = path.stem
            inside = {p.split(".", 1)[1] for p in placed if p.startswith(name + ".")}
            if name in placed:
                continue
            if inside:  # a package placed module by module: each of its modules must be
                for sub in sorted(path.glob("*.py")):
                    if sub.stem != "__init__" and sub.stem not in inside:
                        unplaced.append(f"{name}.{sub.stem}")
                continue
            unplaced.append(name)
    assert not unplaced, f"place these modules in .importlinter's layers: {unplaced}"


def test_the_layer_contracts_hold() -> None:
    pytest.importorskip("importlinter")
    exe = shutil.which("lint-imports") or str(
        pathlib.Path(sys.executable).with_name("lint-imports")
    )
    done = subprocess.run([exe], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
