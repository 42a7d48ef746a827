"""`SKLearnRegressor`: a minikeras regressor as a scikit-learn estimator (``keras.wrappers``)."""
from minikeras.wrappers._sklearn import RegressorMixin
from minikeras.wrappers.sklearn_base import SKLBase


class SKLearnRegressor(RegressorMixin, SKLBase):
    """scikit-learn regressor around a minikeras model, as Keras's ``SKLearnRegressor``.

    The model trains on ``y`` (a 1-D ``y`` as one column); ``predict``
    returns its outputs with ``y``'s shape, ``score`` the R² (scikit-learn's
    ``RegressorMixin``). Arguments and attributes as `SKLBase`.

    Example:
        >>> import minikeras as mk
        >>> from sklearn.datasets import make_regression
        >>> def build(X, y, hidden=16):
        ...     model = mk.Sequential([mk.Input((X.shape[1],)), mk.layers.Dense(hidden, activation="relu"),
        ...                            mk.layers.Dense(1)])
        ...     model.compile(loss="mse", optimizer="adam")
        ...     return model
        >>> X, y = make_regression(n_samples=200, n_features=10, random_state=0)
        >>> reg = mk.wrappers.SKLearnRegressor(build, fit_kwargs={"epochs": 5, "verbose": 0})
        >>> reg.fit(X, y).predict(X[:3]).shape
        (3,)
    """

    def _more_tags(self):  # scikit-learn < 1.6
        return {**super()._more_tags(), "poor_score": True}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.regressor_tags.poor_score = True
        return tags
