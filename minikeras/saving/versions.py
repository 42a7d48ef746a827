"""The version strings written into every saved file: the Keras release whose
layout minikeras's files follow, and minikeras's own version."""

KERAS_VERSION = "3.15.1"  # the Keras release whose layout the .keras / .h5 files follow


def minikeras_version():
    """``minikeras.__version__`` (imported at call time: ``import minikeras``
    loads part of saving/ before its ``__version__`` line has run)."""
    import minikeras

    return minikeras.version()
