"""Feature extractors from an application's named layers, written as the
TensorFlow image-segmentation tutorial and keras.io's transfer-learning guide
write them (``base_model.get_layer(name).output``, ``base_model.input``)."""
import numpy

import minikeras as keras
from minikeras import applications, layers


def test_mobilenet_v2_down_stack_of_the_segmentation_tutorial():
    base_model = applications.MobileNetV2(input_shape=[128, 128, 3], include_top=False, weights=None)
    # Use the activations of these layers
    layer_names = [
        "block_1_expand_relu",   # 64x64
        "block_3_expand_relu",   # 32x32
        "block_6_expand_relu",   # 16x16
        "block_13_expand_relu",  # 8x8
        "block_16_project",      # 4x4
    ]
    base_model_outputs = [base_model.get_layer(name).output for name in layer_names]
    # Create the feature extraction model
    down_stack = keras.Model(inputs=base_model.input, outputs=base_model_outputs)
    down_stack.trainable = False

    # Keras 3.15's shapes for these layers of MobileNetV2 at 128x128.
    assert [tuple(t.shape) for t in down_stack.outputs] == [
        (None, 64, 64, 96), (None, 32, 32, 144), (None, 16, 16, 192), (None, 8, 8, 576), (None, 4, 4, 320)]
    image = numpy.random.default_rng(0).uniform(-1, 1, (2, 128, 128, 3)).astype("float32")
    skips = down_stack(image, training=False)
    # The last skip is the real activation the base model goes on from: its
    # three remaining layers turn it into the base model's own output.
    head = skips[-1]
    for name in ("Conv_1", "Conv_1_bn", "out_relu"):
        head = base_model.get_layer(name)(head, training=False)
    numpy.testing.assert_allclose(head.numpy(), base_model(image, training=False).numpy(), rtol=1e-4, atol=1e-5)
    assert down_stack.trainable_weights == [] and len(down_stack.weights) > 0

    # A head trained on top of the frozen extractor (the transfer-learning guide).
    inputs = keras.Input(shape=[128, 128, 3])
    features = down_stack(inputs, training=False)[-1]
    outputs = layers.Dense(1)(layers.GlobalAveragePooling2D()(features))
    model = keras.Model(inputs, outputs)
    frozen = [w.numpy().copy() for w in down_stack.weights]
    model.compile(optimizer="adam", loss="mse")
    model.fit(image, numpy.ones((2, 1), "float32"), epochs=1, verbose=0)
    assert all(numpy.array_equal(w.numpy(), before) for w, before in zip(down_stack.weights, frozen))
    assert len(model.trainable_weights) == 2
