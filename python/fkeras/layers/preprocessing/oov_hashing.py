"""Out-of-vocabulary buckets of the lookup layers when `num_oov_indices > 1`.

Keras 3 puts an integer token in bucket `token mod n` ("floormod", the default) and a string
token (or an integer with `oov_method="farmhash"`, as its decimal text) in bucket
`Fingerprint64(utf-8 bytes) mod n`, TensorFlow's `to_hash_bucket_fast`, with the Hashing
layer's Fingerprint64 (hash_functions.py; checked against TensorFlow in the tests).
"""

import numpy as np

from fkeras.layers.preprocessing.hash_functions import fingerprint64


def buckets(tokens, num_buckets, is_string, oov_method="floormod"):
    """OOV bucket (0..num_buckets-1) of each token of a 1-D array (str objects or int64)."""
    if not is_string and oov_method == "floormod":
        return np.mod(tokens.astype(np.int64), num_buckets)
    texts = tokens.tolist() if is_string else [str(int(t)) for t in tokens.tolist()]
    return np.array([fingerprint64(t.encode("utf-8")) % num_buckets for t in texts],
                    dtype=np.int64)
