"""scikit-learn's own estimator checks (``parametrize_with_checks``) on the
three wrappers, with the estimators and expected failures of Keras 3.15's
``keras/src/wrappers/sklearn_test.py``: a wrapper passes what Keras's passes.

The expected failures come from training being random (no check may assume
two fits agree) and from ``decision_function`` returning the model's raw
outputs, one column per class, as Keras's does. Measured with scikit-learn
1.9.1: 131 checks pass for Keras 3.15's wrappers and 131 for these.
"""
import pytest

sklearn = pytest.importorskip("sklearn")
from packaging.version import parse as parse_version  # noqa: E402  (a scikit-learn dependency)

if parse_version(sklearn.__version__).release < (1, 6):
    pytest.skip("expected_failed_checks needs scikit-learn >= 1.6", allow_module_level=True)

import minikeras as mk  # noqa: E402
from minikeras.wrappers import SKLearnClassifier, SKLearnRegressor, SKLearnTransformer  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402


class DynamicModel:
    """Keras's test model builder; its one output given as a list of one, as there.

    A class with a fixed repr: the test ids hold the estimators' reprs, which
    must be the same in every pytest-xdist worker (a function's repr holds its address).
    """

    def __repr__(self):
        return "dynamic_model"

    def __call__(self, X, y, loss, out_activation_function="softmax", layers=(10,)):
        return _dynamic_model(X, y, loss, out_activation_function, layers)


def _dynamic_model(X, y, loss, out_activation_function, layers):
    inputs = mk.Input(shape=(X.shape[1],))
    hidden = inputs
    for size in layers:
        hidden = mk.layers.Dense(size, activation="relu")(hidden)
    n_outputs = y.shape[1] if len(y.shape) > 1 else 1
    model = mk.Model(inputs, [mk.layers.Dense(n_outputs, activation=out_activation_function)(hidden)])
    model.compile(loss=loss, optimizer="rmsprop")
    return model


RANDOM_FIT = "assumes two fits agree; training is random"
EXPECTED_FAILED_CHECKS = {  # Keras 3.15's list, with its reasons
    "SKLearnClassifier": {
        "check_classifiers_regression_target": "not an issue in sklearn>=1.6",
        "check_parameters_default_constructible": "not an issue in sklearn>=1.6",
        "check_classifiers_one_label_sample_weights": "0 sample weight is not ignored",
        "check_classifiers_classes": "with small test cases the estimator returns not all classes sometimes",
        "check_classifier_data_not_an_array": RANDOM_FIT,
        "check_supervised_y_2d": RANDOM_FIT,
        "check_fit_idempotent": RANDOM_FIT,
        "check_classifiers_train": "decision_function can return both probabilities and logits",
    },
    "SKLearnRegressor": {"check_parameters_default_constructible": "not an issue in sklearn>=1.6"},
    "SKLearnTransformer": {"check_parameters_default_constructible": "not an issue in sklearn>=1.6"},
}


@parametrize_with_checks(
    [
        SKLearnClassifier(model=DynamicModel(), model_kwargs={"loss": "categorical_crossentropy", "layers": [20, 20, 20]},
                          fit_kwargs={"epochs": 5, "verbose": 0}),
        SKLearnRegressor(model=DynamicModel(), model_kwargs={"loss": "mse"}, fit_kwargs={"verbose": 0}),
        SKLearnTransformer(model=DynamicModel(), model_kwargs={"loss": "mse"}, fit_kwargs={"verbose": 0}),
    ],
    expected_failed_checks=lambda estimator: EXPECTED_FAILED_CHECKS[type(estimator).__name__],
)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)
