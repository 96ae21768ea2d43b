"""MobileNetV3Small and MobileNetV3Large (Howard et al., 2019): inverted residual blocks with
squeeze-and-excitation and hard-swish, and their "minimalistic" variants (3x3 kernels, ReLU,
no squeeze-and-excitation). With `include_preprocessing=True` (the default) the model rescales
its [0, 255] inputs itself, so `preprocess_input` is the identity."""

import warnings

from fkeras import config, layers
from fkeras.applications import _builder, _docs, imagenet_utils
from fkeras.applications.imagenet_utils import decode_predictions
from fkeras.applications.mobilenet_v2 import make_divisible

HASHES = {
    "large_224_0.75_float": ("765b44a33ad4005b3ac83185abf1d0eb",
                             "40af19a13ebea4e2ee0c676887f69a2e"),
    "large_224_1.0_float": ("59e551e166be033d707958cf9e29a6a7",
                            "07fb09a5933dd0c8eaafa16978110389"),
    "large_minimalistic_224_1.0_float": ("675e7b876c45c57e9e63e6d90a36599c",
                                         "ec5221f64a2f6d1ef965a614bdae7973"),
    "small_224_0.75_float": ("cb65d4e5be93758266aa0a7f2c6708b7",
                             "ebdb5cc8e0b497cd13a7c275d475c819"),
    "small_224_1.0_float": ("8768d4c2e7dee89b9d02b2d03d65d862",
                            "d3e8ec802a04aa4fc771ee12a9a9b836"),
    "small_minimalistic_224_1.0_float": ("99cd97fb2fcdad2bf028eb838de69e37",
                                         "cde8136e733e811080d9fcd8a252f7e4"),
}
# (expansion, filters, kernel ("k": the variant's kernel), stride, squeeze-excite, activation
# ("relu" or "act": the variant's activation)) per block
SMALL = ((1, 16, 3, 2, True, "relu"), (72.0 / 16, 24, 3, 2, False, "relu"),
         (88.0 / 24, 24, 3, 1, False, "relu"), (4, 40, "k", 2, True, "act"),
         (6, 40, "k", 1, True, "act"), (6, 40, "k", 1, True, "act"),
         (3, 48, "k", 1, True, "act"), (3, 48, "k", 1, True, "act"),
         (6, 96, "k", 2, True, "act"), (6, 96, "k", 1, True, "act"),
         (6, 96, "k", 1, True, "act"))
LARGE = ((1, 16, 3, 1, False, "relu"), (4, 24, 3, 2, False, "relu"),
         (3, 24, 3, 1, False, "relu"), (3, 40, "k", 2, True, "relu"),
         (3, 40, "k", 1, True, "relu"), (3, 40, "k", 1, True, "relu"),
         (6, 80, 3, 2, False, "act"), (2.5, 80, 3, 1, False, "act"),
         (2.3, 80, 3, 1, False, "act"), (2.3, 80, 3, 1, False, "act"),
         (6, 112, 3, 1, True, "act"), (6, 112, 3, 1, True, "act"),
         (6, 160, "k", 2, True, "act"), (6, 160, "k", 1, True, "act"),
         (6, 160, "k", 1, True, "act"))


def _depth(v, divisor=8):
    return make_divisible(v, divisor)


def relu(x):
    return layers.ReLU()(x)


def hard_sigmoid(x):
    return layers.ReLU(6.0)(x + 3.0) * (1.0 / 6.0)


def hard_swish(x):
    return layers.Activation("hard_swish")(x)


def _bn(name):
    return layers.BatchNormalization(axis=_builder.channel_axis(), epsilon=1e-3,
                                     momentum=0.999, name=name)


def _se_block(inputs, filters, se_ratio, prefix):
    x = layers.GlobalAveragePooling2D(keepdims=True, name=f"{prefix}squeeze_excite_avg_pool")(
        inputs)
    x = layers.Conv2D(_depth(filters * se_ratio), kernel_size=1, padding="same",
                      name=f"{prefix}squeeze_excite_conv")(x)
    x = layers.ReLU(name=f"{prefix}squeeze_excite_relu")(x)
    x = layers.Conv2D(filters, kernel_size=1, padding="same",
                      name=f"{prefix}squeeze_excite_conv_1")(x)
    x = hard_sigmoid(x)
    return layers.Multiply(name=f"{prefix}squeeze_excite_mul")([inputs, x])


