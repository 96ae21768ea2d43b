"""Xception (Chollet, 2017): depthwise-separable convolutions with residual connections,
with `preprocess_input` ("tf" convention) and `decode_predictions`."""

from fkeras import layers
from fkeras.applications import _builder, _docs, imagenet_utils
from fkeras.applications.imagenet_utils import decode_predictions


def _sep_bn(x, filters, name, relu_first=None):
    """[ReLU named `relu_first`] -> SeparableConv2D 3x3 `name` -> BN `name`_bn."""
    if relu_first:
        x = layers.Activation("relu", name=relu_first)(x)
    x = layers.SeparableConv2D(filters, (3, 3), padding="same", use_bias=False, name=name)(x)
    return layers.BatchNormalization(axis=_builder.channel_axis(), name=f"{name}_bn")(x)


def _shortcut(x, filters):
    r = layers.Conv2D(filters, (1, 1), strides=(2, 2), padding="same", use_bias=False)(x)
    return layers.BatchNormalization(axis=_builder.channel_axis())(r)


def _entry_block(x, b, filters, first_relu=True):
    """Two separable convolutions and a stride-2 max pooling, added to a 1x1 shortcut."""
    residual = _shortcut(x, filters[1])
    x = _sep_bn(x, filters[0], f"block{b}_sepconv1",
                f"block{b}_sepconv1_act" if first_relu else None)
    x = _sep_bn(x, filters[1], f"block{b}_sepconv2", f"block{b}_sepconv2_act")
    x = layers.MaxPooling2D((3, 3), strides=(2, 2), padding="same", name=f"block{b}_pool")(x)
    return layers.add([x, residual])


def Xception(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
             pooling=None, classes=1000, classifier_activation="softmax", name="xception"):
    _builder.check_weights(weights, include_top, classes)
    input_shape = _builder.input_shape_for(input_shape, 299, 71, include_top, weights)
    img_input = _builder.image_input(input_tensor, input_shape)
    axis = _builder.channel_axis()
    x = img_input
    for i, (filters, strides) in enumerate(((32, (2, 2)), (64, (1, 1))), start=1):
        x = layers.Conv2D(filters, (3, 3), strides=strides, use_bias=False,
                          name=f"block1_conv{i}")(x)
        x = layers.BatchNormalization(axis=axis, name=f"block1_conv{i}_bn")(x)
        x = layers.Activation("relu", name=f"block1_conv{i}_act")(x)
    x = _entry_block(x, 2, (128, 128), first_relu=False)
    x = _entry_block(x, 3, (256, 256))
    x = _entry_block(x, 4, (728, 728))
    for b in range(5, 13):  # middle flow: three separable convolutions, identity shortcut
        residual = x
        for j in (1, 2, 3):
            x = _sep_bn(x, 728, f"block{b}_sepconv{j}", f"block{b}_sepconv{j}_act")
        x = layers.add([x, residual])
    x = _entry_block(x, 13, (728, 1024))
    for j, filters in ((1, 1536), (2, 2048)):
        x = _sep_bn(x, filters, f"block14_sepconv{j}")
        x = layers.Activation("relu", name=f"block14_sepconv{j}_act")(x)
    x = _builder.head(x, include_top, pooling, classes, classifier_activation, weights,
                      top_name="avg_pool")
    suffix = "" if include_top else "_notop"
    entry = _builder.imagenet_entry(
        "xception", f"xception_weights_tf_dim_ordering_tf_kernels{suffix}.h5",
        "0a58e3b7378bc2990ea3b43d5981f1f6" if include_top else "b0042744bf5b25fce3cb969f33bebb97")
    return _builder.finish(input_tensor, img_input, x, name, weights, entry)


_docs.document(Xception, "Instantiates the Xception architecture (default input 299x299, at "
                         "least 71x71).")


def preprocess_input(x, data_format=None):
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


_docs.preprocess_doc(preprocess_input, "scaled to [-1, 1] (\"tf\" mode).")

__all__ = ["Xception", "decode_predictions", "preprocess_input"]
