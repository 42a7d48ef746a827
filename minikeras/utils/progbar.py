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
    """One progress line for ``target`` steps.

    Args:
        target: the number of steps, or None when unknown.
        verbose: 1 (a bar) or 2 (the finished line only).
        stream: where to write; stdout by default, as Keras.
    """

    def __init__(self, target, verbose=1, stream=None):
        self.target = target
        self.verbose = verbose
        self.stream = stream or sys.stdout
        self.interactive = bool(getattr(self.stream, "isatty", lambda: False)())
        self._start = time.perf_counter()
        self._last_draw = 0.0
        self._width = 0

    def update(self, current, logs=None, finalize=False):
        """Show ``current`` steps done with ``logs``; ``finalize`` ends the line."""
        now = time.perf_counter()
        if not finalize and (self.verbose != 1 or not self.interactive or now - self._last_draw < _REDRAW_INTERVAL):
            return
        self._last_draw = now
        line = self._line(current, logs, now - self._start, finalize)
        if self.interactive and self.verbose == 1:
            padding = " " * max(self._width - len(line), 0)
            self._width = len(line)
            self.stream.write("\r" + line + padding + ("\n" if finalize else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def _line(self, current, logs, elapsed, finalize):
        per_step = elapsed / max(current, 1)
        if self.target is not None:  # padded to the target's width, as Keras: " 7/12"
            count = f"{current:>{len(str(self.target))}}/{self.target}"
        else:
            count = f"{current}/Unknown"
        if self.verbose == 2:
            return f"{count} - {elapsed:.0f}s - {format_duration(per_step)}/step{format_logs(logs)}"
        if self.target:
            filled = min(int(_BAR_WIDTH * current / self.target), _BAR_WIDTH)
            bar = "━" * filled + "─" * (_BAR_WIDTH - filled)
            count = f"{count} {bar}"
        if finalize or not self.target:
            timing = f"{elapsed:.0f}s {format_duration(per_step)}/step"
        else:
            timing = f"{per_step * (self.target - current):.0f}s {format_duration(per_step)}/step"
        return f"{count} {timing}{format_logs(logs)}"
