"""A layer's per-weight arguments (`<w>_initializer`, `<w>_regularizer`, `<w>_constraint`, and
`activity_regularizer`): storing them, creating weights from them, and their config entries in
Keras's key order."""

from fkeras import constraints, initializers, regularizers


def serialize_weight_args(layer, weights=("kernel", "bias"), activity=True):
    """The config entries of `weights`' arguments, with `activity_regularizer` unless
    activity=False."""
    config = {}
    for w in weights:
        config[f"{w}_initializer"] = initializers.serialize(getattr(layer, f"{w}_initializer"))
    for w in weights:
        config[f"{w}_regularizer"] = regularizers.serialize(getattr(layer, f"{w}_regularizer"))
    if activity:
        config["activity_regularizer"] = regularizers.serialize(layer.activity_regularizer)
    for w in weights:
        config[f"{w}_constraint"] = constraints.serialize(getattr(layer, f"{w}_constraint"))
    return config


_NO_ACTIVITY = object()


def store_weight_args(layer, weights, activity_regularizer=_NO_ACTIVITY, **args):
    """Sets `layer.<w>_initializer`, `<w>_regularizer` and `<w>_constraint` for each name w of
    `weights` from the matching entries of `args` (through initializers/regularizers/
    constraints.get, in Keras's key order), and `layer.activity_regularizer` when given."""
    for w in weights:
        setattr(layer, f"{w}_initializer", initializers.get(args[f"{w}_initializer"]))
    for w in weights:
        setattr(layer, f"{w}_regularizer", regularizers.get(args[f"{w}_regularizer"]))
    if activity_regularizer is not _NO_ACTIVITY:
        layer.activity_regularizer = regularizers.get(activity_regularizer)
    for w in weights:
        setattr(layer, f"{w}_constraint", constraints.get(args[f"{w}_constraint"]))


def add_arg_weight(layer, prefix, shape, name=None):
    """`layer.add_weight` with the layer's stored `<prefix>_initializer`, `_regularizer` and
    `_constraint`; the weight is named `name` (default: `prefix`)."""
    return layer.add_weight(shape=shape, initializer=getattr(layer, f"{prefix}_initializer"),
                            regularizer=getattr(layer, f"{prefix}_regularizer"),
                            constraint=getattr(layer, f"{prefix}_constraint"),
                            name=prefix if name is None else name)
