"""Dtype names as Keras 3 spells them (`keras.backend.standardize_dtype`), for layers, Input
and KerasTensors.

A layer's `dtype` may also be a mixed-precision policy name ("mixed_float16",
"mixed_bfloat16"); an `Input` takes a plain dtype only. Numeric computation in fkeras stays
float32 whatever the layer says: the name is carried (configs, KerasTensors, summaries) and
lets string and integer inputs pass to the layers that handle them.
"""

import numpy as np

DTYPES = frozenset((
    "bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
    "bfloat16", "float16", "float32", "float64", "complex64", "complex128", "string",
))
POLICIES = frozenset(("mixed_float16", "mixed_bfloat16"))
_ALIASES = {"int": "int32", "str": "string", "double": "float64", "half": "float16",
            "bytes": "string", "object": "string"}
# Python types as Keras 3 names them on its torch and jax backends.
_PYTHON_TYPES = {bool: "bool", int: "int32", float: "float32", str: "string", bytes: "string",
                 complex: "complex64"}


def standardize_dtype(dtype, allow_policy=False):
    """The Keras name of `dtype` (a string, NumPy dtype or type, torch dtype, DTypePolicy).

    Args:
        dtype: the dtype to name. None gives "float32".
        allow_policy: accept the mixed-precision policy names (a layer's `dtype`).

    Returns:
        The name, e.g. "float32", "int8", "string".

    Raises:
        ValueError: `Invalid dtype: <dtype>` for anything else.
    """
    if dtype is None:
        return "float32"
    if isinstance(dtype, dict):  # a serialized DTypePolicy
        dtype = (dtype.get("config") or {}).get("name", "float32")
    if isinstance(dtype, type) and dtype in _PYTHON_TYPES:
        return _PYTHON_TYPES[dtype]
    name = getattr(dtype, "name", None)
    if not isinstance(name, str):
        if isinstance(dtype, type):
            try:
                name = np.dtype(dtype).name
            except TypeError:
                name = getattr(dtype, "__name__", str(dtype))
        else:
            name = getattr(dtype, "__name__", None) if isinstance(dtype, type) else str(dtype)
    if name.startswith("torch."):
        name = name[len("torch."):]
    name = _ALIASES.get(name, name)
    if name in DTYPES or (allow_policy and name in POLICIES):
        return name
    raise ValueError(f"Invalid dtype: {dtype}")
