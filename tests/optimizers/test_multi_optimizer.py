"""MultiOptimizer and OptimizerMap (Keras 3's): per-step parity with Keras on
a recorded run, Keras's state layout, routing, config and save round trips,
and clear refusals."""
import numpy
import pytest

import minikeras as mk
from minikeras.optimizers import SGD, Adam, LossScaleOptimizer, MultiOptimizer, OptimizerMap
from tests.optimizers.multi_optimizer_case import FIXTURE, STEPS, X, Y, build


@pytest.fixture(scope="module")
def recorded():
    with numpy.load(FIXTURE) as data:
        return {key: data[key] for key in data.files}


def test_matches_keras_step_for_step(recorded):
    model = build(mk)
    for step in range(STEPS):
        model.train_on_batch(X, Y)
        for index, weight in enumerate(model.get_weights()):
            numpy.testing.assert_allclose(weight, recorded[f"step{step}/weight{index}"], rtol=2e-5, atol=2e-6,
                                          err_msg=f"step {step}, weight {index}")
    optimizer = model.optimizer
    assert optimizer.iterations == STEPS and [o.iterations for o in optimizer.optimizers] == [STEPS, STEPS]
    # Keras's variables: own step and rate, then each inner optimizer's step, rate and slots.
    names = ["iteration", "learning_rate"] + [name.split("/")[-1] for name in optimizer.state_names()[1:]]
    assert len(names) == len(recorded["variable_names"])
    assert recorded["variable_names"].tolist() == names  # Keras's: "sequential_head_kernel_momentum"


def test_routing_by_exact_key_then_pattern_then_default():
    adam, sgd, rmsprop = Adam(), SGD(), mk.optimizers.RMSprop()
    mapping = OptimizerMap(rmsprop)
    mapping["encoder/layer_0/dense"] = adam
    mapping["encoder/.*"] = sgd
    mapping["decoder"] = adam
    assert mapping["decoder"] is adam and mapping["encoder/layer_0/dense"] is adam
    assert mapping["encoder/layer_0/attention/query"] is sgd and mapping["decoder/layer_0/dense"] is rmsprop
    mapping["enc.*"] = Adam()
    with pytest.raises(ValueError, match="Multiple optimizers"):
        mapping["encoder/x"]
    with pytest.raises(ValueError, match="already exists"):
        mapping["decoder"] = sgd
    with pytest.raises(ValueError, match="LossScaleOptimizer"):
        mapping["other"] = LossScaleOptimizer(SGD())
    with pytest.raises(TypeError, match="default_optimizer"):
        OptimizerMap("sgd")


def test_a_callable_map_and_the_wrappers_refusals():
    def choose(variable):
        return first if "kernel" in variable.path else second

    first, second = SGD(0.5), SGD(0.0)
    model = mk.Sequential([mk.layers.Input((3,)), mk.layers.Dense(2)])
    bias = model.get_weights()[1].copy()
    optimizer = MultiOptimizer(choose)
    model.compile(optimizer=optimizer, loss="mse")
    model.train_on_batch(X, numpy.ones((8, 2), "float32"))
    numpy.testing.assert_array_equal(model.get_weights()[1], bias)  # the bias's optimizer has rate 0
    assert optimizer.optimizers == [first, second]
    with pytest.raises(AttributeError, match="individual sub-optimizers"):
        optimizer.learning_rate
    with pytest.raises(AttributeError, match="individual sub-optimizers"):
        optimizer.learning_rate = 0.1
    with pytest.raises(TypeError, match="OptimizerMap or a callable"):
        MultiOptimizer(["sgd"])
    bad = MultiOptimizer(lambda variable: "sgd")
    with pytest.raises(ValueError, match="Optimizer instance"):
        bad.build([mk.Variable(numpy.zeros(2, "float32"))])
    with pytest.raises(ValueError, match="without `variables`"):
        MultiOptimizer(OptimizerMap(SGD())).apply([numpy.zeros(2, "float32")])


def test_loss_scale_factor_reaches_every_inner_optimizer():
    mapping = OptimizerMap(SGD(), {"a": Adam()})
    optimizer = MultiOptimizer(mapping, loss_scale_factor=4.0)
    assert [o.loss_scale_factor for o in optimizer.optimizers] == [4.0, 4.0]
    optimizer.loss_scale_factor = 2.0
    assert [o.loss_scale_factor for o in optimizer.optimizers] == [2.0, 2.0]


@pytest.mark.filterwarnings("ignore:No training configuration")
@pytest.mark.parametrize("suffix", [".keras", ".h5"])
def test_config_and_state_survive_a_save(suffix, tmp_path):
    model = build(mk)
    for _ in range(2):
        model.train_on_batch(X, Y)
    config = mk.optimizers.serialize(model.optimizer)
    clone = mk.optimizers.deserialize(config)
    assert isinstance(clone, MultiOptimizer) and [type(o).__name__ for o in clone.optimizers] == ["Adam", "SGD"]
    assert clone.optimizers[1].momentum == 0.9 and clone.optimizers[0].learning_rate == pytest.approx(0.05)
    model.save(tmp_path / f"model{suffix}")
    loaded = mk.models.load_model(tmp_path / f"model{suffix}")
    assert loaded.optimizer.iterations == 2
    for ours, theirs in zip(loaded.optimizer.get_state(), model.optimizer.get_state()):
        numpy.testing.assert_allclose(ours, theirs)
    model.train_on_batch(X, Y)
    loaded.train_on_batch(X, Y)  # resumes exactly where the saved model stood
    for ours, theirs in zip(loaded.get_weights(), model.get_weights()):
        numpy.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-7)


def test_reads_keras_files_and_continues_as_keras(recorded):
    """Keras's .keras file of the model after two steps (optimizer state and
    all) loads here, and the next steps give Keras's recorded weights."""
    from tests.optimizers.multi_optimizer_case import KERAS_FILE

    model = mk.models.load_model(KERAS_FILE)
    assert isinstance(model.optimizer, MultiOptimizer) and model.optimizer.iterations == 2
    for step in range(2, STEPS):
        model.train_on_batch(X, Y)
        for index, weight in enumerate(model.get_weights()):
            numpy.testing.assert_allclose(weight, recorded[f"step{step}/weight{index}"], rtol=2e-5, atol=2e-6)


def test_live_keras_reads_minikeras_files(tmp_path):
    pytest.importorskip("tensorflow")
    keras = pytest.importorskip("keras")
    import warnings

    model = build(mk)
    for _ in range(2):
        model.train_on_batch(X, Y)
    model.save(tmp_path / "model.keras")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # Keras warns when it cannot restore an optimizer's variables
        theirs = keras.models.load_model(tmp_path / "model.keras")
    assert int(theirs.optimizer.iterations) == 2
    theirs.train_on_batch(X, Y)
    model.train_on_batch(X, Y)
    for ours, keras_weight in zip(model.get_weights(), theirs.get_weights()):
        numpy.testing.assert_allclose(ours, keras_weight, rtol=2e-5, atol=2e-6)
