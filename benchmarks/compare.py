"""minikeras against PyTorch and TensorFlow on the three target models.

One epoch of Fashion-MNIST MLP (784-512-256-10), Fashion-MNIST CNN and the
CIFAR-10 CNN, float32, batch 128, Adam(1e-3), shuffled, each library and
model in its own process (so peak RSS is per run), with the same warm-up and
timing protocol as benchmarks/anchors.py. Prints a table of epoch times,
ratios to the anchors, samples/s, predict throughput, peak RSS and the test
accuracy after the epoch, and writes JSON.

The anchors run with the Python given by --anchor-python (default: the
/work/anchors virtual env when present, else this interpreter); a library
that is not installed there is reported as missing, not as a failure.

With --rounds N every library runs N times per model, interleaved
(mk, torch, tf, mk, ...), and each one's best epoch is compared: on a shared
virtual machine one slow stretch otherwise decides a ratio.

    python benchmarks/compare.py                      # everything
    python benchmarks/compare.py --rounds 3           # best of 3 interleaved runs each
    python benchmarks/compare.py --models mlp --libs mk torch
    python benchmarks/compare.py --lib mk --model cnn --json out.json   # one run
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import anchors  # noqa: E402
from _report import report  # noqa: E402

DEFAULT_ANCHOR_PYTHON = "/work/anchors/bin/python"


def _minikeras_model(name):
    import minikeras as mk
    from minikeras import layers

    if name == "mlp":
        stack = [layers.Input(shape=(784,)), layers.Dense(512, activation="relu"),
                 layers.Dense(256, activation="relu"), layers.Dense(10)]
    elif name == "cnn":
        stack = [layers.Input(shape=(28, 28, 1)), layers.Conv2D(32, 3, activation="relu"), layers.MaxPooling2D(2),
                 layers.Conv2D(64, 3, activation="relu"), layers.MaxPooling2D(2), layers.Flatten(),
                 layers.Dense(128, activation="relu"), layers.Dense(10)]
    elif name == "cifar_cnn":
        stack = [layers.Input(shape=(32, 32, 3)),
                 layers.Conv2D(32, 3, padding="same", activation="relu"), layers.Conv2D(32, 3, activation="relu"),
                 layers.MaxPooling2D(2),
                 layers.Conv2D(64, 3, padding="same", activation="relu"), layers.Conv2D(64, 3, activation="relu"),
                 layers.MaxPooling2D(2), layers.Flatten(),
                 layers.Dense(256, activation="relu"), layers.Dense(10)]
    else:
        raise ValueError(name)
    return mk.Sequential(stack)


def run_minikeras(model_name, limit=None, seed=0, predict_batch=anchors.PREDICT_BATCH, **data_kw):
    """One timed epoch and predict() in minikeras, like anchors._run_torch."""
    import minikeras as mk

    (x_tr, y_tr), (x_te, y_te) = anchors._load(model_name, limit, channels_last=True, **data_kw)
    mk.random.seed(seed)
    n = len(x_tr)

    def fresh():
        model = _minikeras_model(model_name)
        model.compile(optimizer=mk.optimizers.Adam(anchors.LR),
                      loss=mk.losses.SparseCategoricalCrossentropy(from_logits=True))
        return model

    warm = fresh()  # warm-up on a scratch model, like the anchors
    rng = np.random.default_rng(seed)
    order = rng.permutation(n)
    for size in anchors._warmup_sizes(n):
        warm.train_on_batch(x_tr[order[:size]], y_tr[order[:size]])
    del warm
    model = fresh()
    t0 = time.perf_counter()
    model.fit(x_tr, y_tr, batch_size=anchors.BATCH, epochs=1, shuffle=True, verbose=0)
    epoch_s = time.perf_counter() - t0
    model.predict(x_te[:predict_batch + len(x_te) % predict_batch], batch_size=predict_batch)
    t0 = time.perf_counter()
    logits = model.predict(x_te, batch_size=predict_batch)
    predict_s = time.perf_counter() - t0
    return dict(lib="minikeras", version=mk.__version__, n_train=n, n_test=len(y_te), epoch_s=epoch_s,
                predict_s=predict_s, predict_batch_size=predict_batch,
                test_accuracy=float((logits.argmax(1) == y_te).mean()))


def _single(lib, model, limit, json_path):
    if lib == "mk":
        result = run_minikeras(model, limit)
    else:
        result = anchors.run_anchor(lib, model, limit)
    result["model"] = model
    result["samples_per_s"] = result["n_train"] / result["epoch_s"]
    result["predict_samples_per_s"] = result["n_test"] / result["predict_s"]
    result["peak_rss_mb"] = anchors._peak_rss_mb()
    with open(json_path, "w") as handle:
        json.dump(result, handle)


def _subprocess(lib, model, limit, python):
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "out.json")
        cmd = [python, os.path.abspath(__file__), "--lib", lib, "--model", model, "--json", out]
        if limit:
            cmd += ["--limit", str(limit)]
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(HERE), env.get("PYTHONPATH", "")])
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["failed"]
            return {"lib": lib, "model": model, "error": tail[0]}
        with open(out) as handle:
            return json.load(handle)


def _best(runs):
    """One library's result over its rounds: the fastest epoch's run, with the
    best predict time of any round and the largest peak RSS; the first
    error if no round succeeded."""
    good = [r for r in runs if "epoch_s" in r]
    if not good:
        return runs[0]
    best = dict(min(good, key=lambda r: r["epoch_s"]))
    best["predict_s"] = min(r["predict_s"] for r in good)
    best["predict_samples_per_s"] = max(r["predict_samples_per_s"] for r in good)
    best["peak_rss_mb"] = max(r["peak_rss_mb"] for r in good)
    best["rounds"] = len(good)
    return best


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", nargs="+", default=list(anchors.MODELS), choices=anchors.MODELS)
    p.add_argument("--libs", nargs="+", default=["mk", "torch", "tf"], choices=["mk", "torch", "tf"])
    p.add_argument("--limit", type=int, help="only the first N training samples")
    p.add_argument("--rounds", type=int, default=1,
                   help="run every library this many times, interleaved, and report each one's best epoch and "
                        "best predict (all runs go to the JSON)")
    p.add_argument("--anchor-python", default=None, help="interpreter with torch / tensorflow installed")
    p.add_argument("--json", help="where to write the JSON (a single run's dict with --lib)")
    p.add_argument("--lib", choices=["mk", "torch", "tf"], help=argparse.SUPPRESS)
    p.add_argument("--model", choices=anchors.MODELS, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.lib:
        _single(args.lib, args.model, args.limit, args.json)
        return
    if args.rounds < 1:
        p.error(f"--rounds must be at least 1, received {args.rounds}")
    all_runs = []
    anchor_python = args.anchor_python or (DEFAULT_ANCHOR_PYTHON if os.path.exists(DEFAULT_ANCHOR_PYTHON)
                                           else sys.executable)
    rows = []
    for model in args.models:
        runs = {lib: [] for lib in args.libs}
        for round_ in range(args.rounds):
            # Interleaved (mk, torch, tf, mk, ...), so that a noisy stretch on the
            # machine hits every library rather than one.
            for lib in args.libs:
                python = sys.executable if lib == "mk" else anchor_python
                load = os.getloadavg()[0]
                result = _subprocess(lib, model, args.limit, python)
                result["load_before"] = load
                result["round"] = round_
                runs[lib].append(result)
                print(f"[compare] {model} {lib}: {json.dumps(result)}", file=sys.stderr, flush=True)
        results = {lib: _best(lib_runs) for lib, lib_runs in runs.items()}
        all_runs.append({"model": model, "runs": runs})
        mk_result = results.get("mk", {})
        anchors_ok = [results[l] for l in ("torch", "tf") if l in results and "epoch_s" in results[l]]
        for lib, result in results.items():
            row = {"model": model, "lib": lib}
            if "error" in result:
                row["note"] = result["error"][:60]
                rows.append(row)
                continue
            row.update({k: result.get(k) for k in ("epoch_s", "samples_per_s", "predict_samples_per_s",
                                                     "peak_rss_mb", "test_accuracy", "load_before", "rounds")})
            if lib == "mk" and anchors_ok:
                fastest = min(anchors_ok, key=lambda r: r["epoch_s"])
                row["ratio_vs_fastest"] = result["epoch_s"] / fastest["epoch_s"]
                row["fastest_anchor"] = fastest["lib"]
                for anchor in anchors_ok:
                    row[f"ratio_vs_{anchor['lib']}"] = result["epoch_s"] / anchor["epoch_s"]
                row["predict_vs_best"] = result["predict_samples_per_s"] / max(
                    a["predict_samples_per_s"] for a in anchors_ok)
                torch_result = results.get("torch")
                if torch_result and "peak_rss_mb" in torch_result:
                    row["rss_vs_torch"] = result["peak_rss_mb"] / torch_result["peak_rss_mb"]
            rows.append(row)
        if model == "mlp" and "mk" in results and "epoch_s" in mk_result:
            floor = anchors.gemm_floor_mlp(n=args.limit or 60000)
            rows.append({"model": "mlp", "lib": "numpy GEMM floor", "epoch_s": floor,
                         "note": f"minikeras / floor = {mk_result['epoch_s'] / floor:.2f}"})
    columns = ["model", "lib", "epoch_s", "ratio_vs_fastest", "ratio_vs_torch", "ratio_vs_tf", "samples_per_s",
               "predict_samples_per_s", "predict_vs_best", "peak_rss_mb", "rss_vs_torch", "test_accuracy",
               "load_before", "rounds", "note"]
    report("compare", rows, columns, path=args.json, extra={"rounds": args.rounds, "all_runs": all_runs})


if __name__ == "__main__":
    main()
