"""ResNet50, ResNet101 and ResNet152, with `preprocess_input` ("caffe" convention) and `decode_predictions`."""

from fkeras.applications import _docs, _resnet, imagenet_utils
from fkeras.applications.imagenet_utils import decode_predictions


def ResNet50(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
        pooling=None, classes=1000, classifier_activation="softmax", name="resnet50"):
    return _resnet.build("resnet50", include_top, weights, input_tensor, input_shape, pooling,
                          classes, classifier_activation, name)


_docs.document(ResNet50, "Instantiates the ResNet50 architecture (default input 224x224, at least 32x32).")


def ResNet101(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
        pooling=None, classes=1000, classifier_activation="softmax", name="resnet101"):
    return _resnet.build("resnet101", include_top, weights, input_tensor, input_shape, pooling,
                          classes, classifier_activation, name)


_docs.document(ResNet101, "Instantiates the ResNet101 architecture (default input 224x224, at least 32x32).")


def ResNet152(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
        pooling=None, classes=1000, classifier_activation="softmax", name="resnet152"):
    return _resnet.build("resnet152", include_top, weights, input_tensor, input_shape, pooling,
                          classes, classifier_activation, name)


_docs.document(ResNet152, "Instantiates the ResNet152 architecture (default input 224x224, at least 32x32).")


def preprocess_input(x, data_format=None):
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="caffe")


_docs.preprocess_doc(preprocess_input, 'RGB to BGR, then the ImageNet channel means are subtracted ("caffe" mode).')

__all__ = ["ResNet50", "ResNet101", "ResNet152", "decode_predictions", "preprocess_input"]
