"""CSVLogger: one row per epoch; header `epoch,` + the sorted log keys of the first epoch."""

import collections.abc
import csv
import os

import numpy as np

from fkeras.callbacks.callback import Callback


def _cell(value):
    if isinstance(value, str):
        return value
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return value.item()
    if isinstance(value, collections.abc.Iterable):
        return f"[{', '.join(map(str, value))}]"
    return value


class CSVLogger(Callback):
    """Streams epoch results to a CSV file (missing values written as NA; flushed per epoch).

    Args:
        filename: path of the CSV file.
        separator: the field separator. Defaults to ",".
        append: append to an existing file (the header is written only if it is empty).
    """

    _fk_rank_zero_only = True  # DataParallel: kept on rank 0 only (CallbackList)

    def __init__(self, filename, separator=",", append=False):
        super().__init__()
        self.filename = os.fspath(filename)
        self.sep = separator
        self.append = append
        self.keys = None
        self.writer = None
        self.csv_file = None

    def on_train_begin(self, logs=None):
        self.write_header = True
        if self.append and os.path.exists(self.filename) and os.path.getsize(self.filename):
            self.write_header = False
        self.csv_file = open(self.filename, "a" if self.append else "w", newline="")
        self.keys = None
        self.writer = None

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        if self.keys is None:
            self.keys = sorted(logs)
        if self.writer is None:
            sep = self.sep

            class _Dialect(csv.excel):
                delimiter = sep

            self.writer = csv.DictWriter(self.csv_file, fieldnames=["epoch"] + self.keys,
                                         dialect=_Dialect)
            if self.write_header:
                self.writer.writeheader()
        row = {"epoch": epoch}
        row.update((k, _cell(logs[k]) if k in logs else "NA") for k in self.keys)
        self.writer.writerow(row)
        self.csv_file.flush()

    def on_train_end(self, logs=None):
        if self.csv_file is not None:
            self.csv_file.close()
        self.csv_file = self.writer = None
