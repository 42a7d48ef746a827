"""benchmarks/gpu_session.py: its dry run passes here, on the simulated GPU,
and the real session fits the lease (at most 8 minutes of step limits, then
the models benchmark within a 570 s budget)."""
import importlib.util
import json
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _session():
    spec = importlib.util.spec_from_file_location("gpu_session", ROOT / "benchmarks" / "gpu_session.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_real_session_fits_eight_minutes_and_runs_the_gpu_half(tmp_path):
    session = _session()
    planned = session.steps(str(tmp_path), dry_run=False, python="python3")
    names = [name for name, *_ in planned]
    assert names[:10] == ["env", "examples-cold", "examples-warm", "checks", "suite", "bench", "profile", "graph",
                          "cudnn", "kernels"]
    assert names[10:] in (["models"], ["cnn-real", "models"])  # cnn-real: when the real dataset was carried
    assert sum(seconds for name, _, seconds, _ in planned if name != "models") <= 8 * 60
    # The models benchmark comes last and gets what is left of a budget under the device tool's 600 s.
    assert session.SESSION_BUDGET <= 600 - 30
    models = planned[-1][1]
    assert models[models.index("--budget") + 1] == session.BUDGET and "gpu_models_bench.py" in models[1]
    suite = dict((name, (argv, extra)) for name, argv, _, extra in planned)["suite"]
    assert "--device-kind" in suite[0] and "gpu" in suite[0] and "-n" in suite[0]
    assert suite[1] == {"TF_FORCE_GPU_ALLOW_GROWTH": "true"}  # the shards share the GPU


def test_the_dry_run_passes_and_writes_its_summary(tmp_path):
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "gpu_session.py"), str(tmp_path),
                             "--dry-run", "--only", "checks"],
                            cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["dry_run"] and [step["status"] for step in summary["steps"]] == ["ok"]
    checks = summary["steps"][0]["detail"]
    for name in ("ownership: ok", "nccl: ok", "mirrored: ok"):
        assert name in checks
    assert "DRY RUN" in (tmp_path / "summary.txt").read_text()


def test_a_spent_session_budget_skips_steps_and_says_so(tmp_path):
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "gpu_session.py"), str(tmp_path),
                             "--dry-run", "--only", "env", "models", "--budget", "10"],
                            cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    steps = json.loads((tmp_path / "summary.json").read_text())["steps"]
    assert [(step["step"], step["status"]) for step in steps] == [("env", "skipped (session budget)"),
                                                                  ("models", "skipped (session budget)")]
    assert "of the session's 10 s budget left" in steps[0]["detail"]


@pytest.mark.slow
def test_the_dry_run_times_the_models_on_the_simulated_gpu(tmp_path):
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "gpu_session.py"), str(tmp_path),
                             "--dry-run", "--only", "models"],
                            cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    step = json.loads((tmp_path / "summary.json").read_text())["steps"][0]
    assert step["status"] == "ok" and "4 rows timed, 0 failed" in step["detail"]
    report = json.loads((tmp_path / "gpu_models.json").read_text())
    assert report["budget_s"] == 100  # the step's 120 s, less the margin for its table
    assert {(row["framework"], row["model"]) for row in report["rows"]} == {
        (framework, model) for framework in ("minikeras", "minikeras-jit") for model in ("mlp", "transformer")}
