"""keras.wrappers as scikit-learn users use them: pipelines, cross-validation,
grid searches over ``model_kwargs``, cloning, pickling, warm starts.

Needs scikit-learn (a test-only tool: ``pip install scikit-learn``); without
it this module is skipped and ``test_wrappers_without_sklearn.py`` checks the
error users get.
"""
import pickle

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")

from sklearn.base import clone  # noqa: E402
from sklearn.datasets import make_classification, make_regression  # noqa: E402
from sklearn.exceptions import NotFittedError  # noqa: E402
from sklearn.model_selection import GridSearchCV, cross_val_score, train_test_split  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

import minikeras as mk  # noqa: E402
from minikeras.wrappers import SKLearnClassifier, SKLearnRegressor, SKLearnTransformer  # noqa: E402

QUIET = {"verbose": 0}


def dynamic_model(X, y, loss, layers=(10,), learning_rate=0.01, out_activation="softmax"):
    """Keras's documentation's builder: an MLP sized from the data it is given."""
    inputs = mk.Input(shape=(X.shape[1],))
    hidden = inputs
    for size in layers:
        hidden = mk.layers.Dense(size, activation="relu")(hidden)
    n_outputs = y.shape[1] if len(y.shape) > 1 else 1
    model = mk.Model(inputs, mk.layers.Dense(n_outputs, activation=out_activation)(hidden))
    model.compile(loss=loss, optimizer=mk.optimizers.Adam(learning_rate=learning_rate))
    return model


def classification(n_samples=600, n_classes=3, seed=0):
    return make_classification(n_samples=n_samples, n_features=20, n_informative=8, n_classes=n_classes,
                               class_sep=2.0, random_state=seed)


def test_classifier_in_a_pipeline_predicts_the_labels_it_was_given():
    X, y = classification()
    labels = np.array(["cat", "dog", "eel"])[y]
    X_train, X_test, y_train, y_test = train_test_split(X, labels, test_size=0.25, random_state=0)
    clf = SKLearnClassifier(model=dynamic_model, model_kwargs={"loss": "categorical_crossentropy", "layers": [32]},
                            fit_kwargs={"epochs": 20, **QUIET})
    pipe = make_pipeline(StandardScaler(), clf).fit(X_train, y_train)

    assert list(clf.classes_) == ["cat", "dog", "eel"]
    assert clf.model_.outputs[0].shape[-1] == 3  # trained on the one-hot targets
    predicted = pipe.predict(X_test)
    assert predicted.shape == (len(X_test),) and set(predicted) <= {"cat", "dog", "eel"}
    assert pipe.score(X_test, y_test) > 0.85
    proba = pipe.predict_proba(X_test)
    assert proba.shape == (len(X_test), 3) and proba.dtype == np.float64
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_array_equal(clf.classes_[proba.argmax(axis=1)], predicted)
    raw = pipe.decision_function(X_test)
    assert raw.shape == (len(X_test), 3)
    np.testing.assert_allclose(proba, raw / raw.sum(axis=1, keepdims=True), rtol=1e-6)
    assert clf.n_features_in_ == 20 and clf.epoch_ == 20 and len(clf.history_.history["loss"]) == 20


def test_regressor_cross_val_score():
    X, y = make_regression(n_samples=450, n_features=10, noise=5.0, random_state=0)
    reg = make_pipeline(StandardScaler(), SKLearnRegressor(
        model=dynamic_model, model_kwargs={"loss": "mse", "layers": [], "learning_rate": 0.2,
                                           "out_activation": None},
        fit_kwargs={"epochs": 40, **QUIET}))
    scores = cross_val_score(reg, X, y / y.std(), cv=3)  # R², fold by fold, each on a fresh clone
    assert scores.shape == (3,) and scores.min() > 0.95, scores


def test_regressor_targets_keep_their_shape():
    X, y = make_regression(n_samples=200, n_features=5, n_targets=2, random_state=0)
    y = y / y.std(axis=0)
    linear = {"loss": "mse", "layers": [], "learning_rate": 0.1, "out_activation": None}
    reg = SKLearnRegressor(model=dynamic_model, model_kwargs=linear, fit_kwargs={"epochs": 30, **QUIET}).fit(X, y)
    assert reg.model_.outputs[0].shape[-1] == 2 and reg.predict(X).shape == (200, 2)
    assert reg.score(X, y) > 0.95
    with pytest.warns(sklearn.exceptions.DataConversionWarning):  # one column: raveled, as in Keras
        reg.fit(X, y[:, :1])
    assert reg.predict(X).shape == (200,)


