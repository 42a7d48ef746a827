"""What a layer remembers about each of its weights (regularizer,
constraint, trainability, creation order), kept beside the weight rather
than on it: ``weight_info(weight)`` and ``set_weight_info(weight, info)``."""
from minikeras._support.weak_table import WeakIdentityTable

__all__ = ["weight_info", "set_weight_info"]

_infos = WeakIdentityTable()


def weight_info(weight):
    """The info a layer attached to ``weight`` (layers/base.py's
    ``_WeightInfo``), or None for a weight no layer has tracked."""
    return _infos.get(weight)


def set_weight_info(weight, info):
    """Attach ``info`` to ``weight`` (None removes it)."""
    _infos.set(weight, info)
