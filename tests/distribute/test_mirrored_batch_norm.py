"""BatchNormalization under MirroredModel: moving statistics stay identical
across replicas; sync_batch_norm uses the statistics of the global batch."""
import numpy
import pytest

import minikeras as mk
from tests.distribute.helpers import (
    assert_replicas_identical, assert_weights_close, classification_data, conv_model, dense_model, logits_loss, twin,
)


def _batch_norm(model):
    return next(layer for layer in model.layers if isinstance(layer, mk.layers.BatchNormalization))


@pytest.mark.parametrize("make,shape", [(dense_model, (8,)), (conv_model, (6, 6, 2))])
def test_sync_batch_norm_matches_one_device(split_cpu, make, shape):
    split_cpu(3)
    single, wrapped = twin(make, batch_norm=True)
    x, y = classification_data(shape, 47)
    single.compile(mk.optimizers.SGD(0.05, momentum=0.9), logits_loss())
    mirrored = mk.MirroredModel(wrapped, sync_batch_norm=True)
    mirrored.compile(mk.optimizers.SGD(0.05, momentum=0.9), logits_loss())
    # Batches of 10 split 4/3/3, the last batch of 7 split 3/2/2.
    expected = single.fit(x, y, batch_size=10, epochs=2, shuffle=False, verbose=0)
    got = mirrored.fit(x, y, batch_size=10, epochs=2, shuffle=False, verbose=0)
    # Weights include gamma/beta (gradients through global statistics) and
    # the moving statistics (updated from the global batch statistics).
    assert_weights_close(wrapped.get_weights(), single.get_weights(), rtol=2e-5)
    numpy.testing.assert_allclose(got.history["loss"], expected.history["loss"], rtol=1e-5)
    assert_replicas_identical(mirrored)
    layer = _batch_norm(wrapped)
    assert not numpy.allclose(layer.moving_mean.numpy(), 0.0)  # the statistics were updated


def test_sync_batch_norm_with_an_idle_replica(split_cpu):
    split_cpu(3)
    single, wrapped = twin(dense_model, batch_norm=True)
    x, y = classification_data((8,), 7)
    single.compile("adam", logits_loss())
    mirrored = mk.MirroredModel(wrapped, sync_batch_norm=True)
    mirrored.compile("adam", logits_loss())
    # Batches of 5 (2/2/1) and 2 (1/1/0): the idle replica stays out of the statistics.
    single.fit(x, y, batch_size=5, epochs=2, shuffle=False, verbose=0)
    mirrored.fit(x, y, batch_size=5, epochs=2, shuffle=False, verbose=0)
    assert_weights_close(wrapped.get_weights(), single.get_weights(), rtol=2e-5)
    assert_replicas_identical(mirrored)


def test_local_batch_norm_keeps_moving_statistics_identical(split_cpu):
    split_cpu(2)
    single, wrapped = twin(dense_model, batch_norm=True)
    x, y = classification_data((8,), 20)
    single.compile(mk.optimizers.SGD(0.0), logits_loss())  # no weight change: only the statistics move
    mirrored = mk.MirroredModel(wrapped)
    mirrored.compile(mk.optimizers.SGD(0.0), logits_loss())
    single.train_on_batch(x, y)
    mirrored.train_on_batch(x, y)
    assert_replicas_identical(mirrored)
    ours, reference = _batch_norm(wrapped), _batch_norm(single)
    # The mean of the replicas' batch means is the global mean (equal shards).
    assert_weights_close([ours.moving_mean.numpy()], [reference.moving_mean.numpy()])
    # Each replica normalises with its own half's variance: smaller than the global one.
    assert numpy.all(ours.moving_variance.numpy() <= reference.moving_variance.numpy() + 1e-6)
    assert not numpy.allclose(ours.moving_variance.numpy(), reference.moving_variance.numpy())


def test_synchronized_layer_is_synced_without_the_flag(split_cpu):
    split_cpu(2)
    mk.random.seed(0)
    make = lambda: mk.Sequential([  # noqa: E731
        mk.layers.Input((8,)), mk.layers.Dense(6), mk.layers.BatchNormalization(synchronized=True),
        mk.layers.Dense(3)])
    single = make()
    wrapped = make()
    wrapped.set_weights(single.get_weights())
    x, y = classification_data((8,), 20)
    single.compile("sgd", logits_loss())
    mirrored = mk.MirroredModel(wrapped)
    mirrored.compile("sgd", logits_loss())
    single.fit(x, y, batch_size=7, epochs=1, shuffle=False, verbose=0)
    mirrored.fit(x, y, batch_size=7, epochs=1, shuffle=False, verbose=0)
    assert_weights_close(wrapped.get_weights(), single.get_weights(), rtol=2e-5)


def test_frozen_batch_norm_statistics_stay_exactly(split_cpu):
    split_cpu(3)
    wrapped = dense_model(batch_norm=True)
    layer = _batch_norm(wrapped)
    layer.moving_mean.assign(numpy.full(16, 0.3, "float32"))
    layer.trainable = False
    mirrored = mk.MirroredModel(wrapped)
    mirrored.compile("adam", logits_loss())
    x, y = classification_data((8,), 20)
    mirrored.fit(x, y, batch_size=7, epochs=2, verbose=0)
    for replica in mirrored.replicas:
        assert numpy.array_equal(_batch_norm(replica).moving_mean.numpy(), numpy.full(16, 0.3, "float32"))


def test_hook_is_inert_when_the_wrapped_model_trains_alone(split_cpu):
    split_cpu(2)
    single, wrapped = twin(dense_model, batch_norm=True)
    mirrored = mk.MirroredModel(wrapped, sync_batch_norm=True)
    assert _batch_norm(wrapped)._cross_replica_stats is not None
    x, y = classification_data((8,), 12)
    for model in (single, wrapped):
        model.compile("sgd", logits_loss())
        model.fit(x, y, batch_size=6, epochs=1, shuffle=False, verbose=0)
    assert_weights_close(wrapped.get_weights(), single.get_weights())
    del mirrored
