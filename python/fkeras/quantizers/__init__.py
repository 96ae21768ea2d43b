"""keras.quantizers: int8 post-training quantization (Keras 3's names).

fkeras implements int8 (`model.quantize("int8")`, `Int8QuantizationConfig`, `AbsMaxQuantizer`,
`abs_max_quantize`); Keras's int4 / float8 / GPTQ / AWQ modes and their configs are absent
(docs/ops_coverage.md).
"""

from fkeras.quantizers.quantization_config import (
    Int8QuantizationConfig,
    QuantizationConfig,
    deserialize,
    get,
    serialize,
)
from fkeras.quantizers.quantizers import (
    AbsMaxQuantizer,
    Quantizer,
    abs_max_quantize,
    quantize_and_dequantize,
)

__all__ = ["AbsMaxQuantizer", "Int8QuantizationConfig", "QuantizationConfig",
           "Quantizer", "abs_max_quantize", "deserialize", "get", "quantize_and_dequantize",
           "serialize"]
