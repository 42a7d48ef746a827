"""The element passes of Winograd F(2x2, 3x3) (ops/nn/winograd.py), planned once per scratch block.

A convolution runs the same few dozen NumPy passes on every block of
samples, on the same scratch arrays. Each :class:`Block` therefore builds
its views and the list of ufunc calls of each transform once (a *plan*:
``(ufunc, inputs, out)`` triples), and every block of samples after that
only runs the list: measured ~45 us of Python per block of forward and
~75 us of backward otherwise, 8% of a CIFAR convolution's time.

Layouts (s: sample, t/u: tile row/column, p: parity, c/k: channels):

- ``spread`` E[pc, s, pr, t, u, c] = x[s, 2t+pr, 2u+pc, c], zero outside x
  (the padding, and the rows and columns an odd output rounds up to);
- ``columns`` Q[j, s, pr, t, u, c]: E B (each tile's columns transformed);
- ``transformed`` V[i, j, (s, t, u), c] = B^T E B, the GEMMs' left side;
- ``products`` M[i, j, (s, t, u), k] (dM in backward);
- ``done`` Z[a, b, s, t, u, k] = A^T M A, output (2t+a, 2u+b) of each tile.
"""
import numpy

# Per parity p of the padded input, the 4 positions j' of a tile row are
# (parity j' % 2, tile t + j' // 2): in E, slices [:-1] ("a") and [1:] ("b").


