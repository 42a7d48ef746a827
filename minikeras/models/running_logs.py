"""Logs read only when looked at.

On a GPU every host read waits for the device, so a training step does
not read its loss or metric values: the loss trackers and metrics get the
step's (detached) results when the logs are next read (models/steps.py),
and callbacks get :class:`LazyLogs`, which compute the logs (the host
reads) only if a callback reads them, as the progress bar does when it
redraws and the trainer at epoch end.
"""
from minikeras.autograd import Tensor


def detached(y_pred):
    """Predictions without their graph, so that keeping them for the metrics
    does not keep the step's saved arrays alive."""
    if isinstance(y_pred, Tensor):
        return y_pred.detach()
    if isinstance(y_pred, (list, tuple)):
        return type(y_pred)(detached(item) for item in y_pred)
    return y_pred


class LazyLogs(dict):
    """A logs dict (a real ``dict``, as Keras callbacks expect) filled by
    ``compute()`` on first use: reading, iterating, writing or copying."""

    __slots__ = ("_compute",)

    def __init__(self, compute):
        super().__init__()
        self._compute = compute

    def _fill(self):
        compute = self._compute
        if compute is not None:
            self._compute = None
            dict.update(self, compute())
        return self

    def __getitem__(self, key):
        return dict.__getitem__(self._fill(), key)

    def __setitem__(self, key, value):
        dict.__setitem__(self._fill(), key, value)

    def __delitem__(self, key):
        dict.__delitem__(self._fill(), key)

    def __contains__(self, key):
        return dict.__contains__(self._fill(), key)

    def __iter__(self):
        return dict.__iter__(self._fill())

    def __len__(self):
        return dict.__len__(self._fill())

    def __eq__(self, other):
        return dict.__eq__(self._fill(), other)

    __hash__ = None

    def __repr__(self):
        return dict.__repr__(self._fill())

    def get(self, key, default=None):
        return dict.get(self._fill(), key, default)

    def keys(self):
        return dict.keys(self._fill())

    def values(self):
        return dict.values(self._fill())

    def items(self):
        return dict.items(self._fill())

    def update(self, *args, **kwargs):
        dict.update(self._fill(), *args, **kwargs)

    def setdefault(self, key, default=None):
        return dict.setdefault(self._fill(), key, default)

    def pop(self, key, *default):
        return dict.pop(self._fill(), key, *default)

    def copy(self):
        return dict(self._fill())

    def __reduce__(self):
        return (dict, (dict(self._fill()),))
