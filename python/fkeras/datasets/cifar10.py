"""CIFAR-10 (downloaded and extracted into the Keras cache by get_file).

The batches are Python pickles; they are read with an unpickler that only rebuilds NumPy
arrays, lists, dicts and plain scalars (nothing else can execute on load).
"""

import os
import pickle

import numpy as np

from fkeras import config
from fkeras.utils.file_utils import get_file

ORIGIN = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
SHA256 = "6d958be074577803d12ecdefd02955f39262c83c16fe9348329d7fe0b5c001ce"


class _RestrictedUnpickler(pickle.Unpickler):
    """Rebuilds NumPy arrays (and plain containers and scalars) only."""

    _ALLOWED = {("numpy", "ndarray"), ("numpy", "dtype"),
                ("numpy.core.multiarray", "_reconstruct"),
                ("numpy._core.multiarray", "_reconstruct")}

    def find_class(self, module, name):
        if (module, name) in self._ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"Refusing to load {module}.{name} from a dataset file.")


def load_batch(fpath, label_key="labels"):
    """(data uint8 (N, 3, 32, 32), labels) from one CIFAR batch file."""
    with open(fpath, "rb") as f:
        d = _RestrictedUnpickler(f, encoding="bytes").load()
    d = {k.decode("utf8") if isinstance(k, bytes) else k: v for k, v in d.items()}
    data = np.asarray(d["data"]).reshape(-1, 3, 32, 32)
    return data, np.asarray(d[label_key])


def load_data():
    """Loads CIFAR-10: uint8 images (N, 32, 32, 3) (channels_last; (N, 3, 32, 32) with
    channels_first) and uint8 labels of shape (N, 1) (50000 train, 10000 test)."""
    path = get_file(fname="cifar-10-batches-py-target", origin=ORIGIN, extract=True,
                    file_hash=SHA256)
    path = os.path.join(path, "cifar-10-batches-py")
    x_train = np.empty((50000, 3, 32, 32), dtype="uint8")
    y_train = np.empty((50000,), dtype="uint8")
    for i in range(1, 6):
        data, labels = load_batch(os.path.join(path, f"data_batch_{i}"))
        x_train[(i - 1) * 10000:i * 10000] = data
        y_train[(i - 1) * 10000:i * 10000] = labels
    x_test, y_test = load_batch(os.path.join(path, "test_batch"))
    y_train = y_train.reshape(-1, 1)
    y_test = np.asarray(y_test, dtype="uint8").reshape(-1, 1)
    if config.image_data_format() == "channels_last":
        x_train = x_train.transpose(0, 2, 3, 1)
        x_test = x_test.transpose(0, 2, 3, 1)
    return (x_train, y_train), (x_test.astype("uint8"), y_test)
