"""WeakIdentityTable: side tables keyed by identity, dropped with the key."""
import gc

import numpy

import minikeras as mk
from minikeras.layers.weight_info import set_weight_info, weight_info
from minikeras.losses.logits import attach_logits, logits_of
from minikeras._support.weak_table import WeakIdentityTable


def test_values_follow_identity_not_equality():
    table = WeakIdentityTable()
    a, b = mk.tensor(numpy.ones(3)), mk.tensor(numpy.ones(3))  # equal values, and == is elementwise
    table.set(a, "a")
    assert table.get(a) == "a" and table.get(b) is None and table.get(b, 7) == 7
    table.set(a, None)
    assert table.get(a) is None and len(table) == 0


def test_entries_go_with_their_object():
    table = WeakIdentityTable()
    x = mk.tensor(numpy.zeros(2))
    table.set(x, "kept")
    assert len(table) == 1
    del x
    gc.collect()
    assert len(table) == 0


def test_accessors_of_layers_and_losses():
    weight = mk.Variable(numpy.zeros(2))
    assert weight_info(weight) is None
    set_weight_info(weight, "info")
    assert weight_info(weight) == "info"
    output, logits = mk.tensor(numpy.ones(2)), mk.tensor(numpy.zeros(2))
    attach_logits(output, logits)
    assert logits_of(output) is logits and logits_of(logits) is None
    assert not hasattr(output, "_keras_logits") and not hasattr(weight, "_meta")
