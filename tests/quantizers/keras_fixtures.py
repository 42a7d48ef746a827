"""Paths and arrays of the Keras 3.15 recordings in tests/quantizers/fixtures
(record_keras_quantizers.py writes them)."""
import json
import pathlib

import numpy

FIXTURES = pathlib.Path(__file__).parent / "fixtures"


def fixture(name):
    """The path of a recorded file, as a string."""
    return str(FIXTURES / name)


def cases():
    """The quantizer functions' recorded inputs and outputs."""
    return numpy.load(FIXTURES / "keras_quantizer_cases.npz")


def models():
    """The quantized models' recorded inputs, outputs and training traces."""
    return numpy.load(FIXTURES / "keras_quantized_models.npz")


def names():
    """Keras's public names, policies and serialized configs."""
    return json.loads((FIXTURES / "keras_quantizer_names.json").read_text())


def einsum_layouts():
    """EinsumDense's recorded int8 scale layouts."""
    return json.loads((FIXTURES / "keras_einsum_layouts.json").read_text())
