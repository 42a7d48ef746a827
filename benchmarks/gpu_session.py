"""What a 15-minute GPU lease runs: at most 9.5 minutes on one H100 or H200,
every output in one folder, a summary a person reads in a minute.

    python3 benchmarks/gpu_session.py OUT_DIR            # on the GPU machine
    python3 benchmarks/gpu_session.py OUT_DIR --dry-run  # here: the same steps on the simulated GPU

Steps, each under its own time limit (a step that runs over is stopped and
reported, the others still run):

1. ``env``: CuPy, the device, NCCL, the GPU probe (gpu_session_checks.py).
2. ``examples-cold`` / ``examples-warm``: tests/examples (every example on
   gpu:0, on tiny datasets written by the tests: the machine has no
   network) with an empty CuPy kernel cache, then again with the cache the
   first run filled: the difference is what NVRTC compilation costs a
   first run (issue 20, finding 6), and the cache stays warm for what follows.
3. ``checks``: pools, ownership, NCCL (one rank), MirroredModel on two
   logical GPUs (gpu_session_checks.py).
4. ``suite``: the GPU half of the test suite (``--device-kind gpu``),
   sharded over processes with pytest-xdist, each process growing its pool
   on demand (``TF_FORCE_GPU_ALLOW_GROWTH=true``) so they share the GPU.
5. ``bench``: benchmarks/gpu_bench.py (minikeras against PyTorch).
6. ``profile``: benchmarks/gpu_profile.py (kernels, GPU busy and host time
   per step under torch.profiler, and where minikeras's host time goes).
7. ``graph``: benchmarks/gpu_graph_check.py (jit_compile=True against eager:
   weights and step times).
7b. ``cudnn``: benchmarks/gpu_cudnn_probe.py (cuDNN's convolutions through
   ctypes, against PyTorch and minikeras's im2col + cuBLAS, per CNN layer).
7c. ``kernels``: benchmarks/gpu_kernel_floors.py (im2col, col2im, the
   multi-tensor Adam and the BatchNorm kernels at issue 33's sizes: GPU time
   against its targets and the card's copy bandwidth, each checked against
   its reference on the card; its table is in steps.log).
8. ``cnn-real``: examples/mnist_cnn.py on the real Fashion-MNIST, when its
   files were carried in ``.data/mk/datasets/fashion-mnist/`` (ignored by git;
   name ``.data`` in the device tool's ``carry``).
9. ``models``: benchmarks/gpu_models_bench.py (issue 33 §1: the toy models,
   ResNet-50 fp32 and bf16 and a Transformer encoder, minikeras eager and
   jit against torch eager, torch's CUDA graphs and Keras 3 on JAX, whose
   wheels travel in ``.card_wheels/``: benchmarks/fetch_card_wheels.sh, then
   name ``.card_wheels`` in ``carry``). Last, with what is left of the
   session's budget: its own ``--budget`` shares that among the frameworks.

The whole session fits ``--budget`` (570 s: under the device tool's
10 minutes a command): each step runs under the smaller of its limit and
what is left, and a step with under 30 s left is skipped and says so.

Outputs (few files: the device tool brings back at most 8): summary.txt,
summary.json, steps.log (every step's output), suite.xml (JUnit),
gpu_bench.json, gpu_profile.json, gpu_cudnn.json, gpu_models.json. It needs
only what the GPU image has (CuPy, PyTorch, JAX, pytest, pytest-xdist, h5py,
tqdm), the carried Keras wheels, and no network.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHECKS = ["pools", "ownership", "nccl", "mirrored"]
# Fashion-MNIST's four files, when carried to the GPU machine in this ignored
# folder (``.data/mk/datasets/fashion-mnist/``; the machine has no network).
REAL_DATA = os.path.join(ROOT, ".data", "mk")
SESSION_BUDGET = 570  # seconds: the device tool stops a command at 600
MIN_STEP_SECONDS = 30  # a step with less left is skipped
MODELS_MARGIN = 20  # seconds the models step keeps, past its own budget, to write its table
BUDGET = "{budget}"  # replaced in a step's argv by the seconds it is given, less MODELS_MARGIN
SKIPPED = "skipped (session budget)"


def steps(out, dry_run, python):
    """``[(name, argv, seconds allowed, extra environment)]``."""
    pytest = [python, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider"]
    checks = [python, os.path.join("benchmarks", "gpu_session_checks.py")]
    bench = [python, os.path.join("benchmarks", "gpu_bench.py"), "--json", os.path.join(out, "gpu_bench.json")]
    models = [python, os.path.join("benchmarks", "gpu_models_bench.py"), "--budget", BUDGET,
              "--json", os.path.join(out, "gpu_models.json")]
    if dry_run:
        simulated = {"MINIKERAS_SIMULATED_GPU": "1"}
        examples = pytest + ["tests/examples/test_examples.py", "-k", "test_help"]
        return [
            ("env", checks + ["env", "--simulated"], 60, {}),
            ("examples-cold", examples, 60, simulated),
            ("examples-warm", examples, 60, simulated),
            ("checks", checks + CHECKS + ["--simulated"], 120, {}),
            ("suite", pytest + ["tests/device/test_simulated_streams.py", "--junitxml",
                                os.path.join(out, "suite.xml")], 120, simulated),
            ("bench", bench + ["--device", "cpu", "--steps", "2", "--models", "mlp", "--runners", "minikeras"],
             120, {}),
            ("kernels", [python, os.path.join("benchmarks", "gpu_kernel_floors.py"), "--dry-run"], 60, {}),
            ("models", models + ["--small", "--steps", "2", "--models", "mlp", "transformer",
                                 "--frameworks", "minikeras", "minikeras-jit"], 120, simulated),
        ]
    workers = str(max(2, min(14, (os.cpu_count() or 4) - 2)))
    examples = pytest + ["tests/examples/test_examples.py"]
    # The examples' tests rebuild the devices between examples, which a
    # user's process never does: an array an earlier example left alive would
    # pin that example's up-front reserve. Growing on demand, they don't.
    grow = {"TF_FORCE_GPU_ALLOW_GROWTH": "true"}
    # Limits: about twice what each step took on an H200 (2026-11-26, whose
    # host is slower than the H100's), except the suite: 4,892 of its 4,948
    # tests ran in 200 s there, with 14 processes.
    planned = [
        ("env", checks + ["env"], 15, {}),
        ("examples-cold", examples, 25, grow),
        ("examples-warm", examples, 15, grow),
        ("checks", checks + CHECKS, 20, {}),
        ("suite", pytest + ["--device-kind", "gpu", "-n", workers, "--ignore=tests/examples",
                            "--junitxml", os.path.join(out, "suite.xml")], 230,
         {"TF_FORCE_GPU_ALLOW_GROWTH": "true"}),
        ("bench", bench + ["--steps", "50"], 30, {}),
        ("profile", [python, os.path.join("benchmarks", "gpu_profile.py"), "--cprofile",
                     "--json", os.path.join(out, "gpu_profile.json")], 25, {}),
        ("graph", [python, os.path.join("benchmarks", "gpu_graph_check.py")], 15, {}),
        ("cudnn", [python, os.path.join("benchmarks", "gpu_cudnn_probe.py"), "--json",
                   os.path.join(out, "gpu_cudnn.json")], 20, {}),
        ("kernels", [python, os.path.join("benchmarks", "gpu_kernel_floors.py")], 30, {}),
    ]
    if os.path.isdir(os.path.join(REAL_DATA, "datasets", "fashion-mnist")):
        # The CNN example on the real dataset, against its CPU accuracy (README: 0.9164).
        planned.append(("cnn-real", [python, os.path.join("examples", "mnist_cnn.py"), "--dataset", "fashion_mnist",
                                     "--device", "gpu:0", "--verbose", "0"], 50, {"MINIKERAS_HOME": REAL_DATA}))
    # Last, with whatever the session's budget has left (main() clamps every limit).
    planned.append(("models", models, SESSION_BUDGET, {}))  # each framework's own memory policy, as users get
    return planned


def run_step(name, argv, seconds, extra, log, cache_dir):
    """Runs one step; returns ``{"step", "status", "seconds", "detail"}``."""
    environment = dict(os.environ, PYTHONPATH=ROOT, PYTHONUNBUFFERED="1", CUPY_CACHE_DIR=cache_dir, **extra)
    if "MINIKERAS_SIMULATED_GPU" not in extra:
        environment.pop("MINIKERAS_SIMULATED_GPU", None)
    log.write(f"\n===== {name}: {' '.join(argv)} (limit {seconds} s)\n")
    log.flush()
    start = time.perf_counter()
    process = subprocess.Popen(argv, cwd=ROOT, env=environment, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    try:
        output, _ = process.communicate(timeout=seconds)
        status = "ok" if process.returncode == 0 else f"FAILED (exit {process.returncode})"
    except subprocess.TimeoutExpired:
        process.send_signal(2)  # SIGINT: pytest stops and still writes its report
        try:
            output, _ = process.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            output, _ = process.communicate()
        status = f"TIMEOUT after {seconds} s"
    elapsed = time.perf_counter() - start
    log.write(output)
    log.write(f"\n===== {name}: {status} in {elapsed:.1f} s\n")
    log.flush()
    return {"step": name, "status": status, "seconds": round(elapsed, 1), "detail": _detail(name, output)}


def _detail(name, output):
    """The line of a step's output worth reading in the summary."""
    counts = re.findall(r"^=*\s*(\d+ (?:passed|failed|error).*?) in [\d.]+s", output, re.MULTILINE)
    if counts:
        return counts[-1].strip("= ")
    if name in ("env", "checks"):
        lines = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
        return "; ".join(f"{line['check']}: {'ok' if line['ok'] else 'FAILED ' + str(line.get('error', ''))[:80]}"
                         + (f" ({line['skipped']})" if line.get("skipped") else "") for line in lines)
    lines = [line for line in output.strip().splitlines() if line.strip()]
    return lines[-1][:160] if lines else ""


