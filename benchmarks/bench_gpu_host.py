"""minikeras's own Python per launched kernel in an eager GPU step (issue 33 §5).

On a card, an eager step's host time is the library's Python plus CuPy's
launch cost per kernel; on the simulated GPU the simulator's bookkeeping
(race detector, counting, NumPy underneath) dwarfs both. This runs
``train_on_batch`` of the MLP, Fashion CNN and CIFAR CNN of compare.py
(Adam, seeded, batch already on the device) on the simulated GPU (``gpu:0``,
``MINIKERAS_SIMULATED_GPU=1`` set here when unset) and, for one step after
warm-up, splits every Python call (``sys.setprofile``'s "call" events) by
where its code lives:

- ``mk_calls``: minikeras/ outside minikeras/testing/: what a card runs too;
- ``ref_calls``: the part of ``mk_calls`` made inside a fused kernel's NumPy
  reference (``Kernel._run_reference``): on a card that compiles kernels the
  kernel's launch glue runs instead (a few calls), so it is reported apart;
- ``sim_calls``: the simulated CuPy (minikeras/testing/), absent on a card;
- ``other_calls``: NumPy's and the standard library's Python.

and counts what the step launches (``device.stats.kernel_launches``: each
array call, each fused kernel as one, each cuBLAS / cuDNN call), with the
cuBLAS GEMMs, cuDNN executions and fused kernels among them, and
``contexts``: how many times the step made the GPU current
(``cupy.cuda.Device.__enter__``, with its stream and allocator: what an
activation that is not nested in one of the same device enters; on a card
each costs CUDA runtime calls and CuPy's Python). The number of
issue 33 §5 is ``mk_per_launch`` = (mk_calls - ref_calls) / launches:
minikeras's own Python calls per kernel launched. ``mk_time`` is the share of
profiled own time (cProfile, ``--steps`` steps) spent in minikeras's code.

    python benchmarks/bench_gpu_host.py
    python benchmarks/bench_gpu_host.py --minikeras /work/wt/base44 --json /tmp/base.json
    python benchmarks/bench_gpu_host.py --models cnn --batches 16 --top 30
"""
import argparse
import cProfile
import os
import pstats
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SHAPES = {"mlp": (784,), "cnn": (28, 28, 1), "cifar_cnn": (32, 32, 3)}


class _Classifier:
    """Which part of the process a code object's file belongs to (cached per file)."""

    def __init__(self, package_folder):
        self.package = os.path.join(package_folder, "")
        self.testing = os.path.join(package_folder, "testing", "")
        self.cache = {}

    def __call__(self, filename):
        part = self.cache.get(filename)
        if part is None:
            if filename.startswith(self.testing):
                part = "sim"
            elif filename.startswith(self.package):
                part = "mk"
            else:
                part = "other"
            self.cache[filename] = part
        return part


class _CallCounter:
    """Counts "call" events per part, and minikeras's calls made inside a fused kernel's reference."""

    def __init__(self, classify, reference_code, context_code):
        self.classify = classify
        self.reference_code = reference_code
        self.context_code = context_code
        self.contexts = 0
        self.counts = {"mk": 0, "sim": 0, "other": 0}
        self.reference_calls = 0
        self.fused = 0
        self.depth = 0  # how many _run_reference frames are live
        self.by_function = {}

    def __call__(self, frame, event, arg):
        code = frame.f_code
        if event == "call":
            part = self.classify(code.co_filename)
            self.counts[part] += 1
            if code is self.context_code:
                self.contexts += 1
            if code is self.reference_code:
                if self.depth == 0:
                    self.fused += 1
                self.depth += 1
            if part == "mk":
                if self.depth:
                    self.reference_calls += 1
                else:
                    key = f"{os.path.relpath(code.co_filename, self.classify.package)}:{code.co_name}"
                    self.by_function[key] = self.by_function.get(key, 0) + 1
        elif event == "return" and code is self.reference_code:
            self.depth -= 1


def _library_calls(calls):
    """Wrap the simulator's entry points for cuBLAS and cuDNN work: ``calls`` counts them by name."""
    from minikeras.testing.sim_cupy import _calls

    original_issue, original_call = _calls.issue, _calls.call

    def issue(stream, what, *args, **kwargs):
        calls[what] = calls.get(what, 0) + 1
        return original_issue(stream, what, *args, **kwargs)

    def call(function, what, *args, **kwargs):
        if what in _calls.CUBLAS:
            calls[what] = calls.get(what, 0) + 1
        return original_call(function, what, *args, **kwargs)

    _calls.issue, _calls.call = issue, call
    return lambda: (setattr(_calls, "issue", original_issue), setattr(_calls, "call", original_call))


