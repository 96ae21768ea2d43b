"""keras.quantizers: int8 post-training quantization (Keras 3's names).

fkeras implements int8 (`model.quantize("int8")`, `Int8QuantizationConfig`, `AbsMaxQuantizer`,
`abs_max_quantize`); the int4 / float8 / GPTQ / AWQ configs raise NotImplementedError.
"""

from fkeras.quantizers.quantization_config import (
    AWQConfig,
    Float8QuantizationConfig,
    GPTQConfig,
    Int4QuantizationConfig,
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

__all__ = ["AWQConfig", "AbsMaxQuantizer", "Float8QuantizationConfig", "GPTQConfig",
           "Int4QuantizationConfig", "Int8QuantizationConfig", "QuantizationConfig",
           "Quantizer", "abs_max_quantize", "deserialize", "get", "quantize_and_dequantize",
           "serialize"]
