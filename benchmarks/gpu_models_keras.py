"""The Keras-API runners of benchmarks/gpu_models_bench.py: minikeras (eager
or ``jit_compile=True``) and Keras 3 on JAX, timing the same code path a
user runs: ``compile()``, then ``fit()``.

Per case: warm-up ``train_on_batch`` steps (builds, compiles, autotunes;
minikeras's ``jit_compile=True`` captures its CUDA graph there, Keras's XLA
compiles its step there), then ``fit(epochs=2, shuffle=False)`` with a
callback that synchronises the device at the end of each epoch (one sync
per epoch: the throughput is the better epoch's), then single
``train_on_batch`` steps each followed by a synchronisation (the latency is
their median).
"""
import gc
import math
import os
import statistics
import time
import warnings

from gpu_models_specs import LEARNING_RATE, keras_api_model, synthetic_data


def availability(framework, device):
    """``(module, None)`` for the framework's Keras API, or ``(None, reason)``
    when it cannot run on ``device`` here."""
    if framework.startswith("minikeras"):
        try:
            import minikeras
        except ImportError as error:
            return None, f"minikeras does not import: {error}"
        if device == "gpu" and not _simulated_gpu():
            from minikeras import backend

            if not backend.gpu_available():
                return None, f"minikeras sees no GPU: {backend.gpu_unavailable_reason()}"
        return minikeras, None
    try:
        import jax
    except ImportError:
        return None, "JAX is not installed (the card's image has it)"
    try:
        import keras
    except ImportError:
        return None, "Keras 3 is not installed (carry it: benchmarks/fetch_card_wheels.sh, then --wheels)"
    if keras.backend.backend() != "jax":
        return None, f"Keras runs on {keras.backend.backend()!r}, not JAX (KERAS_BACKEND=jax was overridden)"
    if device == "gpu" and not [d for d in jax.devices() if d.platform == "gpu"]:
        return None, f"JAX sees no GPU (its devices: {[d.platform for d in jax.devices()]})"
    return keras, None


def _simulated_gpu():
    return os.environ.get("MINIKERAS_SIMULATED_GPU", "").strip() not in ("", "0")


def version(framework, K):
    if framework.startswith("minikeras"):
        return f"minikeras {K.__version__}" + (" (simulated GPU)" if _simulated_gpu() else "")
    import jax

    return f"keras {K.__version__}, jax {jax.__version__}"


def run_case(framework, K, case, device):
    """Trains ``case``'s model; returns the row's measurements."""
    x, y = synthetic_data(case)
    jit = framework != "minikeras"
    if framework.startswith("minikeras"):
        K.random.seed(0)
        with K.device(f"{device}:0"), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            row = _train(K, case, x, y, jit, _minikeras_sync)
            row["warnings"] = sorted({str(w.message)[:200] for w in caught
                                      if "graph" in str(w.message).lower() or "captur" in str(w.message).lower()})
    else:
        K.utils.set_random_seed(0)
        import jax

        jax.config.update("jax_default_matmul_precision", "tensorfloat32" if case.tf32 else "float32")
        row = _train(K, case, x, y, True, _jax_sync)
    K.mixed_precision.set_global_policy("float32")
    K.backend.clear_session()
    gc.collect()
    return row


def _train(K, case, x, y, jit, sync):
    K.mixed_precision.set_global_policy("mixed_bfloat16" if case.precision == "bf16" else "float32")
    model = keras_api_model(K, case)
    model.compile(optimizer=K.optimizers.Adam(LEARNING_RATE),
                  loss=K.losses.SparseCategoricalCrossentropy(from_logits=True), jit_compile=jit)
    device = _minikeras_device(model)
    if device is not None:
        device.stats.reset()  # this case's graph launches only
    for step in range(case.warmup_steps):
        batch = _batch(case, step)
        model.train_on_batch(x[batch], y[batch])
    sync(model)
    timer = _epoch_timer(K, sync)
    history = model.fit(x, y, batch_size=case.batch, epochs=2, shuffle=False, verbose=0, callbacks=[timer])
    latencies = []
    for step in range(case.latency_steps):
        batch = _batch(case, step)
        start = time.perf_counter()
        model.train_on_batch(x[batch], y[batch])
        sync(model)
        latencies.append(time.perf_counter() - start)
    best = min(timer.seconds)
    row = dict(epoch_s=timer.seconds, fit_ms_per_step=1e3 * best / case.steps,
               samples_per_s=case.steps * case.batch / best, latency_ms=1e3 * statistics.median(latencies),
               final_loss=float(history.history["loss"][-1]),
               parameters=sum(int(math.prod(weight.shape)) for weight in model.trainable_weights))
    if device is not None:
        row["graph_launches"] = device.stats.graph_launches
    return row


def _batch(case, step):
    step %= case.steps
    return slice(step * case.batch, (step + 1) * case.batch)


def _epoch_timer(K, sync):
    """A callback timing each epoch between synchronisations."""

    class EpochTimer(K.callbacks.Callback):
        def __init__(self):
            super().__init__()
            self.seconds = []
            self._start = None

        def on_epoch_begin(self, epoch, logs=None):
            sync(self.model)
            self._start = time.perf_counter()

        def on_epoch_end(self, epoch, logs=None):
            sync(self.model)
            self.seconds.append(time.perf_counter() - self._start)

    return EpochTimer()


def _minikeras_device(model):
    weights = getattr(model, "weights", None)
    device = getattr(weights[0], "device", None) if weights else None
    return device if hasattr(device, "stats") else None


def _minikeras_sync(model):
    model.weights[0].device.synchronize()


def _jax_sync(model):
    import jax

    jax.block_until_ready([variable.value for variable in model.variables])
