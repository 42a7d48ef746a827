"""cuDNN 9 at the boundary ``minikeras.device.cudnn`` calls it through
ctypes: handles and streams, and the backend (graph) API
(``cudnnBackendCreateDescriptor`` / ``SetAttribute`` / ``GetAttribute`` /
``Finalize`` / ``Execute`` / ``DestroyDescriptor``) for one convolution
operation per graph.

What the double holds is what cuDNN's descriptors hold (enum values of
cudnn_graph.h), read from the ctypes arguments as cuDNN reads them: an
array whose elements are not the size cuDNN reads for the attribute type
(a C ``int`` where it reads ``int64_t``) is refused loudly, as it would be
misread on a card. What cuDNN refuses is refused with its cuDNN 9 status:

- an attribute the descriptor type does not have, a wrong element count:
  ``CUDNN_STATUS_BAD_PARAM`` (2000); a wrong attribute type:
  ``..._BAD_PARAM_ATTRIBUTE_TYPE`` (2010); a descriptor attribute naming a
  descriptor that is not finalized or of the wrong kind: 2000;
- setting an attribute of a finalized descriptor:
  ``CUDNN_STATUS_NOT_INITIALIZED`` (1001, the documented return);
- getting from, or executing, a descriptor not finalized:
  ``..._BAD_PARAM_NOT_FINALIZED`` (2004);
- finalizing with attributes missing or inconsistent: 2000; a convolution
  whose output tensor does not match its input, filter and geometry:
  ``..._BAD_PARAM_SHAPE_MISMATCH`` (2008); two tensors with one unique id:
  ``..._BAD_PARAM_DUPLICATED_ENTRIES`` (2009); what this double does not
  model (not float32, not 4-D packed channels-last, a graph of more than
  one convolution): ``CUDNN_STATUS_NOT_SUPPORTED`` (3000, 3001);
- executing with a tensor's unique id missing from the variant pack (2000),
  a null data or workspace pointer (``..._BAD_PARAM_NULL_POINTER``, 2002),
  a pointer not aligned as its tensor's ``CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT``
  promised (``..._BAD_PARAM_MISALIGNED_POINTER``, 2003); a pointer outside
  a live allocation is an illegal address (refused).

The heuristics return this double's engines (``ENGINES``), best first, each
with its numerical notes: an engine noted ``TENSOR_CORE`` reads float32 as
TF32, one noted ``DOWN_CONVERT_INPUTS`` reads it as float16, one noted
``NONDETERMINISTIC`` (the atomic filter gradient) adds its partial sums in
an order drawn per call, as atomics land. ``declines`` (a simulation
control) lets a test make an engine decline a shape at its plan's finalize
(``CUDNN_STATUS_NOT_SUPPORTED_SHAPE``, 3002). Each execute runs on the
handle's stream as one kernel (ordered, raced, counted, captured).
``counts`` counts finalizes per descriptor type and calls per function.

The arithmetic is written apart from the library's im2col path (windows of
the padded input, one tensordot per call), so the suite compares two
implementations.
"""
import collections
import ctypes
import itertools
import numpy
from numpy.lib.stride_tricks import sliding_window_view

from minikeras.testing.sim_cupy import _calls
from minikeras.testing.sim_cupy.cuda import memory, stream as stream_module
from minikeras.testing.sim_cupy.libs import _boundary

