"""What a replica's step costs on logical CPUs, beyond one device's step
(benchmarks/NOTES.md, "MirroredModel's MLP epoch back to its old cost"):
the built-in step's gradients come out weighted by the replica's rows (its
``scale_loss`` call carries the share: no pass over the gradients), and
replica 0's update, which the others wait for and copy, runs on every core.
"""
import threading

import numpy

import minikeras as mk
from minikeras import layers
from minikeras.backend import threads

SCALES = []  # (rows of the replica's batch, what optimizer.scale_loss made of 1.0)
UPDATES = []  # (thread name, whether its ops ran their blocks themselves) per update
LOSSES = []  # the same, per compute_loss


class RecordsScale(mk.Model):
    def train_step(self, data):
        x, _ = data
        probe = self.optimizer.scale_loss(mk.ops.ones((), dtype="float32"))
        SCALES.append((int(x.shape[0]), float(mk.ops.convert_to_numpy(probe))))
        return super().train_step(data)

    def compute_loss(self, *args, **kwargs):
        LOSSES.append((threading.current_thread().name, threads._in_caller()))
        return super().compute_loss(*args, **kwargs)


class RecordingAdam(mk.optimizers.Adam):
    def _update_variables(self, *args, **kwargs):
        UPDATES.append((threading.current_thread().name, threads._in_caller()))
        return super()._update_variables(*args, **kwargs)


def _train(wrap):
    mk.random.seed(0)
    inputs = layers.Input((6,))
    model = RecordsScale(inputs, layers.Dense(1)(layers.Dense(16, activation="relu")(inputs)))
    rng = numpy.random.default_rng(0)
    x, y = rng.normal(size=(38, 6)).astype("float32"), rng.normal(size=(38, 1)).astype("float32")
    trainer = model if wrap is None else wrap(model)
    trainer.compile(RecordingAdam(0.01), "mse")
    del SCALES[:], UPDATES[:], LOSSES[:]
    history = trainer.fit(x, y, batch_size=10, epochs=2, shuffle=False, verbose=0)  # 4/3/3 rows, last 3/3/2
    return model.get_weights(), history.history["loss"]


def test_the_built_in_step_weighs_each_replicas_loss_by_its_rows(split_cpu):
    devices = split_cpu(3)
    weights, losses = _train(None)
    assert {scale for _, scale in SCALES} == {1.0}
    mirrored_weights, mirrored_losses = _train(lambda model: mk.MirroredModel(model, devices=devices))
    scales = {(rows, round(scale, 6)) for rows, scale in SCALES}  # float32 loss times the share
    assert sorted(scales) == [(2, 0.25), (3, 0.3), (3, 0.375), (4, 0.4)]
    for got, want in zip(mirrored_weights, weights):
        numpy.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-7)
    numpy.testing.assert_allclose(mirrored_losses, losses, rtol=2e-5)


def test_replica_zeros_update_runs_on_every_core_while_the_others_wait(split_cpu):
    devices = split_cpu(3)
    _train(lambda model: mk.MirroredModel(model, devices=devices))
    steps = 2 * 4
    assert UPDATES == [("minikeras-replica-cpu:0", False)] * steps  # the others copy its weights
    assert len(LOSSES) == 3 * steps and all(single for _, single in LOSSES)  # the replicas' own ops: one thread each
