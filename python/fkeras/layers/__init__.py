"""fkeras.layers: the Keras layer catalogue."""

from fkeras.layers.activations.elu import ELU
from fkeras.layers.activations.leaky_relu import LeakyReLU
from fkeras.layers.activations.prelu import PReLU
from fkeras.layers.activations.relu import ReLU
from fkeras.layers.activations.softmax import Softmax
from fkeras.layers.attention.additive_attention import AdditiveAttention
from fkeras.layers.attention.attention import Attention
from fkeras.layers.attention.grouped_query_attention import (
    GroupedQueryAttention,
    GroupQueryAttention,
)
from fkeras.layers.attention.multi_head_attention import MultiHeadAttention
from fkeras.layers.convolutional.conv1d import Conv1D
from fkeras.layers.convolutional.conv2d import Conv2D
from fkeras.layers.convolutional.conv3d import Conv3D
from fkeras.layers.convolutional.conv_transpose import (
    Conv1DTranspose,
    Conv2DTranspose,
    Conv3DTranspose,
)
from fkeras.layers.convolutional.depthwise_conv import DepthwiseConv1D, DepthwiseConv2D
from fkeras.layers.convolutional.separable_conv import SeparableConv1D, SeparableConv2D
from fkeras.layers.core.activation import Activation
from fkeras.layers.core.dense import Dense
from fkeras.layers.core.einsum_dense import EinsumDense
from fkeras.layers.core.embedding import Embedding
from fkeras.layers.core.identity import Identity
from fkeras.layers.core.input_layer import Input, InputLayer
from fkeras.layers.core.lambda_layer import Lambda
from fkeras.layers.core.masking import Masking
from fkeras.layers.merging.add import Add, add
from fkeras.layers.merging.average import Average, average
from fkeras.layers.merging.concatenate import Concatenate, concatenate
from fkeras.layers.merging.dot import Dot, dot
from fkeras.layers.merging.maximum import Maximum, Minimum, maximum, minimum
from fkeras.layers.merging.multiply import Multiply, multiply
from fkeras.layers.merging.subtract import Subtract, subtract
from fkeras.layers.normalization.batch_normalization import BatchNormalization
from fkeras.layers.normalization.group_normalization import GroupNormalization
from fkeras.layers.normalization.layer_normalization import LayerNormalization
from fkeras.layers.normalization.rms_normalization import RMSNormalization
from fkeras.layers.normalization.unit_normalization import UnitNormalization
from fkeras.layers.preprocessing.category_encoding import CategoryEncoding
from fkeras.layers.preprocessing.center_crop import CenterCrop
from fkeras.layers.preprocessing.discretization import Discretization
from fkeras.layers.preprocessing.hashed_crossing import HashedCrossing
from fkeras.layers.preprocessing.hashing import Hashing
from fkeras.layers.preprocessing.normalization import Normalization
from fkeras.layers.preprocessing.rescaling import Rescaling
from fkeras.layers.preprocessing.resizing import Resizing
from fkeras.layers.pooling.average_pooling import AveragePooling1D, AveragePooling3D
from fkeras.layers.pooling.average_pooling2d import AveragePooling2D
from fkeras.layers.pooling.global_pooling import (
    GlobalAveragePooling1D,
    GlobalAveragePooling2D,
    GlobalAveragePooling3D,
    GlobalMaxPooling1D,
    GlobalMaxPooling2D,
    GlobalMaxPooling3D,
)
from fkeras.layers.pooling.max_pooling import MaxPooling1D, MaxPooling3D
from fkeras.layers.pooling.max_pooling2d import MaxPooling2D
from fkeras.layers.regularization.activity_regularization import ActivityRegularization
from fkeras.layers.regularization.dropout import Dropout
from fkeras.layers.regularization.noise import AlphaDropout, GaussianDropout, GaussianNoise
from fkeras.layers.regularization.spatial_dropout import (
    SpatialDropout1D,
    SpatialDropout2D,
    SpatialDropout3D,
)
from fkeras.layers.reshaping.cropping import Cropping1D, Cropping2D, Cropping3D
from fkeras.layers.reshaping.flatten import Flatten
from fkeras.layers.reshaping.permute import Permute
from fkeras.layers.reshaping.repeat_vector import RepeatVector
from fkeras.layers.reshaping.reshape import Reshape
from fkeras.layers.reshaping.up_sampling import UpSampling1D, UpSampling2D, UpSampling3D
from fkeras.layers.reshaping.zero_padding import ZeroPadding1D, ZeroPadding2D, ZeroPadding3D
from fkeras.layers.rnn.bidirectional import Bidirectional
from fkeras.layers.rnn.gru import GRU
from fkeras.layers.rnn.gru_cell import GRUCell
from fkeras.layers.rnn.lstm import LSTM
from fkeras.layers.rnn.lstm_cell import LSTMCell
from fkeras.layers.rnn.rnn import RNN
from fkeras.layers.rnn.simple_rnn import SimpleRNN
from fkeras.layers.rnn.simple_rnn_cell import SimpleRNNCell
from fkeras.layers.rnn.stacked_rnn_cells import StackedRNNCells
from fkeras.layers.rnn.time_distributed import TimeDistributed
from fkeras.layers.preprocessing.integer_lookup import IntegerLookup
from fkeras.layers.preprocessing.string_lookup import StringLookup
from fkeras.layers.preprocessing.text_vectorization import TextVectorization
from fkeras.layers.layer import Layer
from fkeras.engine.input_spec import InputSpec
from fkeras.layers.op_layer import OpLayer

