"""`text_dataset_from_directory` (Keras 3.15's arguments): `.txt` files in class folders as a
dataset of (texts, labels) batches; texts are NumPy arrays of Python strings (what
`TextVectorization` and `StringLookup` take), read as Keras's Pillow-free path
(`format="grain"`) reads them: UTF-8 text, `max_length` characters kept."""

import functools

import numpy as np

from fkeras.utils import directory_index
from fkeras.utils.file_dataset import FileDataset, encode_labels


def read_text(path, max_length=None):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return text if max_length is None else text[:max_length]


def _load_batch(paths, max_length):
    batch = np.empty(len(paths), dtype=object)
    batch[:] = [read_text(p, max_length) for p in paths]
    return batch


def text_dataset_from_directory(directory, labels="inferred", label_mode="int",
                                class_names=None, batch_size=32, max_length=None,
                                shuffle=True, seed=None, validation_split=None, subset=None,
                                follow_links=False, format="tf", verbose=True):
    """Generates a dataset of text batches from the `.txt` files of a directory.

    With `labels="inferred"`, each subdirectory of `directory` is a class (label i for the
    i-th of `class_names`, sorted by default); the `.txt` files under it are its samples.

    Args:
        directory: the data directory.
        labels: `"inferred"`, None (texts only), or a list/tuple of integer labels, one per
            file in the sorted order of the file paths.
        label_mode: `"int"`, `"categorical"`, `"binary"` or None (as in
            `image_dataset_from_directory`).
        class_names: with `labels="inferred"`, the subdirectories to use, in label order.
        batch_size: samples per batch (None: single samples).
        max_length: the number of characters kept of each text (None: all).
        shuffle: shuffle the files (needs `seed` with `validation_split`) and read each
            pass in a fresh order; False: sorted order.
        seed: the shuffle seed.
        validation_split: the fraction of files kept for validation (the last ones).
        subset: `"training"`, `"validation"` or `"both"` (returns both datasets).
        follow_links: whether to follow symbolic links to subdirectories.
        format: `"tf"` or `"grain"`, accepted for Keras's code; both return fkeras's dataset.
        verbose: print the number of files and classes found.

    Returns:
        A `FileDataset` of string batches (object arrays of `str`, with labels unless
        `label_mode` is None) with `class_names` and `file_paths`; a list of two for
        `subset="both"`.
    """
    labels, label_mode = directory_index.check_labels_args(labels, label_mode, class_names,
                                                           "text")
    if format not in ("tf", "grain"):
        raise ValueError(f'`format` should be either "tf" or "grain". Received: '
                         f"format={format}")
    directory_index.check_validation_split_arg(validation_split, subset, shuffle, seed)
    if seed is None:
        seed = np.random.randint(1e6)
    paths, labels, class_names = directory_index.index_directory(
        directory, labels, (".txt",), class_names=class_names, shuffle=shuffle, seed=seed,
        follow_links=follow_links, verbose=verbose)
    if label_mode == "binary" and len(class_names) != 2:
        raise ValueError('When passing `label_mode="binary"`, there must be exactly 2 '
                         f"class_names. Received: class_names={class_names}")
    load = functools.partial(_load_batch, max_length=max_length)

    def dataset(part, shuffled, what=""):
        part_paths, part_labels = directory_index.training_or_validation_split(
            paths, labels, validation_split, part)
        if not part_paths:
            raise ValueError(f"No {what}text files found in directory {directory}. Allowed "
                             "format: .txt")
        encoded = None if label_mode is None else encode_labels(
            part_labels, label_mode, len(class_names))
        return FileDataset(part_paths, encoded, load, batch_size, shuffled, seed, class_names)

    if subset == "both":
        return [dataset("training", shuffle, "training "),
                dataset("validation", False, "validation ")]
    return dataset(subset, shuffle)
