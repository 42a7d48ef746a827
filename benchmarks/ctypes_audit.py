"""minikeras's foreign calls and constants checked against the vendors' real headers (issue 33).

Every function minikeras calls through ctypes (``SIGNATURES`` of
device/cudnn.py and device/cublas_direct.py) and every prototype the
simulated libraries model (``PROTOTYPES`` of testing/sim_cupy/libs/):
name, argument count, each argument's width and pointer-ness (and what a
typed pointer points to), the return type. Every enum value and constant
they use (cuDNN's descriptor types, attribute names and types, data type,
convolution and heuristic modes, numerical notes, status codes; cuBLAS's
data and compute types, algorithms, operations, pointer modes, status
codes; CUDA's stream capture modes, stream and event flags, error codes,
and which errors leave the context unusable, read from each error's own
comment), the simulated cuDNN's attribute schema against the attributes
cudnn_graph.h documents (types, element counts), the element widths of
each attribute type, the attribute types minikeras's calls pass
(device/cudnn_graph.py, read from its source), and the legacy-API probe's
constants and result struct (benchmarks/gpu_cudnn_probe.py). No GPU needed.

    python benchmarks/ctypes_audit.py --include /usr/local/cuda/include CUDNN_INCLUDE CUBLAS_INCLUDE [--json out.json]

cuDNN's headers: ``pip download --no-deps nvidia-cudnn-cu13`` and unzip
its ``nvidia/cudnn/include``; cuBLAS's: ``nvidia-cublas`` (CUDA 13 wheels;
the toolkit's include folder may lack cublas_api.h). Prints a table (OK,
MISMATCH with both sides, NOTE for what is deprecated or not checkable)
and writes JSON; exits 1 on any MISMATCH.
"""
import argparse
import ast
import ctypes
import inspect
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, ROOT)

import ctypes_header_parser  # noqa: E402
from _report import report  # noqa: E402
from minikeras.device import cublas_direct, cuda_errors, cudnn, cudnn_graph  # noqa: E402
from minikeras.testing.sim_cupy.cuda import runtime as sim_runtime  # noqa: E402
from minikeras.testing.sim_cupy.libs import _boundary, cublas as sim_cublas, cudnn as sim_cudnn  # noqa: E402

kind = _boundary.kind


class Audit:
    def __init__(self, headers):
        self.headers = headers
        self.rows = []

    def add(self, status, what, ours, header):
        self.rows.append({"status": status, "what": what, "ours": str(ours), "header": str(header)})

    def value(self, what, ours, c_name):
        """``ours`` (a value) must be the header's ``c_name``."""
        found = self.headers.enums.get(c_name, self.headers.defines.get(c_name))
        if found is None:
            self.add("MISMATCH", what, ours, f"{c_name} not declared")
        else:
            self.add("OK" if found == ours else "MISMATCH", what, ours, f"{c_name} = {found}")
        if c_name in self.headers.deprecated:
            self.add("NOTE", what, ours, f"{c_name} is deprecated in these headers")

    def name_of(self, value, enum_type, prefix=""):
        """The header's non-deprecated enumerator of ``enum_type`` with ``value``."""
        members = self.headers.enum_types.get(enum_type, {})
        names = [n for n, v in members.items() if v == value and n.startswith(prefix)]
        names.sort(key=lambda n: n in self.headers.deprecated)
        return names[0] if names else None

    def prototype(self, source, name, restype, argtypes):
        found = self.headers.prototypes.get(name)
        what = f"{source} {name}"
        if found is None:
            self.add("MISMATCH", what, "declared", "no prototype in the headers")
            return
        (ret_words, ret_stars), parameters = found
        ours = [kind(t) for t in argtypes]
        theirs = [self.headers.kind(*p) for p in parameters]
        header_text = ", ".join(" ".join(w) + "*" * s for w, s in parameters)
        if len(ours) != len(theirs):
            self.add("MISMATCH", what + " argument count", len(ours), f"{len(theirs)} ({header_text})")
            return
        bad = [f"arg {i}: {o} vs {t} ({' '.join(parameters[i][0])}{'*' * parameters[i][1]})"
               for i, (o, t) in enumerate(zip(ours, theirs)) if o != t]
        for i, (c_type, (words, stars)) in enumerate(zip(argtypes, parameters)):
            pointee = self.headers.pointee(words, stars)
            if hasattr(c_type, "_type_") and issubclass(c_type, ctypes._Pointer) and pointee and \
                    pointee[0] != "void" and kind(c_type._type_) != pointee:
                bad.append(f"arg {i} points to {kind(c_type._type_)}, header {pointee}")
        self.add("MISMATCH" if bad else "OK", what + f" ({len(ours)} arguments)", "; ".join(bad) or "widths",
                 header_text if bad else "same widths and pointers")
        ret_ours, ret_theirs = kind(restype), self.headers.kind(ret_words, ret_stars)
        self.add("OK" if ret_ours == ret_theirs else "MISMATCH", what + " restype", ret_ours,
                 f"{ret_theirs} ({' '.join(ret_words)}{'*' * ret_stars})")


