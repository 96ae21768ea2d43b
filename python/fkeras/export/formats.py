"""The export formats `Model.export` accepts, against Keras 3.15's list."""

SUPPORTED_FORMATS = ("onnx",)
# Keras 3.15's other formats, each tied to a framework fkeras does not run on.
KERAS_ONLY_FORMATS = {
    "tf_saved_model": "a TensorFlow SavedModel (needs TensorFlow)",
    "openvino": "an OpenVINO model (needs the openvino package and a Keras backend)",
    "litert": "a LiteRT/TFLite model (needs TensorFlow or litert-torch)",
    "torch": "a torch.export ExportedProgram (needs Keras's PyTorch backend)",
}


def check_format(format):
    """Raises a ValueError unless `format` is one fkeras exports."""
    if format in SUPPORTED_FORMATS:
        return
    if format in KERAS_ONLY_FORMATS:
        raise ValueError(
            f"format={format!r} ({KERAS_ONLY_FORMATS[format]}) is not supported by fkeras, "
            f"which exports format='onnx' only. Export to ONNX and convert from there, or "
            "load the model in Keras (model.save(...) writes a .keras file Keras reads).")
    raise ValueError(f"Unrecognized format={format!r}. Supported formats are: "
                     f"{list(SUPPORTED_FORMATS)} (Keras's {sorted(KERAS_ONLY_FORMATS)} are not "
                     "available in fkeras).")
