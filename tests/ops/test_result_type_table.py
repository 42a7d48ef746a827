"""One promotion table: ``backend.result_type``, ``ops.result_type`` and the
dtype of ``ops.add`` agree with each other and with Keras 3.15 (TensorFlow
backend) on every pair of Keras's 13 real dtypes.

The answers are recorded from Keras by fixtures/record_keras_result_types.py
into fixtures/keras_result_types.json; CI never imports Keras.
"""
import json
import os

import numpy
import pytest

import minikeras as mk
from minikeras import backend, ops
from minikeras.backend.dtypes import as_numpy_dtype

_FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "keras_result_types.json")
with open(_FIXTURE) as _file:
    _RECORD = json.load(_file)
PAIRS = sorted(_RECORD["pairs"].items())


def test_the_table_is_keras_3_15_on_every_pair_of_its_13_dtypes():
    assert _RECORD["keras_version"].startswith("3.15") and _RECORD["backend"] == "tensorflow"
    assert len(PAIRS) == 13 * 13


@pytest.mark.parametrize("pair,keras", PAIRS, ids=[pair for pair, _ in PAIRS])
def test_result_type_and_add_agree_with_keras(pair, keras):
    first, second = pair.split(",")
    assert backend.result_type(first, second) == keras["result_type"]
    assert ops.result_type(as_numpy_dtype(first), as_numpy_dtype(second)) == as_numpy_dtype(keras["result_type"])
    assert ops.result_type(first, second) == as_numpy_dtype(keras["result_type"])
    added = ops.add(ops.zeros((2,), first), ops.zeros((2,), second))
    expected = keras["add"] if keras["add"] is not None else keras["result_type"]  # TensorFlow refuses bool + bool
    assert added.dtype == as_numpy_dtype(expected)
    assert added.numpy().tolist() == [0, 0]


def test_python_numbers_stay_weak():
    int8 = mk.Tensor(numpy.array([1, 2], "int8"))
    assert ops.result_type(int8, 3) == numpy.int8 and ops.add(int8, 3).dtype == numpy.int8
    assert ops.result_type(int8, 0.5) == numpy.float32
    assert ops.result_type(mk.Tensor(numpy.array([1.0], "float16")), 2.0) == numpy.float16
    assert ops.result_type(mk.Tensor(numpy.array([True])), 1) == numpy.int32
    assert ops.result_type(numpy.array([1.0], "float64"), 1j) == numpy.complex128
    assert ops.result_type(3) == numpy.int32 and ops.result_type(0.5) == numpy.float32
