"""The random generators' state in a model file, for bit-exact resume.

Written and read as one JSON attribute of the file's root, next to the
optimizer state and only with it (``include_optimizer``): the shuffling
stream, the host stream (augmentation), every device's stream (Dropout,
noise layers) and the layers' own seeded streams and SeedGenerators. JSON, never pickle: a file holds data, not code. Files
without the attribute (older ones, Keras's) load as before.
"""
import json
import warnings

from minikeras import random
from minikeras.layers.base import walk_layers

ATTRIBUTE = "minikeras_random_state"


def write_random_state(handle, model):
    """Store the generators' state in the open h5py File ``handle``."""
    handle.attrs[ATTRIBUTE] = json.dumps(random.get_state(walk_layers(model)))


def read_random_state(handle, model, source):
    """Restore the generators' state from ``handle`` if the file has one.

    A malformed state is not fatal (the model and optimizer are fine): it
    gives a warning and the generators keep their current state.
    """
    if ATTRIBUTE not in handle.attrs:
        return
    try:
        random.set_state(json.loads(handle.attrs[ATTRIBUTE]), walk_layers(model))
    except (ValueError, TypeError) as error:
        warnings.warn(f"The random generator state in {source} could not be restored ({error}); training "
                      "continues with fresh random streams, so resuming is not bit-exact.", stacklevel=4)
