"""NASNetMobile and NASNetLarge (Zoph et al., 2018): cells found by architecture search, with
`preprocess_input` ("tf" convention) and `decode_predictions`. Several layers are unnamed in
Keras (auto names), so build in a fresh session (`fkeras.utils.clear_session()`) when names
must match a Keras model's. channels_last only."""

from fkeras import config, layers
from fkeras.applications import _builder, _docs, imagenet_utils
from fkeras.applications.imagenet_utils import decode_predictions

FILES = {  # default size -> ((with top), (without top)): (file name, URL name, md5)
    224: (("nasnet_mobile.h5", "NASNet-mobile.h5", "020fb642bf7360b370c678b08e0adf61"),
          ("nasnet_mobile_no_top.h5", "NASNet-mobile-no-top.h5",
           "1ed92395b5b598bdda52abe5c0dbfd63")),
    331: (("nasnet_large.h5", "NASNet-large.h5", "11577c9a518f0070763c2b964a382f17"),
          ("nasnet_large_no_top.h5", "NASNet-large-no-top.h5",
           "d81d89dc07e6e56530c4e77faddd61b5")),
}


def _bn(name):
    return layers.BatchNormalization(axis=-1, momentum=0.9997, epsilon=1e-3, name=name)


def _conv1x1(x, filters, name):
    return layers.Conv2D(filters, (1, 1), strides=(1, 1), padding="same", use_bias=False,
                         kernel_initializer="he_normal", name=name)(x)


def _separable_conv_block(ip, filters, kernel_size=(3, 3), strides=(1, 1), block_id=None):
    """ReLU -> separable conv (stride) -> BN -> ReLU -> separable conv -> BN."""
    x = layers.Activation("relu")(ip)
    if strides == (2, 2):
        x = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(x, kernel_size),
                                 name=f"separable_conv_1_pad_{block_id}")(x)
    x = layers.SeparableConv2D(filters, kernel_size, strides=strides,
                               name=f"separable_conv_1_{block_id}",
                               padding="valid" if strides == (2, 2) else "same",
                               use_bias=False)(x)
    x = _bn(f"separable_conv_1_bn_{block_id}")(x)
    x = layers.Activation("relu")(x)
    x = layers.SeparableConv2D(filters, kernel_size, name=f"separable_conv_2_{block_id}",
                               padding="same", use_bias=False)(x)
    return _bn(f"separable_conv_2_bn_{block_id}")(x)


