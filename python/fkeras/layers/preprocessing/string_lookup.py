"""StringLookup: strings to indices (Keras 3.15's `keras.layers.StringLookup`)."""

from fkeras.layers.preprocessing.index_lookup import IndexLookup


class StringLookup(IndexLookup):
    """Maps strings from a vocabulary to integer indices (or back with `invert=True`).

    Index 0 is the mask token when `mask_token` is set (in "int" mode), then
    `num_oov_indices` OOV indices, then the vocabulary. Inputs are NumPy str, bytes or
    object arrays, or (nested) lists of str; "int" output is int64, "one_hot"/"multi_hot"/
    "count" int64 (as Keras 3 returns them on torch), "tf_idf" float32.

    Args:
        max_tokens: the largest vocabulary size, special tokens included (None: no cap).
        num_oov_indices: OOV indices; with more than one, an OOV string goes to bucket
            FarmHash64(string) mod `num_oov_indices` (TensorFlow's hash). 0 makes OOV inputs
            an error.
        mask_token: the token mapped to 0 in "int" mode and dropped in the other modes.
        oov_token: the token returned for OOV indices with `invert=True` ("[UNK]").
        vocabulary: a list/array of strings or the path of a text file, one token a line.
        idf_weights: the IDF weight of each vocabulary entry ("tf_idf" only).
        invert: map indices back to strings (an object array of str).
        output_mode: "int", "one_hot", "multi_hot", "count" or "tf_idf".
        pad_to_max_tokens: pad the encoded axis to `max_tokens` (non-"int" modes).
        sparse: must be False (sparse outputs need the TensorFlow backend).
        encoding: the text encoding of bytes inputs ("utf-8").

    Example:
    ```python
    layer = StringLookup(vocabulary=["a", "b", "c", "d"])
    layer(np.array([["a", "c", "d"], ["d", "z", "b"]]))   # [[1, 3, 4], [4, 0, 2]]
    ```
    """

    def __init__(self, max_tokens=None, num_oov_indices=1, mask_token=None, oov_token="[UNK]",
                 vocabulary=None, idf_weights=None, invert=False, output_mode="int",
                 pad_to_max_tokens=False, sparse=False, encoding="utf-8", name=None,
                 salt=None, **kwargs):
        self.encoding = encoding
        kwargs.pop("vocabulary_dtype", None)
        super().__init__(max_tokens=max_tokens, num_oov_indices=num_oov_indices,
                         mask_token=mask_token, oov_token=oov_token, vocabulary=vocabulary,
                         idf_weights=idf_weights, invert=invert, output_mode=output_mode,
                         pad_to_max_tokens=pad_to_max_tokens, sparse=sparse, name=name,
                         salt=salt, vocabulary_dtype="string", **kwargs)

    @property
    def compute_dtype(self):
        return "string"

    def get_config(self):
        config = super().get_config()
        del config["vocabulary_dtype"]  # strings only: Keras does not expose it
        config["encoding"] = self.encoding
        return config
