"""NumPy ufuncs that run as fkeras ops when they meet a Tensor or Variable (`np.exp(t)`,
`ndarray - t`), so NumPy-style user code stays on the tape."""

import numpy as np

from fkeras import ops as _ops

UFUNC_OPS = {
    np.add: _ops.add, np.subtract: _ops.subtract, np.multiply: _ops.multiply,
    np.true_divide: _ops.divide, np.floor_divide: _ops.floor_divide, np.remainder: _ops.mod,
    np.power: _ops.power, np.matmul: _ops.matmul, np.negative: _ops.negative,
    np.absolute: _ops.absolute, np.exp: _ops.exp, np.log: _ops.log, np.sqrt: _ops.sqrt,
    np.square: _ops.square, np.maximum: _ops.maximum, np.minimum: _ops.minimum,
    np.tanh: _ops.tanh, np.equal: _ops.equal, np.not_equal: _ops.not_equal,
    np.less: _ops.less, np.less_equal: _ops.less_equal, np.greater: _ops.greater,
    np.greater_equal: _ops.greater_equal, np.logical_and: _ops.logical_and,
    np.logical_or: _ops.logical_or, np.logical_xor: _ops.logical_xor,
    np.logical_not: _ops.logical_not, np.isnan: _ops.isnan, np.isinf: _ops.isinf,
    np.isfinite: _ops.isfinite, np.bitwise_and: _ops.bitwise_and,
    np.bitwise_or: _ops.bitwise_or, np.bitwise_xor: _ops.bitwise_xor,
    np.invert: _ops.bitwise_invert,
}
