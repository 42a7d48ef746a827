"""Keras-3-style user scripts (tests/compat/scripts/) run as subprocesses.

Each script is written the way a Keras user writes one, with only the
import changed, covers one API contract (custom layers and weights,
callbacks, customised fit, dict inputs/outputs, custom metrics and losses,
what the user sees, config/backend/backup), asserts that it completes and
learns, and prints "OK" last. A subprocess gives every script a fresh
interpreter (layer name counters, global settings) and a non-terminal
stdout, as a script piped to a log file has.
"""
import os
import pathlib
import subprocess
import sys

import pytest

SCRIPTS = pathlib.Path(__file__).parent / "scripts"
ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("script", sorted(path.name for path in SCRIPTS.glob("*.py")))
def test_script_runs_and_learns(script):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               MINIKERAS_NUM_THREADS=os.environ.get("MINIKERAS_NUM_THREADS", "1"))
    result = subprocess.run([sys.executable, str(SCRIPTS / script)], capture_output=True, text=True, timeout=120,
                            env=env, cwd=ROOT)
    assert result.returncode == 0, f"{script} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    assert result.stdout.rstrip().endswith("OK"), result.stdout[-2000:]


def test_every_contract_has_a_script():
    names = {path.stem for path in SCRIPTS.glob("*.py")}
    assert {"custom_layer_weights", "callbacks_contract", "custom_train_step", "dict_inputs_outputs",
            "training_loop_from_scratch",
            "custom_metrics_losses", "output_format", "config_backend_backup",
        "masking_and_padding", "stateful_rnn", "knowledge_distillation", "custom_activation",
        "vision_ops_on_symbolic_tensors", "cutmix_boxes", "convmixer_layer_configs",
        "functional_ops", "saving_hooks"} <= names


# The contract scripts of keras.io guides and examples (masks, stateful RNNs,
# overridden compute_loss/compile, ops on symbolic tensors, CutMix's boxes,
# ConvMixer's layer configs, saving hooks): the same file also runs under real
# Keras 3 with the import changed back, which shows the script tests Keras's behaviour.
KERAS_CHECKED = ["convmixer_layer_configs", "custom_activation", "cutmix_boxes", "functional_ops",
                 "knowledge_distillation", "masking_and_padding", "saving_hooks", "stateful_rnn",
                 "vision_ops_on_symbolic_tensors"]


@pytest.mark.parametrize("script", KERAS_CHECKED)
def test_script_behaves_the_same_under_keras(script, tmp_path):
    python = os.environ.get("MINIKERAS_KERAS_PYTHON")
    if not python:
        pytest.skip("set MINIKERAS_KERAS_PYTHON to a Python with Keras 3 and TensorFlow to run this script there")
    source = (SCRIPTS / f"{script}.py").read_text()
    source = source.replace("import minikeras as keras", "import keras").replace("from minikeras import",
                                                                                  "from keras import")
    (tmp_path / f"{script}.py").write_text(source)
    env = dict(os.environ, KERAS_BACKEND="tensorflow", TF_CPP_MIN_LOG_LEVEL="3")
    result = subprocess.run([python, str(tmp_path / f"{script}.py")], capture_output=True, text=True, timeout=300,
                            env=env, cwd=tmp_path)
    assert result.returncode == 0, f"{script} under Keras:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    assert result.stdout.rstrip().endswith("OK"), result.stdout[-2000:]
