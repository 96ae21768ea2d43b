"""Fashion-MNIST (Zalando; downloaded into the Keras cache by get_file)."""

import gzip
import os

import numpy as np

from fkeras.utils.file_utils import get_file

ORIGIN = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"
FILES = ("train-labels-idx1-ubyte.gz", "train-images-idx3-ubyte.gz",
         "t10k-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz")


def load_data():
    """Loads Fashion-MNIST: uint8 images (N, 28, 28) and uint8 labels 0..9 (60000 train,
    10000 test), cached under `datasets/fashion-mnist`."""
    subdir = os.path.join("datasets", "fashion-mnist")
    paths = [get_file(name, origin=ORIGIN + name, cache_subdir=subdir) for name in FILES]
    with gzip.open(paths[0], "rb") as f:
        y_train = np.frombuffer(f.read(), np.uint8, offset=8)
    with gzip.open(paths[1], "rb") as f:
        x_train = np.frombuffer(f.read(), np.uint8, offset=16).reshape(len(y_train), 28, 28)
    with gzip.open(paths[2], "rb") as f:
        y_test = np.frombuffer(f.read(), np.uint8, offset=8)
    with gzip.open(paths[3], "rb") as f:
        x_test = np.frombuffer(f.read(), np.uint8, offset=16).reshape(len(y_test), 28, 28)
    return (x_train, y_train), (x_test, y_test)
