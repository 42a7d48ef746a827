"""``cupy.cuda.nccl`` of the simulated CUDA: minikeras.testing.sim_nccl's
model of CuPy 14.2's NCCL module, its device pointers resolved in the
simulated memory (memory._host_view)."""
from minikeras.testing import sim_nccl
from minikeras.testing.sim_cupy.cuda import memory

_module = sim_nccl.SimNccl(memory._host_view)
available = True
NcclError = sim_nccl.NcclError
NcclCommunicator = _module.NcclCommunicator
get_unique_id = _module.get_unique_id
globals().update({name: value for name, value in vars(sim_nccl).items() if name.startswith("NCCL_")
                  and name != "NCCL_UNIQUE_ID_BYTES"})
