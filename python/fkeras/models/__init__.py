"""fkeras.models: Model, Functional, Sequential, load_model / save_model (`.keras`, legacy
`.h5`), model_from_json, clone_model."""

from fkeras.models.cloning import clone_model
from fkeras.models.functional import Functional
from fkeras.models.model import Model
from fkeras.models.sequential import Sequential


def load_model(filepath, custom_objects=None, compile=True, safe_mode=None):
    """Loads a `.keras` model file (see `fkeras.saving.load_model`)."""
    from fkeras.saving import saving_lib

    return saving_lib.load_model(filepath, custom_objects, compile, safe_mode)


def model_from_json(json_string, custom_objects=None):
    """A model from `model.to_json()`'s string (fkeras or Keras 3; Keras 2's `model_config`
    layout as well), compiled when the string holds a compile config (Keras 3).

    Args:
        json_string: the JSON text.
        custom_objects: dict of custom classes/functions by name.
    """
    import json

    from fkeras.saving import saving_lib
    from fkeras.saving.config_convert import model_from_config

    config = json.loads(json_string)
    model = model_from_config(config, custom_objects)
    if config.get("compile_config"):
        saving_lib.compile_model_from_config(model, config["compile_config"], custom_objects)
    return model


def save_model(model, filepath, overwrite=True, zipped=None, **kwargs):
    """Saves a model as a `.keras` file (see `fkeras.saving.save_model`)."""
    from fkeras.saving import saving_lib

    return saving_lib.save_model(model, filepath, overwrite, zipped, **kwargs)


__all__ = ["Functional", "Model", "Sequential", "clone_model", "load_model", "model_from_json",
           "save_model"]
