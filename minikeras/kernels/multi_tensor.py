"""PyTorch's ``multi_tensor_apply`` layout: many tensors updated by one launch.

An optimizer step updates every variable of a device elementwise (weights,
gradient and slots, 4-5 arrays per variable). One launch per variable costs
a launch each; one launch for all of them needs each block to know which
tensor and which part of it to update. As PyTorch's fused optimizers do,
the launch receives **by value** (in the kernel's parameter space, ~4 KB,
read through the constant cache; nothing uploaded, so a CUDA graph captures
it as it captures any argument) a table of up to :data:`TENSORS` tensors'
addresses and sizes and, per block, its tensor and its chunk:

    struct TensorTable<depth> {
        unsigned long long address[depth][TENSORS];  // 0 for an absent slot
        long long size[TENSORS];
        unsigned int chunk_of_block[BLOCKS];
        unsigned char tensor_of_block[BLOCKS];
    };

Block b updates elements ``[chunk_of_block[b] * chunk, ...)`` of tensor
``tensor_of_block[b]``: no search per element (the kernel this replaces
searched its 16 sizes for every element, and kept its pointer tables in
local memory: a 768-byte stack frame), 16-byte vector accesses where the
tensor's arrays are aligned, 32-bit loop indices. More tensors or blocks
than a table holds take more launches of the same kernel.

The plan (which tensors and chunks go to which launch, the chunk size) is
made once per list of sizes and kept (:func:`plan`), and so are its tables
with the arrays' addresses written in, per list of addresses
(:func:`filled_tables`): a step that updates the arrays of the step before
builds no table. The chunk size grows with the parameters so
that the blocks never force more launches than the tensors do.
"""
import functools
import math

import numpy

from minikeras.kernels.cuda_common import EXACT_SOURCE, PACK_SOURCE, ByValue
from minikeras.kernels.kernel import UnsupportedDtype

TENSORS = 32  # tensors per launch
THREADS = 256  # threads per block
CHUNK_MIN = 2048  # elements per block at least: 256 threads x 4 floats x 2 iterations
CHUNK_MAX = 1 << 22
_PARAMETER_BYTES = 3840  # the table's share of the 4 KB of kernel parameters (the rest: the scalars)


def _blocks_per_launch(depth):
    tables = 8 * (depth + 1) * TENSORS
    return (_PARAMETER_BYTES - tables) // 5 // 4 * 4


@functools.lru_cache(maxsize=None)
def table_struct(depth):
    """The ByValue TensorTable of ``depth`` arrays per tensor."""
    return ByValue(f"TensorTable{depth}", [
        ("address", "unsigned long long", (depth, TENSORS)), ("size", "long long", TENSORS),
        ("chunk_of_block", "unsigned int", _blocks_per_launch(depth)),
        ("tensor_of_block", "unsigned char", _blocks_per_launch(depth))])


def multi_tensor_source(name, scalar_parameters, fields, prologue, body):
    """A multi-tensor kernel's CUDA source.

    Args:
        name: the ``extern "C"`` name.
        scalar_parameters: the step-wide parameters after ``(table, chunk)``.
        fields: ``[(field, written, optional)]``, the arrays of each tensor in
            the table's order (the first is the variable's weights); an
            optional one may be absent (address 0: not read, not written; the
            body sees 0 and ``has_<field>`` false).
        prologue: statements run once per thread (read the step scalars).
        body: statements updating one element, on ``scalar_t&`` variables
            named as the fields.
    """
    table = table_struct(len(fields))
    lvalues = ", ".join(f"scalar_t& {field}" for field, _, _ in fields)

    def load(index_expression, pointer_type, prefix, indent):
        lines = []
        for field, _, optional in fields:
            read = f"reinterpret_cast<const {pointer_type}*>(at_{field})[{index_expression}]"
            if optional:  # absent: 0, never read
                lines += [f"{pointer_type} {prefix}{field} = {{}};\n", f"if (has_{field}) {prefix}{field} = {read};\n"]
            else:
                lines.append(f"{pointer_type} {prefix}{field} = {read};\n")
        return "".join(indent + line for line in lines)

    def store(index_expression, pointer_type, prefix, indent):
        return "".join(
            indent + (f"if (has_{field}) " if optional else "")
            + f"reinterpret_cast<{pointer_type}*>(at_{field})[{index_expression}] = {prefix}{field};\n"
            for field, written, optional in fields if written)

    addresses = "".join(f"    scalar_t* const at_{field} = reinterpret_cast<scalar_t*>(table.address[{depth}][slot]) + start;\n"
                        + (f"    const bool has_{field} = table.address[{depth}][slot] != 0;\n" if optional else "")
                        for depth, (field, _, optional) in enumerate(fields))
    either = " | ".join(f"table.address[{depth}][slot]" for depth in range(len(fields)))
    arguments = ", ".join(f"pack_{field}.v[k]" for field, _, _ in fields)
    scalar_arguments = ", ".join(f"one_{field}" for field, _, _ in fields)
    return (table.declaration + PACK_SOURCE + EXACT_SOURCE + "#define MT_VECTOR (16 / (int)sizeof(scalar_t))\n"
            + f'extern "C" __global__ void __launch_bounds__({THREADS}) {name}({table.name} table, int chunk, '
            + f"{scalar_parameters}) {{\n"
            + "    const int slot = table.tensor_of_block[blockIdx.x];\n"
            + "    const long long start = (long long)table.chunk_of_block[blockIdx.x] * chunk;\n"
            + "    const long long left = table.size[slot] - start;\n"
            + "    const int count = left < (long long)chunk ? (int)left : chunk;\n"
            + prologue + addresses
            + f"    auto element = [&]({lvalues}) {{\n{body}    }};\n"
            + "    int first = 0;\n"
            + f"    if ((({either}) % (unsigned long long)sizeof(Pack<MT_VECTOR>)) == 0) {{\n"
            + "        /* start is a multiple of chunk (of 4 vectors): every array of this chunk is 16-byte aligned */\n"
            + "        typedef Pack<MT_VECTOR> P;\n"
            + "        const int packs = count / MT_VECTOR;\n"
            + "        for (int p = threadIdx.x; p < packs; p += blockDim.x) {\n"
            + load("p", "P", "pack_", " " * 12)
            + "#pragma unroll\n"
            + f"            for (int k = 0; k < MT_VECTOR; ++k) element({arguments});\n"
            + store("p", "P", "pack_", " " * 12)
            + "        }\n"
            + "        first = packs * MT_VECTOR;\n"
            + "    }\n"
            + "    for (int e = first + threadIdx.x; e < count; e += blockDim.x) {\n"
            + load("e", "scalar_t", "one_", " " * 8)
            + f"        element({scalar_arguments});\n"
            + store("e", "scalar_t", "one_", " " * 8)
            + "    }\n}\n")


