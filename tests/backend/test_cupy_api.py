"""Everything minikeras asks of the array module exists in real CuPy.

On the CPU ``xp`` is NumPy, which is more lenient than CuPy; these tests read
the package's source (tests/backend/cupy_api_scan.py) and check each use
against the installed ``cupy`` package, which imports without a GPU. They
need no device, and check whatever code is in minikeras/ when they run.
"""
from pathlib import Path

import pytest

from tests.backend import cupy_api_scan as scan

cupy = pytest.importorskip("cupy", reason="cupy-cuda12x is in the test extra: pip install -e '.[test]'")
import numpy  # noqa: E402  (after the skip, to keep the reason first)

PACKAGE = Path(__file__).resolve().parents[2] / "minikeras"

# Genuine CuPy quirks the scan would misreport, each with its reason, as
# {(kind, path, keyword): "why"}; keyword None means the name itself. Empty
# today: every use the scan finds is checked for real.
ALLOWED = {}

# Defects of issue 10 that were present when this test was written and are
# fixed on the gpu-core branch (device classes). Once that branch is merged
# they no longer occur and test_known_defects_are_still_present tells you to
# delete the entry: the list cannot go stale silently.
KNOWN_DEFECTS = set()  # ("generator", ("normal",)) fixed: random.normal draws standard_normal


@pytest.fixture(scope="module")
def uses():
    found = scan.scan_package(PACKAGE)
    assert len(found) > 50, "the scan found almost nothing: is it reading minikeras/?"
    return found


def _cupy_flags():
    from cupy._core.flags import Flags

    return {name for name in dir(Flags) if not name.startswith("_")}


def _problems(uses):
    """``{(kind, path, keyword): [where, ...]}`` for every use CuPy does not support."""
    problems = {}

    def add(use, keyword, why):
        key = (use.kind, use.path, keyword)
        if key in ALLOWED:
            return
        problems.setdefault(key, []).append(f"{use.where}: {why}")

    flags = _cupy_flags()
    for use in uses:
        if use.kind == "module":
            target = _resolve_or_report(cupy, use, add)
        elif use.kind == "generator":
            target = _resolve_or_report(cupy.random.Generator, use, add, "cupy.random.Generator")
        elif use.kind == "array_attribute":
            add(use, None, f"cupy.ndarray has no attribute {use.path[-1]!r}")
            continue
        elif use.kind == "flag":
            if use.path[-1] not in flags:
                add(use, None, f"cupy's ndarray.flags has no {use.path[-1]!r} (it has {sorted(flags)})")
            continue
        elif use.kind == "array_method":
            _check_array_method(use, add)
            continue
        else:
            raise AssertionError(f"unknown use kind {use.kind}")
        if target is not None and use.keywords:
            _check_keywords(target, use, add, ".".join(("cupy",) + use.path))
    return problems


def _resolve_or_report(owner, use, add, owner_name="cupy"):
    try:
        return scan.resolve(owner, use.path)
    except AttributeError:
        add(use, None, f"{owner_name}.{'.'.join(use.path)} does not exist")
        return None


def _check_keywords(target, use, add, name):
    try:
        accepted = scan.accepted_keywords(target)
    except LookupError:
        add(use, "<signature>", f"{name}: no readable signature; check it by hand and list it in ALLOWED")
        return
    if accepted is None:
        return
    for keyword in use.keywords:
        if keyword not in accepted:
            add(use, keyword, f"{name} does not accept {keyword}= (it accepts {sorted(accepted)})")


def _check_array_method(use, add):
    name = use.path[-1]
    if name.startswith("_") or not hasattr(cupy.ndarray, name):
        return  # dunders are constructors; a missing method is an array_attribute use
    numpy_accepts = scan.accepted_keywords(getattr(numpy.ndarray, name))
    cupy_accepts = scan.accepted_keywords(getattr(cupy.ndarray, name))
    if cupy_accepts is None:
        return
    for keyword in use.keywords:
        # Only keywords NumPy's ndarray method takes: otherwise the receiver
        # was some other object with a method of the same name.
        if (numpy_accepts is None or keyword in numpy_accepts) and keyword not in cupy_accepts:
            add(use, keyword, f"cupy.ndarray.{name} does not accept {keyword}= (it accepts {sorted(cupy_accepts)})")


