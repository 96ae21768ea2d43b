"""InceptionV3 (Szegedy et al., 2015), with `preprocess_input` ("tf" convention) and
`decode_predictions`. Its convolutions are unnamed in Keras (auto names `conv2d_N`,
`batch_normalization_N`, `activation_N`), so build it in a fresh session
(`fkeras.utils.clear_session()`) when names must match a Keras model's."""

from fkeras import layers
from fkeras.applications import _builder, _docs, imagenet_utils
from fkeras.applications.imagenet_utils import decode_predictions


def conv2d_bn(x, filters, num_row, num_col, padding="same", strides=(1, 1), name=None):
    """Conv2D (no bias) -> BatchNormalization (no scale) -> ReLU."""
    x = layers.Conv2D(filters, (num_row, num_col), strides=strides, padding=padding,
                      use_bias=False, name=None if name is None else f"{name}_conv")(x)
    x = layers.BatchNormalization(axis=_builder.channel_axis(), scale=False,
                                  name=None if name is None else f"{name}_bn")(x)
    return layers.Activation("relu", name=name)(x)


def _chain(x, specs):
    """conv2d_bn over (filters, rows, cols[, strides, padding]) tuples in turn."""
    for spec in specs:
        filters, rows, cols, *rest = spec
        strides, padding = rest if rest else ((1, 1), "same")
        x = conv2d_bn(x, filters, rows, cols, padding=padding, strides=strides)
    return x


def _avg_branch(x, filters):
    x = layers.AveragePooling2D((3, 3), strides=(1, 1), padding="same")(x)
    return conv2d_bn(x, filters, 1, 1)


def _mix(branches, name):
    return layers.concatenate(branches, axis=_builder.channel_axis(), name=name)


def _block_35(x, pool_filters, name):
    return _mix([conv2d_bn(x, 64, 1, 1),
                 _chain(x, [(48, 1, 1), (64, 5, 5)]),
                 _chain(x, [(64, 1, 1), (96, 3, 3), (96, 3, 3)]),
                 _avg_branch(x, pool_filters)], name)


def _block_17(x, mid, name):
    return _mix([conv2d_bn(x, 192, 1, 1),
                 _chain(x, [(mid, 1, 1), (mid, 1, 7), (192, 7, 1)]),
                 _chain(x, [(mid, 1, 1), (mid, 7, 1), (mid, 1, 7), (mid, 7, 1), (192, 1, 7)]),
                 _avg_branch(x, 192)], name)


def _block_8(x, i):
    axis = _builder.channel_axis()
    b1 = conv2d_bn(x, 320, 1, 1)
    b3 = conv2d_bn(x, 384, 1, 1)
    b3 = layers.concatenate([conv2d_bn(b3, 384, 1, 3), conv2d_bn(b3, 384, 3, 1)], axis=axis,
                            name=f"mixed9_{i}")
    d3 = _chain(x, [(448, 1, 1), (384, 3, 3)])
    d3 = layers.concatenate([conv2d_bn(d3, 384, 1, 3), conv2d_bn(d3, 384, 3, 1)], axis=axis)
    return _mix([b1, b3, d3, _avg_branch(x, 192)], f"mixed{9 + i}")


def InceptionV3(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
                pooling=None, classes=1000, classifier_activation="softmax",
                name="inception_v3"):
    _builder.check_weights(weights, include_top, classes)
    input_shape = _builder.input_shape_for(input_shape, 299, 75, include_top, weights)
    img_input = _builder.image_input(input_tensor, input_shape)
    s2v = ((2, 2), "valid")
    x = _chain(img_input, [(32, 3, 3, *s2v), (32, 3, 3, (1, 1), "valid"), (64, 3, 3)])
    x = layers.MaxPooling2D((3, 3), strides=(2, 2))(x)
    x = _chain(x, [(80, 1, 1, (1, 1), "valid"), (192, 3, 3, (1, 1), "valid")])
    x = layers.MaxPooling2D((3, 3), strides=(2, 2))(x)
    x = _block_35(x, 32, "mixed0")
    x = _block_35(x, 64, "mixed1")
    x = _block_35(x, 64, "mixed2")
    x = _mix([conv2d_bn(x, 384, 3, 3, strides=(2, 2), padding="valid"),
              _chain(x, [(64, 1, 1), (96, 3, 3), (96, 3, 3, *s2v)]),
              layers.MaxPooling2D((3, 3), strides=(2, 2))(x)], "mixed3")
    for i, mid in enumerate((128, 160, 160, 192), start=4):
        x = _block_17(x, mid, f"mixed{i}")
    x = _mix([_chain(x, [(192, 1, 1), (320, 3, 3, *s2v)]),
              _chain(x, [(192, 1, 1), (192, 1, 7), (192, 7, 1), (192, 3, 3, *s2v)]),
              layers.MaxPooling2D((3, 3), strides=(2, 2))(x)], "mixed8")
    x = _block_8(x, 0)
    x = _block_8(x, 1)
    x = _builder.head(x, include_top, pooling, classes, classifier_activation, weights,
                      top_name="avg_pool")
    suffix = "" if include_top else "_notop"
    entry = _builder.imagenet_entry(
        "inception_v3", f"inception_v3_weights_tf_dim_ordering_tf_kernels{suffix}.h5",
        "9a0d58056eeedaa3f26cb7ebd46da564" if include_top else "bcbd6486424b2319ff4ef7d526e38f63")
    return _builder.finish(input_tensor, img_input, x, name, weights, entry)


_docs.document(InceptionV3, "Instantiates the Inception v3 architecture (default input "
                            "299x299, at least 75x75).")


def preprocess_input(x, data_format=None):
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


_docs.preprocess_doc(preprocess_input, "scaled to [-1, 1] (\"tf\" mode).")

__all__ = ["InceptionV3", "decode_predictions", "preprocess_input"]
