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

_MATMUL_PRECISION = ["highest"]


def set_matmul_precision(precision):
    """Float32 matrix products on the GPU: "highest" (exact FP32, the default) or "high"
    (TF32 tensor cores allowed, sm_80 and later; about 10 mantissa bits per product, FP32
    accumulation). The CPU kernels are exact FP32 either way. The names are PyTorch's
    `torch.set_float32_matmul_precision` ("medium" is taken as "high").
    """
    value = str(precision).lower()
    if value not in ("highest", "high", "medium"):
        raise ValueError("`set_matmul_precision`: precision must be 'highest', 'high' or "
                         f"'medium'. Received: precision={precision!r}")
    value = "highest" if value == "highest" else "high"
    from fkeras import _native

    cuda = _native._C_cuda
    if cuda is not None and hasattr(cuda, "set_matmul_precision"):
        cuda.set_matmul_precision(value)
    _MATMUL_PRECISION[0] = value


def matmul_precision():
    """The float32 matmul precision set by `set_matmul_precision` ("highest" or "high")."""
    return _MATMUL_PRECISION[0]


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


# ---- debugging caps (Keras 3.x: also read from the environment) ----

def _env_int(name):
    value = os.environ.get(name)
    return int(value) if value not in (None, "") else None


def set_max_epochs(max_epochs):
    """Caps the epochs of every `fit` (a debugging aid; `KERAS_MAX_EPOCHS` sets it too)."""
    _settings["max_epochs"] = max_epochs


def max_epochs():
    """The cap set by `set_max_epochs` or `KERAS_MAX_EPOCHS` (None: no cap)."""
    return _settings["max_epochs"] if "max_epochs" in _settings else _env_int(
        "KERAS_MAX_EPOCHS")


def set_max_steps_per_epoch(max_steps_per_epoch):
    """Caps the steps of each epoch of `fit`, `evaluate` and `predict` (a debugging aid;
    `KERAS_MAX_STEPS_PER_EPOCH` sets it too)."""
    _settings["max_steps_per_epoch"] = max_steps_per_epoch


def max_steps_per_epoch():
    """The cap set by `set_max_steps_per_epoch` or `KERAS_MAX_STEPS_PER_EPOCH` (None: none)."""
    return _settings["max_steps_per_epoch"] if "max_steps_per_epoch" in _settings else \
        _env_int("KERAS_MAX_STEPS_PER_EPOCH")


# ---- logging, tracebacks, attention ----

def enable_interactive_logging():
    """Progress bars and summaries are written to stdout (the default)."""
    _settings["interactive_logging"] = True


def disable_interactive_logging():
    """Progress bars and summaries go to the `fkeras` logger (INFO) instead of stdout, one
    line per finished bar, as Keras 3 sends them to absl logging."""
    _settings["interactive_logging"] = False


def is_interactive_logging_enabled():
    return _settings.get("interactive_logging", True)


def enable_traceback_filtering():
    """Recorded for Keras compatibility: fkeras never rewrites tracebacks, so on or off its
    errors show the full stack."""
    _settings["traceback_filtering"] = True


def disable_traceback_filtering():
    """See `enable_traceback_filtering`."""
    _settings["traceback_filtering"] = False


def is_traceback_filtering_enabled():
    return _settings.get("traceback_filtering", True)


def enable_flash_attention():
    """Attention always uses fkeras's blocked (flash-style) kernel where it applies."""
    _settings["flash_attention"] = True


def disable_flash_attention():
    """Attention computes the full score matrix (the composed path)."""
    _settings["flash_attention"] = False


def is_flash_attention_enabled():
    """True, False, or None (the default: fkeras chooses per call)."""
    return _settings.get("flash_attention")


def is_nnx_enabled():
    """Flax NNX integration is a JAX-backend feature: always False in fkeras."""
    return False


_KERAS_BACKENDS = ("tensorflow", "jax", "torch", "numpy", "openvino")


def set_backend(backend):
    """Keras switches its backend here. fkeras is its own backend: naming a Keras backend
    warns and keeps computing with fkeras (the numbers Keras gives on any backend); any other
    name is an error."""
    import warnings

    if backend == "fkeras":
        return
    if backend not in _KERAS_BACKENDS:
        raise ValueError(f"Unknown backend {backend!r}. Expected one of "
                         f"{('fkeras',) + _KERAS_BACKENDS}.")
    warnings.warn(f"set_backend({backend!r}): fkeras computes with its own backend; the "
                  "call changes nothing.", stacklevel=2)


# ---- dtype policies ----

def dtype_policy():
    """The global DTypePolicy (float32 unless set)."""
    from fkeras.dtype_policies import DTypePolicy

    policy = _settings.get("dtype_policy")
    return policy if policy is not None else DTypePolicy(floatx())


def set_dtype_policy(policy):
    """Sets the global dtype policy (a name or a DTypePolicy) for the layers created after:
    "float32" or "mixed_bfloat16" (bfloat16 products, float32 variables; see
    fkeras.dtype_policies). Other policies are refused with a ValueError that says why."""
    from fkeras.dtype_policies import DTypePolicy, get

    policy = get(policy)
    _settings["dtype_policy"] = None if policy.name == floatx() else policy
