"""TensorBoard (minikeras/callbacks/tensorboard.py): event files that
TensorBoard's own EventAccumulator reads back, and the JSON-lines fallback."""
import json
import warnings

import numpy
import pytest

from minikeras.callbacks import TensorBoard
from minikeras.callbacks import tensorboard as tensorboard_module


def _accumulator(folder):
    event_accumulator = pytest.importorskip(
        "tensorboard.backend.event_processing.event_accumulator",
        reason="the tensorboard package is not installed (pip install tensorboard; extra 'tensorboard')")
    accumulator = event_accumulator.EventAccumulator(str(folder), size_guidance={"scalars": 0, "histograms": 0,
                                                                                 "tensors": 0})
    accumulator.Reload()
    return accumulator


def _scalars(accumulator, tag):
    """``(step, value)`` of a scalar written as Keras 3 writes it: a 0-d
    summary-v2 tensor under the ``scalars`` plugin, read the way code that
    reads Keras's logs reads them (``Tensors`` and ``make_ndarray``)."""
    from tensorboard.util import tensor_util

    assert accumulator.summary_metadata[tag].plugin_data.plugin_name == "scalars"
    return [(event.step, float(tensor_util.make_ndarray(event.tensor_proto))) for event in accumulator.Tensors(tag)]


def test_epoch_scalars_learning_rate_and_validation_are_read_by_tensorboard(data, make_model, tmp_path):
    pytest.importorskip("tensorboard", reason="the tensorboard package is not installed")
    x, y = data
    history = make_model().fit(x, y, epochs=3, batch_size=16, validation_split=0.25, verbose=0,
                               callbacks=[TensorBoard(tmp_path)])
    train = _accumulator(tmp_path / "train")
    assert {"epoch_loss", "epoch_mae", "epoch_learning_rate"} <= set(train.Tags()["tensors"])
    assert not train.Tags()["scalars"]  # no summary-v1 simple values: Keras 3 writes none
    loss = _scalars(train, "epoch_loss")
    assert [step for step, _ in loss] == [0, 1, 2]
    numpy.testing.assert_allclose([value for _, value in loss], history.history["loss"], rtol=1e-6)
    numpy.testing.assert_allclose([value for _, value in _scalars(train, "epoch_learning_rate")], [0.01] * 3,
                                  rtol=1e-6)
    validation = _accumulator(tmp_path / "validation")
    numpy.testing.assert_allclose([value for _, value in _scalars(validation, "epoch_loss")],
                                  history.history["val_loss"], rtol=1e-6)
    # evaluation_<name>_vs_iterations at the optimizer step: 3 training batches per epoch
    assert [step for step, _ in _scalars(validation, "evaluation_loss_vs_iterations")] == [3, 6, 9]
    assert not any(train.summary_metadata[tag].plugin_data.plugin_name == "histograms"
                   for tag in train.Tags()["tensors"])


def test_batch_scalars_follow_update_freq(data, make_model, tmp_path):
    pytest.importorskip("tensorboard", reason="the tensorboard package is not installed")
    x, y = data
    make_model().fit(x, y, epochs=2, batch_size=16, verbose=0, callbacks=[TensorBoard(tmp_path, update_freq=3)])
    train = _accumulator(tmp_path / "train")
    assert [step for step, _ in _scalars(train, "batch_loss")] == [3, 6]  # 4 batches an epoch, global count
    assert "batch_mae" in train.Tags()["tensors"]


def test_weight_histograms_every_histogram_freq_epochs(data, make_model, tmp_path):
    pytest.importorskip("tensorboard", reason="the tensorboard package is not installed")
    x, y = data
    model = make_model()
    model.fit(x, y, epochs=3, batch_size=32, verbose=0, callbacks=[TensorBoard(tmp_path, histogram_freq=2)])
    train = _accumulator(tmp_path / "train")
    from tensorboard.util import tensor_util

    kernel = model.layers[0].weights[0]
    tag = f"{kernel.path}/histogram"
    histograms = [name for name in train.Tags()["tensors"]
                  if train.summary_metadata[name].plugin_data.plugin_name == "histograms"]
    assert len(histograms) == 4 and tag in histograms
    events = train.Tensors(tag)
    assert [event.step for event in events] == [0, 2]
    buckets = tensor_util.make_ndarray(events[-1].tensor_proto)  # (left edge, right edge, count) rows, as Keras 3
    values = kernel.numpy().ravel()
    assert buckets.shape == (30, 3) and buckets[:, 2].sum() == values.size
    assert buckets[0, 0] == pytest.approx(values.min()) and buckets[-1, 1] == pytest.approx(values.max())
    # What the TensorBoard server reads (its plugin accumulator converts the summaries to its plugins' tensors)
    from tensorboard.backend.event_processing import plugin_event_accumulator

    served = plugin_event_accumulator.EventAccumulator(str(tmp_path / "train"))
    served.Reload()
    assert tag in served.PluginTagToContent("histograms")
    assert {"epoch_loss", "epoch_mae", "epoch_learning_rate"} <= set(served.PluginTagToContent("scalars"))


def test_write_graph_writes_the_keras_model_json(data, make_model, tmp_path):
    pytest.importorskip("tensorboard", reason="the tensorboard package is not installed")
    x, y = data
    model = make_model()
    if not hasattr(model, "to_json"):
        pytest.fail("Model.to_json is missing")
    model.fit(x, y, epochs=1, verbose=0, callbacks=[TensorBoard(tmp_path)])
    train = _accumulator(tmp_path / "train")
    assert "keras" in train.Tags()["tensors"]
    tensor = train.Tensors("keras")[0].tensor_proto
    assert json.loads(tensor.string_val[0])["class_name"] == "Sequential"
    assert train.summary_metadata["keras"].plugin_data.plugin_name == "graph_keras_model"


def test_without_tensorboard_it_warns_once_and_writes_json_lines(data, make_model, tmp_path, monkeypatch):
    monkeypatch.setattr(tensorboard_module, "_tensorboard_writer_module", lambda: None)
    monkeypatch.setattr(tensorboard_module, "_warned_fallback", [])
    with pytest.warns(UserWarning, match="falls back to writing scalars as JSON lines"):
        callback = TensorBoard(tmp_path, histogram_freq=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        TensorBoard(tmp_path)  # said once per process
    x, y = data
    make_model().fit(x, y, epochs=2, batch_size=32, validation_split=0.5, verbose=0, callbacks=[callback])
    rows = [json.loads(line) for line in (tmp_path / "train" / "scalars.jsonl").read_text().splitlines()]
    assert [row["step"] for row in rows if "epoch_loss" in row] == [0, 1]
    assert any("epoch_learning_rate" in row for row in rows)
    assert (tmp_path / "validation" / "scalars.jsonl").exists()


def test_keras_arguments_are_checked(tmp_path):
    with pytest.raises(ValueError, match="update_freq"):
        TensorBoard(tmp_path, update_freq="sometimes")
    with pytest.raises(ValueError, match="Profiling"):
        TensorBoard(tmp_path, profile_batch=2)
    assert TensorBoard(tmp_path, update_freq="batch").update_freq == 1


def test_16_bit_scalars_are_logged():
    from minikeras import tensor

    for dtype in ("bfloat16", "float16"):
        assert tensorboard_module._as_float(tensor(numpy.float32(1.5)).astype(dtype)) == 1.5
    assert tensorboard_module._as_float(numpy.array([1.0, 2.0])) is None
