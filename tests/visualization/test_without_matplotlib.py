"""Without matplotlib, the draw_* helpers work and the plot_* galleries say
``pip install matplotlib`` (a fresh interpreter that cannot import it)."""
import os
import subprocess
import sys
import textwrap

REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SCRIPT = textwrap.dedent("""
    import sys
    sys.modules["matplotlib"] = sys.modules["matplotlib.pyplot"] = None  # importing them now fails
    sys.modules["cv2"] = None  # and OpenCV is not needed either
    import numpy as np
    import minikeras as mk

    images = np.zeros((1, 32, 32, 3), "uint8")
    boxes = {"boxes": np.array([[[4, 4, 20, 20]]]), "labels": np.array([[0]])}
    assert mk.visualization.draw_bounding_boxes(images, boxes, "xyxy", class_mapping={0: "a"}).any()
    masks = np.ones((1, 32, 32, 1), "int32")
    assert mk.visualization.draw_segmentation_masks(images, masks, num_classes=2).any()
    calls = {"plot_image_gallery": (images,), "plot_bounding_box_gallery": (images, "xyxy"),
             "plot_segmentation_mask_gallery": (images, 2)}
    for name, arguments in calls.items():
        try:
            getattr(mk.visualization, name)(*arguments)
        except ImportError as error:
            assert "pip install matplotlib" in str(error) and "'visualization' extra" in str(error), error
            assert name in str(error), error
        else:
            raise AssertionError(f"{name} ran without matplotlib")
    print("ok")
""")


def test_drawing_works_and_galleries_name_the_install_command_without_matplotlib():
    environment = {**os.environ, "PYTHONPATH": REPOSITORY + os.pathsep + os.environ.get("PYTHONPATH", "")}
    result = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=environment,
                            cwd=REPOSITORY, timeout=300)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr[-3000:]
