"""Global settings, Keras style: image data format, floatx, epsilon, threads, device.

The image data format defaults to `image_data_format` in `$KERAS_HOME/keras.json` (or
`~/.keras/keras.json`), read once on first use, else "channels_last".
"""

import json
import os

from fkeras.backend import devices as _device

_settings = {}


def _keras_json():
    home = os.environ.get("KERAS_HOME") or os.path.join(os.path.expanduser("~"), ".keras")
    path = os.path.join(home, "keras.json")
    try:
        with open(path) as f:
            data = json.load(f)
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _get(key, default):
    if key not in _settings:
        _settings[key] = _keras_json().get(key, default)
    return _settings[key]


def image_data_format():
    """Returns "channels_last" or "channels_first"."""
    value = _get("image_data_format", "channels_last")
    if value not in ("channels_last", "channels_first"):
        value = "channels_last"
    return value


def set_image_data_format(data_format):
    """Sets the default image data format: "channels_last" or "channels_first"."""
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError(
            "The `data_format` argument must be one of {'channels_first', 'channels_last'}. "
            f"Received: data_format={data_format}"
        )
    _settings["image_data_format"] = data_format


def floatx():
    """The default float type name. fkeras computes in float32."""
    return "float32"


def set_floatx(value):
    if value != "float32":
        raise ValueError(f"fkeras computes in float32 only; received floatx={value!r}.")


def epsilon():
    return float(_get("epsilon", 1e-7))


def set_epsilon(value):
    _settings["epsilon"] = float(value)


def backend():
    """The name of the backend: always "fkeras"."""
    return "fkeras"


def num_threads():
    """Threads used by the CPU kernels."""
    from fkeras import _native

    return _native._C.num_threads()


def set_num_threads(n):
    """Sets the number of threads the CPU kernels use (n >= 1) and starts them.

    Returns:
        The thread count in use. It is smaller than `n`, with a `RuntimeWarning`, when the
        system refuses to start more threads (a process or address-space limit); the kernels
        then run on the threads that did start.
    """
    from fkeras import _native

    return _native._C.set_num_threads(int(n))


set_device = _device.set_device


def device():
    """The name of the current default device."""
    return _device.current_device_name()


def data_format_or_default(data_format):
    """Validates a layer's `data_format` argument, None meaning the configured default."""
    if data_format is None:
        return image_data_format()
    value = str(data_format).lower()
    if value not in ("channels_last", "channels_first"):
        raise ValueError(
            "The `data_format` argument must be one of {'channels_first', 'channels_last'}. "
            f"Received: data_format={data_format}"
        )
    return value


def enable_unsafe_deserialization():
    """Allows loading configs that hold Python bytecode (Lambda layers with a `lambda`)."""
    _settings["safe_mode"] = False


def in_safe_mode():
    """True unless `enable_unsafe_deserialization()` was called."""
    return _settings.get("safe_mode", True)
