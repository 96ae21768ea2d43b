"""Listing a directory of class folders for the `*_dataset_from_directory` loaders, with Keras
3.15's order, labels, shuffle and split, so that the same seed puts the same files in the same
split as Keras:

- classes: the sorted names of the non-hidden subdirectories (or `class_names`, in its order);
- files: per class, the directories of `os.walk` sorted by path, then each one's file names
  sorted, kept when the lowercase name ends with an allowed extension;
- `shuffle=True`: the path list and the label list each shuffled in place by
  `numpy.random.RandomState(seed)` (seed None: `np.random.randint(1e6)`);
- `validation_split`: the last `int(split * n)` files are the validation subset.
"""

import os

import numpy as np


def check_validation_split_arg(validation_split, subset, shuffle, seed):
    """Keras's checks of `validation_split`, `subset`, `shuffle` and `seed` together."""
    if validation_split and not 0 < validation_split < 1:
        raise ValueError(f"`validation_split` must be between 0 and 1, received: "
                         f"{validation_split}")
    if (validation_split or subset) and not (validation_split and subset):
        raise ValueError("If `subset` is set, `validation_split` must be set, and inversely.")
    if subset not in ("training", "validation", "both", None):
        raise ValueError(f'`subset` must be either "training", "validation" or "both", '
                         f"received: {subset}")
    if validation_split and shuffle and seed is None:
        raise ValueError(
            "If using `validation_split` and shuffling the data, you must provide a `seed` "
            "argument, to make sure that there is no overlap between the training and "
            "validation subset.")


def check_labels_args(labels, label_mode, class_names, what):
    """Keras's checks of `labels`, `label_mode` and `class_names`; returns (labels,
    label_mode) with both None when either is."""
    if labels not in ("inferred", None):
        if not isinstance(labels, (list, tuple)):
            raise ValueError(
                "`labels` argument should be a list/tuple of integer labels, of the same size "
                f"as the number of {what} files in the target directory. If you wish to infer "
                "the labels from the subdirectory names in the target directory, pass "
                '`labels="inferred"`. If you wish to get a dataset that only contains '
                f"{what} samples (no labels), pass `labels=None`. Received: labels={labels}")
        if class_names:
            raise ValueError('You can only pass `class_names` if `labels="inferred"`. '
                             f"Received: labels={labels}, and class_names={class_names}")
    if label_mode not in {"int", "categorical", "binary", None}:
        raise ValueError('`label_mode` argument must be one of "int", "categorical", '
                         f'"binary", or None. Received: label_mode={label_mode}')
    if labels is None or label_mode is None:
        return None, None
    return labels, label_mode


def _class_dirs(directory, labels, class_names):
    if labels != "inferred":
        if class_names is not None:
            if labels is None:
                raise ValueError("When `labels=None` (no labels), argument `class_names` "
                                 "cannot be specified.")
            raise ValueError("When argument `labels` is specified, argument `class_names` "
                             "cannot be specified (the `class_names` will be the sorted list "
                             "of labels).")
        return [""]
    found = [d for d in sorted(os.listdir(directory))
             if os.path.isdir(os.path.join(directory, d)) and not d.startswith(".")]
    if class_names is None:
        return found
    if not set(class_names).issubset(found):
        raise ValueError(
            "The `class_names` passed did not match the names of the subdirectories of the "
            f"target directory. Expected: {found} (or a subset of it), but received: "
            f"class_names={class_names}")
    return list(class_names)


def _files_of(directory, subdir, follow_links, formats):
    """Paths under directory/subdir, in Keras's order."""
    root_dir = os.path.join(directory, subdir)
    out = []
    for root, _, files in sorted(os.walk(root_dir, followlinks=follow_links),
                                 key=lambda entry: entry[0]):
        for name in sorted(files):
            if name.lower().endswith(formats):
                rel = os.path.relpath(os.path.join(root, name), root_dir)
                out.append(os.path.join(directory, os.path.join(subdir, rel)))
    return out


def index_directory(directory, labels, formats, class_names=None, shuffle=True, seed=None,
                    follow_links=False, verbose=True):
    """Lists the files of `directory` with their labels (see the module docstring).

    Returns:
        (file_paths, labels, class_names): labels an int32 array ("inferred"), the given list
        reordered, or None; class_names None without labels.
    """
    if not os.path.isdir(directory):
        raise ValueError(f"Could not find directory {directory}")
    subdirs = _class_dirs(directory, labels, class_names)
    file_paths, per_class = [], []
    for subdir in subdirs:
        found = _files_of(directory, subdir, follow_links, formats)
        file_paths += found
        per_class.append(len(found))
    if labels == "inferred":
        class_names = subdirs
        labels = np.repeat(np.arange(len(subdirs), dtype=np.int32), per_class)
    elif labels is None:
        class_names = None
    else:
        if len(labels) != len(file_paths):
            raise ValueError(
                "Expected the lengths of `labels` to match the number of files in the target "
                f"directory. len(labels) is {len(labels)} while we found {len(file_paths)} "
                f"files in directory {directory}.")
        labels = list(labels)
        class_names = [str(label) for label in sorted(set(labels))]
    if verbose:
        if labels is None:
            print(f"Found {len(file_paths)} files.")
        else:
            print(f"Found {len(file_paths)} files belonging to {len(class_names)} classes.")
    if shuffle:
        if seed is None:
            seed = np.random.randint(1e6)
        np.random.RandomState(seed).shuffle(file_paths)
        if labels is not None:
            np.random.RandomState(seed).shuffle(labels)
    return file_paths, labels, class_names


def training_or_validation_split(samples, labels, validation_split, subset):
    """The training (all but the last `int(split * n)`) or validation (those) part."""
    if not validation_split:
        return samples, labels
    count = int(validation_split * len(samples))
    if count == 0:
        raise ValueError(
            f"`validation_split={validation_split}` of {len(samples)} files leaves no file "
            "for validation: pass a larger split or more files.")
    if subset == "training":
        print(f"Using {len(samples) - count} files for training.")
        part = slice(None, -count)
    elif subset == "validation":
        print(f"Using {count} files for validation.")
        part = slice(-count, None)
    else:
        raise ValueError(f'`subset` must be either "training" or "validation", received: '
                         f"{subset}")
    return samples[part], None if labels is None else labels[part]
