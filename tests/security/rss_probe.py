"""Load crafted files in this process and report each one's outcome and
peak-RSS growth as JSON lines: ``python rss_probe.py KIND PATH...``.

KIND is ``model`` (minikeras.models.load_model) or ``idx`` / ``cifar`` (the
dataset readers). Run in a fresh process by test_security_memory.py and by
benchmarks/security_issue12.py, since ru_maxrss only grows.
"""
import json
import os
import resource
import sys

# This checkout's minikeras, not an installed one.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import minikeras as mk  # noqa: E402
from minikeras.datasets import _idx, cifar10  # noqa: E402


def peak_rss_bytes():
    """The process's peak resident set so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def attempt(kind, path):
    readers = {"model": mk.models.load_model, "idx": _idx.read_idx, "cifar": cifar10.read_archive}
    before = peak_rss_bytes()
    try:
        readers[kind](path)
        outcome, message = "loaded", ""
    except Exception as error:  # noqa: BLE001  (the probe reports whatever happens)
        outcome, message = type(error).__name__, str(error)
    return {"path": path, "outcome": outcome, "message": message[:300],
            "peak_rss_growth_bytes": peak_rss_bytes() - before}


if __name__ == "__main__":
    kind, paths = sys.argv[1], sys.argv[2:]
    for path in paths:
        print(json.dumps(attempt(kind, path)), flush=True)
