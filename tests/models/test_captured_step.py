"""``compile(jit_compile=True)``: the training step as one CUDA graph
(``models/captured_step.py``), checked on the strict simulated GPU, whose
replays re-run the recorded kernels on the same buffers, against the eager
step; on the CPU it is the eager step."""
import warnings

import numpy
import pytest

import minikeras as mk
from minikeras import layers, ops
from minikeras.optimizers.optimizer import Optimizer

SAMPLES, BATCH = 52, 16  # three full batches and a partial one of 4


def _data(seed=0):
    rng = numpy.random.default_rng(seed)
    x = rng.normal(size=(SAMPLES, 6)).astype("float32")
    return x, (x[:, 0] > 0).astype("int64") + (x[:, 1] > 0)


def _optimizer(name):
    schedule = mk.optimizers.schedules.ExponentialDecay(0.05, decay_steps=3, decay_rate=0.7)
    return {"adam": lambda: mk.optimizers.Adam(schedule),
            "adamw": lambda: mk.optimizers.AdamW(0.01, weight_decay=0.1),
            "sgd": lambda: mk.optimizers.SGD(schedule, momentum=0.9, nesterov=True),
            "rmsprop": lambda: mk.optimizers.RMSprop(schedule, centered=True)}[name]()


def _model(jit_compile, optimizer="adam", extra=()):
    mk.random.seed(0)
    model = mk.Sequential([layers.Input((6,)), layers.Dense(8, activation="relu"), *extra, layers.Dense(3)])
    model.compile(_optimizer(optimizer), mk.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"], jit_compile=jit_compile)
    return model


def _fit(model, epochs=3, **kwargs):
    x, y = _data()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        history = model.fit(x, y, batch_size=BATCH, epochs=epochs, shuffle=False, verbose=0, **kwargs)
    return history.history, [str(w.message) for w in caught if "jit_compile" in str(w.message)]


def _assert_same_training(eager, graphed):
    for a, b in zip(eager.get_weights(), graphed.get_weights()):
        numpy.testing.assert_array_equal(a, b)  # the simulated GPU replays the eager step's very operations
    assert eager.optimizer.iterations == graphed.optimizer.iterations


@pytest.mark.parametrize("optimizer", ["adam", "adamw", "sgd", "rmsprop"])
def test_graphed_training_gives_the_eager_weights_with_a_schedule_and_a_partial_batch(simulated_gpu, optimizer):
    eager, graphed = _model(False, optimizer), _model(True, optimizer)
    eager_history, _ = _fit(eager)
    graphed_history, caught = _fit(graphed)
    assert caught == []
    _assert_same_training(eager, graphed)
    assert graphed_history == eager_history  # the logs read the copies of each replay's loss and predictions
    # 12 steps: the full batches' signature warms up twice then replays 7 times, the partial one 1 time.
    assert simulated_gpu.stats.graph_launches == 7 + 1
    assert len(graphed._captured_step.graphs) == 2


def test_a_baked_learning_rate_would_be_caught(simulated_gpu, monkeypatch):
    # The comparison above has teeth: with the per-step scalars passed as host
    # floats, the graph replays the capture's learning rate and bias correction.
    eager = _model(False)
    _fit(eager)
    monkeypatch.setattr(Optimizer, "_step_value", lambda self, value, recompute: value)
    graphed = _model(True)
    _fit(graphed)
    assert simulated_gpu.stats.graph_launches > 0
    assert any(not numpy.array_equal(a, b) for a, b in zip(eager.get_weights(), graphed.get_weights()))


class _StepTraffic(mk.callbacks.Callback):
    def __init__(self, device):
        super().__init__()
        self.device, self.steps = device, []

    def on_train_batch_begin(self, batch, logs=None):
        self.before = self.device.stats.snapshot()

    def on_train_batch_end(self, batch, logs=None):
        after = self.device.stats.snapshot()
        self.steps.append({name: after[name] - self.before[name] for name in after})
        self.steps[-1]["memory"] = self.device.memory.current
        logs["loss"]  # read the logs every step: nothing waits in the pending logs


def test_a_replayed_step_is_one_graph_launch_three_copies_and_the_uploads(simulated_gpu):
    model = _model(True)
    traffic = _StepTraffic(simulated_gpu)
    _fit(model, epochs=3, callbacks=[traffic])
    full = [traffic.steps[i] for i in (4, 5, 6, 8, 9, 10)]  # the full batches replayed from the graph
    for step in full:
        # One upload of x, of y and of the step scalars; the copies of the loss, the
        # predictions and the labels (the deferred label-range check) for the logs are the
        # only kernels outside the graph; no host sync.
        assert {key: step[key] for key in ("graph_launches", "kernel_launches", "uploads", "host_syncs")} == \
            {"graph_launches": 1, "kernel_launches": 3, "uploads": 3, "host_syncs": 0}
    assert len({step["memory"] for step in full}) == 1  # replays allocate nothing the device keeps
    eager_step = traffic.steps[0]
    assert eager_step["graph_launches"] == 0 and eager_step["kernel_launches"] > 10


class _HostBranch(layers.Layer):
    """Data-dependent Python control flow: reads the device in the step."""

    def call(self, inputs):
        return inputs * 2.0 if float(ops.sum(inputs).item()) > 1e9 else inputs


class _Einsum(layers.Layer):
    """A product CuPy runs on cuBLAS outside device.matmul/gemm: refused while capturing."""

    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1], 8), initializer="glorot_uniform", name="w")

    def call(self, inputs):
        return ops.einsum("ab,bc->ac", inputs, self.w)


