"""Connectionist temporal classification (Graves et al. 2006): `ctc_loss` (an op with its
backward) and `ctc_decode` (greedy and beam search), with Keras 3's signatures.

`ctc_loss(target, output, target_length, output_length, mask_index=0)`: `output` holds logits
(batch, time, classes) normalized here with a log-softmax (Keras 3 on every backend);
`target` integer labels (batch, max_label_length); `mask_index` is the blank class. The
forward runs the alpha recursion in log space in float64, the backward the beta recursion; the
gradient with respect to the logits is `softmax - occupancy / p(target)`. A target that no
alignment can produce (too long for its sequence) gives an infinite loss and a NaN gradient,
as PyTorch's `ctc_loss` (Keras 3's torch backend) does: nothing is clamped silently.
"""

import numpy as np

from fkeras.engine.keras_tensor import KerasTensor
from fkeras.ops import shape_utils as su
from fkeras.ops.registry import REGISTRY, Op, apply

_NEG_INF = -np.inf


def _lse(*xs):
    m = xs[0]
    for x in xs[1:]:
        m = np.maximum(m, x)
    safe = np.where(np.isfinite(m), m, 0.0)
    total = sum(np.exp(x - safe) for x in xs)
    with np.errstate(divide="ignore"):
        return np.log(total) + safe


def _log_softmax(z):
    z = z.astype(np.float64)
    m = z.max(axis=-1, keepdims=True)
    return z - m - np.log(np.exp(z - m).sum(axis=-1, keepdims=True))


def _extended(target, target_length, blank):
    """Labels with blanks between and around them: (batch, 2L+1), and the skip mask (a
    transition s-2 -> s is allowed where label s differs from label s-2 and is not blank)."""
    b, L = target.shape
    ext = np.full((b, 2 * L + 1), blank, dtype=np.int64)
    ext[:, 1::2] = target
    valid = np.arange(2 * L + 1)[None, :] < (2 * target_length[:, None] + 1)
    skip = np.zeros_like(valid)
    skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
    return ext, valid, skip


def _emissions(lp, ext):
    # lp (b, T, C), ext (b, S) -> (T, b, S) log-probabilities of each extended label
    return np.take_along_axis(lp, ext[:, None, :], axis=2).transpose(1, 0, 2)


def _alphas(em, valid, skip, out_len):
    T, b, S = em.shape
    alpha = np.full((T, b, S), _NEG_INF)
    alpha[0, :, 0] = em[0, :, 0]
    if S > 1:
        alpha[0, :, 1] = np.where(valid[:, 1], em[0, :, 1], _NEG_INF)
    for t in range(1, T):
        prev = alpha[t - 1]
        shift1 = np.concatenate([np.full((b, 1), _NEG_INF), prev[:, :-1]], axis=1)
        shift2 = np.concatenate([np.full((b, 2), _NEG_INF), prev[:, :-2]], axis=1)
        shift2 = np.where(skip, shift2, _NEG_INF)
        new = _lse(prev, shift1, shift2) + em[t]
        new = np.where(valid, new, _NEG_INF)
        alpha[t] = np.where((t < out_len)[:, None], new, prev)
    return alpha


def _betas(em, valid, skip, out_len, tgt_len):
    T, b, S = em.shape
    beta = np.full((T, b, S), _NEG_INF)
    rows = np.arange(b)
    last = 2 * tgt_len  # index of the final blank
    for t in range(T - 1, -1, -1):
        nxt = beta[t + 1] if t + 1 < T else np.full((b, S), _NEG_INF)
        shift1 = np.concatenate([nxt[:, 1:], np.full((b, 1), _NEG_INF)], axis=1)
        shift2 = np.concatenate([nxt[:, 2:], np.full((b, 2), _NEG_INF)], axis=1)
        skip_next = np.concatenate([skip[:, 2:], np.zeros((b, 2), bool)], axis=1)
        shift2 = np.where(skip_next, shift2, _NEG_INF)
        new = np.where(valid, _lse(nxt, shift1, shift2) + em[t], _NEG_INF)
        start = t == out_len - 1  # the sequence's last frame: initialize
        init = np.full((b, S), _NEG_INF)
        init[rows, last] = em[t, rows, last]
        has_label = tgt_len > 0
        init[rows[has_label], last[has_label] - 1] = em[t, rows[has_label],
                                                        last[has_label] - 1]
        new = np.where(start[:, None], init, new)
        beta[t] = np.where((t < out_len)[:, None], new, _NEG_INF)
    return beta


