"""Running loss sums kept on the device, and logs read only when looked at.

On a GPU every host read waits for the device, so the training step keeps
its running sums on the device (``running_sum``), hands the metrics their
batches when the logs are read, and gives callbacks :class:`LazyLogs`,
which compute the logs (the host reads) only if a callback reads them, as
the progress bar does when it refreshes and the trainer at epoch end.
"""
from collections.abc import MutableMapping

from minikeras.autograd import Tensor


def running_sum(total, value, count):
    """``total + value * count``; a Tensor ``value`` is added on its device
    (no host read), in float64 as the host sums were."""
    if not isinstance(value, Tensor):
        return read_sum(total) + float(value) * count
    device = value.device
    with device.activate():
        term = value.data.astype("float64").reshape(()) * count
        if isinstance(total, (int, float)):
            return term + total if total else term
        return device.asarray(total) + term


def read_sum(total):
    """A running sum as a Python float (a host read when on a device)."""
    if isinstance(total, (int, float)):
        return float(total)
    from minikeras.device import registry

    return float(registry.owner_of(total).item(total))


def detached(y_pred):
    """Predictions without their graph, so that keeping them for the metrics
    does not keep the step's saved arrays alive."""
    if isinstance(y_pred, Tensor):
        return y_pred.detach()
    if isinstance(y_pred, (list, tuple)):
        return type(y_pred)(detached(item) for item in y_pred)
    return y_pred


class LazyLogs(MutableMapping):
    """A logs dict computed by ``compute()`` on first use (read or write,
    as callbacks may add entries)."""

    __slots__ = ("_compute", "_values")

    def __init__(self, compute):
        self._compute = compute
        self._values = None

    def _get(self):
        if self._values is None:
            self._values = self._compute()
            self._compute = None
        return self._values

    def __getitem__(self, key):
        return self._get()[key]

    def __iter__(self):
        return iter(self._get())

    def __len__(self):
        return len(self._get())

    def __setitem__(self, key, value):
        self._get()[key] = value

    def __delitem__(self, key):
        del self._get()[key]

    def copy(self):
        return dict(self._get())

    def __repr__(self):
        return repr(self._get())
