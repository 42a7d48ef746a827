"""The CUDA libraries minikeras calls through ctypes, modelled at that
boundary for the simulated CuPy (provided to the library by
``minikeras.device.native`` for this module only)."""
