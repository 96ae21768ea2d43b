"""InceptionResNetV2 (Szegedy et al., 2016), with `preprocess_input` ("tf" convention) and
`decode_predictions`. Many of its layers are unnamed in Keras (auto names), so build it in a
fresh session (`fkeras.utils.clear_session()`) when names must match a Keras model's."""

from fkeras import layers, ops
from fkeras.applications import _builder, _docs, imagenet_utils
from fkeras.applications.imagenet_utils import decode_predictions


class CustomScaleLayer(layers.Layer):
    """`inputs[0] + inputs[1] * scale`: the scaled residual sum of an Inception-ResNet block.

    Args:
        scale: the factor applied to the residual branch.
    """

    def __init__(self, scale, **kwargs):
        super().__init__(**kwargs)
        self.scale = scale

    def call(self, inputs):
        return ops.add(inputs[0], ops.multiply(inputs[1], self.scale))

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[0])

    def get_config(self):
        return {**super().get_config(), "scale": self.scale}


def conv2d_bn(x, filters, kernel_size, strides=1, padding="same", activation="relu",
              use_bias=False, name=None):
    """Conv2D, then (without bias) BatchNormalization without scale, then the activation."""
    x = layers.Conv2D(filters, kernel_size, strides=strides, padding=padding,
                      use_bias=use_bias, name=name)(x)
    if not use_bias:
        x = layers.BatchNormalization(axis=_builder.channel_axis(), scale=False,
                                      name=None if name is None else f"{name}_bn")(x)
    if activation is not None:
        x = layers.Activation(activation, name=None if name is None else f"{name}_ac")(x)
    return x


def _chain(x, specs):
    for spec in specs:
        filters, kernel, *rest = spec
        strides, padding = rest if rest else (1, "same")
        x = conv2d_bn(x, filters, kernel, strides=strides, padding=padding)
    return x


BRANCHES = {  # block type -> branches as conv2d_bn chains (filters, kernel)
    "block35": ([(32, 1)], [(32, 1), (32, 3)], [(32, 1), (48, 3), (64, 3)]),
    "block17": ([(192, 1)], [(128, 1), (160, [1, 7]), (192, [7, 1])]),
    "block8": ([(192, 1)], [(192, 1), (224, [1, 3]), (256, [3, 1])]),
}


def inception_resnet_block(x, scale, block_type, block_idx, activation="relu"):
    """Parallel branches, concatenated, projected by a 1x1 conv and added (scaled) to x."""
    if block_type not in BRANCHES:
        raise ValueError('Unknown Inception-ResNet block type. Expects "block35", "block17" '
                         f'or "block8", but got: {block_type}')
    axis = _builder.channel_axis()
    name = f"{block_type}_{block_idx}"
    branches = [_chain(x, specs) for specs in BRANCHES[block_type]]
    mixed = layers.Concatenate(axis=axis, name=f"{name}_mixed")(branches)
    up = conv2d_bn(mixed, x.shape[axis], 1, activation=None, use_bias=True, name=f"{name}_conv")
    x = CustomScaleLayer(scale)([x, up])
    if activation is not None:
        x = layers.Activation(activation, name=f"{name}_ac")(x)
    return x


def _reduction(x, chains, name):
    branches = [_chain(x, specs) for specs in chains]
    branches.append(layers.MaxPooling2D(3, strides=2, padding="valid")(x))
    return layers.Concatenate(axis=_builder.channel_axis(), name=name)(branches)


def InceptionResNetV2(include_top=True, weights="imagenet", input_tensor=None,
                      input_shape=None, pooling=None, classes=1000,
                      classifier_activation="softmax", name="inception_resnet_v2"):
    _builder.check_weights(weights, include_top, classes)
    input_shape = _builder.input_shape_for(input_shape, 299, 75, include_top, weights)
    img_input = _builder.image_input(input_tensor, input_shape)
    x = _chain(img_input, [(32, 3, 2, "valid"), (32, 3, 1, "valid"), (64, 3)])
    x = layers.MaxPooling2D(3, strides=2)(x)
    x = _chain(x, [(80, 1, 1, "valid"), (192, 3, 1, "valid")])
    x = layers.MaxPooling2D(3, strides=2)(x)
    branches = [_chain(x, [(96, 1)]), _chain(x, [(48, 1), (64, 5)]),
                _chain(x, [(64, 1), (96, 3), (96, 3)])]
    pool = layers.AveragePooling2D(3, strides=1, padding="same")(x)
    branches.append(conv2d_bn(pool, 64, 1))
    x = layers.Concatenate(axis=_builder.channel_axis(), name="mixed_5b")(branches)
    for i in range(1, 11):
        x = inception_resnet_block(x, scale=0.17, block_type="block35", block_idx=i)
    x = _reduction(x, [[(384, 3, 2, "valid")], [(256, 1), (256, 3), (384, 3, 2, "valid")]],
                   "mixed_6a")
    for i in range(1, 21):
        x = inception_resnet_block(x, scale=0.1, block_type="block17", block_idx=i)
    x = _reduction(x, [[(256, 1), (384, 3, 2, "valid")], [(256, 1), (288, 3, 2, "valid")],
                       [(256, 1), (288, 3), (320, 3, 2, "valid")]], "mixed_7a")
    for i in range(1, 10):
        x = inception_resnet_block(x, scale=0.2, block_type="block8", block_idx=i)
    x = inception_resnet_block(x, scale=1.0, activation=None, block_type="block8", block_idx=10)
    x = conv2d_bn(x, 1536, 1, name="conv_7b")
    x = _builder.head(x, include_top, pooling, classes, classifier_activation, weights,
                      top_name="avg_pool")
    suffix = "" if include_top else "_notop"
    entry = _builder.imagenet_entry(
        "inception_resnet_v2",
        f"inception_resnet_v2_weights_tf_dim_ordering_tf_kernels{suffix}.h5",
        "e693bd0210a403b3192acc6073ad2e96" if include_top else "d19885ff4a710c122648d3b5c3b684e4")
    return _builder.finish(input_tensor, img_input, x, name, weights, entry)


_docs.document(InceptionResNetV2, "Instantiates the Inception-ResNet v2 architecture (default "
                                  "input 299x299, at least 75x75).")


def preprocess_input(x, data_format=None):
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


_docs.preprocess_doc(preprocess_input, "scaled to [-1, 1] (\"tf\" mode).")

__all__ = ["InceptionResNetV2", "decode_predictions", "preprocess_input"]
