"""Inference (issue 17 item 4): `predict` throughput and batch-1 latency of the fit workloads,
fkeras against PyTorch eager (`torch.no_grad`) and onnxruntime running fkeras's own ONNX export,
in one process each, taking turns.

    python bench/bench_inference.py [--threads 2] [--repeats 7] [--only mlp,cnn,cnnbn,lstm,tiny]

- predict: samples/s of `model.predict(x, batch_size=B)` over the workload's prediction data
  (B = the workload's batch), torch: the same batches through the module under no_grad,
  onnxruntime: `session.run` per batch;
- latency: median microseconds of one call on a single sample: `model(x1)` (fkeras; a line
  says so when it did not take the eager fast path),
  `module(x1)` (torch), `session.run` (onnxruntime).
Each figure is the median of --repeats; frameworks missing here are skipped. The models have
random weights (bench_fit.py's architectures); outputs are checked to agree first.
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def _median_time(fn, repeats, inner=1):
    fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(inner):
            fn()
        times.append((time.perf_counter() - t) / inner)
    return statistics.median(times)


def run_fkeras(name, repeats, threads):
    import bench_fit
    import fkeras

    fkeras.config.set_num_threads(threads)
    batch = bench_fit.WORKLOADS[name][0]
    x, _ = bench_fit.make_data(name)
    model = bench_fit.keras_like_model(fkeras, name)
    predict = _median_time(lambda: model.predict(x, batch_size=batch, verbose=0), repeats)
    one = x[:1]
    latency = _median_time(lambda: model(one), repeats, inner=50)
    out = {"predict": len(x) / predict, "latency_us": latency * 1e6}
    try:  # whether `model(x)` took the eager fast path (models/eager_fast_path.py)
        from fkeras.models import eager_fast_path

        out["fast_path"] = eager_fast_path.state_of(model).taken > 0
    except ImportError:
        pass
    try:
        import onnxruntime as ort

        path = f"/tmp/fk_bench_{name}_{os.getpid()}.onnx"
        model.export(path, format="onnx", verbose=False)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        session = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
        feed = session.get_inputs()[0].name
        batches = [x[i:i + batch] for i in range(0, len(x), batch)]
        np.testing.assert_allclose(session.run(None, {feed: batches[0]})[0],
                                   model.predict(batches[0], verbose=0), rtol=1e-3, atol=1e-4)
        run_all = lambda: [session.run(None, {feed: b}) for b in batches]  # noqa: E731
        out["ort_predict"] = len(x) / _median_time(run_all, repeats)
        out["ort_latency_us"] = _median_time(lambda: session.run(None, {feed: one}), repeats,
                                             inner=50) * 1e6
        os.remove(path)
    except ImportError:
        pass
    return out


def run_torch(name, repeats, threads):
    import bench_fit
    import torch

    torch.set_num_threads(threads)
    batch = bench_fit.WORKLOADS[name][0]
    x, _ = bench_fit.make_data(name)
    if x.ndim == 4:
        x = np.ascontiguousarray(x.transpose(0, 3, 1, 2))
    xs = torch.from_numpy(x)
    module = bench_fit.torch_model(torch, name).eval()

    def predict():
        with torch.no_grad():
            return [module(xs[i:i + batch]) for i in range(0, len(xs), batch)]

    def single():
        with torch.no_grad():
            return module(xs[:1])

    return {"predict": len(x) / _median_time(predict, repeats),
            "latency_us": _median_time(single, repeats, inner=50) * 1e6}


def worker(framework, name, repeats, threads):
    fn = run_fkeras if framework == "fkeras" else run_torch
    print(repr(fn(name, repeats, threads)))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--only", default="mlp,cnn,cnnbn,lstm,tiny")
    p.add_argument("--worker", nargs=2)
    args = p.parse_args()
    if args.worker:
        worker(args.worker[0], args.worker[1], args.repeats, args.threads)
        return
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads),
               OPENBLAS_NUM_THREADS=str(args.threads))
    print(f"{args.threads} threads, median of {args.repeats}; x = fkeras / other "
          "(throughput), other / fkeras (latency)")
    print(f"{'model':6s} {'fkeras pred/s':>14s} {'torch':>10s} {'x':>5s} {'onnxrt':>10s} "
          f"{'x':>5s} | {'fkeras us':>9s} {'torch':>8s} {'x':>5s} {'onnxrt':>8s} {'x':>5s}")
    for name in args.only.split(","):
        results = {}
        for framework in ("fkeras", "torch"):
            cmd = [sys.executable, __file__, "--worker", framework, name, "--threads",
                   str(args.threads), "--repeats", str(args.repeats)]
            done = subprocess.run(cmd, capture_output=True, text=True, env=env)
            if done.returncode != 0:
                print(f"{name} {framework}: failed: {done.stderr.strip().splitlines()[-1:]}")
                continue
            results[framework] = eval(done.stdout.strip().splitlines()[-1])  # our own repr
        f, t = results.get("fkeras", {}), results.get("torch", {})
        if not f:
            continue

        def ratio(a, b):
            return f"{a / b:5.2f}" if a and b else "    -"

        print(f"{name:6s} {f['predict']:14.0f} {t.get('predict', 0):10.0f} "
              f"{ratio(f['predict'], t.get('predict'))} {f.get('ort_predict', 0):10.0f} "
              f"{ratio(f['predict'], f.get('ort_predict'))} | {f['latency_us']:9.1f} "
              f"{t.get('latency_us', 0):8.1f} {ratio(t.get('latency_us'), f['latency_us'])} "
              f"{f.get('ort_latency_us', 0):8.1f} "
              f"{ratio(f.get('ort_latency_us'), f['latency_us'])}")
        if f.get("fast_path") is False:
            print(f"{name}: model(x) took the full per-layer path (not the eager fast path)")


if __name__ == "__main__":
    main()
