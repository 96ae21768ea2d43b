"""Fused attention, forward and forward + backward: fkeras's kernel (attention_forward /
attention_backward) vs torch.nn.functional.scaled_dot_product_attention on the CPU.

    python bench/bench_attention.py [--threads 2] [--repeats 7] [--seq 128,512,2048]
                                    [--dims 32,64] [--batch 4] [--heads 4] [--causal]

First our outputs and gradients are checked against torch's (validate, then benchmark). Then
each side runs in its own subprocess (torch's OpenMP threads spin after a parallel region and
would steal the cores from our pool in a shared process, and the reverse), with the same
thread count and random float32 data, the two taking turns for --rounds rounds so that a
changing load on a shared machine hits both alike; each figure is the median over rounds x
--repeats. Layouts: ours (B, T, H, D), Keras's;
torch's (B, H, T, D), its SDPA's native layout; neither pays a transpose in the timing.
GFLOP/s use the nominal counts of FlashAttention-2's paper: 4 B H T^2 D for the forward,
2.5 times that for the backward (the recomputation of q k^T included), so fwd + bwd is
14 B H T^2 D (halved with --causal).
"""

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np


def median_time(fn, repeats):
    fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def configs(args):
    return [(int(t), int(d)) for t in args.seq.split(",") for d in args.dims.split(",")]


def make_inputs(B, T, H, D):
    rng = np.random.default_rng(T * 1000 + D)
    return [rng.standard_normal((B, T, H, D)).astype(np.float32) for _ in range(4)]


def ours_functions(B, T, H, D, causal):
    from fkeras import _C

    q, k, v, g = make_inputs(B, T, H, D)
    out, lse = np.empty_like(q), np.empty((B, H, T), np.float32)
    dq, dk, dv = np.empty_like(q), np.empty_like(k), np.empty_like(v)
    sizes = (B, T, T, H, H, D, D, 1, 1, causal, 1.0 / np.sqrt(D), 0.0, 0)

    def fwd():
        _C.attention_forward(out, lse, q, k, v, None, *sizes)

    def fwd_bwd():
        fwd()
        _C.attention_backward(dq, dk, dv, g, q, k, v, out, lse, None, *sizes)

    return fwd, fwd_bwd, (out, dq, dk, dv)


def torch_functions(B, T, H, D, causal):
    import torch
    import torch.nn.functional as F

    tq, tk, tv, tg = (torch.from_numpy(np.ascontiguousarray(a.transpose(0, 2, 1, 3)))
                      for a in make_inputs(B, T, H, D))
    for t in (tq, tk, tv):
        t.requires_grad_()
    res = {}

    def fwd():
        with torch.no_grad():
            F.scaled_dot_product_attention(tq, tk, tv, is_causal=causal)

    def fwd_bwd():
        tq.grad = tk.grad = tv.grad = None
        res["out"] = F.scaled_dot_product_attention(tq, tk, tv, is_causal=causal)
        res["out"].backward(tg)

    def results():
        return tuple(x.detach().numpy().transpose(0, 2, 1, 3)
                     for x in (res["out"], tq.grad, tk.grad, tv.grad))

    return fwd, fwd_bwd, results


def validate(args):
    import torch

    torch.set_num_threads(args.threads)
    for T, D in configs(args):
        _, ours_fb, mine = ours_functions(args.batch, T, args.heads, D, args.causal)
        _, torch_fb, theirs = torch_functions(args.batch, T, args.heads, D, args.causal)
        ours_fb()
        torch_fb()
        for name, a, b in zip(("out", "dq", "dk", "dv"), mine, theirs()):
            err = np.abs(a - b).max() / max(1.0, np.abs(b).max())
            assert err < 1e-3, f"T={T} D={D}: {name} differs from torch by {err:.2e}"


def worker(args):
    if args.worker == "torch":
        import torch

        torch.set_num_threads(args.threads)
        make = torch_functions
    else:
        from fkeras import _C

        _C.set_num_threads(args.threads)
        make = ours_functions
    result = {}
    for T, D in configs(args):
        fwd, fwd_bwd = make(args.batch, T, args.heads, D, args.causal)[:2]
        result[f"{T},{D}"] = [[median_time(fwd, 1) for _ in range(args.repeats)],
                              [median_time(fwd_bwd, 1) for _ in range(args.repeats)]]
    print("RESULT " + json.dumps(result))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--seq", default="128,512,2048")
    p.add_argument("--dims", default="32,64")
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--causal", action="store_true")
    p.add_argument("--worker", choices=("ours", "torch"))
    args = p.parse_args()
    if args.worker:
        return worker(args)
    validate(args)
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads),
               FKERAS_NUM_THREADS=str(args.threads))
    times = {"ours": {}, "torch": {}}
    for _ in range(args.rounds):
        for side in ("ours", "torch"):
            cmd = [sys.executable, __file__, "--worker", side] + [
                a for a in sys.argv[1:] if a != "--worker"]
            out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=3600,
                                 check=True).stdout
            res = json.loads([ln for ln in out.splitlines() if ln.startswith("RESULT ")][0][7:])
            for key, (f, fb) in res.items():
                acc = times[side].setdefault(key, ([], []))
                acc[0].extend(f)
                acc[1].extend(fb)
    from fkeras import _C

    B, H = args.batch, args.heads
    print(f"B={B} H={H} causal={args.causal}, {args.threads} threads, ISA {_C.cpu_isa()}; "
          f"ms = median of {args.rounds} rounds x {args.repeats}; x = torch time / ours")
    print(f"{'T':>5s} {'D':>3s} | {'ours fwd':>9s} {'torch fwd':>9s} {'x':>5s} | "
          f"{'ours f+b':>9s} {'torch f+b':>9s} {'x':>5s} | {'ours GF/s':>9s} {'torch GF/s':>10s}")
    for T, D in configs(args):
        key = f"{T},{D}"
        f_o, b_o = (float(np.median(x)) for x in times["ours"][key])
        f_t, b_t = (float(np.median(x)) for x in times["torch"][key])
        flops = 14 * B * H * T * T * D * (0.5 if args.causal else 1.0)
        print(f"{T:5d} {D:3d} | {f_o * 1e3:9.2f} {f_t * 1e3:9.2f} {f_t / f_o:5.2f} | "
              f"{b_o * 1e3:9.2f} {b_t * 1e3:9.2f} {b_t / b_o:5.2f} | "
              f"{flops / b_o / 1e9:9.1f} {flops / b_t / 1e9:10.1f}")


if __name__ == "__main__":
    main()
