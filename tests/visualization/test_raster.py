"""The box rasterizer draws what ``cv2.rectangle`` draws (OpenCV is a
comparison tool only: the random comparison is skipped without it; the
hand-checked shapes below are OpenCV 4.14's and run everywhere)."""
import numpy as np
import pytest

from minikeras.visualization import _font, _raster

# cv2.rectangle(np.zeros((14, 14)), (4, 4), (9, 9), 1, thickness), printed.
OPENCV_SHAPES = {
    1: ["..............", "..............", "..............", "..............", "....######....",
        "....#....#....", "....#....#....", "....#....#....", "....#....#....", "....######....",
        "..............", "..............", "..............", ".............."],
    2: ["..............", "..............", "..............", "....######....", "...########...",
        "...########...", "...###..###...", "...###..###...", "...########...", "...########...",
        "....######....", "..............", "..............", ".............."],
    3: ["..............", "..............", "....######....", "...########...", "..##########..",
        "..##########..", "..##########..", "..##########..", "..##########..", "..##########..",
        "...########...", "....######....", "..............", ".............."],
    -1: ["..............", "..............", "..............", "..............", "....######....",
         "....######....", "....######....", "....######....", "....######....", "....######....",
         "..............", "..............", "..............", ".............."],
}


@pytest.mark.parametrize("thickness", sorted(OPENCV_SHAPES))
def test_rectangles_have_opencvs_shape(thickness):
    image = np.zeros((14, 14, 1), np.uint8)
    _raster.rectangle(image, (9, 9), (4, 4), np.array([1], np.uint8), thickness)  # corners in either order
    drawn = ["".join("#" if value else "." for value in row) for row in image[..., 0]]
    assert drawn == OPENCV_SHAPES[thickness]


def test_rectangles_are_clipped_to_the_image():
    image = np.zeros((6, 8, 3), np.uint8)
    _raster.rectangle(image, (-50, 2), (100, 400), np.array([9, 8, 7], np.uint8), 3)
    # Only the top side is inside: its band is rows 2 - 2 .. 2 + 2, across the whole width.
    assert (image[:5] == (9, 8, 7)).all() and not image[5].any()


def test_rectangles_equal_opencv_on_random_boxes():
    cv2 = pytest.importorskip("cv2")
    rng = np.random.default_rng(0)
    for _ in range(2000):
        height, width = (int(value) for value in rng.integers(1, 40, 2))
        corner = tuple(int(value) for value in (rng.integers(-20, width + 20), rng.integers(-20, height + 20)))
        opposite = tuple(int(value) for value in (rng.integers(-20, width + 20), rng.integers(-20, height + 20)))
        thickness = int(rng.choice([-1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 11, 16]))
        color = tuple(int(value) for value in rng.integers(1, 256, 3))
        expected = np.zeros((height, width, 3), np.uint8)
        cv2.rectangle(expected, corner, opposite, color, thickness)
        drawn = np.zeros_like(expected)
        _raster.rectangle(drawn, corner, opposite, np.array(color, np.uint8), thickness)
        np.testing.assert_array_equal(drawn, expected, err_msg=f"{corner} {opposite} thickness {thickness}")


def test_text_sits_on_its_baseline_and_grows_with_scale_and_thickness():
    image = np.zeros((40, 60, 3), np.uint8)
    _raster.text(image, "Hi", (5, 25), np.array([255, 0, 0], np.uint8), 1.0, 1)
    rows, columns = np.nonzero(image[..., 0])
    assert rows.min() == 25 - 21 and rows.max() == 24  # 21-pixel capitals ending on the baseline
    assert columns.min() == 5 and (image[..., 1:] == 0).all()
    small, _ = _font.text_mask("Hi", 0.5, 1)
    thick, _ = _font.text_mask("Hi", 0.5, 3)
    assert small.shape == (18, 22) and thick.shape == (20, 24) and thick.sum() > small.sum()
    mask, _ = _font.text_mask("é", 1.0)  # not in the font: a box, never an error
    assert mask.any()
    _raster.text(image, "far away", (500, -40), np.array([1, 1, 1], np.uint8), 1.0, 1)  # off the image: nothing
