"""ctc_loss against a brute-force sum over every alignment (float64), its gradient against
finite differences, ctc_loss/ctc_decode/CTC against real Keras 3 where installed, errors."""

import itertools

import numpy as np
import pytest

import fkeras
from fkeras import ops


def _collapse(path, blank):
    out, prev = [], None
    for c in path:
        if c != prev and c != blank:
            out.append(c)
        prev = c
    return out


def brute_force_ctc(logits, target, out_len, blank):
    """-log sum over all length-T paths that collapse to `target` (tiny sizes only)."""
    z = logits[:out_len].astype(np.float64)
    lp = z - np.log(np.exp(z).sum(-1, keepdims=True))
    total = 0.0
    for path in itertools.product(range(z.shape[1]), repeat=out_len):
        if _collapse(path, blank) == list(target):
            total += np.exp(sum(lp[t, c] for t, c in enumerate(path)))
    return -np.log(total) if total > 0 else np.inf


# (T, C, targets per sample, output lengths, blank)
CASES = [
    (4, 3, [[1, 2], [1], [], [2, 2]], [4, 4, 3, 4], 0),
    (5, 3, [[1, 1], [2, 1, 2], [1], [2]], [5, 5, 4, 2], 0),
    (4, 4, [[0, 1], [2, 0], [1], [0, 2]], [4, 3, 4, 4], 3),
    (3, 2, [[1], [1, 1], [], [1]], [3, 3, 1, 1], 0),
]


def _batch(case, seed=0):
    T, C, targets, out_len, blank = case
    rng = np.random.default_rng(seed)
    logits = rng.standard_normal((len(targets), T, C)).astype("float32")
    L = max(1, max(len(t) for t in targets))
    target = np.zeros((len(targets), L), "int32")
    for i, t in enumerate(targets):
        target[i, :len(t)] = t
    return logits, target, np.array([len(t) for t in targets], "int32"), \
        np.array(out_len, "int32"), blank


@pytest.mark.parametrize("case", CASES)
def test_loss_against_brute_force(case):
    logits, target, tl, ol, blank = _batch(case)
    got = np.asarray(ops.ctc_loss(target, logits, tl, ol, mask_index=blank), np.float64)
    want = [brute_force_ctc(logits[i], target[i, :tl[i]], ol[i], blank)
            for i in range(len(tl))]
    np.testing.assert_allclose(got, want, rtol=1e-5)


@pytest.mark.parametrize("case", CASES)
def test_gradient_against_finite_differences(case):
    logits, target, tl, ol, blank = _batch(case)
    cot = np.random.default_rng(3).standard_normal(len(tl))
    v = fkeras.Variable(logits)
    with fkeras.GradientTape() as tape:
        total = ops.sum(ops.multiply(ops.ctc_loss(target, v, tl, ol, mask_index=blank),
                                     cot.astype("float32")))
    grad = np.asarray(tape.gradient(total, v), np.float64)
    for i in range(len(tl)):  # frames past the sequence's length get no gradient
        assert np.all(grad[i, ol[i]:] == 0)
    d = np.random.default_rng(4).standard_normal(logits.shape)
    h = 1e-4

    def f(z):
        return sum(cot[i] * brute_force_ctc(z[i], target[i, :tl[i]], ol[i], blank)
                   for i in range(len(tl)))

    fd = (f(logits + h * d) - f(logits - h * d)) / (2 * h)
    np.testing.assert_allclose((grad * d).sum(), fd, rtol=1e-3, atol=1e-5)


def test_impossible_target_is_infinite_with_nan_gradient():
    logits = np.zeros((1, 2, 3), "float32")
    target = np.array([[1, 1]], "int32")  # needs 3 frames (1, blank, 1)
    v = fkeras.Variable(logits)
    with fkeras.GradientTape() as tape:
        loss = ops.ctc_loss(target, v, [2], [2])
        total = ops.sum(loss)
    assert np.isinf(np.asarray(loss)).all()
    assert np.isnan(np.asarray(tape.gradient(total, v))).all()


