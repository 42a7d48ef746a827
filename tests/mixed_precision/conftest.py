"""Every mixed-precision test starts and ends under the float32 global policy."""
import pytest

import minikeras as mk


@pytest.fixture(autouse=True)
def _float32_policy():
    mk.mixed_precision.set_global_policy("float32")
    yield
    mk.mixed_precision.set_global_policy("float32")
