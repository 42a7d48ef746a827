"""Model.from_config and Model subclasses called as M(inputs, outputs) (models/model.py)."""
import numpy
import pytest

import minikeras as mk
from minikeras import layers


class Tagged(mk.Model):
    """A subclass that keeps its own behaviour when made functional."""

    def describe(self):
        return f"tagged {self.name}"


def _graph():
    inputs = layers.Input((3,), name="x")
    return inputs, layers.Dense(2, name="head")(layers.Dense(4, name="body")(inputs))


def test_subclass_called_with_inputs_and_outputs_is_functional():
    inputs, outputs = _graph()
    model = Tagged(inputs, outputs, name="t")
    assert isinstance(model, Tagged) and isinstance(model, mk.models.Functional)
    assert model.describe() == "tagged t" and [layer.name for layer in model.layers] == ["x", "body", "head"]
    assert model.predict(numpy.ones((2, 3), "float32"), verbose=0).shape == (2, 2)
    plain = Tagged()  # without a graph it stays a subclassed model
    assert not isinstance(plain, mk.models.Functional)


def test_from_config_rebuilds_functional_and_subclass_models():
    inputs, outputs = _graph()
    original = mk.Model(inputs, outputs)
    config = original.get_config()
    copy = mk.Model.from_config(config)
    assert isinstance(copy, mk.models.Functional) and copy.count_params() == original.count_params()
    tagged = Tagged.from_config(config)
    assert isinstance(tagged, Tagged) and tagged.describe().startswith("tagged")


def test_from_config_with_an_unknown_class_names_custom_objects():
    inputs, outputs = _graph()
    config = mk.Model(inputs, outputs).get_config()
    config["layers"][1]["class_name"] = "Mystery"
    with pytest.raises(ValueError, match="Unknown layer class 'Mystery'.*custom_objects"):
        mk.Model.from_config(config)
    restored = mk.Model.from_config(config, custom_objects={"Mystery": layers.Dense})
    assert restored.layers[1].name == "body"
