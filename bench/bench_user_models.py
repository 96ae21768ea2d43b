"""Fit step time of model shapes users write (keras-io style), fkeras vs PyTorch eager.

    python bench/bench_user_models.py [--threads 2] [--repeats 5] [--only autoenc,sepconv]
                                      [--cpu-time]

Not a test. Each workload is built once in fkeras (Functional, Adam, random data) and once as
the same shapes in torch (nn.Module, Adam), then one epoch of each is timed in turn, --repeats
times (the two frameworks alternate so that both see the same background load); prints the
median ms per train step and torch / fkeras (> 1: fkeras faster). --cpu-time times process CPU
time at 1 thread, which a busy shared machine disturbs much less than wall time (torch and
fkeras both pinned to one thread).

Workloads:
  autoenc      28x28x1 conv32-pool-conv32-pool (relu, 'same') then two stride-2
               Conv2DTranspose(32) and a Conv2D(1) sigmoid output (keras-io denoising
               autoencoder), binary crossentropy, batch 64
  sepconv      32x32x3 stride-2 conv32, two SeparableConv2D(64/128) + BN + ReLU + 3x3/2 pool,
               global average pool, dropout, Dense(10), batch 64
  resnet       32x32x3 conv32 + BN, three residual blocks (32, 64/2, 128/2) of two 3x3 convs
               with BN, global average pool, Dense(10), batch 64
  conv1d_ts    500 steps x 1: three Conv1D(64, 3) + BN + ReLU, global average pool, Dense(2)
               (keras-io timeseries classification), batch 32
  conv1d_text  Embedding(20000, 128) over 200 tokens, Conv1D(128, 7) + pool(3) + Conv1D(128, 7),
               global max pool, Dense(128) relu, dropout, Dense(1) sigmoid, batch 32
  gru          GRU(128) over 50 steps of 32 features, Dense(1), mse, batch 64
  bilstm       Embedding(20000, 128), two Bidirectional(LSTM(64)) over 200 tokens, Dense(1)
               sigmoid, batch 32
  bnmlp        100 -> 3 x (Dense(256) + BN + ReLU + dropout) -> Dense(10), batch 128
"""

import argparse
import os
import statistics
import time

import numpy as np

WORKLOADS = ("autoenc", "sepconv", "resnet", "conv1d_ts", "conv1d_text", "gru", "bilstm",
             "bnmlp")
# name: (batch, steps per timed epoch)
SIZES = {"autoenc": (64, 8), "sepconv": (64, 8), "resnet": (64, 4), "conv1d_ts": (32, 10),
         "conv1d_text": (32, 10), "gru": (64, 6), "bilstm": (32, 3), "bnmlp": (128, 40)}


def make_data(name, n, rng):
    if name in ("autoenc",):
        x = rng.random((n, 28, 28, 1)).astype("float32")
        return x, x
    if name in ("sepconv", "resnet"):
        return rng.random((n, 32, 32, 3)).astype("float32"), rng.integers(0, 10, n)
    if name == "conv1d_ts":
        return rng.standard_normal((n, 500, 1)).astype("float32"), rng.integers(0, 2, n)
    if name in ("conv1d_text", "bilstm"):
        x = rng.integers(0, 20000, (n, 200)).astype("int32")
        return x, (rng.random((n, 1)) > 0.5).astype("float32")
    if name == "gru":
        return (rng.standard_normal((n, 50, 32)).astype("float32"),
                rng.standard_normal((n, 1)).astype("float32"))
    return rng.standard_normal((n, 100)).astype("float32"), rng.integers(0, 10, n)


# ---- fkeras ----

