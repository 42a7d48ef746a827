"""minikeras's TensorBoard logs read as Keras 3's do (issue 37): the same
tags, the same summary plugins, the same tensor dtypes and shapes, side by
side with Keras's own callback (skipped without TensorFlow)."""
import numpy
import pytest


def _layout(folder):
    from tensorboard.backend.event_processing import event_accumulator
    from tensorboard.util import tensor_util

    accumulator = event_accumulator.EventAccumulator(str(folder), size_guidance={"tensors": 0})
    accumulator.Reload()
    layout = {}
    for tag in accumulator.Tags()["tensors"]:
        plugin = accumulator.summary_metadata[tag].plugin_data.plugin_name
        if plugin not in ("scalars", "histograms"):
            continue
        events = accumulator.Tensors(tag)
        first = tensor_util.make_ndarray(events[0].tensor_proto)
        layout[tag] = (plugin, first.dtype.name, first.shape, [event.step for event in events])
    return layout, accumulator


def test_logs_have_keras_3s_tags_plugins_and_tensors(tmp_path):
    pytest.importorskip("tensorboard", reason="the tensorboard package is not installed")
    keras = pytest.importorskip("keras", reason="Keras 3 (with TensorFlow) is the reference here")
    pytest.importorskip("tensorflow", reason="Keras's TensorBoard callback needs TensorFlow")
    import minikeras as mk

    x = numpy.random.default_rng(0).normal(size=(64, 4)).astype("float32")
    y = x.sum(axis=1, keepdims=True)

    def fit(library, folder):
        model = library.Sequential([library.layers.Input((4,)), library.layers.Dense(3, name="hidden"),
                                    library.layers.Dense(1, name="out")], name="stack")  # tags hold the name
        model.compile(library.optimizers.SGD(0.01), "mse", metrics=["mae"])
        model.fit(x, y, batch_size=16, epochs=2, validation_split=0.25, verbose=0,
                  callbacks=[library.callbacks.TensorBoard(str(folder), histogram_freq=1, update_freq="batch",
                                                           write_graph=False)])

    # update_freq="batch": with N > 1, Keras 3.15.1's record_if (on the global batch count) also drops the
    # epoch-level summaries of epochs whose last batch count is not a multiple of N; minikeras keeps them.
    fit(keras, tmp_path / "keras")
    fit(mk, tmp_path / "minikeras")
    for run in ("train", "validation"):
        expected, _ = _layout(tmp_path / "keras" / run)
        got, accumulator = _layout(tmp_path / "minikeras" / run)
        assert not accumulator.Tags()["scalars"] and not accumulator.Tags()["histograms"]  # no v1 summaries
        assert set(got) == set(expected), (run, sorted(set(got) ^ set(expected)))
        for tag, (plugin, dtype, shape, steps) in expected.items():
            assert got[tag][:3] == (plugin, dtype, shape), tag
            assert got[tag][3] == steps, tag
