"""Long epochs at Keras's default batch size: is step 31,250 as cheap as step 1,000?

A tiny model (8 -> 16 -> 1) is fitted for one epoch on 1,000,000 samples at
``batch_size=32`` (31,250 steps), then predicts on the same million samples
(31,250 more steps). A callback stamps the time after every batch and reads
the process's resident memory at the checkpoints; the table gives, for each
checkpoint (1k, 10k and the last step), the mean and median time per step
over the 500 steps ending there, the process's CPU time per step over the
same window (``cpu_us``: the work done, which a busy shared machine does not
inflate as it does wall time) and its ratio to the first checkpoint's
(``cpu_vs_first``), the Python function calls per step counted over 200
steps near the checkpoint (``calls_per_step``, outside the timing windows:
a count that does not change is the load-proof sign that no per-step work
grows), and the RSS at that point; the run's peak RSS follows.
Per-step cost and memory must stay flat: a per-step wrapper that nested one
call deeper per step once made the cost grow with the step number and died
with RecursionError at ~1,000 steps (issue 19).

The model is tiny on purpose: the step time is the library's per-step
overhead (data adapter, callbacks, logs, optimizer bookkeeping), not math.

Usage: python benchmarks/bench_scale.py [--samples N] [--batch-size B] [--json PATH]
"""
import argparse
import cProfile
import os
import pstats
import resource
import sys
import time

import numpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import minikeras as mk  # noqa: E402
from _report import report  # noqa: E402
from minikeras.device import placement_device  # noqa: E402

WINDOW = 500  # steps averaged before each checkpoint
PROFILED = 200  # steps whose Python calls are counted, near each checkpoint (outside its timing window)


def current_rss_mb():
    """Resident memory now (Linux /proc), in MiB; None elsewhere."""
    try:
        with open("/proc/self/statm") as statm:
            pages = int(statm.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError):
        return None


def peak_rss_mb():
    """The process's peak resident memory so far, in MiB (Linux reports KiB)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**10 if sys.platform != "darwin" else peak / 2**20


class StepClock(mk.callbacks.Callback):
    """Stamps ``perf_counter`` after every batch of one phase and reads the
    RSS at the checkpoints."""

    def __init__(self, phase, checkpoints):
        super().__init__()
        self.phase = phase
        self.checkpoints = set(checkpoints)
        # Python calls are counted over PROFILED steps just after each
        # checkpoint (before the last one, outside its timing window): the
        # same count at every checkpoint means no per-step work grows.
        last = max(checkpoints)
        self.profile_windows = {(c if c != last else max(0, c - WINDOW - 2 * PROFILED)): c for c in checkpoints}
        self.calls = {}
        self._profile = None
        self.stamps = []
        self.cpu = []  # process CPU time: the work itself, whatever the scheduler does
        self.rss = {}

    def _start(self):
        self.stamps.append(time.perf_counter())
        self.cpu.append(time.process_time())

    def _stamp(self, batch):
        self._start()
        step = batch + 1
        if step in self.checkpoints:
            self.rss[step] = current_rss_mb()
        if self._profile is not None and step == self._profile[1] + PROFILED:
            self._profile[0].disable()
            counted = sum(entry[1] for entry in pstats.Stats(self._profile[0]).stats.values())
            self.calls[self._profile[2]] = counted / PROFILED
            self._profile = None
        if step in self.profile_windows and self._profile is None:
            profile = cProfile.Profile()
            self._profile = (profile, step, self.profile_windows[step])
            profile.enable()

    def on_train_begin(self, logs=None):
        if self.phase == "fit":
            self._start()

    def on_predict_begin(self, logs=None):
        if self.phase == "predict":
            self._start()

    def on_train_batch_end(self, batch, logs=None):
        if self.phase == "fit":
            self._stamp(batch)

    def on_predict_batch_end(self, batch, logs=None):
        if self.phase == "predict":
            self._stamp(batch)

    def rows(self):
        """One row per checkpoint: the mean and the median µs per step over the
        window before it (the median ignores the scheduler's stalls on a
        shared machine)."""
        rows = []
        for step in sorted(self.checkpoints):
            if step >= len(self.stamps):
                continue
            start = max(0, step - WINDOW)
            seconds = (self.stamps[step] - self.stamps[start]) / (step - start)
            steps = numpy.diff(self.stamps[start:step + 1])
            cpu = (self.cpu[step] - self.cpu[start]) / (step - start)
            rows.append({"phase": self.phase, "step": step, "us_per_step": seconds * 1e6,
                         "median_us": float(numpy.median(steps)) * 1e6, "cpu_us": cpu * 1e6,
                         "calls_per_step": self.calls.get(step), "rss_mb": self.rss.get(step)})
        return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1_000_000)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--json", default=None, help="where to write the JSON (default benchmarks/results/)")
    args = parser.parse_args(argv)
    steps = -(-args.samples // args.batch_size)
    checkpoints = sorted({min(1000, steps), min(10000, steps), steps})

    rng = numpy.random.default_rng(0)
    x = rng.normal(size=(args.samples, 8)).astype(numpy.float32)
    y = (x @ rng.normal(size=(8, 1)).astype(numpy.float32)).astype(numpy.float32)
    mk.random.seed(0)
    model = mk.Sequential([mk.layers.Input(shape=(8,)), mk.layers.Dense(16, activation="relu"), mk.layers.Dense(1)])
    model.compile(optimizer="adam", loss="mse", metrics=["mae"])
    rss_before = current_rss_mb()

    fit_clock = StepClock("fit", checkpoints)
    start = time.perf_counter()
    history = model.fit(x, y, batch_size=args.batch_size, epochs=1, verbose=0, callbacks=[fit_clock])
    fit_seconds = time.perf_counter() - start
    predict_clock = StepClock("predict", checkpoints)
    start = time.perf_counter()
    predicted = model.predict(x, batch_size=args.batch_size, verbose=0, callbacks=[predict_clock])
    predict_seconds = time.perf_counter() - start
    assert predicted.shape == (args.samples, 1)

    rows = fit_clock.rows() + predict_clock.rows()
    for phase in ("fit", "predict"):
        phase_rows = [row for row in rows if row["phase"] == phase]
        for row in phase_rows:
            row["cpu_vs_first"] = row["cpu_us"] / phase_rows[0]["cpu_us"]
    extra = {
        "samples": args.samples, "batch_size": args.batch_size, "steps": steps, "window": WINDOW,
        "fit_seconds": fit_seconds, "predict_seconds": predict_seconds,
        "final_loss": history.history["loss"][-1],
        "rss_mb_before_fit": rss_before, "peak_rss_mb": peak_rss_mb(),
        "device": placement_device().name,
    }
    report("bench_scale", rows, ["phase", "step", "us_per_step", "median_us", "cpu_us", "cpu_vs_first", "calls_per_step",
                                   "rss_mb"], extra=extra, path=args.json)
    print(f"\n{steps} steps of {args.batch_size}: fit {fit_seconds:.1f} s, predict {predict_seconds:.1f} s; "
          f"RSS {rss_before:.0f} MiB before fit, peak {extra['peak_rss_mb']:.0f} MiB; "
          f"final loss {extra['final_loss']:.4g}")


if __name__ == "__main__":
    main()
