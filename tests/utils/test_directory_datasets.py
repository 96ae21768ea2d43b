"""image_dataset_from_directory / text_dataset_from_directory on real folders made in the test:
label inference, class_names, label modes, file order, seeds and splits (compared with Keras
3.15's own indexing and split when keras is importable), pixel values (Keras's Pillow path
when importable, else a NumPy reference), and training from the result."""

import os

import numpy as np
import pytest

import fkeras

Image = pytest.importorskip("PIL.Image", reason="Pillow is not installed (the `image` extra)")

CLASSES = {"cats": 5, "dogs": 4, "zebra": 3}
FORMATS = (".bmp", ".gif", ".jpeg", ".jpg", ".png")


def pixels(seed, h, w, channels=3):
    return np.random.default_rng(seed).integers(0, 256, (h, w, channels), dtype=np.uint8)


@pytest.fixture
def image_dir(tmp_path):
    """3 classes of PNGs of varied sizes, one in a nested folder each, plus distractors."""
    root = tmp_path / "images"
    seed = 0
    for name, count in CLASSES.items():
        (root / name / "nested").mkdir(parents=True)
        for i in range(count):
            seed += 1
            where = root / name / ("nested" if i == 0 else "") / f"img{i}.png"
            Image.fromarray(pixels(seed, 6 + seed % 7, 9 + seed % 5)).save(where)
        (root / name / "readme.txt").write_text("not an image")
    (root / ".hidden").mkdir()
    Image.fromarray(pixels(99, 4, 4)).save(root / ".hidden" / "x.png")
    Image.fromarray(pixels(98, 4, 4)).save(root / "top_level.png")  # not in a class folder
    return str(root)


@pytest.fixture
def text_dir(tmp_path):
    root = tmp_path / "texts"
    for label, name in enumerate(["neg", "pos"]):
        (root / name).mkdir(parents=True)
        for i in range(5):
            (root / name / f"{i}.txt").write_text(f"{name} review {i} é" * (i + 1),
                                                  encoding="utf-8")
    return str(root)


def collect(ds):
    xs, ys = zip(*ds)
    return np.concatenate(xs), np.concatenate(ys)


def test_label_inference_and_file_order(image_dir, capsys):
    ds = fkeras.utils.image_dataset_from_directory(image_dir, image_size=(8, 8),
                                                   batch_size=5, shuffle=False)
    assert "Found 12 files belonging to 3 classes." in capsys.readouterr().out
    assert ds.class_names == ["cats", "dogs", "zebra"] and len(ds) == 3
    rel = [os.path.relpath(p, image_dir) for p in ds.file_paths]
    assert rel[:5] == ["cats/img1.png", "cats/img2.png", "cats/img3.png", "cats/img4.png",
                       "cats/nested/img0.png"]
    x, y = collect(ds)
    assert x.shape == (12, 8, 8, 3) and x.dtype == np.float32 and 0 <= x.min() <= x.max() <= 255
    assert y.dtype == np.int32 and y.tolist() == [0] * 5 + [1] * 4 + [2] * 3


@pytest.mark.parametrize("label_mode,shape,dtype", [
    ("categorical", (12, 3), np.float32), (None, None, None)])
def test_label_modes(image_dir, label_mode, shape, dtype):
    ds = fkeras.utils.image_dataset_from_directory(
        image_dir, image_size=(4, 4), label_mode=label_mode, shuffle=False, verbose=False)
    if label_mode is None:
        x = np.concatenate(list(ds))
        assert x.shape == (14, 4, 4, 3)  # no labels: every image of the tree (Keras)
        return
    x, y = collect(ds)
    assert y.shape == shape and y.dtype == dtype
    np.testing.assert_array_equal(y.argmax(1), [0] * 5 + [1] * 4 + [2] * 3)


