"""IndexLookup: the shared logic of StringLookup and IntegerLookup (Keras 3.15 semantics).

Index layout (as Keras): [mask] [OOV x num_oov_indices] [tokens...]. The mask slot exists
only with a `mask_token` in "int" mode; in the other modes mask tokens are dropped from the
encoding. A vocabulary comes from `vocabulary=` (list/array or a text file, one token a
line), `set_vocabulary()` or `adapt()` (count descending, ties by token descending).
Adapted vocabularies are saved as a `vocabulary.txt` asset in the `.keras` file, given ones
in the config; tf_idf weights go to the weights file under "idf_weights", as Keras 3 does.
"""

import collections
import os

import numpy as np

from fkeras.backend import devices as _devices
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.layers.layer import Layer
from fkeras.layers.preprocessing import lookup_tables, oov_hashing
from fkeras.layers.preprocessing.lookup_vocabulary import VocabularyState, listify

_MODES = ("int", "one_hot", "multi_hot", "count", "tf_idf")


def check_output_mode(output_mode, caller):
    """Keras's aliases ("binary", "tf-idf") resolved, anything unknown refused."""
    output_mode = {"binary": "multi_hot", "tf-idf": "tf_idf"}.get(output_mode, output_mode)
    if output_mode not in _MODES:
        raise ValueError(f"Unknown value for `output_mode` argument of {caller}. Allowed "
                         f"values are: {_MODES}. Received: output_mode={output_mode}")
    return output_mode


def refuse_sparse(sparse):
    if sparse:
        raise ValueError("`sparse=True` can only be used with the TensorFlow backend. fkeras "
                         "returns dense NumPy arrays, as Keras 3 does on its torch and jax "
                         "backends.")


