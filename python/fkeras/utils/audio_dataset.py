"""keras.utils.audio_dataset_from_directory: batches of WAV audio and labels from a directory.

WAV files are decoded with the standard library's `wave` module (integer PCM of 8, 16, 24 or
32 bits) to float32 in [-1, 1), shape (samples, channels), as TensorFlow's `decode_wav` gives
them. Labels come from the class sub-directories as the image and text loaders infer them.
"""

import os

import numpy as np

ALLOWED_FORMATS = (".wav",)


def _check_arguments(labels, label_mode, class_names, ragged, output_sequence_length,
                     sampling_rate, validation_split, subset, shuffle, seed):
    if labels not in ("inferred", None):
        if not isinstance(labels, (list, tuple)):
            raise ValueError("The `labels` argument should be a list/tuple of integer labels, "
                             "of the same size as the number of audio files in the target "
                             f"directory, 'inferred' or None. Received: labels={labels}")
        if class_names:
            raise ValueError("You can only pass `class_names` if `labels=\"inferred\"`. "
                             f"Received: labels={labels}, and class_names={class_names}")
    if label_mode not in ("int", "categorical", "binary", None):
        raise ValueError('`label_mode` argument must be one of "int", "categorical", '
                         f'"binary", or None. Received: label_mode={label_mode}')
    if ragged and output_sequence_length is not None:
        raise ValueError("Cannot set both `ragged` and `output_sequence_length`")
    if sampling_rate is not None and (isinstance(sampling_rate, bool)
                                      or not isinstance(sampling_rate, int)):
        raise ValueError("`sampling_rate` should have an integer value. "
                         f"Received: sampling_rate={sampling_rate}")
    if sampling_rate is not None and sampling_rate <= 0:
        raise ValueError("`sampling_rate` should be higher than 0. "
                         f"Received: sampling_rate={sampling_rate}")
    if validation_split is not None and not 0 < validation_split < 1:
        raise ValueError("`validation_split` must be between 0 and 1, received: "
                         f"{validation_split}")
    if (validation_split or subset) and not (validation_split and subset):
        raise ValueError("If `subset` is set, `validation_split` must be set, and inversely.")
    if subset not in ("training", "validation", "both", None):
        raise ValueError('`subset` must be either "training", "validation" or "both", '
                         f"received: {subset}")
    if validation_split and shuffle and seed is None:
        raise ValueError("If using `validation_split` and shuffling the data, you must "
                         "provide a `seed` argument, to make sure that there is no overlap "
                         "between the training and validation subset.")


def _wav_files(folder, follow_links):
    found = []
    for root, dirs, files in os.walk(folder, followlinks=follow_links):
        dirs.sort()
        found.extend(os.path.join(root, f) for f in sorted(files)
                     if f.lower().endswith(ALLOWED_FORMATS))
    return found


def _index(directory, labels, class_names, follow_links):
    """(paths, integer labels or None, class names) in Keras's order."""
    if labels == "inferred":
        subdirs = sorted(d for d in os.listdir(directory)
                         if os.path.isdir(os.path.join(directory, d)))
        if class_names is not None:
            if sorted(class_names) != sorted(subdirs) and set(class_names) != set(subdirs):
                raise ValueError("The `class_names` passed did not match the names of the "
                                 f"subdirectories of the target directory. Expected: {subdirs} "
                                 f"(or a subset of it), but received: class_names="
                                 f"{class_names}")
            subdirs = list(class_names)
        paths, ints = [], []
        for i, name in enumerate(subdirs):
            files = _wav_files(os.path.join(directory, name), follow_links)
            paths += files
            ints += [i] * len(files)
        return paths, np.asarray(ints, np.int32), list(subdirs)
    paths = _wav_files(directory, follow_links)
    if labels is None:
        return paths, None, None
    if len(labels) != len(paths):
        raise ValueError("Expected the lengths of `labels` to match the number of files in "
                         f"the target directory. len(labels) is {len(labels)} while we found "
                         f"{len(paths)} files in directory {directory}.")
    ints = np.asarray(labels, np.int32)
    return paths, ints, [str(c) for c in sorted(set(ints.tolist()))]


