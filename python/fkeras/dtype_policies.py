"""Dtype policies (Keras 3's `DTypePolicy`): a name, the dtype layers compute in and the dtype
their variables are stored in.

fkeras computes and stores in float32 (see `fkeras.config.floatx`): a policy that names any
other compute or variable dtype ("mixed_bfloat16", "mixed_float16", "float16", "bfloat16",
"float64") is parsed as Keras parses it and then refused with a ValueError saying so, where
Keras would compute in that dtype. A "float32" policy is accepted everywhere.
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


def _check_supported(policy):
    if policy.compute_dtype != "float32" or policy.variable_dtype != "float32":
        raise ValueError(
            f"The dtype policy '{policy.name}' computes in {policy.compute_dtype} with "
            f"{policy.variable_dtype} variables; fkeras computes and stores in float32 only "
            "(its bfloat16 kernels are not built yet). Use 'float32'.")
    return policy


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
        return _check_supported(DTypePolicy(identifier))
    raise ValueError(f"Cannot interpret `dtype` argument. Expected a string or an instance "
                     f"of DTypePolicy. Received: dtype={identifier}")


def serialize(policy):
    return {"module": "keras", "class_name": "DTypePolicy", "config": policy.get_config(),
            "registered_name": None}


def deserialize(config, custom_objects=None):
    if config.get("class_name") not in ("DTypePolicy", "FloatDTypePolicy"):
        raise ValueError(f"Unknown dtype policy class: {config.get('class_name')!r}.")
    return DTypePolicy.from_config(dict(config.get("config") or {}))
