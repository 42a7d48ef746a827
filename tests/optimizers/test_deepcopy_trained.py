"""``copy.deepcopy`` of a compiled, trained model, and of an optimizer.

As in Keras 3 (whose deep copy of a compiled, trained model trains on, with
its own optimizer), the copy's optimizer is its own: built for the copy's
weights, holding copies of the original's slots and step count. So the copy
and the original, trained on the same batches from there, reach the same
weights bit for bit, and training one leaves the other alone.
"""
import copy

import numpy
import pytest

import minikeras as mk
from minikeras import layers, optimizers

BATCH = 8
OPTIMIZERS = {
    "sgd": lambda: optimizers.SGD(0.05, momentum=0.9),
    "adam": lambda: optimizers.Adam(0.01),
    "adamw": lambda: optimizers.AdamW(0.01, weight_decay=0.1),
    "rmsprop": lambda: optimizers.RMSprop(0.01, momentum=0.5),
}


def _data():
    rng = numpy.random.default_rng(3)
    return rng.normal(size=(32, 4)).astype("float32"), rng.normal(size=(32, 3)).astype("float32")


def _model(kind):
    mk.random.seed(0)
    if kind == "sequential":
        return mk.Sequential([layers.Input((4,)), layers.Dense(6, activation="tanh"), layers.Dense(3)])
    inputs = layers.Input((4,))
    hidden = layers.Dense(6, activation="tanh")(inputs)
    return mk.Model(inputs, layers.Dense(3)(hidden))


def _fit(model, epochs=1):
    x, y = _data()
    model.fit(x, y, batch_size=BATCH, epochs=epochs, shuffle=False, verbose=0)


def _snapshot(model):
    return model.get_weights(), model.optimizer.get_state()


def _assert_equal_arrays(first, second):
    assert len(first) == len(second)
    for a, b in zip(first, second):
        numpy.testing.assert_array_equal(a, b)


def _assert_trains_on_like_the_original(model):
    """Deep-copy a trained model, check the copy's optimizer is its own copy,
    then train both one more epoch: the same weights and optimizer state."""
    before = _snapshot(model)
    clone = copy.deepcopy(model)
    assert clone.optimizer is not model.optimizer
    assert clone.optimizer.iterations == model.optimizer.iterations
    assert isinstance(clone.optimizer._iterations, int)  # a host count: no device read per step
    assert clone.optimizer._trainable_variables[0] is clone.trainable_variables[0]
    _assert_equal_arrays(clone.optimizer.get_state(), before[1])
    _fit(clone)
    for original, now in zip(before, _snapshot(model)):  # training the copy left the original alone
        _assert_equal_arrays(original, now)
    _fit(model)
    _assert_equal_arrays(model.get_weights(), clone.get_weights())
    _assert_equal_arrays(model.optimizer.get_state(), clone.optimizer.get_state())
    assert not numpy.array_equal(model.get_weights()[0], before[0][0])  # both trained
    return clone


@pytest.mark.parametrize("kind", ["sequential", "functional"])
@pytest.mark.parametrize("optimizer", sorted(OPTIMIZERS))
@pytest.mark.parametrize("jit_compile, steps_per_execution", [(False, 1), (True, 1), (False, 3), (True, 3)])
def test_a_deep_copy_of_a_trained_model_trains_on_like_the_original(
        device, kind, optimizer, jit_compile, steps_per_execution):
    model = _model(kind)
    model.compile(OPTIMIZERS[optimizer](), "mse", jit_compile=jit_compile, steps_per_execution=steps_per_execution)
    _fit(model)
    clone = _assert_trains_on_like_the_original(model)
    if jit_compile and device.canonical.startswith("gpu"):  # the copy replays graphs of its own buffers
        assert clone._captured_step.refusal is None and clone._captured_step.graphs
        assert model._captured_step.refusal is None and model._captured_step.graphs


