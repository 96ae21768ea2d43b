"""EfficientNetB0-B7 (Tan & Le, 2019): MBConv blocks with squeeze-and-excitation, scaled in
width, depth and resolution. Input preprocessing is part of the model (Rescaling and
Normalization layers), so `preprocess_input` is the identity."""

import copy
import math

from fkeras import initializers, layers
from fkeras.applications import _builder, _docs, imagenet_utils
from fkeras.applications.imagenet_utils import decode_predictions

BASE_URL = "https://storage.googleapis.com/keras-applications/"
HASHES = {
    "b0": ("902e53a9f72be733fc0bcb005b3ebbac", "50bc09e76180e00e4465e1a485ddc09d"),
    "b1": ("1d254153d4ab51201f1646940f018540", "74c4e6b3e1f6a1eea24c589628592432"),
    "b2": ("b15cce36ff4dcbd00b6dd88e7857a6ad", "111f8e2ac8aa800a7a99e3239f7bfb39"),
    "b3": ("ffd1fdc53d0ce67064dc6a9c7960ede0", "af6d107764bb5b1abb91932881670226"),
    "b4": ("18c95ad55216b8f92d7e70b3a046e2fc", "ebc24e6d6c33eaebbd558eafbeedf1ba"),
    "b5": ("ace28f2a6363774853a83a0b21b9421a", "38879255a25d3c92d5e44e04ae6cec6f"),
    "b6": ("165f6e37dce68623721b423839de8be5", "9ecce42647a20130c1f39a5d4cb75743"),
    "b7": ("8c03f828fec3ef71311cd463b6759d99", "cbcfe4450ddf6f3ad90b1b398090fe4a"),
}
# (kernel, repeats, filters in, filters out, expansion, strides) per stage; every block has
# squeeze-and-excitation with ratio 0.25 and an identity skip where shapes allow.
STAGES = ((3, 1, 32, 16, 1, 1), (3, 2, 16, 24, 6, 2), (5, 2, 24, 40, 6, 2),
          (3, 3, 40, 80, 6, 2), (5, 3, 80, 112, 6, 1), (5, 4, 112, 192, 6, 2),
          (3, 1, 192, 320, 6, 1))
DEFAULT_BLOCKS_ARGS = [
    dict(kernel_size=k, repeats=r, filters_in=i, filters_out=o, expand_ratio=e, id_skip=True,
         strides=s, se_ratio=0.25) for k, r, i, o, e, s in STAGES]
# (width, depth, resolution, dropout) of B0..B7
SCALING = {"b0": (1.0, 1.0, 224, 0.2), "b1": (1.0, 1.1, 240, 0.2), "b2": (1.1, 1.2, 260, 0.3),
           "b3": (1.2, 1.4, 300, 0.3), "b4": (1.4, 1.8, 380, 0.4), "b5": (1.6, 2.2, 456, 0.4),
           "b6": (1.8, 2.6, 528, 0.5), "b7": (2.0, 3.1, 600, 0.5)}
IMAGENET_STDDEV_RGB = (0.229, 0.224, 0.225)


def conv_init():
    return initializers.VarianceScaling(2.0, "fan_out", "truncated_normal")


def dense_init():
    return initializers.VarianceScaling(1.0 / 3.0, "fan_out", "uniform")


