"""The reverse direction: Keras 3 reads the files minikeras writes (run in an env with TensorFlow/Keras 3).

    PYTHONPATH=. /path/to/env-with-keras/bin/python tests/saving/check_keras_reads_minikeras.py

For each model of tests/saving/keras_twins.py (between them every layer with weights), minikeras
trains one Adam step and writes ``.keras``, ``.weights.h5`` and ``.h5``
files; Keras then loads each and must reproduce minikeras's outputs within
1e-5. For ``.h5`` only the outputs are compared: Keras 3.15.1 restores no
optimizer slots from any ``.h5`` file, its own included (the table says how
many arrays it kept). For ``.keras`` Keras also takes one more training step
from the loaded optimizer state; it must land at least 20x closer to
minikeras's own next step than a step from a fresh Adam does (Adam's
second step amplifies float32 gradient differences, so exact equality is
not expected; a lost optimizer state shows as a difference ~1e-2).
Prints a table and exits non-zero on any failure. Not part of the test
suite: CI has no Keras.
"""
import json
import os
import sys
import tempfile

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402
import numpy  # noqa: E402

import minikeras as mk  # noqa: E402
from tests.saving.keras_twins import BUILDERS, as_list, missing_layers, one_or_many, trained  # noqa: E402


@keras.saving.register_keras_serializable(package="Custom", name="TwoDense")  # minikeras writes "Custom>TwoDense"
class KerasTwoDense(keras.Model):
    def __init__(self, units=4, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.hidden = keras.layers.Dense(units, activation="relu")
        self.out = keras.layers.Dense(2)

    def call(self, inputs):
        return self.out(self.hidden(inputs))

    def get_config(self):
        return {"units": self.units, "name": self.name}


def max_difference(actual, desired):
    return max(float(numpy.abs(numpy.asarray(a) - d).max()) for a, d in zip(as_list(actual), desired))


def main():
    rng = numpy.random.default_rng(0)
    mk.random.seed(0)
    rows, failures = [], 0
    folder = tempfile.mkdtemp()
    for name in BUILDERS:
        if missing_layers(name):
            rows.append((name, "-", "-", "-", "-", f"not run: minikeras lacks {missing_layers(name)}"))
            continue
        model, inputs, targets = trained(name, rng)
        subclassed = name == "two_dense"
        outputs = as_list(model.predict(one_or_many(inputs), verbose=0))
        paths = {suffix: os.path.join(folder, f"{name}{suffix}") for suffix in (".keras", ".weights.h5", ".h5")}
        model.save(paths[".keras"])
        model.save_weights(paths[".weights.h5"])
        if not subclassed:
            model.save(paths[".h5"])
        saved_state = model.optimizer.get_state()
        saved_state = saved_state[:1] + [numpy.float32(model.optimizer.learning_rate)] + saved_state[1:]
        model.train_on_batch(one_or_many(inputs), one_or_many(targets))
        after = as_list(model.predict(one_or_many(inputs), verbose=0))

        for suffix in (".keras", ".h5"):
            if suffix == ".h5" and subclassed:
                continue
            try:
                restored = keras.models.load_model(paths[suffix])
                output_error = max_difference(restored.predict(one_or_many(inputs), verbose=0), outputs)
                if suffix == ".h5":
                    # Keras 3.15.1 does not restore optimizer slots from any .h5 file, its own
                    # included: it builds the optimizer on the model's own (empty) variable list,
                    # so set_weights fails and training then raises "Unknown variable". Report
                    # how much of the saved state it took, compare the outputs only.
                    loaded = [numpy.asarray(v) for v in restored.optimizer.variables]
                    same = sum(numpy.array_equal(a, b) for a, b in zip(loaded, saved_state))
                    ok = output_error < 1e-5
                    rows.append((name, suffix, f"{output_error:.2e}", "-", "-",
                                 ("ok" if ok else "FAIL") + f" (Keras kept {same}/{len(saved_state)} optimizer "
                                 "arrays: its own .h5 limit)"))
                    failures += not ok
                    continue
                restored.train_on_batch(one_or_many(inputs), one_or_many(targets))
                step_error = max_difference(restored.predict(one_or_many(inputs), verbose=0), after)
                fresh = keras.models.load_model(paths[suffix], compile=False)  # same weights, new optimizer
                fresh.compile(optimizer=keras.optimizers.Adam(0.01), loss=restored.loss)
                fresh.train_on_batch(one_or_many(inputs), one_or_many(targets))
                fresh_error = max_difference(fresh.predict(one_or_many(inputs), verbose=0), after)
                ok = output_error < 1e-5 and step_error * 20 < fresh_error
                rows.append((name, suffix, f"{output_error:.2e}", f"{step_error:.2e}", f"{fresh_error:.2e}",
                             "ok" if ok else "FAIL"))
            except Exception as error:  # report every file, then fail
                ok = False
                rows.append((name, suffix, "-", "-", "-", f"ERROR {type(error).__name__}: {str(error)[:300]}"))
            failures += not ok
        try:
            twin = keras.models.load_model(paths[".keras"])
            for variable in twin.weights:
                variable.assign(numpy.zeros(variable.shape, variable.dtype))
            twin.load_weights(paths[".weights.h5"])
            output_error = max_difference(twin.predict(one_or_many(inputs), verbose=0), outputs)
            ok = output_error < 1e-5
            rows.append((name, ".weights.h5", f"{output_error:.2e}", "-", "-", "ok" if ok else "FAIL"))
        except Exception as error:
            ok = False
            rows.append((name, ".weights.h5", "-", "-", "-", f"ERROR {type(error).__name__}: {str(error)[:300]}"))
        failures += not ok

    config_failures = check_layer_configs()
    failures += len(config_failures)
    print(f"Keras {keras.__version__} reading files written by minikeras {mk.__version__}")
    print(f"{'model':16} {'file':12} {'|output diff|':>14} {'|after step|':>13} {'|fresh Adam|':>13}  result")
    for row in rows:
        print(f"{row[0]:16} {row[1]:12} {row[2]:>14} {row[3]:>13} {row[4]:>13}  {row[5]}")
    total = sum(hasattr(mk.layers, name) for name in json.load(open(LAYER_CONFIGS)))
    print(f"layer configs: Keras rebuilt {total - len(config_failures)}/{total} layer classes from minikeras's "
          f"Keras-schema config with Keras's own config" + (f"; differences: {config_failures}" if config_failures
                                                             else ""))
    return 1 if failures else 0


LAYER_CONFIGS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "keras", "layer_configs.json")


def check_layer_configs():
    """Every layer class: Keras config -> minikeras layer -> minikeras's Keras-schema config -> Keras layer,
    whose config must equal the first one."""
    from minikeras.layers.base import get_layer_class, layer_from_config
    from minikeras.saving import keras_config, keras_config_writer

    problems = []
    for class_name, spec in json.load(open(LAYER_CONFIGS)).items():
        if not hasattr(mk.layers, class_name):
            continue  # a layer of the keras-layers branch
        try:
            converted = keras_config.to_minikeras(spec)
            layer = layer_from_config(get_layer_class(converted["class_name"]), converted["config"])
            rebuilt = keras.saving.deserialize_keras_object(keras_config_writer.to_keras(layer))
            theirs = keras.saving.serialize_keras_object(rebuilt)["config"]
            for key, value in spec["config"].items():
                if key in ("name", "dtype") or key.endswith("layer"):
                    continue
                if json.dumps(theirs.get(key), sort_keys=True) != json.dumps(value, sort_keys=True):
                    problems.append((class_name, key, value, theirs.get(key)))
        except Exception as error:
            problems.append((class_name, f"{type(error).__name__}: {str(error)[:200]}"))
    return problems


if __name__ == "__main__":
    sys.exit(main())