def test_the_copy_of_a_graphed_model_captures_its_own_graphs(simulated_gpu):
    model = _model("sequential")
    model.compile(optimizers.Adam(0.01), "mse", jit_compile=True)
    _fit(model)
    assert len(model._captured_step.graphs) == 1
    clone = _assert_trains_on_like_the_original(model)
    assert clone._captured_step.model is clone
    assert len(clone._captured_step.graphs) == 1


def test_a_copy_taken_by_a_callback_during_fit_trains_on():
    # The "keep the best model" pattern: copy.deepcopy(self.model) mid-fit.
    class Snapshot(mk.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            if epoch == 1:
                self.copy = copy.deepcopy(self.model)

    def compiled():
        model = _model("sequential")
        model.compile(optimizers.Adam(0.01), "mse", jit_compile=True, steps_per_execution=2)
        return model

    model, reference, snapshot = compiled(), compiled(), Snapshot()
    x, y = _data()
    model.fit(x, y, batch_size=BATCH, epochs=3, shuffle=False, verbose=0, callbacks=[snapshot])
    _fit(reference, epochs=2)
    _assert_equal_arrays(reference.get_weights(), snapshot.copy.get_weights())
    assert snapshot.copy.optimizer.iterations == reference.optimizer.iterations == 8
    _fit(snapshot.copy)
    _assert_equal_arrays(model.get_weights(), snapshot.copy.get_weights())


class _Subclassed(mk.Model):
    def __init__(self):
        super().__init__()
        self.hidden = layers.Dense(6, activation="tanh")
        self.head = layers.Dense(3)

    def call(self, inputs):
        return self.head(self.hidden(inputs))


def test_a_subclassed_model_copy_trains_on():
    mk.random.seed(0)
    model = _Subclassed()
    model.compile(optimizers.Adam(0.01), "mse")
    _fit(model)
    _assert_trains_on_like_the_original(model)


@pytest.mark.parametrize("setting", ["amsgrad", "ema", "accumulation", "nadam"])
def test_optimizer_wide_state_is_copied(setting):
    make = {"amsgrad": lambda: optimizers.Adam(0.01, amsgrad=True),
            "ema": lambda: optimizers.SGD(0.05, momentum=0.9, use_ema=True, ema_overwrite_frequency=3),
            "accumulation": lambda: optimizers.Adam(0.01, gradient_accumulation_steps=3),
            "nadam": lambda: optimizers.Nadam(0.01)}[setting]
    model = _model("sequential")
    model.compile(make(), "mse")
    _fit(model)
    _assert_trains_on_like_the_original(model)


@pytest.mark.parametrize("trained", [False, True])
def test_weight_decay_exclusions_follow_the_copied_variables(trained):
    model = _model("sequential")
    optimizer = optimizers.AdamW(0.05, weight_decay=0.5)
    optimizer.exclude_from_weight_decay(var_list=[model.layers[0].kernel])
    model.compile(optimizer, "mse")
    if trained:
        _fit(model)
    clone = copy.deepcopy(model)
    assert not clone.optimizer._use_weight_decay(clone.layers[0].kernel)
    assert clone.optimizer._use_weight_decay(clone.layers[1].kernel)
    _fit(clone)
    _fit(model)
    _assert_equal_arrays(model.get_weights(), clone.get_weights())


def test_an_unbuilt_optimizer_copied_alone_still_excludes_the_models_variables():
    # Nothing copied its variables, so the copy refers to the same ones (as
    # the snapshot of an optimizer's attributes taken before its first step must).
    model = _model("sequential")
    kernel = model.layers[0].kernel
    optimizer = optimizers.AdamW(0.05, weight_decay=0.5)
    optimizer.exclude_from_weight_decay(var_list=[kernel])
    copied = copy.deepcopy(optimizer)
    assert not copied._use_weight_decay(kernel)
    assert copied._use_weight_decay(model.layers[1].kernel)
    copied.build(model.trainable_variables)
    twice = copy.deepcopy(copied)  # built: its variables are copied, and the exclusion follows them
    assert not twice._use_weight_decay(twice._trainable_variables[0])
    assert twice._use_weight_decay(twice._trainable_variables[2])
    assert twice._use_weight_decay(kernel)


def test_a_multi_optimizer_copy_routes_the_copied_variables():
    model = _model("sequential")
    mapping = optimizers.OptimizerMap(optimizers.SGD(0.1, momentum=0.9),
                                      {f"{model.name}/{model.layers[1].name}/.*": optimizers.Adam(0.05)})  # Keras's path
    model.compile(optimizers.MultiOptimizer(mapping), "mse")
    _fit(model)
    clone = _assert_trains_on_like_the_original(model)
    adam, sgd = clone.optimizer.optimizers
    assert type(adam) is optimizers.Adam and type(sgd) is optimizers.SGD
    assert all(a is not b for a, b in zip(clone.optimizer.optimizers, model.optimizer.optimizers))
    head = clone.layers[1]
    assert [id(v) for v in adam._trainable_variables] == [id(head.kernel), id(head.bias)]


def _variables_and_grads(seed):
    rng = numpy.random.default_rng(seed)
    variables = [mk.Variable(rng.normal(size=shape).astype("float32"), name=f"w{i}")
                 for i, shape in enumerate([(3, 2), (2,)])]
    grads = [[rng.normal(size=v.shape).astype("float32") for v in variables] for _ in range(3)]
    return variables, grads


def test_a_built_optimizer_copied_with_its_variables_steps_like_the_original():
    variables, grads = _variables_and_grads(0)
    optimizer = optimizers.Adam(0.1)
    optimizer.apply(grads[0], variables)
    copied_variables, copied = copy.deepcopy((variables, optimizer))
    assert copied.iterations == 1 and copied._trainable_variables == copied_variables
    for step in grads[1:]:
        optimizer.apply(step, variables)
        copied.apply(step, copied_variables)
    _assert_equal_arrays([v.numpy() for v in variables], [v.numpy() for v in copied_variables])
    _assert_equal_arrays(optimizer.get_state(), copied.get_state())


def test_a_copied_optimizer_alone_is_built_for_copies_of_its_variables():
    variables, grads = _variables_and_grads(1)
    optimizer = optimizers.SGD(0.1, momentum=0.9)
    optimizer.apply(grads[0], variables)
    copied = copy.deepcopy(optimizer)
    copied.apply(grads[1])  # its own variables, the copies
    assert optimizer.iterations == 1 and copied.iterations == 2
    _assert_equal_arrays(optimizer.get_state()[1:], [numpy.asarray(-0.1 * g) for g in grads[0]])
    with pytest.raises(ValueError, match="unknown variable 'w0'"):
        copied.apply(grads[1], variables)  # the original's variables are not the copy's


def test_an_unbuilt_optimizer_and_an_uncompiled_model_copy_as_before():
    optimizer = optimizers.Adam(0.01)
    copied = copy.deepcopy(optimizer)
    assert not copied.built and copied.get_config() == optimizer.get_config()
    model = _model("functional")
    clone = copy.deepcopy(model)
    _assert_equal_arrays(model.get_weights(), clone.get_weights())
    clone.compile(copied, "mse")
    _fit(clone)
    assert copied.built and not optimizer.built and copied.iterations == len(_data()[0]) // BATCH


def test_a_loss_scaled_mixed_precision_model_copies_its_scale_and_inner_optimizer():
    mk.mixed_precision.set_global_policy("mixed_float16")
    try:
        model = mk.Sequential([layers.Input((4,)), layers.Dense(6), layers.Dense(3, dtype="float32")])
        model.compile(optimizers.Adam(0.01), "mse")
    finally:
        mk.mixed_precision.set_global_policy("float32")
    _fit(model)
    assert isinstance(model.optimizer, optimizers.LossScaleOptimizer)
    clone = _assert_trains_on_like_the_original(model)
    assert clone.optimizer.inner_optimizer is not model.optimizer.inner_optimizer
    assert clone.optimizer.inner_optimizer.iterations == model.optimizer.inner_optimizer.iterations
