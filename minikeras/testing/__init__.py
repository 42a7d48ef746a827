"""Test doubles of CUDA that model its documented behaviour (not part of
the public API; used by the test suite, the benchmarks and the GPU session's
dry run): ``sim_cupy``, the simulated CuPy that the device registry is handed
in place of ``cupy`` when ``MINIKERAS_SIMULATED_GPU`` is set, and
``sim_nccl``, its ``cupy.cuda.nccl``. ``import minikeras`` loads none of it."""
