"""MobileNetV2 (Sandler et al., 2018): inverted residual blocks with linear bottlenecks, with
`preprocess_input` ("tf" convention) and `decode_predictions`."""

import warnings

from fkeras import layers
from fkeras.applications import _builder, _docs, imagenet_utils
from fkeras.applications.imagenet_utils import decode_predictions
from fkeras.applications.mobilenet import default_size, rows_cols

SIZES = (96, 128, 160, 192, 224)
ALPHAS = (0.35, 0.5, 0.75, 1.0, 1.3, 1.4)
# (filters, stride, expansion) of the 17 inverted residual blocks
BLOCKS = ((16, 1, 1), (24, 2, 6), (24, 1, 6), (32, 2, 6), (32, 1, 6), (32, 1, 6), (64, 2, 6),
          (64, 1, 6), (64, 1, 6), (64, 1, 6), (96, 1, 6), (96, 1, 6), (96, 1, 6), (160, 2, 6),
          (160, 1, 6), (160, 1, 6), (320, 1, 6))


def make_divisible(v, divisor, min_value=None):
    """`v` rounded to the nearest multiple of `divisor` (at least `min_value`), never more
    than 10% below `v`."""
    min_value = divisor if min_value is None else min_value
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    return new_v + divisor if new_v < 0.9 * v else new_v


def _bn(name):
    return layers.BatchNormalization(axis=_builder.channel_axis(), epsilon=1e-3,
                                     momentum=0.999, name=name)


def _inverted_res_block(inputs, expansion, stride, alpha, filters, block_id):
    in_channels = inputs.shape[_builder.channel_axis()]
    pointwise_filters = make_divisible(int(filters * alpha), 8)
    x = inputs
    prefix = f"block_{block_id}_" if block_id else "expanded_conv_"
    if block_id:
        x = layers.Conv2D(expansion * in_channels, kernel_size=1, padding="same",
                          use_bias=False, activation=None, name=f"{prefix}expand")(x)
        x = _bn(f"{prefix}expand_BN")(x)
        x = layers.ReLU(6.0, name=f"{prefix}expand_relu")(x)
    if stride == 2:
        x = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(x, 3),
                                 name=f"{prefix}pad")(x)
    x = layers.DepthwiseConv2D(kernel_size=3, strides=stride, activation=None, use_bias=False,
                               padding="same" if stride == 1 else "valid",
                               name=f"{prefix}depthwise")(x)
    x = _bn(f"{prefix}depthwise_BN")(x)
    x = layers.ReLU(6.0, name=f"{prefix}depthwise_relu")(x)
    x = layers.Conv2D(pointwise_filters, kernel_size=1, padding="same", use_bias=False,
                      activation=None, name=f"{prefix}project")(x)
    x = _bn(f"{prefix}project_BN")(x)
    if in_channels == pointwise_filters and stride == 1:
        return layers.Add(name=f"{prefix}add")([inputs, x])
    return x


def _size_source(input_shape, input_tensor):
    """Keras picks the default size from `input_shape`, else from a symbolic input tensor."""
    if input_shape is None and input_tensor is not None:
        return tuple(input_tensor.shape[1:]) if len(input_tensor.shape) == 4 else None
    return input_shape


def MobileNetV2(input_shape=None, alpha=1.0, include_top=True, weights="imagenet",
                input_tensor=None, pooling=None, classes=1000,
                classifier_activation="softmax", name=None):
    _builder.check_weights(weights, include_top, classes)
    size = default_size(_size_source(input_shape, input_tensor), SIZES)
    input_shape = _builder.input_shape_for(input_shape, size, 32, include_top, weights)
    rows, cols = rows_cols(input_shape)
    if weights == "imagenet":
        if alpha not in ALPHAS:
            raise ValueError("If imagenet weights are being loaded, alpha must be one of "
                             "`0.35`, `0.50`, `0.75`, `1.0`, `1.3` or `1.4` only; Received "
                             f"`alpha={alpha}`")
        if rows != cols or rows not in SIZES:
            rows = 224
            warnings.warn("`input_shape` is undefined or non-square, or `rows` is not in [96, "
                          "128, 160, 192, 224]. Weights for input shape (224, 224) will be "
                          "loaded as the default.", stacklevel=2)
    img_input = _builder.image_input(input_tensor, input_shape)
    x = layers.Conv2D(make_divisible(32 * alpha, 8), kernel_size=3, strides=(2, 2),
                      padding="same", use_bias=False, name="Conv1")(img_input)
    x = _bn("bn_Conv1")(x)
    x = layers.ReLU(6.0, name="Conv1_relu")(x)
    for block_id, (filters, stride, expansion) in enumerate(BLOCKS):
        x = _inverted_res_block(x, expansion, stride, alpha, filters, block_id)
    last = make_divisible(1280 * alpha, 8) if alpha > 1.0 else 1280
    x = layers.Conv2D(last, kernel_size=1, use_bias=False, name="Conv_1")(x)
    x = _bn("Conv_1_bn")(x)
    x = layers.ReLU(6.0, name="out_relu")(x)
    x = _builder.head(x, include_top, pooling, classes, classifier_activation, weights)
    name = name or f"mobilenetv2_{alpha:0.2f}_{rows}"
    suffix = "" if include_top else "_no_top"
    entry = _builder.imagenet_entry(
        "mobilenet_v2",
        f"mobilenet_v2_weights_tf_dim_ordering_tf_kernels_{float(alpha)}_{rows}{suffix}.h5")
    return _builder.finish(input_tensor, img_input, x, name, weights, entry)


_docs.document(MobileNetV2, "Instantiates the MobileNetV2 architecture (default input "
                            "224x224; ImageNet weights for\n    96, 128, 160, 192 and 224, at "
                            "least 32x32).", extra="""
        alpha: width multiplier (ImageNet weights for 0.35, 0.5, 0.75, 1.0, 1.3, 1.4).""")


def preprocess_input(x, data_format=None):
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


_docs.preprocess_doc(preprocess_input, "scaled to [-1, 1] (\"tf\" mode).")

__all__ = ["MobileNetV2", "decode_predictions", "preprocess_input"]
