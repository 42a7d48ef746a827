"""Keras's interactive-logging switch: the progress line and other messages
go to stdout (interactive, the default) or, once disabled, to Python's
``logging`` (the ``"minikeras"`` logger, at INFO), as Keras sends them to
absl logging. ``Progbar`` asks ``is_interactive_logging_enabled()`` on every
write, so the switch takes effect mid-run.
"""
import logging
import sys

_state = {"interactive": True}
logger = logging.getLogger("minikeras")


def enable_interactive_logging():
    """Write logs (the fit progress line) to stdout."""
    _state["interactive"] = True


def disable_interactive_logging():
    """Send logs to Python logging (``logging.getLogger("minikeras")``) instead of stdout."""
    _state["interactive"] = False


def is_interactive_logging_enabled():
    """True when logs go to stdout (the default)."""
    return _state["interactive"]


def print_msg(message, line_break=True):
    """Print to stdout, or log at INFO when interactive logging is off."""
    if is_interactive_logging_enabled():
        sys.stdout.write(message + ("\n" if line_break else ""))
        sys.stdout.flush()
    else:
        logger.info(message)
