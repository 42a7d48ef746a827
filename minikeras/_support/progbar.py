"""Progbar: Keras's progress line on stdout.

``4/4 ━━━━━━━━━━━━━━━━━━━━ 1s 50ms/step - accuracy: 0.9062 - loss: 0.2732``

On a terminal (verbose=1) the line is redrawn in place, at most every
0.05 s. When stdout is not a terminal (a log file, a pipe, a notebook
capturing output) only the finished line is written: one line per epoch,
no carriage returns. verbose=2 always writes one line per epoch, in
Keras's ``4/4 - 1s - 50ms/step - loss: ...`` form.
"""
import sys
import time

from minikeras._support import io_utils

_BAR_WIDTH = 20
_REDRAW_INTERVAL = 0.05


def format_value(value):
    """A log value as Keras prints it: 4 decimals, or scientific when tiny."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{value:.4f}" if abs(value) > 1e-3 or value == 0 else f"{value:.4e}"
    return str(value)


def format_logs(logs):
    """``" - loss: 0.1234 - accuracy: 0.9000"`` for the numeric entries."""
    return "".join(f" - {key}: {format_value(value)}" for key, value in (logs or {}).items()
                   if isinstance(value, (int, float)) and not isinstance(value, bool))


def format_duration(seconds):
    """``"1s"``, ``"12ms"`` or ``"80us"`` (per-step times)."""
    if seconds >= 1:
        return f"{seconds:.0f}s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.0f}ms"
    return f"{seconds * 1e6:.0f}us"


class Progbar:
    """One progress line for ``target`` steps (``keras.utils.Progbar``).

    Args:
        target: the number of steps, or None when unknown.
        width: the bar's width in characters.
        verbose: 1 (a bar) or 2 (the finished line only); 0 prints nothing.
        interval: the least time between redraws on a terminal, seconds.
        stateful_metrics: names of values shown as given; the others are
            averaged over the steps so far, as Keras's Progbar does.
        unit_name: the unit in ``ms/step``.
        stream: where to write; stdout by default, as Keras.

    Example:
        >>> bar = Progbar(10)  # doctest: +SKIP
        >>> bar.update(1, values=[("loss", 0.5)])  # doctest: +SKIP
    """

    def __init__(self, target, width=_BAR_WIDTH, verbose=1, interval=_REDRAW_INTERVAL, stateful_metrics=None,
                 unit_name="step", stream=None):
        self.target = target
        self.width = width
        self.verbose = verbose
        self.interval = interval
        self.stateful_metrics = set(stateful_metrics or ())
        self.unit_name = unit_name
        self.stream = stream or sys.stdout
        self.interactive = bool(getattr(self.stream, "isatty", lambda: False)())
        self._start = time.perf_counter()
        self._last_draw = 0.0
        self._line_width = 0
        self._seen = 0
        self._sums = {}

    def update(self, current, values=None, finalize=None):
        """Show ``current`` steps done.

        Args:
            current: the steps done so far.
            values: a dict or a list of ``(name, value)`` pairs.
            finalize: end the line; by default when ``current`` reaches
                the target.
        """
        if finalize is None:
            finalize = self.target is not None and current >= self.target
        logs = self._running(current, values)
        now = time.perf_counter()
        if not io_utils.is_interactive_logging_enabled():  # Keras: logs go to logging, one line per target
            if self.verbose and finalize:
                io_utils.logger.info(self._line(current, logs, now - self._start, finalize))
            return
        if not self.verbose or (not finalize and (self.verbose != 1 or not self.interactive
                                                  or now - self._last_draw < self.interval)):
            return
        self._last_draw = now
        line = self._line(current, logs, now - self._start, finalize)
        if self.interactive and self.verbose == 1:
            padding = " " * max(self._line_width - len(line), 0)
            self._line_width = len(line)
            self.stream.write("\r" + line + padding + ("\n" if finalize else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def add(self, n, values=None):
        """``update(steps so far + n, values)``."""
        self.update(self._seen + n, values)

    def _running(self, current, values):
        """The values to show: stateful ones as given, others averaged over
        the steps, weighted by the steps each update covers."""
        steps = max(current - self._seen, 1)
        self._seen = current
        pairs = values.items() if isinstance(values, dict) else (values or [])
        shown = {}
        for name, value in pairs:
            if name in self.stateful_metrics or not isinstance(value, (int, float)):
                shown[name] = value
                continue
            total, count = self._sums.get(name, (0.0, 0))
            self._sums[name] = (total + value * steps, count + steps)
            shown[name] = self._sums[name][0] / self._sums[name][1]
        return shown

    def _line(self, current, logs, elapsed, finalize):
        per_step = elapsed / max(current, 1)
        if self.target is not None:  # padded to the target's width, as Keras: " 7/12"
            count = f"{current:>{len(str(self.target))}}/{self.target}"
        else:
            count = f"{current}/Unknown"
        if self.verbose == 2:
            return f"{count} - {elapsed:.0f}s - {format_duration(per_step)}/{self.unit_name}{format_logs(logs)}"
        if self.target:
            filled = min(int(self.width * current / self.target), self.width)
            bar = "━" * filled + "─" * (self.width - filled)
            count = f"{count} {bar}"
        if finalize or not self.target:
            timing = f"{elapsed:.0f}s {format_duration(per_step)}/{self.unit_name}"
        else:
            timing = f"{per_step * (self.target - current):.0f}s {format_duration(per_step)}/{self.unit_name}"
        return f"{count} {timing}{format_logs(logs)}"
