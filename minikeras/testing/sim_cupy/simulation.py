"""The simulated CUDA's own controls and facts (not CuPy's API: the
CuPy-named modules beside this one mirror CuPy 14.2 exactly)."""
from minikeras.testing.sim_cupy._races import RaceError  # noqa: F401  (what the race detector raises)
from minikeras.testing.sim_cupy._errors import CUBLASError  # noqa: F401
from minikeras.testing.sim_cupy.cuda.device import _CUBLAS_HANDLE_BYTES as CUBLAS_HANDLE_BYTES  # noqa: F401
from minikeras.testing.sim_cupy.cuda.memory import _block_at as block_at, _host_view as host_view  # noqa: F401
from minikeras.testing.sim_cupy.cuda import runtime as _runtime
from minikeras.testing.sim_cupy.cuda.pinned_memory import _allocations as pinned_allocations  # noqa: F401

ENVIRONMENT_VARIABLE = _runtime._ENVIRONMENT_VARIABLE  # "MINIKERAS_SIMULATED_GPU"
MEMORY_BYTES = _runtime._MEMORY_BYTES  # what each simulated GPU has
requested = _runtime._requested  # (devices, logical GPUs per device) the variable asks for


def requested_count():
    """Simulated devices asked for by ``MINIKERAS_SIMULATED_GPU`` (0: none)."""
    return requested()[0]


def logical_split():
    """Logical GPUs per simulated device that ``MINIKERAS_SIMULATED_GPU=NxM``
    asks the test suite for (M; 1 without ``xM``)."""
    return requested()[1]
