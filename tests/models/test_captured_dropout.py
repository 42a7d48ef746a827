"""Random layers inside ``compile(jit_compile=True)``'s captured step, on the
strict simulated GPU: the graph's counter kernel reads and advances each
generator's device offset at every replay (``kernels/captured_random.py``),
so masks differ between steps, repeat for a fixed seed, keep ``1 - rate`` of
the values, and training converges as eager training does."""
import warnings

import numpy
import pytest

import minikeras as mk
from minikeras import layers
from minikeras.kernels import captured_random

FEATURES, BATCH, SAMPLES = 32, 16, 48  # three full batches per epoch


class _Masks(mk.callbacks.Callback):
    """After each replayed step: the graph's predictions and the layer's stream offset."""

    def __init__(self, layer):
        super().__init__()
        self.layer, self.masks, self.offsets = layer, [], []

    def on_train_batch_end(self, batch, logs=None):
        graphs = self.model._captured_step.graphs
        if not graphs or self.model.optimizer.iterations <= 2:  # the two eager warm-up steps
            return
        (entry,) = graphs.values()
        device = entry.device
        self.masks.append(device.to_host(entry.y_pred.data).copy())
        stream = captured_random.stream_of(self.layer._generators[device])
        self.offsets.append(int(device.to_host(stream.offset)))


def _mask_model(layer):
    """Ones through ``layer`` and a frozen identity Dense (learning rate 0): the predictions are the mask."""
    model = mk.Sequential([layers.Input((FEATURES,)), layer,
                           layers.Dense(FEATURES, use_bias=False, kernel_initializer="identity")])
    model.compile(mk.optimizers.SGD(0.0), "mse", jit_compile=True)
    return model


def _fit_masks(layer, epochs=2):
    model = _mask_model(layer)
    masks = _Masks(layer)
    ones = numpy.ones((SAMPLES, FEATURES), "float32")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no fallback to eager
        model.fit(ones, ones, batch_size=BATCH, epochs=epochs, shuffle=False, verbose=0, callbacks=[masks])
    return masks


def test_each_replayed_step_draws_a_new_dropout_mask_from_the_advancing_offset(simulated_gpu):
    masks = _fit_masks(layers.Dropout(0.5, seed=3))
    assert simulated_gpu.stats.graph_launches == 4 and len(masks.masks) == 4  # 6 steps: 2 warm-up, 4 replays
    assert masks.offsets == [BATCH * FEATURES * step for step in (1, 2, 3, 4)]  # advanced on the device
    for mask in masks.masks:
        assert set(numpy.unique(mask)) == {0.0, 2.0}
    for first, second in zip(masks.masks, masks.masks[1:]):
        assert not numpy.array_equal(first, second)


def test_captured_masks_repeat_for_a_fixed_seed_and_keep_one_minus_rate(simulated_gpu):
    first = _fit_masks(layers.Dropout(0.3, seed=7)).masks
    again = _fit_masks(layers.Dropout(0.3, seed=7)).masks
    other = _fit_masks(layers.Dropout(0.3, seed=8)).masks
    numpy.testing.assert_array_equal(numpy.stack(first), numpy.stack(again))
    assert not numpy.array_equal(numpy.stack(first), numpy.stack(other))
    values = numpy.stack(first + other)
    kept = values > 0
    assert abs(kept.mean() - 0.7) < 0.03  # 4096 draws: the kept fraction's sd is 0.007
    numpy.testing.assert_allclose(values[kept], 1 / 0.7, rtol=1e-6)


def test_the_library_generator_is_captured_and_reseeding_repeats_its_masks(simulated_gpu):
    def run():
        mk.random.seed(1)
        layer = layers.Dropout(0.5)
        model = _mask_model(layer)
        recorded = []

        class Record(mk.callbacks.Callback):
            def on_train_batch_end(self, batch, logs=None):
                if self.model.optimizer.iterations > 2:
                    (entry,) = self.model._captured_step.graphs.values()
                    recorded.append(entry.device.to_host(entry.y_pred.data).copy())

        ones = numpy.ones((SAMPLES, FEATURES), "float32")
        model.fit(ones, ones, batch_size=BATCH, epochs=2, shuffle=False, verbose=0, callbacks=[Record()])
        return numpy.stack(recorded)

    first = run()
    numpy.testing.assert_array_equal(first, run())
    assert not numpy.array_equal(first[0], first[1])


@pytest.mark.parametrize("make_layer, draws_per_step", [
    (lambda: layers.SpatialDropout1D(0.5, seed=1), BATCH * 8),  # one draw per (sample, channel)
    (lambda: layers.GaussianNoise(0.1, seed=1), 2 * BATCH * 4 * 8),  # Box-Muller: two numbers per value
    (lambda: layers.GaussianDropout(0.2, seed=1), 2 * BATCH * 4 * 8),
    (lambda: layers.AlphaDropout(0.2, seed=1), BATCH * 4 * 8),
], ids=["spatial_dropout", "gaussian_noise", "gaussian_dropout", "alpha_dropout"])
def test_the_other_random_layers_are_captured_and_draw_anew_each_replay(simulated_gpu, make_layer, draws_per_step):
    layer = make_layer()
    model = mk.Sequential([layers.Input((4, 8)), layer, layers.Flatten(), layers.Dense(2)])
    model.compile(mk.optimizers.Adam(0.01), "mse", jit_compile=True)
    rng = numpy.random.default_rng(0)
    x, y = rng.normal(size=(SAMPLES, 4, 8)).astype("float32"), rng.normal(size=(SAMPLES, 2)).astype("float32")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        history = model.fit(x, y, batch_size=BATCH, epochs=2, shuffle=False, verbose=0)
    assert simulated_gpu.stats.graph_launches == 4 and numpy.isfinite(history.history["loss"]).all()
    stream = captured_random.stream_of(layer._generators[simulated_gpu])
    assert int(simulated_gpu.to_host(stream.offset)) == 4 * draws_per_step


def _classifier(jit_compile, seed):
    mk.random.seed(seed)
    model = mk.Sequential([layers.Input((8,)), layers.Dense(32, activation="relu"), layers.Dropout(0.3),
                           layers.Dense(3)])
    model.compile(mk.optimizers.Adam(0.02), mk.losses.SparseCategoricalCrossentropy(from_logits=True),
                  jit_compile=jit_compile)
    return model


def test_training_with_captured_dropout_converges_as_eager_training_does(simulated_gpu):
    rng = numpy.random.default_rng(0)
    x = rng.normal(size=(256, 8)).astype("float32")
    y = (x[:, 0] > 0).astype("int64") + (x[:, 1] + x[:, 2] > 0)
    losses = {}
    for jit_compile in (False, True):
        model = _classifier(jit_compile, seed=0)
        launches = simulated_gpu.stats.graph_launches
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            history = model.fit(x, y, batch_size=32, epochs=8, verbose=0)
        assert (simulated_gpu.stats.graph_launches - launches > 0) == jit_compile
        losses[jit_compile] = history.history["loss"]
    eager, graphed = losses[False], losses[True]
    assert graphed[-1] < 0.5 * graphed[0] and eager[-1] < 0.5 * eager[0]
    assert abs(graphed[-1] - eager[-1]) < 0.25 * eager[-1]  # different masks, the same convergence