def summarise(results, out, dry_run):
    cold = next((r for r in results if r["step"] == "examples-cold"), None)
    warm = next((r for r in results if r["step"] == "examples-warm"), None)
    lines = [f"minikeras GPU session{' (DRY RUN: simulated GPU)' if dry_run else ''}, "
             f"{time.strftime('%Y-%m-%d %H:%M:%S')}, total {sum(r['seconds'] for r in results):.0f} s", ""]
    lines += [f"{r['step']:<14} {r['status']:<24} {r['seconds']:>7.1f} s  {r['detail']}" for r in results]
    if cold and warm and cold["status"] == warm["status"] == "ok":
        lines += ["", f"NVRTC (cold kernel cache): examples took {cold['seconds'] - warm['seconds']:+.1f} s more "
                      f"cold ({cold['seconds']:.1f} s) than warm ({warm['seconds']:.1f} s)"]
    lines += ["", f"logs: {os.path.join(out, 'steps.log')}"]
    text = "\n".join(lines)
    with open(os.path.join(out, "summary.txt"), "w") as handle:
        handle.write(text + "\n")
    with open(os.path.join(out, "summary.json"), "w") as handle:
        json.dump({"dry_run": dry_run, "steps": results}, handle, indent=1)
    return text


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="folder for every output (created)")
    parser.add_argument("--dry-run", action="store_true", help="the same steps, small, on the simulated GPU")
    parser.add_argument("--only", nargs="+", default=None, help="run only these steps")
    parser.add_argument("--budget", type=float, default=SESSION_BUDGET,
                        help="seconds for the whole session (every step's limit is clamped to what is left)")
    args = parser.parse_args(argv)
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    # A cold NVRTC cache for examples-cold, this run's own: the suite runs a
    # dry run of this script, which once deleted a shared cache folder under
    # the suite's other processes as they compiled (23 FileNotFoundErrors on
    # an H200).
    cache_dir = tempfile.mkdtemp(prefix="minikeras_gpu_session_kernel_cache_")
    results = []
    start = time.perf_counter()
    with open(os.path.join(out, "steps.log"), "w") as log:
        for name, step_argv, limit, extra in steps(out, args.dry_run, sys.executable):
            if args.only and name not in args.only:
                continue
            seconds = int(min(limit, args.budget - (time.perf_counter() - start)))
            if seconds < MIN_STEP_SECONDS:
                result = {"step": name, "status": SKIPPED, "seconds": 0.0,
                          "detail": f"{seconds} s of the session's {args.budget:.0f} s budget left"}
            else:
                step_argv = [str(seconds - MODELS_MARGIN) if part == BUDGET else part for part in step_argv]
                result = run_step(name, step_argv, seconds, extra, log, cache_dir)
            results.append(result)
            print(f"{name}: {result['status']} in {result['seconds']} s  {result['detail']}", flush=True)
    shutil.rmtree(cache_dir, ignore_errors=True)
    print()
    print(summarise(results, out, args.dry_run))
    return 0 if all(r["status"] in ("ok", SKIPPED) for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
