"""LoRA on Dense and EinsumDense (layers/core/lora.py): enable_lora, training only
the adapters, refusals, and Keras's file layout both ways. (Forward parity
with Keras is in test_layer_more_blocks.py's cases.)"""
import numpy
import pytest

import minikeras as mk
from minikeras import layers
from tests.layers.keras_more_blocks_cases import LORA_MODEL, lora_model

@pytest.mark.parametrize("make", [lambda: layers.Dense(3), lambda: layers.EinsumDense("ab,bc->ac", 3, bias_axes="c")])
def test_enable_lora_freezes_the_kernel_and_trains_the_adapters(make):
    x = numpy.random.default_rng(4).normal(size=(6, 5)).astype("float32")
    layer = make()
    before = layer(x).numpy()
    kernel = layer.kernel.numpy()
    layer.enable_lora(2)
    numpy.testing.assert_array_equal(layer(x).numpy(), before)  # b starts at zero: nothing changes yet
    assert [w.name.split("/")[-1] for w in layer.trainable_weights] == ["bias", "lora_kernel_a", "lora_kernel_b"]
    assert [w.name.split("/")[-1] for w in layer.weights] == ["kernel", "bias", "lora_kernel_a", "lora_kernel_b"]
    model = mk.Sequential([layer])
    model.compile(optimizer=mk.optimizers.SGD(0.1), loss="mse")
    model.fit(x, numpy.ones((6, 3), "float32"), epochs=2, verbose=0)
    numpy.testing.assert_array_equal(layer._kernel.numpy(), kernel)  # the stored kernel never moves
    a, b = layer.lora_kernel_a.numpy(), layer.lora_kernel_b.numpy()
    assert numpy.abs(b).max() > 0
    numpy.testing.assert_allclose(layer.kernel.numpy(), kernel + a @ b, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="already enabled"):
        layer.enable_lora(2)


def test_enable_lora_refuses_clearly():
    with pytest.raises(ValueError, match="isn't yet built"):
        layers.Dense(3).enable_lora(2)
    constrained = layers.EinsumDense("ab,bc->ac", 3, kernel_constraint="non_neg")
    constrained(numpy.ones((1, 2), "float32"))
    with pytest.raises(ValueError, match="kernel constraints"):
        constrained.enable_lora(2)
    built = layers.Dense(2)
    built(numpy.ones((1, 2), "float32"))
    with pytest.raises(ValueError, match="rank must be a positive int"):
        built.enable_lora(0)
    with pytest.raises(ValueError, match="lora_rank"):
        layers.EinsumDense("ab,bc->ac", 3, lora_rank=-1)


@pytest.mark.filterwarnings("ignore:No training configuration")
def test_lora_models_read_and_write_keras_files(tmp_path):
    """Keras writes the merged kernel in the kernel's place and no adapters;
    minikeras reads its files (adapters zeroed, same outputs) and writes the same layout."""
    import h5py

    with numpy.load(LORA_MODEL + ".npz") as data:
        x, expected = data["x"], data["y"]
    loaded = mk.models.load_model(LORA_MODEL + ".keras")
    numpy.testing.assert_allclose(loaded(x).numpy(), expected, rtol=1e-5, atol=1e-6)
    assert all(numpy.abs(w.numpy()).max() == 0 for w in loaded.weights if "lora_kernel_b" in w.name)
    model = lora_model(mk)
    model.load_weights(LORA_MODEL + ".weights.h5")
    numpy.testing.assert_allclose(model(x).numpy(), expected, rtol=1e-5, atol=1e-6)
    model.save_weights(tmp_path / "ours.weights.h5")
    with h5py.File(LORA_MODEL + ".weights.h5") as theirs, h5py.File(tmp_path / "ours.weights.h5") as ours:
        for name in ("layers/dense/vars", "layers/einsum_dense/vars"):
            assert sorted(ours[name].keys()) == sorted(theirs[name].keys()) == ["0", "1"]
            numpy.testing.assert_allclose(ours[name]["0"][()], theirs[name]["0"][()], rtol=1e-6, atol=1e-7)
