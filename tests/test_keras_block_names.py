"""The building-block namespaces against Keras 3.15's public names
(``fixtures/keras_3_15_block_names.json``, written by
``fixtures/record_keras_names.py``).

Every Keras name must exist in minikeras, be listed as out of scope
(backend-specific), as owned by another issue, or as not done yet. A
not-done name that appears must leave the list, so the list only shrinks
and the counts below stay honest.
"""
import importlib
import json
import os

import pytest

NAMES = os.path.join(os.path.dirname(__file__), "fixtures", "keras_3_15_block_names.json")

# Backend-specific wrappers: out of scope for minikeras (DESIGN.md, "The Keras namespaces").
OUT_OF_SCOPE = {
    "layers": {"FlaxLayer", "JaxLayer", "TFSMLayer", "TorchModuleWrapper"},
    "callbacks": {"OrbaxCheckpoint"},
    "optimizers": {"legacy"},  # tf.keras 2's optimizers namespace
    # README's "Quantization: names not supported" (LLM calibration) and "Keras names left out".
    "quantizers": {"AWQConfig", "GPTQConfig"},
    "config": {"set_backend", "is_nnx_enabled", "enable_flash_attention", "disable_flash_attention",
               "is_flash_attention_enabled"},
    "utils": {"legacy", "bounding_boxes"},
}

# Owned by another issue's helper; may or may not be merged yet.
OTHER_ISSUES = {"optimizers": {"LossScaleOptimizer"}}

# Keras's top-level submodules that minikeras does not have (yet), with why.
MODULES_ELSEWHERE = {
    "export": "Keras's SavedModel/Orbax export, TensorFlow/JAX-specific (README's not-supported table)",
    "distillation": "Keras 3.15's knowledge-distillation API, not asked for by issue 37",
    "legacy": "tf.keras 2's legacy namespace (Keras keeps it for TF-era code only)",
    "src": "Keras's private implementation package, not API",
}

# Issue 25's names not done yet (each must go once it exists).
NOT_YET = {
    "layers": set(),
}

# Names present in minikeras before issue 25 (counted by the same rule), for the record; the top level,
# tree and preprocessing as before issue 37.
BEFORE = {"layers": 104, "losses": 34, "metrics": 40, "optimizers": 12, "callbacks": 13, "activations": 24,
          "initializers": 34, "regularizers": 10, "random": 6, "top_level": 7, "tree": 0, "preprocessing": 1,
          "preprocessing.image": 0, "preprocessing.sequence": 1}
# Issue 37's namespaces beyond the building blocks: its table's counts before it (quantizers,
# distribution, dtype_policies, wrappers, visualization, datasets without california_housing), the
# others as counted when they joined this test (floors: names are never lost).
BEFORE.update({"quantizers": 0, "distribution": 0, "dtype_policies": 5, "wrappers": 0, "visualization": 0,
               "datasets": 7, "mixed_precision": 7, "config": 20, "utils": 38, "saving": 13, "models": 6,
               "constraints": 12, "applications": 57})


def _keras_names():
    with open(NAMES) as handle:
        names = json.load(handle)
    names.pop("keras_version")
    names.pop("top_level_modules")
    return names


def _module(namespace):
    """minikeras's module for a Keras namespace (``top_level``: minikeras itself)."""
    return importlib.import_module("minikeras" if namespace == "top_level" else f"minikeras.{namespace}")


@pytest.mark.parametrize("namespace", sorted(BEFORE))
def test_every_keras_name_is_present_or_accounted_for(namespace):
    module = _module(namespace)
    keras_names = _keras_names()[namespace]
    missing = {name for name in keras_names if not hasattr(module, name)}
    unaccounted = missing - OUT_OF_SCOPE.get(namespace, set()) - OTHER_ISSUES.get(namespace, set()) - \
        NOT_YET.get(namespace, set())
    assert not unaccounted, f"minikeras.{namespace} lacks Keras names: {sorted(unaccounted)}"
    done_now = NOT_YET.get(namespace, set()) - missing
    assert not done_now, f"remove {sorted(done_now)} from NOT_YET[{namespace!r}]: they exist now"
    assert len(keras_names) - len(missing) >= BEFORE[namespace]  # names are never lost


def test_counts_for_the_record():
    """Keras 3.15's names per namespace, and how many minikeras has."""
    counts = {}
    for namespace, keras_names in _keras_names().items():
        module = _module(namespace)
        counts[namespace] = (sum(hasattr(module, name) for name in keras_names), len(keras_names))
    assert counts["losses"] == (48, 48) and counts["metrics"] == (72, 72)
    assert counts["activations"] == (35, 35) and counts["random"] == (11, 11)
    assert counts["initializers"] == (39, 39) and counts["regularizers"] == (12, 12)
    # Every name but the backend-specific ones (OUT_OF_SCOPE): 4 layers, OrbaxCheckpoint, optimizers.legacy.
    assert counts["layers"] == (171, 175) and counts["callbacks"] == (15, 16) and counts["optimizers"] == (22, 23)
    # Issue 37: every top-level name (keras.Quantizer with keras.quantizers); tree and preprocessing whole.
    assert counts["top_level"] == (24, 24) and counts["tree"] == (12, 12) and counts["preprocessing"] == (5, 5)
    assert counts["preprocessing.image"] == (5, 5) and counts["preprocessing.sequence"] == (1, 1)
    # Issue 37's namespaces: whole but for README's tables (GPTQ/AWQ calibration, backend-only config, legacy).
    assert counts["quantizers"] == (17, 19) and counts["dtype_policies"] == (11, 11)
    assert counts["distribution"] == (11, 11) and counts["wrappers"] == (3, 3) and counts["visualization"] == (5, 5)
    assert counts["datasets"] == (8, 8) and counts["config"] == (20, 25) and counts["utils"] == (38, 40)


def test_keras_top_level_submodules_exist_or_are_accounted_for():
    import minikeras

    with open(NAMES) as handle:
        modules = json.load(handle)["top_level_modules"]
    missing = {name for name in modules if not hasattr(minikeras, name)}
    assert missing <= set(MODULES_ELSEWHERE), \
        f"minikeras lacks Keras modules: {sorted(missing - set(MODULES_ELSEWHERE))}"
    assert {"tree", "preprocessing", "ops", "layers", "utils", "distribution", "wrappers",
            "visualization"} <= set(modules) - missing
    for name in missing:
        with pytest.raises(AttributeError):
            getattr(minikeras, name)  # absent cleanly, not a half-made module
