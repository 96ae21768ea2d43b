"""Fused attention, forward and forward + backward: fkeras's kernel (attention_forward /
attention_backward) vs torch.nn.functional.scaled_dot_product_attention on the CPU.

    python bench/bench_attention.py [--threads 2] [--repeats 7] [--seq 128,512,2048]
                                    [--dims 32,64] [--batch 4] [--heads 4] [--causal]

Both run in this process with the same thread count, on the same random float32 data, in
turns (ours, torch, ours, torch, ...) so that a changing load on a shared machine hits both
alike; each figure is the median of --repeats. Before timing, our outputs and gradients are
checked against torch's (validate, then benchmark). Layouts: ours (B, T, H, D), Keras's;
torch's (B, H, T, D), its SDPA's native layout; neither pays a transpose in the timing.
GFLOP/s use the nominal counts of FlashAttention-2's paper: 4 B H T^2 D for the forward,
2.5 times that for the backward (the recomputation of q k^T included), so fwd + bwd is
14 B H T^2 D (halved with --causal).
"""

import argparse
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


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--seq", default="128,512,2048")
    p.add_argument("--dims", default="32,64")
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--causal", action="store_true")
    args = p.parse_args()

    import torch
    import torch.nn.functional as F

    from fkeras import _C

    torch.set_num_threads(args.threads)
    _C.set_num_threads(args.threads)
    B, H, causal = args.batch, args.heads, args.causal
    print(f"B={B} H={H} causal={causal}, {args.threads} threads, ISA {_C.cpu_isa()}, torch "
          f"{torch.__version__}; ms = median of {args.repeats}; x = torch time / ours")
    print(f"{'T':>5s} {'D':>3s} | {'ours fwd':>9s} {'torch fwd':>9s} {'x':>5s} | "
          f"{'ours f+b':>9s} {'torch f+b':>9s} {'x':>5s} | {'ours GF/s':>9s} {'torch GF/s':>10s}")
    rng = np.random.default_rng(0)
    for T in (int(t) for t in args.seq.split(",")):
        for D in (int(d) for d in args.dims.split(",")):
            q, k, v, g = (rng.standard_normal((B, T, H, D)).astype(np.float32) for _ in range(4))
            out, lse = np.empty_like(q), np.empty((B, H, T), np.float32)
            dq, dk, dv = np.empty_like(q), np.empty_like(k), np.empty_like(v)
            scale = 1.0 / np.sqrt(D)
            sizes = (B, T, T, H, H, D, D, 1, 1, causal, scale, 0.0, 0)

            def ours_fwd():
                _C.attention_forward(out, lse, q, k, v, None, *sizes)

            def ours_fb():
                _C.attention_forward(out, lse, q, k, v, None, *sizes)
                _C.attention_backward(dq, dk, dv, g, q, k, v, out, lse, None, *sizes)

            tq, tk, tv = (torch.from_numpy(np.ascontiguousarray(a.transpose(0, 2, 1, 3)))
                          .requires_grad_() for a in (q, k, v))
            tg = torch.from_numpy(np.ascontiguousarray(g.transpose(0, 2, 1, 3)))

            def torch_fwd():
                with torch.no_grad():
                    F.scaled_dot_product_attention(tq, tk, tv, is_causal=causal)

            def torch_fb():
                tq.grad = tk.grad = tv.grad = None
                F.scaled_dot_product_attention(tq, tk, tv, is_causal=causal).backward(tg)

            ours_fb()
            torch_fb()
            want = F.scaled_dot_product_attention(tq, tk, tv, is_causal=causal)
            for name, mine, theirs in (("out", out, want), ("dq", dq, tq.grad),
                                       ("dk", dk, tk.grad), ("dv", dv, tv.grad)):
                ref = theirs.detach().numpy().transpose(0, 2, 1, 3)
                err = np.abs(mine - ref).max() / max(1.0, np.abs(ref).max())
                assert err < 1e-3, f"T={T} D={D}: {name} differs from torch by {err:.2e}"
            fwd = {"ours": [], "torch": []}
            fb = {"ours": [], "torch": []}
            for _ in range(args.repeats):
                fwd["ours"].append(median_time(ours_fwd, 1))
                fwd["torch"].append(median_time(torch_fwd, 1))
                fb["ours"].append(median_time(ours_fb, 1))
                fb["torch"].append(median_time(torch_fb, 1))
            f_o, f_t, b_o, b_t = (float(np.median(x)) for x in (fwd["ours"], fwd["torch"],
                                                               fb["ours"], fb["torch"]))
            flops = 14 * B * H * T * T * D * (0.5 if causal else 1.0)
            print(f"{T:5d} {D:3d} | {f_o * 1e3:9.2f} {f_t * 1e3:9.2f} {f_t / f_o:5.2f} | "
                  f"{b_o * 1e3:9.2f} {b_t * 1e3:9.2f} {b_t / b_o:5.2f} | "
                  f"{flops / b_o / 1e9:9.1f} {flops / b_t / 1e9:10.1f}")


if __name__ == "__main__":
    main()