# ------------------------------------------------------------------ the checks
def check_prototypes(audit):
    for source, table in (("minikeras device/cudnn.py", cudnn.SIGNATURES),
                          ("minikeras device/cublas_direct.py", cublas_direct.SIGNATURES),
                          ("sim libs/cudnn.py", sim_cudnn.PROTOTYPES), ("sim libs/cublas.py", sim_cublas.PROTOTYPES)):
        for name, (restype, argtypes) in table.items():
            audit.prototype(source, name, restype, argtypes)
    for source, library, table in (("sim libs/cudnn.py", sim_cudnn, sim_cudnn.PROTOTYPES),
                                   ("sim libs/cublas.py", sim_cublas, sim_cublas.PROTOTYPES)):
        for name, (_, argtypes) in table.items():
            function = inspect.unwrap(getattr(library.library, name))
            parameters = inspect.signature(function).parameters.values()
            variadic = any(p.kind is p.VAR_POSITIONAL for p in parameters)
            count = sum(p.kind is p.POSITIONAL_OR_KEYWORD for p in parameters)
            audit.add("OK" if variadic or count == len(argtypes) else "MISMATCH", f"{source} {name} arity",
                      "*args" if variadic else count, len(argtypes))


def _backward(name):
    return name.replace("BACKWARD", "BWD")


