"""Shared data of the applications tests: Keras's recorded constructors."""
import gzip
import json
import pathlib

import pytest

FIXTURES = pathlib.Path(__file__).parent / "fixtures"


@pytest.fixture(scope="session")
def keras_applications():
    """``{constructor: {"default"|"small": {"params", "weighted", ...}}}`` from Keras 3."""
    with gzip.open(FIXTURES / "keras_applications.json.gz", "rt") as handle:
        return json.load(handle)