VERSION = 91900
SUCCESS, NOT_INITIALIZED = 0, 1001
BAD_PARAM, NULL_POINTER, MISALIGNED_POINTER, NOT_FINALIZED = 2000, 2002, 2003, 2004
SHAPE_MISMATCH, DUPLICATED_ENTRIES, ATTRIBUTE_TYPE = 2008, 2009, 2010
NOT_SUPPORTED, NOT_SUPPORTED_GRAPH_PATTERN, NOT_SUPPORTED_SHAPE = 3000, 3001, 3002
_MESSAGES = {SUCCESS: "SUCCESS", NOT_INITIALIZED: "NOT_INITIALIZED", BAD_PARAM: "BAD_PARAM",
             NULL_POINTER: "BAD_PARAM_NULL_POINTER", MISALIGNED_POINTER: "BAD_PARAM_MISALIGNED_POINTER",
             NOT_FINALIZED: "BAD_PARAM_NOT_FINALIZED", SHAPE_MISMATCH: "BAD_PARAM_SHAPE_MISMATCH",
             DUPLICATED_ENTRIES: "BAD_PARAM_DUPLICATED_ENTRIES", ATTRIBUTE_TYPE: "BAD_PARAM_ATTRIBUTE_TYPE",
             NOT_SUPPORTED: "NOT_SUPPORTED", NOT_SUPPORTED_GRAPH_PATTERN: "NOT_SUPPORTED_GRAPH_PATTERN",
             NOT_SUPPORTED_SHAPE: "NOT_SUPPORTED_SHAPE"}

# cudnnBackendDescriptorType_t
CONVOLUTION, ENGINE, ENGINECFG, ENGINEHEUR, EXECUTION_PLAN = 1, 2, 3, 4, 5
FORWARD, BACKWARD_FILTER, BACKWARD_DATA, OPERATION_GRAPH, VARIANT_PACK, TENSOR = 10, 11, 12, 15, 16, 17
# cudnnBackendAttributeType_t, and the bytes cuDNN reads for one element of each
HANDLE, DATA_TYPE, BOOLEAN, INT64, FLOAT, DOUBLE, VOID_PTR, CONV_MODE, HEUR_MODE = 0, 1, 2, 3, 4, 5, 6, 7, 8
NUMERICAL_NOTE, DESCRIPTOR = 11, 15
_ELEMENT_BYTES = {HANDLE: 8, DATA_TYPE: 4, BOOLEAN: 1, INT64: 8, FLOAT: 4, DOUBLE: 8, VOID_PTR: 8, CONV_MODE: 4,
                  HEUR_MODE: 4, NUMERICAL_NOTE: 4, DESCRIPTOR: 8}
# cudnnBackendNumericalNote_t
TENSOR_CORE, DOWN_CONVERT_INPUTS, NONDETERMINISTIC = 0, 1, 4

_OPERATION_ROLES = {  # attribute -> role, per convolution operation; alpha, beta, convolution
    FORWARD: ({703: "w", 704: "x", 705: "y"}, 700, 701, 702),
    BACKWARD_DATA: ({709: "w", 710: "x", 711: "y"}, 706, 707, 708),
    BACKWARD_FILTER: ({715: "w", 716: "x", 717: "y"}, 712, 713, 714),
}
_ANY, _SOME = (0, 64), (1, 64)  # cudnn_graph.h's "0+ elements", "1+ elements" (64: as many as a test passes)
DIM_MAX = 8  # CUDNN_DIM_MAX: dimensions, strides, dilations and paddings take 1 to 8 elements
_SCHEMA = {  # descriptor type -> {attribute: (types, count or (least, most))}
    TENSOR: {900: ((INT64,), 1), 901: ((DATA_TYPE,), 1), 902: ((INT64,), (1, DIM_MAX)), 903: ((INT64,), (1, DIM_MAX)),
             906: ((INT64,), 1), 907: ((BOOLEAN,), 1)},
    CONVOLUTION: {100: ((DATA_TYPE,), 1), 101: ((CONV_MODE,), 1), 102: ((INT64,), (1, DIM_MAX)),
                  103: ((INT64,), (1, DIM_MAX)), 104: ((INT64,), (1, DIM_MAX)), 105: ((INT64,), (1, DIM_MAX)),
                  106: ((INT64,), 1)},
    OPERATION_GRAPH: {800: ((HANDLE,), 1), 801: ((DESCRIPTOR,), (1, 64))},
    ENGINEHEUR: {200: ((HEUR_MODE,), 1), 201: ((DESCRIPTOR,), 1)},
    ENGINECFG: {300: ((DESCRIPTOR,), 1)},
    ENGINE: {},
    EXECUTION_PLAN: {400: ((HANDLE,), 1), 401: ((DESCRIPTOR,), 1)},
    VARIANT_PACK: {1000: ((INT64,), _ANY), 1001: ((VOID_PTR,), _ANY), 1002: ((VOID_PTR,), _ANY),
                   1003: ((VOID_PTR,), 1)},
}
for _kind, (_roles, _alpha, _beta, _conv) in _OPERATION_ROLES.items():
    _SCHEMA[_kind] = {**{a: ((DESCRIPTOR,), 1) for a in _roles}, _alpha: ((FLOAT, DOUBLE), _SOME),
                      _beta: ((FLOAT, DOUBLE), _SOME), _conv: ((DESCRIPTOR,), 1)}
