"""Utilities (keras.utils)."""

from fkeras.utils.file_utils import get_file
from fkeras.utils.numerical_utils import normalize, to_categorical
from fkeras.utils.progbar import Progbar
from fkeras.utils.py_dataset import PyDataset
from fkeras.utils.random import set_random_seed
from fkeras.utils.sequence_utils import pad_sequences


def clear_session():
    """Resets the automatic layer names (`dense`, `dense_1`, ... start again)."""
    from fkeras.engine import naming

    naming.reset()


Sequence = PyDataset  # Keras 2's name

_SAVING_NAMES = ("CustomObjectScope", "custom_object_scope", "get_custom_objects",
                 "get_registered_name", "get_registered_object", "register_keras_serializable")


_LAZY = {"serialize_keras_object": "fkeras.saving.serialization_lib",
         "deserialize_keras_object": "fkeras.saving.serialization_lib",
         "is_keras_tensor": "fkeras.engine.keras_tensor",
         "standardize_dtype": "fkeras.ops.dtypes",
         "pack_x_y_sample_weight": "fkeras.trainers.data_adapter",
         "unpack_x_y_sample_weight": "fkeras.trainers.data_adapter",
         "model_to_dot": "fkeras.utils.model_visualization",
         "plot_model": "fkeras.utils.model_visualization",
         "image_dataset_from_directory": "fkeras.utils.image_dataset_utils",
         "text_dataset_from_directory": "fkeras.utils.text_dataset_utils",
         "timeseries_dataset_from_array": "fkeras.utils.timeseries_dataset_utils",
         "split_dataset": "fkeras.utils.dataset_utils",
         "load_img": "fkeras.utils.image_utils",
         "img_to_array": "fkeras.utils.image_utils",
         "array_to_img": "fkeras.utils.image_utils",
         "save_img": "fkeras.utils.image_utils",
         "get_source_inputs": "fkeras.utils.layer_utils",
         "enable_interactive_logging": "fkeras.config",
         "disable_interactive_logging": "fkeras.config",
         "is_interactive_logging_enabled": "fkeras.config",
         "Config": "fkeras.utils.config",
         "FeatureSpace": "fkeras.utils.feature_space",
         "audio_dataset_from_directory": "fkeras.utils.audio_dataset"}

# keras.utils submodules, imported on first use.
_SUBMODULES = ("bounding_boxes", "legacy")


def __getattr__(name):
    # keras.utils re-exports the custom-object registry and a few helpers of other modules;
    # they load on first use.
    if name in _SAVING_NAMES:
        from fkeras.saving import object_registration

        return getattr(object_registration, name)
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    if name in _SUBMODULES:
        import importlib

        return importlib.import_module(f"fkeras.utils.{name}")
    raise AttributeError(f"module 'fkeras.utils' has no attribute '{name}'")


__all__ = ["Progbar", "PyDataset", "Sequence", "clear_session", "get_file", "normalize",
           "pad_sequences", "set_random_seed", "to_categorical", *_SAVING_NAMES, *_LAZY,
           *_SUBMODULES]