def check_cudnn_values(audit):
    graph = cudnn_graph
    descriptors = {"CONVOLUTION": "CONVOLUTION", "ENGINE": "ENGINE", "ENGINECFG": "ENGINECFG",
                   "ENGINEHEUR": "ENGINEHEUR", "EXECUTION_PLAN": "EXECUTION_PLAN", "OPERATION_GRAPH": "OPERATIONGRAPH",
                   "VARIANT_PACK": "VARIANT_PACK", "TENSOR": "TENSOR",
                   "OPERATION_FORWARD": "OPERATION_CONVOLUTION_FORWARD",
                   "OPERATION_BACKWARD_FILTER": "OPERATION_CONVOLUTION_BACKWARD_FILTER",
                   "OPERATION_BACKWARD_DATA": "OPERATION_CONVOLUTION_BACKWARD_DATA"}
    for ours, c_name in descriptors.items():
        audit.value(f"cudnn_graph.{ours}", getattr(graph, ours), f"CUDNN_BACKEND_{c_name}_DESCRIPTOR")
    for name, value in vars(graph).items():
        if name.startswith("TYPE_"):
            audit.value(f"cudnn_graph.{name}", value, "CUDNN_" + name)
        elif name.startswith(("CONVOLUTION_", "ENGINEHEUR_", "ENGINECFG_", "EXECUTION_PLAN_", "OPERATIONGRAPH_",
                              "TENSOR_", "VARIANT_PACK_", "ENGINE_")) and isinstance(value, int):
            audit.value(f"cudnn_graph.{name}", value, "CUDNN_ATTR_" + name)
        elif name.startswith("NOTE_"):
            audit.value(f"cudnn_graph.{name}", value, "CUDNN_NUMERICAL_" + name)
    audit.value("cudnn_graph.HEUR_MODE_A", graph.HEUR_MODE_A, "CUDNN_HEUR_MODE_A")
    audit.value("cudnn_graph.DATA_FLOAT", graph.DATA_FLOAT, "CUDNN_DATA_FLOAT")
    audit.value("cudnn_graph.CROSS_CORRELATION", graph.CROSS_CORRELATION, "CUDNN_CROSS_CORRELATION")
    roles = {"forward": ("FORWARD", {"w": "W", "x": "X", "y": "Y"}),
             "backward_data": ("BWD_DATA", {"w": "W", "x": "DX", "y": "DY"}),
             "backward_filter": ("BWD_FILTER", {"w": "DW", "x": "X", "y": "DY"})}
    for direction, (kind_, alpha, beta, conv, attributes) in graph.OPERATIONS.items():
        prefix = f"CUDNN_ATTR_OPERATION_CONVOLUTION_{roles[direction][0]}_"
        audit.value(f"cudnn_graph.OPERATIONS[{direction}] alpha", alpha, prefix + "ALPHA")
        audit.value(f"cudnn_graph.OPERATIONS[{direction}] beta", beta, prefix + "BETA")
        audit.value(f"cudnn_graph.OPERATIONS[{direction}] conv", conv, prefix + "CONV_DESC")
        for role, attribute in attributes.items():
            audit.value(f"cudnn_graph.OPERATIONS[{direction}] {role}", attribute, prefix + roles[direction][1][role])
    # The simulated cuDNN's constants.
    sim = sim_cudnn
    for ours, c_name in descriptors.items():
        ours = {"OPERATION_FORWARD": "FORWARD", "OPERATION_BACKWARD_FILTER": "BACKWARD_FILTER",
                "OPERATION_BACKWARD_DATA": "BACKWARD_DATA"}.get(ours, ours)
        audit.value(f"sim cudnn.{ours}", getattr(sim, ours), f"CUDNN_BACKEND_{c_name}_DESCRIPTOR")
    for ours, c_name in (("HANDLE", "HANDLE"), ("DATA_TYPE", "DATA_TYPE"), ("BOOLEAN", "BOOLEAN"), ("INT64", "INT64"),
                         ("FLOAT", "FLOAT"), ("DOUBLE", "DOUBLE"), ("VOID_PTR", "VOID_PTR"),
                         ("CONV_MODE", "CONVOLUTION_MODE"), ("HEUR_MODE", "HEUR_MODE"),
                         ("NUMERICAL_NOTE", "NUMERICAL_NOTE"), ("DESCRIPTOR", "BACKEND_DESCRIPTOR")):
        audit.value(f"sim cudnn.{ours}", getattr(sim, ours), "CUDNN_TYPE_" + c_name)
    for ours in ("TENSOR_CORE", "DOWN_CONVERT_INPUTS", "NONDETERMINISTIC"):
        audit.value(f"sim cudnn.{ours}", getattr(sim, ours), "CUDNN_NUMERICAL_NOTE_" + ours)
    for code, message in sim._MESSAGES.items():
        audit.value(f"sim cudnn status {message}", code, "CUDNN_STATUS_" + message)
    audit.add("OK" if sim.VERSION // 10000 == audit.headers.defines.get("CUDNN_MAJOR") else "MISMATCH",
              "sim cudnn.VERSION major (MAJOR*10000+MINOR*100+PATCH)", sim.VERSION,
              audit.headers.defines.get("CUDNN_MAJOR"))
    audit.value("sim cudnn heuristic modes accepted (range(4))", 4, "CUDNN_HEUR_MODES_COUNT")
    for kind_, (roles_, alpha, beta, conv) in sim._OPERATION_ROLES.items():
        for attribute, role in roles_.items():
            expected = [a for a, r in graph.OPERATIONS.items() if r[0] == kind_][0]
            audit.add("OK" if graph.OPERATIONS[expected][4][role] == attribute else "MISMATCH",
                      f"sim cudnn {expected} {role} attribute", attribute, graph.OPERATIONS[expected][4][role])


