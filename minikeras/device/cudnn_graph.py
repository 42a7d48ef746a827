"""cuDNN 9's backend (graph) API through ctypes, for one convolution: what
PyTorch's cudnn-frontend does, without the frontend.

Once per plan (``build_plan``): tensor descriptors (channels-last strides
on cuDNN's NCHW-ordered dimensions), a convolution descriptor, one
convolution operation (forward, backward data or backward filter), an
operation graph, the engine heuristics (``CUDNN_HEUR_MODE_A``), and the
first engine configuration that passes minikeras's filter and finalizes
into an execution plan (an engine may decline a shape: its plan's finalize
fails, and the next one is tried, as cudnn-frontend's ``build_plans``
does). Per call (``execute``): one variant pack (unique ids, data pointers,
workspace) and one ``cudnnBackendExecute``.

The engine filter is PyTorch's (aten/src/ATen/native/cudnn/Conv_v8.cpp,
``filterEngineConfigs``): never an engine noted
``CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS``; none noted
``CUDNN_NUMERICAL_NOTE_TENSOR_CORE`` for float32 when TF32 is off
(``device/precision.py``); none noted
``CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC`` when determinism is asked for
(``device/determinism.py``).

Enum values: cuDNN 9's cudnn_graph.h (cudnnBackendDescriptorType_t,
cudnnBackendAttributeName_t, cudnnBackendAttributeType_t,
cudnnBackendHeurMode_t, cudnnBackendNumericalNote_t).
"""
import ctypes

# cudnnBackendDescriptorType_t
CONVOLUTION, ENGINE, ENGINECFG, ENGINEHEUR, EXECUTION_PLAN = 1, 2, 3, 4, 5
OPERATION_FORWARD, OPERATION_BACKWARD_FILTER, OPERATION_BACKWARD_DATA = 10, 11, 12
OPERATION_GRAPH, VARIANT_PACK, TENSOR = 15, 16, 17
# cudnnBackendAttributeType_t
TYPE_HANDLE, TYPE_DATA_TYPE, TYPE_BOOLEAN, TYPE_INT64, TYPE_FLOAT, TYPE_DOUBLE, TYPE_VOID_PTR = 0, 1, 2, 3, 4, 5, 6
TYPE_CONVOLUTION_MODE, TYPE_HEUR_MODE, TYPE_NUMERICAL_NOTE, TYPE_BACKEND_DESCRIPTOR = 7, 8, 11, 15
# cudnnBackendAttributeName_t
CONVOLUTION_COMP_TYPE, CONVOLUTION_CONV_MODE, CONVOLUTION_DILATIONS = 100, 101, 102
CONVOLUTION_FILTER_STRIDES, CONVOLUTION_POST_PADDINGS = 103, 104
CONVOLUTION_PRE_PADDINGS, CONVOLUTION_SPATIAL_DIMS = 105, 106
ENGINEHEUR_MODE, ENGINEHEUR_OPERATION_GRAPH, ENGINEHEUR_RESULTS = 200, 201, 202
ENGINECFG_ENGINE = 300
EXECUTION_PLAN_HANDLE, EXECUTION_PLAN_ENGINE_CONFIG, EXECUTION_PLAN_WORKSPACE_SIZE = 400, 401, 402
OPERATIONGRAPH_HANDLE, OPERATIONGRAPH_OPS = 800, 801
TENSOR_BYTE_ALIGNMENT, TENSOR_DATA_TYPE, TENSOR_DIMENSIONS, TENSOR_STRIDES, TENSOR_UNIQUE_ID = 900, 901, 902, 903, 906
VARIANT_PACK_UNIQUE_IDS, VARIANT_PACK_DATA_POINTERS, VARIANT_PACK_WORKSPACE = 1000, 1001, 1003
ENGINE_NUMERICAL_NOTE = 1303
# The operation of each direction, and its attributes: (alpha, beta, convolution, {role: attribute}).
OPERATIONS = {
    "forward": (OPERATION_FORWARD, 700, 701, 702, {"w": 703, "x": 704, "y": 705}),
    "backward_data": (OPERATION_BACKWARD_DATA, 706, 707, 708, {"w": 709, "x": 710, "y": 711}),
    "backward_filter": (OPERATION_BACKWARD_FILTER, 712, 713, 714, {"w": 715, "x": 716, "y": 717}),
}
HEUR_MODE_A = 3
NOTE_TENSOR_CORE, NOTE_DOWN_CONVERT_INPUTS, NOTE_NONDETERMINISTIC = 0, 1, 4
DATA_FLOAT, CROSS_CORRELATION = 0, 1
# The C type of one element of each attribute type minikeras sets (cudnnBackendAttributeType_t's
# comments in cudnn_graph.h): enums are C ints, CUDNN_TYPE_BOOLEAN a C++ ``bool`` (one byte).
ELEMENT_TYPES = {TYPE_HANDLE: ctypes.c_void_p, TYPE_DATA_TYPE: ctypes.c_int, TYPE_BOOLEAN: ctypes.c_bool,
                 TYPE_INT64: ctypes.c_int64, TYPE_FLOAT: ctypes.c_float, TYPE_DOUBLE: ctypes.c_double,
                 TYPE_VOID_PTR: ctypes.c_void_p, TYPE_CONVOLUTION_MODE: ctypes.c_int, TYPE_HEUR_MODE: ctypes.c_int,
                 TYPE_NUMERICAL_NOTE: ctypes.c_int, TYPE_BACKEND_DESCRIPTOR: ctypes.c_void_p}
