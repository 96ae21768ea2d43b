"""timeseries_dataset_from_array, split_dataset, get_source_inputs and the image array/file
helpers (load_img, img_to_array, array_to_img, save_img), against NumPy references and Keras
3.15 where importable."""

import random

import numpy as np
import pytest

import fkeras


def windows_reference(data, targets, length, stride, rate, start, end):
    """Every window as Keras documents it, in order (NumPy, one by one)."""
    end = len(data) if end is None else end
    xs, ys = [], []
    p = 0
    while True:
        first = start + p
        last = first + (length - 1) * rate
        if last >= end or (targets is not None and p >= len(targets) - start):
            break
        xs.append(data[first:last + 1:rate])
        if targets is not None:
            ys.append(targets[first])
        p += stride
    return np.array(xs), (np.array(ys) if targets is not None else None)


@pytest.mark.parametrize("length,stride,rate,start,end,batch", [
    (5, 1, 1, None, None, 4), (3, 2, 3, 2, 40, 5), (4, 3, 2, 0, 30, None), (10, 1, 1, 5, None, 7)])
def test_timeseries_windows(length, stride, rate, start, end, batch):
    data = np.arange(100 * 2, dtype="float32").reshape(100, 2)
    targets = np.arange(100) * 10
    ds = fkeras.utils.timeseries_dataset_from_array(
        data, targets, length, sequence_stride=stride, sampling_rate=rate,
        batch_size=batch, start_index=start, end_index=end)
    want_x, want_y = windows_reference(data, targets, length, stride, rate, start or 0, end)
    items = list(ds)
    if batch is None:
        xs, ys = np.stack([x for x, _ in items]), np.array([y for _, y in items])
    else:
        assert len(ds) == len(items) == -(-len(want_x) // batch)
        xs = np.concatenate([x for x, _ in items])
        ys = np.concatenate([y for _, y in items])
    np.testing.assert_array_equal(xs, want_x)
    np.testing.assert_array_equal(ys, want_y)


def test_timeseries_shuffle_and_no_targets():
    data = np.arange(50, dtype="float32")[:, None]
    ds = fkeras.utils.timeseries_dataset_from_array(data, None, 4, batch_size=8,
                                                    shuffle=True, seed=3)
    first = np.concatenate(list(ds))
    positions = np.arange(47)
    np.random.RandomState(3).shuffle(positions)  # Keras's order of the start positions
    np.testing.assert_array_equal(first[:, 0, 0], positions)
    second = np.concatenate(list(ds))
    assert not np.array_equal(first, second)
    assert sorted(second[:, 0, 0].tolist()) == list(range(47))


def test_timeseries_trains_and_errors():
    data = np.random.default_rng(0).normal(size=(60, 3)).astype("float32")
    ds = fkeras.utils.timeseries_dataset_from_array(data[:-5], data[5:, 0], 5, batch_size=16)
    inp = fkeras.Input((5, 3))
    model = fkeras.Model(inp, fkeras.layers.Dense(1)(fkeras.layers.Flatten()(inp)))
    model.compile("sgd", "mse")
    assert len(model.fit(ds, epochs=2, verbose=0).history["loss"]) == 2
    f = fkeras.utils.timeseries_dataset_from_array
    for kwargs, message in [({"start_index": -1}, "`start_index` must be 0 or greater"),
                            ({"end_index": 60}, "`end_index` must be lower"),
                            ({"start_index": 5, "end_index": 3}, "higher than `start_index`"),
                            ({"sampling_rate": 0}, "`sampling_rate` must be higher than 0"),
                            ({"sequence_stride": 60}, "`sequence_stride` must be lower"),
                            ({"format": "np"}, "`format` should be")]:
        with pytest.raises(ValueError, match=message):
            f(data, None, 5, **kwargs)


def test_split_dataset_sizes_structure_and_keras_seed():
    x = np.arange(20).reshape(10, 2)
    y = np.arange(10)
    left, right = fkeras.utils.split_dataset((x, y), left_size=0.7)
    np.testing.assert_array_equal(left[0], x[:7])
    np.testing.assert_array_equal(right[1], y[7:])
    left, right = fkeras.utils.split_dataset({"a": x, "b": y}, left_size=3, right_size=4)
    assert set(left) == {"a", "b"} and len(left["b"]) == 3 and right["b"].tolist() == [6, 7, 8, 9]
    left, right = fkeras.utils.split_dataset(y, right_size=0.2, shuffle=True, seed=42)
    order = list(range(10))
    random.seed(42)
    random.shuffle(order)  # what Keras's split does with the seed
    assert left.tolist() == order[:8] and right.tolist() == order[8:]
    for kwargs, error in [({}, ValueError), ({"left_size": 10}, ValueError),
                          ({"left_size": 0.6, "right_size": 0.6}, ValueError),
                          ({"left_size": "half"}, TypeError)]:
        with pytest.raises(error):
            fkeras.utils.split_dataset(y, **kwargs)
    with pytest.raises(TypeError, match="must be a NumPy array"):
        fkeras.utils.split_dataset(object(), left_size=0.5)


def test_split_dataset_of_a_map_style_dataset():
    class Pairs:
        def __len__(self):
            return 6

        def __getitem__(self, i):
            return np.full(3, i), i * 10

    left, right = fkeras.utils.split_dataset(Pairs(), left_size=4)
    assert left[0].shape == (4, 3) and right[1].tolist() == [40, 50]


def test_get_source_inputs():
    a, b, c = fkeras.Input((2,), name="a"), fkeras.Input((2,), name="b"), fkeras.Input((2,))
    ab = fkeras.layers.Add()([b, a])
    out = fkeras.layers.Concatenate()([ab, fkeras.layers.Dense(2)(a)])
    assert fkeras.utils.get_source_inputs(out) == [b, a]
    assert fkeras.utils.get_source_inputs(c) == [c]
    assert fkeras.utils.get_source_inputs(5) == 5
    keras = pytest.importorskip("keras")
    ka, kb = keras.Input((2,), name="a"), keras.Input((2,), name="b")
    kout = keras.layers.Concatenate()([keras.layers.Add()([kb, ka]), keras.layers.Dense(2)(ka)])
    assert [t.name for t in keras.utils.get_source_inputs(kout)] == ["b", "a"]


@pytest.fixture
def pil():
    return pytest.importorskip("PIL.Image", reason="Pillow is not installed")


@pytest.mark.parametrize("suffix", [".png", ".bmp", ".jpg"])
def test_image_file_round_trip(tmp_path, pil, suffix):
    rgb = np.random.default_rng(1).integers(0, 256, (6, 9, 3)).astype("float32")
    path = tmp_path / f"img{suffix}"
    fkeras.utils.save_img(path, rgb, scale=False)
    img = fkeras.utils.load_img(path)
    assert img.size == (9, 6) and img.mode == "RGB"
    arr = fkeras.utils.img_to_array(img)
    assert arr.shape == (6, 9, 3) and arr.dtype == np.float32
    if suffix != ".jpg":
        np.testing.assert_array_equal(arr, rgb)
    gray = fkeras.utils.img_to_array(fkeras.utils.load_img(path, color_mode="grayscale"),
                                     data_format="channels_first")
    assert gray.shape == (1, 6, 9)
    small = fkeras.utils.load_img(path, target_size=(3, 4), interpolation="bilinear")
    assert small.size == (4, 3)


def test_array_to_img_scaling_and_modes(pil, tmp_path):
    x = np.linspace(-1, 1, 2 * 3 * 3).reshape(2, 3, 3)
    img = fkeras.utils.array_to_img(x)
    arr = np.asarray(img)
    assert arr.min() == 0 and arr.max() == 255 and img.mode == "RGB"
    assert fkeras.utils.array_to_img(np.zeros((2, 2, 4))).mode == "RGBA"
    assert fkeras.utils.array_to_img(np.full((2, 2, 1), 300.0), scale=False).mode == "I"
    assert fkeras.utils.array_to_img(np.ones((1, 2, 2)), data_format="channels_first").size \
        == (2, 2)
    with pytest.raises(ValueError, match="rank 3"):
        fkeras.utils.array_to_img(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="Unsupported channel number: 2"):
        fkeras.utils.array_to_img(np.zeros((2, 2, 2)))
    fkeras.utils.save_img(tmp_path / "x.png", np.ones((2, 2, 3)))
    with pytest.raises(ValueError, match="color_mode"):
        fkeras.utils.load_img(tmp_path / "x.png", color_mode="cmyk")
    with pytest.raises(TypeError, match="path-like"):
        fkeras.utils.load_img(3)


def test_image_helpers_equal_keras(tmp_path, pil):
    keras = pytest.importorskip("keras")
    rgb = np.random.default_rng(2).integers(0, 256, (10, 7, 3)).astype("float32")
    fkeras.utils.save_img(tmp_path / "a.png", rgb, scale=False)
    for kwargs in ({"target_size": (5, 5), "keep_aspect_ratio": True},
                   {"target_size": (4, 6), "interpolation": "bicubic"},
                   {"color_mode": "rgba"}):
        mine = fkeras.utils.img_to_array(fkeras.utils.load_img(tmp_path / "a.png", **kwargs))
        theirs = keras.utils.img_to_array(keras.utils.load_img(tmp_path / "a.png", **kwargs))
        np.testing.assert_array_equal(mine, theirs)
    x = rgb / 7.0 - 3
    np.testing.assert_array_equal(np.asarray(fkeras.utils.array_to_img(x)),
                                  np.asarray(keras.utils.array_to_img(x)))


def test_missing_pillow_says_how_to_install(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "PIL", None)
    with pytest.raises(ImportError, match="pip install Pillow"):
        fkeras.utils.array_to_img(np.zeros((2, 2, 3)))


def test_take_map_prefetch_on_fkeras_datasets():
    data = np.arange(40, dtype="float32")[:, None]
    ds = fkeras.utils.timeseries_dataset_from_array(data, np.arange(40), 4, batch_size=5)
    first = list(ds.take(2))
    assert len(ds.take(2)) == 2 and len(first) == 2 and first[1][1].tolist() == [5, 6, 7, 8, 9]
    scaled = ds.map(lambda x, y: (x * 2, y)).prefetch(2)
    assert len(scaled) == len(ds) == 8
    for (x2, y2), (x, y) in zip(scaled, ds):
        np.testing.assert_array_equal(x2, 2 * x)
        np.testing.assert_array_equal(y2, y)
    assert len(list(ds.take(-1))) == 8
    inp = fkeras.Input((4, 1))
    model = fkeras.Model(inp, fkeras.layers.Dense(1)(fkeras.layers.Flatten()(inp)))
    model.compile("sgd", "mse")
    assert model.predict(scaled.map(lambda x, y: x), verbose=0).shape == (37, 1)