# What the double answers cudnnBackendGetAttribute for: (descriptor type, attribute) -> attribute type.
_GETTABLE = {(ENGINEHEUR, 202): DESCRIPTOR, (ENGINECFG, 300): DESCRIPTOR, (ENGINE, 1303): NUMERICAL_NOTE,
             (ENGINE, 1301): INT64, (EXECUTION_PLAN, 402): INT64}
_REFERENCES = {702: CONVOLUTION, 708: CONVOLUTION, 714: CONVOLUTION, 201: OPERATION_GRAPH, 300: ENGINE,
               401: ENGINECFG, 801: (FORWARD, BACKWARD_DATA, BACKWARD_FILTER)}

# This double's engines per operation, as heuristic mode A ranks them: (global index, notes, workspace bytes).
ENGINES = {
    FORWARD: [(7, (TENSOR_CORE, DOWN_CONVERT_INPUTS), 0), (0, (TENSOR_CORE,), 4096), (1, (), 4096)],
    BACKWARD_DATA: [(0, (TENSOR_CORE,), 4096), (1, (), 4096)],
    BACKWARD_FILTER: [(0, (TENSOR_CORE, NONDETERMINISTIC), 4096), (1, (NONDETERMINISTIC,), 4096), (2, (), 0)],
}
declines = set()  # simulation control: (operation type, engine index) pairs whose plans fail to finalize
counts = collections.Counter()  # "finalize <type>" and "<function>" -> calls

_ids = itertools.count(0xC0000, 0x10)
_objects = {}  # handle or descriptor -> its state
_ORDER = numpy.random.default_rng(0xA70A1C)  # the order atomics land in, per call


def _value(argument):
    return argument if isinstance(argument, int) else (getattr(argument, "value", argument) or 0)


def _get(argument, kind):
    state = _objects.get(_value(argument))
    return state if state is not None and state["kind"] == kind else None


def cudnnGetVersion():
    return VERSION


def cudnnGetErrorString(status):
    return ("CUDNN_STATUS_" + _MESSAGES.get(status, "UNKNOWN")).encode()


def cudnnCreate(out):
    pointer = next(_ids)
    _objects[pointer] = {"kind": "handle"}
    out._obj.value = pointer
    return SUCCESS


def cudnnSetStream(handle, stream):
    state = _get(handle, "handle")
    if state is None:
        return BAD_PARAM
    state["stream"] = _value(stream)
    return SUCCESS


def cudnnBackendCreateDescriptor(kind, out):
    counts["cudnnBackendCreateDescriptor"] += 1
    if _value(kind) not in _SCHEMA:
        return NOT_SUPPORTED
    pointer = next(_ids)
    _objects[pointer] = {"kind": "backend", "type": _value(kind), "attributes": {}, "final": False}
    out._obj.value = pointer
    return SUCCESS


def cudnnBackendDestroyDescriptor(descriptor):
    return SUCCESS if _objects.pop(_value(descriptor), None) is not None else BAD_PARAM


