"""MobileNet (Howard et al., 2017): depthwise-separable convolutions with a width multiplier
`alpha`, with `preprocess_input` ("tf" convention) and `decode_predictions`."""

import warnings

from fkeras import config, layers
from fkeras.applications import _builder, _docs, imagenet_utils
from fkeras.applications.imagenet_utils import decode_predictions

SIZES = (128, 160, 192, 224)
ALPHA_TEXT = {1.0: "1_0", 0.75: "7_5", 0.5: "5_0", 0.25: "2_5"}
# (pointwise filters, strides) of the 13 depthwise-separable blocks
BLOCKS = ((64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), (512, 1), (512, 1),
          (512, 1), (512, 1), (512, 1), (1024, 2), (1024, 1))


def rows_cols(input_shape):
    """(rows, cols) of a 3D input shape in the current data format."""
    if config.image_data_format() == "channels_first":
        return input_shape[1], input_shape[2]
    return input_shape[0], input_shape[1]


def default_size(input_shape, sizes):
    """The input's size when it is square and one of `sizes`, else 224 (Keras's rule)."""
    if input_shape is None:
        return 224
    rows, cols = rows_cols(input_shape)
    return rows if rows == cols and rows in sizes else 224


def _conv_block(x, filters, alpha):
    x = layers.Conv2D(int(filters * alpha), (3, 3), padding="same", use_bias=False,
                      strides=(2, 2), name="conv1")(x)
    x = layers.BatchNormalization(axis=_builder.channel_axis(), name="conv1_bn")(x)
    return layers.ReLU(6.0, name="conv1_relu")(x)


def _depthwise_conv_block(x, filters, alpha, depth_multiplier, stride, block_id):
    axis = _builder.channel_axis()
    if stride != 1:
        x = layers.ZeroPadding2D(((0, 1), (0, 1)), name=f"conv_pad_{block_id}")(x)
    x = layers.DepthwiseConv2D((3, 3), padding="same" if stride == 1 else "valid",
                               depth_multiplier=depth_multiplier, strides=(stride, stride),
                               use_bias=False, name=f"conv_dw_{block_id}")(x)
    x = layers.BatchNormalization(axis=axis, name=f"conv_dw_{block_id}_bn")(x)
    x = layers.ReLU(6.0, name=f"conv_dw_{block_id}_relu")(x)
    x = layers.Conv2D(int(filters * alpha), (1, 1), padding="same", use_bias=False,
                      strides=(1, 1), name=f"conv_pw_{block_id}")(x)
    x = layers.BatchNormalization(axis=axis, name=f"conv_pw_{block_id}_bn")(x)
    return layers.ReLU(6.0, name=f"conv_pw_{block_id}_relu")(x)


def _check_imagenet(alpha, depth_multiplier, rows, cols):
    if depth_multiplier != 1:
        raise ValueError("If imagenet weights are being loaded, depth multiplier must be 1.  "
                         f"Received depth_multiplier={depth_multiplier}")
    if alpha not in ALPHA_TEXT:
        raise ValueError("If imagenet weights are being loaded, alpha can be one of`0.25`, "
                         f"`0.50`, `0.75` or `1.0` only.  Received alpha={alpha}")
    if rows != cols or rows not in SIZES:
        warnings.warn("`input_shape` is undefined or non-square, or `rows` is not in [128, "
                      "160, 192, 224]. Weights for input shape (224, 224) will be loaded as "
                      "the default.", stacklevel=3)
        return 224
    return rows


def MobileNet(input_shape=None, alpha=1.0, depth_multiplier=1, dropout=1e-3, include_top=True,
              weights="imagenet", input_tensor=None, pooling=None, classes=1000,
              classifier_activation="softmax", name=None):
    _builder.check_weights(weights, include_top, classes)
    input_shape = _builder.input_shape_for(input_shape, default_size(input_shape, SIZES), 32,
                                           include_top, weights)
    rows, cols = rows_cols(input_shape)
    if weights == "imagenet":
        rows = _check_imagenet(alpha, depth_multiplier, rows, cols)
    img_input = _builder.image_input(input_tensor, input_shape)
    x = _conv_block(img_input, 32, alpha)
    for block_id, (filters, stride) in enumerate(BLOCKS, start=1):
        x = _depthwise_conv_block(x, filters, alpha, depth_multiplier, stride, block_id)
    if include_top:
        x = layers.GlobalAveragePooling2D(keepdims=True)(x)
        x = layers.Dropout(dropout, name="dropout")(x)
        x = layers.Conv2D(classes, (1, 1), padding="same", name="conv_preds")(x)
        x = layers.Reshape((classes,), name="reshape_2")(x)
        imagenet_utils.validate_activation(classifier_activation, weights)
        x = layers.Activation(activation=classifier_activation, name="predictions")(x)
    else:
        x = _builder.head(x, False, pooling, classes, classifier_activation, weights)
    name = name or f"mobilenet_{alpha:0.2f}_{rows}"
    entry = None
    if weights == "imagenet":
        fname = f"mobilenet_{ALPHA_TEXT[alpha]}_{rows}_tf{'' if include_top else '_no_top'}.h5"
        entry = _builder.imagenet_entry("mobilenet", fname)
    return _builder.finish(input_tensor, img_input, x, name, weights, entry)


_docs.document(MobileNet, "Instantiates the MobileNet architecture (default input 224x224; "
                          "ImageNet weights for\n    128, 160, 192 and 224, at least 32x32).",
               extra="""
        alpha: width multiplier: < 1.0 narrows, > 1.0 widens every layer.
        depth_multiplier: depth multiplier of the depthwise convolutions.
        dropout: dropout rate before the classifier.""")


def preprocess_input(x, data_format=None):
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


_docs.preprocess_doc(preprocess_input, "scaled to [-1, 1] (\"tf\" mode).")

__all__ = ["MobileNet", "decode_predictions", "preprocess_input"]