def _format(problems):
    return "\n".join(f"{key}: " + "; ".join(wheres) for key, wheres in sorted(problems.items(), key=str))


def test_every_array_module_use_exists_in_cupy(uses):
    problems = {key: wheres for key, wheres in _problems(uses).items() if key not in KNOWN_DEFECTS}
    assert not problems, "uses CuPy does not support:\n" + _format(problems)


def test_known_defects_are_still_present(uses):
    problems = _problems(uses)
    fixed = KNOWN_DEFECTS - set(problems)
    assert not fixed, f"fixed, delete from KNOWN_DEFECTS in {__file__}: {sorted(fixed, key=str)}"


def test_the_scan_sees_the_library_s_array_calls(uses):
    # A scan that silently found nothing would pass everything above.
    module_paths = {use.path for use in uses if use.kind == "module"}
    assert ("matmul",) in module_paths or ("dot",) in module_paths
    assert any(use.kind == "module" and use.keywords for use in uses)
    assert any(use.kind == "array_method" and "axis" in use.keywords for use in uses)


# ------------------------------------------------------------ cupy.cuda.nccl
# minikeras/testing/sim_nccl.py stands in for ``cupy.cuda.nccl`` in the
# tests; these check it, and what minikeras calls, against the installed
# CuPy. The real module imports only where libnccl.so.2 is installed (not on
# this CI: ``cupy.cuda.nccl.available`` is False there), so when it does not
# import, the signatures are read from the compiled extension's text: Cython
# embeds each function's signature in its docstring, which is stored in the
# .so file (the same text CuPy's nccl.pyx declares, tag v14.2.0).
_NCCL_FILES = ("distribute/nccl_all_reduce.py", "distribute/nccl_process_all_reduce.py")


def _nccl_signatures():
    """``{"NcclCommunicator.allReduce": "(self, intptr_t sendbuf, ...)", ...}``
    and the NCCL_* constant names of the installed CuPy's NCCL wrapper."""
    import importlib.util
    import re

    from cupy.cuda import nccl

    if nccl.available:
        from cupy_backends.cuda.libs import nccl as module

        texts = [value.__doc__ or "" for value in vars(module).values()]
        texts += [getattr(module.NcclCommunicator, name).__doc__ or "" for name in dir(module.NcclCommunicator)]
        text = "\n".join(texts)
        constants = {name for name in dir(module) if name.startswith("NCCL_")}
    else:
        spec = importlib.util.find_spec("cupy_backends.cuda.libs.nccl")
        text = open(spec.origin, "rb").read().decode("latin-1")
        constants = set(re.findall(r"NCCL_[A-Z0-9_]+", text))
    signatures = {}
    # A signature starts its docstring: at the start of a line (a docstring's
    # code example, ``comm = nccl.NcclCommunicator(world_size, ...)``, does not).
    for name, arguments in re.findall(r"(?m)(?:^|(?<=\x00))((?:NcclCommunicator\.)?\w+)(\([^()\n\x00]*\))", text):
        if name.startswith("NcclCommunicator") or name == "get_unique_id":
            signatures.setdefault(name, arguments)
    return signatures, constants


def test_fake_nccl_signatures_are_cupy_14s():
    from minikeras.testing import sim_nccl

    signatures, constants = _nccl_signatures()
    assert "NcclCommunicator.allReduce" in signatures, "could not read CuPy's NCCL signatures"
    for name, expected in sim_nccl.SIGNATURES.items():
        assert signatures.get(name) == expected, f"{name}: CuPy has {signatures.get(name)}, the fake models {expected}"
    fake = sim_nccl.SimNccl(resolve=None)
    for name in (n for n in dir(fake) if n.startswith("NCCL_")):
        assert name in constants, f"the fake's {name} is not in CuPy's nccl"
    # The fake's own parameters are the ones it claims.
    import inspect

    init = list(inspect.signature(fake.NcclCommunicator.__init__).parameters)
    assert init == ["self", "ndev", "commId", "rank", "config"]
    reduce = list(inspect.signature(fake.NcclCommunicator.allReduce).parameters)
    assert reduce == ["self", "sendbuf", "recvbuf", "count", "datatype", "op", "stream"]


