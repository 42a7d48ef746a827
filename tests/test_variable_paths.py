"""Variable paths as Keras 3 gives them (layers/layer_paths.py): a layer's
build, call and weights run in its name scope, so the weights a Sequential,
a subclassed model or a custom layer builds get their container's name in
front, while a functional model's layers, built before the model exists, do
not. The place of a layer's scope is fixed when first opened, so paths do
not move when a built layer joins a model. The paths are checked against
Keras 3.15 side by side when Keras imports, and as Keras documents them
without it."""
import numpy
import pytest

import minikeras as mk
from minikeras import layers


def _structures(library):
    """``{case: [variable paths]}`` of the same models made in ``library``
    (keras or minikeras), every layer named so that no global counter counts."""
    klayers = library.layers
    x = numpy.ones((2, 3), "float32")

    class Outer(klayers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.inner = klayers.Dense(2, name="inner")

        def build(self, input_shape):  # builds its sublayer directly, as Keras's guide shows
            self.inner.build(input_shape)

        def call(self, inputs):
            return self.inner(inputs)

    class Wrapped(library.Model):
        def __init__(self):
            super().__init__(name="wrapped")
            self.block = Outer(name="block")
            self.head = klayers.Dense(1, name="head")

        def call(self, inputs):
            return self.head(self.block(inputs))

    cases = {}
    sequential = library.Sequential([klayers.Input((3,)), klayers.Dense(3, name="hidden"),
                                     klayers.Dense(1, name="out")], name="stack")
    cases["sequential"] = sequential.weights
    lazy = library.Sequential([klayers.Dense(2, name="first")], name="lazy")
    lazy(x)  # built by its first call
    cases["sequential built on call"] = lazy.weights

    inputs = klayers.Input((3,))
    inner_model = library.Sequential([klayers.Dense(2, name="d")], name="inner_model")
    outputs = Outer(name="outer")(inner_model(klayers.Dense(3, name="f")(inputs)))
    cases["functional"] = library.Model(inputs, outputs, name="graph").weights

    wrapped = Wrapped()
    wrapped(x)
    cases["subclassed"] = wrapped.weights

    alone = Outer(name="alone")
    alone.build((None, 3))  # a direct build opens the layer's scope too
    cases["direct build"] = alone.weights

    solo = klayers.Dense(2, name="solo")
    solo.build((None, 3))
    library.Sequential([klayers.Input((3,)), solo], name="later")  # built already: its paths stay
    cases["built, then in a model"] = solo.weights

    nested = library.Sequential([klayers.Input((3,)), library.Sequential([klayers.Dense(2, name="d2")], name="sub")],
                                name="top")
    cases["nested sequential"] = nested.weights

    with library.name_scope("scope"):
        scoped = klayers.Dense(2, name="scoped")
        scoped.build((None, 3))
    cases["name_scope"] = scoped.weights

    trained = library.Sequential([klayers.Input((3,)), klayers.Dense(2, name="fit_me")], name="trained")
    trained.compile(library.optimizers.Adam(), "mse")
    trained.fit(x, numpy.zeros((2, 2), "float32"), verbose=0)
    cases["trained"] = trained.weights
    paths = {case: [weight.path for weight in weights] for case, weights in cases.items()}
    return paths, trained.optimizer


KERAS_PATHS = {  # what Keras 3.15.1 gives (and documents: model.weights[0].path)
    "sequential": ["stack/hidden/kernel", "stack/hidden/bias", "stack/out/kernel", "stack/out/bias"],
    "sequential built on call": ["lazy/first/kernel", "lazy/first/bias"],
    "functional": ["f/kernel", "f/bias", "inner_model/d/kernel", "inner_model/d/bias",
                   "outer/inner/kernel", "outer/inner/bias"],
    "subclassed": ["wrapped/block/inner/kernel", "wrapped/block/inner/bias", "wrapped/head/kernel",
                   "wrapped/head/bias"],
    "direct build": ["alone/inner/kernel", "alone/inner/bias"],
    "built, then in a model": ["solo/kernel", "solo/bias"],
    "nested sequential": ["top/sub/d2/kernel", "top/sub/d2/bias"],
    "name_scope": ["scope/scoped/kernel", "scope/scoped/bias"],
    "trained": ["trained/fit_me/kernel", "trained/fit_me/bias"],
}
KERAS_SLOTS = ["trained_fit_me_kernel_momentum", "trained_fit_me_kernel_velocity",
               "trained_fit_me_bias_momentum", "trained_fit_me_bias_velocity"]


def test_paths_are_keras_3s():
    paths, optimizer = _structures(mk)
    assert paths == KERAS_PATHS
    assert optimizer.state_names() == ["iteration"] + KERAS_SLOTS  # Keras's slot names: the path, "/" as "_"


def test_paths_equal_keras_side_by_side():
    try:
        import keras
    except Exception:  # not installed, or no backend to run it
        pytest.skip("Keras 3 is not installed")
    if int(keras.__version__.split(".")[0]) < 3:
        pytest.skip(f"Keras 3 is the reference here, found {keras.__version__}")
    expected, keras_optimizer = _structures(keras)
    got, optimizer = _structures(mk)
    assert got == expected
    keras_slots = [variable.name for variable in keras_optimizer.variables]
    assert keras_slots[:2] == ["iteration", "learning_rate"]  # the rate is config in minikeras, not state
    assert optimizer.state_names() == ["iteration"] + keras_slots[2:]


def test_names_stay_the_files_labels():
    model = mk.Sequential([layers.Input((4,)), layers.Dense(3, name="hidden")], name="stack")
    assert [w.name for w in model.weights] == ["hidden/kernel", "hidden/bias"]


def test_a_layers_scope_stays_where_it_was_first_opened():
    # A layer first called inside a model keeps that place: a weight it adds
    # on a later call, made outside any model, still gets the model's name.
    class Growing(layers.Layer):
        calls = 0

        def call(self, inputs):
            self.calls += 1
            if self.calls == 2:  # a weight made late, on the second call
                self.late = self.add_weight(shape=(), name="late")
            return inputs

    grower = Growing(name="grower")
    mk.Sequential([layers.Input((2,)), grower], name="host")  # the first call
    grower(numpy.ones((1, 2), "float32"))
    assert grower.late.path == "host/grower/late"


def test_files_round_trip_whatever_the_paths(tmp_path):
    # Weight files do not read paths: weights saved from one model load into
    # a twin under another name (other paths), and a loaded model has its own.
    def make(name):
        return mk.Sequential([layers.Input((3,)), layers.Dense(2, name="d")], name=name)

    source = make("first")
    source.save_weights(tmp_path / "w.weights.h5")
    source.save(tmp_path / "m.keras")
    twin = make("second")
    twin.load_weights(tmp_path / "w.weights.h5")
    assert [w.path for w in twin.weights] == ["second/d/kernel", "second/d/bias"]
    for ours, theirs in zip(twin.get_weights(), source.get_weights()):
        numpy.testing.assert_array_equal(ours, theirs)
    loaded = mk.models.load_model(tmp_path / "m.keras")
    assert [w.path for w in loaded.weights] == ["first/d/kernel", "first/d/bias"]
    for ours, theirs in zip(loaded.get_weights(), source.get_weights()):
        numpy.testing.assert_array_equal(ours, theirs)


def test_a_slash_in_a_layer_name_is_refused():
    with pytest.raises(ValueError, match="cannot contain '/'"):
        layers.Dense(2, name="a/b")
