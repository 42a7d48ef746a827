"""Smoke tests for examples/: every example runs end to end on a small slice.

The examples are imported from their files and their ``main(argv)`` is called
in this process, so the tiny datasets of ``conftest.py`` (with the loaders'
expected counts shrunk to match) stand in for the real ones; the loaders'
checks stay as strict as users get them. ``device_placement.py`` configures
logical devices, which is allowed only before first use, so it runs as a
script in a fresh interpreter, as a user would run it; ``mirrored_training.py``
does too but needs the tiny datasets, so it runs in this process on a fresh
device registry (the ``fresh_devices`` fixture).
"""
import importlib.util
import os
import re
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

from minikeras import config

REPOSITORY = Path(__file__).resolve().parents[2]
EXAMPLES = REPOSITORY / "examples"
ALL_EXAMPLES = sorted(path.stem for path in EXAMPLES.glob("*.py") if not path.stem.startswith("_"))
SMOKE_ARGS = ["--limit", "256", "--epochs", "1", "--batch-size", "64", "--verbose", "0"]


@pytest.fixture
def load_example(monkeypatch):
    """Returns ``load(name)``, which imports ``examples/<name>.py`` as a fresh module.

    The examples put their folder on ``sys.path`` to import ``_common``;
    ``syspath_prepend`` restores ``sys.path`` after the test.
    """
    monkeypatch.syspath_prepend(str(EXAMPLES))

    def load(name):
        spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    return load


def run_as_script(name, argv, monkeypatch):
    """Runs ``examples/<name>.py`` as ``__main__`` in this process, with ``argv``."""
    monkeypatch.syspath_prepend(str(EXAMPLES))
    monkeypatch.setattr(sys, "argv", [str(EXAMPLES / f"{name}.py")] + list(argv))
    runpy.run_path(str(EXAMPLES / f"{name}.py"), run_name="__main__")


def reported_accuracy(output):
    """The accuracy from an example's closing ``... test accuracy 0.1234 ...`` line."""
    found = re.findall(r"test accuracy (\d+\.\d+)", output)
    assert found, f"no 'test accuracy' line in the output:\n{output}"
    return float(found[-1])


SMOKE_CASES = [
    ("mnist_mlp", ["--dataset", "mnist"]),
    ("mnist_mlp", ["--dataset", "fashion_mnist"]),
    ("mnist_cnn", ["--dataset", "fashion_mnist"]),
    ("cifar10_cnn", []),
    ("demo", ["--device", "cpu:0"]),
]


def test_every_example_is_covered():
    # A new example must get a smoke test in this file, not rot unnoticed.
    smoke_tested = {name for name, _ in SMOKE_CASES} | {"device_placement", "mirrored_training",
                                                          "multi_worker_training"}  # test_multi_worker_example.py
    assert set(ALL_EXAMPLES) <= smoke_tested


@pytest.mark.parametrize("name, extra_args", SMOKE_CASES, ids=[" ".join([name] + args) for name, args in SMOKE_CASES])
def test_example_trains_and_reports_test_accuracy(name, extra_args, tiny_datasets, load_example, capsys):
    accuracy = load_example(name).main(SMOKE_ARGS + extra_args)
    output = capsys.readouterr().out
    assert 0.0 <= accuracy <= 1.0  # also false for NaN
    assert reported_accuracy(output) == pytest.approx(accuracy, abs=5e-5)
    assert re.search(r"in \d+\.\ds$", output.strip()), "the closing line gives the time taken"


def test_mlp_learns_the_tiny_dataset(tiny_datasets, load_example, capsys):
    # Each class of the tiny images has its own bright square: two epochs on
    # 320 images must beat chance (0.1) by far, or training is broken.
    accuracy = load_example("mnist_mlp").main(
        ["--dataset", "fashion_mnist", "--epochs", "2", "--batch-size", "32", "--verbose", "0"])
    assert accuracy > 0.5


def test_device_placement_runs_as_a_script(tmp_path):
    # A fresh interpreter: logical devices can be configured only before first use.
    environment = dict(os.environ)
    environment["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPOSITORY), environment.get("PYTHONPATH")]))
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / "device_placement.py"), "--epochs", "1", "--batch-size", "64"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path, env=environment)
    assert result.returncode == 0, result.stderr
    output = result.stdout
    assert re.search(r"Logical devices: \[.*:0', .*:1'\]", output)
    assert re.search(r"placed by hand: /device:(CPU|GPU):1", output)
    assert "Past the limit: Out of memory" in output
    assert re.search(r"model weights live on /device:(CPU|GPU):1", output)
    assert 0.0 <= reported_accuracy(output) <= 1.0
    # Placement logging prints one line per op while it is on.
    assert re.search(r"Executing op MatMul in device /device:(CPU|GPU):1", output + result.stderr)