def _type_bytes(audit, type_name):
    """Bytes of one element of a cudnnBackendAttributeType_t, from its comment."""
    doc = audit.headers.docs.get(type_name, "")
    named = re.search(r"(\w+_t) value", doc)
    if named:
        return audit.headers.kind((named.group(1),))[1]
    bits = re.search(r"(\d+)-bit", doc)
    if bits:
        return int(bits.group(1)) // 8
    if "pointer" in doc.lower():
        return 8
    if "Boolean" in doc:
        return 1  # C++ bool, as cudnn-frontend passes it
    return None


def check_attribute_types(audit):
    for attribute_type, c_type in cudnn_graph.ELEMENT_TYPES.items():
        c_name = audit.name_of(attribute_type, "cudnnBackendAttributeType_t")
        audit.add("OK" if ctypes.sizeof(c_type) == _type_bytes(audit, c_name) else "MISMATCH",
                  f"cudnn_graph.ELEMENT_TYPES[{c_name}] bytes", ctypes.sizeof(c_type), _type_bytes(audit, c_name))
    for attribute_type, size in sim_cudnn._ELEMENT_BYTES.items():
        c_name = audit.name_of(attribute_type, "cudnnBackendAttributeType_t")
        audit.add("OK" if size == _type_bytes(audit, c_name) else "MISMATCH",
                  f"sim cudnn._ELEMENT_BYTES[{c_name}]", size, _type_bytes(audit, c_name))


def _documented(audit, descriptor_type, attribute):
    """(attribute's C name, its documented types and counts) for a descriptor type's attribute number."""
    descriptor = audit.name_of(descriptor_type, "cudnnBackendDescriptorType_t", "CUDNN_BACKEND_")
    prefix = "CUDNN_ATTR_" + _backward(descriptor[len("CUDNN_BACKEND_"):-len("_DESCRIPTOR")]) + "_"
    name = audit.name_of(attribute, "cudnnBackendAttributeName_t", prefix)
    return descriptor, prefix, name, audit.headers.attributes.get(name)


def check_schema(audit):
    sim = sim_cudnn
    for descriptor_type, schema in sim._SCHEMA.items():
        for attribute, (types, counts) in schema.items():
            descriptor, prefix, name, documented = _documented(audit, descriptor_type, attribute)
            what = f"sim cudnn._SCHEMA[{descriptor}][{attribute}]"
            if name is None or documented is None:
                audit.add("MISMATCH", what, attribute, f"no documented {prefix}* attribute {attribute}")
                continue
            ours = tuple(sorted(audit.name_of(t, "cudnnBackendAttributeType_t") for t in types))
            audit.add("OK" if ours == documented[0] else "MISMATCH", f"{what} {name} types", ours, documented[0])
            least, most = counts if isinstance(counts, tuple) else (counts, counts)
            most = float("inf") if most >= 64 else most
            audit.add("OK" if documented[1] is None or (least, most) == documented[1] else "MISMATCH",
                      f"{what} {name} element count", (least, most), documented[1])
    for (descriptor_type, attribute), attribute_type in sim._GETTABLE.items():
        descriptor, prefix, name, documented = _documented(audit, descriptor_type, attribute)
        ours = audit.name_of(attribute_type, "cudnnBackendAttributeType_t")
        audit.add("OK" if documented and ours in documented[0] else "MISMATCH",
                  f"sim cudnn._GETTABLE[{descriptor}][{name}]", ours, documented and documented[0])


