"""Tracebacks that end in the user's code, as Keras shows them.

An error raised while ``fit`` runs passes through ten or more frames of the
training loop, the layers and the ops before it reaches the user's script;
the library's own checks already name the layer or op in the message, so
those frames only bury the user's line. As Keras does
(``keras/src/utils/traceback_utils.py``), the public entry points
(``fit``/``evaluate``/``predict``, the ``*_on_batch`` methods and
``Layer.__call__``) drop minikeras's own frames from the traceback of an
error that leaves them, keeping the user's frames (a custom ``call`` or
``train_step``, a callback, a loss function) and, when every frame is the
library's, the innermost one (where the error was raised). The exception
itself (type, message, cause) is untouched.

Filtering is on by default; ``minikeras.config.disable_traceback_filtering()``
turns it off (full tracebacks, for debugging minikeras itself) and
``enable_traceback_filtering()`` back on.
"""
import functools
import os
import traceback
import types

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_state = {"enabled": True}


def enable_traceback_filtering():
    """Drop minikeras's own frames from the tracebacks of errors raised in
    ``fit``/``evaluate``/``predict`` and layer calls (the default)."""
    _state["enabled"] = True


def disable_traceback_filtering():
    """Show full tracebacks, minikeras's frames included."""
    _state["enabled"] = False


def is_traceback_filtering_enabled():
    """Whether tracebacks are filtered (see :func:`enable_traceback_filtering`)."""
    return _state["enabled"]


def _is_library_frame(frame):
    return os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR)


def filtered_traceback(tb):
    """``tb`` without minikeras's frames; the innermost frame when all are."""
    frames = list(traceback.walk_tb(tb))
    kept = None
    for frame, line in reversed(frames):
        if not _is_library_frame(frame):
            kept = types.TracebackType(kept, frame, frame.f_lasti, line)
    if kept is None and frames:
        frame, line = frames[-1]
        kept = types.TracebackType(None, frame, frame.f_lasti, line)
    return kept


def filter_traceback(function):
    """Decorator: errors leaving ``function`` carry a filtered traceback
    (when filtering is enabled)."""

    @functools.wraps(function)
    def error_handler(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except Exception as error:
            if not _state["enabled"]:
                raise
            raise error.with_traceback(filtered_traceback(error.__traceback__))  # same error: no new context

    return error_handler
