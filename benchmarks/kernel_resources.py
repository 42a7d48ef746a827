"""What nvcc reports for every fused kernel: registers, stack frame, spills, divisions.

For each kernel of ``minikeras.kernels`` with a CUDA source, compiled as
CuPy hands it to NVRTC (``kernels.cuda_source``) for each dtype and
architecture: ``-Xptxas -v``'s registers, stack frame bytes (local memory:
an array indexed at run time, e.g. a pointer table) and spill bytes, and
the PTX's ``div``/``rem`` instructions on 64 and 32 bits (a division by a
divisor known only at run time costs ~70 or ~20 instructions). No GPU
needed: nvcc alone (issue 33; tests/kernels/test_cuda_sources.py asserts
the floors for the kernels written to them).

    python benchmarks/kernel_resources.py [--arch sm_90 sm_80] [--dtype float32] [--json out.json]

``MINIKERAS_SOURCE=<folder>`` reads the kernels of another checkout (e.g.
an older commit's ``git archive``) with this checkout's tools.
"""
import argparse
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.environ.get("MINIKERAS_SOURCE", ROOT))
sys.path.insert(1, ROOT)

from _report import report  # noqa: E402
from tests.kernels.cuda_tools import kernel_units, nvcc, ptxas_report  # noqa: E402

COLUMNS = ["kernel", "dtype", "arch", "registers", "stack", "spill_stores", "spill_loads", "div64", "div32"]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", nargs="+", default=["sm_90"])
    parser.add_argument("--dtype", nargs="+", default=["float32"])
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    if nvcc() is None:
        print("nvcc not found: nothing to report")
        return 0
    from minikeras import kernels

    compiled = {name: kernel for name, kernel in kernels.registered().items() if kernel.cuda_source is not None}
    with tempfile.TemporaryDirectory() as workdir:
        found = ptxas_report(kernel_units(compiled, args.dtype), args.arch, workdir)
    rows = [dict(kernel=name, dtype=stem.split("_")[-1], arch=arch, **resources)
            for (arch, stem), kernels_found in sorted(found.items()) for name, resources in sorted(kernels_found.items())]
    report("kernel_resources", rows, COLUMNS, path=args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
