"""minikeras against PyTorch on one GPU: the three models of anchors.py.

For each model (the Fashion-MNIST MLP 784-512-256-10, the Fashion-MNIST CNN
and the CIFAR-10 CNN, exactly as benchmarks/anchors.py and compare.py define
them) and each runner:

* ``minikeras``: ``model.fit`` for one epoch inside ``with minikeras.device("gpu:0")``;
* ``minikeras-jit``: the same with ``compile(jit_compile=True)``: after warm-up
  each step is one CUDA graph launch (models/captured_step.py);
* ``minikeras-cudnn`` (the CNNs): ``minikeras`` with ``MINIKERAS_CUDNN=1``:
  the forward pass and input gradient of the convolutions through cuDNN;
* ``torch``: a plain eager training loop;
* ``torch-graphs``: the same loop with the whole step (forward, backward and
  a capturable Adam) captured once in a CUDA graph and replayed (GPU only);

it times one epoch and the median of single steps, each step followed by a
device synchronisation. Batch 128, Adam(1e-3), float32, TF32 off in both
libraries (``CUPY_TF32=0``; torch's ``allow_tf32`` flags off), synthetic data
of the real shapes (60,000 or 50,000 training samples, uploaded from host
memory batch by batch by every runner, in order: the data is random, so no
runner shuffles), only full batches (the epoch has ``n // 128`` steps, so
the CUDA graph's fixed shapes fit every runner).
The data is random, so losses are reported only as a sanity check.

It needs nothing but CuPy and/or PyTorch already installed: no network and
no dataset files. With no usable GPU it says why and exits 0.

    python benchmarks/gpu_bench.py                          # all models, GPU
    python benchmarks/gpu_bench.py --models mlp --steps 50  # a shorter epoch
    python benchmarks/gpu_bench.py --device cpu --steps 5   # CPU smoke test of the script
    python benchmarks/gpu_bench.py --json /tmp/gpu.json

Notes for reading the numbers: minikeras's convolutions are im2col + cuBLAS
(through cuDNN only in ``minikeras-cudnn``), PyTorch's are cuDNN's; the minikeras epoch is ``fit()`` with
its callbacks and progress bookkeeping (verbose=0), the torch epoch is a bare
loop. Results go in benchmarks/NOTES.md.
"""
import argparse
import os
import statistics
import sys
import time

# Before CuPy is imported anywhere: plain float32 matmuls, as torch below.
os.environ.setdefault("CUPY_TF32", "0")

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))  # the checkout's minikeras, when run from a checkout

BATCH = 128
LR = 1e-3
WARMUP_STEPS = 5
MEDIAN_STEPS = 50
MODELS = ("mlp", "cnn", "cifar_cnn")
RUNNERS = ("minikeras", "minikeras-jit", "minikeras-cudnn", "torch", "torch-graphs")
TRAIN_SAMPLES = {"mlp": 60000, "cnn": 60000, "cifar_cnn": 50000}
# Channels-last sample shapes (minikeras); torch gets channels-first.
SAMPLE_SHAPES = {"mlp": (784,), "cnn": (28, 28, 1), "cifar_cnn": (32, 32, 3)}


def synthetic_data(model, steps, seed=0):
    """Random float32 images in [0, 1) and int64 labels 0-9, channels last."""
    rng = np.random.default_rng(seed)
    count = steps * BATCH
    x = rng.random((count,) + SAMPLE_SHAPES[model], dtype=np.float32)
    y = rng.integers(0, 10, size=count).astype(np.int64)
    return x, y


def _channels_first(x):
    return np.ascontiguousarray(x.transpose(0, 3, 1, 2)) if x.ndim == 4 else x


# ------------------------------------------------------------------ availability

def gpu_status(runners):
    """``{runner: None or reason it cannot run on the GPU}``."""
    status = {}
    for runner in ("minikeras", "minikeras-jit", "minikeras-cudnn"):
        if runner not in runners:
            continue
        try:
            from minikeras import backend

            status[runner] = None if backend.gpu_available() else backend.gpu_unavailable_reason()
        except ImportError as error:
            status[runner] = f"minikeras does not import: {error}"
    for runner in ("torch", "torch-graphs"):
        if runner not in runners:
            continue
        try:
            import torch

            status[runner] = None if torch.cuda.is_available() else "torch sees no CUDA device"
        except ImportError:
            status[runner] = "PyTorch is not installed"
    return status


