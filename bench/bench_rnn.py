"""Benchmark of the recurrent kernels against torch.nn.LSTM / GRU / RNN (not a test).

    python bench/bench_rnn.py [--repeats 9] [--threads 1 2] [--shape 64 50 32 128]
                              [--layers lstm gru simple_rnn] [--wait-quiet 120]

For each layer (LSTM, GRU with reset_after, SimpleRNN) at batch N, T steps, F -> U units:
validates fkeras's hs against torch with the same weights, then times the forward alone
(torch under no_grad, so it saves nothing, while fkeras's forward always writes the saved state
the backward needs) and forward + backward (torch: autograd with a random cotangent on hs;
fkeras: *_sequence_forward then *_sequence_backward computing dx, dh0, dkernel,
drecurrent_kernel and dbias), at each thread count. Prints medians, GFLOP/s (matrix products
only: forward 2 N T (F + U) G U, backward twice that) and fkeras / torch speed ratios (> 1:
fkeras faster). The machine may be shared: fkeras and torch are timed alternately within each
repeat so that both see the same background load, and the numbers are medians.
"""

import argparse
import os
import statistics
import time

# numpy's BLAS threads would spin on the cores being measured; neither side uses them.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np
from fkeras import _C
from fkeras.backend import codes

try:
    import torch
except ImportError:  # the fkeras columns still run
    torch = None

GATES = {"lstm": 4, "gru": 3, "simple_rnn": 1}


def median_times(fns, repeats, warmup=2):
    """Median seconds of each callable (None: skipped), timed in turn within every repeat, so
    that on a shared machine they all see the same background load. A pause before each call:
    torch's OpenMP workers keep spinning for a while after its call and would otherwise take a
    core from the next (fkeras) call; after the pause both start with sleeping workers."""
    fns = [fn for fn in fns if fn is not None]
    for fn in fns:
        for _ in range(warmup):
            fn()
    times = [[] for _ in fns]
    for _ in range(repeats):
        for fn, ts in zip(fns, times):
            time.sleep(0.05)
            t0 = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t0)
    return [statistics.median(ts) for ts in times]


def wait_for_quiet_machine(limit_s, busy_max=0.05):
    """Waits (at most limit_s) until the machine's CPUs are <= busy_max busy over 0.3 s
    (Linux /proc/stat); returns whether they were. For benchmarks on a shared machine."""
    def cpu_ticks():
        with open("/proc/stat") as f:
            ticks = [int(v) for v in f.readline().split()[1:]]
        return sum(ticks), ticks[3] + ticks[4]  # all, idle + iowait

    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        total0, idle0 = cpu_ticks()
        time.sleep(0.3)
        total1, idle1 = cpu_ticks()
        if 1.0 - (idle1 - idle0) / max(1, total1 - total0) <= busy_max:
            return True
    return False


class FkerasLayer:
    """One layer's buffers and its forward / backward calls on fkeras._C."""

    def __init__(self, fam, N, T, F, U, rng):
        G = GATES[fam]
        self.fam, self.dims = fam, (N, T, F, U)
        f32 = np.float32
        self.x = rng.standard_normal((N, T, F)).astype(f32)
        self.h0 = np.zeros((N, U), f32)
        self.c0 = np.zeros((N, U), f32)
        self.kernel = (rng.standard_normal((F, G * U)) / np.sqrt(F)).astype(f32)
        self.rkernel = (rng.standard_normal((U, G * U)) / np.sqrt(U)).astype(f32)
        self.bias = (0.1 * rng.standard_normal((2, G * U) if fam == "gru" else G * U)).astype(f32)
        self.dhs = rng.standard_normal((N, T, U)).astype(f32)
        e = np.empty
        self.hs, self.h_final, self.c_final = e((N, T, U), f32), e((N, U), f32), e((N, U), f32)
        self.gates, self.cs = e((N, T, G * U), f32), e((N, T, U), f32)
        self.dx, self.dh0, self.dc0 = e((N, T, F), f32), e((N, U), f32), e((N, U), f32)
        self.dkernel, self.drkernel = e(self.kernel.shape, f32), e(self.rkernel.shape, f32)
        self.dbias = e(self.bias.shape, f32)

    def forward(self):
        N, T, F, U = self.dims
        tanh, sigmoid = codes.TANH, codes.SIGMOID
        if self.fam == "lstm":
            _C.lstm_sequence_forward(self.hs, self.h_final, self.c_final, self.gates, self.cs,
                                     self.x, self.h0, self.c0, self.kernel, self.rkernel,
                                     self.bias, N, T, F, U, False, tanh, sigmoid)
        elif self.fam == "gru":
            _C.gru_sequence_forward(self.hs, self.h_final, self.gates, self.cs, self.x, self.h0,
                                    self.kernel, self.rkernel, self.bias, N, T, F, U, False, True,
                                    tanh, sigmoid)
        else:
            _C.simple_rnn_sequence_forward(self.hs, self.h_final, self.x, self.h0, self.kernel,
                                           self.rkernel, self.bias, N, T, F, U, False, tanh)

    def backward(self):
        N, T, F, U = self.dims
        tanh, sigmoid = codes.TANH, codes.SIGMOID
        if self.fam == "lstm":
            _C.lstm_sequence_backward(self.dx, self.dh0, self.dc0, self.dkernel, self.drkernel,
                                      self.dbias, self.dhs, None, None, self.gates, self.cs,
                                      self.hs, self.x, self.h0, self.c0, self.kernel,
                                      self.rkernel, N, T, F, U, False, tanh, sigmoid)
        elif self.fam == "gru":
            _C.gru_sequence_backward(self.dx, self.dh0, self.dkernel, self.drkernel, self.dbias,
                                     self.dhs, None, self.gates, self.cs, self.hs, self.x,
                                     self.h0, self.kernel, self.rkernel, N, T, F, U, False, True,
                                     tanh, sigmoid)
        else:
            _C.simple_rnn_sequence_backward(self.dx, self.dh0, self.dkernel, self.drkernel,
                                            self.dbias, self.dhs, None, self.hs, self.x, self.h0,
                                            self.kernel, self.rkernel, N, T, F, U, False, tanh)

    def forward_backward(self):
        self.forward()
        self.backward()


