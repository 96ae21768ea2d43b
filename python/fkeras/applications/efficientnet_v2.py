"""EfficientNetV2 B0-B3, S, M and L (Tan & Le, 2021): Fused-MBConv blocks in the early stages,
MBConv with squeeze-and-excitation later. With `include_preprocessing=True` (the default) the
model rescales its [0, 255] inputs itself, so `preprocess_input` is the identity."""

import copy
import math

from fkeras import layers
from fkeras.applications import _builder, _docs, imagenet_utils
from fkeras.applications.efficientnet import conv_init, dense_init, squeeze_excite
from fkeras.applications.imagenet_utils import decode_predictions

BASE_URL = f"{_builder.KERAS_APPS}efficientnet_v2/"
HASHES = {
    "b0": ("21ecbf6da12460d5c40bb2f29ceb2188", "893217f2bb855e2983157299931e43ff"),
    "b1": ("069f0534ff22adf035c89e2d9547a9dc", "0e80663031ca32d657f9caa404b6ec37"),
    "b2": ("424e49f28180edbde1e94797771950a7", "1dfe2e7a5d45b6632553a8961ea609eb"),
    "b3": ("1f1fc43bd98a6e4fd8fdfd551e02c7a0", "f6abf7b5849ac99a89b50dd3fd532856"),
    "-s": ("e1d88a8495beba45748fedd0cecbe016", "af0682fb74e8c54910f2d4393339c070"),
    "-m": ("a3bf6aa3276309f4fc6a34aa114c95cd", "1b8dc055df72dde80d614482840fe342"),
    "-l": ("27e6d408b53c7ebc868fefa357689935", "b0b66b5c863aef5b46e8608fe1711615"),
}
_B = ((3, 1, 32, 16, 1, 0, 1, 1), (3, 2, 16, 32, 4, 0, 2, 1), (3, 2, 32, 48, 4, 0, 2, 1),
      (3, 3, 48, 96, 4, 0.25, 2, 0), (3, 5, 96, 112, 6, 0.25, 1, 0),
      (3, 8, 112, 192, 6, 0.25, 2, 0))
# (kernel, repeats, filters in, filters out, expansion, se ratio, strides, fused) per stage
STAGES = {
    "b": _B,
    "s": ((3, 2, 24, 24, 1, 0, 1, 1), (3, 4, 24, 48, 4, 0, 2, 1), (3, 4, 48, 64, 4, 0, 2, 1),
          (3, 6, 64, 128, 4, 0.25, 2, 0), (3, 9, 128, 160, 6, 0.25, 1, 0),
          (3, 15, 160, 256, 6, 0.25, 2, 0)),
    "m": ((3, 3, 24, 24, 1, 0, 1, 1), (3, 5, 24, 48, 4, 0, 2, 1), (3, 5, 48, 80, 4, 0, 2, 1),
          (3, 7, 80, 160, 4, 0.25, 2, 0), (3, 14, 160, 176, 6, 0.25, 1, 0),
          (3, 18, 176, 304, 6, 0.25, 2, 0), (3, 5, 304, 512, 6, 0.25, 1, 0)),
    "l": ((3, 4, 32, 32, 1, 0, 1, 1), (3, 7, 32, 64, 4, 0, 2, 1), (3, 7, 64, 96, 4, 0, 2, 1),
          (3, 10, 96, 192, 4, 0.25, 2, 0), (3, 19, 192, 224, 6, 0.25, 1, 0),
          (3, 25, 224, 384, 6, 0.25, 2, 0), (3, 7, 384, 640, 6, 0.25, 1, 0)),
}
# weights key -> (width, depth, default size, stages)
VARIANTS = {"b0": (1.0, 1.0, 224, "b"), "b1": (1.0, 1.1, 240, "b"),
            "b2": (1.1, 1.2, 260, "b"), "b3": (1.2, 1.4, 300, "b"),
            "-s": (1.0, 1.0, 384, "s"), "-m": (1.0, 1.0, 480, "m"), "-l": (1.0, 1.0, 480, "l")}


def blocks_args_of(stages):
    return [dict(kernel_size=k, num_repeat=r, input_filters=i, output_filters=o,
                 expand_ratio=e, se_ratio=se, strides=s, conv_type=f)
            for k, r, i, o, e, se, s, f in STAGES[stages]]


