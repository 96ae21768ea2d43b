"""1-thread process CPU time of batch-1 `model(x)` (us) and `predict` (samples/s), for A/B
checks on a loaded machine (bench/README.md, 2026-11-26 session 7):

    python bench/infer_cpu_time.py tiny,mlp,cnn,cnnbn   # prints {name: (latency_us, pred/s)}
"""
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_fit  # noqa: E402
import fkeras  # noqa: E402

fkeras.config.set_num_threads(1)
out = {}
for name in sys.argv[1].split(","):
    x, _ = bench_fit.make_data(name)
    m = bench_fit.keras_like_model(fkeras, name)
    one = x[:1]
    for _ in range(3): m(one)
    ts = []
    n = 2000 if name == "tiny" else 200
    for _ in range(7):
        t = time.process_time()
        for _ in range(n): m(one)
        ts.append((time.process_time() - t) / n * 1e6)
    batch = bench_fit.WORKLOADS[name][0]
    xp = x[:batch * 16]
    m.predict(xp, batch_size=batch, verbose=0)
    ps = []
    for _ in range(5):
        t = time.process_time()
        m.predict(xp, batch_size=batch, verbose=0)
        ps.append(len(xp) / (time.process_time() - t))
    out[name] = (statistics.median(ts), statistics.median(ps))
print(repr(out))