def _own_time_shares(action, steps, classify):
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(steps):
        action()
    profile.disable()
    shares = {"mk": 0.0, "sim": 0.0, "other": 0.0}
    for (filename, _, _), row in pstats.Stats(profile).stats.items():
        shares[classify(filename)] += row[2]
    total = sum(shares.values()) or 1.0
    return {part: round(value / total, 3) for part, value in shares.items()}


def measure(name, batch, steps, classify, reference_code, top):
    """One row: calls and launches of one train_on_batch of ``name`` at ``batch``."""
    import numpy

    import minikeras as mk
    from compare import _minikeras_model
    from minikeras.device import registry

    device = registry.default_device()
    if device.canonical != "/device:GPU:0":
        raise RuntimeError(f"bench_gpu_host runs on gpu:0, the default device is {device.canonical}")
    mk.random.seed(0)
    rng = numpy.random.default_rng(0)
    model = _minikeras_model(name)
    model.compile(optimizer=mk.optimizers.Adam(1e-3),
                  loss=mk.losses.SparseCategoricalCrossentropy(from_logits=True))
    x = mk.tensor(rng.random((batch,) + SHAPES[name], dtype=numpy.float32))
    y = mk.tensor(rng.integers(0, 10, size=batch))
    action = lambda: model.train_on_batch(x, y)  # noqa: E731
    for _ in range(3):  # builds, optimizer slots, caches
        action()
    counter = _CallCounter(classify, reference_code, device.xp.cuda.Device.__enter__.__code__)
    library = {}
    restore = _library_calls(library)
    before = device.stats.kernel_launches
    sys.setprofile(counter)
    try:
        action()
    finally:
        sys.setprofile(None)
        restore()
    launches = device.stats.kernel_launches - before
    shares = _own_time_shares(action, steps, classify)
    own = counter.counts["mk"] - counter.reference_calls
    cublas = sum(count for what, count in library.items() if what.startswith("cublas") or what in _cublas_names())
    row = {"model": name, "batch": batch, "launches": launches, "contexts": counter.contexts,
           "fused": counter.fused, "cublas": cublas,
           "cudnn": library.get("cudnnBackendExecute", 0), "mk_calls": counter.counts["mk"],
           "ref_calls": counter.reference_calls, "sim_calls": counter.counts["sim"],
           "other_calls": counter.counts["other"], "mk_per_launch": round(own / max(1, launches), 1),
           "mk_time": shares["mk"], "sim_time": shares["sim"]}
    if top:
        row["top_functions"] = sorted(counter.by_function.items(), key=lambda item: -item[1])[:top]
    return row


def _cublas_names():
    from minikeras.testing.sim_cupy import _calls

    return _calls.CUBLAS


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=list(SHAPES), choices=list(SHAPES))
    parser.add_argument("--batches", nargs="+", type=int, default=[128, 16])
    parser.add_argument("--steps", type=int, default=5, help="steps profiled for the time shares")
    parser.add_argument("--top", type=int, default=0, help="print the N minikeras functions called most")
    parser.add_argument("--minikeras", default=os.path.dirname(HERE), help="the folder that holds minikeras/")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    os.environ.setdefault("MINIKERAS_SIMULATED_GPU", "1")
    sys.path.insert(0, HERE)
    sys.path.insert(0, os.path.abspath(args.minikeras))
    import minikeras
    from _report import report
    from minikeras.kernels.kernel import Kernel

    classify = _Classifier(os.path.dirname(os.path.abspath(minikeras.__file__)))
    reference_code = Kernel._run_reference.__code__
    rows = [measure(name, batch, args.steps, classify, reference_code, args.top)
            for name in args.models for batch in args.batches]
    columns = ["model", "batch", "launches", "contexts", "fused", "cublas", "cudnn", "mk_calls", "ref_calls", "sim_calls",
               "other_calls", "mk_per_launch", "mk_time", "sim_time"]
    report("bench_gpu_host", rows, columns, extra={"minikeras": os.path.abspath(args.minikeras)}, path=args.json)
    for row in rows:
        for function, count in row.get("top_functions", ()):
            print(f"{row['model']}/{row['batch']}  {count:6d}  {function}")
    return rows


if __name__ == "__main__":
    main()
