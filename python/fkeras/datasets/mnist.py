"""MNIST handwritten digits (downloaded into the Keras cache by get_file)."""

import numpy as np

from fkeras.utils.file_utils import get_file

ORIGIN = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"


def load_data(path="mnist.npz"):
    """Loads MNIST: `(x_train, y_train), (x_test, y_test)`, uint8 images (N, 28, 28) with
    values 0..255 and uint8 labels 0..9 (60000 train, 10000 test)."""
    path = get_file(fname=path, origin=f"{ORIGIN}mnist.npz",
                    file_hash="731c5ac602752760c8e48fbffcf8c3b850d9dc2a2aedcf2cc48468fc17b673d1")
    with np.load(path, allow_pickle=False) as f:
        return (f["x_train"], f["y_train"]), (f["x_test"], f["y_test"])