class Plan:
    """How a list of tensor sizes is cut into launches (see the module docstring).

    Attributes:
        chunk: elements per block.
        launches: ``[(tensors, table)]``: the tensor indices (into the sizes)
            of each launch's slots, and its table (a size-1 NumPy array with
            sizes and block maps filled, addresses 0; copied per call).
    """

    def __init__(self, sizes, depth):
        struct = table_struct(depth)
        capacity = struct.dtype["chunk_of_block"].shape[0]
        by_tensors = max(1, math.ceil(len(sizes) / TENSORS))
        chunk = CHUNK_MIN
        while chunk < CHUNK_MAX and sum(math.ceil(size / chunk) for size in sizes) > by_tensors * capacity:
            chunk *= 2
        self.chunk, self.launches = chunk, []
        tensors, blocks = [], []
        for index, size in enumerate(sizes):
            for chunk_index in range(math.ceil(size / chunk)):
                if len(blocks) == capacity:
                    self._add(struct, sizes, tensors, blocks)
                    tensors, blocks = [], []
                if not tensors or tensors[-1] != index:
                    if len(tensors) == TENSORS:
                        self._add(struct, sizes, tensors, blocks)
                        tensors, blocks = [], []
                    tensors.append(index)
                blocks.append((len(tensors) - 1, chunk_index))
        if blocks:
            self._add(struct, sizes, tensors, blocks)

    def _add(self, struct, sizes, tensors, blocks):
        table = struct.new()
        table["size"][0, :len(tensors)] = [sizes[index] for index in tensors]
        table["tensor_of_block"][0, :len(blocks)] = [slot for slot, _ in blocks]
        table["chunk_of_block"][0, :len(blocks)] = [chunk for _, chunk in blocks]
        numpy.ndarray.setflags(table, write=False)  # copied per call, never written
        self.launches.append((tuple(tensors), table, len(blocks)))


@functools.lru_cache(maxsize=64)
def plan(sizes, depth):
    """The :class:`Plan` of ``sizes`` (a tuple) with ``depth`` arrays per tensor (kept)."""
    return Plan(sizes, depth)


def launch_all(launcher, device, groups, arrays_of, scalars):
    """Launch a multi-tensor kernel over ``groups``, one launch per table.

    Args:
        groups: the per-variable tuples the reference takes.
        arrays_of: ``arrays_of(group)`` -> the group's arrays in the kernel's
            field order (None for an absent optional one); the first is the
            variable's weights (its size and dtype).
        scalars: ``scalars(scalar_type)`` -> the step-wide arguments after
            ``(table, chunk)`` in the signature.
    """
    xp = device.xp
    rows = [arrays_of(group) for group in groups]
    by_dtype = {}
    for row in rows:
        by_dtype.setdefault(row[0].dtype, []).append(row)
    launcher.check(*by_dtype)
    for dtype, same in by_dtype.items():
        # The arrays stay referenced until every launch is queued: a contiguous copy freed
        # earlier could be handed to the next copy before the kernel reads it.
        arrays = [[None if a is None else xp.ascontiguousarray(a) for a in row] for row in same]
        sizes, addresses = [], []
        for row in arrays:
            size = row[0].size
            for a in row:
                if a is not None and (a.size != size or a.dtype != dtype):
                    raise UnsupportedDtype("a multi-tensor update takes arrays of one dtype and size per variable.")
            sizes.append(size)
            addresses.append(tuple(0 if a is None else a.data.ptr for a in row))
        steps = plan(tuple(sizes), len(arrays[0]))
        arguments = (numpy.int32(steps.chunk),) + tuple(scalars(dtype.type))
        for table, blocks in filled_tables(steps, tuple(addresses)):
            launcher.run(dtype, (blocks,), (THREADS,), (table,) + arguments)
        del arrays


@functools.lru_cache(maxsize=64)
def filled_tables(steps, addresses):
    """``[(table, blocks)]``: the tables of the Plan ``steps`` with the arrays'
    ``addresses`` (per tensor, a tuple in field order) written in, kept: a
    training loop hands the same weights, slots and (from the pool, most
    often) gradients every step, so a step copies no table. Never written
    after this, so replica threads and captures may share them (CuPy copies
    a by-value argument's bytes at the launch)."""
    filled = []
    for tensors, template, blocks in steps.launches:
        table = template.copy()
        table["address"][0, :, :len(tensors)] = numpy.array([addresses[t] for t in tensors], numpy.uint64).T
        numpy.ndarray.setflags(table, write=False)
        filled.append((table, blocks))
    return filled
