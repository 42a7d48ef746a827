"""examples/multi_worker_training.py under a real ``mpiexec -n 2``, on the tiny
Fashion-MNIST of conftest.py.

The workers are fresh interpreters, so a small launcher gives them what the
``tiny_datasets`` fixture gives this process (the shrunk counts and
checksums, no local copies, no network) before running the example as
``__main__``.
"""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from minikeras.datasets import fashion_mnist
from tests.distribute import multi_worker_cases as cases

REPOSITORY = Path(__file__).resolve().parents[2]
EXAMPLE = REPOSITORY / "examples" / "multi_worker_training.py"

LAUNCHER = """
import json, runpy, sys, urllib.error
from minikeras.datasets import _files, fashion_mnist
settings = json.loads(sys.argv[1])
fashion_mnist._SPLIT_SIZES = settings["sizes"]
fashion_mnist._MD5 = settings["md5"]
fashion_mnist._LOCAL_DIRS = ()
def offline(url, path):
    raise urllib.error.URLError("offline test")
_files._download = offline
sys.argv = [settings["example"]] + settings["argv"]
runpy.run_path(settings["example"], run_name="__main__")
"""


def test_two_workers_train_on_their_shards_and_print_one_global_accuracy(tiny_datasets, tmp_path):
    cases.skip_without_mpi()
    launcher = tmp_path / "launch.py"
    launcher.write_text(LAUNCHER)
    settings = {"sizes": dict(fashion_mnist._SPLIT_SIZES), "md5": dict(fashion_mnist._MD5), "example": str(EXAMPLE),
                "argv": ["--limit", "256", "--epochs", "2", "--batch-size", "16", "--verbose", "1"]}
    environment = cases.mpi_environment(OMP_NUM_THREADS="1",
                       PYTHONPATH=os.pathsep.join(filter(None, [str(REPOSITORY), os.environ.get("PYTHONPATH")])))
    done = subprocess.run([cases.mpiexec(), "-n", "2", sys.executable, str(launcher), json.dumps(settings)],
                          capture_output=True, text=True, timeout=180, env=environment, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = re.findall(r"fashion_mnist CNN on 2 workers \(global batch 32\): .*test accuracy (\d\.\d+)", done.stdout)
    assert len(lines) == 1  # worker 0 alone prints
    assert float(lines[0]) > 0.3  # the tiny images are learnable: far above chance (0.1)
    assert done.stdout.count("Epoch 1/2\n") == 1  # one progress display
