"""ResNet50V2, ResNet101V2 and ResNet152V2, with `preprocess_input` ("tf" convention) and `decode_predictions`."""

from fkeras.applications import _docs, _resnet, imagenet_utils
from fkeras.applications.imagenet_utils import decode_predictions


def ResNet50V2(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
        pooling=None, classes=1000, classifier_activation="softmax", name="resnet50v2"):
    return _resnet.build("resnet50v2", include_top, weights, input_tensor, input_shape, pooling,
                          classes, classifier_activation, name)


_docs.document(ResNet50V2, "Instantiates the ResNet50V2 architecture (default input 224x224, at least 32x32).")


def ResNet101V2(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
        pooling=None, classes=1000, classifier_activation="softmax", name="resnet101v2"):
    return _resnet.build("resnet101v2", include_top, weights, input_tensor, input_shape, pooling,
                          classes, classifier_activation, name)


_docs.document(ResNet101V2, "Instantiates the ResNet101V2 architecture (default input 224x224, at least 32x32).")


def ResNet152V2(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
        pooling=None, classes=1000, classifier_activation="softmax", name="resnet152v2"):
    return _resnet.build("resnet152v2", include_top, weights, input_tensor, input_shape, pooling,
                          classes, classifier_activation, name)


_docs.document(ResNet152V2, "Instantiates the ResNet152V2 architecture (default input 224x224, at least 32x32).")


def preprocess_input(x, data_format=None):
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


_docs.preprocess_doc(preprocess_input, 'scaled to [-1, 1] ("tf" mode).')

__all__ = ["ResNet50V2", "ResNet101V2", "ResNet152V2", "decode_predictions", "preprocess_input"]