# ----------------------------------------------------------------------- minikeras

def run_minikeras(model_name, x, y, device, jit_compile=False):
    """One fit() epoch and the median of single train_on_batch steps
    (``jit_compile``: each step a CUDA graph after warm-up)."""
    import minikeras as mk
    from compare import _minikeras_model

    sync = _cupy_synchronize if device == "gpu" else (lambda: None)
    mk.random.seed(0)
    with mk.device(f"{device}:0"):
        model = _minikeras_model(model_name)
        model.compile(optimizer=mk.optimizers.Adam(LR),
                      loss=mk.losses.SparseCategoricalCrossentropy(from_logits=True), jit_compile=jit_compile)
        steps = len(x) // BATCH
        model.weights[0].device.stats.reset()  # this run's graph launches only
        for step in range(WARMUP_STEPS):  # builds, compiles the kernels, fills the memory pool
            batch = slice((step % steps) * BATCH, (step % steps + 1) * BATCH)
            model.train_on_batch(x[batch], y[batch])
        sync()
        start = time.perf_counter()
        history = model.fit(x, y, batch_size=BATCH, epochs=1, shuffle=False, verbose=0)
        sync()
        epoch_s = time.perf_counter() - start
        step_times = []
        for step in range(min(MEDIAN_STEPS, steps)):
            batch = slice(step * BATCH, (step + 1) * BATCH)
            start = time.perf_counter()
            model.train_on_batch(x[batch], y[batch])  # returns the loss: a host read, so it syncs
            sync()
            step_times.append(time.perf_counter() - start)
    graph_launches = model.weights[0].device.stats.graph_launches
    return dict(version=mk.__version__, epoch_s=epoch_s, median_step_ms=1e3 * statistics.median(step_times),
                final_loss=float(history.history["loss"][-1]), graph_launches=graph_launches)


def _cupy_synchronize():
    import cupy

    cupy.cuda.runtime.deviceSynchronize()


# --------------------------------------------------------------------------- torch

def run_torch(model_name, x, y, device, graphs=False):
    """One epoch of a plain torch loop (optionally CUDA-graphed) and its median step."""
    import torch
    from anchors import _torch_model

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.manual_seed(0)
    target = torch.device("cuda:0" if device == "gpu" else "cpu")
    on_gpu = target.type == "cuda"
    sync = torch.cuda.synchronize if on_gpu else (lambda: None)
    host_x = torch.from_numpy(_channels_first(x))
    host_y = torch.from_numpy(y)
    if on_gpu:
        host_x, host_y = host_x.pin_memory(), host_y.pin_memory()
    model = _torch_model(model_name).to(target)
    loss_fn = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=LR, capturable=graphs)
    steps = len(x) // BATCH

    def upload(step):
        batch = slice(step * BATCH, (step + 1) * BATCH)
        return host_x[batch].to(target, non_blocking=True), host_y[batch].to(target, non_blocking=True)

    def eager_step(step):
        inputs, labels = upload(step)
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(inputs), labels)
        loss.backward()
        optimizer.step()
        return loss

    run_step = eager_step
    if graphs:
        run_step = _graphed_step(model, loss_fn, optimizer, upload, target)
    else:
        for step in range(WARMUP_STEPS):
            eager_step(step % steps)
    sync()
    start = time.perf_counter()
    for step in range(steps):
        loss = run_step(step)
    sync()
    epoch_s = time.perf_counter() - start
    step_times = []
    for step in range(min(MEDIAN_STEPS, steps)):
        start = time.perf_counter()
        run_step(step)
        sync()
        step_times.append(time.perf_counter() - start)
    return dict(version=torch.__version__, epoch_s=epoch_s, median_step_ms=1e3 * statistics.median(step_times),
                final_loss=float(loss.detach().cpu()))


