"""benchmarks/gpu_models_bench.py (issue 33 §1) runs whole here, with tiny
shapes: on the CPU for every framework importable here (the others give one
skip line each), and on the simulated GPU for minikeras, where
``jit_compile=True`` captures; its JSON has every field the card's table needs."""
import importlib.util
import json
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "gpu_models_bench.py"
MEASURED = ("fit_ms_per_step", "samples_per_s", "latency_ms", "final_loss")


def _run(tmp_path, arguments, simulated=False):
    environment = dict(os.environ)
    environment.pop("MINIKERAS_SIMULATED_GPU", None)
    if simulated:
        environment["MINIKERAS_SIMULATED_GPU"] = "1"
    path = tmp_path / "models.json"
    result = subprocess.run([sys.executable, str(SCRIPT), "--json", str(path)] + arguments, cwd=ROOT,
                            env=environment, capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(path.read_text()), result.stdout


def _check_row(row, framework, cases):
    assert row["framework"] == framework and "error" not in row, row
    assert (row["model"], row["precision"]) in cases
    for name in MEASURED:
        assert row[name] > 0, (name, row)
    assert len(row["epoch_s"]) == 2 and min(row["epoch_s"]) > 0
    assert row["batch"] > 0 and row["steps"] == 2 and row["small"] is True and row["tf32"] is False
    assert row["parameters"] > 0 and row["version"]
    # Throughput comes from the better of the two epochs.
    assert row["fit_ms_per_step"] == pytest.approx(1e3 * min(row["epoch_s"]) / row["steps"])


def _importable(name):
    return importlib.util.find_spec(name) is not None


@pytest.mark.slow
def test_dry_run_on_the_cpu_times_every_framework_here_and_skips_the_rest(tmp_path):
    report, printed = _run(tmp_path, ["--dry-run", "--models", "mlp", "transformer",
                                      "--frameworks", "minikeras", "torch", "keras-jax", "torch-graphs"])
    assert report["benchmark"] == "gpu_models_cpu" and report["device"] == "cpu" and report["small"] is True
    assert report["protocol"] and report["machine"]["python"]
    cases = {("mlp", "fp32"), ("transformer", "bf16")}
    expected = ["minikeras"] + (["torch"] if _importable("torch") else [])
    assert sorted({row["framework"] for row in report["rows"]}) == sorted(expected)
    for framework in expected:
        rows = [row for row in report["rows"] if row["framework"] == framework]
        assert {(row["model"], row["precision"]) for row in rows} == cases
        for row in rows:
            _check_row(row, framework, cases)
            if "torch" in expected:
                assert row["vs_torch"] > 0 and row["latency_vs_torch"] > 0
    if "torch" in expected:  # the same networks: torch's trainable parameters are minikeras's, case by case
        counts = {(row["framework"], row["model"]): row["parameters"] for row in report["rows"]}
        assert all(counts["torch", model] == counts["minikeras", model] for model in ("mlp", "transformer"))
    skipped = {skip["framework"]: skip["reason"] for skip in report["skipped"]}
    assert skipped["torch-graphs"] == "CUDA graphs need a GPU"
    assert "skipped: torch-graphs, every case: CUDA graphs need a GPU" in printed
    if not _importable("jax"):
        assert skipped["keras-jax"] == "JAX is not installed (the card's image has it)"
    if not _importable("torch"):
        assert skipped["torch"] == "PyTorch is not installed"


@pytest.mark.slow
def test_on_the_simulated_gpu_jit_compile_captures_and_bf16_says_where_it_runs(tmp_path):
    report, _ = _run(tmp_path, ["--small", "--steps", "2", "--models", "mlp", "resnet50",
                                "--frameworks", "minikeras-jit"], simulated=True)
    assert report["device"] == "gpu" and report["device_name"].startswith("simulated GPU")
    rows = {(row["model"], row["precision"]): row for row in report["rows"]}
    assert set(rows) == {("mlp", "fp32"), ("resnet50", "fp32"), ("resnet50", "bf16")}
    for row in rows.values():
        _check_row(row, "minikeras-jit", set(rows))
    # fp32: after the warm-up every step is one graph launch (2 epochs of 2 steps, 2 single steps, at least).
    assert rows["mlp", "fp32"]["graph_launches"] >= 6
    assert rows["resnet50", "fp32"]["graph_launches"] >= 6
    # bf16 either captures or says why it ran eagerly: the table must not hide a fallback.
    bf16 = rows["resnet50", "bf16"]
    assert bf16["graph_launches"] >= 6 or "runs eagerly" in bf16["note"]


def test_a_spent_budget_skips_every_framework_with_a_reason(tmp_path):
    report, printed = _run(tmp_path, ["--dry-run", "--budget", "1", "--models", "mlp",
                                      "--frameworks", "minikeras", "torch"])
    assert report["rows"] == []
    assert [(skip["framework"], skip["reason"]) for skip in report["skipped"]] == [
        ("torch", "the time budget was spent"), ("minikeras", "the time budget was spent")]
    assert "skipped: minikeras, every case: the time budget was spent" in printed


def _bench_module():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        spec = importlib.util.spec_from_file_location("gpu_models_bench", SCRIPT)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))


def test_resnet50_runs_first_and_each_process_gets_its_expected_part_of_the_budget():
    bench = _bench_module()
    planned = bench.cases(("mlp", "cnn", "cifar_cnn", "transformer", "resnet50"), [False, True])
    off = [(case.model, case.precision) for case in planned if not case.tf32]
    assert off == [("resnet50", "fp32"), ("resnet50", "bf16"), ("cifar_cnn", "fp32"), ("cnn", "fp32"),
                   ("mlp", "fp32"), ("transformer", "bf16")]
    assert [case.model for case in planned if case.tf32] == ["resnet50", "cifar_cnn", "cnn", "mlp"]
    limited = bench.cases(("mlp", "resnet50"), [False, True], tf32_models=("resnet50",))
    assert [(case.model, case.precision, case.tf32) for case in limited] == [
        ("resnet50", "fp32", False), ("resnet50", "fp32", True), ("resnet50", "bf16", False), ("mlp", "fp32", False)]
    torch_seconds = bench.expected_seconds("torch", planned)
    assert bench.expected_seconds("keras-jax", planned) > bench.expected_seconds("minikeras-jit", planned) \
        > torch_seconds == bench.expected_seconds("torch-graphs", planned)
    # A card's process: its expected part of what is left, at most twice what it is expected to take.
    assert bench.process_seconds("torch", planned, 300, 4 * torch_seconds) == pytest.approx(75)
    assert bench.process_seconds("torch", planned, 10_000, torch_seconds) == 2 * torch_seconds
    # Tiny shapes: a card's guesses do not apply, the process may take its part of all that is left.
    assert bench.process_seconds("torch", planned, 10_000, 2 * torch_seconds, small=True) == pytest.approx(5_000)