def test_binary_class_names_and_explicit_labels(image_dir):
    ds = fkeras.utils.image_dataset_from_directory(
        image_dir, image_size=(4, 4), class_names=["zebra", "cats"], label_mode="binary",
        shuffle=False, verbose=False)
    x, y = collect(ds)
    assert ds.class_names == ["zebra", "cats"] and y.shape == (8, 1) and y.dtype == np.float32
    assert y[:, 0].tolist() == [0] * 3 + [1] * 5
    with pytest.raises(ValueError, match="exactly 2"):
        fkeras.utils.image_dataset_from_directory(image_dir, label_mode="binary",
                                                  verbose=False)
    with pytest.raises(ValueError, match="did not match the names of the subdirectories"):
        fkeras.utils.image_dataset_from_directory(image_dir, class_names=["cats", "cows"])
    labels = list(range(14))  # labels given: every image of the tree, hidden folders too
    ds = fkeras.utils.image_dataset_from_directory(image_dir, labels=labels, image_size=(4, 4),
                                                   shuffle=False, verbose=False)
    _, y = collect(ds)
    assert y.tolist() == labels and ds.class_names == [str(i) for i in labels]
    assert os.path.relpath(ds.file_paths[-1], image_dir) == "zebra/nested/img0.png"
    with pytest.raises(ValueError, match=r"needs labels in \[0, 2\)"):
        fkeras.utils.image_dataset_from_directory(image_dir, labels=[0] * 13 + [20],
                                                  label_mode="categorical", verbose=False)


@pytest.mark.parametrize("split,seed", [(0.25, 3), (0.5, 11), (0.2, 1337)])
def test_split_and_seed_match_keras(image_dir, split, seed):
    train, val = fkeras.utils.image_dataset_from_directory(
        image_dir, image_size=(4, 4), validation_split=split, subset="both", seed=seed,
        verbose=False)
    alone = fkeras.utils.image_dataset_from_directory(
        image_dir, image_size=(4, 4), validation_split=split, subset="validation", seed=seed,
        verbose=False)
    assert alone.file_paths == val.file_paths
    assert not set(train.file_paths) & set(val.file_paths)
    assert len(train.file_paths) + len(val.file_paths) == 12
    assert len(val.file_paths) == int(split * 12)
    pytest.importorskip("keras")
    from keras.src.utils import dataset_utils

    paths, labels, names = dataset_utils.index_directory(
        image_dir, "inferred", formats=FORMATS, shuffle=True, seed=seed, verbose=False)
    for part, ds in (("training", train), ("validation", val)):
        want_paths, want_labels = dataset_utils.get_training_or_validation_split(
            paths, labels, split, part)
        assert ds.file_paths == want_paths
        assert ds._labels.tolist() == want_labels.tolist()  # each file keeps Keras's label
        got = np.concatenate([y for _, y in ds]).tolist()
        assert sorted(got) == sorted(want_labels.tolist())
    assert names == train.class_names


def test_pixels_equal_keras_pillow_path(image_dir):
    keras = pytest.importorskip("keras")
    from keras.src.utils import image_dataset_utils as kidu

    cases = [dict(color_mode="rgb", interpolation="bilinear"),
             dict(color_mode="grayscale", interpolation="nearest", crop_to_aspect_ratio=True),
             dict(color_mode="rgba", interpolation="bicubic", pad_to_aspect_ratio=True),
             dict(color_mode="rgb", interpolation="bilinear", data_format="channels_first")]
    for options in cases:
        ds = fkeras.utils.image_dataset_from_directory(
            image_dir, image_size=(7, 5), shuffle=False, batch_size=None, verbose=False,
            **options)
        channels = {"rgb": 3, "rgba": 4, "grayscale": 1}[options["color_mode"]]
        for path, (x, _) in zip(ds.file_paths, ds):
            want = kidu._load_image_grain(
                path, (7, 5), channels, options["interpolation"],
                options.get("data_format", "channels_last"),
                options.get("crop_to_aspect_ratio", False),
                options.get("pad_to_aspect_ratio", False))
            np.testing.assert_allclose(x, keras.ops.convert_to_numpy(want), atol=2e-3)


def test_pixels_reference_without_keras(tmp_path):
    """An upscale by 2 (bilinear, half-pixel centres) of a known 2x2 image."""
    (tmp_path / "a").mkdir()
    Image.fromarray(np.array([[0, 100], [200, 40]], np.uint8), "L").save(tmp_path / "a" / "x.png")
    ds = fkeras.utils.image_dataset_from_directory(
        str(tmp_path), image_size=(4, 4), color_mode="grayscale", batch_size=None,
        shuffle=False, verbose=False)
    x, y = next(iter(ds))
    axis = np.array([[1, 0], [0.75, 0.25], [0.25, 0.75], [0, 1]])
    np.testing.assert_allclose(x[..., 0], axis @ np.array([[0, 100], [200, 40]]) @ axis.T,
                               atol=1e-4)
    assert y == 0