class _LibraryNoise(layers.Layer):
    """Noise from ``minikeras.random.normal``: a draw captured_random does not cover."""

    def call(self, inputs, training=None):
        return inputs + mk.random.normal(tuple(inputs.shape), stddev=0.01) if training else inputs


@pytest.mark.parametrize("make_layer, why", [(_HostBranch, "the host cannot wait"),
                                              (_LibraryNoise, "random"), (_Einsum, "cuBLAS")],
                         ids=["host_read", "library_noise", "einsum"])
def test_a_step_that_cannot_be_captured_falls_back_to_eager_with_one_warning(simulated_gpu, make_layer, why):
    graphed = _model(True, extra=(make_layer(),))
    _, caught = _fit(graphed)
    assert len(caught) == 1 and why in caught[0] and "runs eagerly" in caught[0]
    assert simulated_gpu.stats.graph_launches == 0
    eager = _model(False, extra=(make_layer(),))
    _fit(eager)
    if why != "random":  # the noise comes from other generators
        _assert_same_training(eager, graphed)
    else:
        assert all(numpy.isfinite(w).all() for w in graphed.get_weights())


def test_an_optimizer_without_device_scalars_runs_eagerly_with_a_warning(simulated_gpu):
    mk.random.seed(0)
    model = mk.Sequential([layers.Input((6,)), layers.Dense(3)])
    model.compile(mk.optimizers.Nadam(), "mse", jit_compile=True)
    x, _ = _data()
    with pytest.warns(UserWarning, match="Nadam optimizer computes per-step values on the host"):
        model.fit(x, x[:, :3], batch_size=BATCH, epochs=2, verbose=0)
    assert simulated_gpu.stats.graph_launches == 0


