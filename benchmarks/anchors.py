"""PyTorch / TensorFlow speed anchors for the three target models.

Self-contained on purpose: no minikeras import, the data is read with plain
numpy, and each (library, model) run happens in its own process so that the
peak RSS it reports belongs to that run alone.

One run trains exactly one epoch over the (possibly --limit'ed) training set
at batch size 128, float32, Adam(lr=1e-3), shuffled, after a short warm-up
(5 steps, plus one step at the size of the last partial batch) whose weight
and optimizer changes are undone before the timed epoch.  Then it times
predict() over the test set (batch size 1024 by default, --predict-batch)
and reports the test accuracy after that epoch.

The 2-core machine is shared: results carry `other_cpu_frac` (the share of
the cores other processes used during the run, from the --all runner) and
`epoch_s_from_median_step` (median step time x steps, robust to part-time
interference).  PyTorch's 2 OpenMP threads slow down several-fold when
another process competes for a core, so only trust runs with a small
other_cpu_frac.

    python benchmarks/anchors.py --lib torch --model mlp --json out.json
    python benchmarks/anchors.py --lib tf --model cifar_cnn --limit 2000
    python benchmarks/anchors.py --gemm-floor            # numpy GEMM floor
    python benchmarks/anchors.py --all --json results.json   # every combo,
                                                     # one subprocess each
    python benchmarks/anchors.py --all --lib tf --quiet-wait 300   # filter,
                                       # waiting for an idle machine first

The JSON dict of one run: {lib, model, epoch_s, samples_per_s,
predict_samples_per_s, peak_rss_mb, test_accuracy, version, ...}.
Models: "mlp" and "cnn" (Fashion-MNIST), "cifar_cnn" (CIFAR-10).
"""
import argparse
import copy
import gzip
import json
import math
import os
import pickle
import resource
import subprocess
import sys
import tarfile
import time

import numpy as np

BATCH = 128
LR = 1e-3
WARMUP_STEPS = 5
PREDICT_BATCH = 1024
MODELS = ("mlp", "cnn", "cifar_cnn")
LIBS = ("torch", "tf")
FMNIST_DIR = "/usr/share/datasets/fashion-mnist"
CIFAR_PATH = os.path.join(os.path.expanduser("~"), ".minikeras", "datasets",
                          "cifar-10-python.tar.gz")


# --------------------------------------------------------------------- data

