"""keras.distribution: meshes, layouts, and DataParallel making every model's
fit data-parallel through MirroredModel (issue 37)."""
import threading

import numpy
import pytest

import minikeras as mk
from minikeras import config, layers
from minikeras.distribution import (
    DataParallel, DeviceMesh, LayoutMap, ModelParallel, TensorLayout, distribute_tensor, distribution,
    get_device_count, initialize, list_devices, set_distribution,
)


@pytest.fixture
def two_cpus(fresh_devices):
    cpu = config.list_physical_devices("CPU")[0]
    config.set_visible_devices([], "GPU")  # the CPUs also in the simulated-GPU run
    config.set_logical_device_configuration(cpu, [config.LogicalDeviceConfiguration()] * 2)
    yield ["cpu:0", "cpu:1"]
    set_distribution(None)


def test_keras_names():
    import minikeras.distribution as module

    assert set(module.__all__) == {"DataParallel", "DeviceMesh", "LayoutMap", "ModelParallel", "TensorLayout",
                                   "distribute_tensor", "distribution", "get_device_count", "initialize",
                                   "list_devices", "set_distribution"}
    assert mk.distribution is module


def test_list_devices_counts_logical_devices(two_cpus):
    assert list_devices("cpu") == ["cpu:0", "cpu:1"] == list_devices("CPU")
    assert list_devices() == ["cpu:0", "cpu:1"] and get_device_count() == 2
    assert list_devices("gpu") == [] and list_devices("tpu") == []
    with pytest.raises(ValueError, match="device_type must be one of"):
        list_devices("npu")


def test_device_mesh_and_layouts(two_cpus):
    mesh = DeviceMesh((2,), ["batch"], devices=two_cpus)
    assert mesh.shape == (2,) and mesh.axis_names == ["batch"] and list(mesh.devices) == two_cpus
    assert repr(mesh) == "<DeviceMesh shape=(2,), axis_names=['batch']>"
    with pytest.raises(ValueError, match="holds 4 devices, received 2"):
        DeviceMesh((2, 2), ["batch", "model"], devices=two_cpus)
    with pytest.raises(ValueError, match="same length"):
        DeviceMesh((2,), ["batch", "model"])
    with pytest.raises(ValueError, match="cannot be empty"):
        DeviceMesh((), [])
    with pytest.raises(RuntimeError, match="gpu:3"):
        DeviceMesh((1,), ["batch"], devices=["gpu:3"])
    layout = TensorLayout(["batch", None], mesh)
    assert layout.axes == ("batch", None) and layout.device_mesh is mesh
    with pytest.raises(ValueError, match=r"axes \['model'\] are not axes of the mesh"):
        TensorLayout(["model"], mesh)
    late = TensorLayout([None, "batch"])
    late.device_mesh = mesh
    with pytest.raises(ValueError, match="cannot be replaced"):
        late.device_mesh = mesh


def test_layout_map_matches_paths_by_regular_expression(two_cpus):
    mesh = DeviceMesh((1, 2), ["batch", "model"], devices=two_cpus)
    layouts = LayoutMap(mesh)
    layouts["dense.*kernel"] = (None, "model")
    layouts["dense.*bias"] = ("model",)
    assert layouts["dense_1/kernel"].axes == (None, "model") and layouts["dense_1/kernel"].device_mesh is mesh
    assert layouts["conv/kernel"] is None and len(layouts) == 2
    layouts[".*kernel"] = (None, None)
    with pytest.raises(ValueError, match="matches several keys"):
        layouts["dense_1/kernel"]
    with pytest.raises(ValueError, match="has a layout already"):
        layouts["dense.*bias"] = (None,)
    del layouts[".*kernel"]
    assert list(layouts) == ["dense.*kernel", "dense.*bias"]


def test_data_parallel_layouts(two_cpus):
    parallel = DataParallel(devices=two_cpus)
    assert parallel.batch_dim_name == "batch" and parallel.num_model_replicas == 2
    assert parallel.get_data_layout((16, 4)).axes == ("batch", None)
    assert parallel.get_variable_layout(mk.Variable(numpy.zeros((3, 2)))).axes == (None, None)
    assert parallel.get_tensor_layout("dense/output") is None
    assert DataParallel().device_mesh.devices.tolist() == two_cpus
    mesh = DeviceMesh((2,), ["data"], devices=two_cpus)
    assert DataParallel(device_mesh=mesh).batch_dim_name == "data"
    with pytest.raises(ValueError, match="expects device_mesh to be a DeviceMesh"):
        DataParallel(device_mesh="cpu:0")
    with pytest.raises(ValueError, match="not both"):
        DataParallel(device_mesh=mesh, devices=two_cpus)


