"""`SKLearnTransformer`: a minikeras model as a scikit-learn transformer (``keras.wrappers``)."""
from minikeras.wrappers._sklearn import TransformerMixin
from minikeras.wrappers.sklearn_base import SKLBase


class SKLearnTransformer(TransformerMixin, SKLBase):
    """scikit-learn transformer whose ``transform`` is a fitted minikeras model's output.

    A transformer in scikit-learn's sense (a pipeline step), typically an
    embedding model: ``fit(X, y)`` trains the model on ``y``,
    ``transform(X)`` returns ``model.predict(X)``. Wrap it in scikit-learn's
    ``FrozenEstimator`` to keep a trained model fixed inside a pipeline.
    Arguments and attributes as `SKLBase`.

    Example:
        >>> import minikeras as mk
        >>> from sklearn.datasets import make_regression
        >>> def build(X, y, width=4):
        ...     model = mk.Sequential([mk.Input((X.shape[1],)), mk.layers.Dense(width, activation="tanh"),
        ...                            mk.layers.Dense(y.shape[1])])
        ...     model.compile(loss="mse", optimizer="adam")
        ...     return model
        >>> X, y = make_regression(n_samples=100, n_features=6, random_state=0)
        >>> step = mk.wrappers.SKLearnTransformer(build, fit_kwargs={"epochs": 2, "verbose": 0})
        >>> step.fit(X, y).transform(X).shape
        (100, 1)
    """

    def transform(self, X):
        """The model's outputs for ``X``: ``(n_samples, n_outputs)``."""
        return self._raw_outputs(X)

    def _more_tags(self):  # scikit-learn < 1.6
        return {**super()._more_tags(), "preserves_dtype": []}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = []
        return tags
