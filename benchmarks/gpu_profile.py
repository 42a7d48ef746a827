"""Kernels, GPU busy time and host time per training step, measured on the
card with a profiler (issue 22): minikeras eager against PyTorch eager.

For each model of anchors.py (batch 128, Adam, sparse categorical
cross-entropy from logits, float32, TF32 off) it warms up, then runs
``STEPS`` training steps under ``torch.profiler`` (CUPTI records every
kernel launched in the process, CuPy's as well as PyTorch's) and reports per
step:

- ``kernels``: CUDA kernels launched (copies and memsets counted apart);
- ``gpu_busy_ms``: the sum of those kernels' durations;
- ``host_ms``: wall time per step with the device synchronised after each.

``host_ms`` far above ``gpu_busy_ms`` means the step is bound by the host
(Python, launches), which graph capture removes. With ``--cprofile`` it also
prints where minikeras's host time goes in the CIFAR CNN's step.

    python benchmarks/gpu_profile.py [--models mlp cnn cifar_cnn] [--json out.json] [--cprofile]

It needs CuPy and PyTorch with a CUDA device; without one it says so and exits 0.
"""
import argparse
import cProfile
import io
import json
import os
import pstats
import sys
import time

os.environ.setdefault("CUPY_TF32", "0")

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

from gpu_bench import BATCH, LR, SAMPLE_SHAPES, _channels_first, synthetic_data  # noqa: E402

STEPS = 20
WARMUP = 5


def _summarise(profile, steps, wall_s):
    kernels = copies = 0
    busy_us = 0.0
    by_name = {}
    for event in profile.events():
        if str(getattr(event, "device_type", "")).endswith("CUDA"):
            name = event.name.lower()
            if "memcpy" in name or "memset" in name:
                copies += 1
                continue
            kernels += 1
            busy_us += event.time_range.elapsed_us()
            count, total = by_name.get(event.name, (0, 0.0))
            by_name[event.name] = (count + 1, total + event.time_range.elapsed_us())
    # The kernels that take the most GPU time, per step: where a CNN's time goes.
    top = sorted(by_name.items(), key=lambda item: -item[1][1])[:10]
    return {"kernels": kernels / steps, "copies": copies / steps, "gpu_busy_ms": busy_us / 1e3 / steps,
            "host_ms": 1e3 * wall_s / steps,
            "top_kernels": [[name[:90], count / steps, round(total / steps, 2)] for name, (count, total) in top]}


def profile_minikeras(model_name, x, y, cprofile=False):
    import cupy
    import torch

    import minikeras as mk
    from compare import _minikeras_model

    mk.random.seed(0)
    with mk.device("gpu:0"):
        model = _minikeras_model(model_name)
        model.compile(optimizer=mk.optimizers.Adam(LR), loss=mk.losses.SparseCategoricalCrossentropy(from_logits=True))
        for step in range(WARMUP):
            model.train_on_batch(x[step * BATCH:(step + 1) * BATCH], y[step * BATCH:(step + 1) * BATCH])
        cupy.cuda.runtime.deviceSynchronize()

        def steps():
            for step in range(STEPS):
                model.train_on_batch(x[step * BATCH:(step + 1) * BATCH], y[step * BATCH:(step + 1) * BATCH])
                cupy.cuda.runtime.deviceSynchronize()

        activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        with torch.profiler.profile(activities=activities) as profile:
            start = time.perf_counter()
            steps()
            wall = time.perf_counter() - start
        row = _summarise(profile, STEPS, wall)
        if cprofile:
            profiler = cProfile.Profile()
            profiler.enable()
            steps()
            profiler.disable()
            text = io.StringIO()
            pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(25)
            row["cprofile_top"] = text.getvalue()
    return row


def profile_torch(model_name, x, y):
    import torch
    from anchors import _torch_model

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.manual_seed(0)
    model = _torch_model(model_name).cuda()
    loss_fn = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=LR)
    host_x, host_y = torch.from_numpy(_channels_first(x)), torch.from_numpy(y)

    def step(index):
        batch = slice(index * BATCH, (index + 1) * BATCH)
        inputs, labels = host_x[batch].cuda(), host_y[batch].cuda()
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(inputs), labels)
        loss.backward()
        optimizer.step()
        torch.cuda.synchronize()

    for index in range(WARMUP):
        step(index)
    activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=activities) as profile:
        start = time.perf_counter()
        for index in range(STEPS):
            step(index)
        wall = time.perf_counter() - start
    return _summarise(profile, STEPS, wall)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=list(SAMPLE_SHAPES), choices=list(SAMPLE_SHAPES))
    parser.add_argument("--json", default=None)
    parser.add_argument("--cprofile", action="store_true")
    args = parser.parse_args(argv)
    try:
        import cupy
        import torch

        if not torch.cuda.is_available() or cupy.cuda.runtime.getDeviceCount() == 0:
            raise RuntimeError("no CUDA device")
    except Exception as error:  # noqa: BLE001  (any reason there is no GPU: say it, exit 0)
        print(f"gpu_profile: no GPU to profile ({error})")
        return 0
    rows = []
    for name in args.models:
        x, y = synthetic_data(name, WARMUP + STEPS)
        for runner, run in (("minikeras", lambda: profile_minikeras(name, x, y, args.cprofile and name == "cifar_cnn")),
                            ("torch", lambda: profile_torch(name, x, y))):
            row = dict(model=name, runner=runner, **run())
            top = row.pop("cprofile_top", None)
            rows.append(row)
            if top:
                print(f"--- cProfile, minikeras {name}, {STEPS} steps\n{top}")
    print(f"{'model':<10} {'runner':<10} {'kernels':>8} {'copies':>7} {'gpu_busy_ms':>12} {'host_ms':>8}")
    for row in rows:
        print(f"{row['model']:<10} {row['runner']:<10} {row['kernels']:>8.1f} {row['copies']:>7.1f} "
              f"{row['gpu_busy_ms']:>12.3f} {row['host_ms']:>8.3f}")
    for row in rows:
        print(f"--- {row['model']} {row['runner']}: the kernels with the most GPU time (per step: launches, us)")
        for name, count, micros in row["top_kernels"]:
            print(f"    {micros:>8.1f} us  {count:>4.1f}x  {name}")
    result = {"benchmark": "gpu_profile", "device": torch.cuda.get_device_name(0), "steps": STEPS, "rows": rows}
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(result, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
