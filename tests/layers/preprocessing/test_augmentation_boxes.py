"""Bounding boxes follow the pixels: for every layer that moves pixels, a box transformed by
the layer equals (to the pixel) the bounding box of the same rectangle drawn as a mask and
transformed as a segmentation mask with the same transformation; layers that only change
values keep boxes; CutMix and RandomElasticTransform refuse them, as Keras 3 does."""

import numpy as np
import pytest

from fkeras import layers

H, W = 24, 32
BOX = np.array([8.0, 6.0, 20.0, 15.0])  # xyxy, pixel edges

MOVING = {
    "RandomRotation": lambda: layers.RandomRotation(0.1, fill_mode="constant",
                                                    interpolation="nearest", seed=3),
    "RandomShear": lambda: layers.RandomShear(0.25, 0.2, fill_mode="constant",
                                              interpolation="nearest", seed=3),
    "RandomPerspective": lambda: layers.RandomPerspective(factor=1.0, scale=0.4,
                                                          interpolation="nearest", seed=3),
    "RandomCrop": lambda: layers.RandomCrop(16, 20, seed=3),
    "RandomTranslation": lambda: layers.RandomTranslation(0.2, 0.2, fill_mode="constant",
                                                          interpolation="nearest", seed=3),
}


def _mask_box(mask):
    ys, xs = np.nonzero(mask[..., 0] > 0.5)
    return np.array([xs.min(), ys.min(), xs.max() + 1, ys.max() + 1], np.float64)


@pytest.mark.parametrize("name", list(MOVING))
def test_boxes_follow_the_pixels(name):
    layer = MOVING[name]()
    layer.bounding_box_format = "xyxy"
    mask = np.zeros((4, H, W, 1), np.float32)
    mask[:, 6:15, 8:20] = 1.0
    t = layer.get_random_transformation({"images": mask}, training=True)
    moved = layer.transform_segmentation_masks(mask, t, training=True)
    boxes = {"boxes": np.tile(BOX, (4, 1, 1)).astype(np.float32),
             "labels": np.zeros((4, 1), np.int32)}
    got = layer.transform_bounding_boxes(boxes, t, training=True)["boxes"]
    for i in range(4):
        np.testing.assert_allclose(got[i, 0], _mask_box(moved[i]), atol=1.5)


def test_rand_augment_moves_boxes_through_its_picked_operations():
    layer = layers.RandAugment(value_range=(0, 1), num_ops=3, factor=0.8, seed=5,
                               interpolation="nearest")
    layer.bounding_box_format = "xyxy"
    x = np.zeros((2, H, W, 3), np.float32)
    x[:, 6:15, 8:20] = 1.0
    boxes = {"boxes": np.tile(BOX, (2, 1, 1)).astype(np.float32),
             "labels": np.zeros((2, 1), np.int32)}
    moved_any = False
    for seed in range(6):
        t = layer.get_random_transformation({"images": x}, training=True, seed=seed)
        got = layer.transform_bounding_boxes(boxes, t, training=True)["boxes"]
        names = [layer._AUGMENT_LAYERS[int(i)] for i in np.ravel(t["layer_idxes"])]
        if not any(n in ("random_shear", "random_translation", "random_rotation")
                   for n in names):
            np.testing.assert_array_equal(got, boxes["boxes"])
        else:
            moved_any |= not np.allclose(got, boxes["boxes"])
    assert moved_any


@pytest.mark.parametrize("name", ["RandomBrightness", "RandomContrast", "RandomGrayscale",
                                  "RandomInvert", "Solarization", "RandomErasing"])
def test_value_layers_keep_boxes(name):
    kwargs = {"RandomBrightness": {"factor": 0.2}, "RandomContrast": {"factor": 0.2}}
    layer = getattr(layers, name)(**kwargs.get(name, {}), bounding_box_format="xyxy")
    x = np.random.default_rng(0).uniform(0, 255, (2, H, W, 3)).astype(np.float32)
    boxes = {"boxes": np.tile(BOX, (2, 1, 1)).astype(np.float32),
             "labels": np.zeros((2, 1), np.int32)}
    out = layer({"images": x, "bounding_boxes": boxes}, training=True)
    np.testing.assert_array_equal(out["bounding_boxes"]["boxes"], boxes["boxes"])


@pytest.mark.parametrize("layer", [lambda: layers.CutMix(seed=1),
                                   lambda: layers.RandomElasticTransform(seed=1)])
def test_keras_refusals_kept(layer):
    with pytest.raises(NotImplementedError, match="as in Keras 3"):
        layer().transform_bounding_boxes({"boxes": np.zeros((1, 1, 4))}, None)
