"""A Keras 3 operation node read from a file (`x + y`, `ops.mean(x, axis=1)` in a Keras
functional graph), replayed with the `fkeras.ops` function of the same name.

Keras 3 writes such a node as `{"module": "keras.src.ops.<group>", "class_name": "Mean",
"config": {"name": ..., "axis": 1, ...}}` with the call's positional arguments in its inbound
nodes. The function is looked up in fkeras's own ops table only (the module merely picks the
grouping: numpy, nn, linalg, math, image, core), the config's other keys become keyword
arguments, and the entry is written back unchanged, so files exchange both ways.
"""

import re

from fkeras.layers.layer import Layer

# Keras class names that are not the CamelCase of the function's name.
_IRREGULAR = {
    "AllClose": "allclose", "IsIn": "isin", "SearchSorted": "searchsorted",
    "BatchNorm": "batch_normalization", "LayerNorm": "layer_normalization",
    "RMSNorm": "rms_normalization", "CTCDecode": "ctc_decode", "CTCLoss": "ctc_loss",
    "PSNR": "psnr", "CDist": "cdist", "FFT": "fft", "FFT2": "fft2", "IFFT2": "ifft2",
    "IRFFT": "irfft", "ISTFT": "istft", "RFFT": "rfft", "STFT": "stft", "JVP": "jvp",
    "SVD": "svd", "HSVToRGB": "hsv_to_rgb", "RGBToGrayscale": "rgb_to_grayscale",
    "RGBToHSV": "rgb_to_hsv", "SSIM": "ssim",
}
_GROUPS = ("numpy", "nn", "linalg", "math", "image", "core")


def function_name(class_name):
    if class_name in _IRREGULAR:
        return _IRREGULAR[class_name]
    return re.sub(r"(?<!^)(?=[A-Z])", "_", class_name).lower()


def resolve_op_function(module, class_name):
    """The fkeras.ops function a Keras operation entry names, or a ValueError naming it."""
    from fkeras import ops

    name = function_name(str(class_name))
    group = str(module).rsplit(".", 1)[-1]
    candidates = []
    if group in _GROUPS and group not in ("math", "core"):
        candidates.append(getattr(ops, group, None))
    candidates.append(ops)
    for space in candidates:
        fn = getattr(space, name, None) if space is not None else None
        if callable(fn) and not isinstance(fn, type) and not name.startswith("_"):
            return fn
    raise ValueError(f"Unknown Keras operation '{class_name}' (module '{module}'): fkeras.ops "
                     f"has no function '{name}'.")


class KerasOpCall(Layer):
    """Replays one Keras operation node: `fn(*args, **attrs, **call_kwargs)`."""

    def __init__(self, module, class_name, config):
        config = dict(config or {})
        name = config.pop("name", None)
        super().__init__(name=name)
        self._keras_module, self._keras_class = module, class_name
        self._attrs = config
        self._fn = resolve_op_function(module, class_name)
        self.built = True

    def call(self, *args, **kwargs):
        kwargs.pop("training", None)  # the layer machinery's arguments, not the op's
        kwargs.pop("mask", None)
        if self._keras_class == "GetItem" and len(args) == 2 and isinstance(args[1], list):
            args = (args[0], tuple(args[1]))  # Keras writes a tuple key as a list
        return self._fn(*args, **self._attrs, **kwargs)

    def get_config(self):
        return {"name": self.name, **self._attrs}

    def keras_entry(self):
        """(module, class_name, config, extra call arguments) as Keras wrote them."""
        return self._keras_module, self._keras_class, self.get_config(), []
