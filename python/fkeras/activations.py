"""Activation functions by name (keras.activations): each works on arrays and KerasTensors."""

from fkeras.engine.tensor import user_callable
from fkeras.ops import nn as _nn

relu = _nn.relu
sigmoid = _nn.sigmoid
tanh = _nn.tanh
selu = _nn.selu
softplus = _nn.softplus
softsign = _nn.softsign
silu = _nn.silu
swish = _nn.swish
hard_sigmoid = _nn.hard_sigmoid
exponential = _nn.exponential
linear = _nn.linear
elu = _nn.elu
leaky_relu = _nn.leaky_relu
log_softmax = _nn.log_softmax


def softmax(x, axis=-1):
    return _nn.softmax(x, axis=axis)


def gelu(x, approximate=False):
    """keras.activations.gelu: exact by default (keras.ops.gelu defaults to approximate)."""
    return _nn.gelu(x, approximate=approximate)


_BY_NAME = {
    "relu": relu, "sigmoid": sigmoid, "tanh": tanh, "selu": selu, "softplus": softplus,
    "softsign": softsign, "silu": silu, "swish": swish, "hard_sigmoid": hard_sigmoid,
    "exponential": exponential, "linear": linear, "elu": elu, "leaky_relu": leaky_relu,
    "softmax": softmax, "log_softmax": log_softmax, "gelu": gelu,
}


def get(identifier):
    """Resolves None (linear), a name, a config dict or a callable to an activation
    function. Names and configs resolve to the built-ins above or to custom/registered
    objects only (`fkeras.saving.register_keras_serializable`, `custom_object_scope`)."""
    if identifier is None:
        return linear
    if isinstance(identifier, str):
        fn = _BY_NAME.get(identifier)
        if fn is None:
            from fkeras.saving.object_registration import get_registered_object

            fn = get_registered_object(identifier)
        if fn is None or not callable(fn):
            raise ValueError(f"Could not interpret activation function identifier: {identifier}")
        return fn
    if isinstance(identifier, dict):
        return _from_dict(identifier)
    if callable(identifier):
        # A user's activation computes on Tensors even inside fkeras's layers.
        return user_callable(identifier)
    raise ValueError(f"Could not interpret activation function identifier: {identifier!r}")


def _from_dict(identifier):
    if identifier.get("class_name") == "__lambda__":
        raise ValueError(
            "Requested the deserialization of a Python lambda. This carries a potential risk "
            "of arbitrary code execution and thus it is disallowed; only a `Lambda` layer may "
            "hold one (and only with `safe_mode=False`).")
    if identifier.get("class_name") == "function":
        from fkeras.saving import safe_resolve

        try:
            return safe_resolve.resolve_function(identifier, None, ("activations",))
        except TypeError as e:
            raise ValueError(f"Could not interpret activation function identifier: {e}") \
                from None
    inner = identifier.get("config")
    name = inner.get("name") if isinstance(inner, dict) else None
    name = name or identifier.get("class_name")
    if not isinstance(name, str):
        raise ValueError(f"Could not interpret activation function identifier: {identifier!r}")
    return get(name)


_NAME_OF = {}
for _name, _fn in _BY_NAME.items():
    _NAME_OF.setdefault(id(_fn), _name)  # the first name wins (silu before swish)


def serialize(fn):
    name = _NAME_OF.get(id(fn))
    if name is not None and _BY_NAME[name] is fn:
        return name
    if getattr(fn, "_fk_user_wrapped", False):  # a user's function wrapped by `get`
        return serialize(fn.__wrapped__)
    return getattr(fn, "__name__", str(fn))


# The alpha a fused kernel needs to match the activation's default (ELU's alpha, LeakyReLU's
# negative slope); 0 for the others.
_FUSED_ALPHA = {"elu": 1.0, "leaky_relu": 0.2}


def fused_alpha(fn):
    """The kernel `alpha` that goes with `fused_code(fn)`."""
    return _FUSED_ALPHA.get(serialize(fn), 0.0)


def fused_code(fn):
    """The kernel activation code if `fn` can be fused into a Dense/Conv epilogue, else None."""
    from fkeras.backend import codes

    name = serialize(fn)
    code = codes.ACTIVATION_CODES.get(name)
    return code if code is not None and code in _nn.FUSABLE else None
