"""FeatureSpace: output widths as Keras 3.15's own tests state them, values against NumPy
references built from the same preprocessing layers, adapt forms, errors, fit."""

import numpy as np
import pytest

import fkeras

FS = fkeras.utils.FeatureSpace


def _data(include_strings=True):
    data = {"float_1": np.arange(10) / 10, "float_2": np.arange(10) / 10,
            "float_3": np.arange(10) / 10, "int_1": np.arange(10), "int_2": np.arange(10),
            "int_3": np.arange(10)}
    if include_strings:
        data["string_1"] = np.array([str(i) for i in range(10)])
        data["string_2"] = np.array([str(i) for i in range(10)])
    return data


ALL = {"float_1": "float", "float_2": "float_normalized", "float_3": "float_discretized",
       "string_1": "string_categorical", "string_2": "string_hashed",
       "int_1": "integer_categorical", "int_2": "integer_hashed", "int_3": "integer_categorical"}
NUMERIC = {k: v for k, v in ALL.items() if not k.startswith("string")}


@pytest.mark.parametrize("features,crosses,strings,width", [
    (NUMERIC, [("int_1", "int_2"), ("int_2", "int_3")], False, 152),
    (ALL, [("float_3", "string_1"), ("string_2", "int_2")], True, 195),
])
@pytest.mark.parametrize("adapt_form", ["dict", "rows", "batches"])
def test_concat_widths_as_keras_tests(features, crosses, strings, width, adapt_form):
    data = _data(strings)
    fs = FS(features, crosses=crosses)
    if adapt_form == "dict":
        fs.adapt(data)
    elif adapt_form == "rows":
        fs.adapt([{k: v[i] for k, v in data.items()} for i in range(10)])
    else:
        fs.adapt([{k: v[i:i + 4] for k, v in data.items()} for i in range(0, 10, 4)])
    assert fs({k: v[0] for k, v in data.items()}).shape == (width,)
    out = fs(data)
    assert out.shape == (10, width) and out.dtype == np.float32


def test_dict_mode_shapes_as_keras_tests():
    fs = FS(ALL, crosses=[("float_3", "string_1"), ("string_2", "int_2")], output_mode="dict")
    fs.adapt(_data())
    out = fs({k: v[0] for k, v in _data().items()})
    assert len(out) == 10
    assert out["string_1"].shape == (11,) and out["int_2"].shape == (32,)
    assert out["string_2_X_int_2"].shape == (32,)
    out = fs(_data())
    assert out["string_1"].shape == (10, 11) and out["string_2_X_int_2"].shape == (10, 32)


def test_int_output_modes():
    fs = FS({"string_1": FS.string_categorical(output_mode="int"),
             "int_2": FS.integer_hashed(num_bins=32, output_mode="int"),
             "float_3": "float_discretized"},
            crosses=[FS.cross(("float_3", "string_1"), output_mode="int", crossing_dim=32)],
            output_mode="dict")
    fs.adapt(_data())
    out = fs({k: v[0] for k, v in _data().items()})
    for name in ("string_1", "int_2", "float_3_X_string_1"):
        assert out[name].shape == (1,) and out[name].dtype.kind == "i"


def test_advanced_usage_width_as_keras_test():
    fs = FS({"float_1": FS.float(), "float_2": FS.float_normalized(),
             "float_3": FS.float_discretized(num_bins=3),
             "string_1": FS.string_categorical(max_tokens=5),
             "string_2": FS.string_hashed(num_bins=32),
             "int_1": FS.integer_categorical(max_tokens=5, num_oov_indices=2),
             "int_2": FS.integer_hashed(num_bins=32),
             "int_3": FS.integer_categorical(max_tokens=5)},
            crosses=[FS.cross(("float_3", "string_1"), crossing_dim=32),
                     FS.cross(("string_2", "int_2"), crossing_dim=32)])
    fs.adapt(_data())
    assert fs({k: v[0] for k, v in _data().items()}).shape == (148,)


