"""The Optimizer base: apply/apply_gradients, learning rate, state, config,
get/serialize, weight decay, EMA, gradient accumulation, errors."""

import numpy as np
import pytest

import minikeras as mk
from minikeras import optimizers

ALL_NAMES = ["sgd", "adam", "adamw", "rmsprop", "adagrad", "adadelta", "nadam", "adamax"]
# Configurations that create every kind of slot.
STATEFUL = [
    optimizers.SGD(learning_rate=0.05, momentum=0.9, nesterov=True),
    optimizers.Adam(learning_rate=0.01, amsgrad=True),
    optimizers.AdamW(learning_rate=0.01),
    optimizers.RMSprop(learning_rate=0.01, momentum=0.5, centered=True),
    optimizers.Adagrad(learning_rate=0.1),
    optimizers.Adadelta(learning_rate=1.0),
    optimizers.Nadam(learning_rate=0.01),
    optimizers.Adamax(learning_rate=0.01),
    optimizers.Adam(learning_rate=0.01, use_ema=True, ema_overwrite_frequency=2, gradient_accumulation_steps=2),
]
STATEFUL_CONFIGS = [(type(o), o.get_config()) for o in STATEFUL]
STATEFUL_IDS = [f"{cls.__name__}-{i}" for i, (cls, _) in enumerate(STATEFUL_CONFIGS)]


def new_variables(rng, dtype="float32"):
    return [
        mk.Tensor(rng.normal(size=(4, 3)).astype(dtype), requires_grad=True, name="kernel"),
        mk.Tensor(rng.normal(size=(3,)).astype(dtype), requires_grad=True, name="bias"),
    ]


def gradient_stream(seed, steps, dtype="float32"):
    rng = np.random.default_rng(seed)
    return [[rng.normal(size=(4, 3)).astype(dtype), rng.normal(size=(3,)).astype(dtype)] for _ in range(steps)]


# ------------------------------------------------------------------ state
@pytest.mark.parametrize("cls,config", STATEFUL_CONFIGS, ids=STATEFUL_IDS)
def test_save_restore_continue_is_bit_identical(cls, config, rng):
    grads = gradient_stream(1, 10)
    start = [v.numpy().copy() for v in new_variables(rng)]

    uninterrupted = [mk.Tensor(w.copy(), requires_grad=True) for w in start]
    optimizer = cls.from_config(config)
    for step_grads in grads:
        optimizer.apply_gradients(zip(step_grads, uninterrupted))

    first = [mk.Tensor(w.copy(), requires_grad=True) for w in start]
    optimizer = cls.from_config(config)
    for step_grads in grads[:5]:
        optimizer.apply_gradients(zip(step_grads, first))
    saved_state = optimizer.get_state()
    saved_weights = [v.numpy().copy() for v in first]
    for step_grads in grads[5:7]:  # the first run goes on and must not disturb the snapshot
        optimizer.apply_gradients(zip(step_grads, first))

    resumed = [mk.Tensor(w.copy(), requires_grad=True) for w in saved_weights]
    fresh = cls.from_config(config)
    fresh.build(resumed)
    fresh.set_state(saved_state)
    assert fresh.get_state()[0] == optimizer.get_state()[0] - 2
    for step_grads in grads[5:]:
        fresh.apply_gradients(zip(step_grads, resumed))
    for resumed_variable, reference in zip(resumed, uninterrupted):
        assert np.array_equal(resumed_variable.numpy(), reference.numpy())
    assert [a.dtype for a in fresh.get_state()] == [a.dtype for a in saved_state]


def test_state_order_and_names(rng):
    optimizer = optimizers.Adam(amsgrad=True)
    variables = new_variables(rng)
    optimizer.build(variables)
    assert optimizer.state_names() == [
        "iteration", "kernel_momentum", "kernel_velocity", "bias_momentum", "bias_velocity",
        "kernel_velocity_hat", "bias_velocity_hat",
    ]
    state = optimizer.get_state()
    assert [a.shape for a in state] == [(), (4, 3), (4, 3), (3,), (3,), (4, 3), (3,)]
    assert state[0].dtype == np.int64 and all(isinstance(a, np.ndarray) for a in state)
    assert len(optimizer.variables) == len(state)