def test_shuffle_reorders_each_pass_and_keeps_pairs(image_dir):
    ds = fkeras.utils.image_dataset_from_directory(image_dir, image_size=(5, 5), seed=7,
                                                   batch_size=4, verbose=False)
    plain = fkeras.utils.image_dataset_from_directory(image_dir, image_size=(5, 5),
                                                      shuffle=False, verbose=False)
    px, py = collect(plain)
    label_of = {x.tobytes(): y for x, y in zip(px, py)}
    orders = []
    for _ in range(2):
        x, y = collect(ds)
        assert [label_of[a.tobytes()] for a in x] == y.tolist()
        orders.append([a.tobytes() for a in x])
    assert orders[0] != orders[1] and sorted(orders[0]) == sorted(orders[1])


def test_argument_errors(image_dir):
    f = fkeras.utils.image_dataset_from_directory
    with pytest.raises(ValueError, match="must provide a `seed`"):
        f(image_dir, validation_split=0.2, subset="training")
    with pytest.raises(ValueError, match="`validation_split` must be set"):
        f(image_dir, subset="training")
    with pytest.raises(ValueError, match="between 0 and 1"):
        f(image_dir, validation_split=1.5, subset="training", seed=1)
    with pytest.raises(ValueError, match="`color_mode` must be one of"):
        f(image_dir, color_mode="cmyk")
    with pytest.raises(ValueError, match="needs TensorFlow"):
        f(image_dir, interpolation="lanczos3")
    with pytest.raises(ValueError, match="should be one of"):
        f(image_dir, interpolation="cubic")
    with pytest.raises(ValueError, match="Only one of"):
        f(image_dir, crop_to_aspect_ratio=True, pad_to_aspect_ratio=True)
    with pytest.raises(ValueError, match="`label_mode` argument must be"):
        f(image_dir, label_mode="sparse")
    with pytest.raises(ValueError, match="list/tuple of integer labels"):
        f(image_dir, labels="folders")
    with pytest.raises(ValueError, match="match the number of files"):
        f(image_dir, labels=[0, 1])
    with pytest.raises(ValueError, match="leaves no file"):
        f(image_dir, validation_split=0.05, subset="training", seed=1, verbose=False)


def test_fit_from_an_image_directory(image_dir):
    train, val = fkeras.utils.image_dataset_from_directory(
        image_dir, image_size=(8, 8), batch_size=4, validation_split=0.25, subset="both",
        seed=5, verbose=False)
    inp = fkeras.Input((8, 8, 3))
    x = fkeras.layers.Flatten()(inp)
    model = fkeras.Model(inp, fkeras.layers.Dense(3, activation="softmax")(x))
    model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    history = model.fit(train, validation_data=val, epochs=2, verbose=0)
    assert set(history.history) == {"loss", "accuracy", "val_loss", "val_accuracy"}
    assert model.predict(val, verbose=0).shape == (3, 3)


def test_text_directory(text_dir, capsys):
    train, val = fkeras.utils.text_dataset_from_directory(
        text_dir, batch_size=3, validation_split=0.3, subset="both", seed=2, max_length=12)
    out = capsys.readouterr().out
    assert "Found 10 files belonging to 2 classes." in out
    assert "Using 7 files for training." in out and "Using 3 files for validation." in out
    assert train.class_names == ["neg", "pos"]
    x, y = collect(train)
    assert x.dtype == object and all(isinstance(s, str) and len(s) <= 12 for s in x)
    for text, label in zip(x, y):
        assert text.startswith(train.class_names[label])
    full = fkeras.utils.text_dataset_from_directory(text_dir, label_mode=None, shuffle=False,
                                                    verbose=False)
    texts = np.concatenate(list(full))
    assert texts[0] == "neg review 0 é" and len(texts[4]) == len("neg review 4 é") * 5
    pytest.importorskip("keras")
    from keras.src.utils import dataset_utils

    paths, _, _ = dataset_utils.index_directory(text_dir, "inferred", formats=(".txt",),
                                                shuffle=True, seed=2, verbose=False)
    assert train.file_paths + val.file_paths == paths