def _check(target, output, target_length, output_length, mask_index):
    if len(output.shape) != 3:
        raise ValueError("`output` must be of rank 3 (batch, time, classes). Received: "
                         f"output.shape={tuple(output.shape)}")
    if len(target.shape) != 2:
        raise ValueError("`target` must be of rank 2 (batch, max_label_length). Received: "
                         f"target.shape={tuple(target.shape)}")
    if not 0 <= mask_index < output.shape[2]:
        raise ValueError(f"`mask_index` must be a class index in [0, {output.shape[2]}). "
                         f"Received: mask_index={mask_index}")


class CTCLoss(Op):
    name = "ctc_loss"

    def output_spec(self, target, output, target_length, output_length, mask_index=0):
        return (su.shape_of(output)[0],)

    def forward(self, dev, target, output, target_length, output_length, mask_index=0):
        target = np.asarray(target).astype(np.int64)
        tgt_len = np.asarray(target_length).astype(np.int64).reshape(-1)
        out_len = np.asarray(output_length).astype(np.int64).reshape(-1)
        b, T, C = output.shape
        if (out_len > T).any() or (out_len < 0).any() or (tgt_len < 0).any() \
                or (tgt_len > target.shape[1]).any():
            raise ValueError(
                "ctc_loss: lengths out of range. Expected 0 <= output_length <= "
                f"{T} and 0 <= target_length <= {target.shape[1]}. Received: "
                f"output_length={out_len.tolist()}, target_length={tgt_len.tolist()}")
        if target.size and ((target < 0) | (target >= C)).any():
            raise ValueError(f"ctc_loss: `target` holds class indices outside [0, {C}).")
        lp = _log_softmax(output)
        ext, valid, skip = _extended(target, tgt_len, mask_index)
        em = _emissions(lp, ext)
        alpha = _alphas(em, valid, skip, out_len)
        rows = np.arange(b)
        final = alpha[np.maximum(out_len - 1, 0), rows]  # (b, S)
        last = 2 * tgt_len
        end_blank = final[rows, last]
        end_label = np.where(tgt_len > 0, final[rows, np.maximum(last - 1, 0)], _NEG_INF)
        logp = _lse(end_blank, end_label)
        logp = np.where(out_len == 0, np.where(tgt_len == 0, 0.0, _NEG_INF), logp)
        loss = -logp
        return np.asarray(loss, output.dtype), (lp, ext, valid, skip, em, alpha, logp,
                                                out_len, tgt_len, output.dtype)

    def backward(self, dev, saved, grads, needs, mask_index=0):
        lp, ext, valid, skip, em, alpha, logp, out_len, tgt_len, dtype = saved
        (g,) = grads if isinstance(grads, (list, tuple)) else (grads,)
        b, T, C = lp.shape
        beta = _betas(em, valid, skip, out_len, tgt_len)
        with np.errstate(invalid="ignore"):
            occ = np.exp(alpha + beta - em - logp[None, :, None])  # (T, b, S)
        occ = np.where(np.isnan(occ) & np.isfinite(logp)[None, :, None], 0.0, occ)
        posterior = np.zeros((b, T, C))
        t_idx = np.arange(T)[:, None, None]
        b_idx = np.arange(b)[None, :, None]
        np.add.at(posterior, (np.broadcast_to(b_idx, occ.shape),
                              np.broadcast_to(t_idx, occ.shape),
                              np.broadcast_to(ext[None, :, :], occ.shape)), occ)
        grad = np.exp(lp) - posterior
        live = (np.arange(T)[None, :] < out_len[:, None])[..., None]
        grad = np.where(live, grad, 0.0)
        grad = np.where(np.isfinite(logp)[:, None, None], grad, np.nan)  # impossible target
        grad *= np.asarray(g, np.float64).reshape(b, 1, 1)
        return (None, grad.astype(dtype), None, None)


def ctc_loss(target, output, target_length, output_length, mask_index=0):
    """CTC loss per sample (keras.ops.ctc_loss): `target` (batch, max_label_length) integer
    labels, `output` (batch, time, classes) logits, their lengths (batch,), `mask_index` the
    blank class. Differentiable in `output`."""
    if not any(isinstance(x, KerasTensor) for x in (target, output)):
        _check(np.asarray(getattr(target, "_value", target)),
               getattr(output, "_value", np.asarray(output)), target_length, output_length,
               mask_index)
    return apply(_OP, target, output, target_length, output_length, mask_index=int(mask_index))


