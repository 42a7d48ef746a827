"""MultiOptimizer's parity case, recorded from Keras 3.15.

Run ``/work/side/bin/python -m tests.optimizers.multi_optimizer_case`` from the
repository root (TensorFlow/Keras 3 installed) to rewrite
``fixtures/keras_multi_optimizer.npz``: a two-layer model trained for
STEPS steps with Adam on the head and SGD with momentum elsewhere; the
weights after every step and the names of Keras's optimizer variables.
"""
import os

import numpy

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "keras_multi_optimizer.npz")
#: The model after two steps, saved by Keras (its optimizer state included).
KERAS_FILE = os.path.join(os.path.dirname(__file__), "fixtures", "keras_multi_optimizer.keras")
STEPS = 6
_RNG = numpy.random.default_rng(40)
X = _RNG.normal(size=(8, 3)).astype("float32")
Y = _RNG.normal(size=(8, 1)).astype("float32")
INITIAL = [_RNG.normal(size=shape).astype("float32") * 0.5 for shape in ((3, 4), (4,), (4, 1), (1,))]


def build(module):
    """The model and its MultiOptimizer in ``module`` (keras or minikeras)."""
    optimizers = module.optimizers
    model = module.Sequential([module.layers.Input((3,)), module.layers.Dense(4, activation="tanh", name="body"),
                               module.layers.Dense(1, name="head")], name="sequential")  # slot names hold it
    model.set_weights(INITIAL)
    mapping = optimizers.OptimizerMap(optimizers.SGD(0.1, momentum=0.9), {".*head/.*": optimizers.Adam(0.05)})
    model.compile(optimizer=optimizers.MultiOptimizer(mapping), loss="mse")
    return model


def main():
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    import keras

    model = build(keras)
    arrays = {}
    for step in range(STEPS):
        model.train_on_batch(X, Y)
        if step == 1:
            model.save(KERAS_FILE)
        for index, weight in enumerate(model.get_weights()):
            arrays[f"step{step}/weight{index}"] = weight
    arrays["variable_names"] = numpy.array([v.name for v in model.optimizer.variables])
    arrays["variable_shapes"] = numpy.array([str(tuple(v.shape)) for v in model.optimizer.variables])
    numpy.savez(FIXTURE, **arrays)
    print(list(arrays["variable_names"]))


if __name__ == "__main__":
    main()