def torch_layer(layer):
    """The torch module with the same weights (Keras gate blocks reordered for torch)."""
    _N, _T, F, U = layer.dims
    G = GATES[layer.fam]
    module = {"lstm": torch.nn.LSTM, "gru": torch.nn.GRU, "simple_rnn": torch.nn.RNN}[layer.fam]
    m = module(F, U, batch_first=True)
    order = [1, 0, 2] if layer.fam == "gru" else list(range(G))  # GRU z r h -> torch r z n

    def to_torch(w):  # (K, G U) Keras -> (G U, K) torch
        blocks = np.split(w, G, axis=-1)
        return torch.from_numpy(np.ascontiguousarray(np.concatenate([blocks[i] for i in order],
                                                                    axis=-1).T))

    bias = layer.bias.reshape(-1, G * U)
    with torch.no_grad():
        m.weight_ih_l0.copy_(to_torch(layer.kernel))
        m.weight_hh_l0.copy_(to_torch(layer.rkernel))
        m.bias_ih_l0.copy_(to_torch(bias[0][None])[:, 0])
        m.bias_hh_l0.copy_(to_torch(bias[1][None])[:, 0] if layer.fam == "gru" else 0.0)
    return m


def torch_runs(layer, m):
    x = torch.from_numpy(layer.x)
    x_grad = x.clone().requires_grad_(True)
    dhs = torch.from_numpy(layer.dhs)

    def forward():
        with torch.no_grad():
            return m(x)[0]

    def forward_backward():
        m.zero_grad(set_to_none=True)
        x_grad.grad = None
        m(x_grad)[0].backward(dhs)

    return forward, forward_backward


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--shape", type=int, nargs=4, default=[64, 50, 32, 128],
                        metavar=("N", "T", "F", "U"))
    parser.add_argument("--layers", nargs="+", default=["lstm", "gru", "simple_rnn"])
    parser.add_argument("--wait-quiet", type=float, default=0.0, metavar="SECONDS",
                        help="before each timing, wait up to SECONDS for an idle machine")
    args = parser.parse_args()
    N, T, F, U = args.shape
    rng = np.random.default_rng(0)
    print(f"fkeras {_C.__version__} isa={_C.cpu_isa()}; torch "
          f"{torch.__version__ if torch else 'not installed'}; N={N} T={T} F={F} U={U}; "
          f"median of {args.repeats}")
    header = (f"{'layer':<11}{'pass':<9}{'thr':>4}{'fkeras ms':>11}{'GFLOP/s':>9}"
              f"{'torch ms':>10}{'GFLOP/s':>9}{'ratio':>7}")
    print(header)
    for fam in args.layers:
        layer = FkerasLayer(fam, N, T, F, U, rng)
        flops_fwd = 2.0 * N * T * (F + U) * GATES[fam] * U
        m = torch_layer(layer) if torch else None
        if m is not None:
            layer.forward()
            want = torch_runs(layer, m)[0]().numpy()
            err = float(np.abs(layer.hs - want).max())
            assert err < 1e-4, f"{fam}: fkeras and torch disagree on hs by {err}"
        for threads in args.threads:
            _C.set_num_threads(threads)
            if torch:
                torch.set_num_threads(threads)
            runs = [("fwd", layer.forward, flops_fwd),
                    ("fwd+bwd", layer.forward_backward, 3 * flops_fwd)]
            theirs = torch_runs(layer, m) if m is not None else (None, None)
            for (name, fn, flops), their_fn in zip(runs, theirs):
                if args.wait_quiet and os.path.exists("/proc/stat"):
                    wait_for_quiet_machine(args.wait_quiet)
                ours, *t = median_times([fn, their_fn], args.repeats)
                line = (f"{fam:<11}{name:<9}{threads:>4}{ours * 1e3:>11.2f}"
                        f"{flops / ours / 1e9:>9.1f}")
                if t:
                    line += f"{t[0] * 1e3:>10.2f}{flops / t[0] / 1e9:>9.1f}{t[0] / ours:>7.2f}"
                print(line, flush=True)


if __name__ == "__main__":
    main()
