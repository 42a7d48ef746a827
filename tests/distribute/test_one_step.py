"""One training step, honoured by every way of running it (issue 34).

A model's own train_step, compute_loss, metrics, add_loss, BatchNormalization
and constraints give the same numbers on one device, under MirroredModel on 2
and 3 logical devices (CPU; the simulated GPU's run splits the GPU too), with
``jit_compile=True`` and with ``steps_per_execution=4``. The multi-worker
runs are in test_multi_worker_overrides.py.
"""
import numpy
import pytest

import minikeras as mk
from minikeras import layers
from tests.distribute import step_overrides as overrides
from tests.distribute.helpers import assert_replicas_identical


@pytest.fixture(scope="module")
def one_device():
    """Each case trained once on the default device (the reference)."""
    cache = {}

    def reference(case):
        key = case, bool(mk.config.list_logical_devices("GPU"))  # each kind of device against its own
        if key not in cache:
            cache[key] = overrides.train(case)
        return cache[key]

    return reference


def _mirrored_on(devices):
    return lambda model: mk.MirroredModel(model, devices=devices)


@pytest.mark.parametrize("count", [2, 3])
@pytest.mark.parametrize("case", overrides.CASES)
def test_mirrored_model_runs_the_models_own_step(split_cpu, one_device, case, count):
    devices = split_cpu(count)
    expected = one_device(case)
    got = overrides.train(case, wrap=_mirrored_on(devices))
    overrides.assert_same_training(got, expected)


@pytest.mark.parametrize("case", [case for case in overrides.CASES if case != "gan"])
@pytest.mark.parametrize("extra", [{"jit_compile": True}, {"steps_per_execution": 4}], ids=["jit", "spe4"])
def test_jit_compile_and_steps_per_execution_give_the_same_numbers(one_device, case, extra):
    import warnings

    expected = one_device(case)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # a capture refused on the device (the step then runs eagerly)
        got = overrides.train(case, compile_extra=extra)
    overrides.assert_same_training(got, expected)


def test_dropout_draws_the_same_masks_whatever_the_grouping(one_device):
    overrides.assert_same_training(overrides.train("dropout", compile_extra={"steps_per_execution": 4}),
                                   one_device("dropout"))


def test_dropout_replicas_draw_their_own_masks_and_stay_identical(split_cpu):
    """Each replica draws the masks of its own rows (as tf.distribute's
    replicas do): the numbers differ from one device's, the replicas never do."""
    devices = split_cpu(2)
    model, compile_args, x, y = overrides.build("dropout")
    mirrored = mk.MirroredModel(model, devices=devices)
    mirrored.compile(**compile_args)
    history = mirrored.fit(x, y, batch_size=overrides.BATCH, epochs=6, shuffle=False, verbose=0)
    assert_replicas_identical(mirrored)
    assert history.history["loss"][-1] < 0.5 * history.history["loss"][0]


