"""scikit-learn, imported when ``minikeras.wrappers`` is, if it is installed.

scikit-learn is never a dependency of minikeras: ``import minikeras`` does
not load this module, and without scikit-learn the wrapper classes still
exist (their names are Keras's) but refuse to be made, with an error that
says ``pip install scikit-learn`` (as Keras does). The base classes below are
scikit-learn's when it is installed, plain placeholders otherwise.
"""
try:
    import sklearn
    from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, TransformerMixin
except ImportError:  # the wrappers then refuse to be made (require_scikit_learn)
    sklearn = None

    class BaseEstimator:
        """Placeholder for ``sklearn.base.BaseEstimator`` (scikit-learn is not installed)."""

    class ClassifierMixin:
        """Placeholder for ``sklearn.base.ClassifierMixin``."""

    class RegressorMixin:
        """Placeholder for ``sklearn.base.RegressorMixin``."""

    class TransformerMixin:
        """Placeholder for ``sklearn.base.TransformerMixin``."""

__all__ = ["sklearn", "BaseEstimator", "ClassifierMixin", "RegressorMixin", "TransformerMixin",
           "require_scikit_learn", "validate_data", "target_type", "routing_enabled", "check_is_fitted"]


def require_scikit_learn(owner):
    """Raises ImportError naming ``owner`` when scikit-learn is not installed."""
    if sklearn is None:
        raise ImportError(f"{owner} requires scikit-learn, which is not installed. "
                          "Install it with `pip install scikit-learn`.")


def validate_data(estimator, *args, **kwargs):
    """scikit-learn's input validation (``validate_data`` from 1.6, the
    estimator's ``_validate_data`` before): arrays checked and converted,
    ``n_features_in_`` set on ``reset``."""
    try:
        from sklearn.utils.validation import validate_data as validate
    except ImportError:  # scikit-learn < 1.6
        return estimator._validate_data(*args, **kwargs)
    return validate(estimator, *args, **kwargs)


def target_type(y):
    """scikit-learn's ``type_of_target`` of ``y``; an unknown type is refused."""
    from sklearn.utils.multiclass import type_of_target

    kind = type_of_target(y)
    if kind == "unknown":
        raise ValueError(f"Unknown label type for the targets: {y!r}")
    return kind


def routing_enabled():
    """Whether scikit-learn's metadata routing is on (``sklearn.set_config(enable_metadata_routing=True)``)."""
    return sklearn is not None and bool(sklearn.get_config().get("enable_metadata_routing", False))


def check_is_fitted(estimator):
    """scikit-learn's NotFittedError unless ``estimator`` has been fitted."""
    from sklearn.utils.validation import check_is_fitted as check

    check(estimator)
