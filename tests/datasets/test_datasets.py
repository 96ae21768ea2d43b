"""Datasets: the bundled digits, get_file against a loopback HTTP server (cache, sha256, md5,
re-download, extraction, KERAS_HOME), and the mnist / fashion_mnist / cifar10 / imdb parsers on
small files in their real formats. No test touches the internet."""

import functools
import gzip
import hashlib
import http.server
import io
import os
import pickle
import tarfile
import threading

import numpy as np
import pytest

import fkeras
from fkeras.datasets import cifar10, digits, fashion_mnist, imdb, mnist


def test_digits_shipped_in_the_package():
    assert os.path.exists(digits._data_path())
    assert os.path.dirname(digits._data_path()).startswith(os.path.dirname(fkeras.__file__))
    (x, y), (xt, yt) = digits.load_data()
    assert x.shape == (1437, 8, 8) and xt.shape == (360, 8, 8)
    assert x.dtype == np.uint8 and y.dtype == np.uint8
    assert x.max() == 16 and x.min() == 0 and set(np.unique(y)) == set(range(10))
    assert set(np.unique(yt)) == set(range(10))
    (x2, _), _ = digits.load_data()
    np.testing.assert_array_equal(x, x2)  # a fixed split


class _Server:
    """A loopback HTTP server over a directory, counting requests."""

    def __init__(self, root):
        self.requests = []
        self.root = root
        server = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                server.requests.append(self.path)
                super().do_GET()

        self.httpd = http.server.ThreadingHTTPServer(
            ("127.0.0.1", 0), functools.partial(Handler, directory=str(root)))
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,),
                                       daemon=True)
        self.thread.start()

    def url(self, name):
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/{name}"

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server(tmp_path):
    root = tmp_path / "www"
    root.mkdir()
    s = _Server(root)
    yield s
    s.close()


def test_get_file_download_cache_and_hash(server, tmp_path, monkeypatch):
    payload = b"fkeras " * 1000
    (server.root / "data.bin").write_bytes(payload)
    sha = hashlib.sha256(payload).hexdigest()
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "home"))
    path = fkeras.utils.get_file(origin=server.url("data.bin"), file_hash=sha)
    assert path == str(tmp_path / "home" / "datasets" / "data.bin")
    assert open(path, "rb").read() == payload
    assert fkeras.utils.get_file(origin=server.url("data.bin"), file_hash=sha) == path
    assert len(server.requests) == 1  # the second call was a cache hit
    # A corrupted cache entry is downloaded again.
    open(path, "wb").write(b"truncated")
    fkeras.utils.get_file(origin=server.url("data.bin"), file_hash=sha)
    assert len(server.requests) == 2 and open(path, "rb").read() == payload
    # md5 (32 hex digits) works too; a wrong hash raises and leaves nothing behind.
    md5 = hashlib.md5(payload).hexdigest()
    fkeras.utils.get_file("copy.bin", origin=server.url("data.bin"), file_hash=md5,
                          cache_dir=str(tmp_path / "c"))
    with pytest.raises(ValueError, match="Incomplete or corrupted file detected"):
        fkeras.utils.get_file("bad.bin", origin=server.url("data.bin"), file_hash="0" * 64,
                              cache_dir=str(tmp_path / "c"))
    assert not (tmp_path / "c" / "datasets" / "bad.bin").exists()
    assert not [n for n in os.listdir(tmp_path / "c" / "datasets") if n.startswith(".")]
    with pytest.raises(Exception, match="URL fetch failure"):
        fkeras.utils.get_file("x", origin=server.url("missing"), cache_dir=str(tmp_path / "c"))


def test_get_file_extracts_archives(server, tmp_path):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        info = tarfile.TarInfo("pkg/hello.txt")
        info.size = 5
        tar.addfile(info, io.BytesIO(b"hello"))
    (server.root / "pkg.tar.gz").write_bytes(buf.getvalue())
    out = fkeras.utils.get_file("pkg.tar.gz", origin=server.url("pkg.tar.gz"), extract=True,
                                cache_dir=str(tmp_path))
    assert out == str(tmp_path / "datasets" / "pkg_extracted")
    assert open(os.path.join(out, "pkg", "hello.txt")).read() == "hello"


