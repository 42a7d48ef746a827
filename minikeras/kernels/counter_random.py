"""Counter-based random numbers whose stream offset lives on the device.

A CUDA graph bakes every kernel argument in (``device/graph.py``): a random
draw from a host-driven generator (CuPy's cuRAND states, NumPy on the
simulated GPU) would replay the capture's numbers at every replay, so
Dropout's mask would never change. A *counter-based* generator needs no
state but a key and a counter: the ``i``-th number is a pure function of
``(key, offset + i)``. Here the function is SplitMix64 (Steele, Lea and
Flood, 2014; the seeding generator of ``java.util.SplittableRandom`` and of
xoshiro): number ``c`` of the stream keyed ``key`` is

    mix(key + (c + 1) * 0x9E3779B97F4A7C15)

(``mix``: xor-shift 30, multiply, xor-shift 27, multiply, xor-shift 31), i.e.
exactly SplitMix64's output sequence seeded with ``key``. The kernel reads
the stream's ``offset`` from device memory and advances it by the numbers it
drew, on the device: a replayed graph draws new numbers every time, with no
host work.

The kernel, ``counter_random(out, key, state, count, normal)``:

- ``state`` is the stream's two ``uint64`` words on the device: ``state[0]``
  the offset, ``state[1]`` a ticket counter. Every block reads the offset,
  draws its share, then takes a ticket; the last block to finish (as in
  ``bias_gradient.py``) writes ``offset + drawn`` and resets the ticket, so
  no block can read an offset another block already advanced, in one launch;
- uniform ``[0, 1)``: float32 from the top 24 bits (``(z >> 40) * 2**-24``),
  float64 from the top 53 (``(z >> 11) * 2**-53``), exact in both;
- standard normal (``normal=1``): Box-Muller on two numbers per value,
  ``sqrt(-2 log u1) * cos(2 pi u2)`` with ``u1`` in ``(0, 1]`` and ``u2`` in
  ``[0, 1)`` at 53 bits, in double precision; it advances the offset by two
  per value.

The reference is the same arithmetic on ``device.xp`` (wrapping ``uint64``
arithmetic, elementwise): the CPU path and the simulated GPU's, whose
capture records its calls, so a replay reads and advances the recorded
offset as the CUDA kernel does. ``kernels/captured_random.py`` gives each
generator its stream while a step is captured.
"""
import numpy

from minikeras.kernels.kernel import Kernel, blocks_for, register

GOLDEN = 0x9E3779B97F4A7C15  # SplitMix64's increment (2**64 / golden ratio)
MIX_1, MIX_2 = 0xBF58476D1CE4E5B9, 0x94D049BB133111EB
MAX_BLOCKS = 4096  # a grid-stride loop covers larger draws

COUNTER_RANDOM_SOURCE = r"""
__device__ __forceinline__ unsigned long long splitmix64(unsigned long long key, unsigned long long counter) {
    unsigned long long z = key + (counter + 1ULL) * 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

extern "C" __global__ void counter_random(scalar_t* out, unsigned long long key, unsigned long long* state,
                                          long long count, int normal) {
    /* state[0]: the stream's offset; state[1]: blocks finished (the last one advances the offset). */
    __shared__ unsigned long long offset;
    __shared__ int last;
    if (threadIdx.x == 0) offset = *((volatile unsigned long long*)state);
    __syncthreads();
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count;
         i += (long long)blockDim.x * gridDim.x) {
        if (normal) {
            const unsigned long long a = splitmix64(key, offset + 2ULL * (unsigned long long)i);
            const unsigned long long b = splitmix64(key, offset + 2ULL * (unsigned long long)i + 1ULL);
            const double u1 = (double)((a >> 11) + 1ULL) * 1.1102230246251565e-16;  /* (0, 1] */
            const double u2 = (double)(b >> 11) * 1.1102230246251565e-16;  /* [0, 1) */
            out[i] = (scalar_t)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
        } else {
            const unsigned long long a = splitmix64(key, offset + (unsigned long long)i);
            if (sizeof(scalar_t) == 4) {
                out[i] = (scalar_t)((float)(a >> 40) * 5.9604644775390625e-08f);  /* 24 bits: exact */
            } else {
                out[i] = (scalar_t)((double)(a >> 11) * 1.1102230246251565e-16);  /* 53 bits: exact */
            }
        }
    }
    __threadfence();
    __syncthreads();  /* every thread of this block has read the offset (thread 0 read it for all) */
    if (threadIdx.x == 0) last = atomicAdd(state + 1, 1ULL) == (unsigned long long)gridDim.x - 1ULL;
    __syncthreads();
    if (last && threadIdx.x == 0) {  /* every block has read the offset: advance it, reset the tickets */
        state[0] = offset + (normal ? 2ULL : 1ULL) * (unsigned long long)count;
        state[1] = 0ULL;
    }
}
"""


def _u64(value):
    return numpy.uint64(value)


def splitmix64_reference(xp, key, state, count):
    """SplitMix64's numbers ``offset .. offset + count - 1`` of the stream
    keyed ``key`` (``state[0]`` is the offset, read as a device buffer), as
    a ``uint64`` array; wrapping arithmetic, as the kernel's."""
    z = xp.arange(1, count + 1, dtype=numpy.uint64)
    z += state[:1]  # a view: a graph's replay reads the offset then current
    z *= _u64(GOLDEN)
    z += _u64(key)
    z ^= z >> _u64(30)
    z *= _u64(MIX_1)
    z ^= z >> _u64(27)
    z *= _u64(MIX_2)
    z ^= z >> _u64(31)
    return z


def counter_random_reference(device, shape, dtype, key, state, normal):
    """``shape`` numbers of ``dtype`` (float32 or float64), uniform in
    ``[0, 1)`` or standard normal, from the stream ``(key, state)``; advances
    ``state[0]`` by the numbers drawn (module docstring)."""
    xp = device.xp
    dtype = numpy.dtype(dtype)
    size = int(numpy.prod(shape, dtype=numpy.int64))
    count = 2 * size if normal else size
    z = splitmix64_reference(xp, key, state, count)
    if normal:
        u1 = ((z[0::2] >> _u64(11)) + _u64(1)).astype(numpy.float64) * 2.0 ** -53
        u2 = (z[1::2] >> _u64(11)).astype(numpy.float64) * 2.0 ** -53
        values = xp.sqrt(-2.0 * xp.log(u1)) * xp.cos((2 * numpy.pi) * u2)
        values = values.astype(dtype)
    elif dtype == numpy.float32:
        values = (z >> _u64(40)).astype(numpy.float32) * numpy.float32(2.0 ** -24)
    else:
        values = ((z >> _u64(11)).astype(numpy.float64) * 2.0 ** -53).astype(dtype, copy=False)
    offset = state[:1]
    offset += _u64(count)  # in place on the device word (no copy back, as `state[:1] += n` would add)
    return values.reshape(shape)


def _counter_random_launch(launcher, device, shape, dtype, key, state, normal):
    launcher.check(dtype)
    out = device.xp.empty(shape, dtype)
    grid, block = blocks_for(out.size)
    grid = (min(grid[0], MAX_BLOCKS),)
    launcher.run(out.dtype, grid, block, (out, _u64(key), state, numpy.int64(out.size), numpy.int32(bool(normal))))
    return out


register(Kernel("counter_random", counter_random_reference, COUNTER_RANDOM_SOURCE, _counter_random_launch))
