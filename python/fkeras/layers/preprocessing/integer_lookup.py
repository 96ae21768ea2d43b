"""IntegerLookup: integers to indices (Keras 3.15's `keras.layers.IntegerLookup`)."""

from fkeras.layers.preprocessing.index_lookup import IndexLookup


class IntegerLookup(IndexLookup):
    """Maps integers from a vocabulary to integer indices (or back with `invert=True`).

    Same index layout and output modes as `StringLookup`, with int64 tokens.

    Args:
        max_tokens: the largest vocabulary size, special tokens included (None: no cap).
        num_oov_indices: OOV indices; with more than one, an OOV integer goes to bucket
            `token mod num_oov_indices` ("floormod") or FarmHash64(decimal text) mod
            `num_oov_indices` (`oov_method="farmhash"`). 0 makes OOV inputs an error.
        mask_token: the integer mapped to 0 in "int" mode and dropped in the other modes.
        oov_token: the integer returned for OOV indices with `invert=True` (-1).
        vocabulary: a list/array of integers or the path of a text file, one a line.
        vocabulary_dtype: must be "int64".
        idf_weights: the IDF weight of each vocabulary entry ("tf_idf" only).
        invert: map indices back to integers.
        output_mode: "int", "one_hot", "multi_hot", "count" or "tf_idf".
        sparse: must be False (sparse outputs need the TensorFlow backend).
        pad_to_max_tokens: pad the encoded axis to `max_tokens` (non-"int" modes).
        oov_method: "floormod" or "farmhash" (see `num_oov_indices`).

    Example:
    ```python
    layer = IntegerLookup(vocabulary=[12, 36, 1138, 42])
    layer(np.array([[12, 1138, 42], [42, 1000, 36]]))   # [[1, 3, 4], [4, 0, 2]]
    ```
    """

    def __init__(self, max_tokens=None, num_oov_indices=1, mask_token=None, oov_token=-1,
                 vocabulary=None, vocabulary_dtype="int64", idf_weights=None, invert=False,
                 output_mode="int", sparse=False, pad_to_max_tokens=False,
                 oov_method="floormod", salt=None, name=None, **kwargs):
        if max_tokens is not None and max_tokens <= 1:
            raise ValueError("If `max_tokens` is set for `IntegerLookup`, it must be greater "
                             f"than 1. Received: max_tokens={max_tokens}")
        if num_oov_indices < 0:
            raise ValueError("The value of `num_oov_indices` argument for `IntegerLookup` "
                             f"must >= 0. Received: num_oov_indices={num_oov_indices}")
        if vocabulary_dtype != "int64":
            raise ValueError("Only `vocabulary_dtype='int64'` is supported at this time. "
                             f"Received: vocabulary_dtype={vocabulary_dtype}")
        super().__init__(max_tokens=max_tokens, num_oov_indices=num_oov_indices,
                         mask_token=mask_token, oov_token=oov_token, vocabulary=vocabulary,
                         vocabulary_dtype=vocabulary_dtype, idf_weights=idf_weights,
                         invert=invert, output_mode=output_mode, sparse=sparse,
                         pad_to_max_tokens=pad_to_max_tokens, oov_method=oov_method,
                         salt=salt, name=name, **kwargs)

    @property
    def compute_dtype(self):
        return "int64"

    def get_config(self):
        config = super().get_config()
        for key in ("oov_token", "mask_token"):
            if config[key] is not None:
                config[key] = int(config[key])
        if config["vocabulary"] is not None:
            config["vocabulary"] = [int(v) for v in config["vocabulary"]]
        return config