def test_values_against_numpy_references():
    rng = np.random.default_rng(0)
    data = {"age": rng.normal(40, 10, 50), "city": rng.choice(["a", "b", "c"], 50),
            "zip": rng.integers(0, 1000, 50), "score": rng.uniform(0, 1, 50)}
    fs = FS({"age": "float_normalized", "city": "string_categorical",
             "zip": FS.integer_hashed(num_bins=8), "score": FS.float_rescaled(scale=2.0)},
            crosses=[FS.cross(("city", "zip"), crossing_dim=4)], output_mode="dict")
    fs.adapt(data)
    out = fs(data)
    ages = data["age"]
    np.testing.assert_allclose(out["age"][:, 0], (ages - ages.mean()) / ages.std(), rtol=1e-4,
                               atol=1e-5)
    np.testing.assert_allclose(out["score"][:, 0], 2 * data["score"], rtol=1e-6)
    lookup = fs.preprocessors["city"]
    ids = np.asarray(lookup(data["city"].reshape(-1, 1)))[:, 0]
    np.testing.assert_array_equal(out["city"], np.eye(4, dtype=np.float32)[ids])
    assert set(ids) <= {1, 2, 3}  # 0 is the OOV index
    hashed = np.asarray(fs.preprocessors["zip"](data["zip"].reshape(-1, 1)))[:, 0]
    np.testing.assert_array_equal(out["zip"], np.eye(8, dtype=np.float32)[hashed])
    crossed = np.asarray(fkeras.layers.HashedCrossing(4)(
        [np.asarray(lookup(data["city"].reshape(-1, 1))),
         np.asarray(fs.preprocessors["zip"](data["zip"].reshape(-1, 1)))]))[:, 0]
    np.testing.assert_array_equal(out["city_X_zip"], np.eye(4, dtype=np.float32)[crossed])
    concat = FS({"age": "float_normalized", "city": "string_categorical"})
    concat.adapt(data)
    both = concat(data)  # features in name order
    np.testing.assert_allclose(both[:, 0], out["age"][:, 0], rtol=1e-6)
    np.testing.assert_array_equal(both[:, 1:], out["city"])


def test_feature_space_output_trains_a_model():
    data = _data(include_strings=False)
    fs = FS(NUMERIC, crosses=[("int_1", "int_2")])
    fs.adapt(data)
    x = fs(data)
    model = fkeras.Sequential([fkeras.Input((x.shape[1],)), fkeras.layers.Dense(1)])
    model.compile("sgd", "mse")
    history = model.fit(x, np.arange(10, dtype=np.float32), epochs=2, verbose=0)
    assert np.isfinite(history.history["loss"][-1])


@pytest.mark.parametrize("make,match", [
    (lambda: FS({}), "cannot be None or empty"),
    (lambda: FS({"a": "text"}), "Invalid feature type"),
    (lambda: FS({"a": "float"}, output_mode="list"), "Expected one of"),
    (lambda: FS({"a": "float"}, crosses=[("a", "b")]), "unknown features"),
    (lambda: FS.cross(("a", "b"), 4, output_mode="float"), "Expected one of"),
    (lambda: FS.feature("float32", None, "multi_hot"), "Expected one of"),
])
def test_construction_errors(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_call_errors():
    fs = FS({"a": "float_normalized", "b": FS.integer_categorical(output_mode="int")})
    with pytest.raises(ValueError, match="adapt"):
        fs({"a": [1.0], "b": [1]})
    fs.adapt({"a": [1.0, 2.0], "b": [1, 2]})
    with pytest.raises(ValueError, match="only be called with a dict"):
        fs([1.0])
    with pytest.raises(ValueError, match="has not been encoded"):
        fs({"a": [1.0], "b": [1]})
    with pytest.raises(ValueError, match="can only be called on a dict"):
        fs.adapt(5)
    only_float = FS({"a": "float"})  # nothing to adapt: usable at once
    np.testing.assert_array_equal(only_float({"a": [1.5, 2.5]}), [[1.5], [2.5]])


@pytest.mark.parametrize("output_mode", ["concat", "dict"])
def test_symbolic_features_in_a_functional_model(output_mode):
    rng = np.random.default_rng(1)
    data = {"age": rng.normal(40, 10, 32).astype(np.float32),
            "city": rng.choice(["a", "b", "c"], 32), "zip": rng.integers(0, 100, 32),
            "score": rng.uniform(0, 1, 32).astype(np.float32)}
    fs = FS({"age": "float_normalized", "city": "string_categorical", "zip": "integer_hashed",
             "score": "float"}, crosses=[("city", "zip")], output_mode=output_mode)
    fs.adapt(data)
    encoded = fs.get_encoded_features()
    if output_mode == "dict":
        encoded = fkeras.layers.Concatenate()([encoded[k] for k in sorted(encoded)])
    extractor = fkeras.Model(fs.get_inputs(), encoded)
    columns = {k: v.reshape(-1, 1) for k, v in data.items()}
    eager = fs(data)
    if output_mode == "dict":
        eager = np.concatenate([eager[k] for k in sorted(eager)], -1)
    np.testing.assert_allclose(np.asarray(extractor(columns)), eager, rtol=1e-5, atol=1e-6)
    model = fkeras.Model(fs.get_inputs(), fkeras.layers.Dense(1)(encoded))
    model.compile("sgd", "mse")
    history = model.fit(columns, rng.normal(size=(32, 1)).astype(np.float32), epochs=1,
                        batch_size=8, verbose=0)
    assert np.isfinite(history.history["loss"][0])


def test_symbolic_needs_adapt_and_encoding():
    fs = FS({"a": "float_normalized"})
    with pytest.raises(ValueError, match="adapt"):
        fs.get_inputs()
    fs = FS({"a": "float", "b": FS.integer_categorical(output_mode="int")})
    fs.adapt({"a": [1.0], "b": [1]})
    with pytest.raises(ValueError, match="has not been encoded"):
        fs.get_encoded_features()
