"""The application configurations the tests build: (module, constructor, kwargs).

SMALL configurations run in every suite run; LARGE ones (the deepest and widest variants,
each tens of millions of parameters and seconds to build in Keras) only with
FKERAS_TEST_LARGE_APPS=1.
"""

import os

SMALL = [
    ("vgg16", "VGG16", dict(input_shape=(32, 32, 3))),
    ("vgg19", "VGG19", dict(include_top=False, pooling="max")),
    ("resnet50", "ResNet50", dict(input_shape=(64, 64, 3), classes=10)),
    ("resnet_v2", "ResNet50V2", dict(include_top=False, pooling="avg")),
    # the DenseNet builder with short dense blocks: DenseNet121's code path, a tenth the size
    ("densenet", "DenseNet", dict(blocks=[2, 3, 2, 2], input_shape=(64, 64, 3), classes=5)),
    ("xception", "Xception", dict(input_shape=(71, 71, 3), classes=7)),
    ("inception_v3", "InceptionV3", dict(include_top=False, input_shape=(75, 75, 3))),
    ("mobilenet", "MobileNet", dict(alpha=0.5, depth_multiplier=2, input_shape=(128, 128, 3))),
    ("mobilenet", "MobileNet", dict(include_top=False, pooling="max")),
    ("mobilenet_v2", "MobileNetV2", dict(alpha=0.35, input_shape=(96, 96, 3))),
    ("mobilenet_v2", "MobileNetV2", dict(alpha=1.4, include_top=False,
                                         input_shape=(97, 131, 3))),
]

LARGE = [
    ("resnet", "ResNet101", dict(include_top=False, input_shape=(32, 32, 3))),
    ("resnet_v2", "ResNet101V2", dict(input_shape=(32, 32, 3), classifier_activation=None)),
    ("densenet", "DenseNet121", dict(include_top=False, pooling="avg")),
    ("vgg16", "VGG16", {}),
    ("vgg19", "VGG19", {}),
    ("resnet", "ResNet152", {}),
    ("resnet_v2", "ResNet152V2", {}),
    ("densenet", "DenseNet169", {}),
    ("densenet", "DenseNet201", {}),
    ("xception", "Xception", {}),
    ("inception_v3", "InceptionV3", {}),
    ("inception_resnet_v2", "InceptionResNetV2", {}),
    ("inception_resnet_v2", "InceptionResNetV2", dict(include_top=False,
                                                      input_shape=(75, 75, 3))),
]


def large_enabled():
    return os.environ.get("FKERAS_TEST_LARGE_APPS") == "1"


def config_id(entry):
    module, fn, kwargs = entry
    return fn + "-" + "-".join(f"{k}={v}" for k, v in kwargs.items()) if kwargs else fn
