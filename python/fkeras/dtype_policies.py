"""Dtype policies (Keras 3's `DTypePolicy`): a name, the dtype layers compute in and the dtype
their variables are stored in.

fkeras stores variables and activations in float32 (see `fkeras.config.floatx`). Two policies
are accepted:
- "float32" (the default);
- "mixed_bfloat16": variables in float32, and the layer's products (Dense, convolutions,
  recurrent cells, matmul/einsum inside the layer, forward and backward) computed from
  bfloat16-rounded operands with float32 accumulation on CPUs with AVX512_BF16 (exact float32
  elsewhere; `fkeras._C.gemm_bf16_native()` says which). Activations stay float32 tensors
  (Keras stores them as bfloat16), so the layer's other arithmetic is float32, more precise
  than Keras's; see docs/keras_compatibility.md.
Other policies ("mixed_float16", "float16", "bfloat16", "float64") are parsed as Keras parses
them and then refused with a ValueError that says why.
"""

_FLOATS = ("float16", "bfloat16", "float32", "float64")


class DTypePolicy:
    """A dtype policy: `DTypePolicy("float32")`, `DTypePolicy("mixed_bfloat16")`, ...

    Args:
        name: a float dtype name, or "mixed_float16" / "mixed_bfloat16" (compute in the half
            type, variables in float32). None: the global policy's name.
    """

    def __init__(self, name=None):
        if name is None:
            from fkeras import config

            name = config.dtype_policy().name
        if not isinstance(name, str):
            raise TypeError(f"'name' must be a string, such as 'mixed_float16'. Received: "
                            f"name={name} (of type {type(name)})")
        if name in ("mixed_float16", "mixed_bfloat16"):
            compute, variable = name.split("_")[1], "float32"
        elif name in _FLOATS:
            compute = variable = name
        else:
            raise ValueError(f"Cannot convert '{name}' to a mixed precision DTypePolicy. Valid "
                             "policies include 'mixed_float16', 'mixed_bfloat16', and the name "
                             "of any float dtype such as 'float32'.")
        self._name, self._compute_dtype, self._variable_dtype = name, compute, variable

    name = property(lambda self: self._name)
    compute_dtype = property(lambda self: self._compute_dtype)
    variable_dtype = property(lambda self: self._variable_dtype)
    quantization_mode = property(lambda self: None)

    def get_config(self):
        return {"name": self._name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __eq__(self, other):
        return type(other) is type(self) and other.name == self.name

    def __hash__(self):
        return hash(self._name)

    def __repr__(self):
        return f'<DTypePolicy "{self._name}">'


FloatDTypePolicy = DTypePolicy  # Keras 3's older name for the same class


class QuantizedDTypePolicy(DTypePolicy):
    """The policy of a quantized layer (Keras 3): "<mode>_from_<source>", e.g.
    "int8_from_float32": the layer's float parts compute and store as `source_name` says and
    its kernel is quantized. fkeras supports mode "int8" from "float32".

    Args:
        mode: the quantization mode ("int8"; Keras's others are refused with a ValueError).
        source_name: the float policy it comes from (None: the global policy's name).
    """

    def __init__(self, mode, source_name=None):
        from fkeras.quantizers.quantization_config import resolve

        if source_name is None:
            from fkeras import config

            source_name = config.dtype_policy().name
        source = DTypePolicy(source_name)
        resolve(mode, None)  # Keras's mode check; modes other than int8 are refused
        self._name = f"{mode}_from_{source_name}"
        self._compute_dtype, self._variable_dtype = source.compute_dtype, source.variable_dtype
        self._source_name, self._quantization_mode = source_name, mode

    quantization_mode = property(lambda self: self._quantization_mode)

    def __eq__(self, other):
        return type(other) is type(self) and other.name == self.name

    def __hash__(self):
        return hash(self._name)

    def get_config(self):
        return {"mode": self._quantization_mode, "source_name": self._source_name}

    def __repr__(self):
        return f'<QuantizedDTypePolicy "{self._name}">'


def quantized_from_name(name):
    """The QuantizedDTypePolicy a name such as "int8_from_float32" stands for, else None."""
    if not isinstance(name, str) or "_from_" not in name:
        return None
    mode, source = name.split("_from_", 1)
    return QuantizedDTypePolicy(mode, source)


SUPPORTED = ("float32", "mixed_bfloat16", "int8_from_float32")


def _check_supported(policy):
    if isinstance(policy, QuantizedDTypePolicy) and policy.name not in SUPPORTED:
        raise ValueError(f"The dtype policy '{policy.name}' is not supported: fkeras quantizes "
                         "float32 layers only ('int8_from_float32').")
    if policy.name not in SUPPORTED:
        raise ValueError(
            f"The dtype policy '{policy.name}' computes in {policy.compute_dtype} with "
            f"{policy.variable_dtype} variables; fkeras stores float32 variables and computes "
            "in float32, or with bfloat16 products under 'mixed_bfloat16' (it has no float16 "
            "or float64 kernels). Use 'float32' or 'mixed_bfloat16'.")
    return policy


def computes_in_bfloat16(policy):
    """True for a policy whose layers run their products in bfloat16."""
    return policy is not None and policy.compute_dtype == "bfloat16"


def get(identifier):
    """A supported DTypePolicy from a name, a config dict or a policy (None: the global
    one)."""
    if identifier is None:
        from fkeras import config

        return config.dtype_policy()
    if isinstance(identifier, DTypePolicy):
        return _check_supported(identifier)
    if isinstance(identifier, dict):
        return _check_supported(deserialize(identifier))
    if isinstance(identifier, str):
        quantized = quantized_from_name(identifier)
        return _check_supported(quantized or DTypePolicy(identifier))
    raise ValueError(f"Cannot interpret `dtype` argument. Expected a string or an instance "
                     f"of DTypePolicy. Received: dtype={identifier}")


def serialize(policy):
    if isinstance(policy, QuantizedDTypePolicy):  # Keras 3's module for this class
        return {"module": "keras.dtype_policies", "class_name": "QuantizedDTypePolicy",
                "config": policy.get_config(), "registered_name": None}
    return {"module": "keras", "class_name": "DTypePolicy", "config": policy.get_config(),
            "registered_name": None}


def deserialize(config, custom_objects=None):
    if config.get("class_name") == "QuantizedDTypePolicy":
        return QuantizedDTypePolicy(**dict(config.get("config") or {}))
    if config.get("class_name") not in ("DTypePolicy", "FloatDTypePolicy"):
        raise ValueError(f"Unknown dtype policy class: {config.get('class_name')!r}.")
    return DTypePolicy.from_config(dict(config.get("config") or {}))
