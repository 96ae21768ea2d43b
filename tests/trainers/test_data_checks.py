"""Data is checked against the model before any computation, with messages naming the input or
output and both shapes; the one forgiven reshape is a trailing dimension of 1."""

import numpy as np
import pytest

import fkeras
from fkeras import layers


def model_4_to_1(loss="binary_crossentropy"):
    inp = fkeras.Input((4,), name="features")
    out = layers.Dense(1, activation="sigmoid", name="prob")(inp)
    model = fkeras.Model(inp, out)
    model.compile("sgd", loss)
    return model


def test_x_and_y_of_different_lengths():
    with pytest.raises(ValueError, match=r"(?s)cardinality.*'x' sizes: 100.*'y' sizes: 50"):
        model_4_to_1().fit(np.zeros((100, 4)), np.zeros((50, 1)), verbose=0)


def test_missing_batch_dimension_names_the_input():
    model = model_4_to_1()
    with pytest.raises(ValueError, match=r"expected features to have 2 dimensions, but got "
                                         r"array with shape \(4,\)"):
        model.predict(np.zeros(4), verbose=0)
    with pytest.raises(ValueError, match=r"expected features to have shape \(4,\) but got "
                                         r"array with shape \(5,\)"):
        model.fit(np.zeros((10, 5)), np.zeros((10, 1)), verbose=0)


def test_y_that_does_not_match_the_output():
    with pytest.raises(ValueError, match=r"expected prob to have shape \(None, 1\) but got "
                                         r"array with shape \(10, 3\)"):
        model_4_to_1().fit(np.zeros((10, 4)), np.zeros((10, 3)), verbose=0)
    # No silent broadcasting for mse either (Keras 2/3 broadcast (N, 3) against (N, 1)).
    with pytest.raises(ValueError, match="expected prob to have shape"):
        model_4_to_1("mse").fit(np.zeros((10, 4)), np.zeros((10, 3)), verbose=0)


def test_categorical_crossentropy_with_integer_labels_explains():
    inp = fkeras.Input((4,))
    model = fkeras.Model(inp, layers.Dense(3, activation="softmax", name="cls")(inp))
    model.compile("sgd", "categorical_crossentropy")
    with pytest.raises(ValueError, match="sparse_categorical_crossentropy"):
        model.fit(np.zeros((10, 4)), np.zeros(10), verbose=0)
    model.compile("sgd", "sparse_categorical_crossentropy")
    with pytest.raises(ValueError, match="expects integer class labels"):
        model.fit(np.zeros((10, 4)), np.zeros((10, 3)), verbose=0)


def test_forgiven_trailing_ones():
    model = model_4_to_1()
    model.fit(np.zeros((8, 4)), np.zeros(8), verbose=0)  # y (N,) for an (N, 1) output
    model.fit(np.zeros((8, 4, 1)), np.zeros((8, 1)), verbose=0)  # x (N, 4, 1) for Input(4)
    inp = fkeras.Input((4, 1))
    m2 = fkeras.Model(inp, layers.Dense(1)(layers.Flatten()(inp)))
    m2.compile("sgd", "mse")
    m2.fit(np.zeros((8, 4)), np.zeros((8, 1)), verbose=0)  # x (N, 4) for Input(4, 1)


def test_dict_and_list_data():
    a, b = fkeras.Input((2,), name="a"), fkeras.Input((3,), name="b")
    out = layers.Dense(1, name="out")(layers.Concatenate()([a, b]))
    model = fkeras.Model([a, b], out)
    model.compile("sgd", "mse")
    xa, xb, y = np.ones((6, 2)), np.ones((6, 3)), np.ones((6, 1))
    model.fit({"a": xa, "b": xb}, {"out": y}, verbose=0)
    model.fit([xa, xb], y, verbose=0)
    with pytest.raises(ValueError, match=r"Missing data for input\(s\) \['b'\]"):
        model.fit({"a": xa}, y, verbose=0)
    with pytest.raises(ValueError, match="expects 2 input"):
        model.fit([xa], y, verbose=0)


def test_list_of_rows_is_accepted_for_one_input():
    model = model_4_to_1()
    x = np.zeros((6, 4)).tolist()
    model.fit(x, [0, 1, 0, 1, 0, 1], verbose=0)


def test_validation_data_forms():
    model = model_4_to_1()
    x, y = np.zeros((6, 4)), np.zeros((6, 1))
    model.fit(x, y, validation_data=(x, y, np.ones(6)), verbose=0)
    with pytest.raises(ValueError, match="must contain 2"):
        model.fit(x, y, validation_data=(x, y, y, y), verbose=0)


def test_target_missing():
    with pytest.raises(ValueError, match="Target data is missing"):
        model_4_to_1().fit(np.zeros((6, 4)), verbose=0)