ALIGNMENT = 16  # bytes every tensor's pointer is promised to be aligned to
UIDS = {"x": 1, "w": 2, "y": 3}
_MAX_NOTES = 16


class Declined(Exception):
    """cuDNN has no engine for this convolution that minikeras may use."""


class Plan:
    """A finalized execution plan, its workspace size, its engine's
    numerical notes, and every descriptor it was built from (kept alive
    with it and destroyed with it)."""

    def __init__(self, descriptor, workspace_bytes, notes, descriptors):
        self.descriptor = descriptor
        self.workspace_bytes = workspace_bytes
        self.notes = frozenset(notes)
        self.descriptors = descriptors

    @property
    def deterministic(self):
        return NOTE_NONDETERMINISTIC not in self.notes


class Builder:
    """Backend descriptors on one library, with its error check
    (``check(status, call)`` raises)."""

    def __init__(self, library, check):
        self._lib = library
        self._check = check
        self.made = []

    def create(self, kind):
        descriptor = ctypes.c_void_p()
        self._check(self._lib.cudnnBackendCreateDescriptor(kind, ctypes.byref(descriptor)),
                    "cudnnBackendCreateDescriptor")
        self.made.append(descriptor)
        return descriptor

    def set(self, descriptor, name, kind, values):
        """Set attribute ``name`` to ``values`` (a list) as cuDNN type ``kind``."""
        c_type = ELEMENT_TYPES[kind]
        values = [v.value if isinstance(v, ctypes.c_void_p) else v for v in values]
        array = (c_type * len(values))(*values)
        self._check(self._lib.cudnnBackendSetAttribute(descriptor, name, kind, ctypes.c_int64(len(values)), array),
                    f"cudnnBackendSetAttribute({name})")

    def finalize(self, descriptor, what="cudnnBackendFinalize"):
        self._check(self._lib.cudnnBackendFinalize(descriptor), what)
        return descriptor

    def get(self, descriptor, name, kind, count, array):
        """Get up to ``count`` elements into ``array``; returns how many there are."""
        got = ctypes.c_int64()
        self._check(self._lib.cudnnBackendGetAttribute(descriptor, name, kind, ctypes.c_int64(count),
                                                       ctypes.byref(got), array),
                    f"cudnnBackendGetAttribute({name})")
        return got.value

    def destroy(self, descriptors):
        for descriptor in reversed(descriptors):
            self._lib.cudnnBackendDestroyDescriptor(descriptor)

    # ------------------------------------------------------------ the graph
    def tensor(self, role, dims, strides):
        tensor = self.create(TENSOR)
        self.set(tensor, TENSOR_DATA_TYPE, TYPE_DATA_TYPE, [DATA_FLOAT])
        self.set(tensor, TENSOR_DIMENSIONS, TYPE_INT64, list(dims))
        self.set(tensor, TENSOR_STRIDES, TYPE_INT64, list(strides))
        self.set(tensor, TENSOR_UNIQUE_ID, TYPE_INT64, [UIDS[role]])
        self.set(tensor, TENSOR_BYTE_ALIGNMENT, TYPE_INT64, [ALIGNMENT])
        return self.finalize(tensor)

    def convolution(self, spec):
        conv = self.create(CONVOLUTION)
        self.set(conv, CONVOLUTION_COMP_TYPE, TYPE_DATA_TYPE, [DATA_FLOAT])
        self.set(conv, CONVOLUTION_CONV_MODE, TYPE_CONVOLUTION_MODE, [CROSS_CORRELATION])
        self.set(conv, CONVOLUTION_SPATIAL_DIMS, TYPE_INT64, [2])
        self.set(conv, CONVOLUTION_DILATIONS, TYPE_INT64, list(spec.dilation))
        self.set(conv, CONVOLUTION_FILTER_STRIDES, TYPE_INT64, list(spec.strides))
        self.set(conv, CONVOLUTION_PRE_PADDINGS, TYPE_INT64, list(spec.pads))
        self.set(conv, CONVOLUTION_POST_PADDINGS, TYPE_INT64, list(spec.pads))
        return self.finalize(conv)

    def operation_graph(self, handle, spec, direction):
        n, h, w, c, k = spec[:5]
        (kh, kw), (ho, wo) = spec.window, spec.out
        # cuDNN orders dimensions (N, C, H, W); channels-last strides make them NHWC in memory.
        tensors = {"x": self.tensor("x", (n, c, h, w), (h * w * c, 1, w * c, c)),
                   "w": self.tensor("w", (k, c, kh, kw), (kh * kw * c, 1, kw * c, c)),
                   "y": self.tensor("y", (n, k, ho, wo), (ho * wo * k, 1, wo * k, k))}
        kind, alpha, beta, conv_name, roles = OPERATIONS[direction]
        operation = self.create(kind)
        for role, attribute in roles.items():
            self.set(operation, attribute, TYPE_BACKEND_DESCRIPTOR, [tensors[role]])
        self.set(operation, conv_name, TYPE_BACKEND_DESCRIPTOR, [self.convolution(spec)])
        self.set(operation, alpha, TYPE_FLOAT, [1.0])
        self.set(operation, beta, TYPE_FLOAT, [0.0])
        self.finalize(operation)
        graph = self.create(OPERATION_GRAPH)
        self.set(graph, OPERATIONGRAPH_HANDLE, TYPE_HANDLE, [handle])
        self.set(graph, OPERATIONGRAPH_OPS, TYPE_BACKEND_DESCRIPTOR, [operation])
        return self.finalize(graph)

    def engine_configs(self, graph):
        """The heuristic's engine configurations, best first."""
        heuristic = self.create(ENGINEHEUR)
        self.set(heuristic, ENGINEHEUR_OPERATION_GRAPH, TYPE_BACKEND_DESCRIPTOR, [graph])
        self.set(heuristic, ENGINEHEUR_MODE, TYPE_HEUR_MODE, [HEUR_MODE_A])
        self.finalize(heuristic)
        count = self.get(heuristic, ENGINEHEUR_RESULTS, TYPE_BACKEND_DESCRIPTOR, 0, None)
        configs = [self.create(ENGINECFG) for _ in range(count)]
        array = (ctypes.c_void_p * max(1, count))(*[c.value for c in configs])
        got = self.get(heuristic, ENGINEHEUR_RESULTS, TYPE_BACKEND_DESCRIPTOR, count, array)
        return configs[:min(got, count)]

    def notes(self, config):
        engine = self.create(ENGINE)
        self.get(config, ENGINECFG_ENGINE, TYPE_BACKEND_DESCRIPTOR, 1, ctypes.byref(engine))
        notes = (ctypes.c_int * _MAX_NOTES)()
        count = self.get(engine, ENGINE_NUMERICAL_NOTE, TYPE_NUMERICAL_NOTE, _MAX_NOTES, notes)
        return set(notes[:min(count, _MAX_NOTES)])

    def plan(self, handle, config):
        """The finalized plan of ``config``, or None when its engine declines."""
        plan = self.create(EXECUTION_PLAN)
        self.set(plan, EXECUTION_PLAN_HANDLE, TYPE_HANDLE, [handle])
        self.set(plan, EXECUTION_PLAN_ENGINE_CONFIG, TYPE_BACKEND_DESCRIPTOR, [config])
        if self._lib.cudnnBackendFinalize(plan):
            return None
        size = ctypes.c_int64()
        self.get(plan, EXECUTION_PLAN_WORKSPACE_SIZE, TYPE_INT64, 1, ctypes.byref(size))
        return plan, size.value