def _calls_in_graph_module():
    """(attribute name expression, attribute type name, method) of each
    ``self.set``/``self.get`` call in device/cudnn_graph.py."""
    tree = ast.parse(inspect.getsource(cudnn_graph))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("set", "get") \
                and isinstance(node.func.value, ast.Name) and node.func.value.id in ("self", "builder") \
                and len(node.args) >= 3 and isinstance(node.args[2], ast.Name):
            yield ast.unparse(node.args[1]), node.args[2].id, node.func.attr


def check_minikeras_calls(audit):
    operation_attributes = {"alpha": 1, "beta": 2, "conv_name": 3}
    for attribute, type_name, method in _calls_in_graph_module():
        attribute_type = getattr(cudnn_graph, type_name)
        if hasattr(cudnn_graph, attribute):
            candidates = [getattr(cudnn_graph, attribute)]
        elif attribute in operation_attributes:
            candidates = [entry[operation_attributes[attribute]] for entry in cudnn_graph.OPERATIONS.values()]
        else:  # a role's tensor attribute of each operation
            candidates = [a for entry in cudnn_graph.OPERATIONS.values() for a in entry[4].values()]
        for value in candidates:
            name = audit.name_of(value, "cudnnBackendAttributeName_t", "CUDNN_ATTR_")
            documented = audit.headers.attributes.get(name)
            ours = audit.name_of(attribute_type, "cudnnBackendAttributeType_t")
            audit.add("OK" if documented and ours in documented[0] else "MISMATCH",
                      f"cudnn_graph {method}({name})", ours, documented and documented[0])
            if name in audit.headers.deprecated:
                audit.add("NOTE", f"cudnn_graph {method}({name})", "set",
                          "deprecated in these headers (still accepted)")


def check_cublas_values(audit):
    for dtype, c_name in (("float32", "CUDA_R_32F"), ("float64", "CUDA_R_64F"), ("float16", "CUDA_R_16F"),
                          ("bfloat16", "CUDA_R_16BF")):
        audit.value(f"cublas_direct.CUDA_TYPES[{dtype}]", cublas_direct.CUDA_TYPES[dtype], c_name)
        audit.value(f"sim cublas.{c_name}", getattr(sim_cublas, c_name), c_name)
    for name in ("COMPUTE_32F", "COMPUTE_32F_FAST_TF32", "COMPUTE_64F"):
        audit.value(f"cublas_direct.{name}", getattr(cublas_direct, name), "CUBLAS_" + name)
    for name in ("COMPUTE_32F", "COMPUTE_32F_PEDANTIC", "COMPUTE_32F_FAST_16F", "COMPUTE_32F_FAST_16BF",
                 "COMPUTE_32F_FAST_TF32", "COMPUTE_64F"):
        audit.value(f"sim cublas.{name}", getattr(sim_cublas, name), "CUBLAS_" + name)
    audit.value("cublas_direct.GEMM_DEFAULT", cublas_direct.GEMM_DEFAULT, "CUBLAS_GEMM_DEFAULT")
    audit.value("cublas_direct._OP_N", cublas_direct._OP_N, "CUBLAS_OP_N")
    audit.value("cublas_direct._OP_T", cublas_direct._OP_T, "CUBLAS_OP_T")
    for name in ("CUBLAS_OP_N", "CUBLAS_OP_T", "CUBLAS_OP_C", "CUBLAS_POINTER_MODE_HOST", "CUBLAS_POINTER_MODE_DEVICE"):
        audit.value(f"sim cublas.{name}", getattr(sim_cublas, name), name)
    for ours, c_name in (("_SUCCESS", "SUCCESS"), ("_NOT_INITIALIZED", "NOT_INITIALIZED"),
                         ("_INVALID_VALUE", "INVALID_VALUE"), ("_NOT_SUPPORTED", "NOT_SUPPORTED")):
        audit.value(f"sim cublas.{ours}", getattr(sim_cublas, ours), "CUBLAS_STATUS_" + c_name)
    algorithms = set(audit.headers.enum_types.get("cublasGemmAlgo_t", {}).values())
    ours = set(sim_cublas._ALGORITHMS)
    audit.add("OK" if ours == algorithms else "MISMATCH", "sim cublas._ALGORITHMS (cublasGemmAlgo_t)",
              f"extra {sorted(ours - algorithms)}, missing {sorted(algorithms - ours)}", f"{len(algorithms)} values")


