"""Config entries for a layer's per-weight arguments (`<w>_initializer`, `<w>_regularizer`,
`<w>_constraint`, and `activity_regularizer`), in Keras's key order."""

from fkeras import constraints, initializers, regularizers


def serialize_weight_args(layer, weights=("kernel", "bias")):
    config = {}
    for w in weights:
        config[f"{w}_initializer"] = initializers.serialize(getattr(layer, f"{w}_initializer"))
    for w in weights:
        config[f"{w}_regularizer"] = regularizers.serialize(getattr(layer, f"{w}_regularizer"))
    config["activity_regularizer"] = regularizers.serialize(layer.activity_regularizer)
    for w in weights:
        config[f"{w}_constraint"] = constraints.serialize(getattr(layer, f"{w}_constraint"))
    return config
