"""Test doubles of CUDA libraries that model their documented behaviour
(not part of the public API; used by the test suite and the GPU session's
dry run). Nothing here imports CuPy or the rest of minikeras."""