def test_the_gan_step_runs_on_every_replica_with_its_rows(split_cpu, one_device):
    devices = split_cpu(3)
    expected = one_device("gan")
    assert [rows for _, rows in expected["calls"]] == [overrides.BATCH] * (overrides.COUNT // overrides.BATCH
                                                                            * overrides.EPOCHS)
    got = overrides.train("gan", wrap=_mirrored_on(devices))
    steps = overrides.COUNT // overrides.BATCH * overrides.EPOCHS
    assert len(got["calls"]) == 3 * steps  # every replica ran the model's train_step at every step
    assert len({model for model, _ in got["calls"]}) == 3
    assert {rows for _, rows in got["calls"]} == {overrides.BATCH // 3}
    # Both optimizers of the GAN took every step on every replica.
    assert got["steps"] == expected["steps"] == steps


def test_the_issue_table_reads_the_same_in_both_columns(split_cpu):
    """compute_loss x 10, one SGD step (0.01) from kernel 1.0 to target 4:
    loss 90 and kernel 1.6, on one device and under MirroredModel."""
    rows = []
    devices = split_cpu(2)
    for wrap in (None, "mirrored"):
        inputs = layers.Input((1,))
        model = overrides.ScaledLoss(inputs, layers.Dense(1, use_bias=False, kernel_initializer="ones")(inputs))
        trainer = model
        if wrap:
            trainer = mk.MirroredModel(model, devices=devices)
        trainer.compile(mk.optimizers.SGD(0.01), "mse")
        x, y = numpy.ones((4, 1), "float32"), numpy.full((4, 1), 4.0, "float32")
        history = trainer.fit(x, y, batch_size=4, epochs=1, verbose=0)
        rows.append((history.history["loss"][0], float(model.get_weights()[0].reshape(()))))
    assert rows[0] == pytest.approx((90.0, 1.6))
    assert rows[1] == pytest.approx(rows[0])


def test_uneven_batches_weigh_each_replica_by_its_rows(split_cpu):
    """Batches of 10 over 3 replicas (4/3/3) and a last batch of 8 (3/3/2):
    the scaled loss's override and its logs still match one device."""
    def run(wrap):
        model, compile_args, x, y = overrides.build("scaled_loss")
        trainer = model if wrap is None else wrap(model)
        trainer.compile(**compile_args)
        history = trainer.fit(x[:38], y[:38], batch_size=10, epochs=2, shuffle=False, verbose=0)
        return model.get_weights(), history.history

    devices = split_cpu(3)
    weights, history = run(None)
    mirrored_weights, mirrored_history = run(_mirrored_on(devices))
    for got, want in zip(mirrored_weights, weights):
        numpy.testing.assert_allclose(got, want, rtol=2e-5)
    numpy.testing.assert_allclose(mirrored_history["loss"], history["loss"], rtol=2e-5)


def test_a_batch_smaller_than_the_replicas_keeps_them_in_step(split_cpu):
    """A last batch of 1 row on 3 replicas: two keep the third company; the
    GAN's two optimizers still step on all three, which stay identical."""
    devices = split_cpu(3)
    model, compile_args, x, real = overrides.build("gan")
    reference, _, _, _ = overrides.build("gan")
    mirrored = mk.MirroredModel(model, devices=devices)
    mirrored.compile(**compile_args)
    reference.compile(**overrides.build("gan")[1])
    mirrored.fit(x[:13], real[:13], batch_size=12, epochs=1, shuffle=False, verbose=0)
    history = reference.fit(x[:13], real[:13], batch_size=12, epochs=1, shuffle=False, verbose=0)
    assert_replicas_identical(mirrored)
    for got, want in zip(model.get_weights(), reference.get_weights()):
        numpy.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-7)
    assert [replica.d_optimizer.iterations for replica in mirrored.replicas] == [2, 2, 2]
    # The trackers count one update per replica with rows (Keras's per-replica
    # metrics): three in the first step, one in the second.
    logs = mirrored.get_metrics_result()
    assert sorted(logs) == sorted(history.history) and all(numpy.isfinite(list(logs.values())))


def test_constraints_are_applied_by_the_optimizer_in_a_custom_step():
    """A train_step of the user's own gets the weight constraints from
    ``apply_gradients`` (Keras's Optimizer.apply), no trainer code needed."""
    class Plain(mk.Model):
        def train_step(self, data):
            x, y = data
            with mk.GradientTape() as tape:
                loss = self.compute_loss(y=y, y_pred=self(x, training=True))
            self.optimizer.apply_gradients(zip(tape.gradient(loss, self.trainable_weights), self.trainable_weights))
            return {"loss": loss}

    inputs = layers.Input((3,))
    model = Plain(inputs, layers.Dense(2, kernel_constraint=mk.constraints.NonNeg())(inputs))
    model.compile(mk.optimizers.SGD(1.0), "mse")
    x = numpy.ones((8, 3), "float32")
    model.fit(x, numpy.full((8, 2), -50.0, "float32"), epochs=2, verbose=0)  # drives the kernel negative
    assert (model.get_weights()[0] >= 0).all()
    assert (model.get_weights()[0] == 0).any()


