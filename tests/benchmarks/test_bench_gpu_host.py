"""benchmarks/bench_gpu_host.py (issue 33 §5) runs whole on the simulated GPU, for the MLP at
batch 16: its counts add up, and a training step makes the GPU current a few times, not once
per op (run_train_step holds one activation: models/steps.py)."""
import json
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "bench_gpu_host.py"


@pytest.mark.cpu_only(reason="the script runs the simulated GPU in its own process whatever the run's device: "
                             "once per CI run")
def test_bench_gpu_host_counts_one_mlp_step(tmp_path):
    environment = dict(os.environ, MINIKERAS_SIMULATED_GPU="1")
    path = tmp_path / "gpu_host.json"
    result = subprocess.run([sys.executable, str(SCRIPT), "--models", "mlp", "--batches", "16", "--steps", "1",
                             "--top", "5", "--json", str(path)], cwd=ROOT, env=environment, capture_output=True,
                            text=True, timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    (row,) = json.loads(path.read_text())["rows"]
    assert (row["model"], row["batch"]) == ("mlp", 16)
    # Dense(512) + Dense(256) + Dense(10): 3 forward and 5 backward products on cuBLAS; every fused kernel
    # (bias + ReLU, the loss, Adam's one update) is one launch among the step's.
    assert row["cublas"] == 8 and 0 < row["fused"] < row["launches"]
    assert 0 < row["ref_calls"] < row["mk_calls"] and row["sim_calls"] > row["mk_calls"]
    assert row["mk_per_launch"] == round((row["mk_calls"] - row["ref_calls"]) / row["launches"], 1)
    assert row["contexts"] <= 4  # the step's activation, the logs' reads (it was one per op: 14)
    assert len(row["top_functions"]) == 5 and "mlp/16" in result.stdout
