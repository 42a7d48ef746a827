"""The models of benchmarks/gpu_models_bench.py: shapes, batch sizes and one
Keras-API builder that minikeras and Keras 3 share, so both build the same
network from the same code.

A *case* is one (model, precision, TF32) triple at one batch size; every
framework trains it on the same synthetic data (random images in [0, 1) or
random token ids, random labels: the numbers are throughput, not accuracy).
``small=True`` gives every model tiny shapes (and a miniature ResNet built by
the application's own ``ResNet`` and residual stacks), for the dry run on a CPU.
"""
import dataclasses

import numpy as np

MODELS = ("mlp", "cnn", "cifar_cnn", "transformer", "resnet50", "efficientnet_b0")
DEFAULT_MODELS = ("mlp", "cnn", "cifar_cnn", "transformer", "resnet50")
# The order each framework's process runs its cases in: issue 33 §1's rows
# first, ResNet-50 (the costliest, the one the issue is about) before the toy
# models, so that a framework whose share of the time budget runs out loses
# the cheap rows (which the GPU session's ``bench`` step times too), not
# ResNet-50; the Transformer and EfficientNet, beyond §1, last.
RUN_ORDER = ("resnet50", "cifar_cnn", "cnn", "mlp", "transformer", "efficientnet_b0")
# Seconds one case is expected to take on an H200 (model build, synthetic
# data, warm-up with its compiles and captures, two epochs, the latency
# steps), and each framework's process start: guesses from the 2026-11-26
# sessions' step times (benchmarks/NOTES.md) for sharing the budget, to be
# replaced by the first card run's. Keras on JAX pays XLA's compile per case.
EXPECTED_SECONDS = {
    "torch": {"mlp": 3, "cnn": 3, "cifar_cnn": 4, "transformer": 8, "resnet50": 12, "efficientnet_b0": 15},
    "minikeras": {"mlp": 4, "cnn": 5, "cifar_cnn": 7, "transformer": 15, "resnet50": 25, "efficientnet_b0": 40},
    "keras-jax": {"mlp": 8, "cnn": 10, "cifar_cnn": 12, "transformer": 35, "resnet50": 60, "efficientnet_b0": 80},
}
EXPECTED_START_SECONDS = {"torch": 8, "minikeras": 4, "keras-jax": 12}
LEARNING_RATE = 1e-3

# model: (sample shape, classes, batch, precisions, steps per epoch); channels last.
FULL = {
    "mlp": ((784,), 10, 128, ("fp32",), 50),
    "cnn": ((28, 28, 1), 10, 128, ("fp32",), 50),
    "cifar_cnn": ((32, 32, 3), 10, 128, ("fp32",), 50),
    "resnet50": ((224, 224, 3), 1000, 256, ("fp32", "bf16"), 8),
    "transformer": ((256,), 10, 32, ("bf16",), 20),  # token ids: sequence 256
    "efficientnet_b0": ((224, 224, 3), 1000, 256, ("bf16",), 8),
}
SMALL = {
    "mlp": ((784,), 10, 8, ("fp32",), 2),
    "cnn": ((28, 28, 1), 10, 8, ("fp32",), 2),
    "cifar_cnn": ((32, 32, 3), 10, 8, ("fp32",), 2),
    "resnet50": ((32, 32, 3), 10, 4, ("fp32", "bf16"), 2),
    "transformer": ((16,), 10, 4, ("bf16",), 2),
    "efficientnet_b0": ((32, 32, 3), 10, 2, ("bf16",), 2),
}
# The Transformer encoder: (layers, width, heads, vocabulary).
TRANSFORMER = {False: (6, 512, 8, 8192), True: (2, 32, 2, 100)}
# The miniature ResNet of the dry run: (filters, blocks) per stage.
SMALL_RESNET_STAGES = ((8, 1), (16, 1))


@dataclasses.dataclass(frozen=True)
class Case:
    """One row's workload: a model at a batch size, in fp32 or bf16, TF32 on or off."""

    model: str
    precision: str  # "fp32" or "bf16" (Keras's mixed_bfloat16, torch's autocast to bfloat16)
    tf32: bool
    batch: int
    steps: int  # per epoch
    sample_shape: tuple
    classes: int
    small: bool

    @property
    def tokens(self):
        """True when the inputs are token ids (the Transformer)."""
        return self.model == "transformer"

    @property
    def convolutional(self):
        return self.model not in ("mlp", "transformer")

    @property
    def warmup_steps(self):
        """Steps before any timing: builds, compiles kernels, autotunes, and
        lets ``jit_compile=True`` capture (it captures after 2 eager steps)."""
        return 3 if self.small else 4

    @property
    def latency_steps(self):
        """Single synchronised steps whose median is the latency."""
        if self.small:
            return 2
        return 5 if self.model in ("resnet50", "efficientnet_b0") else 20

    def key(self):
        return (self.model, self.precision, self.tf32)

    def as_dict(self):
        return dataclasses.asdict(self)


def cases(models, tf32_modes, small=False, steps=None, tf32_models=None):
    """The cases for ``models`` (in RUN_ORDER), each fp32 case once per
    TF32 mode in ``tf32_modes`` and each bf16 case once (with the first mode);
    ``tf32_models`` (default: all) limits the TF32-on cases to those models."""
    table = SMALL if small else FULL
    planned = []
    for model in [name for name in RUN_ORDER if name in models]:
        shape, classes, batch, precisions, model_steps = table[model]
        for precision in precisions:
            for tf32 in tf32_modes if precision == "fp32" else tf32_modes[:1]:
                if tf32 and tf32_models is not None and model not in tf32_models:
                    continue
                planned.append(Case(model, precision, tf32, batch, steps or model_steps, shape, classes, small))
    return planned


