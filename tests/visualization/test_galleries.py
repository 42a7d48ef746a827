"""The plot_* galleries as the Keras guides call them (needs matplotlib, a
test-only tool here; ``test_without_matplotlib.py`` covers its absence)."""
import numpy as np
import pytest

plt = pytest.importorskip("matplotlib.pyplot")

from minikeras import visualization  # noqa: E402


@pytest.fixture(autouse=True)
def no_figures_left():
    plt.close("all")
    yield
    plt.close("all")


def shown(figure=None):
    figure = figure or plt.gcf()
    return [axis for axis in figure.axes if axis.images]


def test_image_gallery_saved_to_a_file(tmp_path):
    images = np.random.default_rng(0).uniform(0, 1, (6, 32, 32, 3)).astype("float32")
    path = tmp_path / "gallery.png"
    visualization.plot_image_gallery(images, y_true=np.array([0, 1, 2, 0, 1, 2]), label_map={0: "a", 1: "b"},
                                     value_range=(0, 1), scale=1, path=str(path))
    saved = plt.imread(str(path))
    assert saved.ndim == 3 and saved.shape[0] > 50 and saved.shape[1] > 80  # 3 columns of 2 rows
    assert plt.get_fignums() == []  # closed after saving


def test_image_gallery_grid_holds_every_image():
    images = np.zeros((5, 8, 8, 3), "uint8") + np.arange(5, dtype="uint8")[:, None, None, None]
    visualization.plot_image_gallery(images, show=False)
    figure = plt.gcf()
    assert len(figure.axes) == 6  # 3 x 2 (Keras 3.15 floors the columns: 3 x 1, two images lost)
    assert [int(axis.images[0].get_array()[0, 0, 0]) for axis in shown()] == [0, 1, 2, 3, 4]
    plt.close("all")
    visualization.plot_image_gallery(images, rows=2, cols=4, show=False)  # more cells than images: blank
    assert len(plt.gcf().axes) == 8 and len(shown()) == 5


def test_image_gallery_titles_and_channels_first():
    images = np.zeros((2, 3, 10, 12), "uint8")
    visualization.plot_image_gallery(images, y_true=[0, 1], y_pred=[1, 5], label_map={0: "cat", 1: "dog"},
                                     data_format="channels_first", show=False)
    assert [axis.get_title() for axis in shown()] == ["Label: cat  Pred: dog", "Label: dog  Pred: Unknown"]
    assert shown()[0].images[0].get_array().shape == (10, 12, 3)


def test_image_gallery_refuses_bad_arguments():
    images = np.zeros((2, 8, 8, 3), "uint8")
    with pytest.raises(ValueError, match="either path"):
        visualization.plot_image_gallery(images, path="x.png", show=True)
    with pytest.raises(ValueError, match="label_map"):
        visualization.plot_image_gallery(images, y_true=[0, 1], show=False)
    with pytest.raises(ValueError, match="rank 4"):
        visualization.plot_image_gallery(images[0], show=False)


def test_bounding_box_gallery_as_the_object_detection_guide_calls_it(tmp_path):
    images = np.full((4, 96, 96, 3), 60, dtype="uint8")
    y_pred = {"boxes": np.array([[[10, 10, 50, 60]], [[20, 30, 80, 90]], [[0, 0, 40, 40]], [[5, 50, 90, 95]]]),
              "labels": np.array([[0], [1], [0], [-1]]), "confidences": np.array([[0.9], [0.4], [0.7], [0.0]])}
    visualization.plot_bounding_box_gallery(images, value_range=(0, 255), rows=2, cols=2, y_pred=y_pred, scale=2,
                                            font_scale=0.5, bounding_box_format="xyxy",
                                            class_mapping={0: "cat", 1: "dog"}, show=False)
    panels = [np.asarray(axis.images[0].get_array()) for axis in shown()]
    assert len(panels) == 4
    yellow = [(panel == (255, 235, 59)).all(axis=-1) for panel in panels]  # the prediction colour
    assert yellow[0][10, 10] and yellow[1][30, 20] and not yellow[3].any()  # label -1: nothing drawn
    plt.close("all")
    visualization.plot_bounding_box_gallery(images, "xyxy", y_true=y_pred, legend=True, path=str(tmp_path / "b.png"))
    assert (tmp_path / "b.png").stat().st_size > 0
    with pytest.raises(ValueError, match="legend=True or legend_handles"):
        visualization.plot_bounding_box_gallery(images, "xyxy", legend=True, legend_handles=[object()], show=False)


def test_segmentation_mask_gallery_puts_each_image_beside_its_masks():
    images = np.full((3, 16, 16, 3), 100, dtype="uint8")
    y_true = np.zeros((3, 16, 16, 1), "int32")
    y_true[:, 4:12, 4:12] = 1
    y_pred = np.roll(y_true, 2, axis=2)
    visualization.plot_segmentation_mask_gallery(images, num_classes=2, y_true=y_true, y_pred=y_pred,
                                                 ignore_index=0, show=False)
    figure = plt.gcf()
    assert len(figure.axes) == 9  # a row per image: image, true mask, predicted mask
    panels = [np.asarray(axis.images[0].get_array()) for axis in shown()]
    np.testing.assert_array_equal(panels[0], images[0])
    assert (panels[1][8, 5] != 100).any() and (panels[1][0, 0] == 100).all()
    assert (panels[2][8, 5] == 100).all() and (panels[2][8, 13] != 100).any()  # shifted by 2 columns


def test_galleries_of_unit_range_images_draw_in_0_255():
    # Keras 3.15 draws the boxes (uint8) and then rescales from value_range again: both wrap around.
    images = np.full((1, 20, 20, 3), 0.5, dtype="float32")
    boxes = {"boxes": np.array([[[2, 2, 15, 15]]]), "labels": np.array([[0]])}
    visualization.plot_bounding_box_gallery(images, "xyxy", y_true=boxes, value_range=(0, 1), show=False)
    (panel,) = [np.asarray(axis.images[0].get_array()) for axis in shown()]
    assert panel[10, 10].tolist() == [127, 127, 127] and panel[2, 2].tolist() == [0, 188, 212]
    plt.close("all")
    masks = np.zeros((1, 20, 20, 1), "int32")
    masks[0, :5] = 1
    visualization.plot_segmentation_mask_gallery(images, 2, value_range=(0, 1), y_true=masks, ignore_index=0,
                                                 color_mapping={0: (0, 0, 0), 1: (255, 0, 0)}, alpha=0.5,
                                                 show=False)
    image, drawn = [np.asarray(axis.images[0].get_array()) for axis in shown()]
    assert image[0, 0].tolist() == [127, 127, 127] and drawn[10, 10].tolist() == [127, 127, 127]
    assert drawn[0, 0].tolist() == [191, 63, 63]  # 127.5 / 2 + (255, 0, 0) / 2, truncated
