"""SwapEMAWeights and RemoteMonitor."""

import json
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, HTTPServer

import numpy as np
import pytest

import fkeras
from fkeras import callbacks, optimizers


def _model(use_ema=True):
    model = fkeras.Sequential([fkeras.Input((3,)), fkeras.layers.Dense(1)])
    model.compile(optimizer=optimizers.SGD(0.1, use_ema=use_ema, ema_momentum=0.5),
                  loss="mse")
    return model


def _data():
    rng = np.random.default_rng(0)
    return rng.standard_normal((16, 3)).astype(np.float32), \
        rng.standard_normal((16, 1)).astype(np.float32)


class _Probe(callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.seen = []

    def on_test_begin(self, logs=None):
        avg = self.model.optimizer._groups[0].slots["average"]
        self.seen.append((self.model.layers[0].kernel.numpy().copy(), avg.copy()))

    def on_test_end(self, logs=None):
        self.after = self.model.layers[0].kernel.numpy().copy()


def test_swap_ema_weights_swaps_and_swaps_back():
    x, y = _data()
    model = _model()
    for i in range(4):  # train_on_batch: fit's end would finalize the weights to the EMA
        model.train_on_batch(x[i * 4:i * 4 + 4], y[i * 4:i * 4 + 4])
    opt = model.optimizer
    avg = opt._groups[0].slots["average"].copy()
    before = [w.copy() for w in model.get_weights()]
    swap = callbacks.SwapEMAWeights()
    swap.set_model(model)
    swap.on_test_begin()
    ema_now = np.concatenate([w.reshape(-1) for w in model.get_weights()])
    np.testing.assert_array_equal(ema_now, avg)
    assert not np.allclose(ema_now, np.concatenate([w.reshape(-1) for w in before]))
    swap.on_test_end()
    for a, b in zip(model.get_weights(), before):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(opt._groups[0].slots["average"], avg)


def test_swap_ema_weights_in_fit_evaluates_with_ema():
    x, y = _data()
    model = _model()
    probe = _Probe()
    model.fit(x, y, epochs=2, batch_size=4, verbose=0, validation_data=(x, y),
              callbacks=[callbacks.SwapEMAWeights(), probe])
    # validation ran on the EMA weights; the weights are the trained ones again afterwards
    assert len(probe.seen) == 2
    kernel, avg = probe.seen[-1]
    # while evaluating, the model holds the EMA and the average slot the trained weights
    assert not np.allclose(kernel, probe.after)
    np.testing.assert_array_equal(probe.after.reshape(-1), avg[:3])


def test_swap_ema_weights_needs_use_ema():
    x, y = _data()
    model = _model(use_ema=False)
    with pytest.raises(ValueError, match="use_ema"):
        model.fit(x, y, epochs=1, verbose=0, validation_data=(x, y),
                  callbacks=[callbacks.SwapEMAWeights()])


@pytest.fixture
def server():
    received = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers["Content-Length"])).decode()
            received.append((self.path, self.headers["Content-Type"], body))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass

    httpd = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", received
    httpd.shutdown()
    httpd.server_close()


@pytest.mark.parametrize("as_json", [False, True])
def test_remote_monitor_posts_logs(server, as_json):
    root, received = server
    x, y = _data()
    model = _model(use_ema=False)
    hist = model.fit(x, y, epochs=2, batch_size=8, verbose=0,
                     callbacks=[callbacks.RemoteMonitor(root=root, send_as_json=as_json)])
    assert len(received) == 2
    for epoch, (path, ctype, body) in enumerate(received):
        assert path == "/publish/epoch/end/"
        if as_json:
            assert ctype == "application/json"
            payload = json.loads(body)
        else:
            assert ctype == "application/x-www-form-urlencoded"
            payload = json.loads(urllib.parse.parse_qs(body)["data"][0])
        assert payload["epoch"] == epoch
        assert payload["loss"] == pytest.approx(hist.history["loss"][epoch])


def test_remote_monitor_unreachable_warns():
    cb = callbacks.RemoteMonitor(root="http://127.0.0.1:1")
    with pytest.warns(UserWarning, match="Could not reach"):
        cb.on_epoch_end(0, {"loss": np.float32(1.0)})
