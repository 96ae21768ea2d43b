"""fkeras.models: Model, Functional, Sequential."""

from fkeras.models.functional import Functional
from fkeras.models.model import Model
from fkeras.models.sequential import Sequential

__all__ = ["Functional", "Model", "Sequential"]
