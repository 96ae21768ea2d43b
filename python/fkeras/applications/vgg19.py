"""VGG19, with `preprocess_input` ("caffe" convention) and `decode_predictions`."""

from fkeras.applications import _docs, _vgg, imagenet_utils
from fkeras.applications.imagenet_utils import decode_predictions


def VGG19(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
          pooling=None, classes=1000, classifier_activation="softmax", name="vgg19"):
    return _vgg.build("vgg19", include_top, weights, input_tensor, input_shape, pooling,
                      classes, classifier_activation, name)


_docs.document(VGG19, """Instantiates the VGG19 architecture (default input 224x224, at least
    32x32).

    Example:
    ```python
    model = fkeras.applications.VGG19(weights=None, include_top=False, pooling="avg",
                                       input_shape=(64, 64, 3))
    ```
""")


def preprocess_input(x, data_format=None):
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="caffe")


_docs.preprocess_doc(preprocess_input, "RGB to BGR, then the ImageNet channel means\n"
                                       "    are subtracted (\"caffe\" mode).")

__all__ = ["VGG19", "decode_predictions", "preprocess_input"]
