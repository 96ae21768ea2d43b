"""`fkeras.applications.resnet50`: ResNet50 and its preprocessing, as Keras lays them out."""

from fkeras.applications.resnet import ResNet50, decode_predictions, preprocess_input

__all__ = ["ResNet50", "decode_predictions", "preprocess_input"]
