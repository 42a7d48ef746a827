"""``keras.wrappers``: minikeras models as scikit-learn estimators.

`SKLearnClassifier`, `SKLearnRegressor` and `SKLearnTransformer` take a
compiled model, or a callable ``model(X=X, y=y, **model_kwargs)`` that
builds one, and behave as scikit-learn estimators: ``get_params`` /
``set_params``, ``clone``, pipelines, ``cross_val_score``, grid searches
over ``model_kwargs`` or ``fit_kwargs``.

scikit-learn is optional: it is imported when this module is, and without
it the classes exist but raise ImportError (``pip install scikit-learn``)
when made.

Example:
    >>> import minikeras as mk
    >>> from sklearn.model_selection import cross_val_score
    >>> from sklearn.datasets import make_classification
    >>> def build(X, y):
    ...     model = mk.Sequential([mk.Input((X.shape[1],)), mk.layers.Dense(y.shape[1], activation="softmax")])
    ...     model.compile(loss="categorical_crossentropy", optimizer="adam")
    ...     return model
    >>> X, y = make_classification(n_samples=100, random_state=0)
    >>> clf = mk.wrappers.SKLearnClassifier(build, fit_kwargs={"epochs": 3, "verbose": 0})
    >>> cross_val_score(clf, X, y, cv=3).shape
    (3,)
"""
from minikeras.wrappers.sklearn_classifier import SKLearnClassifier
from minikeras.wrappers.sklearn_regressor import SKLearnRegressor
from minikeras.wrappers.sklearn_transformer import SKLearnTransformer

__all__ = ["SKLearnClassifier", "SKLearnRegressor", "SKLearnTransformer"]
