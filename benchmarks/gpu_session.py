"""What a 15-minute GPU lease runs (issue 33 on an H100 or H200): two device
calls, every output of a call in one folder, a summary a person reads in a
minute.

**What the lead types** (the plan for the whole 15 minutes of device time;
the machine's start, the transfers and any idle wait count too):

0. Here, once, before the lease: ``benchmarks/fetch_card_wheels.sh`` (Keras
   3.15, namex, optree for CPython 3.12 into the ignored ``.card_wheels/``,
   ~3 MB; it checks the tree plus the wheels stay under the tool's 64 MiB).
1. Call 1, the models of issue 33 §1 (starts the machine: 1-2 minutes):
   ``run(command="PYTHONUNBUFFERED=1 python3 benchmarks/gpu_session.py $OUT --call 1",
   carry=[".card_wheels"], timeout_s=490)``.
   It runs ``gpu_models_bench.py --tf32 both`` within 450 s; gpu_models.json
   and summary.txt come back.
2. Call 2, at once (the machine stays warm 30 s after a call; a new start
   costs 1-2 minutes more), with B = the reply's ``lease.budget_left_s`` - 90,
   at most 540 (about 250):
   ``run(command="PYTHONUNBUFFERED=1 python3 benchmarks/gpu_session.py $OUT --call 2 --budget B",
   timeout_s=B + 40)``. If the reply said ``warm: false``, take B =
   budget_left_s - 180 (a fresh start), and skip call 2 under 240 s left.
3. ``give_back`` at once.

The arithmetic: 900 s = start (60-120) + call 1 (~455, at most 490) +
transfers and the lead's turn (~25) + call 2 (~B, at most B + 40): with
B = budget_left_s - 90, >= 25 s stay spare even if call 2 meets its
timeout (a session whose time runs out mid-call loses the call's files). Call 1 first: the §1
table is what the issue asks of a card, and a fixed budget guarantees it;
call 2 takes what the start left. If a call fails to start, ``status``
says what is left: run call 1 again only with >= 8 minutes left, else call 2.

Steps (benchmarks/gpu_session_plan.py), each under its own time limit (a
step that runs over is stopped and reported, the others still run), in
priority order, each call's budget shared as the limits say:

Call 1:

* ``models``: benchmarks/gpu_models_bench.py (issue 33 §1): ResNet-50 fp32
  and mixed_bfloat16 (224x224, batch 256), the CIFAR CNN, Fashion CNN and
  MLP (fp32, batch 128); minikeras eager and ``jit_compile=True``, torch
  eager (the reference of every ratio) and its CUDA graphs, Keras 3 on JAX
  (wheels from ``.card_wheels/``); TF32 off, then ResNet-50's and the CIFAR
  CNN's fp32 rows with TF32 on (the MLP's and Fashion CNN's steps are
  host-bound on a card). Each framework's process gets its part of the
  budget in proportion to what it is expected to take (at most twice that),
  ResNet-50 first within each (gpu_models_bench.py's docstring): a short
  budget cuts the toy rows, not ResNet-50. Expected: ~590 s of work for
  430 s, so expect the toy rows of some frameworks cut (call 2's ``bench``
  times them for minikeras and torch); the Transformer is left out.

Call 2:

* ``env``: CuPy, the device, NCCL, the GPU probe (gpu_session_checks.py).
* ``kernels``: benchmarks/gpu_kernel_floors.py (issue 33 §2: im2col, col2im,
  the multi-tensor Adam and BatchNorm kernels, GPU time against the targets
  and the card's copy bandwidth, each checked against its reference).
* ``cudnn``: benchmarks/gpu_cudnn_probe.py (issue 33 §3: cuDNN's
  convolutions through ctypes, against PyTorch and im2col + cuBLAS).
* ``prefetch``: benchmarks/bench_prefetch.py (issue 35: fit's batch staging
  through pinned buffers on a copy stream, on and off in turn, the tiny
  model and a small CNN, batch 128, on gpu:0; its last line sums it up).
* ``graph``: benchmarks/gpu_graph_check.py (jit_compile=True against eager:
  weights and step times).
* ``checks``: pools, ownership, NCCL (one rank), MirroredModel on two
  logical GPUs (gpu_session_checks.py).
* ``examples-cold``: tests/examples (every example on gpu:0, tiny datasets
  written by the tests: no network) with an empty CuPy kernel cache.
* ``suite``: the GPU half of the test suite (``--device-kind gpu``), sharded
  over processes with pytest-xdist, growing memory on demand
  (``TF_FORCE_GPU_ALLOW_GROWTH=true``); the directories never run on a card
  first (gpu_session_plan.SUITE_FIRST). It gets what is left less the limits
  of the three steps after it: ~6,900 tests need ~5 minutes, so a short
  call runs the first ones and the JUnit file says which.
* ``examples-warm``: the examples again with the cache the first run filled
  (the difference is NVRTC's cost to a first run, issue 20 finding 6).
* ``profile``: benchmarks/gpu_profile.py (kernels, GPU busy and host time per
  step under torch.profiler, and where minikeras's host time goes).
* ``bench``: benchmarks/gpu_bench.py (the toy models against PyTorch, and
  minikeras with ``MINIKERAS_CUDNN=1``).
* ``cnn-real``: examples/mnist_cnn.py on the real Fashion-MNIST, only when
  its files were carried in ``.data/mk/datasets/fashion-mnist/`` (name
  ``.data`` in ``carry``, +30 MB); else its line says it was not carried.

    python3 benchmarks/gpu_session.py OUT_DIR --call 1            # on the GPU machine
    python3 benchmarks/gpu_session.py OUT_DIR --dry-run           # here: both calls, small, simulated GPU

A call's steps fit its ``--budget``: each runs under the smaller of its
limit and what is left, and a step with under 30 s left is skipped and says
so. Outputs, at most 5 files (the tool brings back 8): summary.txt,
summary.json (every step's status and line, and the numbers of the steps
that write JSON), steps.log (every step's output), suite.xml (JUnit),
gpu_models.json. It needs only what the GPU image has (CuPy, PyTorch, JAX,
pytest, pytest-xdist, h5py, tqdm), the carried Keras wheels, and no network.
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import gpu_session_plan as plan  # noqa: E402

ROOT = plan.ROOT
MIN_STEP_SECONDS = 30  # a step with less left is skipped
DRY_BUDGET = 600  # seconds per call in a dry run (this machine is slower and shared)
KEPT = ("gpu_models.json", "suite.xml")  # written to the output folder; other steps' JSON goes in summary.json
SKIPPED = "skipped (session budget)"
NOT_CARRIED = "skipped (not carried)"


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
    lines = [line for line in output.strip().splitlines() if line.strip() and not line.startswith("wrote ")]
    return lines[-1][:200] if lines else ""


def _json_detail(name, numbers, fallback):
    """A step's line from the numbers it wrote (its table is in steps.log)."""
    rows = numbers.get("rows") or []
    if name == "kernels" and rows and "gpu_us" in rows[0]:
        targeted = [row for row in rows if row.get("target_us") and row.get("gpu_us") is not None]
        over = [row["kernel"] for row in targeted if row["gpu_us"] > row["target_us"]]
        return (f"{len(rows)} rows, {len(targeted) - len(over)} of {len(targeted)} within their targets"
                + (f" (over: {', '.join(over)})" if over else ""))
    if name == "kernels":
        return f"the plan only (no GPU): {len(rows)} kernel cases, their bytes and floors at 3,000 GB/s"
    if name == "graph" and rows:
        return "; ".join(f"{row['model']} jit {row['speedup']:.2f}x eager, |dw| {row['max_weight_difference']:.1e}"
                         + (f", FELL BACK: {row['fallback']}" if row.get("fallback") else "") for row in rows)
    if name == "bench" and rows:
        return "; ".join(f"{row['model']} {row['runner']} {row['median_step_ms']:.2f} ms" for row in rows
                         if row.get("median_step_ms") is not None)[:300]
    return fallback


