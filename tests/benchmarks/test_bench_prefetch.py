"""benchmarks/bench_prefetch.py, the GPU session's ``prefetch`` step: fit's
batch staging on and off in turn on gpu:0 (here the simulated GPU), its JSON
and the one line the session's summary shows."""
import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_prefetch_on_and_off_are_timed_on_the_gpu_for_each_model(tmp_path):
    path = tmp_path / "prefetch.json"
    environment = dict(os.environ, MINIKERAS_SIMULATED_GPU="1")
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_prefetch.py"), "--model", "tiny", "mlp",
                             "--batch", "4", "--steps", "2", "--rounds", "2", "--device", "gpu:0", "--json", str(path)],
                            cwd=ROOT, env=environment, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    rows = json.loads(path.read_text())["rows"]
    assert [(row["model"], row["prefetch"]) for row in rows] == [("tiny", False), ("tiny", True), ("mlp", False),
                                                                 ("mlp", True)]
    assert all(row["device"] == "/device:GPU:0" and row["cpu_ms"] > 0 and row["wall_ms"] > 0 for row in rows)
    last = result.stdout.strip().splitlines()[-1]
    assert last.startswith("prefetch: tiny off ") and "; mlp off " in last and last.endswith("ms wall per step")