def expected_seconds(framework, planned):
    """What ``framework``'s process is expected to take over ``planned`` on a card
    (EXPECTED_SECONDS; torch's CUDA graphs and torch.compile as torch, jit as eager)."""
    kind = "keras-jax" if framework == "keras-jax" else "torch" if framework.startswith("torch") else "minikeras"
    return EXPECTED_START_SECONDS[kind] + sum(EXPECTED_SECONDS[kind][case.model] for case in planned)


def synthetic_data(case, seed=0):
    """``(x, y)`` for one epoch: float32 images in [0, 1) (channels last) or
    int32 token ids, and int32 labels."""
    rng = np.random.default_rng(seed)
    count = case.steps * case.batch
    if case.tokens:
        x = rng.integers(0, TRANSFORMER[case.small][3], size=(count,) + case.sample_shape, dtype=np.int32)
    else:
        x = rng.random((count,) + case.sample_shape, dtype=np.float32)
    y = rng.integers(0, case.classes, size=count, dtype=np.int32)
    return x, y


# ------------------------------------------------------------- Keras-API models

def keras_api_model(K, case):
    """``case``'s model built with the Keras API of module ``K`` (minikeras
    or keras): the caller sets the dtype policy first. Every model ends in
    logits (``classifier_activation=None``): the loss takes ``from_logits``,
    as torch's ``CrossEntropyLoss`` does."""
    layers = K.layers
    if case.model == "mlp":
        return K.Sequential([layers.Input(shape=case.sample_shape), layers.Dense(512, activation="relu"),
                             layers.Dense(256, activation="relu"), layers.Dense(case.classes)])
    if case.model == "cnn":
        return K.Sequential([layers.Input(shape=case.sample_shape), layers.Conv2D(32, 3, activation="relu"),
                             layers.MaxPooling2D(2), layers.Conv2D(64, 3, activation="relu"), layers.MaxPooling2D(2),
                             layers.Flatten(), layers.Dense(128, activation="relu"), layers.Dense(case.classes)])
    if case.model == "cifar_cnn":
        return K.Sequential([
            layers.Input(shape=case.sample_shape),
            layers.Conv2D(32, 3, padding="same", activation="relu"), layers.Conv2D(32, 3, activation="relu"),
            layers.MaxPooling2D(2),
            layers.Conv2D(64, 3, padding="same", activation="relu"), layers.Conv2D(64, 3, activation="relu"),
            layers.MaxPooling2D(2), layers.Flatten(), layers.Dense(256, activation="relu"),
            layers.Dense(case.classes)])
    if case.model == "resnet50":
        if case.small:
            return _small_resnet(K, case)
        return K.applications.ResNet50(weights=None, input_shape=case.sample_shape, classes=case.classes,
                                       classifier_activation=None)
    if case.model == "efficientnet_b0":
        return K.applications.EfficientNetB0(weights=None, input_shape=case.sample_shape, classes=case.classes,
                                             classifier_activation=None)
    if case.model == "transformer":
        return _transformer(K, case)
    raise ValueError(f"keras_api_model expects one of {MODELS}, received {case.model!r}")


def _transformer(K, case):
    """A post-norm Transformer encoder (as torch's ``TransformerEncoderLayer``:
    attention, add, LayerNorm, a ReLU feed-forward of 4x the width, add,
    LayerNorm; no dropout), mean-pooled into a classifier."""
    layers = K.layers
    depth, width, heads, vocabulary = TRANSFORMER[case.small]
    tokens = layers.Input(shape=case.sample_shape, dtype="int32")
    x = layers.Embedding(vocabulary, width)(tokens)
    for _ in range(depth):
        attended = layers.MultiHeadAttention(heads, width // heads)(x, x)
        x = layers.LayerNormalization(epsilon=1e-5)(layers.Add()([x, attended]))
        hidden = layers.Dense(4 * width, activation="relu")(x)
        x = layers.LayerNormalization(epsilon=1e-5)(layers.Add()([x, layers.Dense(width)(hidden)]))
    x = layers.GlobalAveragePooling1D()(x)
    return K.Model(tokens, layers.Dense(case.classes)(x))


def _small_resnet(K, case):
    """ResNet-50's own code (the application's ``ResNet`` and bottleneck
    stacks, v1) with two one-block stages of a few filters: the dry run's
    stand-in, built the way the full model is."""
    if K.__name__ == "minikeras":
        from minikeras.applications.resnet import ResNet, stack_residual_blocks_v1
    else:
        from keras.src.applications.resnet import ResNet, stack_residual_blocks_v1

    def stack_fn(x):
        for index, (filters, blocks) in enumerate(SMALL_RESNET_STAGES):
            x = stack_residual_blocks_v1(x, filters, blocks, stride1=1 if index == 0 else 2, name=f"conv{index + 2}")
        return x

    return ResNet(stack_fn, False, True, weights=None, input_shape=case.sample_shape, classes=case.classes,
                  classifier_activation=None, name="small_resnet")
