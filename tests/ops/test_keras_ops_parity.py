"""keras.ops parity (issue 24): minikeras's ops against Keras 3's outputs.

The recorded variant compares with ``fixtures/keras_ops_parity.npz`` (Keras
3.15, TensorFlow backend; see ``keras_ops_cases.py``): values and dtypes, on
the CPU and the simulated GPU. The live variant imports Keras (the side
environment) and compares every case directly; it skips where Keras is not
installed.
"""
import numpy
import pytest

import minikeras as mk
from tests.ops.keras_ops_cases import CASES, FIXTURE, flat_outputs

RECORDED = dict(numpy.load(FIXTURE))
# Cases where Keras 3.15's TensorFlow backend is wrong and minikeras is not; each
# is checked against an independent reference in the op tests instead.
KERAS_BUGS = {
    "sparsemax": "Keras's TensorFlow sparsemax sums the cumulative sums over the support "
                 "(tau = (sum_j cumsum_j - 1) / k) instead of taking the k-th one, so rows with a "
                 "support of 2 or more come out wrong (all zeros here); see test_keras_ops_functions.",
    "map_coordinates_reflect": "Keras's TensorFlow map_coordinates takes |index| before folding, so in "
                               "'reflect' mode index -1 reads pixel 1 instead of 0 (SciPy's and Keras's JAX "
                               "backend read 0); see test_map_coordinates_fill_modes_are_scipys.",
}
RECORDED_CASES = sorted({key.split("/")[0] for key in RECORDED} - set(KERAS_BUGS))

# Where minikeras's result differs from TensorFlow's on purpose; each says why.
DTYPE_DIFFERENCES = {}
VALUE_TOLERANCE = {  # float32 kernels that sum in another order than TensorFlow's
    "default": (2e-5, 2e-4),
}


def _to_numpy(value):
    return value.numpy() if isinstance(value, mk.Tensor) else numpy.asarray(value)


def _compare(name, ours, theirs):
    assert len(ours) == len(theirs), f"{name}: {len(ours)} outputs, Keras gives {len(theirs)}"
    atol, rtol = VALUE_TOLERANCE.get(name, VALUE_TOLERANCE["default"])
    for index, (got, expected) in enumerate(zip(ours, theirs)):
        assert got.shape == expected.shape, f"{name}/{index}: shape {got.shape}, Keras {expected.shape}"
        if name not in DTYPE_DIFFERENCES:
            assert got.dtype == expected.dtype, f"{name}/{index}: dtype {got.dtype}, Keras {expected.dtype}"
        if expected.dtype.kind in "fc":
            numpy.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True,
                                          err_msg=f"{name}/{index}")
        else:
            numpy.testing.assert_array_equal(got, expected, err_msg=f"{name}/{index}")


@pytest.mark.parametrize("name", RECORDED_CASES)
def test_matches_recorded_keras(name):
    ours = flat_outputs(CASES[name](mk.ops), _to_numpy)
    count = len([key for key in RECORDED if key.split("/")[0] == name])
    _compare(name, ours, [RECORDED[f"{name}/{index}"] for index in range(count)])


def test_fixture_covers_most_cases():
    assert len(RECORDED_CASES) >= 250 and set(RECORDED_CASES) <= set(CASES)


def test_matches_live_keras():
    keras = pytest.importorskip("keras")
    failures = []
    compared = 0
    for name, case in CASES.items():
        if name in KERAS_BUGS:
            continue
        try:
            theirs = flat_outputs(case(keras.ops), keras.ops.convert_to_numpy)
        except Exception:  # noqa: BLE001 - cases this Keras backend refuses are not compared
            continue
        compared += 1
        try:
            _compare(name, flat_outputs(case(mk.ops), _to_numpy), theirs)
        except AssertionError as error:
            failures.append(str(error).splitlines()[0] if str(error) else name)
    assert not failures, "\n".join(failures)
    assert compared >= 300, f"only {compared} cases ran under Keras {keras.__version__}"
