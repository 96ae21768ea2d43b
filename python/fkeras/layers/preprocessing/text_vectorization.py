"""TextVectorization: raw strings to token indices or encodings (Keras 3.15 semantics).

Each string is standardized, split into tokens, optionally turned into n-grams, then looked
up in a `StringLookup` (mask token "", OOV "[UNK]") held as `_lookup_layer`, as Keras holds
it, so the `.keras` layout (assets and idf weights under `<path>/_lookup_layer` too) is
Keras's.
"""

import itertools

import numpy as np

from fkeras.engine.keras_tensor import KerasTensor
from fkeras.layers.layer import Layer
from fkeras.layers.preprocessing import lookup_tables, text_ops
from fkeras.layers.preprocessing.index_lookup import check_output_mode, refuse_sparse
from fkeras.layers.preprocessing.string_lookup import StringLookup

_STANDARDIZE = ("lower_and_strip_punctuation", "lower", "strip_punctuation")
_SPLIT = ("whitespace", "character")


def _check_choice(value, allowed, arg):
    if value is None or callable(value) or value in allowed:
        return
    raise ValueError(f"Unknown value for `{arg}` argument of TextVectorization. Allowed "
                     f"values are: {allowed}. Received: {arg}={value}")


class TextVectorization(Layer):
    """Maps raw strings to sequences of token indices or to per-document encodings.

    Args:
        max_tokens: the largest vocabulary, the mask ("") and OOV tokens included.
        standardize: "lower_and_strip_punctuation" (default), "lower", "strip_punctuation",
            None, or a callable taking a NumPy unicode array and returning strings.
        split: "whitespace" (default), "character", None (each string one token), or a
            callable taking a 1-D NumPy unicode array and returning one token list per row.
        ngrams: None, an int n (all 1..n-grams) or a tuple of widths.
        output_mode: "int" (default), "multi_hot", "count", "tf_idf", or "one_hot" (with
            `split=None`).
        output_sequence_length: "int" mode only: pad with 0 / truncate to this length
            (None: the longest row of the batch).
        pad_to_max_tokens: pad encodings to `max_tokens` ("multi_hot"/"count"/"tf_idf").
        vocabulary: a list of tokens or a text file path (then no `adapt` is needed).
        idf_weights: the IDF weights ("tf_idf" with a given vocabulary).
        sparse: must be False; ragged: must be False (both need TensorFlow).
        encoding: the encoding of bytes inputs ("utf-8").

    Inputs are NumPy str/bytes/object arrays of shape (batch,) or (batch, 1), or lists of
    str. "int", "multi_hot" and "count" outputs are int64, "tf_idf" float32.

    Example:
    ```python
    layer = TextVectorization(output_sequence_length=4)
    layer.adapt(["The cat sat.", "The dog ate."])
    layer(np.array([["the cat"], ["a dog"]]))   # [[2, 4, 0, 0], [1, 5, 0, 0]]
    ```
    """

    def __init__(self, max_tokens=None, standardize="lower_and_strip_punctuation",
                 split="whitespace", ngrams=None, output_mode="int",
                 output_sequence_length=None, pad_to_max_tokens=False, vocabulary=None,
                 idf_weights=None, sparse=False, ragged=False, encoding="utf-8", name=None,
                 **kwargs):
        refuse_sparse(sparse)
        if ragged:
            raise ValueError("`ragged=True` can only be used with the TensorFlow backend. "
                             "fkeras returns dense arrays padded with 0, as Keras 3 does on "
                             "its torch and jax backends.")
        _check_choice(standardize, _STANDARDIZE, "standardize")
        _check_choice(split, _SPLIT, "split")
        output_mode = check_output_mode(output_mode, "TextVectorization")
        if not (ngrams is None or isinstance(ngrams, int) or isinstance(ngrams, tuple)
                and all(isinstance(i, int) for i in ngrams)):
            raise ValueError("`ngrams` must be None, an integer, or a tuple of integers. "
                             f"Received: ngrams={ngrams}")
        if output_mode == "int" and not (output_sequence_length is None or
                                         isinstance(output_sequence_length, int)):
            raise ValueError("`output_sequence_length` must be either None or an integer when "
                             "`output_mode` is 'int'. Received: "
                             f"output_sequence_length={output_sequence_length}")
        if output_mode != "int" and output_sequence_length is not None:
            raise ValueError("`output_sequence_length` must not be set if `output_mode` is not "
                             "'int'. Received output_sequence_length="
                             f"{output_sequence_length}.")
        has_input_vocabulary = kwargs.pop("has_input_vocabulary", vocabulary is not None)
        vocabulary_size = kwargs.pop("vocabulary_size", None)
        kwargs.pop("dtype", None)
        super().__init__(name=name, **kwargs)
        self._standardize = standardize
        self._split = split
        self._ngrams_arg = ngrams
        self._ngrams = tuple(range(1, ngrams + 1)) if isinstance(ngrams, int) else ngrams
        self._ragged = False
        self._output_mode = output_mode
        self._output_sequence_length = output_sequence_length
        self._encoding = encoding
        self._has_input_vocabulary = has_input_vocabulary
        self._lookup_layer = StringLookup(
            max_tokens=max_tokens, vocabulary=vocabulary, idf_weights=idf_weights,
            pad_to_max_tokens=pad_to_max_tokens, mask_token="", output_mode=output_mode,
            has_input_vocabulary=has_input_vocabulary, encoding=encoding,
            vocabulary_size=vocabulary_size)
        self.built = True

    @property
    def compute_dtype(self):
        return "string"

    # ---- vocabulary ----
    def get_vocabulary(self, include_special_tokens=True):
        """The vocabulary in index order ("" and "[UNK]" first unless left out)."""
        return self._lookup_layer.get_vocabulary(include_special_tokens)

    def vocabulary_size(self):
        """The vocabulary's size, padding and OOV tokens included."""
        return self._lookup_layer.vocabulary_size()

    def set_vocabulary(self, vocabulary, idf_weights=None):
        """Sets the vocabulary (a list or a text file path) and, for "tf_idf", its weights."""
        self._lookup_layer.set_vocabulary(vocabulary, idf_weights=idf_weights)

    def adapt(self, data, batch_size=None, steps=None):
        """Learns the vocabulary from `data`: a NumPy array or list of strings (one batch),
        a `PyDataset` or any iterable of string batches (at most `steps`). Tokens are ordered
        by count, most frequent first, ties by token descending; each string is a document
        for the IDF weights."""
        self.reset_state()
        for batch in lookup_tables.adapt_batches(data, steps, self.name):
            self.update_state(batch)
        self.finalize_state()

    def update_state(self, data):
        self._lookup_layer.update_state_rows(self._token_rows(data))

    def finalize_state(self):
        self._lookup_layer.finalize_state()

    def reset_state(self):
        self._lookup_layer.reset_state()

    # ---- preprocessing ----
    def _strings(self, inputs):
        strings = lookup_tables.as_string_array(
            inputs, self._encoding, f'Layer "{self.name}" (TextVectorization)')
        if callable(self._standardize):
            result = self._standardize(text_ops.as_unicode(strings))
            return lookup_tables.as_string_array(
                np.asarray(result), self._encoding, "The `standardize` callable's result")
        if self._standardize is not None:
            strings = text_ops.object_array(
                text_ops.standardize(strings.ravel().tolist(), self._standardize),
                strings.shape)
        return strings

    def _token_rows(self, inputs):
        """(rows, shape): a list of 1-D object arrays of tokens, one per document, and the
        leading shape of the rows (None when there is no split and the input is 1-D, i.e.
        each string is looked up on its own)."""
        return self._tokenize(inputs)[0]

    def _tokenize(self, inputs):
        strings = self._strings(inputs)
        if strings.ndim == 0:
            strings = strings.reshape(1)
        if self._split is None:
            if strings.ndim == 1:
                rows, lead = [strings[i:i + 1] for i in range(len(strings))], None
            else:
                lead = strings.shape[:-1]
                rows = list(strings.reshape(-1, strings.shape[-1]))
            return [self._grams(list(r.tolist())) for r in rows], lead
        if strings.ndim > 1:
            if strings.shape[-1] != 1:
                raise ValueError("When using `TextVectorization` to tokenize strings, the "
                                 "input rank must be 1 or the last shape dimension must be 1. "
                                 f"Received: inputs.shape={strings.shape} with "
                                 f"rank={strings.ndim}")
            strings = strings.reshape(strings.shape[:-1])
        lead = strings.shape
        flat = strings.ravel()
        if callable(self._split):
            pieces = self._split(text_ops.as_unicode(flat))
            token_lists = [[str(t) for t in row] for row in pieces]
            if len(token_lists) != len(flat):
                raise ValueError(f"The `split` callable of layer '{self.name}' returned "
                                 f"{len(token_lists)} rows for {len(flat)} strings.")
        else:
            fn = text_ops.split_whitespace if self._split == "whitespace" else \
                text_ops.split_characters
            token_lists = [fn(s) for s in flat.tolist()]
        return [self._grams(t) for t in token_lists], lead

    def _grams(self, tokens):
        if self._ngrams is not None:
            return text_ops.ngrams(tokens, self._ngrams)
        return tokens

    # ---- call ----
    def compute_output_shape(self, input_shape):
        input_shape = tuple(input_shape)
        rows = input_shape[:-1] if len(input_shape) > 1 else input_shape
        if self._split is None and len(input_shape) <= 1:
            rows = input_shape
        if self._output_mode == "int":
            if self._split is None and self._output_sequence_length is None:
                return input_shape
            return rows + (self._output_sequence_length,)
        if self._output_mode == "one_hot":
            return self._lookup_layer.compute_output_shape(
                input_shape if len(input_shape) > 1 else input_shape + (1,))
        return rows + (self._lookup_layer._depth(),)

    def __call__(self, *args, **kwargs):
        if args and isinstance(args[0], (list, tuple)):
            args = (lookup_tables.as_string_array(args[0], self._encoding,
                                                  f'Layer "{self.name}"'),) + args[1:]
        return super().__call__(*args, **kwargs)

    def call(self, inputs):
        if isinstance(inputs, KerasTensor):
            dtype = "float32" if self._output_mode == "tf_idf" else "int64"
            return KerasTensor(self.compute_output_shape(inputs.shape), dtype)
        lookup = self._lookup_layer
        lookup._ensure_known_vocab_size()
        if self._output_mode == "one_hot" and self._split is not None:
            raise ValueError(f"Layer '{self.name}': output_mode='one_hot' encodes one token "
                             "per string and needs `split=None` (Keras 3 on torch fails "
                             "here too); use 'multi_hot' or 'count' for split text.")
        rows, lead = self._tokenize(inputs)
        lengths = np.fromiter((len(r) for r in rows), dtype=np.int64, count=len(rows))
        flat = text_ops.object_array(list(itertools.chain.from_iterable(rows)), (-1,))
        indices = lookup.lookup_indices(flat)
        width = int(lengths.max()) if len(lengths) else 0
        if self._output_sequence_length is not None:
            width = self._output_sequence_length
        fill = 0 if self._output_mode == "int" else -2
        out = np.full((len(rows), width), fill, dtype=np.int64)
        row = np.repeat(np.arange(len(rows)), lengths)
        position = np.arange(len(flat)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        keep = position < width
        out[row[keep], position[keep]] = indices[keep]
        if lead is None:  # no split, 1-D input: one index per string
            out = out.reshape(len(rows)) if self._output_mode == "int" else out
        else:
            out = out.reshape(tuple(lead) + (width,))
        if self._output_mode == "int":
            return out
        return lookup_tables.encode(out, self._output_mode, lookup._depth(),
                                    lookup.idf_weights)

    # ---- saving ----
    def get_config(self):
        from fkeras.saving.serialization_lib import serialize_keras_object

        lookup = self._lookup_layer
        config = super().get_config()
        config.update({
            "max_tokens": lookup.max_tokens,
            "standardize": self._standardize if not callable(self._standardize) else
            serialize_keras_object(self._standardize),
            "split": self._split if not callable(self._split) else
            serialize_keras_object(self._split),
            "ngrams": self._ngrams_arg, "output_mode": self._output_mode,
            "output_sequence_length": self._output_sequence_length,
            "pad_to_max_tokens": lookup.pad_to_max_tokens, "sparse": lookup.sparse,
            "ragged": self._ragged,
            "vocabulary": lookup.get_config()["vocabulary"],
            "idf_weights": lookup.get_config()["idf_weights"],
            "encoding": self._encoding, "vocabulary_size": self.vocabulary_size(),
        })
        return config

    @classmethod
    def from_config(cls, config):
        from fkeras.saving.serialization_lib import deserialize_keras_object

        config = dict(config)
        for key in ("standardize", "split"):
            if isinstance(config.get(key), dict):
                config[key] = deserialize_keras_object(config[key])
        if isinstance(config.get("ngrams"), list):
            config["ngrams"] = tuple(config["ngrams"])
        return cls(**config)

    def get_build_config(self):
        return {}

    def _fk_named_variable_shapes(self):
        return self._lookup_layer._fk_named_variable_shapes()

    def save_own_variables(self, store):
        self._lookup_layer.save_own_variables(store)

    def load_own_variables(self, store):
        self._lookup_layer.load_own_variables(store)

    def save_assets(self, dir_path):
        self._lookup_layer.save_assets(dir_path)

    def load_assets(self, dir_path):
        self._lookup_layer.load_assets(dir_path)
