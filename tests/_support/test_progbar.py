"""Progbar (minikeras/_support/progbar.py): Keras's progress line."""
import io
import re

from minikeras._support.progbar import Progbar, format_duration, format_value


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_formats():
    assert format_value(0.123456) == "0.1235" and format_value(0.00001234) == "1.2340e-05" and format_value(0) == "0.0000"
    assert format_duration(2.4) == "2s" and format_duration(0.012) == "12ms" and format_duration(8e-5) == "80us"


def test_non_terminal_writes_only_the_finished_line():
    stream = io.StringIO()
    bar = Progbar(4, verbose=1, stream=stream)
    for step in range(1, 5):
        bar.update(step, {"loss": 0.5}, finalize=False)
    assert stream.getvalue() == ""
    bar.stateful_metrics.update(["loss", "accuracy"])
    bar.update(4, {"loss": 0.25, "accuracy": 0.75}, finalize=True)
    assert re.fullmatch(r"4/4 ━{20} \d+s \d+(us|ms|s)/step - loss: 0\.2500 - accuracy: 0\.7500\n", stream.getvalue())


def test_terminal_redraws_in_place_and_ends_the_line():
    stream = _Terminal()
    bar = Progbar(4, verbose=1, stream=stream)
    bar.update(2, {"loss": 1.0})
    bar.update(4, {"loss": 0.5}, finalize=True)
    text = stream.getvalue()
    assert text.startswith("\r2/4 ━━━━━━━━━━──────────") and text.count("\r") == 2 and text.endswith("\n")
    stream = _Terminal()
    Progbar(12, verbose=1, stream=stream).update(7)
    assert stream.getvalue().startswith("\r 7/12 ")


def test_verbose_two_and_unknown_target():
    stream = io.StringIO()
    Progbar(3, verbose=2, stream=stream).update(3, {"loss": 1.0}, finalize=True)
    assert re.fullmatch(r"3/3 - \d+s - \d+(us|ms|s)/step - loss: 1\.0000\n", stream.getvalue())
    stream = io.StringIO()
    Progbar(None, verbose=1, stream=stream).update(7, None, finalize=True)
    assert stream.getvalue().startswith("7/Unknown ")


def test_keras_signature_averages_values_unless_stateful():
    stream = io.StringIO()
    bar = Progbar(4, verbose=1, stateful_metrics=["lr"], stream=stream)
    bar.update(1, values=[("loss", 1.0), ("lr", 0.1)])
    bar.add(1, values={"loss": 3.0, "lr": 0.2})
    bar.update(4, values=[("loss", 0.0), ("lr", 0.3)])  # reaching the target ends the line
    # loss: (1*1 + 3*1 + 0*2) / 4 steps = 1.0; lr shown as last given.
    assert stream.getvalue().endswith(" - loss: 1.0000 - lr: 0.3000\n") and stream.getvalue().count("\n") == 1
    quiet = io.StringIO()
    Progbar(2, verbose=0, stream=quiet).update(2, {"loss": 1.0})
    assert quiet.getvalue() == ""
