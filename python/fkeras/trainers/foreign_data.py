"""Batches from other libraries' pipelines: a `torch.utils.data.DataLoader` and a
`tf.data.Dataset`, recognised by their class names and modules (Keras 3's test), so neither
torch nor tensorflow is imported unless the object comes from it. Both are read like any
iterable of batches (a fresh pass each epoch, their own shuffling); their tensors become NumPy
arrays (`to_numpy`)."""

import warnings


def _mro_has(x, names, module_part):
    return any(c.__name__ in names and module_part in str(c.__module__)
               for c in type(x).__mro__)


def is_torch_dataloader(x):
    return _mro_has(x, ("DataLoader",), "torch.utils.data")


def is_torch_dataset(x):
    """A torch map-style or iterable Dataset that is not wrapped in a DataLoader."""
    return _mro_has(x, ("Dataset", "IterableDataset"), "torch.utils.data")


def is_tf_dataset(x):
    return _mro_has(x, ("DatasetV2", "DistributedDataset", "DistributedDatasetsFromFunction"),
                    "tensorflow.python.")


def kind(x):
    """'torch DataLoader', 'tf.data.Dataset' or None."""
    if is_torch_dataloader(x):
        return "torch DataLoader"
    if is_tf_dataset(x):
        return "tf.data.Dataset"
    return None


def check(x, y, sample_weight, class_weight):
    """Keras 3's refusals for a DataLoader / tf.data.Dataset `x` (their batches carry the
    targets and weights); a bare torch Dataset is refused with what to do instead."""
    what = kind(x)
    if what is None:
        if is_torch_dataset(x):
            raise ValueError(
                f"Unrecognized data type: x={x!r:.80} (of type {type(x)}). A torch Dataset "
                "yields single samples: wrap it in a `torch.utils.data.DataLoader(dataset, "
                "batch_size=...)` to pass it to fit/evaluate/predict.")
        return
    for value, name, desc in ((y, "y", "the targets"),
                              (sample_weight, "sample_weights", "the sample weights")):
        if value is not None:
            raise ValueError(f"When providing `x` as a {what}, `{name}` should not be "
                             f"passed. Instead, {desc} should be included as part of the "
                             f"{what}.")
    if class_weight is not None:  # Keras applies it to a tf.data.Dataset; fkeras refuses
        raise ValueError(
            f"Argument `class_weight` is not supported for {what} inputs. You can modify "
            "your pipeline to yield (inputs, targets, sample_weights) batches. Received: "
            f"class_weight={class_weight}")


def warn_shuffle_ignored(x):
    what = kind(x)
    if what == "tf.data.Dataset":
        msg = ("`shuffle=True` was passed, but will be ignored since the data `x` was "
               "provided as a tf.data.Dataset. The Dataset is expected to already be shuffled "
               "(via `.shuffle(buffer_size)`).")
    elif what == "torch DataLoader":
        msg = ("`shuffle=True` was passed, but will be ignored since the data `x` was "
               "provided as a torch DataLoader. The DataLoader is expected to already be "
               "shuffled.")
    else:
        return
    warnings.warn(msg, stacklevel=4)


def to_numpy(value):
    """A torch tensor (any device, with or without grad) or a TensorFlow eager tensor as a
    NumPy array; anything else as it is."""
    cls = type(value)
    module = cls.__module__ or ""
    if module.startswith("torch") and hasattr(value, "detach"):
        return value.detach().cpu().numpy()
    if hasattr(value, "numpy") and module.startswith("tensorflow"):
        return value.numpy()
    return value
