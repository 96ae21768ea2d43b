"""Lookup and text layers beyond the Keras case table: symbolic shapes and dtypes (Keras's,
recorded from Keras 3.15, except where its spec disagrees with its own eager output),
invert, adapt on PyDatasets with `steps`, set_vocabulary, callables, configs that round
trip, and the errors fkeras adds."""

import numpy as np
import pytest

import fkeras
from fkeras import layers

V = ["a", "b", "c", "d"]


def _adapted_tv(**kwargs):
    tv = layers.TextVectorization(**kwargs)
    tv.adapt(np.array(["The cat sat.", "the dog, the cat!", "A bird"]))
    return tv


# (layer factory, Input shape, Keras 3.15's output shape, fkeras dtype)
SPECS = [
    ("sl_int", lambda: layers.StringLookup(vocabulary=["a"]), (3,), (None, 3), "int64"),
    ("sl_one_hot", lambda: layers.StringLookup(vocabulary=["a"], output_mode="one_hot"),
     (3,), (None, 3, 2), "int64"),
    ("sl_one_hot_col", lambda: layers.StringLookup(vocabulary=["a"], output_mode="one_hot"),
     (1,), (None, 2), "int64"),
    ("sl_count", lambda: layers.StringLookup(vocabulary=["a"], output_mode="count"), (3,),
     (None, 2), "int64"),
    ("tv_seqlen", lambda: _adapted_tv(output_sequence_length=4), (1,), (None, 4), "int64"),
    ("tv_int", lambda: _adapted_tv(), (1,), (None, None), "int64"),
    ("tv_count_1d", lambda: _adapted_tv(output_mode="count"), (), (None, 7), "int64"),
    ("tv_tfidf_nosplit", lambda: _adapted_tv(output_mode="tf_idf", split=None), (1,),
     (None, 4), "float32"),
    # Keras 3.15 says (None, 1, 7) here but returns (batch, 7); fkeras says what it returns.
    ("tv_count_col", lambda: _adapted_tv(output_mode="count"), (1,), (None, 7), "int64"),
]


@pytest.mark.parametrize("make,shape,want,dtype", [s[1:] for s in SPECS],
                         ids=[s[0] for s in SPECS])
def test_symbolic_output_spec(make, shape, want, dtype):
    layer = make()
    out = layer(fkeras.Input(shape=shape, dtype="string"))
    assert out.shape == want and out.dtype == dtype
    data = np.array([["the cat"]] * 2) if shape == (1,) else np.array([["a"] * 3] * 2) \
        if shape == (3,) else np.array(["the cat"] * 2)
    got = np.asarray(layer(data))
    assert got.dtype == dtype
    assert all(w is None or w == g for w, g in zip(want[1:], got.shape[1:]))


def test_invert_round_trip_and_dtypes():
    forward = layers.StringLookup(vocabulary=V, mask_token="")
    inverse = layers.StringLookup(vocabulary=forward.get_vocabulary(), mask_token="",
                                  invert=True)
    x = np.array([["a", "", "zz", "d"]])
    back = np.asarray(inverse(forward(x)))
    assert back.tolist() == [["a", "", "[UNK]", "d"]]
    ints = layers.IntegerLookup(vocabulary=[7, 8], invert=True, mask_token=0)
    np.testing.assert_array_equal(np.asarray(ints(np.array([0, 1, 2, 3, 9]))),
                                  [0, -1, 7, 8, -1])


def test_adapt_pydataset_with_steps_uses_inputs_only():
    class Batches(fkeras.utils.PyDataset):
        def __len__(self):
            return 3

        def __getitem__(self, i):
            return np.array([["x", "y"], ["y", "w"], ["q", "q"]][i]), np.zeros(2)

    layer = layers.StringLookup()
    layer.adapt(Batches(), steps=2)
    assert layer.get_vocabulary() == ["[UNK]", "y", "x", "w"]
    with pytest.raises(ValueError, match="steps"):
        layer.adapt(Batches(), steps=0)


