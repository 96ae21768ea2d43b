"""A model's structure as the structure tests compare it, and its digest (stored for Keras in
keras_structures.json by make_keras_structures.py, so fkeras is checked without Keras too)."""

import hashlib
import json


def structure(model, skip=()):
    """Layer names and classes, weight shapes (all and trainable), parameter count, output
    shape and model name. Layers of the classes in `skip` are left out of the lists."""
    layers = [layer for layer in model.layers if not isinstance(layer, tuple(skip))]
    return {
        "name": model.name,
        "layers": [layer.name for layer in layers],
        "classes": [type(layer).__name__ for layer in layers],
        "weights": [list(w.shape) for w in model.weights],
        "trainable": [list(w.shape) for w in model.trainable_weights],
        "params": int(model.count_params()),
        "output": [d for d in model.output.shape],
    }


def _sha(value):
    return hashlib.sha256(json.dumps(value).encode()).hexdigest()[:16]


def digest(struct):
    """The compact record: counts in clear, the lists as hashes."""
    return {"name": struct["name"], "params": struct["params"], "output": struct["output"],
            "n_layers": len(struct["layers"]), "layers_sha": _sha(struct["layers"]),
            "weights_sha": _sha(struct["weights"]), "trainable_sha": _sha(struct["trainable"])}
