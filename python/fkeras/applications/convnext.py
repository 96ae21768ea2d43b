"""ConvNeXt Tiny, Small, Base, Large and XLarge (Liu et al., 2022): a ResNet modernized with
7x7 depthwise convolutions, LayerNormalization, inverted bottlenecks (as Dense layers over the
channels), GELU and per-channel layer scale. With `include_preprocessing=True` (the default)
the model normalizes its [0, 255] inputs itself, so `preprocess_input` is the identity."""

import numpy as np

from fkeras import config, initializers, layers, ops
from fkeras import random as fk_random
from fkeras.applications import _builder, _docs, imagenet_utils
from fkeras.applications.imagenet_utils import decode_predictions
from fkeras.models.sequential import Sequential

HASHES = {
    "convnext_tiny": ("8ae6e78ce2933352b1ef4008e6dd2f17bc40771563877d156bc6426c7cf503ff",
                      "d547c096cabd03329d7be5562c5e14798aa39ed24b474157cef5e85ab9e49ef1"),
    "convnext_small": ("ce1277d8f1ee5a0ef0e171469089c18f5233860ceaf9b168049cb9263fd7483c",
                       "6fc8009faa2f00c1c1dfce59feea9b0745eb260a7dd11bee65c8e20843da6eab"),
    "convnext_base": ("52cbb006d3dadd03f6e095a8ca1aca47aecdd75acb4bc74bce1f5c695d0086e6",
                      "40a20c5548a5e9202f69735ecc06c990e6b7c9d2de39f0361e27baeb24cb7c45"),
    "convnext_large": ("070c5ed9ed289581e477741d3b34beffa920db8cf590899d6d2c67fba2a198a6",
                       "96f02b6f0753d4f543261bc9d09bed650f24dd6bc02ddde3066135b63d23a1cd"),
    "convnext_xlarge": ("c1f5ccab661354fc3a79a10fa99af82f0fbf10ec65cb894a3ae0815f17a889ee",
                        "de3f8a54174130e0cecdc71583354753d557fcf1f4487331558e2a16ba0cfe05"),
}
MODEL_CONFIGS = {
    "tiny": {"depths": [3, 3, 9, 3], "projection_dims": [96, 192, 384, 768]},
    "small": {"depths": [3, 3, 27, 3], "projection_dims": [96, 192, 384, 768]},
    "base": {"depths": [3, 3, 27, 3], "projection_dims": [128, 256, 512, 1024]},
    "large": {"depths": [3, 3, 27, 3], "projection_dims": [192, 384, 768, 1536]},
    "xlarge": {"depths": [3, 3, 27, 3], "projection_dims": [256, 512, 1024, 2048]},
}


class StochasticDepth(layers.Layer):
    """Drops the whole residual branch of a sample with probability `drop_path_rate` during
    training (scaling kept samples by 1 / (1 - rate)); the identity at inference.

    Args:
        drop_path_rate: probability of dropping a sample's branch.
    """

    def __init__(self, drop_path_rate, **kwargs):
        super().__init__(**kwargs)
        self.drop_path_rate = drop_path_rate

    def call(self, x, training=None):
        if not training:
            return x
        keep = 1.0 - self.drop_path_rate
        shape = (ops.shape(x)[0],) + (1,) * (len(ops.shape(x)) - 1)
        mask = ops.floor(keep + fk_random.uniform(shape, 0.0, 1.0))
        return ops.multiply(ops.divide(x, keep), mask)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "drop_path_rate": self.drop_path_rate}


class LayerScale(layers.Layer):
    """Multiplies its input by a learned per-channel vector initialized to `init_values`.

    Args:
        init_values: initial value of every scale.
        projection_dim: number of channels (the last axis).
    """

    def __init__(self, init_values, projection_dim, **kwargs):
        super().__init__(**kwargs)
        self.init_values = init_values
        self.projection_dim = projection_dim

    def build(self, _):
        self.gamma = self.add_weight(shape=(self.projection_dim,),
                                     initializer=initializers.Constant(self.init_values),
                                     trainable=True)
        self.built = True

    def call(self, x):
        return ops.multiply(x, self.gamma)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "init_values": self.init_values,
                "projection_dim": self.projection_dim}


