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


# ------------------------------------------- the fakes of pools and streams
# tests/device/fake_cupy.py's pool and stream and the simulated GPU's stream
# and event (minikeras/device/simulated_streams.py) stand in for these CuPy
# classes: each method they offer exists in CuPy with the same parameters.
def _fake_apis():
    from minikeras.device.simulated_streams import SimulatedEvent, SimulatedStream
    from tests.device.fake_cupy import FakePool, FakeStream

    return [
        (cupy.cuda.MemoryPool, FakePool, ("malloc", "free_all_blocks", "used_bytes", "total_bytes", "free_bytes",
                                          "n_free_blocks", "set_limit", "get_limit")),
        (cupy.cuda.Stream, FakeStream, ("record", "wait_event", "synchronize")),
        (cupy.cuda.Stream, SimulatedStream, ("record", "wait_event", "synchronize")),
        (cupy.cuda.Event, SimulatedEvent, ("synchronize",)),
    ]


def test_the_fakes_of_pools_streams_and_events_have_cupys_signatures():
    import inspect

    for real, fake, methods in _fake_apis():
        for name in methods:
            accepted = scan.accepted_keywords(getattr(real, name))
            expected = {keyword.split()[-1] for keyword in accepted}  # "size_t size" -> "size"
            offered = set(list(inspect.signature(getattr(fake, name)).parameters)[1:])
            assert offered == expected, f"{fake.__name__}.{name}{sorted(offered)} vs {real.__name__}: {sorted(expected)}"


def test_pooled_memory_takes_the_owner_tag():
    # GpuDevice tags each allocation's memory with its owner (gpu.py); CuPy
    # declares ``dict __dict__`` on PooledMemory (cupy/cuda/memory.pyx) for that.
    assert "__dict__" in dir(cupy.cuda.memory.PooledMemory)