def step_seconds(planned, index, left):
    """Step ``index``'s seconds when ``left`` of its call's budget is left: its
    limit, or for ``REST`` what is left less the limits of the steps after it."""
    step = planned[index]
    own = step.limit if step.limit is not plan.REST else \
        left - sum(later.limit or 0 for later in planned[index + 1:] if later.argv)
    return int(min(own, left))


def run_call(call, args, log, cache_dir, scratch):
    """Runs call ``call``'s steps within its budget; returns their results."""
    budget = args.budget or (DRY_BUDGET if args.dry_run else plan.CALL_BUDGETS[call])
    planned = plan.steps(call, args.dry_run, sys.executable)
    if call == 2 and not any(step.name == "cnn-real" for step in planned):
        planned.append(plan.Step("cnn-real", None, 0, {}, None))  # says why it did not run
    results = []
    start = time.perf_counter()
    for index, step in enumerate(planned):
        if args.only and step.name not in args.only:
            continue
        seconds = step_seconds(planned, index, budget - (time.perf_counter() - start))
        if step.argv is None:
            result = {"step": step.name, "status": NOT_CARRIED, "seconds": 0.0,
                      "detail": "a card's step: real Fashion-MNIST epochs" if args.dry_run and plan.real_data_carried()
                      else "Fashion-MNIST's files are not in .data/mk/datasets/fashion-mnist/ (name .data in carry)"}
        elif seconds < MIN_STEP_SECONDS:
            result = {"step": step.name, "status": SKIPPED, "seconds": 0.0,
                      "detail": f"{seconds} s of the call's {budget:.0f} s budget left"}
        else:
            json_path = os.path.join(args.out if step.json in KEPT else scratch, step.json or "none")
            argv = [json_path if part == plan.JSON else str(seconds - plan.MARGIN) if part == plan.BUDGET else part
                    for part in step.argv]
            result = run_step(step.name, argv, seconds, step.environment, log, cache_dir)
            if step.json and step.json not in KEPT and os.path.exists(json_path):
                with open(json_path) as handle:
                    result["json"] = json.load(handle)
                os.remove(json_path)
                result["detail"] = _json_detail(step.name, result["json"], result["detail"])
        result["call"] = call
        results.append(result)
        print(f"call {call} {step.name}: {result['status']} in {result['seconds']} s  {result['detail']}", flush=True)
    return results