def test_weights_replaced_between_epochs_are_trained_by_a_new_graph(simulated_gpu):
    class Reset(mk.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            if epoch == 1:
                self.model.set_weights([w * 0.5 for w in self.model.get_weights()])

    eager, graphed = _model(False), _model(True)
    _fit(eager, epochs=4, callbacks=[Reset()])
    _fit(graphed, epochs=4, callbacks=[Reset()])
    _assert_same_training(eager, graphed)


def test_batch_norm_state_and_metrics_follow_the_graph(simulated_gpu):
    eager = _model(False, extra=(layers.BatchNormalization(),))
    graphed = _model(True, extra=(layers.BatchNormalization(),))
    eager_history, _ = _fit(eager)
    graphed_history, caught = _fit(graphed)
    assert caught == [] and simulated_gpu.stats.graph_launches > 0
    _assert_same_training(eager, graphed)  # moving statistics included (get_weights)
    assert graphed_history == eager_history


def test_jit_compile_on_any_device_trains_as_eager(device):
    # On the CPU jit_compile=True is the eager step (no graphs, no warning); on a
    # GPU the graphs replay the same step (float32 rounding may differ on CUDA).
    eager, graphed = _model(False), _model(True)
    _fit(eager)
    launches = device.stats.graph_launches
    _, caught = _fit(graphed)
    assert caught == [] and graphed.jit_compile is True and eager.jit_compile is False
    for a, b in zip(eager.get_weights(), graphed.get_weights()):
        numpy.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert device.stats.graph_launches - launches == (0 if not device.supports_graphs else 8)


def test_a_custom_train_step_runs_as_written_with_one_warning(simulated_gpu):
    class Custom(mk.Sequential):
        def train_step(self, data):
            self.custom_calls = getattr(self, "custom_calls", 0) + 1
            return super().train_step(data)

    mk.random.seed(0)
    model = Custom([layers.Input((6,)), layers.Dense(3)])
    model.compile("adam", mk.losses.SparseCategoricalCrossentropy(from_logits=True), jit_compile=True)
    _, caught = _fit(model, epochs=2)
    assert len(caught) == 1 and "custom train_step" in caught[0]
    assert model.custom_calls == 8 and simulated_gpu.stats.graph_launches == 0


def test_dropout_is_captured_on_a_gpu_without_a_warning(device):
    # Its masks come from counter streams inside the graph (tests/models/test_captured_dropout.py).
    model = _model(True, extra=(layers.Dropout(0.5),))
    launches = device.stats.graph_launches
    history, caught = _fit(model)
    assert caught == [] and numpy.isfinite(history["loss"]).all()
    assert device.stats.graph_launches - launches == (8 if device.supports_graphs else 0)


# ------------------------------------------------ what a card's capture can hold
# On a GPU a captured step's matrix products go to cuBLAS directly
# (device/cublas_direct.py): CuPy refuses its own cuBLAS calls while a stream
# captures. 2-D float32/float64 products go to cublasSgemm/Dgemm, 16-bit and
# batched ones (mixed precision, attention) to cublasGemmEx /
# cublasGemmStridedBatchedEx, eagerly too, so a captured step runs the very
# GEMMs of the eager one. The simulated CuPy refuses CuPy's own products
# during a capture as CuPy does, so what captures here captures on a card.
def _bf16_dense_model():
    mk.random.seed(0)
    mk.mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        model = mk.Sequential([layers.Input((6,)), layers.Dense(8, activation="relu"), layers.Dense(3)])
    finally:
        mk.mixed_precision.set_global_policy("float32")
    return model


def _attention_model(policy="float32"):
    mk.random.seed(0)
    mk.mixed_precision.set_global_policy(policy)
    try:
        inputs = layers.Input((6,))
        tokens = layers.Reshape((3, 2))(inputs)
        attended = layers.MultiHeadAttention(num_heads=2, key_dim=4)(tokens, tokens)
        return mk.Model(inputs, layers.Dense(3)(layers.Flatten()(attended)))
    finally:
        mk.mixed_precision.set_global_policy("float32")


def _bf16_attention_model():
    return _attention_model("mixed_bfloat16")


def _float32_dense_model():
    mk.random.seed(0)
    return mk.Sequential([layers.Input((6,)), layers.Dense(8, activation="relu"), layers.Dense(3)])


def _bf16_einsum_dense_model():
    mk.random.seed(0)
    mk.mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        return mk.Sequential([layers.Input((6,)), layers.Reshape((3, 2)),
                              layers.EinsumDense("abc,cd->abd", output_shape=(3, 4), bias_axes="d"),
                              layers.Flatten(), layers.Dense(3)])
    finally:
        mk.mixed_precision.set_global_policy("float32")


@pytest.mark.parametrize("make_model", [_float32_dense_model, _bf16_dense_model, _attention_model,
                                        _bf16_attention_model, _bf16_einsum_dense_model],
                         ids=["float32_dense", "bfloat16_dense", "multi_head_attention", "bfloat16_attention",
                              "bfloat16_einsum_dense"])
def test_jit_compile_captures_exactly_what_a_cards_capture_path_can(simulated_gpu, make_model):
    def fitted(jit_compile):
        model = make_model()
        model.compile(mk.optimizers.Adam(0.01), mk.losses.SparseCategoricalCrossentropy(from_logits=True),
                      jit_compile=jit_compile)
        return model, _fit(model, epochs=2)

    graphed, (graphed_history, caught) = fitted(True)
    assert caught == [] and simulated_gpu.stats.graph_launches > 0
    eager, (eager_history, _) = fitted(False)
    # Bit-identical, bfloat16 included: the captured step issues the eager
    # step's own GEMMs (cublas_direct both ways), which replays re-run.
    _assert_same_training(eager, graphed)
    assert graphed_history == eager_history