def test_a_variable_declares_how_replicas_combine_it():
    assert layers.BatchNormalization()  # built below
    layer = layers.BatchNormalization()
    layer.build((None, 3))
    assert layer.moving_mean.aggregation == layer.moving_variance.aggregation == "mean"
    assert layer.gamma.aggregation == "none"
    assert mk.Variable(numpy.zeros(2), aggregation="sum").aggregation == "sum"
    with pytest.raises(ValueError, match="aggregation must be one of"):
        mk.Variable(numpy.zeros(2), aggregation="max")


def test_no_training_step_lives_in_distribute():
    """distribute/'s code computes no loss, runs no backward, updates no
    metric, applies no constraint and names no layer class or layer
    variable: the replicas run the model's step, and layers declare what
    data parallelism needs. (Its replica optimizer answers the step's
    ``scale_loss`` call, as it answers ``apply_gradients``: a seam, not a step.)"""
    import ast
    import pathlib

    import minikeras

    folder = pathlib.Path(minikeras.__file__).parent / "distribute"
    used = set()
    for path in folder.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute):
                used.add(node.attr)
            elif isinstance(node, ast.Name):
                used.add(node.id)
    forbidden = {"compute_loss", "compute", "losses", "update_state", "constraint", "weight_constraint",
                 "BatchNormalization", "moving_mean", "moving_variance", "backward"}
    assert not used & forbidden


@pytest.mark.gpu
@pytest.mark.parametrize("case", overrides.CASES)
def test_mirrored_model_on_two_logical_gpus_runs_the_models_own_step(fresh_devices, case):
    """The same cases on two logical GPUs carved from gpu:0 (the simulated GPU in CI)."""
    from minikeras import config

    gpu = config.list_physical_devices("GPU")[0]
    config.set_logical_device_configuration(gpu, [config.LogicalDeviceConfiguration(memory_limit=512)] * 2)
    with mk.device("gpu:0"):
        expected = overrides.train(case)
        got = overrides.train(case, wrap=_mirrored_on(["gpu:0", "gpu:1"]))
    overrides.assert_same_training(got, expected)


def test_replicas_sharing_the_host_compute_each_update_once(split_cpu, one_device):
    """On logical CPUs replica 0 runs the optimizer and the others take its
    weights: their slots stay untouched, their weights and step counts are
    replica 0's, and the numbers are one device's. A loss scale (which each
    replica's step depends on) keeps every replica running its own update."""
    devices = split_cpu(3)
    expected = one_device("metric")
    model, compile_args, x, y = overrides.build("metric")
    mirrored = mk.MirroredModel(model, devices=devices)
    mirrored.compile(**compile_args)
    mirrored.fit(x, y, batch_size=overrides.BATCH, epochs=overrides.EPOCHS, shuffle=False, verbose=0)
    assert_replicas_identical(mirrored)
    for got, want in zip(model.get_weights(), expected["weights"]):
        numpy.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-7)
    slots = [[numpy.abs(slot).sum() for slot in replica.optimizer.get_state()[1:]] for replica in mirrored.replicas]
    assert all(total > 0 for total in slots[0]) and not any(total for row in slots[1:] for total in row)
    assert [replica.optimizer.iterations for replica in mirrored.replicas] == [expected["steps"]] * 3

    scaled_model, _, _, _ = overrides.build("metric")
    scaled = mk.MirroredModel(scaled_model, devices=devices)
    scaled.compile(mk.optimizers.LossScaleOptimizer(mk.optimizers.Adam(0.01)), "mse")
    scaled.fit(x, y, batch_size=overrides.BATCH, epochs=1, shuffle=False, verbose=0)
    assert_replicas_identical(scaled)
    assert all(numpy.abs(replica.optimizer.get_state()[-1]).sum() > 0 for replica in scaled.replicas)
