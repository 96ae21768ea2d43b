"""The application configurations the tests build: (module, constructor, kwargs).

SMALL: built in fkeras and Keras in every suite run where Keras is installed (options the
recorded digests do not cover). LARGE: more of them, each seconds to build in Keras, only with
FKERAS_TEST_LARGE_APPS=1. SNAPSHOT: compared with digests recorded from Keras, without Keras.
"""

import os

SMALL = [
    ("vgg16", "VGG16", dict(input_shape=(32, 32, 3))),
    ("resnet50", "ResNet50", dict(input_shape=(64, 64, 3), classes=10)),
    ("xception", "Xception", dict(input_shape=(71, 71, 3), classes=7)),
    ("mobilenet", "MobileNet", dict(alpha=0.5, depth_multiplier=2, input_shape=(128, 128, 3))),
    ("mobilenet_v2", "MobileNetV2", dict(alpha=0.35, input_shape=(96, 96, 3))),
    ("mobilenet_v3", "MobileNetV3Large", dict(minimalistic=True, include_top=False,
                                              pooling="max")),
    # the builders with short stacks: every block type, a fraction of the size
    ("efficientnet_v2", "EfficientNetV2", dict(
        width_coefficient=1.0, depth_coefficient=1.0, default_size=64, name="efficientnetv2-b0",
        blocks_args=[dict(kernel_size=3, num_repeat=2, input_filters=16, output_filters=16,
                          expand_ratio=1, se_ratio=0, strides=1, conv_type=1),
                     dict(kernel_size=3, num_repeat=2, input_filters=16, output_filters=24,
                          expand_ratio=4, se_ratio=0, strides=2, conv_type=1),
                     dict(kernel_size=3, num_repeat=2, input_filters=24, output_filters=32,
                          expand_ratio=4, se_ratio=0.25, strides=2, conv_type=0)])),
    ("convnext", "ConvNeXt", dict(depths=[1, 2, 1, 1], projection_dims=[8, 16, 24, 32],
                                  input_shape=(32, 32, 3), classes=5, name="convnext_mini",
                                  drop_path_rate=0.1)),
]

LARGE = [
    ("vgg19", "VGG19", dict(include_top=False, pooling="max")),
    ("resnet_v2", "ResNet50V2", dict(include_top=False, pooling="avg")),
    ("inception_v3", "InceptionV3", dict(include_top=False, input_shape=(75, 75, 3))),
    ("inception_resnet_v2", "InceptionResNetV2", dict(include_top=False,
                                                      input_shape=(75, 75, 3))),
    ("mobilenet", "MobileNet", dict(include_top=False, pooling="max")),
    ("mobilenet_v2", "MobileNetV2", dict(alpha=1.4, include_top=False,
                                         input_shape=(97, 131, 3))),
    ("mobilenet_v3", "MobileNetV3Small", dict(input_shape=(64, 64, 3))),
    ("efficientnet", "EfficientNetB0", dict(input_shape=(64, 64, 3), classes=10)),
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
    ("efficientnet_v2", "EfficientNetV2B0", {}),
    ("efficientnet_v2", "EfficientNetV2S", dict(include_top=False, input_shape=(96, 96, 3))),
    ("convnext", "ConvNeXtTiny", {}),
]


NASNET_MOBILE = dict(penultimate_filters=1056, num_blocks=4, stem_block_filters=32,
                     skip_reduction=False, default_size=224, name="nasnet_mobile")

# Every constructor at its defaults (plus a few options): compared with the stored Keras
# digests (keras_structures.json), so these run without Keras; configurations over
# SNAPSHOT_PARAMS_LIMIT parameters only with FKERAS_TEST_LARGE_APPS=1.
SNAPSHOT_PARAMS_LIMIT = 30_000_000
_DEFAULTS = [
    ("vgg16", "VGG16"), ("vgg19", "VGG19"), ("resnet", "ResNet50"), ("resnet", "ResNet101"),
    ("resnet", "ResNet152"), ("resnet_v2", "ResNet50V2"), ("resnet_v2", "ResNet101V2"),
    ("resnet_v2", "ResNet152V2"), ("densenet", "DenseNet121"), ("densenet", "DenseNet169"),
    ("densenet", "DenseNet201"), ("xception", "Xception"), ("inception_v3", "InceptionV3"),
    ("inception_resnet_v2", "InceptionResNetV2"), ("mobilenet", "MobileNet"),
    ("mobilenet_v2", "MobileNetV2"), ("mobilenet_v3", "MobileNetV3Small"),
    ("mobilenet_v3", "MobileNetV3Large"),
] + [("efficientnet", f"EfficientNetB{i}") for i in range(8)] + [
    ("efficientnet_v2", f"EfficientNetV2{v}") for v in ("B0", "B1", "B2", "B3", "S", "M", "L")
] + [("convnext", f"ConvNeXt{v}") for v in ("Tiny", "Small", "Base", "Large", "XLarge")]
SNAPSHOT = [(m, f, {}) for m, f in _DEFAULTS] + [
    ("mobilenet_v3", "MobileNetV3Small", dict(minimalistic=True, alpha=0.75,
                                              include_top=False, pooling="avg")),
    ("mobilenet_v3", "MobileNetV3Large", dict(alpha=1.25, input_shape=(64, 64, 3),
                                              include_preprocessing=False)),
    ("efficientnet", "EfficientNetB1", dict(include_top=False, pooling="max",
                                            input_shape=(64, 64, 3))),
    ("efficientnet_v2", "EfficientNetV2B1", dict(include_preprocessing=False, classes=10)),
    ("efficientnet_v2", "EfficientNetV2S", dict(include_top=False, input_shape=(96, 96, 3))),
    ("convnext", "ConvNeXtTiny", dict(include_top=False, pooling="avg",
                                      input_shape=(64, 64, 3))),
    ("convnext", "ConvNeXtTiny", dict(include_preprocessing=False, classes=3,
                                      classifier_activation=None)),
    ("densenet", "DenseNet", dict(blocks=[2, 3, 2, 2], input_shape=(64, 64, 3), classes=5)),
    # Keras 3.15 refuses NASNetMobile on torch: its builder with NASNetMobile's settings
    ("nasnet", "NASNet", NASNET_MOBILE),
    ("nasnet", "NASNetLarge", {}),
]


def large_enabled():
    return os.environ.get("FKERAS_TEST_LARGE_APPS") == "1"


def config_id(entry):
    module, fn, kwargs = entry
    return fn + "-" + "-".join(f"{k}={v}" for k, v in kwargs.items()) if kwargs else fn
