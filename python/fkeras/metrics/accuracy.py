"""Accuracy metrics (Keras 3 definitions), computed in NumPy.

- accuracy: y_pred == y_true elementwise;
- binary_accuracy: (y_pred > threshold) == y_true;
- categorical_accuracy: argmax(y_true) == argmax(y_pred);
- sparse_categorical_accuracy: y_true == argmax(y_pred);
- (sparse_)top_k_categorical_accuracy: the true class is among the k highest predictions.
"""

import numpy as np

from fkeras.metrics.metric import MeanMetricWrapper, squeeze_or_expand


def _up(fn):
    fn._direction = "up"
    return fn


@_up
def accuracy(y_true, y_pred):
    y_true, y_pred = squeeze_or_expand(np.asarray(y_true), np.asarray(y_pred))
    return (y_true == y_pred).astype(np.float32)


@_up
def binary_accuracy(y_true, y_pred, threshold=0.5):
    y_true, y_pred = squeeze_or_expand(np.asarray(y_true), np.asarray(y_pred))
    return ((y_pred > threshold).astype(y_true.dtype) == y_true).astype(np.float32)


@_up
def categorical_accuracy(y_true, y_pred):
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    if y_true.ndim == y_pred.ndim:
        labels = np.argmax(y_true, axis=-1)
    else:
        labels = y_true.reshape(y_pred.shape[:-1])  # already class indices
    return (labels == np.argmax(y_pred, axis=-1)).astype(np.float32)


def _sparse_labels(y_true, y_pred):
    y_true = np.asarray(y_true)
    if y_true.ndim == y_pred.ndim and y_true.shape[-1] == 1:
        y_true = y_true[..., 0]
    return y_true


@_up
def sparse_categorical_accuracy(y_true, y_pred):
    y_pred = np.asarray(y_pred)
    labels = _sparse_labels(y_true, y_pred)
    pred = np.argmax(y_pred, axis=-1)
    return (labels.astype(np.float64) == pred).astype(np.float32)


def _in_top_k(labels, y_pred, k):
    labels = labels.astype(np.int64).reshape(y_pred.shape[:-1])
    target = np.take_along_axis(y_pred, labels[..., None], axis=-1)
    return ((y_pred > target).sum(axis=-1) < k).astype(np.float32)


@_up
def top_k_categorical_accuracy(y_true, y_pred, k=5):
    y_pred = np.asarray(y_pred)
    return _in_top_k(np.argmax(np.asarray(y_true), axis=-1), y_pred, k)


@_up
def sparse_top_k_categorical_accuracy(y_true, y_pred, k=5, from_sorted_ids=False):
    y_pred = np.asarray(y_pred)
    labels = _sparse_labels(y_true, y_pred)
    if from_sorted_ids:
        return (y_pred[..., :k] == labels[..., None]).any(axis=-1).astype(np.float32)
    return _in_top_k(labels, y_pred, k)


class Accuracy(MeanMetricWrapper):
    """How often predictions equal labels."""

    def __init__(self, name="accuracy", dtype=None):
        super().__init__(accuracy, name=name, dtype=dtype)


class BinaryAccuracy(MeanMetricWrapper):
    """How often (y_pred > threshold) matches the binary labels."""

    def __init__(self, name="binary_accuracy", dtype=None, threshold=0.5):
        super().__init__(binary_accuracy, name=name, dtype=dtype, threshold=threshold)


class CategoricalAccuracy(MeanMetricWrapper):
    """How often argmax(y_pred) matches argmax of the one-hot labels."""

    def __init__(self, name="categorical_accuracy", dtype=None):
        super().__init__(categorical_accuracy, name=name, dtype=dtype)


class SparseCategoricalAccuracy(MeanMetricWrapper):
    """How often argmax(y_pred) matches the integer labels."""

    def __init__(self, name="sparse_categorical_accuracy", dtype=None):
        super().__init__(sparse_categorical_accuracy, name=name, dtype=dtype)


class TopKCategoricalAccuracy(MeanMetricWrapper):
    """How often the one-hot target is in the top k predictions."""

    def __init__(self, k=5, name="top_k_categorical_accuracy", dtype=None):
        super().__init__(top_k_categorical_accuracy, name=name, dtype=dtype, k=k)


class SparseTopKCategoricalAccuracy(MeanMetricWrapper):
    """How often the integer target is in the top k predictions."""

    def __init__(self, k=5, name="sparse_top_k_categorical_accuracy", dtype=None,
                 from_sorted_ids=False):
        super().__init__(sparse_top_k_categorical_accuracy, name=name, dtype=dtype, k=k,
                         from_sorted_ids=from_sorted_ids)
