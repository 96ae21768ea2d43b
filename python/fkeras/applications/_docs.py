"""The argument documentation the application builders share."""

COMMON_ARGS = """
    Args:
        include_top: whether to include the classifier at the top of the network.
        weights: None (random initialization), "imagenet" (Keras's published weights, fetched
            through the `utils.get_file` cache in `$KERAS_HOME/models`) or the path to a
            `.weights.h5` / legacy `.h5` weights file (written by Keras or fkeras).
        input_tensor: optional symbolic tensor (`fkeras.Input` or a layer output) to use as
            the image input.
        input_shape: optional shape tuple, only when `include_top` is False (otherwise the
            default size below is required with "imagenet" weights).
        pooling: with `include_top=False`: None (the 4D feature map), "avg" (global average
            pooling) or "max" (global max pooling).
        classes: number of classes, with `include_top=True` and no "imagenet" weights.
        classifier_activation: activation of the "predictions" layer; None returns logits.
            With pretrained weights only None and "softmax" are allowed.
        name: the model's name.{extra}

    Returns:
        A Functional model with Keras's layer names, so weight files interchange.
"""


def document(fn, summary, extra=""):
    """Sets `fn.__doc__` to `summary` followed by the common arguments (and `extra`)."""
    fn.__doc__ = summary.strip() + "\n" + COMMON_ARGS.format(extra=extra)
    return fn


def preprocess_doc(fn, what):
    fn.__doc__ = (f"Preprocesses a batch of images with values in [0, 255]: {what}\n\n"
                  "    Args:\n        x: NumPy array or tensor, 3D or 4D, 3 channels. A "
                  "floating NumPy array is\n            modified in place.\n"
                  "        data_format: None (the global setting), \"channels_last\" or "
                  "\"channels_first\".\n\n    Returns:\n        The preprocessed array or "
                  "tensor.\n")
    return fn
