"""Shared output for the benchmarks: a printed table and a JSON file."""
import json
import os
import platform
import time


def machine():
    """A short description of where the benchmark ran."""
    return {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "processor": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None,
        "time": time.strftime("%Y-%m-%d %H:%M:%S"),
    }


def report(name, rows, columns, extra=None, path=None):
    """Print ``rows`` (dicts) as a table with ``columns`` and write JSON.

    The JSON goes to ``path`` or benchmarks/results/<name>.json.
    """
    widths = [max([len(c)] + [len(_fmt(r.get(c))) for r in rows]) for c in columns]
    print("  ".join(c.ljust(w) for c, w in zip(columns, widths)))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print("  ".join(_fmt(row.get(c)).ljust(w) for c, w in zip(columns, widths)))
    if path is None:
        folder = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, f"{name}.json")
    payload = {"benchmark": name, "machine": machine(), "rows": rows}
    if extra:
        payload.update(extra)
    with open(path, "w") as handle:
        json.dump(payload, handle, indent=2, default=str)
    print(f"\nwrote {path}")
    return payload


def _fmt(value):
    if isinstance(value, float):
        return f"{value:.4g}"
    return "" if value is None else str(value)


def best_of(function, repeats=5, number=1):
    """Minimum wall time of ``number`` calls, over ``repeats`` tries (seconds per call)."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(number):
            function()
        best = min(best, (time.perf_counter() - start) / number)
    return best