def fkeras_model(K, name):
    L = K.layers
    loss = "sparse_categorical_crossentropy"
    if name == "autoenc":
        inp = K.Input((28, 28, 1))
        h = inp
        for _ in range(2):
            h = L.Conv2D(32, 3, activation="relu", padding="same")(h)
            h = L.MaxPooling2D(2, padding="same")(h)
        for _ in range(2):
            h = L.Conv2DTranspose(32, 3, strides=2, activation="relu", padding="same")(h)
        out = L.Conv2D(1, 3, activation="sigmoid", padding="same")(h)
        loss = "binary_crossentropy"
    elif name == "sepconv":
        inp = K.Input((32, 32, 3))
        h = L.Conv2D(32, 3, strides=2, padding="same", activation="relu")(inp)
        for f in (64, 128):
            h = L.Activation("relu")(L.BatchNormalization()(L.SeparableConv2D(f, 3, padding="same")(h)))
            h = L.MaxPooling2D(3, strides=2, padding="same")(h)
        out = L.Dense(10, activation="softmax")(L.Dropout(0.25)(L.GlobalAveragePooling2D()(h)))
    elif name == "resnet":
        inp = K.Input((32, 32, 3))
        h = L.Activation("relu")(L.BatchNormalization()(
            L.Conv2D(32, 3, padding="same", use_bias=False)(inp)))
        for f, st in ((32, 1), (64, 2), (128, 2)):
            sc = h if st == 1 else L.Conv2D(f, 1, strides=st, use_bias=False)(h)
            r = L.Conv2D(f, 3, strides=st, padding="same", use_bias=False)(h)
            r = L.Activation("relu")(L.BatchNormalization()(r))
            r = L.BatchNormalization()(L.Conv2D(f, 3, padding="same", use_bias=False)(r))
            h = L.Activation("relu")(L.Add()([sc, r]))
        out = L.Dense(10, activation="softmax")(L.GlobalAveragePooling2D()(h))
    elif name == "conv1d_ts":
        inp = K.Input((500, 1))
        h = inp
        for _ in range(3):
            h = L.ReLU()(L.BatchNormalization()(L.Conv1D(64, 3, padding="same")(h)))
        out = L.Dense(2, activation="softmax")(L.GlobalAveragePooling1D()(h))
    elif name == "conv1d_text":
        inp = K.Input((200,), dtype="int32")
        h = L.Embedding(20000, 128)(inp)
        h = L.MaxPooling1D(3)(L.Conv1D(128, 7, activation="relu")(h))
        h = L.GlobalMaxPooling1D()(L.Conv1D(128, 7, activation="relu")(h))
        h = L.Dropout(0.5)(L.Dense(128, activation="relu")(h))
        out = L.Dense(1, activation="sigmoid")(h)
        loss = "binary_crossentropy"
    elif name == "gru":
        inp = K.Input((50, 32))
        out = L.Dense(1)(L.GRU(128)(inp))
        loss = "mse"
    elif name == "bilstm":
        inp = K.Input((None,), dtype="int32")
        h = L.Embedding(20000, 128)(inp)
        h = L.Bidirectional(L.LSTM(64, return_sequences=True))(h)
        out = L.Dense(1, activation="sigmoid")(L.Bidirectional(L.LSTM(64))(h))
        loss = "binary_crossentropy"
    else:
        inp = K.Input((100,))
        h = inp
        for _ in range(3):
            h = L.Dense(256)(h)
            h = L.Dropout(0.3)(L.Activation("relu")(L.BatchNormalization()(h)))
        out = L.Dense(10, activation="softmax")(h)
    model = K.Model(inp, out)
    model.compile(optimizer=K.optimizers.Adam(1e-3), loss=loss)
    return model


# ---- torch: the same shapes ----