def test_grid_search_over_model_kwargs_picks_the_model_that_learns():
    X, y = classification(n_samples=450)
    X = StandardScaler().fit_transform(X)
    clf = SKLearnClassifier(model=dynamic_model, fit_kwargs={"epochs": 10, **QUIET})
    grid = {"model_kwargs": [{"loss": "categorical_crossentropy", "learning_rate": 0.0},  # cannot learn
                             {"loss": "categorical_crossentropy", "learning_rate": 0.01, "layers": [16]}]}
    search = GridSearchCV(clf, grid, cv=3).fit(X, y)

    assert search.best_params_["model_kwargs"]["learning_rate"] == 0.01
    frozen, learned = search.cv_results_["mean_test_score"]
    assert learned > 0.85 and frozen < 0.7, (frozen, learned)
    assert search.best_estimator_.score(X, y) > 0.85  # refitted on everything
    assert search.best_estimator_.model_kwargs["layers"] == [16]


def test_params_and_clone_follow_sklearn():
    clf = SKLearnClassifier(model=dynamic_model, model_kwargs={"loss": "categorical_crossentropy"},
                            fit_kwargs={"epochs": 3, **QUIET})
    assert clf.get_params() == {"model": dynamic_model, "warm_start": False,
                                "model_kwargs": {"loss": "categorical_crossentropy"},
                                "fit_kwargs": {"epochs": 3, "verbose": 0}}
    assert clf.set_params(warm_start=True) is clf and clf.warm_start
    X, y = classification(n_samples=90)
    clf.fit(X, y)
    copy = clone(clf)
    assert copy.get_params() == clf.get_params()  # Keras 3.15's clone drops fit_kwargs; not here
    assert copy.fit_kwargs is not clf.fit_kwargs and not hasattr(copy, "model_")
    assert "SKLearnClassifier(" in repr(clf)


def test_fit_keyword_arguments_take_precedence_and_leave_fit_kwargs_alone():
    X, y = classification(n_samples=90)
    fit_kwargs = {"epochs": 4, **QUIET}
    clf = SKLearnClassifier(model=dynamic_model, model_kwargs={"loss": "categorical_crossentropy"},
                            fit_kwargs=fit_kwargs)
    clf.fit(X, y, epochs=2, batch_size=45)
    assert clf.epoch_ == 2 and clf.history_.params["steps"] == 2
    assert clf.fit_kwargs == {"epochs": 4, "verbose": 0}  # Keras 3.15 writes epochs/batch_size into it
    clf.fit(X, y)
    assert clf.epoch_ == 4


def compiled_model(n_features=20, n_classes=3):
    model = mk.Sequential([mk.Input((n_features,)), mk.layers.Dense(16, activation="relu"),
                           mk.layers.Dense(n_classes, activation="softmax")])
    model.compile(loss="categorical_crossentropy", optimizer=mk.optimizers.Adam(0.01), metrics=["accuracy"])
    return model


def test_a_model_instance_is_cloned_compiled_and_left_untouched():
    X, y = classification()
    X = StandardScaler().fit_transform(X)
    model = compiled_model()
    before = [w.copy() for w in model.get_weights()]
    clf = SKLearnClassifier(model=model, fit_kwargs={"epochs": 10, **QUIET}).fit(X, y)

    assert clf.model_ is not model
    for original, kept in zip(before, model.get_weights()):
        np.testing.assert_array_equal(original, kept)
    assert clf.model_.optimizer is not model.optimizer
    assert set(clf.history_.history) == {"loss", "accuracy"}  # compiled like the original
    assert clf.score(X, y) > 0.85
    assert cross_val_score(clf, X, y, cv=2).min() > 0.8  # clone() of a wrapper holding a model


def test_warm_start_continues_training_the_same_model():
    X, y = classification(n_samples=300)
    X = StandardScaler().fit_transform(X)
    kwargs = {"model": dynamic_model, "model_kwargs": {"loss": "categorical_crossentropy", "learning_rate": 0.003},
              "fit_kwargs": {"epochs": 3, **QUIET}}
    warm = SKLearnClassifier(warm_start=True, **kwargs).fit(X, y)
    first_model, first_losses = warm.model_, warm.history_.history["loss"]
    warm.fit(X, y)
    assert warm.model_ is first_model and warm.epoch_ == 6
    assert warm.history_.history["loss"][0] < first_losses[0]  # it went on from where it stopped

    cold = SKLearnClassifier(**kwargs).fit(X, y)
    first_cold = cold.model_
    cold.fit(X, y)
    assert cold.model_ is not first_cold and cold.epoch_ == 3

    model = compiled_model()
    assert SKLearnClassifier(model=model, warm_start=True, fit_kwargs=QUIET).fit(X, y).model_ is model