def test_mirrored_training_splits_one_device_into_two_logical_ones(tiny_datasets, fresh_devices, load_example, capsys):
    # fresh_devices: the example splits the CPU into logical devices, which is
    # allowed only before first use.
    if len(config.list_physical_devices("GPU")) >= 2:
        pytest.skip("with two GPUs the example mirrors over them, not over logical CPUs")
    one_gpu = len(config.list_physical_devices("GPU")) == 1
    accuracy = load_example("mirrored_training").main(SMOKE_ARGS + ["--dataset", "fashion_mnist", "--replicas", "2"])
    output = capsys.readouterr().out
    if one_gpu:  # a real or the simulated GPU: split into two logical GPUs, not left idle
        assert re.search(r"one GPU: split into 2 logical GPUs of \d+ MB each", output)
        assert "replicas on: ['gpu:0', 'gpu:1']" in output
    else:
        assert "replicas on: ['cpu:0', 'cpu:1']" in output
    assert "mirrored CNN on 2 devices" in output
    assert 0.0 <= accuracy <= 1.0
    assert reported_accuracy(output) == pytest.approx(accuracy, abs=5e-5)


@pytest.mark.parametrize("name", ALL_EXAMPLES)
def test_help(name, monkeypatch, capsys):
    with pytest.raises(SystemExit) as exit_info:
        run_as_script(name, ["--help"], monkeypatch)
    assert exit_info.value.code == 0
    output = capsys.readouterr().out
    assert output.startswith("usage:")
    assert "--epochs" in output and "--batch-size" in output


@pytest.mark.parametrize("name, argv, complaint", [
    ("mnist_mlp", ["--dataset", "cifar10"], "invalid choice: 'cifar10'"),
    ("mnist_mlp", ["--epochs", "two"], "--epochs: expected a whole number of at least 1, received 'two'"),
    ("mnist_cnn", ["--limit", "-5"], "--limit: expected a whole number of at least 1, received '-5'"),
    ("cifar10_cnn", ["--batch-size", "0"], "--batch-size: expected a whole number of at least 1, received '0'"),
    ("demo", ["--verbose", "3"], "invalid choice: 3"),
    ("device_placement", ["--epochs", "0"], "--epochs: expected a whole number of at least 1, received '0'"),
    ("mirrored_training", ["--replicas", "0"], "--replicas: expected a whole number of at least 1, received '0'"),
    ("mirrored_training", ["--device", "cpu:0"], "unrecognized arguments: --device cpu:0"),
])
def test_bad_arguments_are_rejected(name, argv, complaint, load_example, capsys):
    # Rejected by argparse before any data is loaded or device configured.
    with pytest.raises(SystemExit) as exit_info:
        load_example(name).main(argv)
    assert exit_info.value.code == 2
    assert complaint in capsys.readouterr().err


@pytest.mark.parametrize("name, argv, file_name", [
    ("mnist_mlp", ["--dataset", "mnist"], "mnist.npz"),
    ("mnist_cnn", ["--dataset", "fashion_mnist"], os.path.join("fashion-mnist", "train-images-idx3-ubyte.gz")),
    ("cifar10_cnn", [], "cifar-10-python.tar.gz"),
    ("mirrored_training", ["--dataset", "mnist"], "mnist.npz"),
])
def test_missing_dataset_offline_is_one_clear_error(name, argv, file_name, empty_datasets, fresh_devices,
                                                    monkeypatch):
    # Run as a script: the message alone, exit status 1, no traceback.
    # (fresh_devices: mirrored_training configures logical devices first.)
    with pytest.raises(SystemExit) as exit_info:
        run_as_script(name, argv + ["--epochs", "1"], monkeypatch)
    message = exit_info.value.code
    assert isinstance(message, str), "sys.exit(message) prints it to stderr with exit status 1"
    assert message.startswith("DatasetNotFoundError: Could not get the ")
    assert f"put the file at:\n  {empty_datasets / file_name}" in message
    assert "It is published at: http" in message
    assert "Temporary failure in name resolution" in message  # why the download failed


@pytest.mark.parametrize("name", ALL_EXAMPLES)
def test_help_gives_the_whole_first_paragraph(name, load_example, capsys):
    module = load_example(name)
    with pytest.raises(SystemExit) as stopped:
        module.main(["--help"])
    assert stopped.value.code == 0
    shown = " ".join(capsys.readouterr().out.split())
    first_paragraph = " ".join(module.__doc__.strip().split("\n\n")[0].split())
    assert first_paragraph.endswith(".") and first_paragraph in shown  # never cut mid-sentence


@pytest.mark.parametrize("name", ["mnist_mlp", "mnist_cnn"])
def test_digit_examples_default_to_fashion_mnist(name, load_example, capsys):
    # MNIST cannot be downloaded everywhere (not on the development machine);
    # Fashion-MNIST, which the README's numbers use, is the default.
    with pytest.raises(SystemExit):
        load_example(name).main(["--help"])
    assert "(default fashion_mnist)" in capsys.readouterr().out
