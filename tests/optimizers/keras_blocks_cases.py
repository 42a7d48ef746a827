"""Optimizer trajectories of issue 25 recorded from Keras 3.15.

Run ``/work/side/bin/python -m tests.optimizers.keras_blocks_cases`` from
the repository root (TensorFlow/Keras 3 installed) to rewrite
``fixtures/keras_blocks_optimizers.npz``: the initial weights, the 20
gradients fed in, and the weights after every step, per case.
"""
import os

import numpy

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "keras_blocks_optimizers.npz")
STEPS = 20
SHAPES = [(4, 3), (3,), (2, 3, 2), (3, 5)]

CASES = {
    "lion": ("Lion", {"learning_rate": 0.01}),
    "lion_betas_decay": ("Lion", {"learning_rate": 0.01, "beta_1": 0.5, "beta_2": 0.9, "weight_decay": 0.1}),
    "lamb": ("Lamb", {"learning_rate": 0.01}),
    "lamb_clipnorm": ("Lamb", {"learning_rate": 0.05, "beta_1": 0.8, "epsilon": 1e-5, "clipnorm": 1.0}),
    "ftrl": ("Ftrl", {"learning_rate": 0.1}),
    "ftrl_regularized": ("Ftrl", {"learning_rate": 0.1, "learning_rate_power": -0.7, "initial_accumulator_value": 0.5,
                                  "l1_regularization_strength": 0.05, "l2_regularization_strength": 0.02,
                                  "l2_shrinkage_regularization_strength": 0.01, "beta": 0.3}),
    "adafactor": ("Adafactor", {"learning_rate": 0.05}),
    "adafactor_options": ("Adafactor", {"learning_rate": 0.5, "beta_2_decay": -0.6, "epsilon_2": 1e-2,
                                        "clip_threshold": 0.5, "relative_step": False}),
    "muon": ("Muon", {"learning_rate": 0.02}),
    "muon_options": ("Muon", {"learning_rate": 0.05, "momentum": 0.8, "nesterov": False, "ns_steps": 3,
                              "rms_rate": None, "adam_lr_ratio": 0.5, "weight_decay": 0.01,
                              "adam_weight_decay": 0.02}),
    "schedule_free_adamw": ("ScheduleFreeAdamW", {"learning_rate": 0.01}),
    "schedule_free_adamw_warmup": ("ScheduleFreeAdamW", {"learning_rate": 0.02, "beta_1": 0.8, "warmup_steps": 5,
                                                         "weight_decay": 0.05}),
}


def trajectory_inputs(seed=25):
    rng = numpy.random.default_rng(seed)
    weights = [rng.normal(size=shape).astype("float32") for shape in SHAPES]
    grads = [[(rng.normal(size=shape) * (0.2 + 0.1 * step)).astype("float32") for shape in SHAPES]
             for step in range(STEPS)]
    return weights, grads


def record():
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    import keras

    weights, grads = trajectory_inputs()
    out = {f"weights/{i}": w for i, w in enumerate(weights)}
    out.update({f"grads/{step}/{i}": g for step, step_grads in enumerate(grads) for i, g in enumerate(step_grads)})
    for case, (class_name, kwargs) in CASES.items():
        variables = [keras.Variable(w.copy(), name=f"w{i}") for i, w in enumerate(weights)]
        optimizer = getattr(keras.optimizers, class_name)(**kwargs)
        for step in range(STEPS):
            optimizer.apply_gradients(zip([g.copy() for g in grads[step]], variables))
            for i, variable in enumerate(variables):
                out[f"{case}/{step}/{i}"] = variable.numpy()
        out[f"{case}/state_shapes"] = numpy.array([str(tuple(v.shape)) for v in optimizer.variables[2:]])
    numpy.savez_compressed(FIXTURE, **out)
    print(f"wrote {len(CASES)} cases to {FIXTURE}")


if __name__ == "__main__":
    record()
