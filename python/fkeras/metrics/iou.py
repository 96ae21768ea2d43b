"""Intersection-over-union metrics (Keras 3): IoU, MeanIoU, BinaryIoU, OneHotIoU,
OneHotMeanIoU, from a confusion matrix accumulated over batches.

Rows of the matrix are true classes, columns predicted ones. Pairs outside [0, num_classes)
and the `ignore_class` are left out. As in Keras the matrix's dtype is the metric's dtype
("int32" by default, so float sample weights are truncated, with Keras's warning).
"""

import warnings

import numpy as np

from fkeras import config as _config
from fkeras.metrics.metric import Metric, to_numpy


class _IoUBase(Metric):
    _direction = "up"

    def __init__(self, num_classes, name=None, dtype=None, ignore_class=None,
                 sparse_y_true=True, sparse_y_pred=True, axis=-1):
        super().__init__(name=name, dtype="int32" if dtype in (None, "int") else dtype)
        self.num_classes = num_classes
        self.ignore_class = ignore_class
        self.sparse_y_true, self.sparse_y_pred = sparse_y_true, sparse_y_pred
        self.axis = axis
        kind = np.dtype(self.dtype)
        self.total_cm = self._add_state((num_classes, num_classes), dtype=kind,
                                        name="total_confusion_matrix")

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true, y_pred = to_numpy(y_true), to_numpy(y_pred)
        if not self.sparse_y_true:
            y_true = y_true.argmax(axis=self.axis)
        if not self.sparse_y_pred:
            y_pred = y_pred.argmax(axis=self.axis)
        kind = self.total_cm.dtype
        y_true = y_true.astype(kind).reshape(-1)
        y_pred = y_pred.astype(kind).reshape(-1)
        if sample_weight is None:
            w = np.ones_like(y_true)
        else:
            w = to_numpy(sample_weight)
            if w.dtype.kind == "f" and kind.kind in "iu":
                warnings.warn("You are passing weight as `float`, but dtype is `int`. This may "
                              "result in an incorrect weight due to type casting Consider "
                              "using integer weights.")
            w = np.broadcast_to(w.astype(kind).reshape(-1) if w.ndim else w.astype(kind),
                                y_true.shape)
        keep = (y_true >= 0) & (y_true < self.num_classes) & (y_pred >= 0) & \
            (y_pred < self.num_classes)
        if self.ignore_class is not None:
            keep &= y_true != self.ignore_class
        np.add.at(self.total_cm, (y_true[keep], y_pred[keep]), w[keep])

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype}


class IoU(_IoUBase):
    """Mean IoU over `target_class_ids`: `tp / (tp + fp + fn)` per class from the
    accumulated confusion matrix; classes that never occur are left out of the mean."""

    def __init__(self, num_classes, target_class_ids, name=None, dtype=None, ignore_class=None,
                 sparse_y_true=True, sparse_y_pred=True, axis=-1):
        super().__init__(num_classes, name=name, dtype=dtype, ignore_class=ignore_class,
                         sparse_y_true=sparse_y_true, sparse_y_pred=sparse_y_pred, axis=axis)
        if max(target_class_ids) >= num_classes:
            raise ValueError(f"Target class id {max(target_class_ids)} is out of range, which "
                             f"is [0, {num_classes}).")
        self.target_class_ids = list(target_class_ids)

    def result(self):
        cm = self.total_cm.astype(np.float64)
        tp = np.diag(cm)
        denominator = cm.sum(axis=0) + cm.sum(axis=1) - tp
        ids = self.target_class_ids
        tp, denominator = tp[ids], denominator[ids]
        valid = denominator > 1e-9
        iou = np.where(valid, tp / (denominator + _config.epsilon()), 0.0)
        return np.float32(iou.sum() / (valid.sum() + _config.epsilon()))

    def get_config(self):
        return {**super().get_config(), "num_classes": self.num_classes,
                "target_class_ids": self.target_class_ids, "ignore_class": self.ignore_class,
                "sparse_y_true": self.sparse_y_true, "sparse_y_pred": self.sparse_y_pred,
                "axis": self.axis}


class BinaryIoU(IoU):
    """IoU of binary predictions: `y_pred >= threshold` is class 1."""

    def __init__(self, target_class_ids=(0, 1), threshold=0.5, name=None, dtype=None):
        super().__init__(num_classes=2, target_class_ids=target_class_ids, name=name,
                         dtype=dtype)
        self.threshold = threshold

    def update_state(self, y_true, y_pred, sample_weight=None):
        pred = (to_numpy(y_pred).astype(np.float32) >= self.threshold).astype(np.int64)
        return super().update_state(y_true, pred, sample_weight)

    def get_config(self):
        return {"target_class_ids": self.target_class_ids, "threshold": self.threshold,
                "name": self.name, "dtype": self.dtype}


class MeanIoU(IoU):
    """IoU averaged over every class."""

    def __init__(self, num_classes, name=None, dtype=None, ignore_class=None,
                 sparse_y_true=True, sparse_y_pred=True, axis=-1):
        super().__init__(num_classes, list(range(num_classes)), name=name, dtype=dtype,
                         ignore_class=ignore_class, sparse_y_true=sparse_y_true,
                         sparse_y_pred=sparse_y_pred, axis=axis)

    def get_config(self):
        return {"num_classes": self.num_classes, "name": self.name,
                "dtype": self.dtype, "ignore_class": self.ignore_class,
                "sparse_y_true": self.sparse_y_true, "sparse_y_pred": self.sparse_y_pred,
                "axis": self.axis}


class OneHotIoU(IoU):
    """IoU with one-hot labels (and one-hot/probability predictions unless sparse)."""

    def __init__(self, num_classes, target_class_ids, name=None, dtype=None, ignore_class=None,
                 sparse_y_pred=False, axis=-1):
        super().__init__(num_classes, target_class_ids, name=name, dtype=dtype,
                         ignore_class=ignore_class, sparse_y_true=False,
                         sparse_y_pred=sparse_y_pred, axis=axis)

    def get_config(self):
        return {"num_classes": self.num_classes, "target_class_ids": self.target_class_ids,
                "name": self.name, "dtype": self.dtype,
                "ignore_class": self.ignore_class, "sparse_y_pred": self.sparse_y_pred,
                "axis": self.axis}


class OneHotMeanIoU(MeanIoU):
    """MeanIoU with one-hot labels."""

    def __init__(self, num_classes, name=None, dtype=None, ignore_class=None,
                 sparse_y_pred=False, axis=-1):
        super().__init__(num_classes, name=name, dtype=dtype, ignore_class=ignore_class,
                         sparse_y_true=False, sparse_y_pred=sparse_y_pred, axis=axis)

    def get_config(self):
        return {"num_classes": self.num_classes, "name": self.name,
                "dtype": self.dtype, "ignore_class": self.ignore_class,
                "sparse_y_pred": self.sparse_y_pred, "axis": self.axis}
