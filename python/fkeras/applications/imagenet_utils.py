"""ImageNet helpers shared by the applications: `preprocess_input` (the "caffe", "tf" and
"torch" conventions), `decode_predictions` (the class index file from Keras's storage, through
`utils.get_file`'s cache), and the input-shape checks of the model builders.
"""

import json
import os
import warnings

import numpy as np

from fkeras import config

CLASS_INDEX_PATH = ("https://storage.googleapis.com/download.tensorflow.org/"
                    "data/imagenet_class_index.json")
CLASS_INDEX_HASH = "c2c37ea517e94d9795004a39431a14cb"
_CLASS_INDEX = None

# Per-channel statistics of ImageNet, in the order the convention reads the channels.
_CAFFE_MEAN = (103.939, 116.779, 123.68)  # BGR, 0-255 scale
_TORCH_MEAN = (0.485, 0.456, 0.406)       # RGB, 0-1 scale
_TORCH_STD = (0.229, 0.224, 0.225)


def _check_format(data_format, mode):
    if mode not in ("caffe", "tf", "torch"):
        raise ValueError("Expected mode to be one of `caffe`, `tf` or `torch`. "
                         f"Received: mode={mode}")
    if data_format is None:
        return config.image_data_format()
    if data_format not in ("channels_first", "channels_last"):
        raise ValueError("Expected data_format to be one of `channels_first` or "
                         f"`channels_last`. Received: data_format={data_format}")
    return data_format


def _channel_view(ndim, data_format):
    """Shape that broadcasts a per-channel vector against an image batch (or one image)."""
    if data_format == "channels_last":
        return (1,) * (ndim - 1) + (3,)
    return (3, 1, 1) if ndim == 3 else (1, 3) + (1,) * (ndim - 2)


def _flip_channels(x, data_format):
    if data_format == "channels_last":
        return x[..., ::-1]
    return x[::-1] if len(x.shape) == 3 else x[:, ::-1]


def _preprocess_numpy(x, data_format, mode):
    # Like Keras, a floating array is modified in place (and returned); other dtypes are
    # converted to float32 first.
    if not np.issubdtype(x.dtype, np.floating):
        x = x.astype("float32")
    if mode == "tf":
        x /= 127.5
        x -= 1.0
        return x
    if mode == "torch":
        x /= 255.0
        mean, std = _TORCH_MEAN, _TORCH_STD
    else:
        x = _flip_channels(x, data_format)
        mean, std = _CAFFE_MEAN, None
    view = _channel_view(x.ndim, data_format)
    x -= np.asarray(mean, dtype=x.dtype).reshape(view)
    if std is not None:
        x /= np.asarray(std, dtype=x.dtype).reshape(view)
    return x


def _preprocess_tensor(x, data_format, mode):
    from fkeras import ops

    x = ops.cast(x, "float32") if "float" not in str(x.dtype) else x
    if mode == "tf":
        return x / 127.5 - 1.0
    if mode == "torch":
        x = x / 255.0
        mean, std = _TORCH_MEAN, _TORCH_STD
    else:
        axis = -1 if data_format == "channels_last" else (0 if len(x.shape) == 3 else 1)
        x = ops.flip(x, axis=axis)
        mean, std = _CAFFE_MEAN, None
    view = _channel_view(len(x.shape), data_format)
    x = x - np.asarray(mean, dtype="float32").reshape(view)
    if std is not None:
        x = x / np.asarray(std, dtype="float32").reshape(view)
    return x


def preprocess_input(x, data_format=None, mode="caffe"):
    """Preprocesses a batch of images (values in [0, 255]) for an ImageNet model.

    Args:
        x: a NumPy array or a tensor, 3D or 4D, with 3 colour channels. A floating NumPy
            array is preprocessed in place (pass `np.copy(x)` to keep it).
        data_format: "channels_last" or "channels_first"; None uses
            `config.image_data_format()`.
        mode: "caffe" (RGB to BGR, then subtract the ImageNet channel means), "tf" (scale to
            [-1, 1]) or "torch" (scale to [0, 1], then normalize each channel with the
            ImageNet mean and standard deviation).

    Returns:
        The preprocessed array (float32 unless the input was another float type) or tensor.

    Example:
    ```python
    x = np.random.uniform(0, 255, (2, 224, 224, 3)).astype("float32")
    y = fkeras.applications.imagenet_utils.preprocess_input(x, mode="tf")
    ```
    """
    data_format = _check_format(data_format, mode)
    if isinstance(x, np.ndarray):
        return _preprocess_numpy(x, data_format, mode)
    return _preprocess_tensor(x, data_format, mode)


def fetch(fname, origin, file_hash=None):
    """`utils.get_file` into the "models" cache, with an error that says where to put the file
    when it cannot be downloaded."""
    from fkeras.utils import file_utils

    try:
        return file_utils.get_file(fname, origin, cache_subdir="models", file_hash=file_hash)
    except Exception as e:
        if "URL fetch failure" not in str(e):
            raise
        cache = os.path.join(file_utils.keras_home(), "models", fname)
        raise type(e)(
            f"Could not download {origin} ({e}). fkeras looks for this file in the Keras "
            f"cache first: place it at {cache} ($KERAS_HOME/models, default ~/.keras/models) "
            "and call again, or pass a local file path as `weights`.") from e


