"""The lookup/text layer cases checked against real Keras 3.15 (torch backend).

Keras's StringLookup, IntegerLookup and TextVectorization need TensorFlow, which the test
environment usually lacks, so each case's Keras result is recorded in `lookup_golden.json`
(written by `python tests/layers/preprocessing/lookup_cases.py` in an environment with
keras 3.15 + tensorflow); the tests compare fkeras with that record always, and with live
Keras as well when Keras can build these layers.

A case: id, layer class name, constructor kwargs, optional adapt data (`adapt_kind`
"array", "list" or "gen": a generator over `adapt` as batches), call inputs (nested lists
and a NumPy dtype), and what to record ("out": the output; "vocab": the vocabulary and
size; "error": the exception's type and, with `msg`, its message).
"""

import json
import os

import numpy as np

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lookup_golden.json")

V = ["a", "b", "c", "d"]
IV = [12, 36, 1138, 42]
DATA = [["a", "b", "b"], ["c", "c", "c"], ["d", "d", "e"]]
TEXTS = ["The Cat sat on the mat.", "the dog; ate\tthe  CAT's food!",
         "Ünïcode ÀB café, naïve", "x\u00a0y\u2003z", ""]
S2 = [["a", "c", "a"], ["z", "b", "b"]]


def _c(id, cls, kw=None, call=None, dtype=None, adapt=None, adapt_kind="array", want="out",
       msg=True):
    return {"id": id, "cls": cls, "kw": kw or {}, "call": call, "dtype": dtype,
            "adapt": adapt, "adapt_kind": adapt_kind, "want": want, "msg": msg}