def test_get_state_returns_copies(rng):
    optimizer = optimizers.Adagrad()
    variables = new_variables(rng)
    optimizer.apply_gradients(zip(gradient_stream(0, 1)[0], variables))
    state = optimizer.get_state()
    state[1][...] = 123.0
    assert not np.any(optimizer.get_state()[1] == 123.0)


def test_set_state_rejects_wrong_count_and_shapes(rng):
    optimizer = optimizers.Adam()
    variables = new_variables(rng)
    optimizer.build(variables)
    state = optimizer.get_state()
    with pytest.raises(ValueError, match=r"expects 5 arrays \(iteration, kernel_momentum.*received 4"):
        optimizer.set_state(state[:-1])
    bad = list(state)
    bad[3] = np.zeros((4, 3), np.float32)
    with pytest.raises(ValueError, match=r"entry 3 \('bias_momentum'\) expects shape \(3,\), received \(4, 3\)"):
        optimizer.set_state(bad)
    with pytest.raises(ValueError, match="iteration"):
        optimizer.set_state([np.array(-1)] + state[1:])
    # A failed set_state leaves the state untouched.
    assert all(np.array_equal(a, b) for a, b in zip(optimizer.get_state(), state))


def test_set_state_before_build_explains_what_to_do(rng):
    built = optimizers.SGD(momentum=0.9)
    built.build(new_variables(rng))
    with pytest.raises(ValueError, match=r"not been built.*optimizer.build\(variables\)"):
        optimizers.SGD(momentum=0.9).set_state(built.get_state())
    counter_only = optimizers.SGD()
    counter_only.set_state([np.array(7)])
    assert counter_only.iterations == 7


# ------------------------------------------------------------ learning rate
def test_learning_rate_setter_takes_effect_on_the_next_step():
    variable = mk.Tensor(np.zeros(1), requires_grad=True)
    optimizer = optimizers.SGD(learning_rate=0.1)
    optimizer.apply_gradients([(np.ones(1), variable)])
    optimizer.learning_rate = 0.01
    assert optimizer.learning_rate == 0.01 and isinstance(optimizer.learning_rate, float)
    optimizer.apply_gradients([(np.ones(1), variable)])
    np.testing.assert_allclose(variable.numpy(), [-0.11])
    assert optimizer.get_config()["learning_rate"] == 0.01


def test_learning_rate_accepts_schedules_numpy_scalars_and_callables():
    optimizer = optimizers.Adam()
    optimizer.learning_rate = np.float32(0.5)
    assert optimizer.learning_rate == 0.5
    optimizer.learning_rate = optimizers.schedules.ExponentialDecay(1.0, 1, 0.5)
    assert optimizer.learning_rate == 1.0
    optimizer = optimizers.SGD(learning_rate=lambda: 0.25)
    assert optimizer.learning_rate == 0.25


def test_learning_rate_of_a_schedule_optimizer_is_not_settable_to_a_number():
    optimizer = optimizers.SGD(learning_rate=optimizers.schedules.ExponentialDecay(1.0, 1, 0.5))
    with pytest.raises(TypeError, match="not settable"):
        optimizer.learning_rate = 0.1


@pytest.mark.parametrize("bad", ["0.1", None, True, [0.1]])
def test_bad_learning_rate(bad):
    with pytest.raises(ValueError, match="learning_rate"):
        optimizers.Adam(learning_rate=bad)


# -------------------------------------------------------------- apply API
def test_apply_gradients_accepts_tensors_arrays_and_generators(rng):
    variables = new_variables(rng, "float64")
    twin = [mk.Tensor(v.numpy().copy(), requires_grad=True) for v in variables]
    grads = gradient_stream(2, 1, "float64")[0]
    opt_a, opt_b = optimizers.Adam(), optimizers.Adam()
    assert opt_a.apply_gradients((g, v) for g, v in zip([mk.Tensor(g) for g in grads], variables)) == 1
    opt_b.apply(grads, twin)
    for a, b in zip(variables, twin):
        assert np.array_equal(a.numpy(), b.numpy())
    opt_b.apply(grads)  # once built, the variables may be left out
    assert opt_b.iterations == 2