_OP = REGISTRY["ctc_loss"]


# ---- decoding ----

def _greedy(x, lengths, merge_repeated, mask_index):
    b, T, C = x.shape
    idx = x.argmax(-1).astype(np.int32)
    scores = x.max(-1)
    beyond = np.arange(T)[None, :] >= lengths[:, None]
    idx = np.where(beyond, mask_index, idx)
    scores = np.where(beyond, 0.0, scores)
    if merge_repeated:
        repeat = np.zeros_like(beyond)
        repeat[:, 1:] = idx[:, 1:] == idx[:, :-1]
        idx = np.where(repeat, mask_index, idx)
    blank = idx == mask_index
    idx = np.where(blank, -1, idx)
    order = np.argsort(np.where(blank, T, np.arange(T)[None, :]), axis=-1, kind="stable")
    idx = np.take_along_axis(idx, order, axis=-1)
    return idx[None], (-scores.sum(axis=1))[:, None]


def _beam(lp, length, beam_width, top_paths, mask_index):
    """Prefix beam search on one sequence's log-probabilities: beams are label prefixes with
    (log p ending in blank, log p ending in a label)."""
    beams = {(): (0.0, _NEG_INF)}
    for t in range(length):
        nxt = {}

        def add(prefix, pb, pnb):
            ob, onb = nxt.get(prefix, (_NEG_INF, _NEG_INF))
            nxt[prefix] = (np.logaddexp(ob, pb), np.logaddexp(onb, pnb))

        row = lp[t]
        for prefix, (pb, pnb) in beams.items():
            total = np.logaddexp(pb, pnb)
            add(prefix, total + row[mask_index], _NEG_INF)
            for c in range(lp.shape[1]):
                if c == mask_index:
                    continue
                if prefix and prefix[-1] == c:
                    add(prefix + (c,), _NEG_INF, pb + row[c])
                    add(prefix, _NEG_INF, pnb + row[c])
                else:
                    add(prefix + (c,), _NEG_INF, total + row[c])
        ranked = sorted(nxt.items(), key=lambda kv: -np.logaddexp(*kv[1]))
        beams = dict(ranked[:beam_width])
    ranked = sorted(beams.items(), key=lambda kv: -np.logaddexp(*kv[1]))[:top_paths]
    return [(list(p), float(np.logaddexp(*s))) for p, s in ranked]


def ctc_decode(inputs, sequence_lengths, strategy="greedy", beam_width=100, top_paths=1,
               merge_repeated=True, mask_index=0):
    """Decodes CTC outputs (keras.ops.ctc_decode).

    Returns `(decoded, scores)`: `decoded` (top_paths, batch, time) label indices, padded with
    -1; `scores` (batch, top_paths): for "greedy" the negative sum of each step's maximum
    (as Keras), for "beam_search" the log-probability of each path.
    """
    x = np.asarray(getattr(inputs, "_value", inputs), dtype=np.float64)
    lengths = np.asarray(getattr(sequence_lengths, "_value", sequence_lengths)).astype(
        np.int64).reshape(-1)
    if x.ndim != 3:
        raise ValueError("`inputs` must be of rank 3 (batch, time, classes). Received: "
                         f"inputs.shape={x.shape}")
    b, T, C = x.shape
    mask_index = C - 1 if mask_index is None else int(mask_index)
    if strategy == "greedy":
        idx, scores = _greedy(x, lengths, merge_repeated, mask_index)
        return _out(idx.astype(np.int32)), _out(scores.astype(np.float32))
    if strategy != "beam_search":
        raise ValueError(f"Invalid strategy {strategy}. Supported values are 'greedy' and "
                         "'beam_search'.")
    lp = _log_softmax(x)
    decoded = np.full((top_paths, b, T), -1, dtype=np.int32)
    scores = np.full((b, top_paths), _NEG_INF, dtype=np.float32)
    for i in range(b):
        for k, (path, score) in enumerate(_beam(lp[i], min(lengths[i], T), beam_width,
                                                top_paths, mask_index)):
            decoded[k, i, :len(path)] = path
            scores[i, k] = score
    return _out(decoded), _out(scores)


def _out(a):
    from fkeras.engine.tensor import _MODE, Tensor

    return a if _MODE.array else Tensor(a)
