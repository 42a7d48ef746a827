"""Callbacks: the only way the fit loop talks to the outside."""
from minikeras.callbacks.callback import Callback, CallbackList  # noqa: F401
from minikeras.callbacks.history import History  # noqa: F401
from minikeras.callbacks.progbar_logger import ProgbarLogger  # noqa: F401
