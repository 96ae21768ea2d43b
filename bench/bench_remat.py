"""Memory and time of a training step with and without rematerialization (fkeras.remat).

    python bench/bench_remat.py [--depth 20] [--width 1024] [--batch 256] [--block 5]
                                [--activation relu] [--repeats 3]

Model: `depth` x Dense(width, activation) on a (batch, width) input, then Dense(1), mean
squared output as the loss. Three variants:
  plain    no remat
  layer    every Dense created in RematScope("full") (one checkpoint per layer)
  block    blocks of `block` Dense layers, each block created in RematScope("full") (one
           checkpoint per block; the layers inside run plainly in the recomputation)
Reported per variant: the bytes the tape holds after the forward (tracemalloc's current
NumPy/Python memory minus the model's), the peak over forward + backward (tracemalloc), and
the fastest wall time of a full step (forward, backward; no tracemalloc) over --repeats
(the minimum: the figure least disturbed by a shared machine).
"""

import argparse
import os
import sys
import time
import tracemalloc

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))

import fkeras  # noqa: E402
from fkeras import layers, ops  # noqa: E402


class Block(layers.Layer):
    def __init__(self, n, width, activation, **kwargs):
        super().__init__(**kwargs)
        self.denses = [layers.Dense(width, activation=activation) for _ in range(n)]

    def call(self, x):
        for d in self.denses:
            x = d(x)
        return x


def make_model(variant, args):
    fkeras.utils.set_random_seed(0)
    body = []
    if variant == "block":
        for _ in range(args.depth // args.block):
            with fkeras.RematScope(mode="full"):
                body.append(Block(args.block, args.width, args.activation))
    else:
        with fkeras.RematScope(mode="full" if variant == "layer" else None):
            body = [layers.Dense(args.width, activation=args.activation)
                    for _ in range(args.depth)]
    model = fkeras.Sequential([fkeras.Input((args.width,))] + body + [layers.Dense(1)])
    return model


def step(model, x):
    with fkeras.GradientTape() as tape:
        loss = ops.mean(model(x) ** 2)
    return tape, loss


def measure(variant, args, x):
    model = make_model(variant, args)
    model(x[:2])
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    tape, loss = step(model, x)
    held = tracemalloc.get_traced_memory()[0] - base
    grads = tape.gradient(loss, model.trainable_weights)
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    del tape, grads
    times = []
    for _ in range(args.repeats + 1):
        t0 = time.perf_counter()
        tape, loss = step(model, x)
        tape.gradient(loss, model.trainable_weights)
        times.append(time.perf_counter() - t0)
    return held, peak, min(times[1:])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--depth", type=int, default=20)
    p.add_argument("--width", type=int, default=1024)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--block", type=int, default=5)
    p.add_argument("--activation", default="relu")
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args()
    x = np.random.default_rng(0).standard_normal((args.batch, args.width)).astype("float32")
    print(f"{args.depth} x Dense({args.width}, {args.activation}), batch {args.batch}, "
          f"blocks of {args.block}")
    print(f"{'variant':8} {'tape after fwd MB':>18} {'peak fwd+bwd MB':>16} {'step ms':>8}")
    for variant in ("plain", "layer", "block"):
        held, peak, t = measure(variant, args, x)
        print(f"{variant:8} {held / 2**20:18.1f} {peak / 2**20:16.1f} {t * 1e3:8.1f}")


if __name__ == "__main__":
    main()