def test_every_nccl_use_exists_in_cupy():
    import ast

    signatures, constants = _nccl_signatures()
    methods = {name.split(".", 1)[1] for name in signatures if "." in name}
    used = []
    for relative in _NCCL_FILES:
        for node in ast.walk(ast.parse((PACKAGE / relative).read_text())):
            if not isinstance(node, ast.Attribute):
                continue
            owner = node.value
            name = owner.id if isinstance(owner, ast.Name) else getattr(owner, "attr", None)
            if isinstance(owner, ast.Subscript):
                name = getattr(owner.value, "attr", None)
            if name in ("nccl", "_nccl", "module"):
                used.append(("module", node.attr, relative))
            elif name in ("_comm", "_comms"):
                used.append(("comm", node.attr, relative))
    assert any(kind == "comm" and name == "allReduce" for kind, name, _ in used), "the scan found no allReduce"
    missing = []
    for kind, name, where in used:
        if kind == "module":
            known = name in constants or name in signatures or name in ("NcclCommunicator", "available")
        else:
            known = name in methods
        if not known:
            missing.append(f"{where}: {kind} {name}")
    assert not missing, "NCCL names CuPy 14 does not have:\n" + "\n".join(missing)


# --------------------------------------------------- the simulated CuPy
# minikeras.testing.sim_cupy is handed to the device registry in place of
# ``cupy`` in CI's simulated run. Every public name it offers, in every
# CuPy-named module, exists in the installed CuPy, and what it defines itself
# takes CuPy's parameters, raises CuPy's errors with CuPy's messages and
# holds CuPy's constants: the double cannot drift from the real module
# unnoticed. (Its own controls are in ``simulation``; ``libs`` models the
# C libraries minikeras calls through ctypes, checked against those calls.)
import importlib  # noqa: E402
import inspect  # noqa: E402
import types  # noqa: E402

_SIM = "minikeras.testing.sim_cupy"
_SIM_MODULES = ("", ".cuda", ".cuda.runtime", ".cuda.memory", ".cuda.pinned_memory", ".cuda.stream", ".cuda.graph", ".cuda.device",
                ".cuda.nvrtc", ".cuda.compiler", ".random", "._core")
_OWN = {"simulation", "libs"}  # the simulation's own (module comment)


def _sim_and_real(suffix):
    return importlib.import_module(_SIM + suffix), scan.resolve(cupy, tuple(filter(None, suffix.split("."))))


def _offered(module):
    """``{name: value}`` of what a simulated module offers publicly (imported
    helper modules of the Python library excluded)."""
    offered = {}
    for name, value in vars(module).items():
        if name.startswith("_") or name in _OWN:
            continue
        if isinstance(value, types.ModuleType) and not (hasattr(module, "__path__") and
                                                        value.__name__.startswith(module.__name__ + ".")):
            continue  # a helper module it imports; a package's submodules are CuPy's names
        offered[name] = value
    if module.__name__ == _SIM:
        from minikeras.testing.sim_cupy import _names

        offered.update({name: None for name in _names.TOP})
    return offered


def _parameters(function):
    """A function's parameter names (no ``self``, no ``*args``/``**kwargs``)."""
    try:
        accepted = scan.accepted_keywords(function)
    except LookupError:
        return None
    return None if accepted is None else {keyword.split()[-1].lstrip("*") for keyword in accepted}


def _defined_here(value, module):
    return getattr(value, "__module__", None) == module.__name__ or (
        isinstance(value, type) and value.__module__.startswith(("cupy", "cupy_backends")) and
        value.__qualname__ in vars(module) and vars(module)[value.__qualname__] is value)