def allowed(notes, tf32, deterministic):
    """PyTorch's engine filter (module docstring)."""
    return not (NOTE_DOWN_CONVERT_INPUTS in notes or (not tf32 and NOTE_TENSOR_CORE in notes)
                or (deterministic and NOTE_NONDETERMINISTIC in notes))


def build_plan(library, check, handle, spec, direction, tf32, deterministic):
    """The Plan of one convolution direction (module docstring).

    Raises:
        Declined: no allowed engine finalizes a plan for it.
    """
    builder = Builder(library, check)
    try:
        graph = builder.operation_graph(handle, spec, direction)
        for config in builder.engine_configs(graph):
            notes = builder.notes(config)
            if not allowed(notes, tf32, deterministic):
                continue
            built = builder.plan(handle, config)
            if built is not None:
                return Plan(built[0], built[1], notes, builder.made)
    except Exception:
        builder.destroy(builder.made)
        raise
    builder.destroy(builder.made)
    raise Declined(f"no engine for {direction} of {spec}")


def execute(library, check, handle, plan, pointers, workspace):
    """One call: a variant pack of ``pointers`` ({role: device address}) and
    ``workspace`` (an address, or None), and ``cudnnBackendExecute``."""
    builder = Builder(library, check)
    pack = builder.create(VARIANT_PACK)
    try:
        roles = sorted(pointers)
        builder.set(pack, VARIANT_PACK_UNIQUE_IDS, TYPE_INT64, [UIDS[role] for role in roles])
        builder.set(pack, VARIANT_PACK_DATA_POINTERS, TYPE_VOID_PTR, [pointers[role] for role in roles])
        builder.set(pack, VARIANT_PACK_WORKSPACE, TYPE_VOID_PTR, [workspace])
        builder.finalize(pack)
        check(library.cudnnBackendExecute(handle, plan.descriptor, pack), "cudnnBackendExecute")
    finally:
        builder.destroy([pack])
