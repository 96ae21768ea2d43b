"""DenseNet121, DenseNet169 and DenseNet201 (Huang et al., 2016), with `preprocess_input`
("torch" convention) and `decode_predictions`."""

from fkeras import config, layers
from fkeras.applications import _builder, _docs, imagenet_utils
from fkeras.applications.imagenet_utils import decode_predictions

EPS = 1.001e-5
HASHES = {  # (with top, without top), keyed by the blocks per dense block
    (6, 12, 24, 16): ("densenet121", "9d60b8095a5708f2dcce2bca79d332c7",
                      "30ee3e1110167f948a6b9946edeeb738"),
    (6, 12, 32, 32): ("densenet169", "d699b8f76981ab1b30698df4c175e90b",
                      "b8c4d4c20dd625c148057b9ff1c1176b"),
    (6, 12, 48, 32): ("densenet201", "1ceb130c1ea1b78c3bf6114dbdfd8807",
                      "c13680b51ded0fb44dff2d8f86ac8bb1"),
}


def _bn_relu(x, name):
    x = layers.BatchNormalization(axis=_builder.channel_axis(), epsilon=EPS,
                                  name=f"{name}_bn")(x)
    return layers.Activation("relu", name=f"{name}_relu")(x)


def conv_block(x, growth_rate, name):
    """BN-ReLU-1x1 conv (4 * growth) -> BN-ReLU-3x3 conv (growth), concatenated to x."""
    y = _bn_relu(x, f"{name}_0")
    y = layers.Conv2D(4 * growth_rate, 1, use_bias=False, name=f"{name}_1_conv")(y)
    y = _bn_relu(y, f"{name}_1")
    y = layers.Conv2D(growth_rate, 3, padding="same", use_bias=False, name=f"{name}_2_conv")(y)
    return layers.Concatenate(axis=_builder.channel_axis(), name=f"{name}_concat")([x, y])


def transition_block(x, reduction, name):
    x = _bn_relu(x, name)
    channels = x.shape[_builder.channel_axis()]
    x = layers.Conv2D(int(channels * reduction), 1, use_bias=False, name=f"{name}_conv")(x)
    return layers.AveragePooling2D(2, strides=2, name=f"{name}_pool")(x)


def DenseNet(blocks, include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
             pooling=None, classes=1000, classifier_activation="softmax", name="densenet"):
    """A DenseNet with `blocks` conv blocks in each of its four dense blocks."""
    if config.image_data_format() == "channels_first":
        raise ValueError("DenseNet does not support the `channels_first` image data format. "
                         "Switch to `channels_last` by editing your local config file at "
                         "~/.keras/keras.json")
    _builder.check_weights(weights, include_top, classes)
    input_shape = _builder.input_shape_for(input_shape, 224, 32, include_top, weights)
    img_input = _builder.image_input(input_tensor, input_shape)
    x = layers.ZeroPadding2D(padding=((3, 3), (3, 3)))(img_input)
    x = layers.Conv2D(64, 7, strides=2, use_bias=False, name="conv1_conv")(x)
    x = _bn_relu(x, "conv1")
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)))(x)
    x = layers.MaxPooling2D(3, strides=2, name="pool1")(x)
    for stage, n in enumerate(blocks, start=2):
        for i in range(1, n + 1):
            x = conv_block(x, 32, name=f"conv{stage}_block{i}")
        if stage < 5:
            x = transition_block(x, 0.5, name=f"pool{stage}")
    x = layers.BatchNormalization(axis=_builder.channel_axis(), epsilon=EPS, name="bn")(x)
    x = layers.Activation("relu", name="relu")(x)
    x = _builder.head(x, include_top, pooling, classes, classifier_activation, weights,
                      pool_names=("avg_pool", "max_pool"), top_name="avg_pool")
    entry = None
    if tuple(blocks) in HASHES:
        stem, top_hash, notop_hash = HASHES[tuple(blocks)]
        suffix = "" if include_top else "_notop"
        entry = _builder.imagenet_entry(
            "densenet", f"{stem}_weights_tf_dim_ordering_tf_kernels{suffix}.h5",
            top_hash if include_top else notop_hash)
    elif weights == "imagenet":
        raise ValueError("weights_path undefined: Keras publishes ImageNet weights for "
                         f"DenseNet121/169/201 only. Received blocks={blocks}")
    return _builder.finish(input_tensor, img_input, x, name, weights, entry)


def _variant(blocks, default_name):
    def build(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
              pooling=None, classes=1000, classifier_activation="softmax", name=default_name):
        return DenseNet(list(blocks), include_top, weights, input_tensor, input_shape, pooling,
                        classes, classifier_activation, name=name)

    title = default_name.replace("densenet", "DenseNet")
    build.__name__ = build.__qualname__ = title
    return _docs.document(build, f"Instantiates the {title} architecture (default input "
                                 "224x224, at least 32x32; channels_last only).")


DenseNet121 = _variant((6, 12, 24, 16), "densenet121")
DenseNet169 = _variant((6, 12, 32, 32), "densenet169")
DenseNet201 = _variant((6, 12, 48, 32), "densenet201")


def preprocess_input(x, data_format=None):
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="torch")


_docs.preprocess_doc(preprocess_input, "scaled to [0, 1], then normalized with the ImageNet "
                                       "channel means\n    and standard deviations (\"torch\" "
                                       "mode).")

__all__ = ["DenseNet121", "DenseNet169", "DenseNet201", "decode_predictions",
           "preprocess_input"]