def test_set_vocabulary_replaces_and_adapt_refuses_static_vocabulary():
    layer = layers.StringLookup()
    layer.set_vocabulary(["x", "y"])
    np.testing.assert_array_equal(np.asarray(layer(np.array(["y", "a"]))), [2, 0])
    layer.set_vocabulary(np.array(["a"]))
    np.testing.assert_array_equal(np.asarray(layer(np.array(["y", "a"]))), [0, 1])
    fixed = layers.StringLookup(vocabulary=V)
    with pytest.raises(ValueError, match="Cannot adapt layer"):
        fixed.adapt(np.array(["a"]))


def test_vocabulary_size_frozen_after_call_in_encoding_modes():
    layer = layers.StringLookup(vocabulary=V, output_mode="multi_hot")
    layer(np.array([["a"]]))
    with pytest.raises(RuntimeError, match="cannot be changed after the layer is called"):
        layer.set_vocabulary(["a", "b"])


def test_text_vectorization_callables_and_config_round_trip():
    def split_on_commas(strings):
        return [s.split(",") for s in strings.tolist()]

    tv = layers.TextVectorization(standardize=lambda s: np.char.lower(s),
                                  split=split_on_commas, output_sequence_length=3)
    tv.adapt(np.array(["A,b", "b,C,b"]))
    assert tv.get_vocabulary() == ["", "[UNK]", "b", "c", "a"]
    np.testing.assert_array_equal(np.asarray(tv(np.array(["B,a,z,c"]))), [[2, 4, 1]])
    assert tv.get_vocabulary(include_special_tokens=False) == ["b", "c", "a"]

    given = layers.TextVectorization(vocabulary=["x", "y"], ngrams=(1, 2), split="character")
    clone = layers.TextVectorization.from_config(given.get_config())
    assert clone.get_config() == given.get_config()
    np.testing.assert_array_equal(np.asarray(clone(np.array(["xyz"]))),
                                  np.asarray(given(np.array(["xyz"]))))


def test_text_vectorization_one_hot_needs_no_split():
    tv = layers.TextVectorization(vocabulary=["red", "blue"], output_mode="one_hot",
                                  split=None, standardize=None)
    np.testing.assert_array_equal(np.asarray(tv(np.array([["blue"], ["x"]]))),
                                  [[0, 0, 1], [1, 0, 0]])
    split = layers.TextVectorization(vocabulary=["red"], output_mode="one_hot")
    with pytest.raises(ValueError, match="split=None"):
        split(np.array(["red red"]))


def test_unsupported_options_are_refused():
    with pytest.raises(ValueError, match="salt"):
        layers.StringLookup(salt=3)
    with pytest.raises(ValueError, match="oov_method"):
        layers.IntegerLookup(oov_method="modulo")
    with pytest.raises(ValueError, match="expects integer inputs"):
        layers.IntegerLookup(vocabulary=[1, 2])(np.array([1.5]))
    with pytest.raises(RuntimeError, match="has no vocabulary"):
        layers.StringLookup()(np.array(["a"]))


def test_registered_standardize_survives_keras_file(tmp_path):
    @fkeras.saving.register_keras_serializable(package="lookup_test")
    def shout(strings):
        return np.char.upper(strings)

    tv = layers.TextVectorization(standardize=shout, max_tokens=10)
    tv.adapt(np.array(["a b c", "b c"]))
    inputs = fkeras.Input(shape=(1,), dtype="string")
    model = fkeras.Model(inputs, tv(inputs))
    model.save(tmp_path / "shout.keras")
    loaded = fkeras.models.load_model(tmp_path / "shout.keras")
    assert loaded.layers[1].get_vocabulary() == ["", "[UNK]", "C", "B", "A"]
    np.testing.assert_array_equal(loaded.predict(np.array([["a b"]]), verbose=0), [[4, 3]])


@pytest.mark.parametrize("text,tokens", [
    # Recorded with tf.strings.split (TensorFlow 2.21), which Keras 3 uses.
    ("a\x1cb c\x0bd\x0ce\rf\x85g\u3000h", ["a\x1cb", "c", "d", "e", "f\x85g\u3000h"]),
    ("  lead\t\ttrail  ", ["lead", "trail"]),
    ("", []),
])
def test_whitespace_split_is_tensorflows(text, tokens):
    from fkeras.layers.preprocessing import text_ops

    assert text_ops.split_whitespace(text) == tokens
