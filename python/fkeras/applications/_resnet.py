"""ResNet (He et al., 2015: bottleneck blocks, post-activation) and ResNetV2 (He et al.,
2016: pre-activation blocks), with Keras's layer names: `conv{stage}_block{i}_{j}_{part}`."""

from fkeras import layers
from fkeras.applications import _builder

EPS = 1.001e-5
HASHES = {
    "resnet50": ("2cb95161c43110f7111970584f804107", "4d473c1dd8becc155b73f8504c6f6626"),
    "resnet101": ("f1aeb4b969a6efcfb50fad2f0c20cfc5", "88cf7a10940856eca736dc7b7e228a21"),
    "resnet152": ("100835be76be38e30d865e96f2aaae62", "ee4c566cf9a93f14d82f913c2dc6dd0c"),
    "resnet50v2": ("3ef43a0b657b3be2300d5770ece849e0", "fac2f116257151a9d068a22e544a4917"),
    "resnet101v2": ("6343647c601c52e1368623803854d971", "c0ed64b8031c3730f411d2eb4eea35b5"),
    "resnet152v2": ("a49b44d1979771252814e80f8ec446f9", "ed17cf2e0169df9d443503ef94b23b33"),
}
# blocks per stage conv2..conv5
DEPTHS = {"resnet50": (3, 4, 6, 3), "resnet101": (3, 4, 23, 3), "resnet152": (3, 8, 36, 3)}


def _bn(name):
    return layers.BatchNormalization(axis=_builder.channel_axis(), epsilon=EPS, name=name)


def block_v1(x, filters, stride=1, conv_shortcut=True, name=None):
    """Bottleneck: 1x1 (stride) -> 3x3 -> 1x1 (4 * filters), added to the shortcut."""
    if conv_shortcut:
        shortcut = layers.Conv2D(4 * filters, 1, strides=stride, name=f"{name}_0_conv")(x)
        shortcut = _bn(f"{name}_0_bn")(shortcut)
    else:
        shortcut = x
    for j, (f, k, s) in enumerate(((filters, 1, stride), (filters, 3, 1)), start=1):
        x = layers.Conv2D(f, k, strides=s, padding="same" if k == 3 else "valid",
                          name=f"{name}_{j}_conv")(x)
        x = _bn(f"{name}_{j}_bn")(x)
        x = layers.Activation("relu", name=f"{name}_{j}_relu")(x)
    x = layers.Conv2D(4 * filters, 1, name=f"{name}_3_conv")(x)
    x = _bn(f"{name}_3_bn")(x)
    x = layers.Add(name=f"{name}_add")([shortcut, x])
    return layers.Activation("relu", name=f"{name}_out")(x)


def stack_v1(x, filters, blocks, stride1=2, name=None):
    x = block_v1(x, filters, stride=stride1, name=f"{name}_block1")
    for i in range(2, blocks + 1):
        x = block_v1(x, filters, conv_shortcut=False, name=f"{name}_block{i}")
    return x


def block_v2(x, filters, stride=1, conv_shortcut=False, name=None):
    """Pre-activation bottleneck; the stride sits on the 3x3 convolution."""
    preact = _bn(f"{name}_preact_bn")(x)
    preact = layers.Activation("relu", name=f"{name}_preact_relu")(preact)
    if conv_shortcut:
        shortcut = layers.Conv2D(4 * filters, 1, strides=stride, name=f"{name}_0_conv")(preact)
    else:
        shortcut = layers.MaxPooling2D(1, strides=stride)(x) if stride > 1 else x
    x = layers.Conv2D(filters, 1, strides=1, use_bias=False, name=f"{name}_1_conv")(preact)
    x = _bn(f"{name}_1_bn")(x)
    x = layers.Activation("relu", name=f"{name}_1_relu")(x)
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)), name=f"{name}_2_pad")(x)
    x = layers.Conv2D(filters, 3, strides=stride, use_bias=False, name=f"{name}_2_conv")(x)
    x = _bn(f"{name}_2_bn")(x)
    x = layers.Activation("relu", name=f"{name}_2_relu")(x)
    x = layers.Conv2D(4 * filters, 1, name=f"{name}_3_conv")(x)
    return layers.Add(name=f"{name}_out")([shortcut, x])


def stack_v2(x, filters, blocks, stride1=2, name=None):
    x = block_v2(x, filters, conv_shortcut=True, name=f"{name}_block1")
    for i in range(2, blocks):
        x = block_v2(x, filters, name=f"{name}_block{i}")
    return block_v2(x, filters, stride=stride1, name=f"{name}_block{blocks}")


def _stages(x, depths, preact):
    for stage, (filters, blocks) in enumerate(zip((64, 128, 256, 512), depths), start=2):
        name = f"conv{stage}"
        if preact:  # V2 downsamples at the end of a stage, except the last
            x = stack_v2(x, filters, blocks, stride1=1 if stage == 5 else 2, name=name)
        else:
            x = stack_v1(x, filters, blocks, stride1=1 if stage == 2 else 2, name=name)
    return x


def build(variant, include_top, weights, input_tensor, input_shape, pooling, classes,
          classifier_activation, name):
    """A ResNet: `variant` is "resnet50", ..., "resnet152v2"."""
    preact = variant.endswith("v2")
    _builder.check_weights(weights, include_top, classes)
    input_shape = _builder.input_shape_for(input_shape, 224, 32, include_top, weights)
    img_input = _builder.image_input(input_tensor, input_shape)
    x = layers.ZeroPadding2D(padding=((3, 3), (3, 3)), name="conv1_pad")(img_input)
    x = layers.Conv2D(64, 7, strides=2, use_bias=True, name="conv1_conv")(x)
    if not preact:
        x = _bn("conv1_bn")(x)
        x = layers.Activation("relu", name="conv1_relu")(x)
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)), name="pool1_pad")(x)
    x = layers.MaxPooling2D(3, strides=2, name="pool1_pool")(x)
    x = _stages(x, DEPTHS[variant.replace("v2", "")], preact)
    if preact:
        x = _bn("post_bn")(x)
        x = layers.Activation("relu", name="post_relu")(x)
    x = _builder.head(x, include_top, pooling, classes, classifier_activation, weights,
                      pool_names=("avg_pool", "max_pool"), top_name="avg_pool")
    suffix = "" if include_top else "_notop"
    entry = _builder.imagenet_entry(
        "resnet", f"{variant}_weights_tf_dim_ordering_tf_kernels{suffix}.h5",
        HASHES[variant][0 if include_top else 1])
    return _builder.finish(input_tensor, img_input, x, name, weights, entry)