def test_gradients_of_another_dtype_are_cast_to_the_variable_dtype(rng):
    variable = mk.Tensor(np.zeros(3, np.float32), requires_grad=True)
    optimizers.SGD(learning_rate=0.1).apply_gradients([(np.ones(3, np.float64), variable)])
    assert variable.dtype == np.float32
    np.testing.assert_allclose(variable.numpy(), -0.1)


def test_backward_then_step_on_real_gradients():
    w = mk.Tensor(np.array([1.0, -2.0], np.float32), requires_grad=True)
    (w * w).sum().backward()
    optimizers.SGD(learning_rate=0.25).apply_gradients([(w.grad, w)])
    np.testing.assert_allclose(w.numpy(), [0.5, -1.0])


def test_none_gradient_skips_that_variable_with_a_warning(rng):
    variables = new_variables(rng)
    before = [v.numpy().copy() for v in variables]
    optimizer = optimizers.Adam()
    with pytest.warns(UserWarning, match="Gradients do not exist for variables.*bias"):
        optimizer.apply_gradients([(np.ones((4, 3), np.float32), variables[0]), (None, variables[1])])
    assert not np.array_equal(variables[0].numpy(), before[0])
    assert np.array_equal(variables[1].numpy(), before[1])
    assert optimizer.iterations == 1
    bias_momentum = optimizer.get_state()[3]
    assert not bias_momentum.any()


def test_errors(rng):
    variables = new_variables(rng)
    optimizer = optimizers.Adam()
    with pytest.raises(ValueError, match="no gradients provided for any variable"):
        optimizer.apply_gradients([(None, variables[0]), (None, variables[1])])
    with pytest.raises(ValueError, match="must already be built"):
        optimizers.Adam().apply([np.ones((4, 3))])
    with pytest.raises(ValueError, match=r"gradient of 'kernel' \(shape \(4, 3\)\) has shape \(3, 4\)"):
        optimizer.apply_gradients([(np.ones((3, 4)), variables[0])])
    optimizer.apply_gradients([(np.ones((4, 3)), variables[0])])
    stranger = mk.Tensor(np.zeros(2, np.float32), requires_grad=True, name="stranger")
    with pytest.raises(ValueError, match="unknown variable 'stranger'.*recreate a new optimizer"):
        optimizer.apply_gradients([(np.ones(2), stranger)])
    with pytest.raises(ValueError, match="match the optimizer's variables one to one"):
        optimizer.apply([np.ones((4, 3))] * 3)
    with pytest.raises(TypeError, match="updates minikeras Tensors"):
        optimizers.SGD().apply_gradients([(np.ones(2), np.zeros(2))])
    with pytest.raises(ValueError, match="not recognized"):
        optimizers.Adam(betas=(0.9, 0.99))
    with pytest.raises(ValueError, match="momentum"):
        optimizers.SGD(momentum=1.5)
    with pytest.raises(ValueError, match="beta_1"):
        optimizers.Adam(beta_1=-0.1)
    with pytest.raises(ValueError, match="weight_decay"):
        optimizers.AdamW(weight_decay=None)
    with pytest.raises(ValueError, match="initial_accumulator_value"):
        optimizers.Adagrad(initial_accumulator_value=-1.0)
    with pytest.raises(ValueError, match="gradient_accumulation_steps"):
        optimizers.SGD(gradient_accumulation_steps=1)


def test_empty_gradient_list_is_a_no_op():
    optimizer = optimizers.SGD()
    optimizer.apply_gradients([])
    optimizer.apply([], [])
    assert optimizer.iterations == 0