def _elements(array, kind, count):
    """The ``count`` elements cuDNN reads at ``array``, as Python values."""
    if array is None:
        return None
    single = not isinstance(array, ctypes.Array)
    element = type(array._obj) if single else array._type_
    if ctypes.sizeof(element) != _ELEMENT_BYTES[kind]:
        raise RuntimeError(f"Simulated cuDNN: attribute type {kind} has {_ELEMENT_BYTES[kind]}-byte elements, but "
                           f"the array holds {ctypes.sizeof(element)}-byte {element.__name__}: cuDNN would misread it.")
    values = [array._obj.value] if single else list(array[:count])
    if len(values) < count:
        raise RuntimeError(f"Simulated cuDNN: {count} elements asked of an array of {len(values)}.")
    return [(v or 0) if kind in (VOID_PTR, DESCRIPTOR, HANDLE) else v for v in values]


def cudnnBackendSetAttribute(descriptor, name, kind, count, array):
    counts["cudnnBackendSetAttribute"] += 1
    state = _get(descriptor, "backend")
    if state is None:
        return BAD_PARAM
    if state["final"]:
        return NOT_INITIALIZED
    name, kind, count = _value(name), _value(kind), _value(count)
    rule = _SCHEMA[state["type"]].get(name)
    if rule is None:
        return BAD_PARAM
    if kind not in rule[0]:
        return ATTRIBUTE_TYPE
    least, most = rule[1] if isinstance(rule[1], tuple) else (rule[1], rule[1])
    if not least <= count <= most:
        return BAD_PARAM
    values = _elements(array, kind, count) if count else []
    if kind == DESCRIPTOR:
        wanted = _REFERENCES.get(name, TENSOR)
        wanted = wanted if isinstance(wanted, tuple) else (wanted,)
        for value in values:
            referenced = _get(value, "backend")
            if referenced is None or not referenced["final"] or referenced["type"] not in wanted:
                return BAD_PARAM
    if kind == HANDLE and _get(values[0], "handle") is None:
        return BAD_PARAM
    state["attributes"][name] = values
    return SUCCESS


def _tensor_state(value):
    return _objects[_value(value)]["attributes"]


def _packed_nhwc(dims, strides):
    n, c, h, w = dims
    return list(strides) == [h * w * c, 1, w * c, c]


def _finalize_tensor(a):
    if any(name not in a for name in (900, 901, 902, 903, 906)) or len(a[902]) != len(a[903]):
        return BAD_PARAM
    if min(a[902]) <= 0 or min(a[903]) <= 0 or a[900][0] <= 0 or a[900][0] & (a[900][0] - 1):
        return BAD_PARAM
    if a[901][0] != 0 or len(a[902]) != 4 or not _packed_nhwc(a[902], a[903]):
        return NOT_SUPPORTED  # what this double models: float32, 4-D, packed channels-last
    return SUCCESS


def _finalize_convolution(a):
    if any(name not in a for name in range(100, 107)):
        return BAD_PARAM
    spatial = a[106][0]
    if any(len(a[name]) != spatial for name in (102, 103, 104, 105)):
        return BAD_PARAM
    if min(a[102] + a[103]) <= 0 or min(a[104] + a[105]) < 0 or a[101][0] not in (0, 1):
        return BAD_PARAM
    return SUCCESS if spatial == 2 and a[100][0] == 0 and a[101][0] == 1 else NOT_SUPPORTED