def read_wav(path, sampling_rate=None, output_sequence_length=None):
    """The audio of a WAV file as float32 (samples, channels) in [-1, 1).

    `sampling_rate` resamples (linear interpolation) when the file's rate differs;
    `output_sequence_length` truncates or zero-pads to that many samples.
    """
    import wave

    with wave.open(path, "rb") as f:
        width, channels, rate = f.getsampwidth(), f.getnchannels(), f.getframerate()
        raw = f.readframes(f.getnframes())
    if width == 1:  # 8-bit WAV is unsigned
        audio = (np.frombuffer(raw, np.uint8).astype(np.float32) - 128.0) / 128.0
    elif width == 3:
        b = np.frombuffer(raw, np.uint8).reshape(-1, 3).astype(np.int32)
        signed = (b[:, 0] | (b[:, 1] << 8) | (b[:, 2] << 16)) << 8 >> 8
        audio = signed.astype(np.float32) / float(1 << 23)
    elif width in (2, 4):
        dtype = np.dtype("<i2") if width == 2 else np.dtype("<i4")
        audio = np.frombuffer(raw, dtype).astype(np.float32) / float(1 << (8 * width - 1))
    else:
        raise ValueError(f"Unsupported WAV sample width of {width} bytes in {path}.")
    audio = audio.reshape(-1, channels)
    if sampling_rate is not None and sampling_rate != rate and len(audio):
        count = int(round(len(audio) * sampling_rate / rate))
        old_t = np.arange(len(audio)) / rate
        new_t = np.arange(count) / sampling_rate
        audio = np.stack([np.interp(new_t, old_t, audio[:, c]) for c in range(channels)],
                         -1).astype(np.float32)
    if output_sequence_length is not None:
        audio = audio[:output_sequence_length]
        if len(audio) < output_sequence_length:
            audio = np.pad(audio, ((0, output_sequence_length - len(audio)), (0, 0)))
    return audio


def _encode(labels, label_mode, num_classes):
    if label_mode == "binary":
        return labels.astype(np.float32)[:, None]
    if label_mode == "categorical":
        return np.eye(num_classes, dtype=np.float32)[labels]
    return labels


