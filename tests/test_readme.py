"""The README's example runs as shown, and its set-up commands are the ones CI runs."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README.read_text(), flags=re.S)


def test_the_readme_example_runs(capsys: object) -> None:
    (example,) = _blocks("python")
    namespace: dict[str, object] = {}
    exec(compile(example, str(README), "exec"), namespace)
    mta = namespace["mta"]
    assert namespace["w"].grad.shape == (3, 1)  # type: ignore[attr-defined]
    assert mta.backends.transfer_stats.host_to_device >= 64 * 3 * 4  # type: ignore[attr-defined]


def test_the_readme_has_the_two_ci_commands() -> None:
    text = README.read_text()
    for marker in ("<!-- ci:main-job -->", "<!-- ci:tests -->"):
        after = text.split(marker, 1)[1]
        command = re.search(r"```bash\n(.*?)```", after, flags=re.S)
        assert command is not None and "pip install" in command.group(1)
    main_job = text.split("<!-- ci:main-job -->", 1)[1]
    assert "examples/mnist_cnn.py" in main_job.split("```")[1]
