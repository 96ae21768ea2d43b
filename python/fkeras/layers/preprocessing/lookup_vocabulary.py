"""The vocabulary state of the lookup layers: setting and checking a vocabulary (from a list,
an array or a text file), the tf_idf weights laid out as Keras 3 lays them out, and the
saving hooks Keras 3's `.keras` format calls (`save_assets`/`load_assets` for the
`vocabulary.txt` asset, `save_own_variables`/`load_own_variables` for "idf_weights").
Mixed into `IndexLookup`, which provides the index layout (`_token_start_index`, ...)."""

import collections
import os

import numpy as np

from fkeras.backend import devices as _devices
from fkeras.layers.preprocessing import lookup_tables


def listify(x):
    """Arrays and tensors as lists (for configs); other values unchanged."""
    if isinstance(x, np.ndarray):
        return x.tolist()
    if hasattr(x, "numpy") and not isinstance(x, (list, tuple)):
        return _devices.host_array(x).tolist()
    return x


class VocabularyState:
    """`set_vocabulary`, the tf_idf weights and the saving hooks of `IndexLookup`."""

    def set_vocabulary(self, vocabulary, idf_weights=None):
        """Sets the vocabulary (and, in tf_idf mode, the IDF weights) directly.

        Args:
            vocabulary: a list/tuple/1-D array of tokens, or the path of a text file with
                one token a line. Special tokens may lead it in their index order.
            idf_weights: 1-D weights, one per vocabulary entry (tf_idf mode only).
        """
        if self.output_mode == "tf_idf":
            if idf_weights is None:
                raise ValueError("`idf_weights` must be set if output_mode is 'tf_idf'.")
        elif idf_weights is not None:
            raise ValueError("`idf_weights` should only be set if output_mode is `'tf_idf'`. "
                             f"Received: output_mode={self.output_mode} and "
                             f"idf_weights={idf_weights}")
        if isinstance(vocabulary, (str, os.PathLike)):
            vocabulary = self._read_vocabulary_file(os.fspath(vocabulary))
        else:
            vocabulary = self._tokens_of(listify(vocabulary)).ravel().tolist()
        if not vocabulary:
            raise ValueError(f"Cannot set an empty vocabulary. Received: vocabulary={[]}")
        self._set_tokens(vocabulary, idf_weights)

    def _read_vocabulary_file(self, path):
        from fkeras.saving import safe_resolve

        if safe_resolve.loading_in_safe_mode():
            raise ValueError(
                "Requested the loading of a vocabulary file outside of the model archive. "
                "This carries a potential risk of loading arbitrary and sensitive files and "
                "thus it is disallowed by default. If you trust the source of the artifact, "
                "you can override this error by passing `safe_mode=False` to the loading "
                f"function. Vocabulary file: '{path}'")
        if not os.path.isfile(path):
            raise ValueError(f"Vocabulary file {path} does not exist.")
        if self.output_mode == "tf_idf":
            raise ValueError("output_mode `'tf_idf'` does not support loading a vocabulary "
                             "from file.")
        with open(path, encoding=getattr(self, "encoding", "utf-8")) as f:
            lines = f.read().splitlines()
        while lines and lines[-1] == "":
            lines.pop()
        return lines if self._is_string else [int(v) for v in lines]

    def _set_tokens(self, vocabulary, idf_weights, keep_idf=False):
        start = self._token_start_index()
        special = [self._special(self.mask_token)] * self._oov_start_index() + \
            [self._special(self.oov_token)] * self.num_oov_indices
        has_special = start > 0 and vocabulary[:start] == special
        tokens = vocabulary[start:] if has_special else vocabulary
        repeated = [t for t, c in collections.Counter(tokens).items() if c > 1]
        if repeated:
            raise ValueError("The passed vocabulary has at least one repeated term. Please "
                             f"uniquify your dataset. The repeated terms are: {repeated}")
        for what, token, active in (("mask_token", self.mask_token, True),
                                    ("oov_token", self.oov_token, self.invert)):
            token = self._special(token)
            if token is not None and active and token in tokens:
                where = [i for i, t in enumerate(vocabulary) if t == token][-1]
                raise ValueError(
                    f"Found reserved {'mask' if what == 'mask_token' else 'OOV'} token at "
                    "unexpected location in `vocabulary`. Note that passed `vocabulary` does "
                    "not need to include the OOV and mask tokens. Either remove all mask and "
                    "OOV tokens, or include them only at the start of the vocabulary in "
                    f"precisely this order: {special}. Received: {what}={token} at "
                    f"vocabulary index [{where}]")
        size = start + len(tokens)
        if self.max_tokens is not None and size > self.max_tokens:
            raise ValueError("Attempted to set a vocabulary larger than the maximum vocab "
                             f"size. Received vocabulary size is {size}; `max_tokens` is "
                             f"{self.max_tokens}.")
        if self.output_mode not in ("int",) and not self.pad_to_max_tokens and \
                self._frozen_vocab_size is not None and self._frozen_vocab_size != size \
                and getattr(self, "_called", False):
            raise RuntimeError(
                f"When using `output_mode={self.output_mode}` and `pad_to_max_tokens=False`, "
                "the vocabulary size cannot be changed after the layer is called. Old vocab "
                f"size is {self._frozen_vocab_size}, new vocab size is {size}")
        if self.output_mode == "tf_idf" and not keep_idf:
            self.idf_weights = self._padded_idf(idf_weights, len(vocabulary), has_special)
        self._tokens = list(tokens)
        self._table = lookup_tables.IndexTable(self._tokens, start, self._is_string)
        self._frozen_vocab_size = size

    def _padded_idf(self, idf_weights, vocab_len, has_special):
        weights = np.asarray(listify(idf_weights), dtype=np.float64)
        if weights.ndim != 1:
            raise ValueError("TF-IDF data must be a 1-index array. Received: "
                             f"type(idf_weights)={type(idf_weights)}")
        if len(weights) != vocab_len:
            raise ValueError("`idf_weights` must be the same length as vocabulary. "
                             f"len(idf_weights) is {len(weights)}; len(vocabulary) is "
                             f"{vocab_len}")
        front = 0 if has_special else self._token_start_index()
        fill = float(np.mean(weights)) if front else 0.0
        back = self.max_tokens - front - len(weights) if self.pad_to_max_tokens else 0
        return np.pad(weights, (front, max(back, 0)), constant_values=(fill, 0.0)) \
            .astype(np.float32)

    def _fk_named_variable_shapes(self):
        """{name: shape} of the arrays `save_own_variables` writes (Keras 3's store keys)."""
        if self.output_mode != "tf_idf":
            return {}
        depth = self._depth()
        return {"idf_weights": (depth,)} if depth is not None else {}

    def save_own_variables(self, store):
        if self.output_mode == "tf_idf" and self.idf_weights is not None:
            store["idf_weights"] = np.asarray(self.idf_weights, np.float32)

    def load_own_variables(self, store):
        if self.output_mode == "tf_idf" and "idf_weights" in store:
            self.idf_weights = np.asarray(store["idf_weights"], np.float32)

    def save_assets(self, dir_path):
        """Writes the adapted vocabulary to `dir_path/vocabulary.txt` (a given one is in
        the config instead)."""
        if self.input_vocabulary is not None or self._tokens is None:
            return
        text = "\n".join(str(w) for w in self.get_vocabulary(include_special_tokens=True))
        with open(os.path.join(dir_path, "vocabulary.txt"), "w", encoding="utf-8") as f:
            f.write(text)

    def load_assets(self, dir_path):
        if self.input_vocabulary is not None:
            return
        path = os.path.join(dir_path, "vocabulary.txt")
        if not os.path.isfile(path):
            return
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
        while lines and lines[-1] == "":
            lines.pop()
        values = lines if self._is_string else [int(v) for v in lines]
        self._set_tokens(values, None, keep_idf=True)