def _adjust_block(p, ip, filters, block_id=None):
    """Brings the previous cell's output `p` to the shape of `ip` (halving its size with two
    offset average-pooled paths, or projecting its channels)."""
    if p is None:
        return ip
    if p.shape[-2] != ip.shape[-2]:
        p = layers.Activation("relu", name=f"adjust_relu_1_{block_id}")(p)
        p1 = layers.AveragePooling2D((1, 1), strides=(2, 2), padding="valid",
                                     name=f"adjust_avg_pool_1_{block_id}")(p)
        p1 = _conv1x1(p1, filters // 2, f"adjust_conv_1_{block_id}")
        p2 = layers.ZeroPadding2D(padding=((0, 1), (0, 1)))(p)
        p2 = layers.Cropping2D(cropping=((1, 0), (1, 0)))(p2)
        p2 = layers.AveragePooling2D((1, 1), strides=(2, 2), padding="valid",
                                     name=f"adjust_avg_pool_2_{block_id}")(p2)
        p2 = _conv1x1(p2, filters // 2, f"adjust_conv_2_{block_id}")
        p = layers.concatenate([p1, p2], axis=-1)
        return _bn(f"adjust_bn_{block_id}")(p)
    if p.shape[-1] != filters:
        p = layers.Activation("relu")(p)
        p = _conv1x1(p, filters, f"adjust_conv_projection_{block_id}")
        return _bn(f"adjust_bn_{block_id}")(p)
    return p


def _squeeze(ip, filters, kind, block_id):
    h = layers.Activation("relu")(ip)
    h = _conv1x1(h, filters, f"{kind}_conv_1_{block_id}")
    return _bn(f"{kind}_bn_1_{block_id}")(h)


def _avg3(x, strides, padding, name):
    return layers.AveragePooling2D((3, 3), strides=strides, padding=padding, name=name)(x)


def _normal_a_cell(ip, p, filters, block_id=None):
    p = _adjust_block(p, ip, filters, block_id)
    h = _squeeze(ip, filters, "normal", block_id)
    sep = _separable_conv_block
    x1 = layers.add([sep(h, filters, (5, 5), block_id=f"normal_left1_{block_id}"),
                     sep(p, filters, block_id=f"normal_right1_{block_id}")],
                    name=f"normal_add_1_{block_id}")
    x2 = layers.add([sep(p, filters, (5, 5), block_id=f"normal_left2_{block_id}"),
                     sep(p, filters, (3, 3), block_id=f"normal_right2_{block_id}")],
                    name=f"normal_add_2_{block_id}")
    x3 = layers.add([_avg3(h, (1, 1), "same", f"normal_left3_{block_id}"), p],
                    name=f"normal_add_3_{block_id}")
    x4 = layers.add([_avg3(p, (1, 1), "same", f"normal_left4_{block_id}"),
                     _avg3(p, (1, 1), "same", f"normal_right4_{block_id}")],
                    name=f"normal_add_4_{block_id}")
    x5 = layers.add([sep(h, filters, block_id=f"normal_left5_{block_id}"), h],
                    name=f"normal_add_5_{block_id}")
    x = layers.concatenate([p, x1, x2, x3, x4, x5], axis=-1, name=f"normal_concat_{block_id}")
    return x, ip


def _reduction_a_cell(ip, p, filters, block_id=None):
    p = _adjust_block(p, ip, filters, block_id)
    h = _squeeze(ip, filters, "reduction", block_id)
    h3 = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(h, 3),
                              name=f"reduction_pad_1_{block_id}")(h)
    sep, s2 = _separable_conv_block, (2, 2)
    x1 = layers.add([sep(h, filters, (5, 5), s2, block_id=f"reduction_left1_{block_id}"),
                     sep(p, filters, (7, 7), s2, block_id=f"reduction_right1_{block_id}")],
                    name=f"reduction_add_1_{block_id}")
    left2 = layers.MaxPooling2D((3, 3), strides=s2, padding="valid",
                                name=f"reduction_left2_{block_id}")(h3)
    x2 = layers.add([left2, sep(p, filters, (7, 7), s2,
                                block_id=f"reduction_right2_{block_id}")],
                    name=f"reduction_add_2_{block_id}")
    left3 = _avg3(h3, s2, "valid", f"reduction_left3_{block_id}")
    x3 = layers.add([left3, sep(p, filters, (5, 5), s2,
                                block_id=f"reduction_right3_{block_id}")],
                    name=f"reduction_add3_{block_id}")
    x4 = layers.add([x2, _avg3(x1, (1, 1), "same", f"reduction_left4_{block_id}")])
    left5 = sep(x1, filters, (3, 3), block_id=f"reduction_left4_{block_id}")  # Keras's name
    x5 = layers.add([left5, layers.MaxPooling2D((3, 3), strides=s2, padding="valid",
                                                name=f"reduction_right5_{block_id}")(h3)],
                    name=f"reduction_add4_{block_id}")
    x = layers.concatenate([x2, x3, x4, x5], axis=-1, name=f"reduction_concat_{block_id}")
    return x, ip


def NASNet(input_shape=None, penultimate_filters=4032, num_blocks=6, stem_block_filters=96,
           skip_reduction=True, filter_multiplier=2, include_top=True, weights="imagenet",
           input_tensor=None, pooling=None, classes=1000, default_size=None,
           classifier_activation="softmax", name="NASNet"):
    """The NASNet-A builder (Keras's signature)."""
    if config.image_data_format() == "channels_first":
        raise ValueError("NASNet does not support the `channels_first` image data format. "
                         "Switch to `channels_last` by editing your local config file at "
                         "~/.keras/keras.json")
    _builder.check_weights(weights, include_top, classes)
    if isinstance(input_shape, tuple) and None in input_shape and weights == "imagenet":
        raise ValueError("When specifying the input shape of a NASNet and loading `ImageNet` "
                         "weights, the input_shape argument must be static (no None entries). "
                         f"Got: `input_shape={input_shape}`.")
    default_size = default_size or 331
    input_shape = _builder.input_shape_for(input_shape, default_size, 32, include_top, weights)
    img_input = _builder.image_input(input_tensor, input_shape)
    if penultimate_filters % (24 * filter_multiplier**2) != 0:
        raise ValueError("For NASNet-A models, the `penultimate_filters` must be a multiple of "
                         "24 * (`filter_multiplier` ** 2). Current value: "
                         f"{penultimate_filters}")
    filters = penultimate_filters // 24
    x = layers.Conv2D(stem_block_filters, (3, 3), strides=(2, 2), padding="valid",
                      use_bias=False, name="stem_conv1", kernel_initializer="he_normal")(img_input)
    x = _bn("stem_bn1")(x)
    x, p = _reduction_a_cell(x, None, filters // filter_multiplier**2, block_id="stem_1")
    x, p = _reduction_a_cell(x, p, filters // filter_multiplier, block_id="stem_2")
    for stage in range(3):
        if stage:
            x, p0 = _reduction_a_cell(x, p, filters * filter_multiplier**stage,
                                      block_id=f"reduce_{stage * num_blocks}")
            p = p if skip_reduction else p0
        for i in range(num_blocks):
            block_id = f"{stage * num_blocks + i + 1}" if stage else f"{i}"
            x, p = _normal_a_cell(x, p, filters * filter_multiplier**stage, block_id=block_id)
    x = layers.Activation("relu")(x)
    x = _builder.head(x, include_top, pooling, classes, classifier_activation, weights)
    entry = None
    if weights == "imagenet":
        if default_size not in FILES:
            raise ValueError("ImageNet weights can only be loaded with NASNetLarge or "
                             "NASNetMobile")
        fname, url_name, md5 = FILES[default_size][0 if include_top else 1]
        entry = (fname, f"{_builder.KERAS_APPS}nasnet/{url_name}", md5)
    return _builder.finish(input_tensor, img_input, x, name, weights, entry)


def NASNetMobile(input_shape=None, include_top=True, weights="imagenet", input_tensor=None,
                 pooling=None, classes=1000, classifier_activation="softmax",
                 name="nasnet_mobile"):
    if not include_top and input_shape is None:
        input_shape = (224, 224, 3)
    return NASNet(input_shape, penultimate_filters=1056, num_blocks=4, stem_block_filters=32,
                  skip_reduction=False, filter_multiplier=2, include_top=include_top,
                  weights=weights, input_tensor=input_tensor, pooling=pooling, classes=classes,
                  default_size=224, classifier_activation=classifier_activation, name=name)


def NASNetLarge(input_shape=None, include_top=True, weights="imagenet", input_tensor=None,
                pooling=None, classes=1000, classifier_activation="softmax",
                name="nasnet_large"):
    return NASNet(input_shape, penultimate_filters=4032, num_blocks=6, stem_block_filters=96,
                  skip_reduction=True, filter_multiplier=2, include_top=include_top,
                  weights=weights, input_tensor=input_tensor, pooling=pooling, classes=classes,
                  default_size=331, classifier_activation=classifier_activation, name=name)


_docs.document(NASNetMobile, "Instantiates the NASNet-A Mobile architecture (default input "
                             "224x224, at least 32x32;\n    channels_last only). Keras 3.15 "
                             "refuses it on its torch backend; fkeras builds it.")
_docs.document(NASNetLarge, "Instantiates the NASNet-A Large architecture (default input "
                            "331x331, at least 32x32;\n    channels_last only).")


def preprocess_input(x, data_format=None):
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


_docs.preprocess_doc(preprocess_input, "scaled to [-1, 1] (\"tf\" mode).")

__all__ = ["NASNetLarge", "NASNetMobile", "decode_predictions", "preprocess_input"]
