"""The hash functions against published test vectors, and Hashing / HashedCrossing against
the bins real Keras 3 computes through TensorFlow (the expected values of Keras's own test
suite, so they run without keras or tensorflow installed)."""

import numpy as np
import pytest

import fkeras
from fkeras import layers
from fkeras.layers.preprocessing.hash_functions import fingerprint64, siphash24

_ALPHA = "abcdefghijklmnopqrstuvwxyz" * 6

# FarmHash Fingerprint64 reference values (the farmhash64 ports' shared test table), covering
# every length branch: 0-16, 17-32, 33-64 and the 64-byte loop.
FINGERPRINTS = [
    ("", 0x9AE16A3B2F90404F), ("a", 0xB3454265B6DF75E3), ("ab", 0xAA8D6E5242ADA51E),
    ("abc", 0x24A5B3A074E7F369), ("abcd", 0x1A5502DE4A1F8101),
    ("abcdefgh", 0xFEE9D22990C82909), ("abcdefghi", 0x332C8ED4DAE5BA42),
    ("0123456789'01234", 0x4283D4EF43627F64), ("0123456789=012345", 0x46A7416ED4861E3B),
    ("0123456789%0123456789\u00a3", 0x4DBD128AF51D77E8),
    ("C is as portable as Stonehedge!!", 0xB944F8A16261E414),
    ("Discard medicine more than two years old.", 0xE8F89AB6DF9BDD25),
    ("For every action there is an equal and opposite government program.",
     0x55182F8859ECA4CE),
    (_ALPHA[:33], 0x1BD257E2FC3DA812), (_ALPHA[:63], 0xD52B7A8646A91B9E),
    (_ALPHA[:64], 0x9C4A595C23BB9BFA), (_ALPHA[:65], 0x2434D8917886FE2A),
    (_ALPHA[:128], 0xC3244D5EC8A4474A), (_ALPHA[:129], 0x9B1CA0571B8CEFD4),
]


@pytest.mark.parametrize("text,expected", FINGERPRINTS)
def test_fingerprint64_vectors(text, expected):
    assert fingerprint64(text.encode("utf-8")) == expected


def test_siphash24_vectors():
    # The SipHash paper's key 00..0f: the empty message and the 15-byte message 00..0e.
    k0, k1 = 0x0706050403020100, 0x0F0E0D0C0B0A0908
    assert siphash24(k0, k1, b"") == 0x726FDB47DD0E0E31
    assert siphash24(k0, k1, bytes(range(15))) == 0xA129CA6149BE45E5


ABCDE = np.array([["A"], ["B"], ["C"], ["D"], ["E"]])
WIRE = np.array([["omar"], ["stringer"], ["marlo"], ["wire"], ["skywalker"]], dtype=object)


@pytest.mark.parametrize("kwargs,data,expected", [
    ({"num_bins": 3}, ABCDE, [[1], [0], [1], [1], [2]]),
    ({"num_bins": 3}, ABCDE.astype(object), [[1], [0], [1], [1], [2]]),
    ({"num_bins": 3}, ABCDE.astype(bytes), [[1], [0], [1], [1], [2]]),
    ({"num_bins": 3, "mask_value": ""}, np.array([["A"], ["B"], [""], ["C"], ["D"]]),
     [[1], [1], [0], [2], [2]]),
    ({"num_bins": 3, "salt": [133, 137]}, ABCDE, [[1], [2], [1], [0], [2]]),
    ({"num_bins": 3, "salt": 133}, ABCDE, [[0], [0], [2], [1], [0]]),
    ({"num_bins": 1}, ABCDE, [[0]] * 5),
    ({"num_bins": 2}, WIRE, [[0], [0], [1], [0], [0]]),
    ({"num_bins": 3, "mask_value": ""}, WIRE, [[1], [1], [2], [1], [1]]),
    ({"num_bins": 3, "mask_value": "omar"}, WIRE, [[0], [1], [2], [1], [1]]),
    ({"num_bins": 2, "salt": [133, 137]}, WIRE, [[0], [1], [0], [1], [0]]),
    ({"num_bins": 2, "salt": [211, 137]}, WIRE, [[1], [0], [1], [0], [1]]),
    ({"num_bins": 3}, np.array([[0], [1], [2], [3], [4]]), [[1], [0], [1], [0], [2]]),
    ({"num_bins": 3}, np.array([[0.5], [1.9], [2.0], [3.7], [4.0]]), [[1], [0], [1], [0], [2]]),
    ({"num_bins": 3, "salt": [133, 137]}, np.array([[0], [1], [2], [3], [4]]),
     [[1], [1], [2], [0], [1]]),
    ({"num_bins": 3, "output_mode": "multi_hot"}, np.array([[0, 1, 2, 3, 4]]),
     [[1.0, 1.0, 1.0]]),
    ({"num_bins": 3, "output_mode": "count"}, np.array([[0, 1, 2, 3, 4]]), [[2.0, 2.0, 1.0]]),
    ({"num_bins": 3, "output_mode": "one_hot"}, np.array([[0], [1]]),
     [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]),
])
def test_hashing_bins_equal_keras(kwargs, data, expected):
    out = np.asarray(layers.Hashing(**kwargs)(data))
    np.testing.assert_array_equal(out, np.asarray(expected))
    assert out.dtype == (np.int64 if kwargs.get("output_mode", "int") == "int" else np.float32)