def geometry(operation):
    """``{role: dims}`` and the convolution's attributes of a finalized-able
    operation, or a status."""
    roles, alpha, beta, conv_name = _OPERATION_ROLES[operation["type"]]
    a = operation["attributes"]
    if any(name not in a for name in list(roles) + [alpha, beta, conv_name]):
        return BAD_PARAM
    tensors = {role: _tensor_state(a[name][0]) for name, role in roles.items()}
    if len({t[906][0] for t in tensors.values()}) != 3:
        return DUPLICATED_ENTRIES
    conv = _tensor_state(a[conv_name][0])
    (n, c, h, w), (k, fc, kh, kw) = tensors["x"][902], tensors["w"][902]
    (dh, dw), (sh, sw), (th, tw), (bh, bw) = conv[102], conv[103], conv[105], conv[104]
    out = [n, k, (h + th + bh - (kh - 1) * dh - 1) // sh + 1, (w + tw + bw - (kw - 1) * dw - 1) // sw + 1]
    if fc != c or tensors["y"][902] != out or min(out) <= 0:
        return SHAPE_MISMATCH
    return {"dims": {role: t[902] for role, t in tensors.items()}, "uids": {role: t[906][0] for role, t in
            tensors.items()}, "alignment": {role: t[900][0] for role, t in tensors.items()}, "conv": conv}


def _finalize(state):
    a, kind = state["attributes"], state["type"]
    if kind == TENSOR:
        return _finalize_tensor(a)
    if kind == CONVOLUTION:
        return _finalize_convolution(a)
    if kind in _OPERATION_ROLES:
        found = geometry(state)
        if isinstance(found, int):
            return found
        state["geometry"] = found
        return SUCCESS
    if kind == OPERATION_GRAPH:
        if 800 not in a or 801 not in a:
            return BAD_PARAM
        if len(a[801]) != 1:
            return NOT_SUPPORTED_GRAPH_PATTERN  # this double: one convolution per graph
        state["operation"] = _objects[a[801][0]]
        return SUCCESS
    if kind == ENGINEHEUR:
        if 200 not in a or 201 not in a or a[200][0] not in range(4):
            return BAD_PARAM
        graph = _objects[a[201][0]]
        state["results"] = [(graph, engine) for engine in ENGINES[graph["operation"]["type"]]]
        return SUCCESS
    if kind == ENGINECFG:
        return SUCCESS if 300 in a else BAD_PARAM
    if kind == EXECUTION_PLAN:
        if 400 not in a or 401 not in a:
            return BAD_PARAM
        graph, engine = _objects[a[401][0]]["config"]
        if (graph["operation"]["type"], engine[0]) in declines:
            return NOT_SUPPORTED_SHAPE
        state.update(graph=graph, engine=engine, handle=a[400][0])
        return SUCCESS
    if kind == VARIANT_PACK:
        return SUCCESS if len(a.get(1000, [])) == len(a.get(1001, [])) else BAD_PARAM
    return BAD_PARAM


def cudnnBackendFinalize(descriptor):
    state = _get(descriptor, "backend")
    if state is None:
        return BAD_PARAM
    if state["final"]:
        return NOT_INITIALIZED
    status = _finalize(state)
    if status == SUCCESS:
        state["final"] = True
        counts[f"finalize {state['type']}"] += 1
    return status


def _put(array, values):
    if isinstance(array, ctypes.Array):
        for index, value in enumerate(values):
            array[index] = value
    elif values:
        array._obj.value = values[0]


def cudnnBackendGetAttribute(descriptor, name, kind, requested, count, array):
    state = _get(descriptor, "backend")
    if state is None:
        return BAD_PARAM
    if not state["final"]:
        return NOT_FINALIZED
    name, kind, requested = _value(name), _value(kind), _value(requested)
    facts = {  # (descriptor type, attribute) -> values
        (ENGINEHEUR, 202): state.get("results"),
        (ENGINECFG, 300): [state.get("config")],
        (ENGINE, 1303): list(state.get("engine", (0, ()))[1]),
        (ENGINE, 1301): [state.get("engine", (0,))[0]],
        (EXECUTION_PLAN, 402): [state.get("engine", (0, (), 0))[2]],
    }
    if (state["type"], name) not in facts:
        return BAD_PARAM
    if kind != _GETTABLE[(state["type"], name)]:
        return ATTRIBUTE_TYPE
    values = facts[(state["type"], name)]
    count._obj.value = len(values)
    if array is None or requested == 0:
        return SUCCESS
    shown = values[:requested]
    if kind != DESCRIPTOR:
        _elements(array, kind, len(shown))  # the element size check
        _put(array, shown)
        return SUCCESS
    targets = _elements(array, DESCRIPTOR, len(shown))
    wanted = ENGINECFG if state["type"] == ENGINEHEUR else ENGINE
    for target, value in zip(targets, shown):
        filled = _get(target, "backend")
        if filled is None or filled["type"] != wanted or filled["final"]:
            return BAD_PARAM
        filled.update(final=True, **({"config": value} if wanted == ENGINECFG else {"engine": value[1]}))
        if wanted == ENGINECFG:
            filled["attributes"][300] = [None]
    return SUCCESS


def _tensor(pointer, shape):
    """The packed float32 tensor of ``shape`` at ``pointer``, and its block."""
    count = int(numpy.prod(shape))
    block, _ = memory._block_at(pointer, count * 4)
    return memory._host_view(pointer, count, numpy.float32).reshape(shape), block


def _windows(x, kernel_hw, conv, out_hw):
    """(N, Ho, Wo, C, kh, kw) windows of the input padded before and after."""
    (dh, dw), (sh, sw), (th, tw), (bh, bw) = conv[102], conv[103], conv[105], conv[104]
    (kh, kw), (ho, wo) = kernel_hw, out_hw
    padded = numpy.pad(x, ((0, 0), (th, bh), (tw, bw), (0, 0)))
    windows = sliding_window_view(padded, ((kh - 1) * dh + 1, (kw - 1) * dw + 1), axis=(1, 2))
    return windows[:, ::sh, ::sw, :, ::dh, ::dw][:, :ho, :wo]


def _read(notes, array):
    """A float32 input as the engine reads it (module docstring)."""
    if DOWN_CONVERT_INPUTS in notes:
        return array.astype(numpy.float16).astype(numpy.float32)
    if TENSOR_CORE in notes:
        from minikeras.testing.sim_cupy.libs.cublas import to_tf32

        return to_tf32(array)
    return array


def _compute(kind, notes, found, arrays):
    (n, c, h, w), (k, _, kh, kw), (_, _, ho, wo) = (found["dims"][r] for r in ("x", "w", "y"))
    conv = found["conv"]
    x, weights, y = arrays["x"], arrays["w"], arrays["y"]
    if kind == FORWARD:
        windows = _windows(_read(notes, x), (kh, kw), conv, (ho, wo))
        y[...] = numpy.tensordot(windows, _read(notes, weights), axes=([3, 4, 5], [3, 1, 2]))
    elif kind == BACKWARD_DATA:
        (dh, dw), (sh, sw), (th, tw), (bh, bw) = conv[102], conv[103], conv[105], conv[104]
        read_w, read_y = _read(notes, weights), _read(notes, y)
        padded = numpy.zeros((n, h + th + bh, w + tw + bw, c), numpy.float32)
        for i in range(kh):
            for j in range(kw):
                rows = slice(i * dh, i * dh + sh * (ho - 1) + 1, sh)
                cols = slice(j * dw, j * dw + sw * (wo - 1) + 1, sw)
                padded[:, rows, cols, :] += read_y @ read_w[:, i, j, :]
        x[...] = padded[:, th:th + h, tw:tw + w]
    else:  # the filter gradient: (N*Ho*Wo) rows of windows against the output gradient
        windows = _windows(_read(notes, x), (kh, kw), conv, (ho, wo)).reshape(n * ho * wo, c, kh, kw)
        grad = _read(notes, y).reshape(n * ho * wo, k)
        if NONDETERMINISTIC not in notes:
            weights[...] = numpy.tensordot(grad, windows, axes=([0], [0])).transpose(0, 2, 3, 1)
            return
        # Blocks of 16 rows each sum their part, then add it atomically: in an order drawn per call.
        starts = range(0, n * ho * wo, 16)
        partial = numpy.stack([numpy.tensordot(grad[s:s + 16], windows[s:s + 16], axes=([0], [0])) for s in starts])
        order = _ORDER.permutation(len(partial))
        weights[...] = numpy.cumsum(partial[order], axis=0, dtype=numpy.float32)[-1].transpose(0, 2, 3, 1)


def cudnnBackendExecute(handle, plan, pack):
    counts["cudnnBackendExecute"] += 1
    handle_state, plan, pack = _get(handle, "handle"), _get(plan, "backend"), _get(pack, "backend")
    if handle_state is None or plan is None or pack is None or plan["type"] != EXECUTION_PLAN or \
            pack["type"] != VARIANT_PACK:
        return BAD_PARAM
    if not plan["final"] or not pack["final"]:
        return NOT_FINALIZED
    operation = plan["graph"]["operation"]
    found, notes, workspace_bytes = operation["geometry"], plan["engine"][1], plan["engine"][2]
    pointers = dict(zip(pack["attributes"].get(1000, []), pack["attributes"].get(1001, [])))
    if any(uid not in pointers for uid in found["uids"].values()):
        return BAD_PARAM
    roles = {role: pointers[uid] for role, uid in found["uids"].items()}
    if any(not pointer for pointer in roles.values()):
        return NULL_POINTER
    if any(roles[role] % found["alignment"][role] for role in roles):
        return MISALIGNED_POINTER
    workspace = (pack["attributes"].get(1003) or [0])[0]
    if workspace_bytes and not workspace:
        return NULL_POINTER
    stream = stream_module._from_pointer(handle_state.get("stream", 0))
    if stream is None or stream.ptr in (0, 1):
        raise RuntimeError("Simulated cuDNN: cudnnBackendExecute on the legacy default stream "
                           "(cudnnSetStream was not called).")
    arrays, blocks = {}, {}
    for role, pointer in roles.items():
        dims = found["dims"][role]
        shape = (dims[0], dims[2], dims[3], dims[1])  # NCHW-ordered dimensions, NHWC in memory
        arrays[role], blocks[role] = _tensor(pointer, shape)
    work = [memory._block_at(workspace, workspace_bytes)[0]] if workspace_bytes else []
    written = {FORWARD: "y", BACKWARD_DATA: "x", BACKWARD_FILTER: "w"}[operation["type"]]
    reads = [block for role, block in blocks.items() if role != written]
    _calls.issue(stream, "cudnnBackendExecute", reads, [blocks[written]] + work,
                 lambda: _compute(operation["type"], notes, found, arrays))
    return SUCCESS


_HANDLE_OUT = ctypes.POINTER(ctypes.c_void_p)
# The C prototypes (cudnn_graph.h, cuDNN 9): name -> (restype, argtypes); enums are C ints, handles and
# descriptors pointers, element counts int64_t.
PROTOTYPES = {
    "cudnnGetVersion": (ctypes.c_size_t, ()),
    "cudnnGetErrorString": (ctypes.c_char_p, (ctypes.c_int,)),
    "cudnnCreate": (ctypes.c_int, (_HANDLE_OUT,)),
    "cudnnSetStream": (ctypes.c_int, (ctypes.c_void_p, ctypes.c_void_p)),
    "cudnnBackendCreateDescriptor": (ctypes.c_int, (ctypes.c_int, _HANDLE_OUT)),
    "cudnnBackendDestroyDescriptor": (ctypes.c_int, (ctypes.c_void_p,)),
    "cudnnBackendSetAttribute": (ctypes.c_int, (ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int64,
                                                ctypes.c_void_p)),
    "cudnnBackendGetAttribute": (ctypes.c_int, (ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int64,
                                                ctypes.POINTER(ctypes.c_int64), ctypes.c_void_p)),
    "cudnnBackendFinalize": (ctypes.c_int, (ctypes.c_void_p,)),
    "cudnnBackendExecute": (ctypes.c_int, (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)),
}
library = _boundary.library("cuDNN", {name: value for name, value in list(globals().items())
                                      if name.startswith("cudnn") and callable(value)}, PROTOTYPES)
