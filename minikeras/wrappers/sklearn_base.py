"""`SKLBase`: what Keras's three scikit-learn wrappers share.

A wrapper is a scikit-learn estimator (``get_params``/``set_params``,
``clone``, pipelines, grid searches) around a minikeras model: ``fit``
validates ``X`` and ``y`` as scikit-learn does, turns ``y`` into what the
model trains on (see ``_targets.py``), makes the model and calls its
``fit``; ``predict`` turns the model's outputs back.

Where Keras 3.15's code differs from its documentation, this follows the
documentation: ``warm_start=True`` reuses the fitted model (Keras 3.15
ignores it), ``clone`` keeps ``fit_kwargs`` (Keras's ``__sklearn_clone__``
drops them), ``fit(**kwargs)`` does not write into ``fit_kwargs`` (Keras's
does), ``set_fit_request`` routes metadata to ``fit`` (Keras's to
``score``) and ``epoch_`` counts the epochs trained (Keras's raises).
A fitted wrapper pickles (its model travels as a ``.keras`` file).
"""
import copy

import numpy

from minikeras.models import Model
from minikeras.wrappers import _models
from minikeras.wrappers._sklearn import (
    BaseEstimator, check_is_fitted, require_scikit_learn, routing_enabled, sklearn, target_type, validate_data,
)
from minikeras.wrappers._targets import TargetReshaper


class SKLBase(BaseEstimator):
    """Base of the scikit-learn wrappers.

    Args:
        model: a compiled minikeras `Model`, or a callable returning one. A
            `Model` is cloned (fresh weights, compiled as given) for every fit
            unless ``warm_start`` is True. A callable is called as
            ``model(X=X, y=y, **model_kwargs)`` with the validated data (``y``
            one-hot for classifiers), so it can size the inputs and outputs.
        warm_start: when True, a second ``fit`` continues training the fitted
            model (and a `Model` given as ``model`` is trained itself, not a
            clone).
        model_kwargs: keyword arguments of the ``model`` callable.
        fit_kwargs: keyword arguments of ``model.fit`` (``epochs``,
            ``batch_size``, ``verbose``...); those given to the wrapper's
            ``fit`` take precedence.

    Attributes:
        model_: the fitted model.
        history_: the `History` its ``fit`` returned.
        n_features_in_: the number of features seen by ``fit``.
    """

    _multi_output = True  # targets of shape (n_samples, n_outputs) accepted

    def __init__(self, model, warm_start=False, model_kwargs=None, fit_kwargs=None):
        require_scikit_learn(type(self).__name__)
        self.model = model
        self.warm_start = warm_start
        self.model_kwargs = model_kwargs
        self.fit_kwargs = fit_kwargs

    # ------------------------------------------------------------ scikit-learn's estimator protocol
    def _more_tags(self):  # scikit-learn < 1.6
        return {"non_deterministic": True}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = True  # weights start random and training is stochastic
        return tags

    @property
    def epoch_(self):
        """The epochs the fitted model has been trained for (0 before ``fit``; warm starts add up)."""
        return getattr(self, "_epochs_trained", 0)

    def set_fit_request(self, **requests):
        """Asks scikit-learn's metadata routing to pass these arguments to ``fit``.

        For example ``est.set_fit_request(sample_weight=True)`` makes a
        pipeline or a grid search hand ``sample_weight`` to this estimator's
        ``fit`` (and so to ``model.fit``). Needs
        ``sklearn.set_config(enable_metadata_routing=True)``.

        Args:
            **requests: ``name=True`` (pass it), ``False`` (do not), ``None``
                (error if given) or a string (the alias it is passed under).

        Returns:
            self.
        """
        if not routing_enabled():
            raise RuntimeError(f"{type(self).__name__}.set_fit_request needs scikit-learn's metadata routing: "
                               "enable it with sklearn.set_config(enable_metadata_routing=True).")
        from sklearn.utils.metadata_routing import MetadataRequest

        if not hasattr(self, "_metadata_request"):
            self._metadata_request = MetadataRequest(owner=type(self).__name__)
        for name, alias in requests.items():
            self._metadata_request.fit.add_request(param=name, alias=alias)
        return self

    # ------------------------------------------------------------ fit / predict
    def fit(self, X, y, **kwargs):
        """Fits the model on ``X`` and ``y``.

        Args:
            X: array-like of shape ``(n_samples, n_features)``.
            y: array-like of shape ``(n_samples,)`` or ``(n_samples, n_outputs)``.
            **kwargs: more keyword arguments of ``model.fit`` (over ``fit_kwargs``).

        Returns:
            self.
        """
        warm = self.warm_start and getattr(self, "model_", None) is not None
        # Several target columns train a model with several outputs; a single column is raveled (with
        # scikit-learn's DataConversionWarning) as Keras's validation does. Classifiers take one column.
        shape = numpy.asarray(y).shape if self._multi_output else ()
        several = len(shape) == 2 and shape[1] > 1
        X, y = validate_data(self, X, y, reset=not warm, multi_output=several)
        y = self._process_target(y, reset=True)
        if warm:
            model = self.model_
        elif self.warm_start and isinstance(self.model, Model):
            model = self.model
            _models.check_compiled(type(self).__name__, model)
        else:
            model = _models.build_model(type(self).__name__, self.model, self.model_kwargs, X, y)
        self.history_ = model.fit(X, y, **{**(self.fit_kwargs or {}), **kwargs})
        self.model_ = model
        self._epochs_trained = (self.epoch_ if warm else 0) + len(self.history_.epoch)
        return self

    def predict(self, X):
        """The model's predictions for ``X``, as the targets were given (a 1-D ``y`` gives 1-D predictions)."""
        return self._reverse_process_target(self._raw_outputs(X))

    def _raw_outputs(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        outputs = self.model_.predict(X)
        # A functional model built with outputs=[x] answers a list of one here; Keras unpacks it.
        return outputs[0] if isinstance(outputs, (list, tuple)) and len(outputs) == 1 else outputs

    def _process_target(self, y, reset=False):
        """Regressors and transformers: ``y`` as a column (``(n, 1)``) when it is 1-D."""
        target_type(y)  # an unknown target type is refused here, as in Keras
        if reset:
            self._target_encoder = TargetReshaper().fit(y)
        return self._target_encoder.transform(y)

    def _reverse_process_target(self, outputs):
        return self._target_encoder.inverse_transform(outputs)

    # ------------------------------------------------------------ pickling (joblib, clone of a fitted estimator)
    def __getstate__(self):
        state = super().__getstate__() if sklearn is not None else self.__dict__.copy()
        state = dict(state)
        for key in ("model", "model_"):
            if isinstance(state.get(key), Model):
                state[key] = _models.PickledModel(state[key])
        if state.get("history_") is not None:
            history = copy.copy(state["history_"])
            history.model = None  # the model travels as model_
            state["history_"] = history
        return state

    def __setstate__(self, state):
        state = dict(state)
        for key in ("model", "model_"):
            if isinstance(state.get(key), _models.PickledModel):
                state[key] = state[key].restore()
        if state.get("history_") is not None and isinstance(state.get("model_"), Model):
            state["history_"].model = state["model_"]
        if sklearn is not None:
            super().__setstate__(state)
        else:
            self.__dict__.update(state)
