"""A MirroredModel pickles as its wrapped model (through its .keras bytes)
and the names of its devices; the loaded one trains on as the original."""
import pickle

import numpy
import pytest

import minikeras as mk
from tests.distribute.helpers import assert_replicas_identical, classification_data, dense_model, logits_loss


def test_a_trained_mirrored_model_round_trips_and_trains_on_identically(split_cpu):
    split_cpu(2)
    mirrored = mk.MirroredModel(dense_model())
    mirrored.compile("adam", logits_loss(), metrics=["accuracy"])
    x, y = classification_data((8,))
    mirrored.fit(x, y, batch_size=16, epochs=1, verbose=0)
    loaded = pickle.loads(pickle.dumps(mirrored))
    assert type(loaded) is mk.MirroredModel and [d.name for d in loaded.devices] == ["cpu:0", "cpu:1"]
    numpy.testing.assert_array_equal(loaded.predict(x, verbose=0), mirrored.predict(x, verbose=0))
    after = mirrored.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0).history
    again = loaded.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0).history
    assert again == after and set(again) == {"loss", "accuracy"}
    assert_replicas_identical(loaded)
    for got, want in zip(loaded.get_weights(), mirrored.get_weights()):
        numpy.testing.assert_array_equal(got, want)


def test_an_uncompiled_mirrored_model_loads_uncompiled(split_cpu):
    split_cpu(2)
    loaded = pickle.loads(pickle.dumps(mk.MirroredModel(dense_model(), sync_batch_norm=True)))
    assert loaded.sync_batch_norm and loaded.optimizer is None
    with pytest.raises(RuntimeError, match="compile"):
        loaded.fit(*classification_data((8,)), verbose=0)
