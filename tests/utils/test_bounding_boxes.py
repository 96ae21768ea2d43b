"""fkeras.utils.bounding_boxes against hand-computed values and real Keras (when installed)."""

import numpy as np
import pytest

from fkeras.utils import bounding_boxes as bb

RNG = np.random.default_rng(3)
FORMATS = list(bb.SUPPORTED_FORMATS)


def _random_xyxy(shape=(5,)):
    x1 = RNG.uniform(0, 50, shape)
    y1 = RNG.uniform(0, 40, shape)
    return np.stack([x1, y1, x1 + RNG.uniform(1, 30, shape), y1 + RNG.uniform(1, 20, shape)],
                    -1).astype(np.float32)


def _keras_bb():
    keras = pytest.importorskip("keras")
    return keras, keras.utils.bounding_boxes


def _np(x):
    return np.asarray(x.detach().cpu() if hasattr(x, "detach") else x)


def test_convert_format_by_hand():
    box = np.array([[10.0, 20.0, 30.0, 60.0]])
    np.testing.assert_allclose(bb.convert_format(box, "xyxy", "center_xywh"), [[20, 40, 20, 40]])
    np.testing.assert_allclose(bb.convert_format(box, "xyxy", "yxyx"), [[20, 10, 60, 30]])
    np.testing.assert_allclose(bb.convert_format(box, "xyxy", "rel_xywh", height=100, width=50),
                               [[0.2, 0.2, 0.4, 0.4]])


@pytest.mark.parametrize("source", FORMATS)
@pytest.mark.parametrize("target", FORMATS)
def test_convert_format_round_trip_and_keras(source, target):
    xyxy = _random_xyxy((2, 4))
    boxes = bb.convert_format(xyxy, "xyxy", source, height=60, width=80)
    out = bb.convert_format(boxes, source, target, height=60, width=80)
    np.testing.assert_allclose(bb.convert_format(out, target, "xyxy", height=60, width=80), xyxy,
                               rtol=1e-5, atol=1e-4)
    try:
        _, kbb = _keras_bb()
    except pytest.skip.Exception:
        return
    want = _np(kbb.convert_format(boxes.copy(), source, target, height=60, width=80))
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


def test_convert_format_errors():
    with pytest.raises(ValueError, match="last dimension of 4"):
        bb.convert_format(np.zeros((2, 3)), "xyxy", "yxyx")
    with pytest.raises(ValueError, match="Invalid source or target format"):
        bb.convert_format(np.zeros((2, 4)), "xyxy", "corners")
    with pytest.raises(ValueError, match="must receive `height` and `width`"):
        bb.convert_format(np.zeros((2, 4)), "xyxy", "rel_xyxy")


def test_iou_by_hand_and_masking():
    a = np.array([[0.0, 0.0, 2.0, 2.0], [-1.0, -1.0, -1.0, -1.0]])
    b = np.array([[1.0, 1.0, 3.0, 3.0], [0.0, 0.0, 2.0, 2.0]])
    iou = bb.compute_iou(a, b, "xyxy")
    np.testing.assert_allclose(iou[0], [1 / 7, 1.0], rtol=1e-5)
    masked = bb.compute_iou(a, b, "xyxy", use_masking=True, mask_val=-5)
    np.testing.assert_array_equal(masked[1], [-5, -5])


@pytest.mark.parametrize("shapes", [((4,), (3,)), ((2, 4), (2, 3)), ((2, 4), (3,)),
                                    ((4,), (2, 3))])