def ConvNeXtBlock(projection_dim, drop_path_rate=0.0, layer_scale_init_value=1e-6, name=None):
    """Depthwise 7x7 -> LayerNorm -> Dense 4x -> GELU -> Dense -> [LayerScale], added to the
    input through StochasticDepth (or an identity Activation when the rate is 0)."""
    def apply(inputs):
        x = layers.Conv2D(projection_dim, kernel_size=7, padding="same", groups=projection_dim,
                          name=f"{name}_depthwise_conv")(inputs)
        x = layers.LayerNormalization(epsilon=1e-6, name=f"{name}_layernorm")(x)
        x = layers.Dense(4 * projection_dim, name=f"{name}_pointwise_conv_1")(x)
        x = layers.Activation("gelu", name=f"{name}_gelu")(x)
        x = layers.Dense(projection_dim, name=f"{name}_pointwise_conv_2")(x)
        if layer_scale_init_value is not None:
            x = LayerScale(layer_scale_init_value, projection_dim,
                           name=f"{name}_layer_scale")(x)
        if drop_path_rate:
            branch = StochasticDepth(drop_path_rate, name=f"{name}_stochastic_depth")
        else:
            branch = layers.Activation("linear", name=f"{name}_identity")
        return inputs + branch(x)

    return apply


def _stages(x, name, depths, projection_dims, drop_path_rate, layer_scale_init_value):
    downsample = [Sequential([
        layers.Conv2D(projection_dims[0], kernel_size=4, strides=4, name=f"{name}_stem_conv"),
        layers.LayerNormalization(epsilon=1e-6, name=f"{name}_stem_layernorm"),
    ], name=f"{name}_stem")]
    for i in range(3):
        downsample.append(Sequential([
            layers.LayerNormalization(epsilon=1e-6, name=f"{name}_downsampling_layernorm_{i}"),
            layers.Conv2D(projection_dims[i + 1], kernel_size=2, strides=2,
                          name=f"{name}_downsampling_conv_{i}"),
        ], name=f"{name}_downsampling_block_{i}"))
    rates = [float(r) for r in np.linspace(0.0, drop_path_rate, sum(depths))]
    cur = 0
    for i in range(4):
        x = downsample[i](x)
        for j in range(depths[i]):
            x = ConvNeXtBlock(projection_dims[i], rates[cur + j], layer_scale_init_value,
                              name=f"{name}_stage_{i}_block_{j}")(x)
        cur += depths[i]
    return x


def _check_imagenet(weights_name, depths, projection_dims, name):
    expected = MODEL_CONFIGS[weights_name.split("convnext_")[-1]]
    if depths != expected["depths"] or projection_dims != expected["projection_dims"]:
        raise ValueError(f"Architecture configuration does not match {weights_name} variant. "
                         "When using pre-trained weights, the model architecture must match "
                         "the pre-trained configuration exactly. Expected depths: "
                         f"{expected['depths']}, got: {depths}. Expected projection_dims: "
                         f"{expected['projection_dims']}, got: {projection_dims}.")
    if weights_name not in name:
        raise ValueError(f'Model name "{name}" does not match weights variant '
                         f'"{weights_name}". When using imagenet weights, model name must '
                         f'contain the weights variant (e.g., "{weights_name}").')