def _inverted_res_block(x, expansion, filters, kernel_size, stride, se_ratio, activation,
                        block_id):
    shortcut = x
    infilters = x.shape[_builder.channel_axis()]
    prefix = f"expanded_conv_{block_id}_" if block_id else "expanded_conv_"
    if block_id:
        x = layers.Conv2D(_depth(infilters * expansion), kernel_size=1, padding="same",
                          use_bias=False, name=f"{prefix}expand")(x)
        x = activation(_bn(f"{prefix}expand_bn")(x))
    if stride == 2:
        x = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(x, kernel_size),
                                 name=f"{prefix}depthwise_pad")(x)
    x = layers.DepthwiseConv2D(kernel_size, strides=stride,
                               padding="same" if stride == 1 else "valid", use_bias=False,
                               name=f"{prefix}depthwise")(x)
    x = activation(_bn(f"{prefix}depthwise_bn")(x))
    if se_ratio:
        x = _se_block(x, _depth(infilters * expansion), se_ratio, prefix)
    x = layers.Conv2D(filters, kernel_size=1, padding="same", use_bias=False,
                      name=f"{prefix}project")(x)
    x = _bn(f"{prefix}project_bn")(x)
    if stride == 1 and infilters == filters:
        x = layers.Add(name=f"{prefix}add")([shortcut, x])
    return x


def _input_shape(input_shape, input_tensor):
    """Keras's rules: the tensor's size (rows and cols swapped, as Keras writes it), else
    (None, None, 3); then at least 32x32."""
    first = config.image_data_format() == "channels_first"
    if input_shape is None and input_tensor is not None:
        rows, cols = input_tensor.shape[2:4] if first else input_tensor.shape[1:3]
        input_shape = (3, cols, rows) if first else (cols, rows, 3)
    if input_shape is None:
        input_shape = (3, None, None) if first else (None, None, 3)
    rows, cols = (input_shape[1], input_shape[2]) if first else (input_shape[0],
                                                                  input_shape[1])
    if rows and cols and (rows < 32 or cols < 32):
        raise ValueError(f"Input size must be at least 32x32; Received `input_shape={input_shape}`")
    return input_shape, rows, cols