# (component, status) of cuda_errors's tables -> the header name it stands for; None: no header here.
ERROR_NAMES = {
    ("cuBLAS", 1): "CUBLAS_STATUS_NOT_INITIALIZED", ("cuBLAS", 3): "CUBLAS_STATUS_ALLOC_FAILED",
    ("cuBLAS", 7): "CUBLAS_STATUS_INVALID_VALUE", ("cuBLAS", 8): "CUBLAS_STATUS_ARCH_MISMATCH",
    ("cuBLAS", 15): "CUBLAS_STATUS_NOT_SUPPORTED", ("CUDA runtime", 2): "cudaErrorMemoryAllocation",
    ("CUDA runtime", 35): "cudaErrorInsufficientDriver", ("CUDA runtime", 100): "cudaErrorNoDevice",
    ("CUDA runtime", 209): "cudaErrorNoKernelImageForDevice", ("CUDA runtime", 701): "cudaErrorLaunchOutOfResources",
    ("CUDA driver", 2): "CUDA_ERROR_OUT_OF_MEMORY",
    ("cuDNN", 4003): "CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED",
    ("cuDNN", 4004): "CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED",
    ("NVRTC", 1): "NVRTC_ERROR_OUT_OF_MEMORY", ("cuRAND", 102): "CURAND_STATUS_ALLOCATION_FAILED",
    ("cuSOLVER", 2): "CUSOLVER_STATUS_ALLOC_FAILED",
}


def check_errors(audit):
    for table in ("_OUT_OF_MEMORY", "_ADVICE"):
        for component, status in getattr(cuda_errors, table):
            if status is None:
                continue
            c_name = ERROR_NAMES.get((component, status))
            what = f"cuda_errors.{table}[{component}, {status}]"
            if c_name is None:
                audit.add("MISMATCH", what, status, "no header name recorded in ctypes_audit.ERROR_NAMES")
            elif c_name not in audit.headers.enums:
                audit.add("NOTE", what, status, f"{c_name}: header not given")
            else:
                audit.value(what, status, c_name)
    for component, enum_type in (("CUDA runtime", "cudaError"), ("CUDA driver", "cudaError_enum")):
        members = audit.headers.enum_types.get(enum_type, {})
        sticky = {value for name, value in members.items()
                  if "inconsistent state" in " ".join(audit.headers.docs.get(name, "").split())}
        ours = {status for kind_, status in cuda_errors._STICKY if kind_ == component}
        audit.add("OK" if ours == sticky else "MISMATCH", f"cuda_errors._STICKY[{component}] (errors documented "
                  "'leaves the process in an inconsistent state')",
                  f"extra {sorted(ours - sticky)}, missing {sorted(sticky - ours)}", sorted(sticky))