# ----------------------------------------------------------- weight decay
def test_weight_decay_is_decoupled_and_can_exclude_variables(rng):
    kernel, bias = new_variables(rng, "float64")
    k0, b0 = kernel.numpy().copy(), bias.numpy().copy()
    optimizer = optimizers.SGD(learning_rate=0.1, weight_decay=0.5)
    optimizer.exclude_from_weight_decay(var_names=["bias"])
    optimizer.apply_gradients([(np.zeros((4, 3)), kernel), (np.zeros(3), bias)])
    np.testing.assert_allclose(kernel.numpy(), k0 - k0 * 0.5 * 0.1, rtol=1e-15)
    np.testing.assert_array_equal(bias.numpy(), b0)
    with pytest.raises(ValueError, match="before build"):
        optimizer.exclude_from_weight_decay(var_list=[kernel])


# ------------------------------------------------------ EMA, accumulation
def test_ema_tracks_the_weights_and_finalize_overwrites_them():
    w = mk.Tensor(np.array([0.0]), requires_grad=True)
    optimizer = optimizers.SGD(learning_rate=1.0, use_ema=True, ema_momentum=0.5)
    history = []
    for _ in range(3):
        optimizer.apply_gradients([(np.array([-1.0]), w)])
        history.append(w.numpy()[0])
    assert history == [1.0, 2.0, 3.0]
    # average: step 0 copies (1.0), then 0.5 * avg + 0.5 * w: 1.5, 2.25.
    optimizer.finalize_variable_values([w])
    np.testing.assert_allclose(w.numpy(), [2.25])


def test_gradient_accumulation_updates_every_n_calls_with_the_mean():
    w = mk.Tensor(np.array([0.0]), requires_grad=True)
    optimizer = optimizers.SGD(learning_rate=1.0, gradient_accumulation_steps=3)
    for grad in (1.0, 2.0):
        optimizer.apply_gradients([(np.array([grad]), w)])
        assert w.numpy()[0] == 0.0
    optimizer.apply_gradients([(np.array([6.0]), w)])
    np.testing.assert_allclose(w.numpy(), [-3.0])
    assert optimizer.iterations == 1


def test_loss_scale_factor_divides_the_gradients():
    w = mk.Tensor(np.array([0.0]), requires_grad=True)
    optimizer = optimizers.SGD(learning_rate=1.0, loss_scale_factor=8.0)
    assert optimizer.scale_loss(2.0) == 16.0
    optimizer.apply_gradients([(np.array([8.0]), w)])
    np.testing.assert_allclose(w.numpy(), [-1.0])


# ------------------------------------------------ get, config, serialize
@pytest.mark.parametrize("name", ALL_NAMES)
def test_get_by_name_gives_keras_defaults(name):
    optimizer = optimizers.get(name)
    assert type(optimizer) is type(optimizers.get(type(optimizer).__name__))
    expected = 0.01 if name == "sgd" else 0.001
    assert optimizer.learning_rate == pytest.approx(expected)
    assert optimizers.get(optimizer) is optimizer


def test_keras_default_hyperparameters():
    adam = optimizers.Adam()
    assert (adam.beta_1, adam.beta_2, adam.epsilon, adam.amsgrad, adam.name) == (0.9, 0.999, 1e-7, False, "adam")
    assert optimizers.AdamW().weight_decay == 0.004
    rms = optimizers.RMSprop()
    assert (rms.rho, rms.momentum, rms.epsilon, rms.centered) == (0.9, 0.0, 1e-7, False)
    assert (optimizers.Adagrad().initial_accumulator_value, optimizers.Adagrad().epsilon) == (0.1, 1e-7)
    assert (optimizers.Adadelta().rho, optimizers.Adadelta().epsilon) == (0.95, 1e-7)
    sgd = optimizers.SGD()
    assert (sgd.momentum, sgd.nesterov, sgd.name) == (0.0, False, "SGD")


def test_get_unknown_name_lists_the_known_ones():
    with pytest.raises(ValueError, match="Unknown optimizer 'adamm'.*Adam, AdamW.*SGD"):
        optimizers.get("adamm")
    with pytest.raises(ValueError, match="Could not interpret optimizer identifier"):
        optimizers.get(42)
    assert optimizers.get(None) is None


