"""Learning rate schedules against their formulas, and in an optimizer."""
import math

import numpy as np
import pytest

import minikeras as mk
from minikeras import optimizers
from minikeras.optimizers import schedules

STEPS = [0, 1, 2, 3, 5, 7, 10, 11, 15, 40]


def test_exponential_decay():
    schedule = schedules.ExponentialDecay(0.1, decay_steps=4, decay_rate=0.5)
    staircase = schedules.ExponentialDecay(0.1, decay_steps=4, decay_rate=0.5, staircase=True)
    for step in STEPS:
        assert schedule(step) == pytest.approx(0.1 * 0.5 ** (step / 4), rel=1e-14)
        assert staircase(step) == pytest.approx(0.1 * 0.5 ** (step // 4), rel=1e-14)
    assert staircase(3) == staircase(0) == 0.1 and staircase(4) == pytest.approx(0.05)


def test_piecewise_constant_decay_boundaries_belong_to_the_left_interval():
    schedule = schedules.PiecewiseConstantDecay([3, 7], [1.0, 0.5, 0.1])
    got = [schedule(step) for step in range(10)]
    assert got == [1.0] * 4 + [0.5] * 4 + [0.1] * 2


def test_inverse_time_decay():
    schedule = schedules.InverseTimeDecay(0.1, decay_steps=2, decay_rate=0.5)
    staircase = schedules.InverseTimeDecay(0.1, decay_steps=2, decay_rate=0.5, staircase=True)
    for step in STEPS:
        assert schedule(step) == pytest.approx(0.1 / (1 + 0.5 * step / 2), rel=1e-14)
        assert staircase(step) == pytest.approx(0.1 / (1 + 0.5 * (step // 2)), rel=1e-14)


def test_polynomial_decay_without_and_with_cycle():
    schedule = schedules.PolynomialDecay(0.1, decay_steps=10, end_learning_rate=0.01, power=2.0)
    cyclic = schedules.PolynomialDecay(0.1, decay_steps=4, end_learning_rate=0.0, power=1.0, cycle=True)
    for step in STEPS:
        capped = min(step, 10)
        assert schedule(step) == pytest.approx((0.1 - 0.01) * (1 - capped / 10) ** 2 + 0.01, rel=1e-14)
        period = 4 * (1 if step == 0 else math.ceil(step / 4))
        assert cyclic(step) == pytest.approx(0.1 * (1 - step / period), rel=1e-14, abs=1e-15)
    assert schedule(1000) == pytest.approx(0.01)
    assert cyclic(4) == pytest.approx(0.0, abs=1e-15) and cyclic(5) == pytest.approx(0.1 * (1 - 5 / 8))


def test_polynomial_decay_default_end_learning_rate():
    assert schedules.PolynomialDecay(0.1, decay_steps=5)(99) == pytest.approx(0.0001)


def test_cosine_decay_without_warmup():
    schedule = schedules.CosineDecay(0.1, decay_steps=10, alpha=0.2)
    for step in STEPS:
        capped = min(step, 10)
        cosine = 0.5 * (1 + math.cos(math.pi * capped / 10))
        assert schedule(step) == pytest.approx(0.1 * ((1 - 0.2) * cosine + 0.2), rel=1e-14)
    assert schedule(0) == pytest.approx(0.1) and schedule(10) == pytest.approx(0.02)


def test_cosine_decay_with_linear_warmup():
    schedule = schedules.CosineDecay(0.0, decay_steps=10, warmup_target=0.5, warmup_steps=4)
    for step in STEPS:
        if step < 4:
            expected = 0.5 * step / 4
        else:
            decay_step = min(step - 4, 10)
            expected = 0.5 * 0.5 * (1 + math.cos(math.pi * decay_step / 10))
        assert schedule(step) == pytest.approx(expected, rel=1e-14, abs=1e-16)
    assert schedule(4) == pytest.approx(0.5) and schedule(14) == pytest.approx(0.0, abs=1e-16)


def test_cosine_decay_restarts():
    schedule = schedules.CosineDecayRestarts(1.0, first_decay_steps=2, t_mul=2.0, m_mul=0.5)
    # Periods: [0, 2), [2, 6), [6, 14); each starts at half the previous peak.
    assert schedule(0) == pytest.approx(1.0)
    assert schedule(1) == pytest.approx(0.5)
    assert schedule(2) == pytest.approx(0.5)
    assert schedule(4) == pytest.approx(0.25)
    assert schedule(6) == pytest.approx(0.25)


def test_step_may_be_a_numpy_scalar_or_tensor():
    schedule = schedules.ExponentialDecay(0.1, decay_steps=4, decay_rate=0.5)
    assert schedule(np.int64(4)) == schedule(mk.Tensor(np.array(4))) == schedule(4)
    with pytest.raises(TypeError, match="ExponentialDecay expects the step to be a number"):
        schedule("four")


@pytest.mark.parametrize("make,match", [
    (lambda: schedules.PiecewiseConstantDecay([1, 2], [1.0, 0.5]), "1 less than the length of values"),
    (lambda: schedules.PiecewiseConstantDecay([1, 2], [1.0, 0.5, 0.1, 0.0]), "1 less than the length of values"),
    (lambda: schedules.PiecewiseConstantDecay([5, 2], [1.0, 0.5, 0.1]), "increase strictly"),
    (lambda: schedules.ExponentialDecay(0.1, decay_steps=0, decay_rate=0.5), "decay_steps` must be > 0"),
    (lambda: schedules.InverseTimeDecay(0.1, decay_steps=-1, decay_rate=0.5), "decay_steps` must be > 0"),
    (lambda: schedules.PolynomialDecay(0.1, decay_steps=0), "decay_steps` must be > 0"),
    (lambda: schedules.CosineDecay(0.1, decay_steps=0), "decay_steps` must be > 0"),
    (lambda: schedules.CosineDecay(0.1, decay_steps=5, warmup_target=1.0, warmup_steps=-2), "warmup_steps"),
    (lambda: schedules.CosineDecayRestarts(0.1, first_decay_steps=0), "first_decay_steps` must be > 0"),
])
def test_bad_arguments(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_non_numeric_arguments_raise_type_error():
    with pytest.raises(TypeError, match="initial_learning_rate"):
        schedules.ExponentialDecay("0.1", decay_steps=5, decay_rate=0.5)


ALL = [
    schedules.ExponentialDecay(0.1, 3, 0.7, staircase=True),
    schedules.PiecewiseConstantDecay([2, 5], [1.0, 0.5, 0.1]),
    schedules.InverseTimeDecay(0.1, 2, 0.5),
    schedules.PolynomialDecay(0.1, 8, 0.01, power=2.0, cycle=True),
    schedules.CosineDecay(0.0, 10, alpha=0.1, warmup_target=0.2, warmup_steps=5),
    schedules.CosineDecayRestarts(0.1, 3, t_mul=1.5, m_mul=0.5, alpha=0.1),
]


@pytest.mark.parametrize("schedule", ALL, ids=[type(s).__name__ for s in ALL])
def test_config_and_serialize_round_trip(schedule):
    copies = [type(schedule).from_config(schedule.get_config()), schedules.deserialize(schedules.serialize(schedule))]
    for copy in copies:
        assert type(copy) is type(schedule) and copy.get_config() == schedule.get_config()
        assert [copy(step) for step in STEPS] == [schedule(step) for step in STEPS]
    assert schedules.serialize(schedule)["class_name"] == type(schedule).__name__


def test_deserialize_unknown_schedule():
    with pytest.raises(ValueError, match="Unknown learning rate schedule 'Nope'.*ExponentialDecay"):
        schedules.deserialize({"class_name": "Nope", "config": {}})


def test_custom_schedule_subclass_in_an_optimizer():
    class Halving(schedules.LearningRateSchedule):
        def __init__(self, start):
            self.start = start

        def __call__(self, step):
            return self.start / 2**step

        def get_config(self):
            return {"start": self.start}

    variable = mk.Tensor(np.zeros(2), requires_grad=True)
    optimizer = optimizers.SGD(learning_rate=Halving(1.0))
    for _ in range(3):
        optimizer.apply_gradients([(np.ones(2), variable)])
    np.testing.assert_allclose(variable.numpy(), -(1 + 0.5 + 0.25))
    config = optimizer.get_config()
    assert config["learning_rate"]["class_name"] == "Halving"
    rebuilt = optimizers.SGD.from_config(config, custom_objects={"Halving": Halving})
    assert rebuilt.learning_rate == 1.0


def test_base_schedule_must_be_subclassed():
    with pytest.raises(NotImplementedError, match="must override `__call__"):
        schedules.LearningRateSchedule()(0)


def test_optimizer_uses_the_schedule_value_at_each_iteration():
    schedule = schedules.PiecewiseConstantDecay([1, 2], [1.0, 0.1, 0.01])
    variable = mk.Tensor(np.zeros(1), requires_grad=True)
    optimizer = optimizers.SGD(learning_rate=schedule)
    seen = []
    for _ in range(4):
        seen.append(optimizer.learning_rate)
        optimizer.apply_gradients([(np.ones(1), variable)])
    # Steps 0 and 1 are <= boundary 1 (1.0), step 2 is <= boundary 2 (0.1), step 3 is past it (0.01).
    assert seen == [1.0, 1.0, 0.1, 0.01]
    np.testing.assert_allclose(variable.numpy(), [-(1.0 + 1.0 + 0.1 + 0.01)])


# --- array and Tensor steps (Keras accepts them: schedule(np.arange(n))) ---

@pytest.mark.parametrize("schedule", [
    schedules.ExponentialDecay(0.1, 10, 0.5, staircase=True),
    schedules.InverseTimeDecay(0.1, 10, 0.5),
    schedules.PolynomialDecay(0.1, 20, end_learning_rate=0.01),
    schedules.CosineDecay(0.1, 20, warmup_target=0.2, warmup_steps=5),
    schedules.CosineDecayRestarts(0.1, 7),
    schedules.PiecewiseConstantDecay([5, 15], [0.1, 0.05, 0.01]),
], ids=lambda schedule: type(schedule).__name__)
def test_array_and_tensor_steps_match_scalar_steps(schedule):
    import minikeras as mk

    steps = np.arange(0, 30, 3)
    expected = np.array([schedule(int(step)) for step in steps])
    from_array = schedule(steps)
    assert isinstance(from_array, np.ndarray) and from_array.shape == steps.shape
    np.testing.assert_allclose(from_array, expected)
    np.testing.assert_allclose(schedule(mk.tensor(steps)), expected)
    np.testing.assert_allclose(schedule(steps.reshape(2, 5)), expected.reshape(2, 5))
    assert isinstance(schedule(mk.tensor(9)), float)


def test_user_schedule_gets_array_steps_too():
    class Halving(schedules.LearningRateSchedule):
        def __call__(self, step):
            return 1.0 / 2 ** step

        def get_config(self):
            return {}

    np.testing.assert_allclose(Halving()(np.arange(3)), [1.0, 0.5, 0.25])
    assert Halving()(2) == 0.25
