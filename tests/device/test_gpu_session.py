"""benchmarks/gpu_session.py: its dry run passes here, on the simulated GPU,
and its two device calls fit the lease (the docstring's plan: call 1 the
models benchmark, call 2 the rest, the suite with what the others leave)."""
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


def _plan():
    spec = importlib.util.spec_from_file_location("gpu_session_plan", ROOT / "benchmarks" / "gpu_session_plan.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


DEVICE_SECONDS = 900  # the device tool's 15 minutes, the machine's start included
START_SECONDS = 120  # a start: "a minute or more"
TIMEOUT_MARGIN = 40  # timeout_s over a call's budget (the docstring's calls)


def test_the_two_calls_fit_the_lease_with_the_models_first():
    session, plan = _session(), _plan()
    assert [step.name for step in plan.card_steps(1, "python3")] == ["models"]
    models = plan.card_steps(1, "python3")[0]
    assert models.limit is plan.REST and "gpu_models_bench.py" in models.argv[1]
    assert models.argv[models.argv.index("--tf32") + 1] == "both"
    assert models.argv[models.argv.index("--budget") + 1] == plan.BUDGET
    first = models.argv.index("--models") + 1
    assert models.argv[first:] == ["resnet50", "cifar_cnn", "cnn", "mlp", "--json", plan.JSON]  # issue 33 §1's rows
    tf32 = models.argv.index("--tf32-models") + 1
    assert models.argv[tf32:tf32 + 3] == ["resnet50", "cifar_cnn", "--models"]  # the arithmetic-bound rows
    names = [step.name for step in plan.card_steps(2, "python3")]
    assert names[:11] == ["env", "kernels", "cudnn", "prefetch", "graph", "checks", "examples-cold", "suite",
                          "examples-warm", "profile", "bench"]
    assert names[11:] in ([], ["cnn-real"])  # cnn-real: when the real dataset was carried
    # Both calls' timeouts, a start and the transfers fit the 15 minutes, and no call passes 10.
    call_timeouts = [plan.CALL_BUDGETS[call] + TIMEOUT_MARGIN for call in (1, 2)]
    assert max(call_timeouts) <= 600 and START_SECONDS + sum(call_timeouts) + 20 <= DEVICE_SECONDS
    assert "timeout_s=490" in session.__doc__ and f"{plan.CALL_BUDGETS[1] + TIMEOUT_MARGIN}" == "490"


def test_the_suite_gets_what_the_steps_after_it_leave_and_runs_the_card_areas_first():
    session, plan = _session(), _plan()
    planned = plan.card_steps(2, "python3")
    index = [step.name for step in planned].index("suite")
    after = sum(step.limit for step in planned[index + 1:])
    assert session.step_seconds(planned, index, 200) == 200 - after
    assert session.step_seconds(planned, 0, 200) == planned[0].limit  # a step with its own limit
    assert session.step_seconds(planned, 0, 7) == 7  # clamped to what is left
    suite = planned[index]
    assert "--device-kind" in suite.argv and "gpu" in suite.argv and "-n" in suite.argv
    assert suite.environment == {"TF_FORCE_GPU_ALLOW_GROWTH": "true"}  # the shards share the GPU
    paths = [part for part in suite.argv if part.startswith("tests")]
    assert paths[:3] == ["tests/kernels", "tests/device", "tests/backend"]
    assert "tests/examples" not in paths and "tests/ops" in paths and "tests/test_architecture.py" in paths
    assert len(paths) == len(set(paths))  # pytest runs a path given twice once, in the first place: no doubles
    prefetch = dict((step.name, step) for step in planned)["prefetch"].argv
    assert prefetch[prefetch.index("--model") + 1:prefetch.index("--model") + 3] == ["tiny", "cnn"]
    assert prefetch[prefetch.index("--device") + 1] == "gpu:0"


def test_a_dry_run_brings_back_few_files_and_embeds_the_steps_numbers(tmp_path):
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "gpu_session.py"), str(tmp_path),
                             "--dry-run", "--call", "2", "--only", "kernels", "cnn-real"],
                            cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert sorted(path.name for path in tmp_path.iterdir()) == ["steps.log", "summary.json", "summary.txt"]
    steps = json.loads((tmp_path / "summary.json").read_text())["steps"]
    assert [(step["step"], step["status"]) for step in steps] == [("kernels", "ok"),
                                                                  ("cnn-real", "skipped (not carried)")]
    assert len(steps[0]["json"]["rows"]) == 14 and "the plan only (no GPU): 14 kernel cases" in steps[0]["detail"]
    assert "name .data in carry" in steps[1]["detail"]


def test_the_dry_run_passes_and_writes_its_summary(tmp_path):
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "gpu_session.py"), str(tmp_path),
                             "--dry-run", "--only", "checks"],
                            cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["dry_run"] and [(step["call"], step["status"]) for step in summary["steps"]] == [(2, "ok")]
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
    assert [(step["step"], step["status"]) for step in steps] == [("models", "skipped (session budget)"),
                                                                  ("env", "skipped (session budget)")]
    assert "of the call's 10 s budget left" in steps[1]["detail"]


@pytest.mark.slow
def test_the_dry_run_times_the_models_on_the_simulated_gpu(tmp_path):
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "gpu_session.py"), str(tmp_path),
                             "--dry-run", "--only", "models"],
                            cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    step = json.loads((tmp_path / "summary.json").read_text())["steps"][0]
    assert step["status"] == "ok" and "6 rows timed, 0 failed" in step["detail"]
    report = json.loads((tmp_path / "gpu_models.json").read_text())
    assert report["budget_s"] == 130 and report["tf32"] == "both"  # the step's 150 s, less the margin for its table
    assert {(row["framework"], row["model"], row["precision"], row["tf32"]) for row in report["rows"]} == {
        (framework, model, precision, tf32) for framework in ("minikeras", "minikeras-jit")
        for model, precision, tf32 in (("mlp", "fp32", False), ("mlp", "fp32", True), ("transformer", "bf16", False))}


def test_a_card_run_must_name_its_device_call(tmp_path):
    # Both calls at once would pass the device tool's 10 minutes a command.
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "gpu_session.py"), str(tmp_path)],
                            cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "--call 1 (the models) or --call 2 (the rest)" in result.stderr
    assert not (tmp_path / "steps.log").exists()
