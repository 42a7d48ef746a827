"""The benchmark a GPU user believes (issue 33 §1): minikeras against torch
and Keras 3 on JAX, from toy models to ResNet-50 and a Transformer, one card.

Models (benchmarks/gpu_models_specs.py): the MLP, Fashion CNN and CIFAR CNN of
anchors.py (fp32, batch 128); ResNet-50 (``applications.ResNet50(weights=None)``,
224x224, 1000 classes, batch 256, fp32 and mixed_bfloat16); a 6-layer
Transformer encoder (width 512, 8 heads, sequence 256, batch 32, bf16);
EfficientNetB0 (bf16, batch 256) when asked for. Frameworks, each in its own
process: ``minikeras`` (eager ``fit``), ``minikeras-jit``
(``jit_compile=True``), ``torch`` (eager: channels_last and cudnn.benchmark
for convolutions, autocast bf16 for the bf16 rows), ``torch-graphs`` (the
step as one CUDA graph), ``keras-jax`` (Keras 3 on JAX: XLA-compiled steps);
``torch-compile`` when asked for.

Protocol: synthetic data of the real shapes (random images or token ids and
random labels, uploaded batch by batch from host memory by every framework),
Adam(1e-3), sparse cross-entropy on logits. Warm-up steps, then two epochs of
``fit`` (or a plain loop), each ended by one device synchronisation: the
throughput (ms/step, samples/s) is the better epoch's; then single steps each
followed by a synchronisation: the latency is their median. TF32 is off on
every side for the fp32 rows (``CUPY_TF32=0``, torch's allow_tf32 flags,
JAX's matmul precision "float32", and ``NVIDIA_TF32_OVERRIDE=0``);
``--tf32 both`` adds the fp32 rows again with TF32 on everywhere. Each row
has its ratio to torch eager on the same case (> 1: slower than torch).

The run fits a time budget (``--budget``). Its processes run one after the
other, every framework with TF32 off (torch first: every ratio needs it),
then the TF32-on rows; each gets its part of what is left in proportion to
what it is expected to take on a card (gpu_models_specs.EXPECTED_SECONDS:
Keras on JAX's XLA compiles make its part the largest), at most twice that,
so a process that ends early leaves its time to the next ones and a short
budget shortens every framework alike. A process starts no case past its
share and is stopped at it; within it ResNet-50 runs first
(gpu_models_specs.RUN_ORDER), so a share that runs out loses the toy rows,
not ResNet-50. A framework that cannot run (not installed, no GPU) prints
one skip line, is not started again, and the others still run.

    python benchmarks/gpu_models_bench.py --json $OUT/gpu_models.json     # on the card
    python benchmarks/gpu_models_bench.py --models resnet50 --frameworks torch minikeras
    python benchmarks/gpu_models_bench.py --dry-run                         # here: tiny shapes, CPU
    MINIKERAS_SIMULATED_GPU=1 python benchmarks/gpu_models_bench.py --small --steps 2 \\
        --frameworks minikeras minikeras-jit                                # the simulated GPU

Keras travels to the card as wheels (benchmarks/fetch_card_wheels.sh writes
them to .card_wheels/, which ``--wheels`` installs into a temporary folder).
"""
import argparse
import glob
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, ROOT)  # the checkout's minikeras

from gpu_models_specs import DEFAULT_MODELS, MODELS, Case, cases, expected_seconds  # noqa: E402

FRAMEWORKS = ("torch", "minikeras", "minikeras-jit", "keras-jax", "torch-graphs", "torch-compile")
DEFAULT_FRAMEWORKS = ("torch", "minikeras", "minikeras-jit", "keras-jax", "torch-graphs")
# A process may take up to this many times its expected seconds (what it
# leaves goes to the next ones): the expectations are guesses until a card
# has run them.
SLACK = 2.0
MIN_PROCESS_SECONDS = 5  # a process with less is skipped
REFERENCE = "torch"
COLUMNS = ["model", "precision", "tf32", "framework", "batch", "fit_ms_per_step", "samples_per_s", "latency_ms",
           "vs_torch", "latency_vs_torch", "final_loss", "note"]
PROTOCOL = ("synthetic data of the real shapes, uploaded batch by batch from host memory; Adam(1e-3); "
            "warm-up, then 2 epochs each ended by one sync (throughput: the better epoch), then single "
            "synchronised steps (latency: their median); TF32 off everywhere for fp32 rows unless tf32=True")


# --------------------------------------------------------------------- worker

