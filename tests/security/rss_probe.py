"""Load crafted files in this process and report each one's outcome and
peak-RSS growth as JSON lines: ``python rss_probe.py KIND PATH...`` (or
``KIND=PATH...``).

KIND is ``model`` (minikeras.models.load_model), ``weights`` (load_weights
into craft_bombs's small model), ``editor`` (saving.KerasFileEditor) or
``idx`` / ``cifar`` (the dataset readers). Run in a fresh process by test_security_memory.py and by
benchmarks/security_issue12.py, since ru_maxrss only grows.
"""
import ctypes
import gc
import json
import os
import resource
import sys

import numpy

# This checkout's minikeras, not an installed one.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import minikeras as mk  # noqa: E402
from minikeras.datasets import _idx, cifar10  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import craft_bombs  # noqa: E402


def peak_rss_bytes():
    """The process's peak resident set so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _status_bytes(field):
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise KeyError(field)


def reset_peak():
    """Restart the peak-RSS count at the current RSS (Linux: ``5 > clear_refs``), so that
    several files can be measured in one process; False where that is not possible.

    Memory the previous attempt freed is first handed back to the system
    (``malloc_trim``), so that reusing it cannot hide a new attempt's growth."""
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
    try:
        with open("/proc/self/clear_refs", "w") as clear:
            clear.write("5")
        return True
    except OSError:
        return False


def attempt(kind, path):
    readers = {"model": mk.models.load_model, "idx": _idx.read_idx, "cifar": cifar10.read_archive,
               "weights": lambda path: craft_bombs._small_model().load_weights(path),
               "editor": mk.saving.KerasFileEditor}
    fresh = reset_peak()
    before = _status_bytes("VmRSS") if fresh else peak_rss_bytes()
    try:
        readers[kind](path)
        outcome, message = "loaded", ""
    except Exception as error:  # noqa: BLE001  (the probe reports whatever happens)
        outcome, message = type(error).__name__, str(error)
    return {"path": path, "outcome": outcome, "message": message[:300],
            "peak_rss_growth_bytes": (_status_bytes("VmHWM") if fresh else peak_rss_bytes()) - before}


def start_the_device():
    """Bring up the default device before measuring: on a GPU, the CUDA
    context, CuPy and cuBLAS take some 300-400 MB of host memory the first
    time (seen on an H200), which no file is to blame for."""
    model = craft_bombs._small_model()
    model.predict(numpy.zeros((2, *model.inputs[0].shape[1:]), "float32"), verbose=0)
    mk.ops.sum(mk.ops.ones((4, 4)) @ mk.ops.ones((4, 4))).numpy()


if __name__ == "__main__":
    start_the_device()
    # ``KIND PATH...``, or ``KIND=PATH...`` to mix kinds in one process.
    if "=" in sys.argv[1]:
        jobs = [argument.split("=", 1) for argument in sys.argv[1:]]
    else:
        jobs = [(sys.argv[1], path) for path in sys.argv[2:]]
    for kind, path in jobs:
        print(json.dumps(dict(attempt(kind, path), kind=kind)), flush=True)
