"""benchmarks/gpu_session.py: its dry run passes here, on the simulated GPU,
and the real session fits the lease (at most 8 minutes of step limits)."""
import importlib.util
import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _session():
    spec = importlib.util.spec_from_file_location("gpu_session", ROOT / "benchmarks" / "gpu_session.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_real_session_fits_eight_minutes_and_runs_the_gpu_half(tmp_path):
    planned = _session().steps(str(tmp_path), dry_run=False, python="python3")
    names = [name for name, *_ in planned]
    assert names[:10] == ["env", "examples-cold", "examples-warm", "checks", "suite", "bench", "profile", "graph",
                          "cudnn", "kernels"]
    assert names[10:] in ([], ["cnn-real"])  # the real dataset's step, when it was carried
    assert sum(seconds for _, _, seconds, _ in planned) <= 8 * 60
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