# Keras's alternative names.
Convolution2D = Conv2D
MaxPool2D = MaxPooling2D
AvgPool2D = AveragePooling2D
Convolution1D = Conv1D
Convolution3D = Conv3D
Convolution1DTranspose = Conv1DTranspose
Convolution2DTranspose = Conv2DTranspose
Convolution3DTranspose = Conv3DTranspose
SeparableConvolution1D = SeparableConv1D
SeparableConvolution2D = SeparableConv2D
MaxPool1D = MaxPooling1D
MaxPool3D = MaxPooling3D
AvgPool1D = AveragePooling1D
AvgPool3D = AveragePooling3D
GlobalAvgPool1D = GlobalAveragePooling1D
GlobalAvgPool2D = GlobalAveragePooling2D
GlobalAvgPool3D = GlobalAveragePooling3D
GlobalMaxPool1D = GlobalMaxPooling1D
GlobalMaxPool2D = GlobalMaxPooling2D
GlobalMaxPool3D = GlobalMaxPooling3D

# Class registry for (de)serialization: every public layer class by name.
LAYER_CLASSES = {}


def register_layer_classes(namespace):
    for name, obj in list(namespace.items()):
        if isinstance(obj, type) and issubclass(obj, Layer):
            LAYER_CLASSES[name] = obj


def serialize_layer(layer):
    """{"module", "class_name", "config"} for a layer (Keras 3 style)."""
    # A class exported under another name than its own (GroupQueryAttention) says so.
    class_name = type(layer).__dict__.get("_fk_export_name", type(layer).__name__)
    config = layer.get_config()
    # Layers a custom get_config returns as objects are serialized too (Keras 3 does).
    config = {k: serialize_layer(v) if isinstance(v, Layer) else v for k, v in config.items()}
    from fkeras.saving.object_registration import get_registered_name

    registered = get_registered_name(type(layer))
    return {"module": "fkeras.layers", "class_name": class_name, "config": config,
            "registered_name": registered if registered != type(layer).__name__ else None}


def deserialize_layer(entry, custom_objects=None):
    """A layer from its `{"class_name", "config", ...}` entry. The class comes from the
    custom/registered objects or the built-in layer and model classes only (never from a
    module named in the entry)."""
    from fkeras.saving import safe_resolve

    if not isinstance(entry, dict):
        raise TypeError(f"Expected a layer config dict, received {entry!r}")
    try:
        cls = safe_resolve.resolve_class(entry, custom_objects, ("layers", "models"))
    except TypeError as e:
        raise ValueError(f"Unknown layer: '{entry.get('class_name')}'. Please ensure you are "
                         "using a `fkeras.saving.custom_object_scope` or pass "
                         f"`custom_objects`. ({e})") from None
    if not (isinstance(cls, type) and hasattr(cls, "from_config")):
        raise TypeError(f"Cannot deserialize layer '{entry.get('class_name')}': it resolved "
                        f"to {cls!r}, which is not a class with `from_config`.")
    config = entry.get("config") or {}
    if not isinstance(config, dict):
        raise TypeError(f"Expected a dict for the config of layer '{entry.get('class_name')}'"
                        f", received {config!r}")
    config = dict(config)
    if hasattr(cls, "_from_config_with_custom"):
        return cls._from_config_with_custom(config, custom_objects)
    if _takes_custom_objects(cls):
        return cls.from_config(config, custom_objects)
    return cls.from_config(config)


def serialize(layer):
    """keras.layers.serialize: a layer's `{"module", "class_name", "config",
    "registered_name"}` dict."""
    from fkeras.saving.serialization_lib import serialize_keras_object

    return serialize_keras_object(layer)


def deserialize(config, custom_objects=None):
    """keras.layers.deserialize: a layer from `serialize`'s dict (built-in, registered or
    `custom_objects` classes only)."""
    return deserialize_layer(config, custom_objects)


def _takes_custom_objects(cls):
    import inspect

    try:
        return "custom_objects" in inspect.signature(cls.from_config).parameters
    except (TypeError, ValueError):
        return False


register_layer_classes(dict(globals()))
