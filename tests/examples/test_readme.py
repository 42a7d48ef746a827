"""Every ```python block of README.md runs as written (issue 19).

Each block runs as a script in its own fresh interpreter (a block may
configure devices, which is allowed only before their first use), in an
empty working folder, through ``_readme_runner.py``. A block that loads
Fashion-MNIST gets the tiny Fashion-MNIST files of conftest.py (the real
format, 320 training and 288 test images), as the example smoke tests do:
the real dataset cannot be downloaded in CI and training on all of it takes
minutes, and with the tiny files the block's code runs unchanged, end to
end, loader checks included. Nothing in README is marked to be skipped.
"""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.examples.conftest import tiny_dataset_settings
from minikeras.datasets import cifar10, fashion_mnist, mnist

REPOSITORY = Path(__file__).resolve().parents[2]
RUNNER = Path(__file__).with_name("_readme_runner.py")


def python_blocks():
    """``(first line number, code)`` of every ```python block in README.md."""
    text = (REPOSITORY / "README.md").read_text()
    blocks = []
    for match in re.finditer(r"^```python\n(.*?)^```", text, flags=re.S | re.M):
        blocks.append((text[:match.start()].count("\n") + 2, match.group(1)))
    return blocks


BLOCKS = python_blocks()


def test_readme_has_python_blocks():
    assert len(BLOCKS) >= 4


@pytest.mark.parametrize("line, code", BLOCKS, ids=[f"README.md:{line}" for line, _ in BLOCKS])
def test_readme_block_runs(line, code, _tiny_dataset_home, tmp_path):
    folder = _tiny_dataset_home / "datasets"
    settings = [[module, attribute, value] for (module, attribute), value in tiny_dataset_settings(folder).items()]
    settings += [[mnist.__name__, "_LOCAL_COPIES", []], [fashion_mnist.__name__, "_LOCAL_DIRS", []],
                 [cifar10.__name__, "_LOCAL_COPIES", []]]
    (tmp_path / "settings.json").write_text(json.dumps(settings))
    block = tmp_path / f"readme_line_{line}.py"
    block.write_text(code)
    work = tmp_path / "work"
    work.mkdir()
    env = dict(os.environ, PYTHONPATH=str(REPOSITORY), MINIKERAS_HOME=str(_tiny_dataset_home))
    done = subprocess.run([sys.executable, str(RUNNER), str(tmp_path / "settings.json"), str(block)], cwd=work,
                          env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, f"README.md block at line {line} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