CASES = [
    # StringLookup: adapt order, max_tokens, special tokens
    _c("sl_adapt_2d", "StringLookup", adapt=DATA, want="vocab"),
    _c("sl_adapt_list", "StringLookup", adapt=["x", "y", "y", "Ü"], adapt_kind="list",
       want="vocab"),
    _c("sl_adapt_gen", "StringLookup", adapt=[["x", "y"], ["y", "z"]], adapt_kind="gen",
       want="vocab"),
    _c("sl_adapt_max", "StringLookup", {"max_tokens": 3}, adapt=DATA, want="vocab"),
    _c("sl_adapt_mask_oov2", "StringLookup", {"mask_token": "b", "num_oov_indices": 2},
       adapt=DATA, want="vocab"),
    _c("sl_adapt_then_call", "StringLookup", {"mask_token": ""}, adapt=DATA,
       call=[["a", "", "e", "zz"]], dtype="U"),
    _c("sl_int", "StringLookup", {"vocabulary": V}, [["a", "c", "d"], ["d", "z", "b"]], "U"),
    _c("sl_int_1d_object", "StringLookup", {"vocabulary": V}, ["a", "z"], "O"),
    _c("sl_int_bytes", "StringLookup", {"vocabulary": V}, [b"a", b"z"], "S"),
    _c("sl_mask", "StringLookup", {"vocabulary": V, "mask_token": ""}, [["a", "", "z"]], "U"),
    _c("sl_mask_vocab", "StringLookup", {"vocabulary": V, "mask_token": ""}, want="vocab"),
    _c("sl_special_prefix", "StringLookup", {"vocabulary": ["[UNK]", "a", "b"]},
       want="vocab"),
    _c("sl_oov_token_in_vocab", "StringLookup", {"vocabulary": ["a", "[UNK]"]},
       want="vocab"),
    _c("sl_oov0", "StringLookup", {"vocabulary": V, "num_oov_indices": 0}, [["a", "d"]], "U"),
    _c("sl_oov3_farmhash", "StringLookup", {"vocabulary": V, "num_oov_indices": 3},
       [["a", "zz", "q", "hello", "world", "x", "y", "a much longer token than sixteen",
         "and one that is longer than sixty-four bytes, to reach the long farmhash loop!"]],
       "U"),
    _c("sl_invert_1d", "StringLookup", {"vocabulary": V, "invert": True}, [1, 3, 9], "i8"),
    _c("sl_tfidf", "StringLookup", {"vocabulary": V, "output_mode": "tf_idf",
                                    "idf_weights": [0.1, 0.2, 0.3, 0.4]}, S2, "U"),
    _c("sl_tfidf_pad", "StringLookup", {"vocabulary": V, "output_mode": "tf_idf",
                                        "idf_weights": [0.1, 0.2, 0.3, 0.4], "max_tokens": 7,
                                        "pad_to_max_tokens": True}, S2, "U"),
    _c("sl_tfidf_adapt", "StringLookup", {"output_mode": "tf_idf"}, [["a", "b", "z"]], "U",
       adapt=DATA),
    _c("sl_tfidf_adapt_max", "StringLookup", {"output_mode": "tf_idf", "max_tokens": 4},
       [["a", "c", "c", "z"]], "U", adapt=[["a", "c"], ["c", "d"], ["a", "b"], ["c", "c"]]),
    # errors (construction and call)
    _c("err_tfidf_no_idf", "StringLookup", {"vocabulary": V, "output_mode": "tf_idf"},
       want="error"),
    _c("err_sparse", "StringLookup", {"sparse": True, "output_mode": "multi_hot"},
       want="error"),
    _c("err_max_tokens", "StringLookup", {"max_tokens": 1}, want="error"),
    _c("err_pad_no_max", "StringLookup", {"pad_to_max_tokens": True}, want="error"),
    _c("err_neg_oov", "StringLookup", {"num_oov_indices": -1}, want="error"),
    _c("err_mode", "StringLookup", {"output_mode": "foo"}, want="error"),
    _c("err_invert_mode", "StringLookup", {"invert": True, "output_mode": "count"},
       want="error"),
    _c("err_idf_not_tfidf", "StringLookup", {"idf_weights": [1.0]}, want="error"),
    _c("err_repeat", "StringLookup", {"vocabulary": ["a", "b", "a"]}, want="error",
       msg=False),
    _c("err_mask_in_vocab", "StringLookup", {"vocabulary": ["a", "", "b"], "mask_token": ""},
       want="error"),
    _c("err_oov_in_vocab_invert", "StringLookup", {"vocabulary": ["a", "[UNK]"],
                                                   "invert": True}, want="error"),
    _c("err_too_big", "StringLookup", {"vocabulary": ["a", "b", "c"], "max_tokens": 3},
       want="error"),
    _c("err_empty", "StringLookup", {"vocabulary": []}, want="error"),
    _c("err_multihot_no_vocab", "StringLookup", {"output_mode": "multi_hot"}, [["a"]], "U",
       want="error", msg=False),
    _c("err_oov0_call", "StringLookup", {"vocabulary": V, "num_oov_indices": 0},
       [["a", "zz"]], "U", want="error", msg=False),
    # IntegerLookup
    _c("il_int", "IntegerLookup", {"vocabulary": IV}, [[12, 1138, 42], [42, 1000, 36]], "i8"),
    _c("il_float_whole", "IntegerLookup", {"vocabulary": IV}, [[12.0, 36.0]], "f8"),
    _c("il_adapt", "IntegerLookup", adapt=[[5, 5, 7], [9, 7, 1], [0, -1, 3]], want="vocab"),
    _c("il_adapt_mask", "IntegerLookup", {"mask_token": 0},
       adapt=[[5, 5, 7], [9, 7, 0], [0, -1, 3]], want="vocab"),
    _c("il_mask", "IntegerLookup", {"vocabulary": IV, "mask_token": 0}, [[12, 0, 1000]], "i8"),
    _c("il_invert", "IntegerLookup", {"vocabulary": IV, "invert": True},
       [[1, 3, 4], [4, 0, 2]], "i8"),
    _c("il_oov3_floormod", "IntegerLookup", {"vocabulary": IV, "num_oov_indices": 3},
       [[12, 1000, 1001, 1002, -5, 7]], "i8"),
    _c("il_oov3_farmhash", "IntegerLookup", {"vocabulary": IV, "num_oov_indices": 3,
                                             "oov_method": "farmhash"},
       [[12, 1000, 1001, 1002, -5, 7]], "i8"),
    _c("il_tfidf_adapt", "IntegerLookup", {"output_mode": "tf_idf"}, [[5, 7, 7, 2]], "i8",
       adapt=[[5, 5, 7], [9, 7, 1], [5, 3, 3]]),
    _c("err_il_dtype", "IntegerLookup", {"vocabulary_dtype": "int32"}, want="error"),
    # TextVectorization
    _c("tv_default", "TextVectorization", call=TEXTS, dtype="U", adapt=TEXTS),
    _c("tv_default_vocab", "TextVectorization", adapt=TEXTS, want="vocab"),
    _c("tv_lower", "TextVectorization", {"standardize": "lower"}, adapt=TEXTS, want="vocab"),
    _c("tv_strip", "TextVectorization", {"standardize": "strip_punctuation"}, adapt=TEXTS,
       want="vocab"),
    _c("tv_none", "TextVectorization", {"standardize": None}, adapt=TEXTS, want="vocab"),
    _c("tv_char", "TextVectorization", {"split": "character", "output_sequence_length": 6},
       TEXTS[:2], "U", adapt=TEXTS),
    _c("tv_char_vocab", "TextVectorization", {"split": "character"}, adapt=TEXTS,
       want="vocab"),
    _c("tv_nosplit", "TextVectorization", {"split": None},
       [["the cat sat on the mat"], ["zz"]], "U", adapt=TEXTS),
    _c("tv_nosplit_1d", "TextVectorization", {"split": None},
       ["the cat sat on the mat", "zz"], "U", adapt=TEXTS),
    _c("tv_ngrams2", "TextVectorization", {"ngrams": 2}, ["the cat sat", "mat"], "U",
       adapt=TEXTS),
    _c("tv_ngrams13_max", "TextVectorization", {"ngrams": (1, 3), "max_tokens": 10},
       ["the cat sat on"], "U", adapt=TEXTS),
    _c("tv_ngrams13_vocab", "TextVectorization", {"ngrams": (1, 3), "max_tokens": 10},
       adapt=TEXTS, want="vocab"),
    _c("tv_seqlen", "TextVectorization", {"output_sequence_length": 4}, TEXTS, "U",
       adapt=TEXTS),
    _c("tv_column", "TextVectorization", {}, [["the cat"], ["dog food x y"]], "U",
       adapt=TEXTS),
    _c("tv_bytes", "TextVectorization", {}, [b"the cat", "caf\u00e9".encode()], "S",
       adapt=TEXTS),
    _c("tv_multi_hot", "TextVectorization", {"output_mode": "multi_hot", "max_tokens": 6},
       ["the cat the", "dog zz"], "U", adapt=TEXTS),
    _c("tv_count_pad", "TextVectorization", {"output_mode": "count", "max_tokens": 9,
                                             "pad_to_max_tokens": True},
       ["the cat the", "dog zz"], "U", adapt=TEXTS),
    _c("tv_tfidf", "TextVectorization", {"output_mode": "tf_idf", "max_tokens": 6},
       ["the cat the", "dog zz"], "U", adapt=TEXTS),
    _c("tv_tfidf_pad", "TextVectorization", {"output_mode": "tf_idf", "max_tokens": 9,
                                             "pad_to_max_tokens": True},
       ["the cat the", "dog zz"], "U", adapt=TEXTS),
    _c("tv_given_vocab", "TextVectorization",
       {"vocabulary": ["earth", "wind", "and", "fire"], "output_sequence_length": 4},
       ["earth wind and fire ok", "fire"], "U"),
    _c("tv_given_vocab_v", "TextVectorization",
       {"vocabulary": ["earth", "wind", "and", "fire"]}, want="vocab"),
    _c("tv_nosplit_seqlen", "TextVectorization",
       {"vocabulary": ["a b", "c"], "split": None, "output_sequence_length": 3},
       [["a b"], ["c"]], "U"),
    _c("err_tv_shape", "TextVectorization", {}, [["the cat", "dog"]], "U", adapt=TEXTS,
       want="error", msg=False),
    _c("err_tv_ragged", "TextVectorization", {"ragged": True}, want="error"),
    _c("err_tv_sparse", "TextVectorization", {"sparse": True, "output_mode": "count"},
       want="error"),
    _c("err_tv_standardize", "TextVectorization", {"standardize": "upper"}, want="error"),
    _c("err_tv_split", "TextVectorization", {"split": "comma"}, want="error"),
    _c("err_tv_ngrams", "TextVectorization", {"ngrams": [1, 2]}, want="error"),
    _c("err_tv_seqlen_float", "TextVectorization", {"output_sequence_length": 2.0},
       want="error"),
    _c("err_tv_seqlen_mode", "TextVectorization",
       {"output_mode": "count", "output_sequence_length": 2}, want="error"),
]


