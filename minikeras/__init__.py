"""minikeras: a Keras-style deep learning library on its own autograd engine."""