def _read_idx(path):
    """One IDX file (optionally gzipped) as a numpy uint8 array."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        raw = f.read()
    zero, dtype_code, ndim = raw[0:2], raw[2], raw[3]
    if zero != b"\x00\x00" or dtype_code != 0x08:
        raise ValueError(f"{path}: not an unsigned-byte IDX file")
    dims = tuple(int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim))
    data = np.frombuffer(raw, np.uint8, offset=4 + 4 * ndim)
    if data.size != int(np.prod(dims)):
        raise ValueError(f"{path}: expected {dims}, got {data.size} bytes")
    return data.reshape(dims)


def _load_fashion_mnist(directory=FMNIST_DIR):
    """((x_train, y_train), (x_test, y_test)), x uint8 (N, 28, 28)."""
    def part(name):
        return _read_idx(os.path.join(directory, name))
    return ((part("train-images-idx3-ubyte.gz"), part("train-labels-idx1-ubyte.gz")),
            (part("t10k-images-idx3-ubyte.gz"), part("t10k-labels-idx1-ubyte.gz")))


def _load_cifar10(path=CIFAR_PATH):
    """((x_train, y_train), (x_test, y_test)), x uint8 (N, 3, 32, 32)."""
    def batch(tar, name):
        member = next(m for m in tar.getmembers() if m.name.endswith("/" + name))
        d = pickle.load(tar.extractfile(member), encoding="bytes")
        return (np.asarray(d[b"data"], np.uint8).reshape(-1, 3, 32, 32),
                np.asarray(d[b"labels"], np.uint8))
    with tarfile.open(path, "r:gz") as tar:
        train = [batch(tar, f"data_batch_{i}") for i in range(1, 6)]
        x_te, y_te = batch(tar, "test_batch")
    x_tr = np.concatenate([b[0] for b in train])
    y_tr = np.concatenate([b[1] for b in train])
    return (x_tr, y_tr), (x_te, y_te)


def _load(model, limit=None, channels_last=False, fmnist_dir=FMNIST_DIR,
          cifar_path=CIFAR_PATH):
    """Float32 [0, 1] inputs in the layout the model wants, int64 labels.

    mlp: (N, 784); cnn: (N, 1, 28, 28) or (N, 28, 28, 1);
    cifar_cnn: (N, 3, 32, 32) or (N, 32, 32, 3).
    """
    if model == "cifar_cnn":
        (x_tr, y_tr), (x_te, y_te) = _load_cifar10(cifar_path)
    else:
        (x_tr, y_tr), (x_te, y_te) = _load_fashion_mnist(fmnist_dir)
        x_tr, x_te = x_tr[:, None], x_te[:, None]            # N, 1, 28, 28
    if limit:
        x_tr, y_tr = x_tr[:limit], y_tr[:limit]

    def prep(x):
        if model == "mlp":
            x = x.reshape(len(x), -1)
        elif channels_last:
            x = x.transpose(0, 2, 3, 1)
        return np.ascontiguousarray(x, dtype=np.float32) / np.float32(255.0)
    return (prep(x_tr), y_tr.astype(np.int64)), (prep(x_te), y_te.astype(np.int64))


def _peak_rss_mb():
    # Linux reports ru_maxrss in KiB.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _warmup_sizes(n):
    """Batch sizes of the warm-up: WARMUP_STEPS full ones, then the epoch's
    partial last batch if it has one (so no shape is first seen when timed)."""
    sizes = [BATCH] * min(WARMUP_STEPS, max(1, n // BATCH))
    if n % BATCH:
        sizes.append(n % BATCH)
    return sizes


def _median_epoch(stamps):
    """Epoch time estimated as (median step time) x (number of steps), from
    per-step timestamps: robust to other processes stealing the CPU for part
    of the epoch (compare with epoch_s to see whether the run was disturbed)."""
    steps = np.diff(np.asarray(stamps))
    return float(np.median(steps) * len(steps)) if len(steps) else float("nan")


# -------------------------------------------------------------------- torch

def _torch_model(model):
    import torch.nn as nn
    if model == "mlp":
        return nn.Sequential(nn.Linear(784, 512), nn.ReLU(),
                             nn.Linear(512, 256), nn.ReLU(),
                             nn.Linear(256, 10))
    if model == "cnn":
        return nn.Sequential(nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Conv2d(32, 64, 3), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Flatten(),
                             nn.Linear(64 * 5 * 5, 128), nn.ReLU(),
                             nn.Linear(128, 10))
    if model == "cifar_cnn":
        return nn.Sequential(nn.Conv2d(3, 32, 3, padding="same"), nn.ReLU(),
                             nn.Conv2d(32, 32, 3), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Conv2d(32, 64, 3, padding="same"), nn.ReLU(),
                             nn.Conv2d(64, 64, 3), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Flatten(),
                             nn.Linear(64 * 6 * 6, 256), nn.ReLU(),
                             nn.Linear(256, 10))
    raise ValueError(model)


def _run_torch(model_name, limit=None, seed=0, predict_batch=PREDICT_BATCH, **data_kw):
    import torch
    (x_tr, y_tr), (x_te, y_te) = _load(model_name, limit, channels_last=False, **data_kw)
    torch.manual_seed(seed)
    X, Y = torch.from_numpy(x_tr), torch.from_numpy(y_tr)
    Xte = torch.from_numpy(x_te)
    n = len(X)
    model = _torch_model(model_name)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step(opt, idx):
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(X[idx]), Y[idx])
        loss.backward()
        opt.step()

    # Warm-up on scratch copies of the weights/optimizer, then restore.
    init_state = copy.deepcopy(model.state_dict())
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    perm = torch.randperm(n)
    for size in _warmup_sizes(n):
        step(opt, perm[:size])
    model.load_state_dict(init_state)
    opt = torch.optim.Adam(model.parameters(), lr=LR)

    model.train()
    t0 = time.perf_counter()
    perm = torch.randperm(n)
    stamps = [t0]
    for i in range(0, n, BATCH):
        step(opt, perm[i:i + BATCH])
        stamps.append(time.perf_counter())
    epoch_s = stamps[-1] - t0

    def predict(x):
        model.eval()
        with torch.no_grad():
            return torch.cat([model(x[i:i + predict_batch])
                              for i in range(0, len(x), predict_batch)]).numpy()
    predict(Xte[:predict_batch + len(Xte) % predict_batch])   # warm-up
    t0 = time.perf_counter()
    logits = predict(Xte)
    predict_s = time.perf_counter() - t0
    return dict(lib="torch", version=torch.__version__, threads=torch.get_num_threads(),
                n_train=n, n_test=len(y_te), epoch_s=epoch_s, predict_s=predict_s,
                epoch_s_from_median_step=_median_epoch(stamps),
                predict_batch_size=predict_batch,
                test_accuracy=float((logits.argmax(1) == y_te).mean()))


# ----------------------------------------------------------------------- tf

def _tf_model(model_name, keras):
    L = keras.layers
    if model_name == "mlp":
        layers = [keras.Input((784,)), L.Dense(512, activation="relu"),
                  L.Dense(256, activation="relu"), L.Dense(10)]
    elif model_name == "cnn":
        layers = [keras.Input((28, 28, 1)),
                  L.Conv2D(32, 3, activation="relu"), L.MaxPooling2D(2),
                  L.Conv2D(64, 3, activation="relu"), L.MaxPooling2D(2),
                  L.Flatten(), L.Dense(128, activation="relu"), L.Dense(10)]
    elif model_name == "cifar_cnn":
        layers = [keras.Input((32, 32, 3)),
                  L.Conv2D(32, 3, padding="same", activation="relu"),
                  L.Conv2D(32, 3, activation="relu"), L.MaxPooling2D(2),
                  L.Conv2D(64, 3, padding="same", activation="relu"),
                  L.Conv2D(64, 3, activation="relu"), L.MaxPooling2D(2),
                  L.Flatten(), L.Dense(256, activation="relu"), L.Dense(10)]
    else:
        raise ValueError(model_name)
    return keras.Sequential(layers)


def _run_tf(model_name, limit=None, seed=0, predict_batch=PREDICT_BATCH, **data_kw):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf
    keras = tf.keras
    (x_tr, y_tr), (x_te, y_te) = _load(model_name, limit, channels_last=True, **data_kw)
    keras.utils.set_random_seed(seed)
    n = len(x_tr)
    model = _tf_model(model_name, keras)
    model.compile(optimizer=keras.optimizers.Adam(learning_rate=LR),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))

    # Warm-up fit (traces the train step for the full and the partial batch
    # shape), then restore the initial weights and optimizer state (the
    # optimizer is built first so that its iteration count, learning rate and
    # moment variables all exist to be snapshot).
    init_weights = model.get_weights()
    model.optimizer.build(model.trainable_variables)
    init_opt = [v.numpy() for v in model.optimizer.variables]
    nw = sum(_warmup_sizes(n))
    model.fit(x_tr[:nw], y_tr[:nw], epochs=1, batch_size=BATCH, shuffle=True, verbose=0)
    model.set_weights(init_weights)
    for v, value in zip(model.optimizer.variables, init_opt):
        v.assign(value)

    class Stamps(keras.callbacks.Callback):        # a perf_counter() per step
        def on_train_batch_end(self, batch, logs=None):
            stamps.append(time.perf_counter())

    t0 = time.perf_counter()
    stamps = [t0]
    model.fit(x_tr, y_tr, epochs=1, batch_size=BATCH, shuffle=True, verbose=0,
              callbacks=[Stamps()])
    epoch_s = time.perf_counter() - t0

    model.predict(x_te[:predict_batch + len(x_te) % predict_batch],
                  batch_size=predict_batch, verbose=0)                    # warm-up
    t0 = time.perf_counter()
    logits = model.predict(x_te, batch_size=predict_batch, verbose=0)
    predict_s = time.perf_counter() - t0
    return dict(lib="tf", version=f"tensorflow {tf.__version__}, keras {keras.__version__}",
                threads=(tf.config.threading.get_intra_op_parallelism_threads(),
                         tf.config.threading.get_inter_op_parallelism_threads()),
                n_train=n, n_test=len(y_te), epoch_s=epoch_s, predict_s=predict_s,
                epoch_s_from_median_step=_median_epoch(stamps),
                predict_batch_size=predict_batch,
                test_accuracy=float((np.asarray(logits).argmax(1) == y_te).mean()))


# ------------------------------------------------------------------ public

def run_anchor(lib, model, limit=None, seed=0, predict_batch=PREDICT_BATCH, **data_kw):
    """Run one (lib, model) anchor in THIS process and return its dict.

    Use run_anchor_subprocess() (or the command line) for a per-run peak RSS.
    """
    if model not in MODELS:
        raise ValueError(f"model must be one of {MODELS}")
    runner = {"torch": _run_torch, "tf": _run_tf}[lib]
    r = runner(model, limit=limit, seed=seed, predict_batch=predict_batch, **data_kw)
    r["model"] = model
    r["batch_size"] = BATCH
    r["samples_per_s"] = r["n_train"] / r["epoch_s"]
    r["predict_samples_per_s"] = r["n_test"] / r["predict_s"]
    r["peak_rss_mb"] = _peak_rss_mb()
    return r


def _cpu_jiffies():
    """(busy, total) jiffies of the whole machine, from /proc/stat (Linux)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + (v[4] if len(v) > 4 else 0)                # idle + iowait
    total = sum(v[:8])                                       # guest is in user
    return total - idle, total


