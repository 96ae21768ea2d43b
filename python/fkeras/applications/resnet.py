"""ResNet50, ResNet101 and ResNet152, with `preprocess_input` ("caffe" convention) and
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


ResNet50 = _variant("resnet50", "ResNet50")
ResNet101 = _variant("resnet101", "ResNet101")
ResNet152 = _variant("resnet152", "ResNet152")


def preprocess_input(x, data_format=None):
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="caffe")


_docs.preprocess_doc(preprocess_input, "RGB to BGR, then the ImageNet channel means are\n"
                                       '    subtracted ("caffe" mode).')

__all__ = ["ResNet50", "ResNet101", "ResNet152", "decode_predictions",
           "preprocess_input"]