def test_hashing_symbolic_functional_and_fit(tmp_path):
    words = fkeras.Input(shape=(1,), dtype="string")
    hashed = layers.Hashing(num_bins=64, output_mode="one_hot")(words)
    assert tuple(hashed.shape) == (None, 64) and hashed.dtype == "float32"
    model = fkeras.Model(words, layers.Dense(1)(hashed))
    model.compile(optimizer=fkeras.optimizers.SGD(0.5), loss="mse")
    x = np.array([["cat"], ["dog"], ["bird"], ["fish"]] * 4, dtype=object)
    y = np.array([[1.0], [2.0], [3.0], [4.0]] * 4, np.float32)
    bins = np.asarray(layers.Hashing(num_bins=64)(x[:4]))
    assert len(set(bins.ravel().tolist())) == 4, bins   # no collision: the fit can be exact
    history = model.fit(x, y, epochs=40, verbose=0)
    assert history.history["loss"][-1] < 0.05
    model.save(tmp_path / "h.keras")
    loaded = fkeras.saving.load_model(tmp_path / "h.keras")
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))
    assert loaded.layers[1].get_config() == model.layers[1].get_config()


def test_hashing_config_keys_are_keras_3s():
    config = layers.Hashing(num_bins=3, salt=7, mask_value="").get_config()
    assert set(config) == {"name", "trainable", "dtype", "num_bins", "salt", "mask_value",
                           "output_mode", "sparse"}
    assert config["salt"] == [7, 7] and config["dtype"] == "int64"
    assert layers.Hashing(num_bins=3, output_mode="count").get_config()["dtype"] == "float32"


@pytest.mark.parametrize("kwargs,match", [
    ({"num_bins": None}, r"`num_bins` for `Hashing` cannot be `None`"),
    ({"num_bins": -1}, r"non-positive values. Received: num_bins=-1"),
    ({"num_bins": 2, "salt": "string"}, r"`salt` argument for `Hashing` can only be"),
    ({"num_bins": 2, "salt": [1]}, r"`salt` argument"),
    ({"num_bins": 2, "salt": [133, 137, 177]}, r"`salt` argument"),
    ({"num_bins": 2, "output_mode": "tf_idf"}, r'Layer "hashing": invalid value for argument '
                                               r"`output_mode`"),
    ({"num_bins": 2, "dtype": "float32"}, r"`dtype` should be an integer type"),
    ({"num_bins": 2, "output_mode": "count", "sparse": True}, r"`sparse=True` is not "
                                                              r"supported"),
])
def test_hashing_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        layers.Hashing(**kwargs)


def test_hashing_rejects_unhashable_values():
    with pytest.raises(TypeError, match=r'Layer "hashing": Cannot hash a value of type list'):
        layers.Hashing(num_bins=2)(np.array([[1, 2], None], dtype=object))


FEAT1 = np.array(["A", "B", "A", "B", "A"])
FEAT2 = np.array([101, 101, 101, 102, 102])


def test_hashed_crossing_bins_equal_keras():
    np.testing.assert_array_equal(np.asarray(layers.HashedCrossing(5)((FEAT1, FEAT2))),
                                  [1, 4, 1, 1, 3])
    np.testing.assert_array_equal(
        np.asarray(layers.HashedCrossing(5)([FEAT1[:, None], FEAT2[:, None]])),
        [[1], [4], [1], [1], [3]])
    one_hot = np.asarray(layers.HashedCrossing(5, output_mode="one_hot")((FEAT1, FEAT2)))
    np.testing.assert_array_equal(one_hot, np.eye(5, dtype=np.float32)[[1, 4, 1, 1, 3]])
    assert int(np.asarray(layers.HashedCrossing(10)((np.array("A"), np.array(101))))) == 1
    ints = np.asarray(layers.HashedCrossing(2)((np.array([1, 2]), np.array([4, 5]))))
    assert ints.shape == (2,) and ints.dtype == np.int64


def test_hashed_crossing_symbolic_and_config():
    a = fkeras.Input(shape=(1,), dtype="string")
    b = fkeras.Input(shape=(1,), dtype="int64")
    out = layers.HashedCrossing(7, output_mode="one_hot")([a, b])
    assert tuple(out.shape) == (None, 7)
    model = fkeras.Model([a, b], out)
    np.testing.assert_array_equal(
        model.predict([FEAT1[:, None].astype(object), FEAT2[:, None]], verbose=0),
        np.asarray(layers.HashedCrossing(7, output_mode="one_hot")((FEAT1, FEAT2))))
    assert set(layers.HashedCrossing(3).get_config()) == {"num_bins", "output_mode", "sparse",
                                                           "name", "dtype"}


@pytest.mark.parametrize("inputs,match", [
    (np.array([1]), r"should be called on a list or tuple of inputs"),
    ([np.array([1])], r"should be called on at least two inputs"),
    ((np.array([[1, 2]]), np.array([[1, 2]])), r"should have shape `\(\)`, `\(batch_size\)`"),
    ((np.array([1, 2]), np.array([1])), r"should have equal shape"),
    ((np.array([1.0]), np.array([1.0])), r"should have an integer or string dtype"),
])
def test_hashed_crossing_errors(inputs, match):
    with pytest.raises(ValueError, match=match):
        layers.HashedCrossing(num_bins=10)(inputs)


def test_hashing_matches_keras_with_tensorflow():
    pytest.importorskip("tensorflow")
    keras = pytest.importorskip("keras")
    words = np.array([["x%d" % i] for i in range(50)] + [["\u00e9t\u00e9"], [""]], dtype=object)
    for kwargs in ({"num_bins": 17}, {"num_bins": 17, "salt": [3, 5]},
                   {"num_bins": 9, "mask_value": "x3"}):
        np.testing.assert_array_equal(
            np.asarray(layers.Hashing(**kwargs)(words)),
            keras.ops.convert_to_numpy(keras.layers.Hashing(**kwargs)(words)))