class IndexLookup(VocabularyState, Layer):
    """Maps tokens to indices (or back, with `invert=True`) through a vocabulary.

    Not a public Keras class: `StringLookup` and `IntegerLookup` subclass it and fix the
    token type (`vocabulary_dtype` "string" or "int64"). Arguments are Keras 3.15's (see
    `StringLookup`).
    """

    def __init__(self, max_tokens, num_oov_indices, mask_token, oov_token, vocabulary_dtype,
                 vocabulary=None, idf_weights=None, invert=False, output_mode="int",
                 sparse=False, pad_to_max_tokens=False, oov_method="floormod", name=None,
                 salt=None, **kwargs):
        caller = type(self).__name__
        if max_tokens is not None and max_tokens <= 1:
            raise ValueError("If set, `max_tokens` must be greater than 1. Received: "
                             f"max_tokens={max_tokens}")
        if pad_to_max_tokens and max_tokens is None:
            raise ValueError("If pad_to_max_tokens is True, must set `max_tokens`. Received: "
                             f"max_tokens={max_tokens}")
        if num_oov_indices < 0:
            raise ValueError("`num_oov_indices` must be greater than or equal to 0. Received: "
                             f"num_oov_indices={num_oov_indices}")
        if oov_method not in ("floormod", "farmhash"):
            raise ValueError(f"Unknown value for `oov_method` argument of {caller}. Allowed "
                             "values are: ('floormod', 'farmhash'). Received: "
                             f"oov_method={oov_method}")
        output_mode = check_output_mode(output_mode, caller)
        if invert and output_mode != "int":
            raise ValueError("`output_mode` must be `'int'` when `invert` is true. Received: "
                             f"output_mode={output_mode}")
        if sparse and output_mode == "int":
            raise ValueError("`sparse` may only be true if `output_mode` is `'one_hot'`, "
                             f"`'multi_hot'`, `'count'` or `'tf_idf'`. Received: sparse={sparse}"
                             f" and output_mode={output_mode}")
        refuse_sparse(sparse)
        if idf_weights is not None and output_mode != "tf_idf":
            raise ValueError("`idf_weights` should only be set if `output_mode` is "
                             f"`'tf_idf'`. Received: idf_weights={idf_weights} and "
                             f"output_mode={output_mode}")
        if salt is not None:
            raise ValueError(f"{caller}: `salt` (SipHash OOV buckets) is not supported by "
                             f"fkeras. Received: salt={salt}")
        frozen = kwargs.pop("vocabulary_size", None)
        has_input_vocabulary = kwargs.pop("has_input_vocabulary", vocabulary is not None)
        kwargs.pop("dtype", None)
        super().__init__(name=name, **kwargs)
        self.invert = bool(invert)
        self.max_tokens = max_tokens
        self.num_oov_indices = int(num_oov_indices)
        self.mask_token = mask_token
        self.oov_token = oov_token
        self.output_mode = output_mode
        self.sparse = bool(sparse)
        self.pad_to_max_tokens = bool(pad_to_max_tokens)
        self.vocabulary_dtype = vocabulary_dtype
        self.oov_method = oov_method
        self.salt = salt
        self._is_string = vocabulary_dtype == "string"
        self._frozen_vocab_size = frozen
        # A vocabulary given as a list stays in the config; a file path becomes an asset.
        self.input_vocabulary = None if isinstance(vocabulary, (str, os.PathLike)) \
            else vocabulary
        self.input_idf_weights = idf_weights
        self._has_input_vocabulary = bool(has_input_vocabulary)
        self._tokens = None          # the learned/given tokens, special tokens excluded
        self._table = None
        self.idf_weights = None      # float32 array (tf_idf), special slots included
        self.built = True
        if output_mode == "tf_idf" and self._has_input_vocabulary and idf_weights is None:
            raise ValueError("When specifying the `vocabulary` argument, in TF-IDF output "
                             "mode, the `idf_weights` argument must also be provided.")
        if vocabulary is not None:
            self.set_vocabulary(vocabulary, idf_weights)
        self.reset_state()

    # ---- index layout ----
    def _oov_start_index(self):
        return 1 if self.mask_token is not None and self.output_mode == "int" else 0

    def _token_start_index(self):
        return self._oov_start_index() + self.num_oov_indices

    def _depth(self):
        return self.max_tokens if self.pad_to_max_tokens else self._frozen_vocab_size

    # ---- tokens of the right type ----
    def _tokens_of(self, data):
        what = f'Layer "{self.name}" ({type(self).__name__})'
        if self._is_string:
            return lookup_tables.as_string_array(data, getattr(self, "encoding", "utf-8"), what)
        return lookup_tables.as_integer_array(data, what)

    def _special(self, value):
        if value is None or self._is_string:
            return value
        return int(value)

    # ---- vocabulary ----
    def vocabulary_size(self):
        """The vocabulary's size, mask and OOV indices included."""
        return (len(self._tokens) if self._tokens is not None else 0) + \
            self._token_start_index()

    def get_vocabulary(self, include_special_tokens=True):
        """The vocabulary, index order (a token's position is its index with
        `include_special_tokens=True`; without, mask and OOV tokens are left out)."""
        tokens = list(self._tokens) if self._tokens is not None else []
        special = [self._special(self.oov_token)] * self._token_start_index()
        if self._oov_start_index():
            special[0] = self._special(self.mask_token)
        vocab = special + tokens
        return vocab if include_special_tokens else vocab[self._token_start_index():]

    # ---- adapt ----
    def reset_state(self):
        self._token_counts = collections.Counter()
        self._document_counts = collections.Counter()
        self._num_documents = 0

    def update_state(self, data):
        """Counts the tokens of one batch (rows are documents for tf_idf)."""
        if self._has_input_vocabulary:
            raise ValueError(f"Cannot adapt layer '{self.name}' after setting a static "
                             "vocabulary via `vocabulary` argument or `set_vocabulary()` "
                             "method.")
        self.update_state_rows(self._adapt_tokens(data))

    def update_state_rows(self, rows):
        """Counts the tokens of a list of documents (1-D token arrays)."""
        if self._has_input_vocabulary:
            raise ValueError(f"Cannot adapt layer '{self.name}' after setting a static "
                             "vocabulary via `vocabulary` argument or `set_vocabulary()` "
                             "method.")
        self._count_documents(rows)

    def _adapt_tokens(self, data):
        if isinstance(data, list) and data and isinstance(data[0], (list, np.ndarray)) and \
                len({len(r) for r in data}) > 1:
            return [self._tokens_of(r).ravel() for r in data]  # ragged rows
        tokens = self._tokens_of(data)
        if tokens.ndim == 0:
            tokens = tokens.reshape(1)
        if tokens.ndim == 1:
            tokens = tokens.reshape(1, -1)
        return [row.ravel() for row in tokens.reshape(tokens.shape[0], -1)]

    def _count_documents(self, rows):
        for row in rows:
            values = row.tolist() if isinstance(row, np.ndarray) else list(row)
            self._token_counts.update(values)
            if self.output_mode == "tf_idf":
                self._document_counts.update(set(values))
        self._num_documents += len(rows)

    def adapt(self, data, steps=None):
        """Computes the vocabulary from `data`: a NumPy array or list (one batch), a
        `PyDataset` or an iterable of batches (at most `steps` of them). Tokens are ordered
        by count, most frequent first, ties by token descending; with `max_tokens`, only the
        most frequent are kept. In tf_idf mode each row is a document for the IDF weights."""
        self.reset_state()
        for batch in lookup_tables.adapt_batches(data, steps, self.name):
            if isinstance(batch, (np.ndarray, list, tuple)) and not isinstance(batch, str):
                array = np.asarray(batch, dtype=object) if isinstance(batch, (list, tuple)) \
                    else batch
                if array.ndim == 1 and data is batch:
                    batch = array.reshape(-1, 1)  # a 1-D dataset: one token per document
            self.update_state(batch)
        self.finalize_state()

    def finalize_state(self):
        """Turns the counts of `update_state` into the vocabulary."""
        if self._has_input_vocabulary or not self._token_counts:
            return
        counts = dict(self._token_counts)
        for token in (self.mask_token, self.oov_token):
            counts.pop(self._special(token), None)
        tokens = lookup_tables.ordered_vocabulary(counts, self._is_string)
        if self.max_tokens:
            tokens = tokens[:self.max_tokens - self._token_start_index()]
        idf = None
        if self.output_mode == "tf_idf":
            df = np.array([self._document_counts[t] for t in tokens], dtype=np.float64)
            idf = np.log(1.0 + self._num_documents / (1.0 + df))
        self._frozen_vocab_size = None
        self._set_tokens(tokens, idf)
        self.reset_state()

    # ---- call ----
    def compute_output_shape(self, input_shape):
        input_shape = tuple(input_shape)
        if self.output_mode == "int":
            return input_shape
        depth = self._depth()
        if self.output_mode == "one_hot":
            if len(input_shape) > 1 and input_shape[-1] == 1:
                return input_shape[:-1] + (depth,)
            return input_shape + (depth,)
        return input_shape[:-1] + (depth,)

    def _output_dtype(self):
        if self.invert:
            return "string" if self._is_string else "int64"
        return "float32" if self.output_mode == "tf_idf" else "int64"

    def __call__(self, *args, **kwargs):
        if args and isinstance(args[0], (list, tuple)):
            args = (self._tokens_of(args[0]) if not self.invert else
                    np.asarray(args[0]),) + args[1:]
        return super().__call__(*args, **kwargs)

    def call(self, inputs):
        if isinstance(inputs, KerasTensor):
            return KerasTensor(self.compute_output_shape(inputs.shape), self._output_dtype())
        self._ensure_known_vocab_size()
        self._called = True
        if self.invert:
            return self._invert(_devices.host_array(inputs))
        return self.lookup(self._tokens_of(inputs))

    def lookup(self, tokens):
        """The indices of a token array (object array of str or int64 array), encoded by
        `output_mode`."""
        indices = self.lookup_indices(tokens)
        if self.output_mode == "int":
            return indices
        return lookup_tables.encode(indices, self.output_mode, self._depth(), self.idf_weights)

    def lookup_indices(self, tokens):
        """The raw indices of a token array: mask tokens give 0 in "int" mode and -2 (dropped
        by the encodings) otherwise; OOV tokens their OOV index."""
        if self._table is None:
            raise RuntimeError(f"Layer '{self.name}' has no vocabulary: pass `vocabulary=` "
                               "to the layer, call `set_vocabulary()`, or call `adapt()` with "
                               "some sample data before calling it.")
        default = -1 if self.num_oov_indices != 1 else self._oov_start_index()
        indices = self._table.lookup(tokens, default)
        if self.num_oov_indices > 1:
            misses = indices == -1
            if misses.any():
                indices[misses] = self._oov_start_index() + oov_hashing.buckets(
                    tokens[misses], self.num_oov_indices, self._is_string, self.oov_method)
        if self.mask_token is not None:
            masked = tokens == self._special(self.mask_token)
            indices[masked] = 0 if self.output_mode == "int" else -2
        if self.num_oov_indices == 0 and (indices == -1).any():
            bad = tokens[indices == -1]
            raise RuntimeError("When `num_oov_indices=0` all inputs should be in vocabulary, "
                               f"found OOV values {bad.tolist()}, consider setting "
                               "`num_oov_indices=1`.")
        return indices

    def _invert(self, indices):
        if self._table is None:
            raise RuntimeError(f"Layer '{self.name}' has no vocabulary to invert: pass "
                               "`vocabulary=` or call `set_vocabulary()` or `adapt()` first.")
        indices = lookup_tables.as_integer_array(indices, f'Layer "{self.name}" (invert=True)')
        vocab = self.get_vocabulary()
        oov = self._special(self.oov_token)
        if self._is_string:
            table = np.empty(len(vocab), dtype=object)
            table[:] = vocab
        else:
            table = np.asarray(vocab, dtype=np.int64)
        start = self._token_start_index()
        known = (indices >= start) & (indices < len(vocab))
        out = np.where(known, table[np.clip(indices, 0, len(vocab) - 1)], oov)
        if self.mask_token is not None:
            out = np.where(indices == 0, self._special(self.mask_token), out)
        return out.astype(object if self._is_string else np.int64)

    def _ensure_known_vocab_size(self):
        if self.output_mode == "int" or self.pad_to_max_tokens:
            return
        if self._frozen_vocab_size is None:
            raise RuntimeError(
                f"When using `output_mode={self.output_mode}` and `pad_to_max_tokens=False`, "
                "you must set the layer's vocabulary before calling it. Either pass a "
                "`vocabulary` argument to the layer, or call `adapt` with some sample data.")

    # ---- saving ----
    def get_config(self):
        config = super().get_config()
        config.update({
            "invert": self.invert, "max_tokens": self.max_tokens,
            "num_oov_indices": self.num_oov_indices, "oov_token": self.oov_token,
            "mask_token": self.mask_token, "output_mode": self.output_mode,
            "sparse": self.sparse, "pad_to_max_tokens": self.pad_to_max_tokens,
            "vocabulary_dtype": self.vocabulary_dtype,
            "idf_weights": listify(self.input_idf_weights),
            "vocabulary": listify(self.input_vocabulary),
            "vocabulary_size": self._frozen_vocab_size,
            "oov_method": self.oov_method, "salt": self.salt,
        })
        return config

    def get_build_config(self):
        return {}
