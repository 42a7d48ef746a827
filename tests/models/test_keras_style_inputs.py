"""Data shaped as Keras users hand it over: 1-D columns into ``Input((1,))``
(NumPy arrays, pandas Series, ``dict(df)``), written as TensorFlow's
"Basic regression" and "Load a pandas DataFrame" tutorials write it; errors
name the model's input, never an internal layer."""
import numpy
import pytest

import minikeras as keras
from minikeras import layers


def _auto_mpg(rows=200, seed=0):
    rng = numpy.random.default_rng(seed)
    horsepower = rng.uniform(50, 200, rows)
    weight = rng.uniform(1500, 5000, rows)
    mpg = 50 - 0.1 * horsepower - 0.004 * weight + rng.normal(0, 1, rows)
    return {"Horsepower": horsepower, "Weight": weight, "MPG": mpg}


def test_one_dimensional_feature_into_input_of_one_column_trains():
    # "Basic regression: Linear regression with one variable", with NumPy arrays.
    data = _auto_mpg()
    horsepower = data["Horsepower"]
    assert horsepower.shape == (200,)
    horsepower_normalizer = layers.Normalization(input_shape=[1], axis=None)
    horsepower_normalizer.adapt(horsepower)
    horsepower_model = keras.Sequential([horsepower_normalizer, layers.Dense(units=1)])
    assert horsepower_model.predict(horsepower[:10], verbose=0).shape == (10, 1)
    horsepower_model.compile(optimizer=keras.optimizers.Adam(learning_rate=0.1), loss="mean_absolute_error")
    history = horsepower_model.fit(horsepower, data["MPG"], epochs=30, verbose=0, validation_split=0.2)
    assert history.history["loss"][-1] < 0.5 * history.history["loss"][0]
    x = numpy.linspace(0.0, 250, 251)
    assert horsepower_model.predict(x, verbose=0).shape == (251, 1)
    assert tuple(horsepower_model(x[:4]).shape) == (4, 1)  # a direct call takes the column too


def test_pandas_series_into_a_sequential_model():
    pandas = pytest.importorskip("pandas")
    train_features = pandas.DataFrame(_auto_mpg())
    train_labels = train_features.pop("MPG")
    model = keras.Sequential([keras.Input((1,)), layers.Normalization(axis=None), layers.Dense(1)])
    model.layers[0].adapt(numpy.array(train_features["Horsepower"]))
    model.compile(optimizer=keras.optimizers.Adam(learning_rate=0.1), loss="mean_absolute_error")
    history = model.fit(train_features["Horsepower"], train_labels, epochs=20, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]
    assert model.predict(train_features["Horsepower"], verbose=0).shape == (200, 1)


def _dict_model(names):
    # "Load a pandas DataFrame: A DataFrame as a dictionary", with Keras 3 layers for stack_dict.
    inputs = {}
    for name in names:
        inputs[name] = keras.Input(shape=(1,), name=name, dtype="float32")
    x = layers.Concatenate()([inputs[name] for name in sorted(inputs)])
    x = layers.Dense(10, activation="relu")(x)
    x = layers.Dense(1)(x)
    return keras.Model(inputs, x)


def test_dict_of_dataframe_columns_into_named_inputs():
    pandas = pytest.importorskip("pandas")
    rng = numpy.random.default_rng(1)
    numeric_features = pandas.DataFrame({"age": rng.uniform(-1, 1, 256), "chol": rng.uniform(-1, 1, 256),
                                         "thalach": rng.uniform(-1, 1, 256)})
    target = (numeric_features["age"] + numeric_features["chol"] > 0).astype("float32")
    model = _dict_model(numeric_features.columns)
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss=keras.losses.BinaryCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    history = model.fit(dict(numeric_features), target, epochs=15, batch_size=32, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]
    assert history.history["accuracy"][-1] > 0.8
    assert model.predict(dict(numeric_features), verbose=0).shape == (256, 1)


def test_dict_of_one_dimensional_arrays_gives_the_same_as_columns():
    model = _dict_model(["a", "b"])
    a, b = numpy.arange(6, dtype="float32"), numpy.linspace(-1, 1, 6).astype("float32")
    as_columns = model.predict({"a": a[:, None], "b": b[:, None]}, verbose=0)
    numpy.testing.assert_allclose(model.predict({"a": a, "b": b}, verbose=0), as_columns, rtol=1e-6)
    numpy.testing.assert_allclose(model({"a": a, "b": b}).numpy(), as_columns, rtol=1e-6)


def test_an_extra_trailing_axis_of_one_is_dropped():
    inputs = keras.Input((3,), name="triple")
    model = keras.Model(inputs, layers.Dense(2)(inputs))
    x = numpy.random.default_rng(2).normal(size=(5, 3)).astype("float32")
    numpy.testing.assert_allclose(model.predict(x[..., None], verbose=0), model.predict(x, verbose=0), rtol=1e-6)


def test_shapes_that_do_not_fit_name_the_model_input():
    model = _dict_model(["age", "chol"])
    model.compile("adam", "mse")
    with pytest.raises(ValueError, match=r"Input 'chol' of model '.*' expects shape \(None, 1\), received \(8, 3\)"):
        model.fit({"age": numpy.zeros(8), "chol": numpy.zeros((8, 3))}, numpy.zeros(8), verbose=0)
    with pytest.raises(ValueError, match=r"expects inputs named \['age', 'chol'\]; missing \['chol'\]"):
        model.predict({"age": numpy.zeros(8)}, verbose=0)
    three = keras.Input((3,), name="three")
    with pytest.raises(ValueError, match=r"Input 'three' of model '.*' expects shape \(None, 3\), received \(8,\)"):
        keras.Model(three, layers.Dense(1)(three)).predict(numpy.zeros(8), verbose=0)
    sequential = keras.Sequential([keras.Input((2,)), layers.Dense(1)])
    with pytest.raises(ValueError, match=r"Input 0 of Sequential model .* is incompatible: expected shape "
                                         r"\(None, 2\), received \(8,\)"):
        sequential.predict(numpy.zeros(8), verbose=0)