def decode_predictions(preds, top=5):
    """Decodes the predictions of an ImageNet model into class names.

    Args:
        preds: array of shape (samples, 1000).
        top: how many classes to return per sample.

    Returns:
        One list per sample of `(class_name, class_description, score)` tuples, best first.
        The class index file is downloaded once (`imagenet_class_index.json`, cached in
        `$KERAS_HOME/models`); without network access it must already be in the cache.
    """
    global _CLASS_INDEX
    shape = tuple(np.shape(preds))
    if len(shape) != 2 or shape[1] != 1000:
        raise ValueError("`decode_predictions` expects a batch of predictions (i.e. a 2D array "
                         f"of shape (samples, 1000)). Received array with shape: {shape}")
    if _CLASS_INDEX is None:
        with open(fetch("imagenet_class_index.json", CLASS_INDEX_PATH, CLASS_INDEX_HASH)) as f:
            _CLASS_INDEX = json.load(f)
    results = []
    for pred in np.asarray(preds):
        best = pred.argsort()[-top:][::-1]
        result = [tuple(_CLASS_INDEX[str(i)]) + (pred[i],) for i in best]
        result.sort(key=lambda item: item[2], reverse=True)
        results.append(result)
    return results


def _checked_size(input_shape, min_size, weights, data_format):
    if len(input_shape) != 3:
        raise ValueError("`input_shape` must be a tuple of three integers.")
    channels = input_shape[0] if data_format == "channels_first" else input_shape[-1]
    rows_cols = input_shape[1:] if data_format == "channels_first" else input_shape[:2]
    if channels != 3 and weights == "imagenet":
        raise ValueError(f"The input must have 3 channels; Received `input_shape={input_shape}`")
    if any(d is not None and d < min_size for d in rows_cols):
        raise ValueError(f"Input size must be at least {min_size}x{min_size}; Received: "
                         f"input_shape={input_shape}")


def obtain_input_shape(input_shape, default_size, min_size, data_format, require_flatten,
                       weights=None):
    """The model's input shape: the default, or the user's checked against the weights and
    the smallest size the architecture accepts (Keras's rules and messages)."""
    channels_last = data_format != "channels_first"
    if weights != "imagenet" and input_shape and len(input_shape) == 3:
        channels = input_shape[-1] if channels_last else input_shape[0]
        if channels not in (1, 3):
            warnings.warn("This model usually expects 1 or 3 input channels. However, it was "
                          f"passed an input_shape with {channels} input channels.",
                          stacklevel=3)
        default_shape = ((default_size, default_size, channels) if channels_last
                         else (channels, default_size, default_size))
    else:
        default_shape = ((default_size, default_size, 3) if channels_last
                         else (3, default_size, default_size))
    if weights == "imagenet" and require_flatten:
        if input_shape is not None and tuple(input_shape) != default_shape:
            raise ValueError("When setting `include_top=True` and loading `imagenet` weights, "
                             f"`input_shape` should be {default_shape}.  Received: "
                             f"input_shape={input_shape}")
        return default_shape
    if input_shape:
        _checked_size(tuple(input_shape), min_size, weights, data_format)
    elif require_flatten:
        input_shape = default_shape
    else:
        input_shape = (None, None, 3) if channels_last else (3, None, None)
    if require_flatten and None in tuple(input_shape):
        raise ValueError("If `include_top` is True, you should specify a static `input_shape`. "
                         f"Received: input_shape={input_shape}")
    return tuple(input_shape)


def correct_pad(inputs, kernel_size):
    """The ((top, bottom), (left, right)) zero padding that makes a stride-2 "valid"
    convolution centre its window as TensorFlow's "same" does."""
    axis = 2 if config.image_data_format() == "channels_first" else 1
    size = tuple(inputs.shape[axis:axis + 2])
    if isinstance(kernel_size, int):
        kernel_size = (kernel_size, kernel_size)
    adjust = (1, 1) if size[0] is None else (1 - size[0] % 2, 1 - size[1] % 2)
    half = (kernel_size[0] // 2, kernel_size[1] // 2)
    return ((half[0] - adjust[0], half[0]), (half[1] - adjust[1], half[1]))


def validate_activation(classifier_activation, weights):
    """Pretrained weights allow only `None` or "softmax" as the classifier activation."""
    if weights is None:
        return
    from fkeras import activations

    act = activations.get(classifier_activation)
    if act not in (activations.get("softmax"), activations.get(None)):
        raise ValueError("Only `None` and `softmax` activations are allowed for the "
                         "`classifier_activation` argument when using pretrained weights, "
                         "with `include_top=True`; Received: "
                         f"classifier_activation={classifier_activation}")