def _fit(x, y):
    mk.random.seed(3)
    model = mk.Sequential([layers.Input((4,)), layers.Dense(8, activation="relu"),
                           layers.BatchNormalization(synchronized=True), layers.Dense(1)])
    model.compile(mk.optimizers.Adam(0.01), "mse", metrics=["mae"])
    history = model.fit(x, y, batch_size=16, epochs=3, shuffle=False, verbose=0)
    return model, history.history


def test_set_distribution_makes_fit_data_parallel(two_cpus):
    """keras.io's distribution guide, shrunk: set DataParallel, then build,
    compile and fit as usual. The numbers are one device's (synchronized
    BatchNorm), the work is split over both devices."""
    rng = numpy.random.default_rng(0)
    x = rng.normal(size=(96, 4)).astype("float32")
    y = (x @ numpy.array([[1.0], [-2.0], [0.5], [0.0]], "float32")).astype("float32")
    single, single_history = _fit(x, y)
    set_distribution(DataParallel(devices=two_cpus))
    assert isinstance(distribution(), DataParallel)
    model, history = _fit(x, y)
    runner = distribution().runner_for(model)
    assert isinstance(runner, mk.MirroredModel) and [d.name for d in runner.devices] == two_cpus
    assert {w.device.name for w in runner.replicas[1].weights} == {"cpu:1"}
    assert [replica.optimizer.iterations for replica in runner.replicas] == [18, 18]
    for got, want in zip(model.get_weights(), single.get_weights()):
        numpy.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)
    for key in single_history:
        numpy.testing.assert_allclose(history[key], single_history[key], rtol=2e-5)
    numpy.testing.assert_allclose(model.evaluate(x, y, verbose=0), single.evaluate(x, y, verbose=0), rtol=2e-5)
    numpy.testing.assert_allclose(model.predict(x, verbose=0), single.predict(x, verbose=0), rtol=2e-5, atol=1e-6)
    logs = model.train_on_batch(x[:16], y[:16], return_dict=True)
    assert sorted(logs) == ["loss", "mae"] and runner.replicas[1].optimizer.iterations == 19
    set_distribution(None)
    model.fit(x, y, batch_size=16, epochs=1, verbose=0)  # back to one device
    assert runner.replicas[1].optimizer.iterations == 19 and model.optimizer.iterations == 25


def test_a_custom_train_step_runs_on_every_replica(two_cpus):
    calls = []

    class Counting(mk.Model):
        def train_step(self, data):
            calls.append(int(data[0].shape[0]))
            return super().train_step(data)

    set_distribution(DataParallel(devices=two_cpus))
    inputs = layers.Input((3,))
    model = Counting(inputs, layers.Dense(1)(inputs))
    model.compile("sgd", "mse")
    model.fit(numpy.ones((20, 3), "float32"), numpy.ones((20, 1), "float32"), batch_size=10, verbose=0)
    assert calls == [5, 5, 5, 5]


def test_scope_is_this_threads_only(two_cpus):
    parallel = DataParallel(devices=two_cpus)
    seen = []
    with parallel.scope():
        assert distribution() is parallel
        thread = threading.Thread(target=lambda: seen.append(distribution()))
        thread.start()
        thread.join()
    assert distribution() is None and seen == [None]


def test_model_parallel_is_refused_clearly(two_cpus):
    mesh = DeviceMesh((1, 2), ["batch", "model"], devices=two_cpus)
    layouts = LayoutMap(mesh)
    layouts["dense.*kernel"] = (None, "model")
    parallel = ModelParallel(layout_map=layouts, batch_dim_name="batch")
    assert parallel.num_model_replicas == 1
    variable = mk.layers.Dense(4, name="dense_x")
    variable.build((None, 3))
    assert parallel.get_variable_layout(variable.kernel).axes == (None, "model")
    with pytest.raises(NotImplementedError, match="does not shard variables"):
        set_distribution(parallel)
    with pytest.raises(NotImplementedError, match="DataParallel"):
        with parallel.scope():
            pass
    with pytest.raises(ValueError, match="needs a layout_map"):
        ModelParallel()
    with pytest.raises(TypeError, match="expects a Distribution or None"):
        set_distribution("data_parallel")
    assert distribution() is None


def test_distribute_tensor_and_initialize(two_cpus):
    tensor = mk.ops.ones((4, 2))
    assert distribute_tensor(tensor, TensorLayout(["batch", None])) is tensor
    with pytest.raises(ValueError, match="the layout has 1 axes"):
        distribute_tensor(tensor, TensorLayout(["batch"]))
    initialize()  # one process: nothing to join
    with pytest.raises(RuntimeError, match="not started by an MPI launcher; run the script with mpiexec -n 4"):
        initialize(num_processes=4, process_id=1)