def worker(framework, device, case_dicts, deadline):
    """Runs ``framework``'s cases in this process, printing one ``ROW`` or
    ``SKIP`` JSON line per case; stops starting cases at ``deadline``."""
    import gpu_models_keras
    import gpu_models_torch

    kind = gpu_models_torch if framework.startswith("torch") else gpu_models_keras
    module, reason = kind.availability(framework, device)
    planned = [Case(**dict(case, sample_shape=tuple(case["sample_shape"]))) for case in case_dicts]
    if module is None:
        _emit("SKIP", dict(framework=framework, reason=reason))
        return 0
    version = kind.version(module) if kind is gpu_models_torch else kind.version(framework, module)
    for case in planned:
        row = dict(case.as_dict(), framework=framework, version=version)
        if time.time() > deadline:
            _emit("SKIP", dict(row, reason="its framework's share of the time budget was spent"))
            continue
        try:
            row.update(kind.run_case(framework, module, case, device))
        except Exception as error:  # one failing case must not hide the others
            row["error"] = f"{type(error).__name__}: {str(error)[:300]}"
        _emit("ROW", row)
    return 0


def _emit(kind, payload):
    print(f"{kind} {json.dumps(payload, default=str)}", flush=True)


# ------------------------------------------------------------------ orchestra

def worker_environment(framework, device, tf32, site):
    """The environment of one framework's process."""
    environment = dict(os.environ, PYTHONUNBUFFERED="1")
    environment["PYTHONPATH"] = os.pathsep.join(filter(None, [site, ROOT, environment.get("PYTHONPATH")]))
    environment["CUPY_TF32"] = "1" if tf32 else "0"
    if tf32:
        environment.pop("NVIDIA_TF32_OVERRIDE", None)
    else:
        environment["NVIDIA_TF32_OVERRIDE"] = "0"  # cuBLAS and cuDNN, whatever a library asks for
    if framework == "keras-jax":
        environment["KERAS_BACKEND"] = "jax"
        if device == "cpu":
            environment["JAX_PLATFORMS"] = "cpu"
    return environment


def run_framework(framework, device, planned, seconds, site):
    """One framework's process over ``planned``; returns (rows, skips)."""
    argv = [sys.executable, os.path.abspath(__file__), "--worker", framework, "--device", device,
            "--deadline", str(time.time() + max(0.0, seconds - 5)),
            "--cases", json.dumps([case.as_dict() for case in planned])]
    environment = worker_environment(framework, device, planned[0].tf32, site)
    process = subprocess.Popen(argv, cwd=ROOT, env=environment, stdout=subprocess.PIPE, text=True)
    stopped = False
    try:
        output, _ = process.communicate(timeout=max(1.0, seconds))
    except subprocess.TimeoutExpired:
        process.kill()
        output, _ = process.communicate()
        stopped = True
    rows, skips = [], []
    for line in output.splitlines():
        kind, _, payload = line.partition(" ")
        if kind in ("ROW", "SKIP") and payload.startswith("{"):
            (rows if kind == "ROW" else skips).append(json.loads(payload))
        else:
            print(line, file=sys.stderr)
    done = {(r["model"], r["precision"], r["tf32"]) for r in rows + skips if "model" in r}
    if any("model" not in s for s in skips):
        return rows, skips  # the framework cannot run here: one skip says why
    for case in planned:
        if case.key() not in done:
            reason = (f"stopped: its framework's share of the time budget ({seconds:.0f} s) ran out" if stopped
                      else f"its process ended without a result (exit {process.returncode})")
            rows.append(dict(case.as_dict(), framework=framework, error=reason))
    return rows, skips


def install_wheels(folder):
    """Installs the carried wheels of ``folder`` into a temporary folder;
    returns its path (for PYTHONPATH), or None when there are none."""
    wheels = sorted(glob.glob(os.path.join(folder, "*.whl")))
    if not wheels:
        return None
    site = tempfile.mkdtemp(prefix="gpu_models_wheels_")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile",
                    "--no-cache-dir", "--target", site] + wheels, check=True)
    return site


def add_ratios(rows):
    """``vs_torch`` / ``latency_vs_torch``: each row over torch eager's on its case."""
    reference = {(r["model"], r["precision"], r["tf32"]): r for r in rows
                 if r["framework"] == REFERENCE and "error" not in r}
    for row in rows:
        torch_row = reference.get((row["model"], row["precision"], row["tf32"]))
        if torch_row and "error" not in row:
            row["vs_torch"] = row["fit_ms_per_step"] / torch_row["fit_ms_per_step"]
            row["latency_vs_torch"] = row["latency_ms"] / torch_row["latency_ms"]
        notes = [row.get("error", "")]
        if row.get("graph_launches") is not None and row["framework"] == "minikeras-jit":
            notes.append(f"{row['graph_launches']} graph launches")
        notes += row.get("warnings", [])
        row["note"] = "; ".join(note for note in notes if note)[:160]


def device_description(device):
    """The card and its driver (nvidia-smi), or what ran instead."""
    if device == "cpu":
        return "cpu"
    if os.environ.get("MINIKERAS_SIMULATED_GPU", "").strip() not in ("", "0"):
        return "simulated GPU (minikeras.testing.sim_cupy)"
    if shutil.which("nvidia-smi"):
        result = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
                                capture_output=True, text=True)
        if result.returncode == 0 and result.stdout.strip():
            return result.stdout.strip().splitlines()[0]
    return "gpu (nvidia-smi not found)"


