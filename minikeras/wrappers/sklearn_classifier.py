"""`SKLearnClassifier`: a minikeras classifier as a scikit-learn estimator (``keras.wrappers``)."""
import numpy

from minikeras.wrappers._sklearn import ClassifierMixin, target_type
from minikeras.wrappers._targets import one_hot_encoder
from minikeras.wrappers.sklearn_base import SKLBase


class SKLearnClassifier(ClassifierMixin, SKLBase):
    """scikit-learn classifier around a minikeras model, as Keras's ``SKLearnClassifier``.

    The model trains on the one-hot encoding of ``y`` (one output per class,
    in the order of ``classes_``); ``predict`` returns the labels of the
    largest outputs, ``decision_function`` the raw outputs and
    ``predict_proba`` the outputs as probabilities. Targets must be binary or
    multiclass (of any label type: ints, strings...). Arguments and
    attributes as `SKLBase`, plus ``classes_``.

    Example:
        >>> import minikeras as mk
        >>> from sklearn.datasets import make_classification
        >>> def build(X, y, hidden=16):
        ...     inputs = mk.Input((X.shape[1],))
        ...     x = mk.layers.Dense(hidden, activation="relu")(inputs)
        ...     model = mk.Model(inputs, mk.layers.Dense(y.shape[1], activation="softmax")(x))
        ...     model.compile(loss="categorical_crossentropy", optimizer="adam")
        ...     return model
        >>> X, y = make_classification(n_samples=200, n_features=10, random_state=0)
        >>> clf = mk.wrappers.SKLearnClassifier(build, model_kwargs={"hidden": 32},
        ...                                     fit_kwargs={"epochs": 5, "verbose": 0})
        >>> clf.fit(X, y).predict(X[:3]).shape
        (3,)
    """

    _multi_output = False

    def decision_function(self, X):
        """The model's raw outputs for ``X``: ``(n_samples, n_classes)``."""
        return self._raw_outputs(X)

    def predict_proba(self, X):
        """Class probabilities, ``(n_samples, n_classes)`` in the order of ``classes_``.

        The model's outputs, as float64 rows scaled to sum to 1 (a softmax's
        float32 rounding removed); the model must output probabilities (a
        softmax or sigmoid last layer), not logits.

        Raises:
            ValueError: an output is negative or a row sums to 0 (logits:
                use ``decision_function``).
        """
        outputs = numpy.asarray(self._raw_outputs(X), dtype=numpy.float64)
        totals = outputs.sum(axis=-1, keepdims=True)
        if (outputs < 0).any() or not numpy.all(totals > 0):
            raise ValueError(f"{type(self).__name__}.predict_proba expects the model to output class probabilities "
                             "(a softmax or sigmoid last layer), received negative outputs or rows summing to 0; "
                             "use decision_function for raw scores such as logits.")
        return outputs / totals

    def _process_target(self, y, reset=False):
        """Classifiers train on the one-hot encoding of ``y``."""
        kind = target_type(y)
        if kind not in ("binary", "multiclass"):
            raise ValueError(f"{type(self).__name__} expects binary or multiclass targets, received {kind} "
                             "targets (use SKLearnRegressor for continuous ones).")
        if reset:
            self.classes_ = numpy.unique(y)
            if len(self.classes_) == 1:
                raise ValueError(f"{type(self).__name__} can't train when only one class is present "
                                 f"(every target is {self.classes_[0]!r}).")
            self._target_encoder = one_hot_encoder(y)
        return self._target_encoder.transform(y)

    def _more_tags(self):  # scikit-learn < 1.6
        return {**super()._more_tags(), "poor_score": True}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.poor_score = True
        return tags


