"""Model export (`Model.export`). ONNX export lives in `onnx_export`; the `onnx` package is
imported only when an export runs (pip install "fkeras[onnx]")."""