def MobileNetV3(blocks, last_point_ch, input_shape=None, alpha=1.0, model_type="large",
                minimalistic=False, include_top=True, weights="imagenet", input_tensor=None,
                classes=1000, pooling=None, dropout_rate=0.2, classifier_activation="softmax",
                include_preprocessing=True, name=None):
    """The MobileNetV3 builder: `blocks` is SMALL or LARGE."""
    _builder.check_weights(weights, include_top, classes)
    input_shape, rows, cols = _input_shape(input_shape, input_tensor)
    if weights == "imagenet":
        if (not minimalistic and alpha not in (0.75, 1.0)) or (minimalistic and alpha != 1.0):
            raise ValueError("If imagenet weights are being loaded, alpha can be one of `0.75`, "
                             "`1.0` for non minimalistic or `1.0` for minimalistic only.")
        if rows != cols or rows != 224:
            warnings.warn("`input_shape` is undefined or non-square, or `rows` is not 224. "
                          "Weights for input shape (224, 224) will be loaded as the default.",
                          stacklevel=3)
    img_input = _builder.image_input(input_tensor, input_shape)
    axis = _builder.channel_axis()
    kernel, activation, se_ratio = (3, relu, None) if minimalistic else (5, hard_swish, 0.25)
    x = img_input
    if include_preprocessing:
        x = layers.Rescaling(scale=1.0 / 127.5, offset=-1.0)(x)
    x = layers.Conv2D(16, kernel_size=3, strides=(2, 2), padding="same", use_bias=False,
                      name="conv")(x)
    x = activation(_bn("conv_bn")(x))
    for block_id, (expansion, filters, k, stride, se, act) in enumerate(blocks):
        x = _inverted_res_block(x, expansion, _depth(filters * alpha),
                                kernel if k == "k" else k, stride, se_ratio if se else None,
                                relu if act == "relu" else activation, block_id)
    last_conv_ch = _depth(x.shape[axis] * 6)
    if alpha > 1.0:
        last_point_ch = _depth(last_point_ch * alpha)
    x = layers.Conv2D(last_conv_ch, kernel_size=1, padding="same", use_bias=False,
                      name="conv_1")(x)
    x = activation(_bn("conv_1_bn")(x))
    if include_top:
        x = layers.GlobalAveragePooling2D(keepdims=True)(x)
        x = layers.Conv2D(last_point_ch, kernel_size=1, padding="same", use_bias=True,
                          name="conv_2")(x)
        x = activation(x)
        if dropout_rate > 0:
            x = layers.Dropout(dropout_rate)(x)
        x = layers.Conv2D(classes, kernel_size=1, padding="same", name="logits")(x)
        x = layers.Flatten()(x)
        imagenet_utils.validate_activation(classifier_activation, weights)
        x = layers.Activation(activation=classifier_activation, name="predictions")(x)
    else:
        x = _builder.head(x, False, pooling, classes, classifier_activation, weights,
                          pool_names=("avg_pool", "max_pool"))
    entry = None
    if weights == "imagenet":
        key = f"{model_type}{'_minimalistic' if minimalistic else ''}_224_{alpha}_float"
        fname = (f"weights_mobilenet_v3_{key}.h5" if include_top
                 else f"weights_mobilenet_v3_{key}_no_top_v2.h5")
        entry = _builder.imagenet_entry("mobilenet_v3", fname,
                                        HASHES[key][0 if include_top else 1])
    return _builder.finish(input_tensor, img_input, x, name, weights, entry)


_EXTRA = """
        alpha: width multiplier (ImageNet weights for 0.75 and 1.0).
        minimalistic: 3x3 kernels, ReLU and no squeeze-and-excitation.
        dropout_rate: dropout before the classifier.
        include_preprocessing: whether the model rescales its [0, 255] inputs to [-1, 1]."""


def MobileNetV3Small(input_shape=None, alpha=1.0, minimalistic=False, include_top=True,
                     weights="imagenet", input_tensor=None, classes=1000, pooling=None,
                     dropout_rate=0.2, classifier_activation="softmax",
                     include_preprocessing=True, name="MobileNetV3Small"):
    return MobileNetV3(SMALL, 1024, input_shape, alpha, "small", minimalistic, include_top,
                       weights, input_tensor, classes, pooling, dropout_rate,
                       classifier_activation, include_preprocessing, name=name)


def MobileNetV3Large(input_shape=None, alpha=1.0, minimalistic=False, include_top=True,
                     weights="imagenet", input_tensor=None, classes=1000, pooling=None,
                     dropout_rate=0.2, classifier_activation="softmax",
                     include_preprocessing=True, name="MobileNetV3Large"):
    return MobileNetV3(LARGE, 1280, input_shape, alpha, "large", minimalistic, include_top,
                       weights, input_tensor, classes, pooling, dropout_rate,
                       classifier_activation, include_preprocessing, name=name)


_docs.document(MobileNetV3Small, "Instantiates the MobileNetV3Small architecture (any input "
                                 "size from 32x32; ImageNet weights for 224x224).", _EXTRA)
_docs.document(MobileNetV3Large, "Instantiates the MobileNetV3Large architecture (any input "
                                 "size from 32x32; ImageNet weights for 224x224).", _EXTRA)


def preprocess_input(x, data_format=None):
    """The identity, kept for API compatibility: MobileNetV3 models rescale their inputs
    themselves (`include_preprocessing=True`).

    Args:
        x: a NumPy array or tensor.
        data_format: unused.

    Returns:
        `x`, unchanged.
    """
    return x


__all__ = ["MobileNetV3Large", "MobileNetV3Small", "decode_predictions", "preprocess_input"]
