"""Contractions: einsum (through matmul/GEMM), tensordot, dot, inner, outer, vdot, trace, norm."""

import numpy as np
import pytest

from fkeras import ops
from fkeras.engine.keras_tensor import KerasTensor
from op_testing import fd_check

R = np.random.default_rng(0)
A3, B3 = R.standard_normal((2, 3, 4)), R.standard_normal((2, 4, 5))
M, N, V = R.standard_normal((3, 4)), R.standard_normal((4, 5)), R.standard_normal(4)

EINSUM = [
    ("bij,bjk->bik", (A3, B3)), ("ij,jk->ik", (M, N)), ("ij,jk", (M, N)),
    ("ijk->kji", (A3,)), ("ij->", (M,)), ("ij,ij->i", (M, M)), ("i,j->ij", (V, V)),
    ("...j,...jk->...k", (A3[:, 0], B3)), ("bij,bjk->ik", (A3, B3)),
    ("bij,bjk,kl->bil", (A3, B3, R.standard_normal((5, 2)))), ("ij,j->i", (M, V)), ("bij,jk->bik", (A3, N)),
]


@pytest.mark.parametrize("i", range(len(EINSUM)))
def test_einsum_values_and_gradients(i):
    spec, operands = EINSUM[i]
    got = ops.einsum(spec, *[o.astype(np.float32) for o in operands])
    np.testing.assert_allclose(np.asarray(got), np.einsum(spec, *operands), rtol=1e-4, atol=1e-5)
    operands = [o.copy() for o in operands]  # distinct buffers: one gradient each
    fd_check(lambda *t: ops.einsum(spec, *t), operands, list(range(len(operands))),
             np.random.default_rng(i))


def test_einsum_matches_keras_and_infers_shapes():
    keras = pytest.importorskip("keras")
    a, b = A3.astype(np.float32), B3.astype(np.float32)
    np.testing.assert_allclose(np.asarray(ops.einsum("bij,bjk->bki", a, b)),
                               keras.ops.convert_to_numpy(keras.ops.einsum("bij,bjk->bki", a, b)),
                               rtol=1e-5, atol=1e-5)
    assert ops.einsum("bij,jk->bik", KerasTensor((None, 3, 4)), KerasTensor((4, 5))).shape == \
        (None, 3, 5)


def test_einsum_errors():
    with pytest.raises(ValueError, match="operands"):
        ops.einsum("ij,jk->ik", M)
    with pytest.raises(ValueError, match="size"):
        ops.einsum("ij,jk->ik", M, M)
    with pytest.raises(ValueError, match="repeated"):
        ops.einsum("ii->i", M[:, :3])


PRODUCTS = {
    "tensordot2": (lambda a, b: ops.tensordot(a, b, 2), lambda a, b: np.tensordot(a, b, 2),
                   (A3, R.standard_normal((3, 4, 2)))),
    "tensordot_axes": (lambda a, b: ops.tensordot(a, b, axes=([1], [0])),
                       lambda a, b: np.tensordot(a, b, ([1], [0])), (A3, R.standard_normal((3, 2)))),
    "dot_mm": (ops.dot, np.dot, (M, N)), "dot_nd": (ops.dot, np.dot, (A3, N)),
    "dot_vv": (ops.dot, np.dot, (V, V)), "dot_mv": (ops.dot, np.dot, (M, V)),
    "inner": (ops.inner, np.inner, (M, R.standard_normal((2, 4)))),
    "outer": (ops.outer, np.outer, (M, V)), "vdot": (ops.vdot, np.vdot, (M, M)),
    "trace": (lambda a: ops.trace(a), np.trace, (M,)),
}


@pytest.mark.parametrize("name", sorted(PRODUCTS))
def test_products(name):
    fn, ref, operands = PRODUCTS[name]
    np.testing.assert_allclose(np.asarray(fn(*[o.astype(np.float32) for o in operands])),
                               ref(*operands), rtol=1e-4, atol=1e-5)
    fd_check(fn, [o.copy() for o in operands], list(range(len(operands))),
             np.random.default_rng(7))


NORMS = [(None, None), (2, 1), (1, 1), (np.inf, 0), (-np.inf, 1), (3, 1), (0, 1),
         ("fro", (0, 1)), (1, (0, 1)), (-1, (0, 1)), (np.inf, (0, 1)), (-np.inf, (1, 0))]


@pytest.mark.parametrize("ord,axis", NORMS)
@pytest.mark.parametrize("keepdims", [False, True])
def test_norm(ord, axis, keepdims):
    x = R.standard_normal((3, 4))
    got = ops.norm(x.astype(np.float32), ord=ord, axis=axis, keepdims=keepdims)
    np.testing.assert_allclose(np.asarray(got), np.linalg.norm(x, ord, axis, keepdims),
                               rtol=1e-5, atol=1e-6)
    if ord != 0:
        fd_check(lambda t: ops.norm(t, ord=ord, axis=axis, keepdims=keepdims), [x], [0],
                 np.random.default_rng(8))


def test_norm_matches_keras_and_refuses_unsupported():
    keras = pytest.importorskip("keras")
    x = R.standard_normal((2, 3, 4)).astype(np.float32)
    np.testing.assert_allclose(np.asarray(ops.norm(x, axis=-1)),
                               keras.ops.convert_to_numpy(keras.ops.norm(x, axis=-1)), rtol=1e-5)
    with pytest.raises(ValueError, match="not supported"):
        ops.norm(x[0], ord="nuc", axis=(0, 1))