@pytest.mark.parametrize("call,match", [
    (lambda: ops.ctc_loss(np.zeros((2, 2), "int32"), np.zeros((2, 3)), [1, 1], [3, 3]),
     "rank 3"),
    (lambda: ops.ctc_loss(np.zeros((2,), "int32"), np.zeros((2, 3, 4)), [1, 1], [3, 3]),
     "rank 2"),
    (lambda: ops.ctc_loss(np.zeros((2, 2), "int32"), np.zeros((2, 3, 4)), [1, 1], [3, 5]),
     "lengths out of range"),
    (lambda: ops.ctc_loss(np.full((2, 2), 7, "int32"), np.zeros((2, 3, 4)), [1, 1], [3, 3]),
     "outside"),
    (lambda: ops.ctc_loss(np.zeros((2, 2), "int32"), np.zeros((2, 3, 4)), [1, 1], [3, 3],
                          mask_index=4), "mask_index"),
    (lambda: ops.ctc_decode(np.zeros((2, 3, 4)), [3, 3], strategy="viterbi"),
     "Invalid strategy"),
    (lambda: fkeras.losses.ctc(np.zeros((2, 2, 1)), np.zeros((2, 3, 4))), "y_true"),
])
def test_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_symbolic_shape():
    out = ops.ctc_loss(fkeras.KerasTensor((None, 5), "int32"), fkeras.KerasTensor((None, 9, 4)),
                       fkeras.KerasTensor((None,)), fkeras.KerasTensor((None,)))
    assert out.shape == (None,)


@pytest.fixture
def keras_torch():
    keras = pytest.importorskip("keras")
    torch = pytest.importorskip("torch")
    return keras, torch


@pytest.mark.parametrize("blank", [0, 5])
def test_loss_and_gradient_against_keras(keras_torch, blank):
    keras, torch = keras_torch
    rng = np.random.default_rng(1)
    logits = rng.standard_normal((4, 12, 6)).astype("float32")
    labels = [c for c in range(6) if c != blank]
    target = rng.choice(labels, (4, 4)).astype("int32")
    tl, ol = np.array([4, 2, 3, 1], "int32"), np.array([12, 9, 7, 5], "int32")
    cot = rng.standard_normal(4).astype("float32")
    v = torch.tensor(logits, requires_grad=True)
    k = keras.ops.ctc_loss(torch.tensor(target), v, torch.tensor(tl), torch.tensor(ol),
                           mask_index=blank)
    (k * torch.tensor(cot)).sum().backward()
    fv = fkeras.Variable(logits)
    with fkeras.GradientTape() as tape:
        f = ops.ctc_loss(target, fv, tl, ol, mask_index=blank)
        total = ops.sum(ops.multiply(f, cot))
    np.testing.assert_allclose(np.asarray(f), k.detach().numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(tape.gradient(total, fv)), v.grad.numpy(),
                               rtol=1e-4, atol=1e-5)


def test_ctc_loss_class_against_keras(keras_torch):
    keras, torch = keras_torch
    rng = np.random.default_rng(2)
    logits = rng.standard_normal((3, 10, 5)).astype("float32")
    y = np.array([[1, 2, 3], [4, 0, 0], [2, 2, 0]], "int32")
    assert fkeras.losses.CTC().get_config() == keras.losses.CTC().get_config()
    np.testing.assert_allclose(float(np.asarray(fkeras.losses.CTC()(y, logits))),
                               float(keras.losses.CTC()(torch.tensor(y), torch.tensor(logits))),
                               rtol=1e-5)


@pytest.mark.parametrize("strategy,merge,top", [("greedy", True, 1), ("greedy", False, 1),
                                                ("beam_search", True, 1),
                                                ("beam_search", True, 3)])
def test_decode_against_keras(keras_torch, strategy, merge, top):
    keras, torch = keras_torch
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 10, 5)).astype("float32") * 2
    lengths = np.array([10, 7, 4, 1], "int32")
    kd, ks = keras.ops.ctc_decode(torch.tensor(x), torch.tensor(lengths), strategy=strategy,
                                  merge_repeated=merge, beam_width=8, top_paths=top)
    fd, fs = ops.ctc_decode(x, lengths, strategy=strategy, merge_repeated=merge,
                            beam_width=8, top_paths=top)
    np.testing.assert_array_equal(np.asarray(fd), np.asarray(kd))
    np.testing.assert_allclose(np.asarray(fs), np.asarray(ks), rtol=1e-5, atol=1e-5)
