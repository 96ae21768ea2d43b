"""ops.rearrange (values, gradient, symbolic shape, errors), view / view_as_complex /
view_as_real / polar, and jvp (exact, against analytic derivatives and torch.func.jvp)."""

import numpy as np
import pytest

import fkeras
from fkeras import ops

X = np.arange(2 * 6 * 4, dtype="float32").reshape(2, 6, 4)

# pattern, kwargs, NumPy reference
REARRANGE = [
    ("b h w -> b (h w)", {}, lambda x: x.reshape(2, 24)),
    ("b h w -> w b h", {}, lambda x: x.transpose(2, 0, 1)),
    ("b (h p) w -> b h (p w)", {"p": 2},
     lambda x: x.reshape(2, 3, 2, 4).reshape(2, 3, 8)),
    ("b h (w q) -> (b q) h w", {"q": 2},
     lambda x: x.reshape(2, 6, 2, 2).transpose(0, 3, 1, 2).reshape(4, 6, 2)),
    ("b (h p) (w q) -> b h w (p q)", {"p": 3, "q": 2},
     lambda x: x.reshape(2, 2, 3, 2, 2).transpose(0, 1, 3, 2, 4).reshape(2, 2, 2, 6)),
    ("b h w -> b h w", {}, lambda x: x),
]


@pytest.mark.parametrize("pattern,kw,ref", REARRANGE)
def test_rearrange_values_and_gradient(pattern, kw, ref):
    np.testing.assert_array_equal(np.asarray(ops.rearrange(X, pattern, **kw)), ref(X))
    v = fkeras.Variable(X)
    cot = np.random.default_rng(0).standard_normal(ref(X).shape).astype("float32")
    with fkeras.GradientTape() as tape:
        total = ops.sum(ops.multiply(ops.rearrange(v, pattern, **kw), cot))
    g = np.asarray(tape.gradient(total, v))
    # rearrange is a permutation of elements: the gradient sends each cotangent entry back
    index = ref(np.arange(X.size).reshape(X.shape))
    want = np.zeros(X.size, "float32")
    want[index.reshape(-1)] = cot.reshape(-1)
    np.testing.assert_array_equal(g, want.reshape(X.shape))


@pytest.mark.parametrize("pattern,kw,ref", REARRANGE)
def test_rearrange_against_keras(pattern, kw, ref):
    keras = pytest.importorskip("keras")
    torch = pytest.importorskip("torch")
    np.testing.assert_array_equal(np.asarray(ops.rearrange(X, pattern, **kw)),
                                  keras.ops.rearrange(torch.tensor(X), pattern, **kw).numpy())


def test_rearrange_symbolic():
    out = ops.rearrange(fkeras.KerasTensor((None, 4, 6)), "b h (w c) -> b (h w) c", c=2)
    assert out.shape == (None, 12, 2)
    inp = fkeras.Input((6, 4))
    model = fkeras.Model(inp, ops.rearrange(inp, "b h w -> b w h"))
    np.testing.assert_array_equal(model.predict(X, verbose=0), X.transpose(0, 2, 1))


@pytest.mark.parametrize("pattern,kw,match", [
    ("b h w", {}, "inputs -> outputs"),
    ("b h w -> b h", {}, "same axes"),
    ("b h w c -> b h w c", {}, "rank 3"),
    ("b (h p) w -> b h p w", {}, "cannot infer"),
    ("b (h p) w -> b h p w", {"p": 4}, "not divisible"),
    ("b h w -> b h w", {"z": 2}, "not in the pattern"),
    ("b h h -> b h h", {}, "repeats"),
    ("b h w -> b h w", {"h": 5}, "has size 6"),
])
def test_rearrange_errors(pattern, kw, match):
    with pytest.raises(ValueError, match=match):
        ops.rearrange(X, pattern, **kw)


