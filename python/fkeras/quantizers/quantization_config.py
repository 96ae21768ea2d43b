"""Keras 3's quantization configs: which quantizer a layer's `quantize` uses for its weights
and for its inputs. fkeras implements the int8 mode (`Int8QuantizationConfig`); Keras's other
modes (int4, float8, GPTQ, AWQ) and their configs are absent (docs/ops_coverage.md), and asking
for one of those modes is refused with a ValueError naming the supported one."""

import abc

from fkeras.quantizers.quantizers import AbsMaxQuantizer, Quantizer

MODES = ("int8", "float8", "int4", "gptq", "awq")  # Keras 3.15's QUANTIZATION_MODES
SUPPORTED_MODES = ("int8",)


def unsupported_mode_error(mode):
    return ValueError(
        f"Quantization mode='{mode}' is not supported by fkeras: only 'int8' is implemented "
        "(per-channel abs-max weights, per-row inputs, as Keras 3). Received: "
        f"mode={mode}")


def _serialize_quantizer(q):
    if q is None:
        return None
    return {"module": "keras.quantizers", "class_name": type(q).__name__,
            "config": q.get_config(), "registered_name": None}


def _deserialize_quantizer(config):
    if config is None or isinstance(config, Quantizer):
        return config
    classes = {"AbsMaxQuantizer": AbsMaxQuantizer, "Quantizer": Quantizer}
    cls = classes.get(config.get("class_name"))
    if cls is None:
        raise ValueError(f"Unknown quantizer: {config.get('class_name')!r}. fkeras knows "
                         f"{sorted(classes)}.")
    return cls.from_config(dict(config.get("config") or {}))


class QuantizationConfig(abc.ABC):
    """Base class of quantization configs (Keras 3); a subclass names its `mode`.

    Args:
        weight_quantizer: the quantizer of the weights (None: the layer's default).
        activation_quantizer: the quantizer of the layer's inputs.
    """

    def __init__(self, weight_quantizer=None, activation_quantizer=None):
        self.weight_quantizer = weight_quantizer
        self.activation_quantizer = activation_quantizer

    @property
    @abc.abstractmethod
    def mode(self):
        """The quantization mode this config is for (e.g. "int8")."""

    def get_config(self):
        return {"weight_quantizer": _serialize_quantizer(self.weight_quantizer),
                "activation_quantizer": _serialize_quantizer(self.activation_quantizer)}

    @classmethod
    def from_config(cls, config):
        return cls(weight_quantizer=_deserialize_quantizer(config.get("weight_quantizer")),
                   activation_quantizer=_deserialize_quantizer(
                       config.get("activation_quantizer")))


class Int8QuantizationConfig(QuantizationConfig):
    """int8 quantization settings (Keras 3): weights per output channel, inputs per row.

    Args:
        weight_quantizer: an int8 quantizer for the kernel (None: `AbsMaxQuantizer(axis=0)`).
        activation_quantizer: the inputs' quantizer; "default": `AbsMaxQuantizer()` (axis -1).
    """

    def __init__(self, weight_quantizer=None, activation_quantizer="default"):
        if isinstance(activation_quantizer, str) and activation_quantizer == "default":
            activation_quantizer = AbsMaxQuantizer()
        super().__init__(weight_quantizer, activation_quantizer)
        if weight_quantizer is not None and weight_quantizer.output_dtype != "int8":
            raise ValueError("Int8QuantizationConfig requires a weight_quantizer with "
                             "output_dtype='int8'. Received: "
                             f"output_dtype={weight_quantizer.output_dtype}")

    @property
    def mode(self):
        return "int8"


_CONFIGS = {"Int8QuantizationConfig": Int8QuantizationConfig}


def serialize(config):
    """The Keras 3 dict of a QuantizationConfig (None stays None)."""
    if config is None:
        return None
    return {"module": "keras.quantizers", "class_name": type(config).__name__,
            "config": config.get_config(), "registered_name": None}


def deserialize(config, custom_objects=None):
    """A QuantizationConfig from its Keras 3 dict."""
    if config is None or isinstance(config, QuantizationConfig):
        return config
    cls = _CONFIGS.get(config.get("class_name"))
    if cls is None:
        raise ValueError(f"Unknown quantization config: {config.get('class_name')!r}. fkeras "
                         f"knows {sorted(_CONFIGS)}. Received: quantization_config={config}")
    return cls.from_config(dict(config.get("config") or {}))


def get(identifier):
    """A QuantizationConfig from a config object, its dict, a mode name or None."""
    if identifier is None or isinstance(identifier, QuantizationConfig):
        return identifier
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        return resolve(identifier, None)
    raise ValueError(f"Could not interpret quantization config: {identifier}")


def resolve(mode, config):
    """(mode, config) checked as Keras's `quantize(mode, config)` checks them; Keras's modes
    other than int8 are refused (ValueError: not supported by fkeras)."""
    if isinstance(config, str):
        mode, config = config, None
    if mode is not None and mode not in MODES:
        raise ValueError(f"Invalid quantization mode. Expected one of {MODES}. "
                         f"Received: mode={mode}")
    if config is None:
        if mode is None:
            raise ValueError("You must provide either `mode` or `config` to `quantize`.")
        if mode not in SUPPORTED_MODES:
            raise unsupported_mode_error(mode)
        config = Int8QuantizationConfig()
    elif not isinstance(config, QuantizationConfig):
        raise ValueError("Argument `config` must be an instance of `QuantizationConfig`. "
                         f"Received: config={config} (of type {type(config)})")
    if mode is not None and config.mode != mode:
        raise ValueError(f"Contradictory arguments: mode='{mode}' but "
                         f"config.mode='{config.mode}'")
    return config.mode, config