def machine_busy(interval=2.0):
    """Fraction (0..1) of all cores busy over the next `interval` seconds."""
    b0, t0 = _cpu_jiffies()
    time.sleep(interval)
    b1, t1 = _cpu_jiffies()
    return (b1 - b0) / max(1, t1 - t0)


def wait_quiet(max_wait=600.0, threshold=0.15, interval=2.0):
    """Wait (at most max_wait s) until the machine is less than `threshold`
    busy over `interval` s; returns (seconds waited, last busy fraction)."""
    start = time.perf_counter()
    while True:
        busy = machine_busy(interval)
        waited = time.perf_counter() - start
        if busy < threshold or waited >= max_wait:
            return waited, busy


def run_anchor_subprocess(lib, model, limit=None, python=None, extra_args=(), timeout=None):
    """Run one anchor in a fresh interpreter (default: this one) and return its
    dict, plus `other_cpu_frac`: the share of the machine's cores that other
    processes kept busy while it ran (0 = it had the machine alone)."""
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "out.json")
        cmd = [python or sys.executable, os.path.abspath(__file__),
               "--lib", lib, "--model", model, "--json", out, *extra_args]
        if limit:
            cmd += ["--limit", str(limit)]
        ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        b0, t0 = _cpu_jiffies()
        subprocess.run(cmd, check=True, timeout=timeout)
        b1, t1 = _cpu_jiffies()
        ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        with open(out) as f:
            r = json.load(f)
    tick = os.sysconf("SC_CLK_TCK")
    own = (ru1.ru_utime + ru1.ru_stime - ru0.ru_utime - ru0.ru_stime) * tick
    r["other_cpu_frac"] = max(0.0, (b1 - b0) - own) / max(1, t1 - t0)
    return r