def test_views_and_polar():
    pairs = np.arange(6, dtype="float32").reshape(3, 2)
    c = np.asarray(ops.view_as_complex(pairs))
    np.testing.assert_array_equal(c, pairs[:, 0] + 1j * pairs[:, 1])
    assert c.dtype == np.complex64
    np.testing.assert_array_equal(np.asarray(ops.view_as_real(c)), pairs)
    ints = np.array([1, 2, 3, 4], "int32")
    np.testing.assert_array_equal(np.asarray(ops.view(ints, "float32")), ints.view("float32"))
    assert np.asarray(ops.view(ints, "int16")).shape == (8,)
    p = np.asarray(ops.polar(np.array([1.0, 2.0], "float32"), np.array([0.0, 1.0], "float32")))
    np.testing.assert_allclose(p, [1.0, 2 * np.exp(1j)], rtol=1e-6)
    with pytest.raises(ValueError, match="size 2"):
        ops.view_as_complex(np.zeros((3, 3), "float32"))
    with pytest.raises(ValueError, match="complex"):
        ops.view_as_real(np.zeros(3, "float32"))
    with pytest.raises(ValueError, match="does not divide"):
        ops.view(np.zeros(3, "int8"), "int32")


def test_views_against_keras():
    keras = pytest.importorskip("keras")
    torch = pytest.importorskip("torch")
    pairs = np.random.default_rng(1).standard_normal((4, 2)).astype("float32")
    np.testing.assert_array_equal(np.asarray(ops.view_as_complex(pairs)),
                                  keras.ops.view_as_complex(torch.tensor(pairs)).numpy())
    a, b = np.array([1.0, 0.5], "float32"), np.array([0.3, -2.0], "float32")
    np.testing.assert_allclose(np.asarray(ops.polar(a, b)),
                               keras.ops.polar(torch.tensor(a), torch.tensor(b)).numpy(),
                               rtol=1e-6)


def test_jvp_matches_the_analytic_derivative():
    x = np.array([0.5, 1.0, -2.0], "float32")
    y = np.array([2.0, -1.0, 0.5], "float32")
    tx = np.array([1.0, 0.5, -1.0], "float32")
    ty = np.array([0.0, 2.0, 1.0], "float32")

    def f(a, b):
        return ops.sum(ops.multiply(ops.sin(a), b)), ops.multiply(a, a)

    (value, square), (dvalue, dsquare) = ops.jvp(f, (x, y), (tx, ty))
    np.testing.assert_allclose(float(value), np.sum(np.sin(x) * y), rtol=1e-6)
    np.testing.assert_allclose(float(dvalue), np.sum(np.cos(x) * y * tx + np.sin(x) * ty),
                               rtol=1e-5)
    np.testing.assert_allclose(np.asarray(dsquare), 2 * x * tx, rtol=1e-6)


def test_jvp_has_aux_and_errors():
    out, tangent, aux = ops.jvp(lambda a: (ops.exp(a), "aux"), (np.ones(2, "float32"),),
                                (np.ones(2, "float32"),), has_aux=True)
    assert aux == "aux"
    np.testing.assert_allclose(np.asarray(tangent), np.e, rtol=1e-6)
    with pytest.raises(ValueError, match="tangent 0 has shape"):
        ops.jvp(ops.exp, (np.ones(2, "float32"),), (np.ones(3, "float32"),))
    with pytest.raises(TypeError, match="tuples or lists"):
        ops.jvp(ops.exp, np.ones(2, "float32"), np.ones(2, "float32"))


def test_jvp_against_keras():
    keras = pytest.importorskip("keras")
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(2).standard_normal((3, 4)).astype("float32")
    t = np.random.default_rng(3).standard_normal((3, 4)).astype("float32")
    w = np.random.default_rng(4).standard_normal((4, 2)).astype("float32")
    _, k = keras.ops.jvp(lambda a: keras.ops.tanh(a @ torch.tensor(w)), (torch.tensor(x),),
                         (torch.tensor(t),))
    _, f = ops.jvp(lambda a: ops.tanh(ops.matmul(a, w)), (x,), (t,))
    np.testing.assert_allclose(np.asarray(f), k.numpy(), rtol=1e-5, atol=1e-6)