def round_filters(filters, width_coefficient, min_depth, depth_divisor):
    filters *= width_coefficient
    return int(max(min_depth or depth_divisor,
                   int(filters + depth_divisor / 2) // depth_divisor * depth_divisor))


def _bn(name, momentum):
    return layers.BatchNormalization(axis=_builder.channel_axis(), momentum=momentum, name=name)


def _conv_bn_act(x, filters, kernel, strides, name, momentum, activation, part):
    x = layers.Conv2D(filters, kernel_size=kernel, strides=strides, padding="same",
                      kernel_initializer=conv_init(), use_bias=False,
                      name=f"{name}{part}_conv")(x)
    x = _bn(f"{name}{part}_bn", momentum)(x)
    return x if activation is None else layers.Activation(
        activation, name=f"{name}{part}_activation")(x)


def _skip(x, inputs, strides, input_filters, output_filters, rate, name):
    if strides == 1 and input_filters == output_filters:
        if rate:  # Keras passes the block's drop rate here (named survival_probability)
            x = layers.Dropout(rate, noise_shape=(None, 1, 1, 1), name=f"{name}drop")(x)
        x = layers.add([x, inputs], name=f"{name}add")
    return x


def mb_conv(x, input_filters, output_filters, expand_ratio, kernel_size, strides, se_ratio,
            momentum, activation, rate, name):
    """MBConv: [1x1 expand] -> depthwise -> [squeeze-excite] -> 1x1 project [+ skip]."""
    inputs, filters = x, input_filters * expand_ratio
    if expand_ratio != 1:
        x = _conv_bn_act(x, filters, 1, 1, name, momentum, activation, "expand")
    x = layers.DepthwiseConv2D(kernel_size=kernel_size, strides=strides, padding="same",
                               depthwise_initializer=conv_init(), use_bias=False,
                               name=f"{name}dwconv2")(x)
    x = _bn(f"{name}bn", momentum)(x)
    x = layers.Activation(activation, name=f"{name}activation")(x)
    if 0 < se_ratio <= 1:
        x = squeeze_excite(x, filters, max(1, int(input_filters * se_ratio)), activation, name)
    x = _conv_bn_act(x, output_filters, 1, 1, name, momentum, None, "project")
    return _skip(x, inputs, strides, input_filters, output_filters, rate, name)


def fused_mb_conv(x, input_filters, output_filters, expand_ratio, kernel_size, strides,
                  se_ratio, momentum, activation, rate, name):
    """Fused-MBConv: a full k x k expand convolution replaces 1x1 expand + depthwise."""
    inputs, filters = x, input_filters * expand_ratio
    if expand_ratio != 1:
        x = _conv_bn_act(x, filters, kernel_size, strides, name, momentum, activation,
                         "expand")
    if 0 < se_ratio <= 1:
        x = squeeze_excite(x, filters, max(1, int(input_filters * se_ratio)), activation, name)
    single = expand_ratio == 1  # then the projection is the only convolution
    x = _conv_bn_act(x, output_filters, kernel_size if single else 1, strides if single else 1,
                     name, momentum, activation if single else None, "project")
    return _skip(x, inputs, strides, input_filters, output_filters, rate, name)


def _preprocessing(x, small_family, input_shape):
    axis = 3 if _builder.channel_axis() == -1 else 1
    if small_family and input_shape[axis - 1] == 3:
        x = layers.Rescaling(scale=1.0 / 255)(x)
        return layers.Normalization(mean=[0.485, 0.456, 0.406],
                                    variance=[0.229**2, 0.224**2, 0.225**2], axis=axis)(x)
    return layers.Rescaling(scale=1.0 / 128.0, offset=-1)(x)


def EfficientNetV2(width_coefficient, depth_coefficient, default_size, dropout_rate=0.2,
                   drop_connect_rate=0.2, depth_divisor=8, min_depth=8, bn_momentum=0.9,
                   activation="swish", blocks_args="default", name="efficientnetv2",
                   include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
                   pooling=None, classes=1000, classifier_activation="softmax",
                   include_preprocessing=True, weights_name=None):
    """The EfficientNetV2 family's builder (Keras's signature; `blocks_args="default"`
    takes the stages of `weights_name`'s variant)."""
    family = VARIANTS[weights_name][3] if weights_name in VARIANTS else None
    if blocks_args == "default":
        if family is None:
            raise ValueError("`blocks_args='default'` needs `weights_name` in "
                             f"{sorted(VARIANTS)}. Received: weights_name={weights_name}")
        blocks_args = blocks_args_of(family)
    _builder.check_weights(weights, include_top, classes)
    input_shape = _builder.input_shape_for(input_shape, default_size, 32, include_top, weights)
    img_input = _builder.image_input(input_tensor, input_shape)
    x = img_input
    if include_preprocessing:
        # B0-B3 normalize with ImageNet statistics; Keras tells them by the model name
        small = family == "b" if family else name.split("-")[-1].startswith("b")
        x = _preprocessing(x, small, input_shape)
    x = _conv_bn_act(x, round_filters(blocks_args[0]["input_filters"], width_coefficient,
                                      min_depth, depth_divisor),
                     3, 2, "", bn_momentum, activation, "stem")
    x = _stages(x, blocks_args, width_coefficient, depth_coefficient, min_depth,
                depth_divisor, drop_connect_rate, bn_momentum, activation)
    x = _conv_bn_act(x, round_filters(1280, width_coefficient, min_depth, depth_divisor), 1, 1,
                     "", bn_momentum, activation, "top")
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
        fname = f"efficientnetv2{weights_name if weights_name[0] == '-' else '-' + weights_name}"
        fname += ".h5" if include_top else "_notop.h5"
        entry = (fname, BASE_URL + fname, HASHES[weights_name][0 if include_top else 1])
    return _builder.finish(input_tensor, img_input, x, name, weights, entry)


def _stages(x, blocks_args, width, depth, min_depth, divisor, drop_connect_rate, momentum,
            activation):
    total = float(sum(a["num_repeat"] for a in blocks_args))
    b = 0
    for i, args in enumerate(copy.deepcopy(blocks_args)):
        if args["num_repeat"] <= 0:
            raise ValueError("The number of repeats in `EfficientNetV2` must be > 0. Received: "
                             f"num_repeat={args['num_repeat']}")
        fin = round_filters(args["input_filters"], width, min_depth, divisor)
        fout = round_filters(args["output_filters"], width, min_depth, divisor)
        block = fused_mb_conv if args["conv_type"] == 1 else mb_conv
        strides = args["strides"]
        for j in range(int(math.ceil(depth * args["num_repeat"]))):
            if j > 0:
                strides, fin = 1, fout
            x = block(x, fin, fout, args["expand_ratio"], args["kernel_size"], strides,
                      args["se_ratio"], momentum, activation, drop_connect_rate * b / total,
                      f"block{i + 1}{chr(j + 97)}_")
            b += 1
    return x


def _variant(key, title):
    width, depth, size, _ = VARIANTS[key]
    default_name = "efficientnetv2" + (key if key[0] == "-" else "-" + key)

    def build(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
              pooling=None, classes=1000, classifier_activation="softmax",
              include_preprocessing=True, name=default_name):
        return EfficientNetV2(width, depth, size, name=name, include_top=include_top,
                              weights=weights, input_tensor=input_tensor,
                              input_shape=input_shape, pooling=pooling, classes=classes,
                              classifier_activation=classifier_activation,
                              include_preprocessing=include_preprocessing, weights_name=key)

    build.__name__ = build.__qualname__ = title
    return _docs.document(build, f"Instantiates the {title} architecture (default input "
                                 f"{size}x{size}, at least 32x32).", extra="""
        include_preprocessing: whether the model rescales (and, for B0-B3, normalizes) its
            [0, 255] inputs itself.""")


EfficientNetV2B0 = _variant("b0", "EfficientNetV2B0")
EfficientNetV2B1 = _variant("b1", "EfficientNetV2B1")
EfficientNetV2B2 = _variant("b2", "EfficientNetV2B2")
EfficientNetV2B3 = _variant("b3", "EfficientNetV2B3")
EfficientNetV2S = _variant("-s", "EfficientNetV2S")
EfficientNetV2M = _variant("-m", "EfficientNetV2M")
EfficientNetV2L = _variant("-l", "EfficientNetV2L")


def preprocess_input(x, data_format=None):
    """The identity, kept for API compatibility: EfficientNetV2 models preprocess their inputs
    themselves (`include_preprocessing=True`).

    Args:
        x: a NumPy array or tensor.
        data_format: unused.

    Returns:
        `x`, unchanged.
    """
    return x


__all__ = ["EfficientNetV2B0", "EfficientNetV2B1", "EfficientNetV2B2", "EfficientNetV2B3",
           "EfficientNetV2S", "EfficientNetV2M", "EfficientNetV2L", "decode_predictions",
           "preprocess_input"]