def _gz_idx(array, header_len):
    return gzip.compress(b"\0" * header_len + array.tobytes())


def test_mnist_and_fashion_mnist_parsers(tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    xs = [rng.integers(0, 256, (n, 28, 28), dtype=np.uint8) for n in (5, 3)]
    ys = [rng.integers(0, 10, n, dtype=np.uint8) for n in (5, 3)]
    npz = tmp_path / "mnist.npz"
    np.savez(npz, x_train=xs[0], y_train=ys[0], x_test=xs[1], y_test=ys[1])
    monkeypatch.setattr(mnist, "get_file", lambda *a, **k: str(npz))
    (a, b), (c, d) = mnist.load_data()
    np.testing.assert_array_equal(a, xs[0])
    np.testing.assert_array_equal(d, ys[1])
    files = {"train-labels-idx1-ubyte.gz": _gz_idx(ys[0], 8),
             "train-images-idx3-ubyte.gz": _gz_idx(xs[0], 16),
             "t10k-labels-idx1-ubyte.gz": _gz_idx(ys[1], 8),
             "t10k-images-idx3-ubyte.gz": _gz_idx(xs[1], 16)}
    for name, content in files.items():
        (tmp_path / name).write_bytes(content)
    monkeypatch.setattr(fashion_mnist, "get_file", lambda name, **k: str(tmp_path / name))
    (a, b), (c, d) = fashion_mnist.load_data()
    np.testing.assert_array_equal(a, xs[0])
    np.testing.assert_array_equal(c, xs[1])
    np.testing.assert_array_equal(b, ys[0])


def test_cifar10_parser_and_restricted_unpickling(tmp_path, monkeypatch):
    rng = np.random.default_rng(1)
    root = tmp_path / "cifar-10-batches-py"
    root.mkdir()
    first = None
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        data = rng.integers(0, 256, (10000, 3072), dtype=np.uint8)
        first = data[0] if first is None else first
        with open(root / name, "wb") as f:
            pickle.dump({b"data": data, b"labels": rng.integers(0, 10, 10000).tolist()}, f,
                        protocol=4)
    monkeypatch.setattr(cifar10, "get_file", lambda *a, **k: str(tmp_path))
    (x, y), (xt, yt) = cifar10.load_data()
    assert x.shape == (50000, 32, 32, 3) and y.shape == (50000, 1) and yt.shape == (10000, 1)
    np.testing.assert_array_equal(x[0], first.reshape(3, 32, 32).transpose(1, 2, 0))
    with open(root / "evil", "wb") as f:
        pickle.dump({b"data": os.system}, f)
    with pytest.raises(pickle.UnpicklingError, match="Refusing"):
        cifar10.load_batch(str(root / "evil"))


def test_imdb_parser(tmp_path, monkeypatch):
    x = np.empty(4, dtype=object)
    x[:] = [[5, 6, 7], [8], [9, 10, 11, 12], [13, 14]]
    npz = tmp_path / "imdb.npz"
    np.savez(npz, x_train=x[:2], y_train=np.array([0, 1]), x_test=x[2:],
             y_test=np.array([1, 0]))
    monkeypatch.setattr(imdb, "get_file", lambda *a, **k: str(npz))
    (a, b), (c, d) = imdb.load_data(seed=0)
    assert len(a) == 2 and len(c) == 2
    assert all(s[0] == 1 for s in list(a) + list(c))  # start_char
    assert sorted(len(s) for s in a) == [2, 4]
    assert sorted(w - 3 for s in a for w in s[1:]) == [5, 6, 7, 8]  # index_from=3
    (a, _), _ = imdb.load_data(num_words=10)
    assert all(w < 10 for s in a for w in s)