def summarise(results, out, dry_run):
    cold = next((r for r in results if r["step"] == "examples-cold"), None)
    warm = next((r for r in results if r["step"] == "examples-warm"), None)
    calls = sorted({r["call"] for r in results})
    lines = [f"minikeras GPU session, call {' and '.join(map(str, calls))}"
             f"{' (DRY RUN: simulated GPU)' if dry_run else ''}, "
             f"{time.strftime('%Y-%m-%d %H:%M:%S')}, total {sum(r['seconds'] for r in results):.0f} s", ""]
    lines += [f"{r['call']} {r['step']:<14} {r['status']:<24} {r['seconds']:>7.1f} s  {r['detail']}" for r in results]
    if cold and warm and cold["status"] == warm["status"] == "ok":
        lines += ["", f"NVRTC (cold kernel cache): examples took {cold['seconds'] - warm['seconds']:+.1f} s more "
                      f"cold ({cold['seconds']:.1f} s) than warm ({warm['seconds']:.1f} s)"]
    lines += ["", f"logs: {os.path.join(out, 'steps.log')}"]
    text = "\n".join(lines)
    with open(os.path.join(out, "summary.txt"), "w") as handle:
        handle.write(text + "\n")
    with open(os.path.join(out, "summary.json"), "w") as handle:
        json.dump({"dry_run": dry_run, "steps": results}, handle, indent=1, default=str)
    return text


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="folder for every output (created)")
    parser.add_argument("--call", type=int, nargs="+", choices=(1, 2), default=None,
                        help="which device call's steps (the docstring's plan); a dry run's default: both")
    parser.add_argument("--dry-run", action="store_true", help="the same steps, small, on the simulated GPU")
    parser.add_argument("--only", nargs="+", default=None, help="run only these steps")
    parser.add_argument("--budget", type=float, default=None,
                        help="seconds for each call (every step's limit is clamped to what is left; default: "
                             f"{plan.CALL_BUDGETS} on a card, {DRY_BUDGET} in a dry run)")
    args = parser.parse_args(argv)
    if args.call is None and not args.dry_run:
        parser.error("on a card, name the device call: --call 1 (the models) or --call 2 (the rest); "
                     "both at once pass the device tool's 10 minutes a command")
    args.call = args.call or [1, 2]
    args.out = os.path.abspath(args.out)
    os.makedirs(args.out, exist_ok=True)
    # A cold NVRTC cache for examples-cold, this run's own: the suite runs a
    # dry run of this script, which once deleted a shared cache folder under
    # the suite's other processes as they compiled (23 FileNotFoundErrors on
    # an H200).
    cache_dir = tempfile.mkdtemp(prefix="minikeras_gpu_session_kernel_cache_")
    scratch = tempfile.mkdtemp(prefix="minikeras_gpu_session_json_")
    results = []
    with open(os.path.join(args.out, "steps.log"), "w") as log:
        for call in args.call:
            results += run_call(call, args, log, cache_dir, scratch)
    shutil.rmtree(cache_dir, ignore_errors=True)
    shutil.rmtree(scratch, ignore_errors=True)
    print()
    print(summarise(results, args.out, args.dry_run))
    return 0 if all(r["status"] in ("ok", SKIPPED, NOT_CARRIED) for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
