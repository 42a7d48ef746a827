"""Issue 25's optimizers (Lion, Lamb, Ftrl, Adafactor) step for step against
the trajectories recorded from Keras 3.15 over 20 steps; their state layout,
configs, bad arguments, and training a model."""
import numpy
import pytest

import minikeras as mk
from minikeras import optimizers
from tests.optimizers.keras_blocks_cases import CASES, FIXTURE, SHAPES, STEPS


@pytest.fixture(scope="module")
def recorded():
    with numpy.load(FIXTURE) as data:
        return dict(data)


def _variables(recorded):
    return [mk.Tensor(recorded[f"weights/{i}"].copy(), requires_grad=True) for i in range(len(SHAPES))]


@pytest.mark.parametrize("case", sorted(CASES))
def test_optimizer_matches_keras_step_for_step(recorded, case):
    class_name, kwargs = CASES[case]
    variables = _variables(recorded)
    optimizer = getattr(optimizers, class_name)(**kwargs)
    for step in range(STEPS):
        grads = [recorded[f"grads/{step}/{i}"] for i in range(len(SHAPES))]
        optimizer.apply_gradients(zip(grads, variables))
        for i, variable in enumerate(variables):
            assert variable.dtype == numpy.float32
            numpy.testing.assert_allclose(variable.numpy(), recorded[f"{case}/{step}/{i}"], rtol=2e-5, atol=2e-6,
                                          err_msg=f"{case}: variable {i} after step {step + 1}")
    assert optimizer.iterations == STEPS
    shapes = [str(tuple(array.shape)) for array in optimizer.variables[1:]]
    assert shapes == list(recorded[f"{case}/state_shapes"])  # Keras's slot layout, for saved files


@pytest.mark.parametrize("case", sorted(CASES))
def test_optimizer_state_and_config_round_trip(recorded, case):
    class_name, kwargs = CASES[case]
    variables = _variables(recorded)
    optimizer = getattr(optimizers, class_name)(**kwargs)
    for step in range(3):
        optimizer.apply_gradients(zip([recorded[f"grads/{step}/{i}"] for i in range(len(SHAPES))], variables))
    clone = optimizers.deserialize(optimizers.serialize(optimizer))
    assert type(clone) is type(optimizer) and clone.get_config() == optimizer.get_config()
    twins = [mk.Tensor(v.numpy().copy(), requires_grad=True) for v in variables]
    clone.build(twins)
    clone.set_state(optimizer.get_state())
    grads = [recorded[f"grads/3/{i}"] for i in range(len(SHAPES))]
    optimizer.apply_gradients(zip(grads, variables))
    clone.apply_gradients(zip(grads, twins))
    for mine, twin in zip(variables, twins):
        numpy.testing.assert_array_equal(mine.numpy(), twin.numpy())


def test_keras_default_configs():
    config = optimizers.Lion().get_config()
    assert (config["name"], config["learning_rate"], config["beta_1"], config["beta_2"]) == ("lion", 0.001, 0.9, 0.99)
    config = optimizers.Adafactor().get_config()
    assert {k: config[k] for k in ("beta_2_decay", "epsilon_1", "epsilon_2", "clip_threshold", "relative_step")} == {
        "beta_2_decay": -0.8, "epsilon_1": 1e-30, "epsilon_2": 1e-3, "clip_threshold": 1.0, "relative_step": True}
    config = optimizers.Ftrl().get_config()
    assert config["learning_rate_power"] == -0.5 and config["initial_accumulator_value"] == 0.1
    assert isinstance(optimizers.get("lamb"), optimizers.Lamb)


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="SignSGD"):
        optimizers.Lion(beta_1=0.0)
    with pytest.raises(ValueError, match="learning_rate_power"):
        optimizers.Ftrl(learning_rate_power=0.5)
    with pytest.raises(ValueError, match="l1_regularization_strength"):
        optimizers.Ftrl(l1_regularization_strength=-1.0)
    with pytest.raises(ValueError, match="beta_2"):
        optimizers.Lamb(beta_2=1.5)


@pytest.mark.parametrize("name", ["lion", "lamb", "ftrl", "adafactor", "muon", "schedulefreeadamw"])
def test_optimizer_trains_a_model(name):
    rng = numpy.random.default_rng(0)
    x = rng.normal(size=(64, 4)).astype("float32")
    y = (x @ numpy.array([[1.0], [-2.0], [0.5], [0.0]], "float32")).astype("float32")
    model = mk.Sequential([mk.layers.Input((4,)), mk.layers.Dense(8, activation="relu"), mk.layers.Dense(1)])
    rates = {"lion": 0.01, "lamb": 0.02, "ftrl": 0.5, "adafactor": 0.05, "muon": 0.02, "schedulefreeadamw": 0.02}
    model.compile(optimizers.get({"class_name": name, "config": {"learning_rate": rates[name]}}), "mse")
    first = model.evaluate(x, y, verbose=0)
    model.fit(x, y, epochs=15, batch_size=16, verbose=0)
    assert model.evaluate(x, y, verbose=0) < 0.5 * first
