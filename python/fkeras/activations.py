"""Activation functions by name (keras.activations): each works on arrays and KerasTensors."""

from fkeras.engine.tensor import user_callable
from fkeras.ops import activation_ops as _extra
from fkeras.ops import nn as _nn

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
celu = _extra.celu
glu = _extra.glu
hard_shrink = _extra.hard_shrink
hard_silu = _extra.hard_silu
hard_swish = hard_silu
hard_tanh = _extra.hard_tanh
log_sigmoid = _extra.log_sigmoid
mish = _extra.mish
relu6 = _extra.relu6
soft_shrink = _extra.soft_shrink
sparse_plus = _extra.sparse_plus
sparse_sigmoid = _extra.sparse_sigmoid
sparsemax = _extra.sparsemax
squareplus = _extra.squareplus
tanh_shrink = _extra.tanh_shrink
threshold = _extra.threshold


def relu(x, negative_slope=0.0, max_value=None, threshold=0.0):
    """max(x, 0) by default; with options, Keras 3's generalized relu: `negative_slope` below
    `threshold`, values capped at `max_value`, zero between (keras.activations.relu)."""
    if negative_slope == 0.0 and max_value is None and threshold == 0.0:
        return _nn.relu(x)
    from fkeras.ops.math import relu_general

    return relu_general(x, negative_slope=negative_slope, max_value=max_value,
                        threshold=threshold)


def softmax(x, axis=-1):
    return _nn.softmax(x, axis=axis)


def gelu(x, approximate=False):
    """keras.activations.gelu: exact by default (keras.ops.gelu defaults to approximate)."""
    return _nn.gelu(x, approximate=approximate)


_BY_NAME = {
    "relu": relu, "sigmoid": sigmoid, "tanh": tanh, "selu": selu, "softplus": softplus,
    "softsign": softsign, "silu": silu, "swish": swish, "hard_sigmoid": hard_sigmoid,
    "exponential": exponential, "linear": linear, "elu": elu, "leaky_relu": leaky_relu,
    "softmax": softmax, "log_softmax": log_softmax, "gelu": gelu, "celu": celu, "glu": glu,
    "hard_shrink": hard_shrink, "hard_silu": hard_silu, "hard_swish": hard_swish,
    "hard_tanh": hard_tanh, "log_sigmoid": log_sigmoid, "mish": mish, "relu6": relu6,
    "soft_shrink": soft_shrink, "sparse_plus": sparse_plus, "sparse_sigmoid": sparse_sigmoid,
    "sparsemax": sparsemax, "squareplus": squareplus, "tanh_shrink": tanh_shrink,
    "threshold": threshold,
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
            from fkeras.saving.object_registration import find_custom_suffix

            # A registered function is also found by its bare name ("custom_fn" for
            # "my_package>custom_fn"), as Keras 3 resolves it.
            fn = find_custom_suffix(None, identifier)
        if fn is None or not callable(fn):
            raise ValueError(f"Could not interpret activation function identifier: {identifier}")
        return user_callable(fn)  # a registered user function computes on Tensors too
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
            return user_callable(
                safe_resolve.resolve_function(identifier, None, ("activations",)))
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


def serialize(activation):
    """The name of a built-in activation ("relu6"; aliases give the first name: swish ->
    "silu", hard_swish -> "hard_silu"), else the function's `__name__`."""
    fn = activation
    name = _NAME_OF.get(id(fn))
    if name is not None and _BY_NAME[name] is fn:
        return name
    if getattr(fn, "_fk_user_wrapped", False):  # a user's function wrapped by `get`
        return serialize(fn.__wrapped__)
    return getattr(fn, "__name__", str(fn))


def deserialize(config, custom_objects=None):
    """An activation function from its name (or a Keras serialization dict); names in
    `custom_objects` win over the built-in ones."""
    if custom_objects:
        name = config if isinstance(config, str) else (
            config.get("config", {}).get("name") if isinstance(config.get("config"), dict)
            else config.get("config") or config.get("class_name"))
        if name in custom_objects:
            return user_callable(custom_objects[name])
    if isinstance(config, dict) and isinstance(config.get("config"), str):
        return get(config["config"])
    if not isinstance(config, (str, dict)):
        raise ValueError(f"Could not interpret serialized activation function: {config!r}")
    return get(config)


# The alpha a fused kernel needs to match the activation's default (ELU's alpha, LeakyReLU's
# negative slope); 0 for the others.
_FUSED_ALPHA = {"elu": 1.0, "leaky_relu": 0.2}


_FUSED = {}  # id(fn) -> (fn, code, alpha): layers ask on every call


def fused(fn):
    """(kernel activation code, alpha) if `fn` can be fused into a Dense/Conv epilogue, else
    (None, 0.0); the answer for a function is computed once."""
    entry = _FUSED.get(id(fn))
    if entry is not None and entry[0] is fn:
        return entry[1], entry[2]
    from fkeras.backend import codes

    name = serialize(fn)
    # A rematerialized activation (RematScope "activations") runs as its own call.
    code = None if getattr(fn, "_fk_remat", False) else codes.ACTIVATION_CODES.get(name)
    if code is None or code not in _nn.FUSABLE:
        code = None
    alpha = _FUSED_ALPHA.get(name, 0.0)
    if len(_FUSED) > 4096:  # functions made on the fly (lambdas) must not grow it forever
        _FUSED.clear()
    _FUSED[id(fn)] = (fn, code, alpha)
    return code, alpha


def fused_alpha(fn):
    """The kernel `alpha` that goes with `fused_code(fn)`."""
    return fused(fn)[1]


def fused_code(fn):
    """The kernel activation code if `fn` can be fused into a Dense/Conv epilogue, else None."""
    return fused(fn)[0]
