"""Record Keras 3's answers to the Keras-referenced argument fuzz (issue 36)
into ``fixtures/keras_argument_answers.json``: for each call of
``keras_reference_cases.cases()``, the outputs' dtypes, shapes and values,
or the error Keras raised.

Run from the repository root where Keras 3 with TensorFlow is installed
(a comparison tool, never a dependency of minikeras; CI replays the file
without it):

    python tests/fuzz/make_keras_reference.py [--limit N] [--timeout S]

The calls run in a worker process under a memory limit; one that runs past
``--timeout`` seconds (Keras asked for 10**12 elements, say) is recorded as
``timeout``, the worker restarted. Values are kept in full for outputs of
up to :data:`FULL_VALUES` elements, else as a summary (NaN count, sum, sum
of magnitudes, first entries); floats to float32's precision.
"""
import argparse
import json
import math
import os
import resource
import select
import subprocess
import sys
import time

import numpy

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import keras_reference_cases  # noqa: E402

FULL_VALUES = 24
MEMORY_LIMIT = 8 * 2**30  # address space of the worker: a 10**12-element request fails, not swaps


def _number(value):
    value = float(value)
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return float(f"{value:.8g}")


def _values(array):
    if array.dtype.kind == "c":
        return [[_number(item.real), _number(item.imag)] for item in array.ravel()]
    if array.dtype.kind in "b":
        return [bool(item) for item in array.ravel()]
    if array.dtype.kind in "iu":
        return [int(item) for item in array.ravel()]
    return [_number(item) for item in array.ravel()]


def encode_array(array):
    """``{"dtype", "shape", "values"}`` (or ``"summary"`` for a large output) of one output array."""
    record = {"dtype": str(array.dtype), "shape": list(array.shape)}
    if array.dtype.kind not in "biufc":
        record["values"] = [str(item) for item in array.ravel()[:FULL_VALUES]]
    elif array.size <= FULL_VALUES:
        record["values"] = _values(array)
    else:
        record["summary"] = summarize(array)
    return record


def summarize(array):
    """NaN count, sum and sum of magnitudes (over the finite entries) and the first 8 entries."""
    wide = array.astype("complex128" if array.dtype.kind == "c" else "float64")
    finite = numpy.isfinite(wide)
    return {"nan": int(numpy.isnan(wide).sum()), "sum": _values(numpy.asarray(wide[finite].sum()).reshape(1))[0],
            "abs": _number(numpy.abs(wide[finite]).sum()), "first": _values(array.ravel()[:8])}


def flatten(value, to_numpy):
    """The output arrays of a result, nested tuples/lists/dicts flattened in order."""
    if isinstance(value, (tuple, list)):
        return [array for item in value for array in flatten(item, to_numpy)]
    if isinstance(value, dict):
        return [array for key in sorted(value) for array in flatten(value[key], to_numpy)]
    if isinstance(value, str):
        return [numpy.asarray(value)]
    return [numpy.asarray(to_numpy(value))]


def _answer(keras, function, args, kwargs):
    result = function(*args, **kwargs)
    return {"out": [encode_array(array) for array in flatten(result, keras.ops.convert_to_numpy)]}


def _as_tensors(keras, value):
    """``value`` with its NumPy arrays (in lists, tuples and dicts too) made Keras tensors."""
    if isinstance(value, numpy.ndarray):
        return keras.ops.convert_to_tensor(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_as_tensors(keras, item) for item in value)
    if isinstance(value, dict):
        return {key: _as_tensors(keras, item) for key, item in value.items()}
    return value


def _worker():
    """Answer case indices read from stdin with one JSON line each, on a private copy of stdout."""
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # anything Keras prints goes to stderr
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    import warnings

    import keras

    warnings.simplefilter("ignore")
    cases = list(keras_reference_cases.cases())
    answers.write(json.dumps({"keras": keras.__version__, "backend": keras.backend.backend()}) + "\n")
    answers.flush()
    for line in sys.stdin:
        index = int(line)
        label, op, args, kwargs, _, _ = cases[index]
        function = keras_reference_cases.resolve(keras.ops, op)
        try:
            record = _answer(keras, function, args, kwargs)
        except Exception as error:  # noqa: BLE001 - recording what Keras raises is the point
            try:  # some TensorFlow kernels want tensors, not NumPy arrays (``inputs.shape.as_list()``)
                record = _answer(keras, function, _as_tensors(keras, args), _as_tensors(keras, kwargs))
            except Exception:  # noqa: BLE001
                record = {"raises": type(error).__name__, "message": " ".join(str(error).split())[:160]}
        answers.write(json.dumps(record) + "\n")
        answers.flush()


class Worker:
    """A worker process (``--worker``) answering one case at a time."""

    def __init__(self):
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
        self.process = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker"], env=env,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                        text=True)
        self.version = json.loads(self.process.stdout.readline())

    def ask(self, index, timeout):
        self.process.stdin.write(f"{index}\n")
        self.process.stdin.flush()
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        if not ready:
            return None
        line = self.process.stdout.readline()
        return json.loads(line) if line else {"raises": "WorkerDied", "message": "the Keras worker process died"}

    def close(self):
        self.process.kill()
        self.process.wait()


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--limit", type=int, default=None, help="record only the first N cases (a trial run)")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per call")
    parser.add_argument("--out", default=keras_reference_cases.FIXTURE)
    args = parser.parse_args()
    if args.worker:
        _worker()
        return
    cases = list(keras_reference_cases.cases())[:args.limit]
    answers, worker, started = {}, Worker(), time.time()
    version = worker.version
    for index, (label, *_) in enumerate(cases):
        asked = time.time()
        record = worker.ask(index, args.timeout)
        if time.time() - asked > 2:
            print(f"slow: {label} ({time.time() - asked:.0f} s)", flush=True)
        if record is None or record.get("raises") == "WorkerDied":
            worker.close()
            worker = Worker()
            record = record or {"timeout": args.timeout}
        answers[label] = record
        if index % 1000 == 999:
            print(f"{index + 1} calls, {time.time() - started:.0f} s", flush=True)
    worker.close()
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as handle:
        json.dump({"keras_version": version["keras"], "backend": version["backend"], "answers": answers}, handle,
                  separators=(",", ":"))
        handle.write("\n")
    raised = sum("raises" in record for record in answers.values())
    timeouts = sum("timeout" in record for record in answers.values())
    print(f"{len(answers)} calls recorded ({raised} raise, {timeouts} timed out) from Keras {version['keras']} "
          f"({version['backend']}), {os.path.getsize(args.out) / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
