"""Argument checks of fit / evaluate / predict and the *_on_batch methods, run before any work.

Keras 3's wording where Keras 3 raises (`batch_size should be a positive integer value, but
got batch_size=-4`); where Keras 3 silently does something else (treats 0 as "use the
default", trains on a negative `validation_split`, returns an empty history, ignores
`class_weight` keys that are not class indices) or fails with an unrelated message (a
TypeError from `range`, a ZeroDivisionError), fkeras raises a ValueError that names the
argument and quotes what it received. docs/keras_compatibility.md lists the differences.
"""

import numbers

import numpy as np


def _is_int(value):
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _is_real(value):
    return isinstance(value, (numbers.Real, np.floating, np.integer)) and not isinstance(
        value, (bool, np.bool_))


def check_positive_int(name, value, allow_none=True):
    """Raises ValueError unless `value` is an int >= 1 (or None when `allow_none`)."""
    if value is None and allow_none:
        return
    if not _is_int(value) or value < 1:
        raise ValueError(f"{name} should be a positive integer value, but got "
                         f"{name}={value!r}")


def check_steps(name, value):
    """`steps_per_epoch`, `validation_steps`, `steps`: None or a positive int."""
    if value is None:
        return
    if not _is_int(value) or value < 1:
        raise ValueError(
            f"`{name}` should be a positive integer value or None (run through the whole "
            f"data), but got {name}={value!r}"
        )


def check_verbose(verbose):
    """'auto', 0, 1 or 2 (True/False count as 1/0)."""
    if isinstance(verbose, str):
        if verbose == "auto":
            return
    elif isinstance(verbose, (bool, np.bool_)) or _is_int(verbose) and 0 <= verbose <= 2:
        return
    raise ValueError(f"`verbose` should be 'auto', 0 (silent), 1 (progress bar) or 2 (one line "
                     f"per epoch), but got verbose={verbose!r}")


def check_class_weight(class_weight):
    """None or a dict {class index (int >= 0): weight (a finite number)}."""
    if class_weight is None:
        return
    if not isinstance(class_weight, dict):
        raise ValueError("`class_weight` should be a dict mapping class indices to weights, "
                         f"but got class_weight={class_weight!r} of type "
                         f"{type(class_weight).__name__}")
    for key, weight in class_weight.items():
        integral = _is_int(key) or (_is_real(key) and float(key).is_integer())
        if not integral or key < 0:
            raise ValueError(
                "`class_weight` keys should be class indices (non-negative integers), but got "
                f"the key {key!r} in class_weight={class_weight!r}"
            )
        if not _is_real(weight) or not np.isfinite(weight):
            raise ValueError(
                "`class_weight` values should be finite numbers, but got "
                f"class_weight[{key!r}]={weight!r}"
            )


def _check_validation_split(validation_split):
    if not _is_real(validation_split) or not 0.0 <= float(validation_split) < 1.0:
        raise ValueError(
            "`validation_split` should be a float in [0, 1) (the fraction of the data held "
            f"out for validation), but got validation_split={validation_split!r}"
        )


def _check_validation_freq(validation_freq):
    if _is_int(validation_freq):
        if validation_freq >= 1:
            return
    elif isinstance(validation_freq, (list, tuple, set, range)):
        if all(_is_int(e) and e >= 1 for e in validation_freq):
            return
    else:
        raise ValueError("Expected `validation_freq` to be a list or int. Received: "
                         f"validation_freq={validation_freq!r} of the type "
                         f"{type(validation_freq)}.")
    raise ValueError(
        "`validation_freq` should be a positive integer (validate every N epochs) or a list "
        f"of 1-based epoch numbers, but got validation_freq={validation_freq!r}"
    )


def _check_epochs(epochs, initial_epoch):
    check_positive_int("epochs", epochs, allow_none=False)
    if not _is_int(initial_epoch) or initial_epoch < 0:
        raise ValueError("`initial_epoch` should be a non-negative integer value, but got "
                         f"initial_epoch={initial_epoch!r}")
    if initial_epoch >= epochs:
        raise ValueError(
            f"`initial_epoch` should be smaller than `epochs`: fit runs the epochs "
            f"initial_epoch to epochs - 1, so initial_epoch={initial_epoch} with "
            f"epochs={epochs} would train nothing (`epochs` is the index of the last epoch, "
            "not a number of epochs to add)."
        )


def check_fit_args(x, batch_size, epochs, verbose, validation_split, class_weight,
                   initial_epoch, steps_per_epoch, validation_steps, validation_batch_size,
                   validation_freq):
    """Every argument of `fit` that has a fixed domain, before any data is touched."""
    check_data_given("fit", x)
    check_positive_int("batch_size", batch_size)
    _check_epochs(epochs, initial_epoch)
    check_verbose(verbose)
    _check_validation_split(validation_split)
    check_class_weight(class_weight)
    check_steps("steps_per_epoch", steps_per_epoch)
    check_steps("validation_steps", validation_steps)
    check_positive_int("validation_batch_size", validation_batch_size)
    _check_validation_freq(validation_freq)


def check_evaluate_args(x, batch_size, verbose, steps):
    check_data_given("evaluate", x)
    check_positive_int("batch_size", batch_size)
    check_verbose(verbose)
    check_steps("steps", steps)


def check_predict_args(x, batch_size, verbose, steps):
    check_data_given("predict", x)
    check_positive_int("batch_size", batch_size)
    check_verbose(verbose)
    check_steps("steps", steps)


def check_data_given(method, x):
    if x is None:
        raise ValueError(f"`{method}` needs input data: got x=None. Pass arrays (or a "
                         "dataset/generator of batches) as `x`.")


def check_not_empty(method, n_samples, what="x"):
    """Raises ValueError for data with no samples (Keras 3 would return a made-up value or
    fail inside its data adapter)."""
    if n_samples == 0:
        raise ValueError(f"Expected input data to be non-empty: `{method}` received `{what}` "
                         "with 0 samples.")