def _graphed_step(model, loss_fn, optimizer, upload, target):
    """Captures forward, backward and the optimizer step in one CUDA graph
    (PyTorch's whole-network capture recipe); returns a step that copies a
    batch into the graph's static inputs and replays it."""
    import torch

    static_x, static_y = (tensor.clone() for tensor in upload(0))
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up on a side stream, as capture requires
        for _ in range(WARMUP_STEPS):
            optimizer.zero_grad(set_to_none=True)
            loss_fn(model(static_x), static_y).backward()
            optimizer.step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    optimizer.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        static_loss = loss_fn(model(static_x), static_y)
        static_loss.backward()
        optimizer.step()

    def step(index):
        inputs, labels = upload(index)
        static_x.copy_(inputs)
        static_y.copy_(labels)
        graph.replay()
        return static_loss

    return step


# ---------------------------------------------------------------------------- main

def run(models, runners, device, steps=None):
    """Runs every (model, runner) pair; returns the result rows."""
    rows = []
    for model in models:
        model_steps = steps or TRAIN_SAMPLES[model] // BATCH
        x, y = synthetic_data(model, model_steps)
        for runner in runners:
            if runner == "torch-graphs" and device != "gpu":
                continue  # CUDA graphs need a GPU
            if runner == "minikeras-cudnn" and (device != "gpu" or model == "mlp"):
                continue  # the convolutions through cuDNN: a GPU's CNNs only
            row = dict(model=model, runner=runner, device=device, steps=model_steps, batch=BATCH)
            try:
                if runner == "minikeras-cudnn":
                    os.environ["MINIKERAS_CUDNN"] = "1"  # read at each convolution (device/cudnn.py)
                    try:
                        row.update(run_minikeras(model, x, y, device, jit_compile=False))
                    finally:
                        os.environ.pop("MINIKERAS_CUDNN")
                elif runner in ("minikeras", "minikeras-jit"):
                    row.update(run_minikeras(model, x, y, device, jit_compile=runner == "minikeras-jit"))
                else:
                    row.update(run_torch(model, x, y, device, graphs=runner == "torch-graphs"))
            except Exception as error:  # one failing runner must not hide the others
                row["error"] = f"{type(error).__name__}: {error}"
                print(f"{model}/{runner} failed: {row['error']}", file=sys.stderr)
            else:
                row["samples_per_s"] = model_steps * BATCH / row["epoch_s"]
            rows.append(row)
        reference = next((r for r in rows if r["model"] == model and r["runner"] == "torch" and "epoch_s" in r), None)
        for row in rows:
            if row["model"] == model and reference and "epoch_s" in row:
                row["epoch_vs_torch"] = row["epoch_s"] / reference["epoch_s"]
    return rows


def _device_name(device):
    if device != "gpu":
        return "cpu"
    try:
        import torch

        return torch.cuda.get_device_name(0)
    except Exception:
        import cupy

        return cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", choices=MODELS, default=list(MODELS))
    parser.add_argument("--runners", nargs="+", choices=RUNNERS, default=list(RUNNERS))
    parser.add_argument("--device", choices=("gpu", "cpu"), default="gpu",
                        help="cpu: a smoke test of this script on the CPU (no CUDA graphs)")
    parser.add_argument("--steps", type=int, default=None,
                        help="steps per epoch (default: the full training set, n // 128)")
    parser.add_argument("--json", default=None, help="where to write the JSON (default benchmarks/results/)")
    args = parser.parse_args(argv)
    runners = list(args.runners)
    if args.device == "gpu":
        status = gpu_status(runners)
        for runner, reason in status.items():
            if reason is not None:
                print(f"{runner}: no GPU run ({reason})")
        runners = [runner for runner in runners if status.get(runner) is None]
        if not runners:
            print("No GPU is usable here, nothing to benchmark (use --device cpu for a smoke test).")
            return 0
    from _report import report

    rows = run(args.models, runners, args.device, args.steps)
    columns = ["model", "runner", "steps", "epoch_s", "median_step_ms", "samples_per_s", "epoch_vs_torch",
               "final_loss", "graph_launches", "version", "error"]
    report(f"gpu_bench_{args.device}", rows, columns, path=args.json,
           extra={"device_name": _device_name(args.device), "batch": BATCH, "tf32": False,
                  "protocol": "synthetic data, full batches only, each median step synchronised"})
    return 1 if any("error" in row for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