class AudioDataset:
    """The batches `audio_dataset_from_directory` returns: iterate for `(audio, labels)`
    (or `audio` alone without labels); `class_names` and `file_paths` as Keras has them.

    Batches are padded with zeros to their longest clip (or a list of arrays with
    `ragged=True`); with `shuffle`, each pass draws a new order from the seed.
    """

    def __init__(self, file_paths, labels, batch_size, shuffle, seed, class_names, ragged,
                 read):
        self.file_paths, self._labels = list(file_paths), labels
        self.batch_size, self._shuffle, self.class_names = batch_size, shuffle, class_names
        self._rng = np.random.default_rng(seed)
        self._ragged, self._read = ragged, read

    def __len__(self):
        if self.batch_size is None:
            return len(self.file_paths)
        return -(-len(self.file_paths) // self.batch_size)

    def _batch(self, chosen):
        clips = [self._read(self.file_paths[i]) for i in chosen]
        if not self._ragged:
            longest = max(len(c) for c in clips)
            clips = np.stack([np.pad(c, ((0, longest - len(c)), (0, 0))) for c in clips])
        if self._labels is None:
            return clips
        return clips, self._labels[np.asarray(chosen)]

    def __iter__(self):
        order = np.arange(len(self.file_paths))
        if self._shuffle:
            self._rng.shuffle(order)
        if self.batch_size is None:
            for i in order:
                out = self._batch([i])
                yield (out[0][0], out[1][0]) if isinstance(out, tuple) else out[0]
            return
        for start in range(0, len(order), self.batch_size):
            yield self._batch(order[start:start + self.batch_size].tolist())

    def __repr__(self):
        return (f"<AudioDataset: {len(self.file_paths)} files, batch_size={self.batch_size}, "
                f"class_names={self.class_names}>")


def audio_dataset_from_directory(directory, labels="inferred", label_mode="int",
                                 class_names=None, batch_size=32, sampling_rate=None,
                                 output_sequence_length=None, ragged=False, shuffle=True,
                                 seed=None, validation_split=None, subset=None,
                                 follow_links=False, verbose=True):
    """Batches of WAV audio (and labels) from `directory` (keras.utils.audio_dataset_from_directory).

    With `labels="inferred"`, `directory` holds one sub-directory per class
    (`class_a/x.wav`, ...) and labels are the class indices in alphanumeric order (or in
    `class_names`' order). `labels` may instead be a list of integers, one per file in
    alphanumeric path order, or None for audio only.

    Args:
        directory: the data directory.
        labels: "inferred", a list/tuple of ints, or None.
        label_mode: "int" (int32), "categorical" (one-hot float32), "binary" (float32,
            (batch, 1), 2 classes) or None (no labels).
        class_names: the class sub-directories to use, in label order ("inferred" only).
        batch_size: clips per batch; None yields single clips.
        sampling_rate: resample every clip to this rate (linear interpolation; Keras needs
            tensorflow-io for it).
        output_sequence_length: truncate or zero-pad clips to this length; None pads each
            batch to its longest clip.
        ragged: yield each batch as a list of clips of their own lengths.
        shuffle, seed: shuffle the files (once, before the split, as Keras) and every pass.
        validation_split, subset: hold out the last `validation_split` of the files;
            subset "training", "validation" or "both" (a [training, validation] list).
        follow_links: follow symbolic links to sub-directories.
        verbose: print how many files and classes were found.

    Returns:
        An AudioDataset (or two with subset="both").

    Example:
    ```python
    train, val = fkeras.utils.audio_dataset_from_directory(
        "speech/", validation_split=0.2, subset="both", seed=1, output_sequence_length=16000)
    model.fit(train, validation_data=val)
    ```
    """
    _check_arguments(labels, label_mode, class_names, ragged, output_sequence_length,
                     sampling_rate, validation_split, subset, shuffle, seed)
    if labels is None or label_mode is None:
        labels, label_mode = None, None
    if seed is None:
        seed = int(np.random.randint(1_000_000))
    paths, ints, names = _index(directory, labels if labels is not None else None,
                                class_names, follow_links)
    if labels is None and names is None:
        ints = None
    if label_mode == "binary" and len(names or ()) != 2:
        raise ValueError('When passing `label_mode="binary"`, there must be exactly 2 '
                         f"class_names. Received: class_names={names}")
    if verbose:
        print(f"Found {len(paths)} files" + (f" belonging to {len(names)} classes."
                                             if names is not None else "."))
    if shuffle:  # one fixed permutation of files and labels, from the seed
        order = np.random.RandomState(seed).permutation(len(paths))
        paths = [paths[i] for i in order]
        ints = None if ints is None else ints[order]
    encoded = None if ints is None else _encode(ints, label_mode, len(names or ()))

    def read(path):
        return read_wav(path, sampling_rate, output_sequence_length)

    def part(which, shuffled):
        held = int(validation_split * len(paths)) if validation_split else 0
        if which == "validation":
            chosen = slice(len(paths) - held, len(paths))
        else:
            chosen = slice(0, len(paths) - held)
        part_paths = paths[chosen]
        if not part_paths:
            label = {"training": "training ", "validation": "validation "}.get(which, "")
            raise ValueError(f"No {label}audio files found in directory {directory}. "
                             f"Allowed format(s): {ALLOWED_FORMATS}")
        part_labels = None if encoded is None else encoded[chosen]
        return AudioDataset(part_paths, part_labels, batch_size, shuffled, seed, names,
                            ragged, read)

    if subset == "both":
        return [part("training", shuffle), part("validation", False)]
    return part(subset, shuffle)
