"""ResNet50V2, ResNet101V2 and ResNet152V2, with `preprocess_input` ("tf" convention) and
`decode_predictions`."""

from fkeras.applications import _docs, _resnet, imagenet_utils
from fkeras.applications.imagenet_utils import decode_predictions


def _variant(variant, title):
    def build(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
              pooling=None, classes=1000, classifier_activation="softmax", name=variant):
        return _resnet.build(variant, include_top, weights, input_tensor, input_shape, pooling,
                             classes, classifier_activation, name)

    build.__name__ = build.__qualname__ = title
    return _docs.document(build, f"Instantiates the {title} architecture (default input "
                                 "224x224, at least 32x32).")


ResNet50V2 = _variant("resnet50v2", "ResNet50V2")
ResNet101V2 = _variant("resnet101v2", "ResNet101V2")
ResNet152V2 = _variant("resnet152v2", "ResNet152V2")


def preprocess_input(x, data_format=None):
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


_docs.preprocess_doc(preprocess_input, 'scaled to [-1, 1] ("tf" mode).')

__all__ = ["ResNet50V2", "ResNet101V2", "ResNet152V2", "decode_predictions",
           "preprocess_input"]