def round_filters(filters, width, divisor):
    filters *= width
    new = max(divisor, int(filters + divisor / 2) // divisor * divisor)
    return int(new + divisor if new < 0.9 * filters else new)


def _bn(name):
    return layers.BatchNormalization(axis=_builder.channel_axis(), name=name)


def block(inputs, activation="swish", drop_rate=0.0, name="", filters_in=32, filters_out=16,
          kernel_size=3, strides=1, expand_ratio=1, se_ratio=0.0, id_skip=True):
    """MBConv: [1x1 expand] -> depthwise -> [squeeze-excite] -> 1x1 project [+ skip]."""
    filters = filters_in * expand_ratio
    x = inputs
    if expand_ratio != 1:
        x = layers.Conv2D(filters, 1, padding="same", use_bias=False,
                          kernel_initializer=conv_init(), name=f"{name}expand_conv")(x)
        x = _bn(f"{name}expand_bn")(x)
        x = layers.Activation(activation, name=f"{name}expand_activation")(x)
    if strides == 2:
        x = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(x, kernel_size),
                                 name=f"{name}dwconv_pad")(x)
    x = layers.DepthwiseConv2D(kernel_size, strides=strides,
                               padding="valid" if strides == 2 else "same", use_bias=False,
                               depthwise_initializer=conv_init(), name=f"{name}dwconv")(x)
    x = _bn(f"{name}bn")(x)
    x = layers.Activation(activation, name=f"{name}activation")(x)
    if 0 < se_ratio <= 1:
        x = squeeze_excite(x, filters, max(1, int(filters_in * se_ratio)), activation, name)
    x = layers.Conv2D(filters_out, 1, padding="same", use_bias=False,
                      kernel_initializer=conv_init(), name=f"{name}project_conv")(x)
    x = _bn(f"{name}project_bn")(x)
    if id_skip and strides == 1 and filters_in == filters_out:
        if drop_rate > 0:  # stochastic depth: drop the whole residual branch per sample
            x = layers.Dropout(drop_rate, noise_shape=(None, 1, 1, 1), name=f"{name}drop")(x)
        x = layers.add([x, inputs], name=f"{name}add")
    return x


def squeeze_excite(x, filters, filters_se, activation, name):
    """Channel attention: global pool -> 1x1 reduce -> 1x1 expand (sigmoid) -> multiply."""
    se = layers.GlobalAveragePooling2D(name=f"{name}se_squeeze")(x)
    shape = (filters, 1, 1) if _builder.channel_axis() == 1 else (1, 1, filters)
    se = layers.Reshape(shape, name=f"{name}se_reshape")(se)
    se = layers.Conv2D(filters_se, 1, padding="same", activation=activation,
                       kernel_initializer=conv_init(), name=f"{name}se_reduce")(se)
    se = layers.Conv2D(filters, 1, padding="same", activation="sigmoid",
                       kernel_initializer=conv_init(), name=f"{name}se_expand")(se)
    return layers.multiply([x, se], name=f"{name}se_excite")


def _blocks(x, blocks_args, width, depth, divisor, drop_connect_rate, activation):
    total = float(sum(int(math.ceil(depth * a["repeats"])) for a in blocks_args))
    b = 0
    for i, args in enumerate(copy.deepcopy(blocks_args)):
        if args["repeats"] <= 0:
            raise ValueError("The number of repeats in `EfficientNet` must be > 0. Received: "
                             f"repeats={args['repeats']}")
        args["filters_in"] = round_filters(args["filters_in"], width, divisor)
        args["filters_out"] = round_filters(args["filters_out"], width, divisor)
        for j in range(int(math.ceil(depth * args.pop("repeats")))):
            if j > 0:
                args["strides"], args["filters_in"] = 1, args["filters_out"]
            x = block(x, activation, drop_connect_rate * b / total,
                      name=f"block{i + 1}{chr(j + 97)}_", **args)
            b += 1
    return x