@pytest.mark.parametrize("cls,config", STATEFUL_CONFIGS, ids=STATEFUL_IDS)
def test_config_round_trip(cls, config):
    optimizer = cls.from_config(config)
    assert optimizer.get_config() == config
    copy = optimizers.deserialize(optimizers.serialize(optimizer))
    assert type(copy) is cls and copy.get_config() == config
    copy = optimizers.get({"class_name": cls.__name__.upper(), "config": config})
    assert type(copy) is cls


def test_config_with_a_schedule_round_trips():
    schedule = optimizers.schedules.CosineDecay(0.1, 100, warmup_target=0.5, warmup_steps=10)
    optimizer = optimizers.Nadam(learning_rate=schedule, clipnorm=1.0)
    config = optimizers.serialize(optimizer)
    assert config["config"]["learning_rate"]["class_name"] == "CosineDecay"
    copy = optimizers.deserialize(config)
    assert isinstance(copy._learning_rate, optimizers.schedules.CosineDecay)
    assert copy.get_config() == optimizer.get_config()


def test_decay_argument_is_ignored_with_a_warning():
    with pytest.warns(UserWarning, match="`decay` is no longer supported"):
        optimizers.SGD(decay=0.1)


# ------------------------------------------------------------ GPU devices
@pytest.mark.gpu
def test_state_lives_on_the_gpu_and_matches_the_cpu(rng):
    weights = [rng.normal(size=(64, 32)).astype(np.float32), rng.normal(size=(32,)).astype(np.float32)]
    grads = [[rng.normal(size=w.shape).astype(np.float32) for w in weights] for _ in range(4)]
    cpu_vars = [mk.Tensor(w.copy(), requires_grad=True, device="cpu:0") for w in weights]
    gpu_vars = [mk.Tensor(w.copy(), requires_grad=True, device="gpu:0") for w in weights]
    cpu_opt, gpu_opt = optimizers.Adam(learning_rate=0.01, clipnorm=1.0), optimizers.Adam(learning_rate=0.01, clipnorm=1.0)
    for step_grads in grads:
        cpu_opt.apply_gradients(zip(step_grads, cpu_vars))
        gpu_opt.apply_gradients(zip([mk.Tensor(g, device="gpu:0") for g in step_grads], gpu_vars))
    for slot in gpu_opt.variables[1:]:
        assert gpu_vars[0].device.is_array(slot)
    for a, b in zip(cpu_vars, gpu_vars):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-5, atol=1e-6)
    # Gradients given as host arrays are moved to the variable's device.
    gpu_opt.apply_gradients(zip(grads[0], gpu_vars))
    restored = optimizers.Adam(learning_rate=0.01, clipnorm=1.0)
    restored.build(gpu_vars)
    restored.set_state(gpu_opt.get_state())
    assert all(np.array_equal(a, b) for a, b in zip(restored.get_state(), gpu_opt.get_state()))


def test_variables_on_several_logical_devices(fresh_devices, rng):
    (cpu,) = mk.config.list_physical_devices("CPU")
    mk.config.set_logical_device_configuration(cpu, [mk.config.LogicalDeviceConfiguration()] * 2)
    weights = [rng.normal(size=(4, 3)), rng.normal(size=(3,))]
    grads = [rng.normal(size=(4, 3)) * 5, rng.normal(size=(3,)) * 5]
    split = [mk.Tensor(w.copy(), requires_grad=True, device=f"cpu:{i}") for i, w in enumerate(weights)]
    together = [mk.Tensor(w.copy(), requires_grad=True, device="cpu:0") for w in weights]
    before = mk.config.get_memory_info("cpu:1")["current"]
    kept = []
    for variables in (split, together):
        kept.append(optimizers.Adam(learning_rate=0.1, global_clipnorm=1.0))
        for _ in range(3):
            kept[-1].apply_gradients(zip(grads, variables))
    assert [v.device.name for v in split] == ["cpu:0", "cpu:1"]
    for a, b in zip(split, together):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)
    # The bias's momentum and velocity (and scratch space) are counted on cpu:1.
    assert mk.config.get_memory_info("cpu:1")["current"] - before >= 2 * 3 * 8
