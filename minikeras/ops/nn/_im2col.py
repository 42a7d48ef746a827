"""The old name of :mod:`minikeras.ops.nn.sliding_window` (window geometry
and patch extraction), kept so that existing imports keep working: this
name is the same module object, so attributes set through either name
(e.g. a test's monkeypatch) are seen by both."""
import sys

from minikeras.ops.nn import sliding_window

sys.modules[__name__] = sliding_window