def gemm_floor_mlp(batch=128, n=60000, repeats=3, dims=(784, 512, 256, 10), seed=0):
    """Seconds numpy (float32) needs for just the matrix products of one MLP
    epoch: per step the forward x @ W of the 3 layers, and in backward
    dW = x.T @ g for each layer and dX = g @ W.T for every layer but the
    first.  The epoch has ceil(n / batch) steps, the last one partial as in
    training.  Outputs are preallocated (no allocation is timed); best of
    `repeats` epochs, after one warm-up step."""
    rng = np.random.default_rng(seed)
    f32 = np.float32
    Ws = [rng.standard_normal((a, b), dtype=f32) for a, b in zip(dims[:-1], dims[1:])]
    dWs = [np.empty_like(W) for W in Ws]

    def buffers(b):
        acts = [rng.standard_normal((b, d), dtype=f32) for d in dims]   # x, h1, h2, out
        grads = [rng.standard_normal((b, d), dtype=f32) for d in dims]  # dX per layer input
        return acts, grads

    def step(acts, grads):
        for i, W in enumerate(Ws):                       # forward
            np.matmul(acts[i], W, out=acts[i + 1])
        for i in reversed(range(len(Ws))):               # backward
            np.matmul(acts[i].T, grads[i + 1], out=dWs[i])
            if i > 0:
                np.matmul(grads[i + 1], Ws[i].T, out=grads[i])

    full, rest = divmod(n, batch)
    bf = buffers(batch)
    br = buffers(rest) if rest else None
    step(*bf)
    if br:
        step(*br)
    best = math.inf
    for _ in range(max(1, repeats)):
        t0 = time.perf_counter()
        for _ in range(full):
            step(*bf)
        if br:
            step(*br)
        best = min(best, time.perf_counter() - t0)
    return best