def ConvNeXt(depths, projection_dims, drop_path_rate=0.0, layer_scale_init_value=1e-6,
             default_size=224, name="convnext", include_preprocessing=True, include_top=True,
             weights=None, input_tensor=None, input_shape=None, pooling=None, classes=1000,
             classifier_activation="softmax", weights_name=None):
    """The ConvNeXt family's builder (Keras's signature)."""
    if config.image_data_format() == "channels_first":
        raise ValueError("ConvNeXt does not support the `channels_first` image data format. "
                         "Switch to `channels_last` by editing your local config file at "
                         "~/.keras/keras.json")
    _builder.check_weights(weights, include_top, classes)
    input_shape = _builder.input_shape_for(input_shape, default_size, 32, include_top, weights)
    img_input = _builder.image_input(input_tensor, input_shape)
    x = img_input
    if include_preprocessing and input_shape[-1] == 3:
        x = layers.Normalization(
            mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
            variance=[(0.229 * 255) ** 2, (0.224 * 255) ** 2, (0.225 * 255) ** 2],
            name=f"{name}_prestem_normalization")(x)
    x = _stages(x, name, depths, projection_dims, drop_path_rate, layer_scale_init_value)
    if include_top:
        imagenet_utils.validate_activation(classifier_activation, weights)
        x = layers.GlobalAveragePooling2D(name=f"{name}_head_gap")(x)
        x = layers.LayerNormalization(epsilon=1e-6, name=f"{name}_head_layernorm")(x)
        x = layers.Dense(classes, activation=classifier_activation, name=f"{name}_head_dense")(x)
    else:
        x = _builder.head(x, False, pooling, classes, classifier_activation, weights)
        x = layers.LayerNormalization(epsilon=1e-6)(x)
    entry = None
    if weights == "imagenet":
        _check_imagenet(weights_name, depths, projection_dims, name)
        fname = name + (".h5" if include_top else "_notop.h5")
        entry = _builder.imagenet_entry("convnext", fname,
                                        HASHES[weights_name][0 if include_top else 1])
    if input_tensor is not None:  # Keras keeps the first source input only
        sources = _builder.source_inputs(input_tensor)
        input_tensor = sources[0] if isinstance(sources, list) else sources
    return _builder.finish(input_tensor, img_input, x, name, weights, entry)


def _variant(size, title):
    cfg = MODEL_CONFIGS[size]

    def build(include_top=True, include_preprocessing=True, weights="imagenet",
              input_tensor=None, input_shape=None, pooling=None, classes=1000,
              classifier_activation="softmax", name=f"convnext_{size}"):
        return ConvNeXt(weights_name=f"convnext_{size}", depths=cfg["depths"],
                        projection_dims=cfg["projection_dims"], drop_path_rate=0.0,
                        layer_scale_init_value=1e-6, default_size=224, name=name,
                        include_top=include_top, include_preprocessing=include_preprocessing,
                        weights=weights, input_tensor=input_tensor, input_shape=input_shape,
                        pooling=pooling, classes=classes,
                        classifier_activation=classifier_activation)

    build.__name__ = build.__qualname__ = title
    return _docs.document(build, f"Instantiates the {title} architecture (default input "
                                 "224x224, at least 32x32; channels_last only).", extra="""
        include_preprocessing: whether the model normalizes its [0, 255] inputs itself.""")


ConvNeXtTiny = _variant("tiny", "ConvNeXtTiny")
ConvNeXtSmall = _variant("small", "ConvNeXtSmall")
ConvNeXtBase = _variant("base", "ConvNeXtBase")
ConvNeXtLarge = _variant("large", "ConvNeXtLarge")
ConvNeXtXLarge = _variant("xlarge", "ConvNeXtXLarge")


def preprocess_input(x, data_format=None):
    """The identity, kept for API compatibility: ConvNeXt models normalize their inputs
    themselves (`include_preprocessing=True`).

    Args:
        x: a NumPy array or tensor.
        data_format: unused.

    Returns:
        `x`, unchanged.
    """
    return x


__all__ = ["ConvNeXtBase", "ConvNeXtLarge", "ConvNeXtSmall", "ConvNeXtTiny", "ConvNeXtXLarge",
           "decode_predictions", "preprocess_input"]
