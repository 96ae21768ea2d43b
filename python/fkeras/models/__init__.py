"""fkeras.models: Model, Functional, Sequential, load_model / save_model (`.keras`)."""

from fkeras.models.functional import Functional
from fkeras.models.model import Model
from fkeras.models.sequential import Sequential


def load_model(filepath, custom_objects=None, compile=True, safe_mode=None):
    """Loads a `.keras` model file (see `fkeras.saving.load_model`)."""
    from fkeras.saving import saving_lib

    return saving_lib.load_model(filepath, custom_objects, compile, safe_mode)


def save_model(model, filepath, overwrite=True, zipped=None, **kwargs):
    """Saves a model as a `.keras` file (see `fkeras.saving.save_model`)."""
    from fkeras.saving import saving_lib

    return saving_lib.save_model(model, filepath, overwrite, zipped, **kwargs)


__all__ = ["Functional", "Model", "Sequential", "load_model", "save_model"]
