"""fkeras.trainers: compile/fit/evaluate/predict (the Trainer mixin of Model)."""

from fkeras.trainers.trainer import Trainer

__all__ = ["Trainer"]
