"""keras.ops crossentropy functions: NumPy float64 formulas, Keras parity, gradients."""

import numpy as np
import pytest

from fkeras import ops
from op_testing import fd_check

R = np.random.default_rng(0)
LOGITS = R.standard_normal((4, 3)) * 2
PROBS = 1 / (1 + np.exp(-LOGITS))
SOFT = np.exp(LOGITS) / np.exp(LOGITS).sum(-1, keepdims=True)
BIN_T = (R.uniform(size=(4, 3)) > 0.5).astype(np.float64)
ONEHOT = np.eye(3)[[0, 2, 1, 2]]
SPARSE = np.array([0, 2, 1, 2])


def test_binary_crossentropy_is_elementwise():
    ref = -(BIN_T * np.log(PROBS) + (1 - BIN_T) * np.log(1 - PROBS))
    np.testing.assert_allclose(np.asarray(ops.binary_crossentropy(BIN_T, PROBS)), ref, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(ops.binary_crossentropy(BIN_T, LOGITS, from_logits=True)),
                               ref, rtol=1e-5)
    fd_check(lambda p: ops.binary_crossentropy(BIN_T, p), [PROBS], [0], np.random.default_rng(1))
    fd_check(lambda z: ops.binary_crossentropy(BIN_T, z, from_logits=True), [LOGITS], [0],
             np.random.default_rng(2))


def test_categorical_and_sparse():
    ref = -np.log(SOFT[np.arange(4), SPARSE])
    for got in (ops.categorical_crossentropy(ONEHOT, SOFT),
                ops.categorical_crossentropy(ONEHOT, LOGITS, from_logits=True),
                ops.sparse_categorical_crossentropy(SPARSE, SOFT),
                ops.sparse_categorical_crossentropy(SPARSE, LOGITS, from_logits=True)):
        np.testing.assert_allclose(np.asarray(got), ref, rtol=1e-5)
    fd_check(lambda z: ops.categorical_crossentropy(ONEHOT, z, from_logits=True), [LOGITS], [0],
             np.random.default_rng(3))
    fd_check(lambda z: ops.sparse_categorical_crossentropy(SPARSE, z, from_logits=True),
             [LOGITS], [0], np.random.default_rng(4))


@pytest.mark.parametrize("from_logits", [False, True])
def test_matches_keras(from_logits):
    keras = pytest.importorskip("keras")
    out = (LOGITS if from_logits else SOFT).astype(np.float32)
    bout = (LOGITS if from_logits else PROBS).astype(np.float32)
    pairs = [(ops.binary_crossentropy(BIN_T, bout, from_logits=from_logits),
              keras.ops.binary_crossentropy(BIN_T.astype(np.float32), bout, from_logits=from_logits)),
             (ops.categorical_crossentropy(ONEHOT, out, from_logits=from_logits),
              keras.ops.categorical_crossentropy(ONEHOT, out, from_logits=from_logits)),
             (ops.sparse_categorical_crossentropy(SPARSE, out, from_logits=from_logits),
              keras.ops.sparse_categorical_crossentropy(SPARSE, out, from_logits=from_logits))]
    for ours, theirs in pairs:
        np.testing.assert_allclose(np.asarray(ours), keras.ops.convert_to_numpy(theirs),
                                   rtol=1e-5, atol=1e-6)
