"""`fkeras.applications`: the image-classification architectures Keras ships, with Keras's
layer names and weight order, so weight files written by Keras load here and back.

Each family is a module (`fkeras.applications.resnet50.ResNet50`, `...vgg16.preprocess_input`);
the model constructors are also exported here (`fkeras.applications.VGG16`). See
docs/applications.md.
"""

from fkeras.applications import (convnext, densenet, efficientnet, efficientnet_v2,
                                 imagenet_utils, inception_resnet_v2, inception_v3, mobilenet,
                                 mobilenet_v2, mobilenet_v3, nasnet, resnet, resnet50,
                                 resnet_v2, vgg16, vgg19, xception)
from fkeras.applications.convnext import (ConvNeXtBase, ConvNeXtLarge, ConvNeXtSmall,
                                          ConvNeXtTiny, ConvNeXtXLarge)
from fkeras.applications.densenet import DenseNet121, DenseNet169, DenseNet201
from fkeras.applications.efficientnet import (EfficientNetB0, EfficientNetB1, EfficientNetB2,
                                              EfficientNetB3, EfficientNetB4, EfficientNetB5,
                                              EfficientNetB6, EfficientNetB7)
from fkeras.applications.efficientnet_v2 import (EfficientNetV2B0, EfficientNetV2B1,
                                                 EfficientNetV2B2, EfficientNetV2B3,
                                                 EfficientNetV2L, EfficientNetV2M,
                                                 EfficientNetV2S)
from fkeras.applications.inception_resnet_v2 import InceptionResNetV2
from fkeras.applications.inception_v3 import InceptionV3
from fkeras.applications.mobilenet import MobileNet
from fkeras.applications.mobilenet_v2 import MobileNetV2
from fkeras.applications.mobilenet_v3 import MobileNetV3Large, MobileNetV3Small
from fkeras.applications.nasnet import NASNetLarge, NASNetMobile
from fkeras.applications.resnet import ResNet50, ResNet101, ResNet152
from fkeras.applications.resnet_v2 import ResNet50V2, ResNet101V2, ResNet152V2
from fkeras.applications.vgg16 import VGG16
from fkeras.applications.vgg19 import VGG19
from fkeras.applications.xception import Xception

__all__ = [
    "ConvNeXtBase", "ConvNeXtLarge", "ConvNeXtSmall", "ConvNeXtTiny", "ConvNeXtXLarge",
    "DenseNet121", "DenseNet169", "DenseNet201",
    "EfficientNetB0", "EfficientNetB1", "EfficientNetB2", "EfficientNetB3", "EfficientNetB4",
    "EfficientNetB5", "EfficientNetB6", "EfficientNetB7",
    "EfficientNetV2B0", "EfficientNetV2B1", "EfficientNetV2B2", "EfficientNetV2B3",
    "EfficientNetV2L", "EfficientNetV2M", "EfficientNetV2S",
    "InceptionResNetV2", "InceptionV3", "MobileNet", "MobileNetV2", "MobileNetV3Large",
    "MobileNetV3Small", "NASNetLarge", "NASNetMobile", "ResNet101", "ResNet101V2", "ResNet152",
    "ResNet152V2", "ResNet50", "ResNet50V2", "VGG16", "VGG19", "Xception",
    "convnext", "densenet", "efficientnet", "efficientnet_v2", "imagenet_utils",
    "inception_resnet_v2", "inception_v3", "mobilenet", "mobilenet_v2", "mobilenet_v3",
    "nasnet", "resnet", "resnet50", "resnet_v2", "vgg16", "vgg19", "xception",
]
