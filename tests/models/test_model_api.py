"""Model-level API: summary, config round trips, predict and data validation (issue 2)."""

import numpy as np
import pytest

import fkeras as keras
from fkeras.layers import Activation, Dense, Input
from fkeras.models import Model, Sequential


def _branchy():
    a, b = Input(shape=(4,), name="a"), Input(shape=(3,), name="b")
    shared = Dense(5, name="shared")
    h = shared(Dense(4, name="pa")(a)) + shared(Dense(4, name="pb")(b))
    return Model([a, b], Dense(1, name="out")(h), name="branchy")


def test_summary_sequential_layout():
    lines = []
    Sequential([Dense(20, input_shape=(10,)), Dense(1)], name="seq").summary(print_fn=lines.append)
    assert lines[0] == 'Model: "seq"'
    assert lines[1] == "_" * 65 and lines[3] == "=" * 65
    assert lines[2].split() == ["Layer", "(type)", "Output", "Shape", "Param", "#"]
    assert lines[4].split() == ["dense", "(Dense)", "(None,", "20)", "220"]
    assert lines[4].index("(None, 20)") == 30 and lines[4].index("220") == 56
    assert "Total params: 241 (964.00 Byte)" in lines
    assert "Trainable params: 241 (964.00 Byte)" in lines
    assert "Non-trainable params: 0 (0.00 Byte)" in lines
    assert all(len(line) <= 65 for line in lines)


def test_summary_functional_with_branches_has_connected_to():
    lines = []
    _branchy().summary(print_fn=lines.append)
    assert len(lines[1]) == 98 and "Connected to" in lines[2]
    row = next(line for line in lines if line.startswith(" shared (Dense)"))
    assert "['pa[0][0]', 'pb[0][0]']" in row and "25" in row
    assert any(line.startswith(" a (InputLayer)") and "[(None, 4)]" in line for line in lines)
    assert "Total params: 67 (268.00 Byte)" in lines


def test_summary_wraps_long_names_instead_of_truncating():
    lines = []
    x = Input(shape=(3,))
    Model(x, Dense(2, name="a_really_long_layer_name_that_needs_wrapping")(x)).summary(print_fn=lines.append)
    first_column = "".join(line[:29].strip() for line in lines[6:8])
    assert first_column.startswith("a_really_long_layer_name_that_needs_wrapping")
    assert all(len(line) <= 65 for line in lines)


def test_functional_config_round_trip_keeps_shared_nodes_and_outputs():
    model = _branchy()
    config = model.get_config()
    before = repr(config)
    clone = Model.from_config(config)
    assert repr(config) == before  # from_config does not mutate its argument
    assert len(clone.get_layer("shared")._inbound_nodes) == 2
    clone.set_weights(model.get_weights())
    xa = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    xb = np.random.default_rng(1).standard_normal((3, 3)).astype(np.float32)
    np.testing.assert_allclose(clone.predict([xa, xb]), model.predict([xa, xb]), rtol=1e-6)
    assert clone.get_config()["layers"][4]["inbound_nodes"] == config["layers"][4]["inbound_nodes"]


def test_sequential_and_layer_config_round_trips():
    s = Sequential([Dense(4, activation="relu", input_shape=(3,)), Activation("tanh"), Dense(2)])
    clone = Sequential.from_config(s.get_config())
    assert [type(lyr).__name__ for lyr in clone.layers] == ["Dense", "Activation", "Dense"]
    assert clone.output_shape == (None, 2)
    d = Dense(7, activation="relu", use_bias=False, kernel_initializer="he_normal", name="d")
    again = Dense.from_config(d.get_config())
    assert again.get_config() == d.get_config()


def test_predict_rejects_missing_batch_dimension():
    x = Input(shape=(10,), name="inp")
    model = Model(x, Dense(1)(x))
    with pytest.raises(ValueError, match=r"expected inp to have 2 dimensions, but got array with shape \(10,\)"):
        model.predict(np.ones(10, np.float32))
    with pytest.raises(ValueError, match=r"expected inp to have shape \(10,\) but got array with shape \(5,\)"):
        model.predict(np.ones((3, 5), np.float32))
    with pytest.raises(ValueError, match="expected inp to have 2 dimensions"):
        model(np.ones(10, np.float32))


def test_predict_batches_and_model_call_agree():
    x = Input(shape=(6,))
    model = Model(x, Dense(3, activation="tanh")(x))
    data = np.random.default_rng(2).standard_normal((70, 6)).astype(np.float32)
    np.testing.assert_allclose(model.predict(data, batch_size=16), model(data), rtol=1e-6)


def test_count_params_unbuilt_layer_raises():
    with pytest.raises(ValueError, match="isn't built"):
        Dense(3).count_params()


def test_public_api_importable_both_keras_ways():
    from fkeras.layers import Dense as D2
    from fkeras.layers import Input as I2
    from fkeras.models import Model as M2

    assert keras.layers.Dense is D2 and keras.Input is I2 and keras.Model is M2