class Tiling:
    """How one convolution's output is cut into 2x2 tiles.

    Attributes:
        rows, cols: tiles down and across (the output rounded up to even).
        row_spans, col_spans: per parity p (0, 1) of the padded input,
            ``(first tile, end tile, first input index)`` of the tiles whose
            position ``2t + p`` lies inside the unpadded input, or None.
        out_rows, out_cols: per parity a (0, 1) of the output, how many
            tiles have their row (column) ``2t + a`` inside the output.
    """

    def __init__(self, geometry):
        self.geometry = geometry
        self.rows, self.cols = -(-geometry.out_h // 2), -(-geometry.out_w // 2)
        (top, _), (left, _) = geometry.pads
        self.row_spans = [_span(geometry.height, top, parity, self.rows) for parity in (0, 1)]
        self.col_spans = [_span(geometry.width, left, parity, self.cols) for parity in (0, 1)]
        self.out_rows = [(geometry.out_h - parity + 1) // 2 for parity in (0, 1)]
        self.out_cols = [(geometry.out_w - parity + 1) // 2 for parity in (0, 1)]
        self.key = (geometry.height, geometry.width, tuple(geometry.pads), geometry.out_h, geometry.out_w)

    def parities(self):
        """``(row parity, col parity, input rows slice, input cols slice, tile rows, tile cols)``
        of the four de-interleaved parts of the input that hold data."""
        parts = []
        for row_parity, row_span in enumerate(self.row_spans):
            for col_parity, col_span in enumerate(self.col_spans):
                if row_span is None or col_span is None:
                    continue
                (t0, t1, r0), (u0, u1, c0) = row_span, col_span
                parts.append((row_parity, col_parity, slice(r0, r0 + 2 * (t1 - t0) - 1, 2),
                              slice(c0, c0 + 2 * (u1 - u0) - 1, 2), slice(t0, t1), slice(u0, u1)))
        return parts


def _span(size, pad, parity, tiles):
    """``(first, end, source)``: the tiles t in [0, tiles] whose padded position
    ``2t + parity`` is input index ``2t + parity - pad`` in [0, size); None if none."""
    first = max(0, -((parity - pad) // 2))
    last = min(tiles, (size - 1 + pad - parity) // 2)
    if last < first:
        return None
    return first, last + 1, 2 * first + parity - pad


def run(passes):
    """Run a plan: ``ufunc(*inputs, out=out)`` for each of its triples."""
    for ufunc, inputs, out in passes:
        ufunc(*inputs, out=out)


class Block:
    """One thread's scratch arrays and plans for blocks of ``samples`` samples."""

    def __init__(self, tiling, samples, channels, filters, dtype):
        self.tiling, self.samples, self.channels, self.filters, self.dtype = tiling, samples, channels, filters, dtype
        rows, cols = tiling.rows, tiling.cols
        self.tiles = rows * cols * samples
        self.spread = numpy.zeros((2, samples, 2, rows + 1, cols + 1, channels), dtype)
        self.columns = numpy.empty((4, samples, 2, rows + 1, cols, channels), dtype)
        self.transformed = numpy.empty((16, self.tiles, channels), dtype)
        # dM's stored corners are written only inside the output: the rest stays zero.
        self.products = numpy.zeros((16, self.tiles, filters), dtype)
        self.spread_parts = [(rp, cp, rows_in, cols_in, self.spread[cp, :, rp, t, u])
                             for rp, cp, rows_in, cols_in, t, u in tiling.parities()]
        self.input_passes = self._input_passes(self.spread, self.columns, self.transformed)
        self._forward = self._backward = None

    def _input_passes(self, spread, columns, transformed):
        """V = B^T E B: the columns of every tile (d B), then its rows."""
        rows, cols = self.tiling.rows, self.tiling.cols
        even_a, even_b = spread[0, ..., :cols, :], spread[0, ..., 1:, :]
        odd_a, odd_b = spread[1, ..., :cols, :], spread[1, ..., 1:, :]
        out = transformed.reshape(4, 4, self.samples, rows, cols, self.channels)
        passes = _b_transpose(even_a, odd_a, even_b, odd_b, columns)
        even_a, even_b = columns[:, :, 0, :rows], columns[:, :, 0, 1:]
        odd_a, odd_b = columns[:, :, 1, :rows], columns[:, :, 1, 1:]
        return passes + _b_transpose(even_a, odd_a, even_b, odd_b, out)

    def forward_plan(self):
        """``(passes, parts)``: A^T M A over the GEMMs' results, and per output
        parity (a, b) the ``(a, b, Z view)`` to interleave into the output."""
        if self._forward is None:
            tiles, filters = self.tiles, self.filters
            m = self.products.reshape(4, 4, tiles, filters)
            rows_done = numpy.empty((2, 4, tiles, filters), self.dtype)
            done = numpy.empty((2, 2, tiles, filters), self.dtype)
            passes = _a_transpose(m, rows_done) + _a_transpose(rows_done.transpose(1, 0, 2, 3), done.transpose(1, 0, 2, 3))
            done = done.reshape(2, 2, self.samples, self.tiling.rows, self.tiling.cols, filters)
            parts = [(a, b, done[a, b, :, :self.tiling.out_rows[a], :self.tiling.out_cols[b]]) for a in (0, 1)
                     for b in (0, 1)]
            self._forward = passes, parts
        return self._forward

    def backward_plan(self):
        """A dict of backward's views and plans (made on first use):

        ``corners``: per output parity (a, b), the dM corner view that
        takes that quarter of the output's gradient; ``gradient``: the
        passes completing dM from the corners; ``adjoint``: the adjoint of
        the input transform, from dV (in ``transformed``) to ``grad_spread``;
        ``grad_parts``: the grad_spread views of input_parts' parts."""
        if self._backward is None:
            self._backward = self._backward_plan()
        return self._backward

    def _backward_plan(self):
        tiling, samples, channels = self.tiling, self.samples, self.channels
        rows, cols = tiling.rows, tiling.cols
        slots = self.products.reshape(4, 4, samples, rows, cols, self.filters)
        corners = [(a, b, slots[3 * a, 3 * b, :, :tiling.out_rows[a], :tiling.out_cols[b]]) for a in (0, 1)
                   for b in (0, 1)]
        # dM = A dY A^T from the corners (module top of winograd.py: A's last row negated).
        flat = self.products.reshape(4, 4, self.tiles, self.filters)
        gradient = []
        for i in (0, 3):
            gradient += [(numpy.add, (flat[i, 0], flat[i, 3]), flat[i, 1]),
                         (numpy.subtract, (flat[i, 0], flat[i, 3]), flat[i, 2])]
        gradient += [(numpy.add, (flat[0], flat[3]), flat[1]), (numpy.subtract, (flat[0], flat[3]), flat[2])]
        # The input transform's adjoint: rows, then columns, each adding the overlapping tiles.
        dv = self.transformed.reshape(4, 4, samples, rows, cols, channels)
        carried = numpy.empty((4, samples, rows, cols, channels), self.dtype)
        adjoint = _b_adjoint(dv, carried, self.columns[:, :, 0], self.columns[:, :, 1], axis=2)
        grad_spread = numpy.empty((2, samples, 2, rows + 1, cols + 1, channels), self.dtype)
        carried_columns = numpy.empty((samples, 2, rows + 1, cols, channels), self.dtype)
        adjoint += _b_adjoint(self.columns, carried_columns, grad_spread[0], grad_spread[1], axis=3)
        grad_parts = [grad_spread[cp, :, rp, t, u] for rp, cp, _, _, t, u in tiling.parities()]
        ones = numpy.ones(self.tiles, self.dtype)
        return {"corners": corners, "gradient": gradient, "adjoint": adjoint, "grad_parts": grad_parts,
                "ones": ones, "bias_component": self.products[5]}


def _b_transpose(a0, a1, b0, b1, out):
    """The four passes of B^T along one axis, B^T = [[1,0,-1,0],[0,1,1,0],[0,-1,1,0],[0,1,0,-1]],
    whose inputs d0..d3 are ``a0, a1, b0, b1``; results into out[0..3]."""
    return [(numpy.subtract, (a0, b0), out[0]), (numpy.add, (a1, b0), out[1]),
            (numpy.subtract, (b0, a1), out[2]), (numpy.subtract, (a1, b1), out[3])]


def _a_transpose(m, out):
    """The passes of A^T = [[1,1,1,0],[0,1,-1,-1]] along ``m``'s first axis, into out[0..1]."""
    return [(numpy.add, (m[0], m[1]), out[0]), (numpy.add, (out[0], m[2]), out[0]),
            (numpy.subtract, (m[1], m[2]), out[1]), (numpy.subtract, (out[1], m[3]), out[1])]


def _b_adjoint(dv, carried, even, odd, axis):
    """The adjoint of _b_transpose along ``axis`` of ``even``/``odd`` (the
    tile axis, one longer than dv's: neighbouring tiles overlap by two):
    even[t] = dV0[t] + (dV1 + dV2 - dV0)[t - 1], odd[t] = (dV1 - dV2 + dV3)[t] - dV3[t - 1].
    ``dv[1]`` is overwritten."""
    passes = [(numpy.add, (dv[1], dv[2]), carried), (numpy.subtract, (carried, dv[0]), carried),
              (numpy.subtract, (dv[1], dv[2]), dv[1]), (numpy.add, (dv[1], dv[3]), dv[1])]
    return passes + _shift_add(even, dv[0], carried, numpy.add, axis) + _shift_add(odd, dv[1], dv[3],
                                                                                  numpy.subtract, axis)


def _shift_add(target, here, previous, combine, axis):
    """Passes for ``target[k] = combine(here[k], previous[k - 1])`` along ``axis``,
    k in [0, n] (n = here's length there; a missing term counts as zero)."""
    length = here.shape[axis]

    def at(array, index):
        key = [slice(None)] * array.ndim
        key[axis] = index
        return array[tuple(key)]

    passes = [(numpy.positive, (at(here, 0),), at(target, 0))]
    if length > 1:
        passes.append((combine, (at(here, slice(1, length)), at(previous, slice(0, length - 1))),
                       at(target, slice(1, length))))
    last = numpy.positive if combine is numpy.add else numpy.negative
    return passes + [(last, (at(previous, length - 1),), at(target, length))]
