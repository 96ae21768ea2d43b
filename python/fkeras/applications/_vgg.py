"""VGG16 and VGG19 (Simonyan & Zisserman, 2014): five blocks of 3x3 "same" ReLU convolutions,
each closed by 2x2 max pooling, and two 4096-unit Dense layers before the classifier."""

from fkeras import layers
from fkeras.applications import _builder, imagenet_utils

# (filters, convolutions) per block
BLOCKS = {"vgg16": ((64, 2), (128, 2), (256, 3), (512, 3), (512, 3)),
          "vgg19": ((64, 2), (128, 2), (256, 4), (512, 4), (512, 4))}
HASHES = {"vgg16": ("64373286793e3c8b2b4e3219cbf3544b", "6d6bbae143d832006294945121d1f1fc"),
          "vgg19": ("cbe5617147190e668d6c5d5026f83318", "253f8cb515780f3b799900260a226db6")}


def build(variant, include_top, weights, input_tensor, input_shape, pooling, classes,
          classifier_activation, name):
    _builder.check_weights(weights, include_top, classes)
    input_shape = _builder.input_shape_for(input_shape, 224, 32, include_top, weights)
    img_input = _builder.image_input(input_tensor, input_shape)
    x = img_input
    for b, (filters, convs) in enumerate(BLOCKS[variant], start=1):
        for c in range(1, convs + 1):
            x = layers.Conv2D(filters, (3, 3), activation="relu", padding="same",
                              name=f"block{b}_conv{c}")(x)
        x = layers.MaxPooling2D((2, 2), strides=(2, 2), name=f"block{b}_pool")(x)
    if include_top:
        x = layers.Flatten(name="flatten")(x)
        x = layers.Dense(4096, activation="relu", name="fc1")(x)
        x = layers.Dense(4096, activation="relu", name="fc2")(x)
        imagenet_utils.validate_activation(classifier_activation, weights)
        x = layers.Dense(classes, activation=classifier_activation, name="predictions")(x)
    else:
        x = _builder.head(x, False, pooling, classes, classifier_activation, weights)
    suffix = "" if include_top else "_notop"
    entry = _builder.imagenet_entry(
        variant, f"{variant}_weights_tf_dim_ordering_tf_kernels{suffix}.h5",
        HASHES[variant][0 if include_top else 1])
    return _builder.finish(input_tensor, img_input, x, name, weights, entry)