def test_a_fitted_wrapper_pickles_with_its_model():
    X, y = classification(n_samples=120)
    clf = SKLearnClassifier(model=dynamic_model, model_kwargs={"loss": "categorical_crossentropy"},
                            fit_kwargs={"epochs": 2, **QUIET}).fit(X, y)
    restored = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(restored.predict_proba(X), clf.predict_proba(X))
    np.testing.assert_array_equal(restored.classes_, clf.classes_)
    assert restored.history_.history == clf.history_.history and restored.history_.model is restored.model_
    restored.set_params(warm_start=True).fit(X, y)  # its optimizer state came along
    assert restored.epoch_ == 4

    holder = SKLearnClassifier(model=compiled_model(), fit_kwargs=QUIET)
    assert isinstance(pickle.loads(pickle.dumps(holder)).model, mk.Model)


def test_transformer_as_a_frozen_embedding_step():
    frozen_estimator = pytest.importorskip("sklearn.frozen")  # scikit-learn >= 1.6
    from sklearn.linear_model import LogisticRegression

    X, labels = classification()
    X = StandardScaler().fit_transform(X)

    def embedder(X, y, width=8):
        inputs = mk.Input((X.shape[1],))
        embedding = mk.layers.Dense(width, activation="tanh", name="embedding")(inputs)
        model = mk.Model(inputs, mk.layers.Dense(y.shape[1])(embedding))
        model.compile(loss="mse", optimizer=mk.optimizers.Adam(0.01))
        return model

    one_hot = np.eye(3)[labels]
    step = SKLearnTransformer(model=embedder, fit_kwargs={"epochs": 10, **QUIET}).fit(X, one_hot)
    assert step.transform(X).shape == (len(X), 3)
    weights = [w.copy() for w in step.model_.get_weights()]
    pipe = make_pipeline(frozen_estimator.FrozenEstimator(step), LogisticRegression()).fit(X, labels)
    for before, after in zip(weights, step.model_.get_weights()):
        np.testing.assert_array_equal(before, after)  # FrozenEstimator did not refit it
    assert pipe.score(X, labels) > 0.85
    assert step.fit_transform(X, one_hot).shape == (len(X), 3)


def test_metadata_routing_passes_sample_weight_to_model_fit():
    X, y = classification(n_samples=120)
    with sklearn.config_context(enable_metadata_routing=True):
        clf = SKLearnClassifier(model=dynamic_model, model_kwargs={"loss": "categorical_crossentropy"},
                                fit_kwargs={"epochs": 1, **QUIET}).set_fit_request(sample_weight=True)
        pipe = make_pipeline(StandardScaler().set_fit_request(sample_weight=False), clf)
        pipe.fit(X, y, sample_weight=np.zeros(len(X)))
        assert clf.history_.history["loss"] == [0.0]  # every sample weighed nothing
        pipe.fit(X, y, sample_weight=np.ones(len(X)))
        assert clf.history_.history["loss"][0] > 0.1
    with pytest.raises(RuntimeError, match="enable_metadata_routing=True"):
        SKLearnClassifier(model=dynamic_model).set_fit_request(sample_weight=True)


def test_errors_say_what_is_wrong():
    X, y = classification(n_samples=60)
    clf = SKLearnClassifier(model=dynamic_model, model_kwargs={"loss": "categorical_crossentropy"},
                            fit_kwargs=QUIET)
    with pytest.raises(NotFittedError):
        clf.predict(X)
    with pytest.raises(ValueError, match="binary or multiclass targets, received continuous"):
        clf.fit(X, np.linspace(0, 1, len(X)))
    with pytest.raises(ValueError, match="only one class"):
        clf.fit(X, np.zeros(len(X), dtype=int))
    uncompiled = mk.Sequential([mk.Input((20,)), mk.layers.Dense(2)])
    with pytest.raises(RuntimeError, match="compiled model with a loss and an optimizer"):
        SKLearnRegressor(model=uncompiled, fit_kwargs=QUIET).fit(X, y.astype(float))
    with pytest.raises(TypeError, match="return a compiled minikeras Model, received str"):
        SKLearnRegressor(model=lambda X, y: "model").fit(X, y.astype(float))
    with pytest.raises(TypeError, match="received int"):
        SKLearnRegressor(model=3).fit(X, y.astype(float))
    fitted = clf.fit(X, y)
    with pytest.raises(ValueError, match="20 features"):
        fitted.predict(X[:, :5])
    logits = SKLearnClassifier(model=dynamic_model, fit_kwargs=QUIET,  # linear outputs of both signs
                               model_kwargs={"loss": "mse", "out_activation": None}).fit(X, y)
    assert (logits.decision_function(X) < 0).any()
    with pytest.raises(ValueError, match="use decision_function"):
        logits.predict_proba(X)