@pytest.mark.parametrize("suffix", _SIM_MODULES)
def test_every_name_the_simulated_cupy_offers_is_cupys(suffix):
    simulated, real = _sim_and_real(suffix)
    missing = [name for name in _offered(simulated) if not hasattr(real, name) and not (
        hasattr(real, "__path__") and importlib.util.find_spec(f"{real.__name__}.{name}") is not None)]
    assert not missing, f"{simulated.__name__} offers names {real.__name__} lacks: {missing}"


@pytest.mark.parametrize("suffix", _SIM_MODULES)
def test_what_the_simulated_cupy_defines_takes_cupys_parameters(suffix):
    simulated, real = _sim_and_real(suffix)
    problems = []
    for name, value in _offered(simulated).items():
        if value is None or not _defined_here(value, simulated):
            continue
        target = getattr(real, name)
        pairs = [(name, value, target)]
        if isinstance(value, type):
            pairs = [(f"{name}.__init__", value.__init__, target.__init__)] + [
                (f"{name}.{member}", getattr(value, member), getattr(target, member, None))
                for member in vars(value) if not member.startswith("_")]
        for where, mine, theirs in pairs:
            if theirs is None:
                problems.append(f"{where}: CuPy has no such member")
                continue
            if isinstance(mine, (property, staticmethod, classmethod)) or not callable(mine):
                continue
            expected, offered = _parameters(theirs), _parameters(mine)
            if expected is not None and offered is not None and where.endswith("__init__") and not expected:
                continue  # a Cython class whose __init__ shows no signature
            if expected is not None and offered is not None and offered != expected:
                problems.append(f"{where}{sorted(offered)} vs CuPy's {sorted(expected)}")
    assert not problems, "\n".join(problems)


def test_the_simulated_ndarray_has_only_cupys_attributes():
    from minikeras.testing import sim_cupy
    from minikeras.testing.sim_cupy import _array

    names = {name for name in vars(sim_cupy.ndarray) if not name.startswith("_")} | set(_array.METHODS)
    assert not [name for name in names if not hasattr(cupy.ndarray, name)]
    for name in ("get", "set", "item", "tolist", "tobytes"):
        assert _parameters(getattr(sim_cupy.ndarray, name)) == _parameters(getattr(cupy.ndarray, name)), name
    import numpy as host

    lenient = {name for name in dir(host.ndarray) if not name.startswith("_")} - set(dir(cupy.ndarray))
    assert lenient and not [name for name in lenient if hasattr(sim_cupy.ndarray, name)]  # ctypes, setflags, ...


def test_the_simulated_generator_has_only_cupys_methods():
    from minikeras.testing.sim_cupy import random

    assert not [name for name in random._METHODS if not hasattr(cupy.random.Generator, name)]
    assert not hasattr(cupy.random.Generator, "normal")  # why the library draws standard_normal


def test_the_simulated_namespaces_offer_only_cupys_names():
    from minikeras.testing.sim_cupy import _names

    for names, real in ((_names.LINALG, cupy.linalg), (_names.FFT, cupy.fft),
                        (_names.STRIDE_TRICKS, cupy.lib.stride_tricks)):
        assert not [name for name in names if not hasattr(real, name)]


