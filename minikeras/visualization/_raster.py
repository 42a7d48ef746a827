"""Drawing on uint8 images in place: rectangles as OpenCV draws them, and text.

Keras's `draw_bounding_boxes` calls ``cv2.rectangle(image, (x1, y1),
(x2, y2), color, thickness)``; this module draws the same pixels with NumPy,
so that boxes need no OpenCV. OpenCV draws a closed outline of thickness
``t > 1`` as one band per side, ``(t + 1) // 2`` pixels either side of the
side's line (both edge rows included) and exactly as long as the side, plus
a filled midpoint circle of that radius at every corner, which rounds the
outer corners. ``t <= 1`` is the one-pixel outline, ``t < 0`` the filled
rectangle. Everything is clipped to the image.
(``tests/visualization/test_raster.py`` checks this against ``cv2`` where
it is installed, on random rectangles and thicknesses.)
"""
import functools

import numpy

from minikeras.visualization import _font


def _fill(image, top, bottom, left, right, color):
    """Paints rows ``top..bottom`` and columns ``left..right`` (inclusive, clipped)."""
    height, width = image.shape[:2]
    top, left = max(top, 0), max(left, 0)
    bottom, right = min(bottom, height - 1), min(right, width - 1)
    if top <= bottom and left <= right:
        image[top:bottom + 1, left:right + 1] = color


@functools.lru_cache(maxsize=64)
def _disc_rows(radius):
    """``{row offset: half width}`` of a filled midpoint circle (OpenCV's ``Circle``)."""
    rows = {}
    error, dx, dy, plus, minus = 0, radius, 0, 1, 2 * radius - 1
    while dx >= dy:
        for offset, half in ((dy, dx), (dx, dy)):
            rows[offset] = max(rows.get(offset, -1), half)
        dy += 1
        error += plus
        plus += 2
        if error > 0:
            error -= minus
            dx -= 1
            minus -= 2
    return tuple(rows.items())


def _disc(image, x, y, radius, color):
    for offset, half in _disc_rows(radius):
        for row in {y - offset, y + offset}:
            _fill(image, row, row, x - half, x + half, color)


def rectangle(image, corner, opposite, color, thickness):
    """Draws a rectangle on ``image`` (H, W, C) in place, as ``cv2.rectangle`` does.

    Args:
        image: a writable uint8 array of shape ``(height, width, channels)``.
        corner, opposite: integer ``(x, y)`` of two opposite corners (any order,
            anywhere, even outside the image).
        color: uint8 array of ``channels`` values.
        thickness: line thickness; negative fills the rectangle.
    """
    (x1, y1), (x2, y2) = corner, opposite
    left, right, top, bottom = min(x1, x2), max(x1, x2), min(y1, y2), max(y1, y2)
    if thickness < 0:
        _fill(image, top, bottom, left, right, color)
        return
    if thickness <= 1:
        for row in (top, bottom):
            _fill(image, row, row, left, right, color)
        for column in (left, right):
            _fill(image, top, bottom, column, column, color)
        return
    radius = (thickness + 1) // 2
    for row in (top, bottom):
        if left != right:  # OpenCV draws no band for a side of length 0 (the corner circles cover it)
            _fill(image, row - radius, row + radius, left, right, color)
    for column in (left, right):
        if top != bottom:
            _fill(image, top, bottom, column - radius, column + radius, color)
    for x, y in ((left, top), (right, top), (right, bottom), (left, bottom)):
        _disc(image, x, y, radius, color)


def text(image, string, origin, color, font_scale, thickness):
    """Writes ``string`` on ``image`` in place, its baseline starting at ``origin`` ``(x, y)`` (as ``cv2.putText``).

    The glyphs are minikeras's bitmap font (`_font`), not OpenCV's Hershey font.
    """
    mask, baseline = _font.text_mask(string, font_scale, thickness)
    x, y = origin
    top = y - baseline
    height, width = image.shape[:2]
    rows = slice(max(top, 0), min(top + mask.shape[0], height))
    columns = slice(max(x, 0), min(x + mask.shape[1], width))
    if rows.start >= rows.stop or columns.start >= columns.stop:
        return
    visible = mask[rows.start - top:rows.stop - top, columns.start - x:columns.stop - x]
    image[rows, columns][visible] = color
