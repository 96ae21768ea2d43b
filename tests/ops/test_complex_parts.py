"""ops.real / ops.imag / ops.conj on complex tensors (from polar or view_as_complex): the real
and imaginary parts as floats and the conjugate, as NumPy and Keras; before, real returned the
complex value, imag zeros and conj the value unchanged (silently wrong)."""

import numpy as np
import pytest

import fkeras
from fkeras import ops

ABS = np.array([[1.0, 2.0, 0.5], [3.0, 0.1, 1.5]], np.float32)
ANGLE = np.array([[0.5, -1.0, 2.0], [3.0, 0.0, -2.5]], np.float32)
PAIRS = np.stack([ABS, ANGLE], axis=-1)


def _complex_inputs():
    return [("polar", ops.polar(ABS, ANGLE), ABS * np.exp(1j * ANGLE)),
            ("view_as_complex", ops.view_as_complex(PAIRS), ABS + 1j * ANGLE)]


@pytest.mark.parametrize("source", ["polar", "view_as_complex"])
def test_parts_and_conjugate_match_numpy(source):
    (_, z, want), = [c for c in _complex_inputs() if c[0] == source]
    re, im, cj = ops.real(z), ops.imag(z), ops.conj(z)
    assert re.dtype == "float32" and im.dtype == "float32" and cj.dtype == "complex64"
    np.testing.assert_allclose(np.asarray(re), want.real, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(im), want.imag, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(cj), np.conj(want), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(ops.conjugate(z)), np.conj(want), rtol=1e-6)


def test_real_tensors_keep_their_behaviour():
    np.testing.assert_array_equal(np.asarray(ops.real(ABS)), ABS)
    np.testing.assert_array_equal(np.asarray(ops.imag(ABS)), np.zeros_like(ABS))
    np.testing.assert_array_equal(np.asarray(ops.conj(ABS)), ABS)


def test_symbolic_complex_parts_are_float():
    z = fkeras.KerasTensor((None, 3), "complex64")
    assert ops.real(z).dtype == "float32" and tuple(ops.imag(z).shape) == (None, 3)


def test_parts_match_keras():
    keras = pytest.importorskip("keras")
    z = keras.ops.polar(ABS, ANGLE)
    ours = ops.polar(ABS, ANGLE)
    for name in ("real", "imag", "conj"):
        want = keras.ops.convert_to_numpy(getattr(keras.ops, name)(z))
        np.testing.assert_allclose(np.asarray(getattr(ops, name)(ours)), want, rtol=1e-5,
                                   atol=1e-6, err_msg=name)