def test_the_simulated_errors_are_cupys():
    from cupy.cuda import compiler, memory
    from cupy_backends.cuda.api import runtime

    from minikeras.testing.sim_cupy.cuda import compiler as sim_compiler
    from minikeras.testing.sim_cupy.cuda import memory as sim_memory
    from minikeras.testing.sim_cupy.cuda import runtime as sim_runtime

    for status in sim_runtime._MESSAGES:  # cudaGetErrorName: cudaGetErrorString, as CuPy words them
        assert str(sim_runtime.CUDARuntimeError(status)) == str(runtime.CUDARuntimeError(status)), status
    for real, simulated in ((runtime.CUDARuntimeError, sim_runtime.CUDARuntimeError),
                            (compiler.CompileException, sim_compiler.CompileException),
                            (memory.OutOfMemoryError, sim_memory.OutOfMemoryError)):
        assert (real.__module__, real.__name__) == (simulated.__module__.replace(_SIM, "cupy"), simulated.__name__) \
            or (real.__module__, real.__name__) == (simulated.__module__, simulated.__name__)
        assert real.__mro__[1] is simulated.__mro__[1]
    for arguments in ((2048, 100), (2048, 100, 4096), (512, -1)):
        assert str(sim_memory.OutOfMemoryError(*arguments)) == str(memory.OutOfMemoryError(*arguments))
    real_error = compiler.CompileException("no operator", "source", "name", ())
    assert str(sim_compiler.CompileException("no operator", "source", "name", ())) == str(real_error)
    # cuBLAS loads libcublas on import; its error's module is what cuda_errors.CUPY_ERRORS names.
    from minikeras.testing.sim_cupy.simulation import CUBLASError

    assert (CUBLASError.__module__, CUBLASError.__name__) in cuda_errors_names()


def cuda_errors_names():
    from minikeras.device import cuda_errors

    return set(cuda_errors.CUPY_ERRORS)


def test_the_simulated_runtime_constants_are_cupys():
    from cupy.cuda import runtime

    from minikeras.testing.sim_cupy.cuda import runtime as sim_runtime

    constants = {name: value for name, value in vars(sim_runtime).items()
                 if not name.startswith("_") and isinstance(value, int)}
    assert {"streamCaptureModeRelaxed", "streamNonBlocking", "streamPerThread"} <= set(constants)
    assert {name: getattr(runtime, name, None) for name in constants} == constants


def test_pooled_memory_takes_the_owner_tag():
    # GpuDevice tags each allocation's memory with its owner (gpu.py); CuPy
    # declares ``dict __dict__`` on PooledMemory (cupy/cuda/memory.pyx) for that.
    from minikeras.testing.sim_cupy.cuda import memory

    assert "__dict__" in dir(cupy.cuda.memory.PooledMemory)
    assert "__dict__" in dir(memory.PooledMemory) and "__dict__" not in dir(memory.Memory)


def _library_calls(relative, owner_names):
    """Names of the C functions ``relative`` (a minikeras module) calls on its
    library: ``<owner>.cudnnX(...)`` attributes and ``getattr(<owner>, "cudnnX")``
    strings, for the owners named."""
    import ast
    import re

    names = set()
    for node in ast.walk(ast.parse((PACKAGE / relative).read_text())):
        if isinstance(node, ast.Attribute) and getattr(node.value, "attr", getattr(node.value, "id", None)) in \
                owner_names and node.attr.startswith(("cudnn", "cublas")):
            names.add(node.attr)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                re.fullmatch(r"(cudnn|cublas)[A-Z]\w*", node.value):
            names.add(node.value)
    return names


def test_the_library_doubles_model_every_call_the_library_makes():
    from minikeras.testing.sim_cupy.libs import cublas, cudnn

    called = _library_calls("device/cudnn.py", {"_lib", "library"}) | \
        _library_calls("device/cudnn_graph.py", {"_lib", "library"})
    assert {"cudnnBackendCreateDescriptor", "cudnnBackendSetAttribute", "cudnnBackendGetAttribute",
            "cudnnBackendFinalize", "cudnnBackendExecute", "cudnnBackendDestroyDescriptor", "cudnnCreate"} <= called
    assert not [name for name in called if not hasattr(cudnn.library, name)]
    called = _library_calls("device/cublas_direct.py", {"library"})
    assert {"cublasSgemm_v2", "cublasDgemm_v2", "cublasGemmEx", "cublasGemmStridedBatchedEx"} <= called
    assert not [name for name in called if not hasattr(cublas.library, name)]
    for name in ("setStream", "setPointerMode", "CUBLAS_POINTER_MODE_HOST"):
        assert hasattr(cublas.wrapper, name)