def process_seconds(framework, planned, left, remaining, small=False):
    """The seconds ``framework``'s process over ``planned`` may take when
    ``left`` of the budget is left and the processes still to run (this one
    included) are expected to take ``remaining``: its expected part of what
    is left, and at most SLACK times what it is expected to take on a card
    (tiny shapes, a smoke test, have no such cap: a card's guesses do not apply)."""
    expected = expected_seconds(framework, planned)
    share = left * expected / remaining if remaining > 0 else left
    return share if small else min(share, SLACK * expected)


def run(args):
    start = time.time()
    modes = {"off": [False], "on": [True], "both": [False, True]}[args.tf32]
    site = None
    wheels = args.wheels or os.path.join(ROOT, ".card_wheels")
    if "keras-jax" in args.frameworks and os.path.isdir(wheels) and importlib.util.find_spec("keras") is None:
        site = install_wheels(wheels)
    frameworks = [name for name in FRAMEWORKS if name in args.frameworks]  # torch, the reference, first
    planned_cases = cases(args.models, modes, args.small, args.steps, args.tf32_models)
    groups = [(framework, tf32, [case for case in planned_cases if case.tf32 == tf32])
              for tf32 in modes for framework in frameworks]
    groups = [group for group in groups if group[2]]
    rows, skips = [], []
    cannot_run = set()  # frameworks whose process said they cannot run here: not started again
    for index, (framework, tf32, planned) in enumerate(groups):
        if framework in cannot_run:
            continue
        remaining = sum(expected_seconds(name, later) for name, _, later in groups[index:] if name not in cannot_run)
        seconds = process_seconds(framework, planned, args.budget - (time.time() - start), remaining, args.small)
        print(f"--- {framework}{' (TF32 on)' if tf32 else ''}: {len(planned)} cases, up to {seconds:.0f} s",
              file=sys.stderr, flush=True)
        if seconds < MIN_PROCESS_SECONDS:
            skips.append(dict(framework=framework, tf32=tf32, reason="the time budget was spent"))
            continue
        began = time.time()
        framework_rows, framework_skips = run_framework(framework, args.device, planned, seconds, site)
        print(f"--- {framework}: done in {time.time() - began:.1f} s", file=sys.stderr, flush=True)
        rows += framework_rows
        skips += [skip for skip in framework_skips if skip not in skips]
        if any("model" not in skip for skip in framework_skips):
            cannot_run.add(framework)
    if site:
        shutil.rmtree(site, ignore_errors=True)
    add_ratios(rows)
    return rows, skips, time.time() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", choices=MODELS, default=list(DEFAULT_MODELS))
    parser.add_argument("--frameworks", nargs="+", choices=FRAMEWORKS, default=list(DEFAULT_FRAMEWORKS))
    parser.add_argument("--device", choices=("gpu", "cpu"), default="gpu")
    parser.add_argument("--small", action="store_true", help="tiny shapes (a smoke test of the harness)")
    parser.add_argument("--steps", type=int, default=None, help="steps per epoch (default: per model)")
    parser.add_argument("--tf32", choices=("off", "on", "both"), default="off",
                        help="fp32 rows with TF32 off (default), on, or both sets")
    parser.add_argument("--tf32-models", nargs="+", choices=MODELS, default=None,
                        help="only these models' TF32-on rows (default: every fp32 model's)")
    parser.add_argument("--budget", type=float, default=540, help="seconds for the whole run")
    parser.add_argument("--wheels", default=None, help="folder of carried wheels (default .card_wheels/)")
    parser.add_argument("--dry-run", action="store_true", help="--device cpu --small --steps 2")
    parser.add_argument("--json", default=None, help="where to write the JSON (default benchmarks/results/)")
    parser.add_argument("--worker", choices=FRAMEWORKS, help=argparse.SUPPRESS)
    parser.add_argument("--cases", help=argparse.SUPPRESS)
    parser.add_argument("--deadline", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return worker(args.worker, args.device, json.loads(args.cases), args.deadline)
    if args.dry_run:
        args.device, args.small, args.steps = "cpu", True, args.steps or 2
    rows, skips, elapsed = run(args)
    for skip in skips:
        where = f"{skip['model']} {skip['precision']}" if "model" in skip else "every case"
        print(f"skipped: {skip['framework']}{' (TF32 on)' if skip.get('tf32') else ''}, {where}: {skip['reason']}")
    from _report import report

    report(f"gpu_models_{args.device}", rows, COLUMNS, path=args.json,
           extra={"device": args.device, "device_name": device_description(args.device), "small": args.small,
                  "tf32": args.tf32, "budget_s": args.budget, "elapsed_s": round(elapsed, 1),
                  "protocol": PROTOCOL, "skipped": skips,
                  "versions": sorted({row["version"] for row in rows if row.get("version")})})
    errors = sum("error" in row for row in rows)
    print(f"gpu_models: {len(rows) - errors} rows timed, {errors} failed or stopped, {len(skips)} skip lines, "
          f"{elapsed:.0f} s of a {args.budget:.0f} s budget")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