def EfficientNet(width_coefficient, depth_coefficient, default_size, dropout_rate=0.2,
                 drop_connect_rate=0.2, depth_divisor=8, activation="swish",
                 blocks_args="default", name="efficientnet", include_top=True,
                 weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
                 classes=1000, classifier_activation="softmax", weights_name=None):
    """The EfficientNet family's builder (Keras's signature)."""
    blocks_args = DEFAULT_BLOCKS_ARGS if blocks_args == "default" else blocks_args
    _builder.check_weights(weights, include_top, classes)
    input_shape = _builder.input_shape_for(input_shape, default_size, 32, include_top, weights)
    img_input = _builder.image_input(input_tensor, input_shape)
    axis = 3 if _builder.channel_axis() == -1 else 1
    x = layers.Rescaling(1.0 / 255.0)(img_input)
    x = layers.Normalization(axis=axis)(x)
    if weights == "imagenet":
        # Keras's correction of the published weights' normalization (1 / sqrt(stddev)).
        x = layers.Rescaling([1.0 / math.sqrt(s) for s in IMAGENET_STDDEV_RGB])(x)
    x = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(x, 3), name="stem_conv_pad")(x)
    x = layers.Conv2D(round_filters(32, width_coefficient, depth_divisor), 3, strides=2,
                      padding="valid", use_bias=False, kernel_initializer=conv_init(),
                      name="stem_conv")(x)
    x = _bn("stem_bn")(x)
    x = layers.Activation(activation, name="stem_activation")(x)
    x = _blocks(x, blocks_args, width_coefficient, depth_coefficient, depth_divisor,
                drop_connect_rate, activation)
    x = layers.Conv2D(round_filters(1280, width_coefficient, depth_divisor), 1, padding="same",
                      use_bias=False, kernel_initializer=conv_init(), name="top_conv")(x)
    x = _bn("top_bn")(x)
    x = layers.Activation(activation, name="top_activation")(x)
    if include_top:
        x = layers.GlobalAveragePooling2D(name="avg_pool")(x)
        if dropout_rate > 0:
            x = layers.Dropout(dropout_rate, name="top_dropout")(x)
        imagenet_utils.validate_activation(classifier_activation, weights)
        x = layers.Dense(classes, activation=classifier_activation,
                         kernel_initializer=dense_init(), name="predictions")(x)
    else:
        x = _builder.head(x, False, pooling, classes, classifier_activation, weights,
                          pool_names=("avg_pool", "max_pool"))
    entry = None
    if weights == "imagenet" and weights_name in HASHES:
        fname = name + (".h5" if include_top else "_notop.h5")
        entry = (fname, BASE_URL + fname, HASHES[weights_name][0 if include_top else 1])
    return _builder.finish(input_tensor, img_input, x, name, weights, entry)


def _variant(key):
    width, depth, size, dropout = SCALING[key]
    title = f"EfficientNet{key.upper()}"

    def build(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
              pooling=None, classes=1000, classifier_activation="softmax",
              name=f"efficientnet{key}"):
        return EfficientNet(width, depth, size, dropout, name=name, include_top=include_top,
                            weights=weights, input_tensor=input_tensor,
                            input_shape=input_shape, pooling=pooling, classes=classes,
                            classifier_activation=classifier_activation, weights_name=key)

    build.__name__ = build.__qualname__ = title
    return _docs.document(build, f"Instantiates the {title} architecture (default input "
                                 f"{size}x{size}, at least 32x32). Inputs are images with "
                                 "values in [0, 255]: the\n    model rescales and normalizes "
                                 "them itself.")


EfficientNetB0 = _variant("b0")
EfficientNetB1 = _variant("b1")
EfficientNetB2 = _variant("b2")
EfficientNetB3 = _variant("b3")
EfficientNetB4 = _variant("b4")
EfficientNetB5 = _variant("b5")
EfficientNetB6 = _variant("b6")
EfficientNetB7 = _variant("b7")


def preprocess_input(x, data_format=None):
    """The identity, kept for API compatibility: EfficientNet models rescale and normalize
    their inputs themselves (values in [0, 255]).

    Args:
        x: a NumPy array or tensor.
        data_format: unused.

    Returns:
        `x`, unchanged.
    """
    return x


__all__ = ["EfficientNetB0", "EfficientNetB1", "EfficientNetB2", "EfficientNetB3",
           "EfficientNetB4", "EfficientNetB5", "EfficientNetB6", "EfficientNetB7",
           "decode_predictions", "preprocess_input"]