def _array(values, dtype):
    if dtype == "O":
        out = np.empty(len(values), dtype=object)
        out[:] = values
        return out
    return np.array(values, dtype=dtype)


def _adapt_data(case):
    data = case["adapt"]
    if case["adapt_kind"] == "list":
        return list(data)
    if case["adapt_kind"] == "gen":
        return (np.array(b) for b in data)
    return np.array(data)


def _plain(x):
    """A layer output (NumPy array, torch tensor, list) as (nested list, dtype kind)."""
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    if isinstance(x, list):
        return [str(v) for v in x], "str"
    x = np.asarray(x)
    if x.dtype.kind in "OUS":
        return [str(v) for v in x.ravel().tolist()], "str"
    return x.tolist(), x.dtype.name


def _kwargs(case):
    kw = dict(case["kw"])
    if isinstance(kw.get("ngrams"), list) and case["id"] != "err_tv_ngrams":
        kw["ngrams"] = tuple(kw["ngrams"])
    return kw


def run_case(layers, case):
    """The JSON-able result of `case` with the layer classes of `layers` (a module)."""
    try:
        layer = getattr(layers, case["cls"])(**_kwargs(case))
        if case["adapt"] is not None:
            layer.adapt(_adapt_data(case))
        if case["want"] == "vocab":
            vocab = layer.get_vocabulary()
            return {"vocab": [v if isinstance(v, str) else int(v) for v in vocab],
                    "size": int(layer.vocabulary_size())}
        if case["call"] is None:
            return {"built": True}
        out, dtype = _plain(layer(_array(case["call"], case["dtype"])))
        return {"out": out, "dtype": dtype}
    except Exception as e:  # the recorded outcome
        if case["want"] != "error":
            raise
        message = str(e) if case["msg"] else None
        return {"error": type(e).__name__, "msg": message}


def keras_layers_or_none():
    """keras.layers when Keras 3 can build its lookup layers here (it needs TensorFlow)."""
    os.environ.setdefault("KERAS_BACKEND", "torch")
    try:
        import keras

        keras.layers.StringLookup()
    except Exception:
        return None
    return keras.layers


def main():
    layers = keras_layers_or_none()
    if layers is None:
        raise SystemExit("keras with tensorflow is needed to record the golden results")
    import keras

    golden = {"keras_version": keras.__version__,
              "cases": {c["id"]: run_case(layers, c) for c in CASES}}
    with open(GOLDEN, "w", encoding="utf-8") as f:
        json.dump(golden, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
