"""fkeras.saving: whole models in Keras 3's `.keras` format and weights in its `.weights.h5`
layout, every file written atomically (temporary file, fsync, rename); the custom-object
registry and safe deserialization (docs/saving_security.md)."""

from fkeras.saving.object_registration import (
    CustomObjectScope,
    custom_object_scope,
    get_custom_objects,
    get_registered_name,
    get_registered_object,
    register_keras_serializable,
)
from fkeras.saving.file_editor import KerasFileEditor
from fkeras.saving.saving_lib import load_model, save_model
from fkeras.saving.serialization_lib import deserialize_keras_object, serialize_keras_object


def save_weights(model, filepath, overwrite=True):
    """Saves the model's weights to a `.weights.h5` file (same as `model.save_weights`)."""
    model.save_weights(filepath, overwrite=overwrite)


def load_weights(model, filepath, skip_mismatch=False, **kwargs):
    """Loads a `.weights.h5` file into the model (same as `model.load_weights`)."""
    model.load_weights(filepath, skip_mismatch=skip_mismatch, **kwargs)


__all__ = ["KerasFileEditor", "CustomObjectScope", "custom_object_scope", "get_custom_objects",
           "get_registered_name", "get_registered_object", "load_model", "load_weights",
           "register_keras_serializable", "save_model", "save_weights",
           "serialize_keras_object", "deserialize_keras_object"]