@pytest.mark.parametrize("use_masking", [False, True])
def test_iou_matches_keras(shapes, use_masking):
    keras, kbb = _keras_bb()
    a, b = _random_xyxy(shapes[0]), _random_xyxy(shapes[1])
    a[..., 0, :] = -1.0
    for fmt in ("xyxy", "center_yxhw", "rel_xywh"):
        a_f = bb.convert_format(a, "xyxy", fmt, height=60, width=80)
        b_f = bb.convert_format(b, "xyxy", fmt, height=60, width=80)
        got = bb.compute_iou(a_f, b_f, fmt, use_masking=use_masking, image_shape=(60, 80, 3))
        if use_masking and a_f.ndim != b_f.ndim:
            # Keras 3.15 cannot mask mixed ranks: compare with the batched broadcast instead.
            batch = max(a_f.shape[0] if a_f.ndim == 3 else 0, b_f.shape[0] if b_f.ndim == 3 else 0)
            a_f = np.broadcast_to(a_f, (batch,) + a_f.shape[-2:]).copy()
            b_f = np.broadcast_to(b_f, (batch,) + b_f.shape[-2:]).copy()
        want = _np(kbb.compute_iou(keras.ops.convert_to_tensor(a_f),
                                   keras.ops.convert_to_tensor(b_f), fmt,
                                   use_masking=use_masking, image_shape=(60, 80, 3)))
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_ciou_matches_keras():
    keras, kbb = _keras_bb()
    a, b = _random_xyxy((6,)), _random_xyxy((6,))
    a[0] = b[0]  # identical boxes: CIoU 1
    got = bb.compute_ciou(a, b, "xyxy")
    assert abs(got[0] - 1.0) < 1e-5
    want = _np(kbb.compute_ciou(keras.ops.convert_to_tensor(a), keras.ops.convert_to_tensor(b),
                                "xyxy"))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_clip_crop_pad_match_keras():
    keras, kbb = _keras_bb()
    boxes = np.array([[-10.0, -20.0, 150.0, 160.0], [50.0, 40.0, 70.0, 80.0],
                      [130.0, 10.0, 140.0, 20.0]], np.float32)
    labels = np.array([0, 1, 2])
    got = bb.clip_to_image_size({"boxes": boxes, "labels": labels}, height=100, width=120)
    want = kbb.clip_to_image_size({"boxes": keras.ops.convert_to_tensor(boxes),
                                   "labels": keras.ops.convert_to_tensor(labels)},
                                  height=100, width=120)
    np.testing.assert_allclose(got["boxes"], _np(want["boxes"]))
    np.testing.assert_array_equal(got["labels"], _np(want["labels"]))
    np.testing.assert_array_equal(got["labels"], [0, 1, -1])
    np.testing.assert_allclose(bb.crop(boxes, 10, 20, 40, 30),
                               _np(kbb.crop(keras.ops.convert_to_tensor(boxes), 10, 20, 40, 30)))
    np.testing.assert_allclose(bb.pad(boxes, 5, 7),
                               _np(kbb.pad(keras.ops.convert_to_tensor(boxes), 5, 7)))


def test_affine_transform_matches_keras_and_identity():
    keras, kbb = _keras_bb()
    boxes = _random_xyxy((2, 3))
    ones, zeros = np.ones(2, np.float32), np.zeros(2, np.float32)
    same = bb.affine_transform(boxes, zeros, zeros, zeros, ones, zeros, zeros, 60, 80)
    np.testing.assert_allclose(same, boxes, rtol=1e-5, atol=1e-4)
    args = [np.array([30.0, -10.0], np.float32), np.array([0.1, 0.0], np.float32),
            np.array([0.0, -0.2], np.float32), np.array([1.2, 0.9], np.float32),
            np.array([5.0, 0.0], np.float32), np.array([0.0, 10.0], np.float32)]
    got = bb.affine_transform(boxes, *args, 60, 80, center_x=0.4)
    want = kbb.affine_transform(keras.ops.convert_to_tensor(boxes),
                                *[keras.ops.convert_to_tensor(a) for a in args], 60, 80,
                                center_x=0.4)
    np.testing.assert_allclose(got, _np(want), rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("encoding", ["center_yxhw", "center_xywh"])
@pytest.mark.parametrize("variance", [None, [0.1, 0.1, 0.2, 0.2]])
def test_deltas_round_trip_and_keras(encoding, variance):
    anchors, boxes = _random_xyxy((5,)), _random_xyxy((5,))
    deltas = bb.encode_box_to_deltas(anchors, boxes, "xyxy", "xyxy", encoding, variance)
    back = bb.decode_deltas_to_boxes(anchors, deltas, "xyxy", "xyxy", encoding, variance)
    np.testing.assert_allclose(back, boxes, rtol=1e-5, atol=1e-3)
    levels = bb.decode_deltas_to_boxes({"p3": anchors}, {"p3": deltas}, "xyxy", "xyxy",
                                       encoding, variance)
    np.testing.assert_allclose(levels["p3"], back)
    try:
        keras, kbb = _keras_bb()
    except pytest.skip.Exception:
        return
    want = _np(kbb.encode_box_to_deltas(keras.ops.convert_to_tensor(anchors),
                                        keras.ops.convert_to_tensor(boxes), "xyxy", "xyxy",
                                        encoding, variance))
    np.testing.assert_allclose(deltas, want, rtol=1e-5, atol=1e-5)
    want = _np(kbb.decode_deltas_to_boxes(keras.ops.convert_to_tensor(anchors),
                                          keras.ops.convert_to_tensor(deltas), "xyxy", "xyxy",
                                          encoding, variance))
    np.testing.assert_allclose(back, want, rtol=1e-5, atol=1e-3)


def test_delta_errors():
    with pytest.raises(ValueError, match="encoding_format"):
        bb.encode_box_to_deltas(np.zeros((1, 4)), np.zeros((1, 4)), "xyxy", "xyxy", "xyxy")
    with pytest.raises(ValueError, match="`variance` must be length 4"):
        bb.decode_deltas_to_boxes(np.zeros((1, 4)), np.zeros((1, 4)), "xyxy", "xyxy",
                                  variance=[1.0, 2.0])
    with pytest.raises(NotImplementedError, match="xyxy"):
        bb.crop(np.zeros((1, 4)), 0, 0, 1, 1, bounding_box_format="yxyx")
