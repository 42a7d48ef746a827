"""How the wrappers hand targets to a model and its outputs back to scikit-learn.

Regressors and transformers train on ``y`` as a column ``(n, 1)`` when it is
one-dimensional; classifiers on its one-hot encoding (one column per class,
in the sorted order of ``classes_``). Predictions are turned back the same
way: a single column squeezed to ``(n,)``, one-hot scores to class labels by
their argmax, exactly as Keras's wrappers do through scikit-learn's
``OneHotEncoder``.
"""
import numpy

from minikeras.wrappers._sklearn import BaseEstimator, TransformerMixin, check_is_fitted


class TargetReshaper(TransformerMixin, BaseEstimator):
    """Makes a 1-D target a column and turns a one-column output back into 1-D.

    Attributes:
        ndim_: the number of dimensions of the target it was fitted on.
    """

    def fit(self, y):
        """Records ``y.ndim``; returns self."""
        self.ndim_ = y.ndim
        return self

    def transform(self, y):
        """``y`` with at least two dimensions (a 1-D ``y`` becomes ``(n, 1)``)."""
        return y.reshape(-1, 1) if y.ndim == 1 else y

    def inverse_transform(self, y):
        """An ``(n, 1)`` output squeezed to ``(n,)`` when the target was 1-D; else ``y`` unchanged."""
        check_is_fitted(self)
        if self.ndim_ == 1 and y.ndim == 2 and y.shape[1] == 1:
            return numpy.squeeze(y, axis=1)
        return y


def one_hot_encoder(y):
    """scikit-learn's ``OneHotEncoder`` after a `TargetReshaper`, fitted on ``y``."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    return make_pipeline(TargetReshaper(), OneHotEncoder(sparse_output=False)).fit(y)
