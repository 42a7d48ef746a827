"""Where a layer's weights live: Keras 3's variable paths.

A layer opens its name scope (``scopes.name_scope(layer.name)``) around its
build, its call and each weight it makes, so a variable's ``path`` is the
names of the layers that built it, outermost first: a Sequential's Dense
kernel is ``"sequential/dense/kernel"``, a functional model's (its layers
are built before the model exists) ``"dense/kernel"``, a sublayer's
``"outer/inner/kernel"``.

The place of a layer's scope is fixed the first time the layer opens it
(Keras's ``_parent_path``): a layer built on its own keeps
``"dense/kernel"`` when a model calls it later, and a layer first built
inside a model keeps ``"model/dense"`` as its scope wherever it is called
afterwards. Paths name weights for people, callbacks (TensorBoard tags)
and path-keyed maps (``OptimizerMap``, ``LayoutMap``); weight files do not
read them.
"""
import functools

from minikeras import scopes


def open_name_scope(layer):
    """The layer's name scope, its place recorded on the first opening.

    Returns:
        A ``scopes.name_scope`` to enter; inside, new variables get the
        path ``"<parents>/<layer>/<weight>"``.
    """
    if layer._parent_path is None:
        layer._parent_path = scopes.current_path()
    return scopes.name_scope(layer.name, caller=layer)


def build_in_name_scope(build):
    """``build`` running in the layer's name scope (Keras wraps every build
    so): the weights a direct ``layer.build(shape)`` makes, its sublayers'
    included, get the paths a first call would give them."""
    if getattr(build, "_in_name_scope", False):
        return build

    @functools.wraps(build)
    def build_in_scope(self, *args, **kwargs):
        with open_name_scope(self):
            return build(self, *args, **kwargs)

    build_in_scope._in_name_scope = True
    return build_in_scope