def torch_model(torch, name):
    nn, F = torch.nn, torch.nn.functional

    class NHWC(nn.Module):  # NHWC data in, channels_last NCHW inside
        def __init__(self, body):
            super().__init__()
            self.body = body

        def forward(self, x):
            return self.body(x.permute(0, 3, 1, 2).contiguous(memory_format=torch.channels_last))

    def bn(c):  # Keras's defaults
        return nn.BatchNorm2d(c, eps=1e-3, momentum=0.01)

    if name == "autoenc":
        body = nn.Sequential(
            nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.ConvTranspose2d(32, 32, 3, 2, 1, output_padding=1), nn.ReLU(),
            nn.ConvTranspose2d(32, 32, 3, 2, 1, output_padding=1), nn.ReLU(),
            nn.Conv2d(32, 1, 3, padding=1), nn.Sigmoid())

        class AE(nn.Module):
            def __init__(self):
                super().__init__()
                self.net = NHWC(body)

            def forward(self, x):
                return self.net(x).permute(0, 2, 3, 1)
        return AE(), nn.BCELoss()
    if name == "sepconv":
        def sep(i, f):
            return [nn.Conv2d(i, i, 3, padding=1, groups=i, bias=False), nn.Conv2d(i, f, 1), bn(f),
                    nn.ReLU(), nn.MaxPool2d(3, 2, 1)]
        body = nn.Sequential(nn.Conv2d(3, 32, 3, 2, 1), nn.ReLU(), *sep(32, 64), *sep(64, 128),
                             nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.25),
                             nn.Linear(128, 10))
        return NHWC(body), nn.CrossEntropyLoss()
    if name == "resnet":
        class Block(nn.Module):
            def __init__(self, i, f, st):
                super().__init__()
                self.c1, self.b1 = nn.Conv2d(i, f, 3, st, 1, bias=False), bn(f)
                self.c2, self.b2 = nn.Conv2d(f, f, 3, 1, 1, bias=False), bn(f)
                self.sc = None if st == 1 else nn.Conv2d(i, f, 1, st, bias=False)

            def forward(self, x):
                r = self.b2(self.c2(F.relu(self.b1(self.c1(x)))))
                return F.relu((x if self.sc is None else self.sc(x)) + r)
        body = nn.Sequential(nn.Conv2d(3, 32, 3, 1, 1, bias=False), bn(32), nn.ReLU(),
                             Block(32, 32, 1), Block(32, 64, 2), Block(64, 128, 2),
                             nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, 10))
        return NHWC(body), nn.CrossEntropyLoss()
    if name == "conv1d_ts":
        layers, c = [], 1
        for _ in range(3):
            layers += [nn.Conv1d(c, 64, 3, padding=1), nn.BatchNorm1d(64, 1e-3, 0.01), nn.ReLU()]
            c = 64

        class TS(nn.Module):
            def __init__(self):
                super().__init__()
                self.f, self.d = nn.Sequential(*layers), nn.Linear(64, 2)

            def forward(self, x):
                return self.d(self.f(x.transpose(1, 2)).mean(-1))
        return TS(), nn.CrossEntropyLoss()
    if name == "conv1d_text":
        class Text(nn.Module):
            def __init__(self):
                super().__init__()
                self.e = nn.Embedding(20000, 128)
                self.c1, self.c2 = nn.Conv1d(128, 128, 7), nn.Conv1d(128, 128, 7)
                self.d1, self.d2, self.dr = nn.Linear(128, 128), nn.Linear(128, 1), nn.Dropout(0.5)

            def forward(self, x):
                h = F.max_pool1d(F.relu(self.c1(self.e(x).transpose(1, 2))), 3)
                h = F.relu(self.c2(h)).amax(-1)
                return torch.sigmoid(self.d2(self.dr(F.relu(self.d1(h)))))
        return Text(), nn.BCELoss()
    if name == "gru":
        class G(nn.Module):
            def __init__(self):
                super().__init__()
                self.g, self.d = nn.GRU(32, 128, batch_first=True), nn.Linear(128, 1)

            def forward(self, x):
                return self.d(self.g(x)[0][:, -1])
        return G(), nn.MSELoss()
    if name == "bilstm":
        class B(nn.Module):
            def __init__(self):
                super().__init__()
                self.e = nn.Embedding(20000, 128)
                self.l1 = nn.LSTM(128, 64, batch_first=True, bidirectional=True)
                self.l2 = nn.LSTM(128, 64, batch_first=True, bidirectional=True)
                self.d = nn.Linear(128, 1)

            def forward(self, x):
                _, (h, _) = self.l2(self.l1(self.e(x))[0])
                return torch.sigmoid(self.d(torch.cat([h[0], h[1]], -1)))
        return B(), nn.BCELoss()
    layers, i = [], 100
    for _ in range(3):
        layers += [nn.Linear(i, 256), nn.BatchNorm1d(256, 1e-3, 0.01), nn.ReLU(), nn.Dropout(0.3)]
        i = 256
    return nn.Sequential(*layers, nn.Linear(256, 10)), nn.CrossEntropyLoss()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--only", default=",".join(WORKLOADS))
    ap.add_argument("--cpu-time", action="store_true")
    args = ap.parse_args()
    threads = 1 if args.cpu_time else args.threads
    clock = time.process_time if args.cpu_time else time.perf_counter
    import fkeras
    from fkeras import _native

    _native._C.set_num_threads(threads)
    try:
        import torch
        torch.set_num_threads(threads)
    except ImportError:
        torch = None
    rng = np.random.default_rng(0)
    print(f"ms per train step, median of {args.repeats}, {threads} thread(s), "
          f"{'process CPU time' if args.cpu_time else 'wall time'}")
    print(f"{'workload':12s} {'fkeras':>9s} {'torch':>9s} {'torch/fkeras':>13s}")
    for name in args.only.split(","):
        batch, steps = SIZES[name]
        x, y = make_data(name, batch * steps, rng)
        model = fkeras_model(fkeras, name)
        model.fit(x[:2 * batch], y[:2 * batch], batch_size=batch, verbose=0)

        def fk_epoch():
            model.fit(x, y, batch_size=batch, epochs=1, verbose=0, shuffle=False)

        tm = None
        if torch is not None:
            tm, loss_fn = torch_model(torch, name)
            opt = torch.optim.Adam(tm.parameters(), lr=1e-3)
            xt = torch.from_numpy(x.astype(np.int64) if x.dtype.kind == "i" else x)
            yt = torch.from_numpy(np.asarray(y))
            if yt.dtype != torch.float32:
                yt = yt.long()

            def torch_epoch():
                tm.train()
                for i in range(steps):
                    opt.zero_grad()
                    loss_fn(tm(xt[i * batch:(i + 1) * batch]), yt[i * batch:(i + 1) * batch]).backward()
                    opt.step()
            torch_epoch()
        fk, tt = [], []
        for _ in range(args.repeats):
            t = clock()
            fk_epoch()
            fk.append((clock() - t) / steps)
            if tm is not None:
                t = clock()
                torch_epoch()
                tt.append((clock() - t) / steps)
        f_ms = statistics.median(fk) * 1e3
        if tt:
            t_ms = statistics.median(tt) * 1e3
            print(f"{name:12s} {f_ms:9.3f} {t_ms:9.3f} {t_ms / f_ms:13.2f}", flush=True)
        else:
            print(f"{name:12s} {f_ms:9.3f} {'-':>9s} {'-':>13s}", flush=True)


if __name__ == "__main__":
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    main()
