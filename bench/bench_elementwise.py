"""Benchmark of the elementwise kernels: fkeras (fkeras._C) vs NumPy and, if importable, PyTorch.

Validates each fkeras kernel once against NumPy, then times (warm-up, median of --repeats runs,
the implementations interleaved run by run so that they share the machine's noise)
relu / sigmoid / tanh / gelu / softmax forward and backward, bias_add, dropout on ~4M floats and
softmax crossentropy (128 x 1000) forward + backward, at 1 and 2 threads. Every implementation
writes into preallocated outputs where its API allows (NumPy out=, torch .out ops).

GB/s counts the bytes each op must move: 4 bytes per element read or written (forward: x, y;
backward: dy, y or x, dx; dropout: x, y, mask; bias_add backward: dy). NumPy is single-threaded.
The machine may be shared: numbers are medians but still noisy.

Usage: python bench/bench_elementwise.py [--n 4194304] [--repeats 9] [--isa avx512|avx2|scalar]
"""

import argparse
import math
import statistics
import time

import numpy as np
from fkeras import _C
from fkeras.backend import codes

try:
    import torch
except ImportError:  # torch is optional
    torch = None


def interleaved_medians(fns, repeats, warmup=2):
    """Median seconds of each callable, timed round-robin so that all see the same noise."""
    for fn in fns.values():
        for _ in range(warmup):
            fn()
    times = {k: [] for k in fns}
    for _ in range(repeats):
        for k, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[k].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in times.items()}


def np_sigmoid(x, out):
    np.negative(x, out=out)
    np.exp(out, out=out)
    out += 1.0
    np.reciprocal(out, out=out)


def np_gelu_tanh(x, out, tmp):
    # NumPy has no erf: the tanh approximation stands in for exact GELU.
    np.multiply(x, x, out=tmp)
    tmp *= 0.044715
    tmp += 1.0
    tmp *= x
    tmp *= math.sqrt(2.0 / math.pi)
    np.tanh(tmp, out=tmp)
    tmp += 1.0
    np.multiply(tmp, x, out=out)
    out *= 0.5


def np_softmax(x, out):
    np.subtract(x, x.max(axis=1, keepdims=True), out=out)
    np.exp(out, out=out)
    out /= out.sum(axis=1, keepdims=True)


