"""The old name of the shared layer check: it lives in layer_check.py now
(kept so branches written against this name still import it)."""
from tests.layers.layer_check import run_layer_test  # noqa: F401
