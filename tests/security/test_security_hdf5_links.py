"""An HDF5 file may hold only its own data (issue 36, item 2): external
links, virtual datasets, external raw storage and soft links to nothing
are refused by every reader, with the library's FileLoadError naming the
path, before a value is read, so a crafted weights file cannot pull
another file of the disk into the model (saving/hdf5_links.py)."""
import h5py
import numpy
import pytest

import minikeras as mk
from minikeras.saving import FileLoadError

import craft_configs

KINDS = {
    "external": "'/layers/dense/vars/0' is an external link to '/data' in the file '.*outside.h5'",
    "external_group": "'/layers/dense/vars' is an external link to '/group'",
    "virtual": "'/layers/dense/vars/0' is a virtual dataset",
    "external_storage": "'/layers/dense/vars/0' is a dataset whose bytes are stored in external files",
    "dangling_soft": "'/layers/dense/vars/0' is a soft link to '/nowhere/kernel', which is no object of the file",
}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_load_weights_refuses_data_from_outside_the_file(tmp_path, kind):
    path = str(tmp_path / f"{kind}.weights.h5")
    model = craft_configs.linked_weights(path, str(tmp_path), kind)
    before = [weight.numpy().copy() for weight in model.weights]
    with pytest.raises(FileLoadError, match=KINDS[kind] + ".*refusing it"):
        model.load_weights(path)
    assert all(numpy.array_equal(weight.numpy(), value) for weight, value in zip(model.weights, before))
    with h5py.File(path, "r") as handle:  # and an open file given in its place
        with pytest.raises(FileLoadError, match=KINDS[kind]):
            model.load_weights(handle)


def test_a_soft_link_inside_the_file_is_followed(tmp_path):
    path = str(tmp_path / "inner.weights.h5")
    model = craft_configs.linked_weights(path, str(tmp_path), "inner_soft")
    model.load_weights(path)
    assert numpy.all(model.get_layer("d").kernel.numpy() == 7.0)


def test_a_legacy_h5_model_with_an_external_link_is_refused(tmp_path):
    path = craft_configs.legacy_h5_with_link(str(tmp_path / "m.h5"), str(tmp_path))
    with pytest.raises(FileLoadError, match=r"kernel.* is an external link to '/data'"):
        mk.models.load_model(path)
    model = craft_configs.small_model()
    with pytest.raises(FileLoadError, match="is an external link"):
        model.load_weights(path)  # its weights, by the tf.keras layout


def test_a_keras_file_whose_weights_link_out_is_refused(tmp_path):
    path = craft_configs.keras_with_linked_weights(str(tmp_path / "m.keras"), str(tmp_path))
    with pytest.raises(FileLoadError, match="'/layers/dense/vars/0' is an external link"):
        mk.models.load_model(path)
    with pytest.raises(FileLoadError, match="is an external link"):
        craft_configs.small_model().load_weights(path)
    with pytest.raises(FileLoadError, match="is an external link"):
        mk.saving.KerasFileEditor(path)


def test_an_application_given_a_linked_weights_file_refuses_it(tmp_path):
    # applications(..., weights=path) end in imagenet_utils.load_weights; a small model keeps this test fast.
    from minikeras.applications import imagenet_utils

    path = str(tmp_path / "app.weights.h5")
    model = craft_configs.linked_weights(path, str(tmp_path), "external")
    with pytest.raises(FileLoadError, match="is an external link"):
        imagenet_utils.load_weights(model, path)