def build_cases(n):
    """Returns [(name, bytes, {impl: callable}, check)] for one problem size."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n).astype(np.float32)
    dy = rng.standard_normal(n).astype(np.float32)
    y, dx, tmp, mask = (np.empty(n, np.float32) for _ in range(4))
    rows, cols = n // 1024, 1024
    b = rng.standard_normal(cols).astype(np.float32)
    db = np.empty(cols, np.float32)
    x2, y2, dy2, dx2 = (a.reshape(rows, cols) for a in (x, y, dy, dx))
    cases = []
    if torch is not None:
        tx, tdy, ty, tdx = (torch.from_numpy(a) for a in (x, dy, y, dx))
        tx2, ty2, tdy2, tdx2 = (a.view(rows, cols) for a in (tx, ty, tdy, tdx))
        tb, tdb = torch.from_numpy(b), torch.from_numpy(db)
        aten = torch.ops.aten

    def act(name, code, np_fwd, np_bwd, t_fwd, t_bwd):
        fwd = {"fkeras": lambda: _C.activation_forward(y, x, n, code, 0.0), "numpy": np_fwd}
        bwd = {"fkeras": lambda: _C.activation_backward(dx, dy, x, y, n, code, 0.0),
               "numpy": np_bwd}
        if torch is not None:
            fwd["torch"], bwd["torch"] = t_fwd, t_bwd
        cases.append((f"{name} fwd", 8 * n, fwd, None))
        cases.append((f"{name} bwd", 12 * n, bwd, None))

    act("relu", codes.RELU, lambda: np.maximum(x, 0.0, out=y),
        lambda: np.multiply(dy, x > 0, out=dx),
        lambda: torch.clamp_min(tx, 0.0, out=ty),
        lambda: aten.threshold_backward.grad_input(tdy, tx, 0.0, grad_input=tdx))
    act("sigmoid", codes.SIGMOID, lambda: np_sigmoid(x, y),
        lambda: np.multiply(dy, y * (1.0 - y), out=dx),
        lambda: torch.sigmoid(tx, out=ty),
        lambda: aten.sigmoid_backward.grad_input(tdy, ty, grad_input=tdx))
    act("tanh", codes.TANH, lambda: np.tanh(x, out=y),
        lambda: np.multiply(dy, 1.0 - y * y, out=dx),
        lambda: torch.tanh(tx, out=ty),
        lambda: aten.tanh_backward.grad_input(tdy, ty, grad_input=tdx))
    act("gelu", codes.GELU, lambda: np_gelu_tanh(x, y, tmp),
        None,
        lambda: aten.gelu.out(tx, out=ty),
        lambda: aten.gelu_backward.grad_input(tdy, tx, grad_input=tdx))
    cases[-1][2].pop("numpy")

    sm_f = {"fkeras": lambda: _C.softmax_forward(y2, x2, rows, cols),
            "numpy": lambda: np_softmax(x2, y2)}
    sm_b = {"fkeras": lambda: _C.softmax_backward(dx2, dy2, y2, rows, cols),
            "numpy": lambda: np.multiply(y2, dy2 - (dy2 * y2).sum(axis=1, keepdims=True),
                                         out=dx2)}
    ba_f = {"fkeras": lambda: _C.bias_add_forward(y2, x2, b, rows, cols),
            "numpy": lambda: np.add(x2, b, out=y2)}
    ba_b = {"fkeras": lambda: _C.bias_add_backward(db, dy2, rows, cols),
            "numpy": lambda: np.sum(dy2, axis=0, out=db)}
    drop = {"fkeras": lambda: _C.dropout_forward(y, mask, x, n, 0.3, 7),
            "numpy": lambda: (np.multiply(np.random.default_rng(7).random(n, np.float32) >= 0.3,
                                          np.float32(1 / 0.7), out=mask),
                              np.multiply(x, mask, out=y))}
    if torch is not None:
        sm_f["torch"] = lambda: aten._softmax.out(tx2, -1, False, out=ty2)
        sm_b["torch"] = lambda: aten._softmax_backward_data.out(tdy2, ty2, -1, torch.float32,
                                                                grad_input=tdx2)
        ba_f["torch"] = lambda: torch.add(tx2, tb, out=ty2)
        ba_b["torch"] = lambda: torch.sum(tdy2, 0, out=tdb)
        drop["torch"] = lambda: torch.nn.functional.dropout(tx, 0.3, training=True)
    cases += [("softmax fwd", 8 * n, sm_f, None), ("softmax bwd", 12 * n, sm_b, None),
              ("bias_add fwd", 8 * n, ba_f, None), ("bias_add bwd", 4 * n, ba_b, None),
              ("dropout fwd", 12 * n, drop, None)]

    # Softmax crossentropy, 128 x 1000, forward + backward.
    r, c = 128, 1000
    logits = (rng.standard_normal((r, c)) * 3).astype(np.float32)
    labels = np.zeros((r, c), np.float32)
    labels[np.arange(r), rng.integers(0, c, r)] = 1.0
    loss = np.empty(r, np.float32)
    probs, dlog = np.empty((r, c), np.float32), np.empty((r, c), np.float32)
    dloss = np.full(r, 1.0 / r, np.float32)

    def fk_xent():
        _C.softmax_crossentropy_forward(loss, probs, logits, labels, r, c)
        _C.softmax_crossentropy_backward(dlog, dloss, probs, labels, r, c)

    def np_xent():
        shifted = logits - logits.max(axis=1, keepdims=True)
        lse = np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        np.sum(labels * (lse - shifted), axis=1, out=loss)
        np.multiply(np.exp(shifted - lse) - labels, dloss[:, None], out=dlog)

    xent = {"fkeras": fk_xent, "numpy": np_xent}
    if torch is not None:
        tl = torch.from_numpy(logits)
        tlab = torch.from_numpy(labels)

        def t_xent():
            z = tl.detach().requires_grad_(True)
            torch.nn.functional.cross_entropy(z, tlab).backward()

        xent["torch"] = t_xent
    cases.append(("softmax_xent 128x1000 f+b", 3 * 4 * r * c, xent, None))
    return cases


def ratio(rate, a, b):
    return f"{rate[a] / rate[b]:.2f}x" if a in rate and b in rate else "-"


def validate():
    rng = np.random.default_rng(1)
    x = rng.standard_normal(10007).astype(np.float32)
    y = np.empty_like(x)
    for code, want in ((codes.RELU, np.maximum(x, 0)), (codes.TANH, np.tanh(x)),
                       (codes.SIGMOID, 1 / (1 + np.exp(-x.astype(np.float64))))):
        _C.activation_forward(y, x, x.size, code, 0.0)
        assert np.allclose(y, want, rtol=1e-5, atol=1e-6), code
    x2 = x[:10000].reshape(10, 1000)
    y2 = np.empty_like(x2)
    _C.softmax_forward(y2, x2, 10, 1000)
    e = np.exp(x2.astype(np.float64))
    assert np.allclose(y2, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-9)
    print("validated fkeras against numpy")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=1 << 22)
    p.add_argument("--repeats", type=int, default=9)
    p.add_argument("--isa", default=None)
    args = p.parse_args()
    if args.isa:
        _C.set_cpu_isa(args.isa)
    validate()
    print(f"isa={_C.cpu_isa()} n={args.n} repeats={args.repeats} "
          f"torch={torch.__version__ if torch else 'not installed'}")
    cases = build_cases(args.n)
    impls = [("fkeras", 1), ("fkeras", 2), ("numpy", 1)]
    if torch is not None:
        impls += [("torch", 1), ("torch", 2)]
    head = "".join(f"{f'{i} {t}t':>12}" for i, t in impls)
    print(f"{'GB/s (median)':<28}{head}{'fk/np 1t':>10}{'fk/torch 1t':>12}{'fk/torch 2t':>12}")
    for name, nbytes, fns, _ in cases:
        rate = {}
        for threads in (1, 2):
            _C.set_num_threads(threads)
            if torch is not None:
                torch.set_num_threads(threads)
            run = {k: f for k, f in fns.items() if (k, threads) in impls}
            for impl, sec in interleaved_medians(run, args.repeats).items():
                rate[(impl, threads)] = nbytes / sec / 1e9
        cells = "".join(f"{rate[k]:12.2f}" if k in rate else f"{'-':>12}" for k in impls)
        print(f"{name:<28}{cells}{ratio(rate, ('fkeras', 1), ('numpy', 1)):>10}"
              f"{ratio(rate, ('fkeras', 1), ('torch', 1)):>12}"
              f"{ratio(rate, ('fkeras', 2), ('torch', 2)):>12}")


if __name__ == "__main__":
    main()
