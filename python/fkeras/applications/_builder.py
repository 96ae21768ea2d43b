"""The steps every application builder shares: argument checks, the input, the classifier or
pooling head, and the Functional model with its weights.

Weights: `weights="imagenet"` fetches Keras's published file (URL and hash as Keras lists
them) through `utils.get_file`'s cache; any other string is a path to a `.weights.h5` or
legacy `.h5` file written by Keras or fkeras.
"""

import os

from fkeras import config, layers
from fkeras.applications import imagenet_utils
from fkeras.engine.keras_tensor import is_keras_tensor

KERAS_APPS = "https://storage.googleapis.com/tensorflow/keras-applications/"


def check_weights(weights, include_top, classes):
    """Keras's two checks on `weights` and `classes`, before anything is built."""
    if not (weights in ("imagenet", None) or (isinstance(weights, (str, os.PathLike))
                                              and os.path.exists(weights))):
        raise ValueError("The `weights` argument should be either `None` (random "
                         "initialization), 'imagenet' (pre-training on ImageNet), or the path "
                         f"to the weights file to be loaded.  Received: weights={weights}")
    if weights == "imagenet" and include_top and classes != 1000:
        raise ValueError("If using `weights='imagenet'` with `include_top=True`, `classes` "
                         f"should be 1000.  Received classes={classes}")


def channel_axis():
    return 1 if config.image_data_format() == "channels_first" else -1


def image_input(input_tensor, input_shape):
    """The model's input tensor: a new `Input`, or the caller's symbolic tensor."""
    if input_tensor is None:
        return layers.Input(shape=input_shape)
    if not is_keras_tensor(input_tensor):
        raise ValueError("`input_tensor` must be a symbolic tensor (the output of "
                         f"`fkeras.Input` or of a layer). Received: input_tensor={input_tensor}")
    return input_tensor


def source_inputs(tensor):
    """The `Input` tensors a symbolic tensor is computed from, in discovery order."""
    found, seen, stack = [], set(), [tensor]
    while stack:
        t = stack.pop()
        if id(t) in seen:
            continue
        seen.add(id(t))
        layer, node_index, _ = t._keras_history
        node = layer._inbound_nodes[node_index]
        if not node.input_tensors:
            found.append(t)
        stack.extend(reversed(node.input_tensors))
    return found[0] if len(found) == 1 else found


def head(x, include_top, pooling, classes, classifier_activation, weights,
         pool_names=(None, None), top_name=None, dropout=None):
    """`include_top`: global average pooling (named `top_name`), optional Dropout, and the
    "predictions" Dense layer. Otherwise `pooling` "avg"/"max" (named by `pool_names`) or
    the feature map itself."""
    if include_top:
        x = layers.GlobalAveragePooling2D(name=top_name)(x)
        if dropout:
            x = layers.Dropout(dropout, name="top_dropout")(x)
        imagenet_utils.validate_activation(classifier_activation, weights)
        return layers.Dense(classes, activation=classifier_activation, name="predictions")(x)
    if pooling == "avg":
        return layers.GlobalAveragePooling2D(name=pool_names[0])(x)
    if pooling == "max":
        return layers.GlobalMaxPooling2D(name=pool_names[1])(x)
    return x


def finish(input_tensor, img_input, x, name, weights, imagenet_file=None):
    """The Functional model, with its weights loaded.

    `imagenet_file` is `(fname, url, file_hash)` (hash may be None) or None when Keras
    publishes no ImageNet weights for this configuration (then `weights="imagenet"` leaves
    the model initialized at random, as Keras does).
    """
    from fkeras.models.functional import Functional

    inputs = source_inputs(input_tensor) if input_tensor is not None else img_input
    model = Functional(inputs, x, name=name)
    if weights == "imagenet":
        if imagenet_file is not None:
            model.load_weights(imagenet_utils.fetch(*imagenet_file))
    elif weights is not None:
        model.load_weights(weights)
    return model


def imagenet_entry(subdir, fname, file_hash=None):
    """`(fname, url, hash)` for a file under Keras's applications bucket."""
    return fname, f"{KERAS_APPS}{subdir}/{fname}", file_hash


def input_shape_for(input_shape, default_size, min_size, include_top, weights):
    """`obtain_input_shape` with the current image data format."""
    return imagenet_utils.obtain_input_shape(
        input_shape, default_size=default_size, min_size=min_size,
        data_format=config.image_data_format(), require_flatten=include_top, weights=weights)
