"""Writes `keras_text_model.keras` and `keras_text_model.json` with real Keras 3.15 (torch
backend + TensorFlow, which Keras's lookup layers need): a model with an adapted tf_idf
TextVectorization, an adapted StringLookup feeding an Embedding, and an IntegerLookup with a
given vocabulary, and the outputs Keras computes for `INPUTS` (layer by layer: Keras 3 on
torch cannot run a Functional model on NumPy strings). Run:
`KERAS_BACKEND=torch python tests/layers/preprocessing/make_keras_text_model.py`."""

import json
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
TEXTS = ["The cat sat.", "the dog, the cat!", "A bird", "dogs and cats", "the bird sang"]
WORDS = [["a", "b", "b"], ["c", "c", "c"], ["d", "d", "e"]]
INPUTS = {"text": [["the cat"], ["zzz bird"], ["dog and the dog"]],
          "words": [["a", "b", "q"], ["e", "e", "c"], ["d", "a", "a"]],
          "ints": [[3, 9, 3], [4, 5, 6], [9, 9, 9]]}


def build(layers, Input, Model):
    """The model, built with the given library's classes (keras or fkeras)."""
    tv = layers.TextVectorization(max_tokens=10, output_mode="tf_idf", name="tv")
    tv.adapt(np.array(TEXTS))
    sl = layers.StringLookup(name="sl")
    sl.adapt(np.array(WORDS))
    il = layers.IntegerLookup(vocabulary=[3, 4, 9], output_mode="multi_hot", name="il")
    text = Input(shape=(1,), dtype="string", name="text")
    words = Input(shape=(3,), dtype="string", name="words")
    ints = Input(shape=(3,), dtype="int64", name="ints")
    a = layers.Dense(2, name="dense_tv")(tv(text))
    e = layers.Embedding(sl.vocabulary_size(), 4, name="emb")(sl(words))
    b = layers.Dense(2, name="dense_sl")(layers.GlobalAveragePooling1D(name="gap")(e))
    return Model([text, words, ints], [a, b, il(ints)])


def keras_outputs(model):
    import keras

    x = {k: np.array(v) for k, v in INPUTS.items()}
    get = model.get_layer
    a = get("dense_tv")(get("tv")(x["text"]))
    b = get("dense_sl")(get("gap")(get("emb")(get("sl")(x["words"]))))
    c = get("il")(x["ints"])
    return [keras.ops.convert_to_numpy(t).tolist() for t in (a, b, c)]


def main():
    os.environ.setdefault("KERAS_BACKEND", "torch")
    import keras

    keras.utils.set_random_seed(0)
    model = build(keras.layers, keras.Input, keras.Model)
    path = os.path.join(HERE, "keras_text_model.keras")
    model.save(path)
    record = {"keras_version": keras.__version__, "inputs": INPUTS,
              "outputs": keras_outputs(keras.models.load_model(path)),
              "tv_vocabulary": model.get_layer("tv").get_vocabulary(),
              "sl_vocabulary": model.get_layer("sl").get_vocabulary(),
              "tv_config": model.get_layer("tv").get_config(),
              "sl_config": model.get_layer("sl").get_config(),
              "il_config": model.get_layer("il").get_config()}
    for key in ("tv_config", "sl_config", "il_config"):
        record[key] = {k: v for k, v in record[key].items() if k != "dtype"}
    with open(os.path.join(HERE, "keras_text_model.json"), "w", encoding="utf-8") as f:
        json.dump(record, f, indent=1, ensure_ascii=False, default=str)
        f.write("\n")


if __name__ == "__main__":
    main()