def _load_note():
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "load average: %.2f, %.2f, %.2f" % os.getloadavg()


def run_all(libs=LIBS, models=MODELS, limit=None, python=None, extra_args=(),
            quiet_wait=0.0):
    """Every (lib, model) combo, one subprocess each, one at a time, then the
    GEMM floor (in a subprocess too); each result carries the `uptime` line
    taken just before it ran.  With quiet_wait > 0, each run first waits up to
    that many seconds for the machine to be (nearly) idle."""
    results = []
    for lib in libs:
        for model in models:
            if quiet_wait > 0:
                waited, busy = wait_quiet(quiet_wait)
                print(f"[anchors] waited {waited:.0f} s for quiet (busy {busy:.0%})",
                      file=sys.stderr, flush=True)
            load = _load_note()
            print(f"[anchors] {lib} {model}  ({load})", file=sys.stderr, flush=True)
            try:
                r = run_anchor_subprocess(lib, model, limit, python, extra_args)
            except subprocess.CalledProcessError as e:
                r = dict(lib=lib, model=model, error=str(e))
            r["uptime_before"] = load
            r["uptime_after"] = _load_note()
            results.append(r)
            print(f"[anchors] -> {json.dumps(r)}", file=sys.stderr, flush=True)
    if quiet_wait > 0:
        wait_quiet(quiet_wait)
    load = _load_note()
    out = subprocess.run([python or sys.executable, os.path.abspath(__file__), "--gemm-floor"]
                         + (["--limit", str(limit)] if limit else []),
                         check=True, capture_output=True, text=True).stdout
    r = json.loads(out)
    r["uptime_before"] = load
    results.append(r)
    return results


def _gemm_floor_result(limit=None):
    n = limit or 60000
    s = gemm_floor_mlp(batch=BATCH, n=n)
    return dict(lib="numpy", model="mlp_gemm_floor", version=f"numpy {np.__version__}",
                n_train=n, epoch_s=s, samples_per_s=n / s, peak_rss_mb=_peak_rss_mb())


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--lib", choices=LIBS)
    p.add_argument("--model", choices=MODELS)
    p.add_argument("--json", help="write the result dict (list with --all) here")
    p.add_argument("--limit", type=int, help="use only the first N training samples")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--predict-batch", type=int, default=PREDICT_BATCH)
    p.add_argument("--fmnist-dir", default=FMNIST_DIR)
    p.add_argument("--cifar", default=CIFAR_PATH, help="cifar-10-python.tar.gz")
    p.add_argument("--gemm-floor", action="store_true", help="numpy GEMM floor of the MLP epoch")
    p.add_argument("--all", action="store_true", help="every combo + GEMM floor, in subprocesses")
    p.add_argument("--quiet-wait", type=float, default=0.0,
                   help="with --all: wait up to S seconds for an idle machine before each run")
    a = p.parse_args(argv)

    if a.all:
        extra = ["--seed", str(a.seed), "--predict-batch", str(a.predict_batch),
                 "--fmnist-dir", a.fmnist_dir, "--cifar", a.cifar]
        res = run_all(libs=[a.lib] if a.lib else LIBS,
                      models=[a.model] if a.model else MODELS,
                      limit=a.limit, extra_args=extra, quiet_wait=a.quiet_wait)
    elif a.gemm_floor:
        res = _gemm_floor_result(a.limit)
    else:
        if not (a.lib and a.model):
            p.error("--lib and --model are required (or --all / --gemm-floor)")
        res = run_anchor(a.lib, a.model, limit=a.limit, seed=a.seed,
                         predict_batch=a.predict_batch,
                         fmnist_dir=a.fmnist_dir, cifar_path=a.cifar)
    text = json.dumps(res, indent=2)
    if a.json:
        with open(a.json, "w") as f:
            f.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