def check_runtime(audit):
    runtime = sim_runtime
    for ours, c_name in (("streamCaptureModeGlobal", "cudaStreamCaptureModeGlobal"),
                         ("streamCaptureModeThreadLocal", "cudaStreamCaptureModeThreadLocal"),
                         ("streamCaptureModeRelaxed", "cudaStreamCaptureModeRelaxed"),
                         ("streamDefault", "cudaStreamDefault"), ("streamNonBlocking", "cudaStreamNonBlocking"),
                         ("streamLegacy", "cudaStreamLegacy"), ("streamPerThread", "cudaStreamPerThread"),
                         ("eventDefault", "cudaEventDefault"), ("eventBlockingSync", "cudaEventBlockingSync"),
                         ("eventDisableTiming", "cudaEventDisableTiming"),
                         ("eventInterprocess", "cudaEventInterprocess"),
                         ("_errorMemoryAllocation", "cudaErrorMemoryAllocation"),
                         ("_errorInvalidDevice", "cudaErrorInvalidDevice"),
                         ("_errorIllegalState", "cudaErrorIllegalState"),
                         ("_errorStreamCaptureUnsupported", "cudaErrorStreamCaptureUnsupported"),
                         ("_errorStreamCaptureInvalidated", "cudaErrorStreamCaptureInvalidated"),
                         ("_errorStreamCaptureIsolation", "cudaErrorStreamCaptureIsolation")):
        if hasattr(runtime, ours):
            audit.value(f"sim runtime.{ours}", getattr(runtime, ours), c_name)
    for name in ("cudaStreamCaptureStatusNone", "cudaStreamCaptureStatusActive", "cudaStreamCaptureStatusInvalidated"):
        short = "streamCaptureStatus" + name[len("cudaStreamCaptureStatus"):]
        if hasattr(runtime, short):
            audit.value(f"sim runtime.{short}", getattr(runtime, short), name)


def check_legacy_probe(audit):
    """benchmarks/gpu_cudnn_probe.py: cuDNN's legacy API, measured against the backend path on a card."""
    import gpu_cudnn_probe as probe

    for ours, c_name in (("FLOAT", "CUDNN_DATA_FLOAT"), ("NHWC", "CUDNN_TENSOR_NHWC"),
                         ("CROSS_CORRELATION", "CUDNN_CROSS_CORRELATION"), ("FMA_MATH", "CUDNN_FMA_MATH")):
        audit.value(f"gpu_cudnn_probe.{ours}", getattr(probe, ours), c_name)
    fields = audit.headers.structs.get("cudnnConvolutionFwdAlgoPerf_t")
    if fields is None:
        audit.add("NOTE", "gpu_cudnn_probe.AlgoPerf", "", "cudnnConvolutionFwdAlgoPerf_t: header not given")
        return
    ours = [(kind(t._type_), t._length_) if issubclass(t, ctypes.Array) else (kind(t), 1)
            for _, t in probe.AlgoPerf._fields_]
    theirs = [(audit.headers.kind(words, stars), length) for words, stars, length in fields]
    audit.add("OK" if ours == theirs else "MISMATCH", "gpu_cudnn_probe.AlgoPerf fields (cudnnConvolutionFwdAlgoPerf_t)",
              ours, theirs)


CHECKS = (check_legacy_probe, check_prototypes, check_cudnn_values, check_attribute_types, check_schema,
          check_minikeras_calls,
          check_cublas_values, check_errors, check_runtime)


def audit(directories):
    headers = ctypes_header_parser.read(directories)
    found = Audit(headers)
    for check in CHECKS:
        check(found)
    versions = {name: headers.defines.get(name) for name in ("CUDNN_MAJOR", "CUDNN_MINOR", "CUDNN_PATCHLEVEL",
                                                             "CUBLAS_VER_MAJOR", "CUBLAS_VER_MINOR",
                                                             "CUBLAS_VER_PATCH", "CUDART_VERSION")}
    return found, versions


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--include", nargs="+", required=True, help="folders of the CUDA, cuDNN and cuBLAS headers")
    parser.add_argument("--json", default=None)
    parser.add_argument("--all", action="store_true", help="print the OK rows too")
    args = parser.parse_args(argv)
    found, versions = audit(args.include)
    counts = {status: sum(row["status"] == status for row in found.rows) for status in ("OK", "MISMATCH", "NOTE")}
    shown = found.rows if args.all else [row for row in found.rows if row["status"] != "OK"]
    report("ctypes_audit", shown, ["status", "what", "ours", "header"],
           extra={"headers": versions, "counts": counts, "all_rows": found.rows}, path=args.json)
    print(f"\nheaders: {versions}\n{counts}")
    return 1 if counts["MISMATCH"] else 0


if __name__ == "__main__":
    sys.exit(main())
