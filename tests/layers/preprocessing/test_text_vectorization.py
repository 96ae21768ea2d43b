"""Models on raw strings: `Input(dtype="string")` -> TextVectorization/StringLookup -> ...
trained with `fit` (string batches sliced by the data adapter, the vocabulary adapted on an
iterable of text batches first, as in Keras's text-classification example), evaluated and
predicted, and equal after a `.keras` save/load. Keras 3 on torch cannot run a Functional
model on NumPy strings ("Invalid dtype: str..."), so parity with it is checked layer by layer
in test_lookup_saving.py / test_lookup_keras_cases.py."""

import numpy as np
import pytest

import fkeras
from fkeras import layers

POS = ["good movie", "great fun", "loved it", "great acting good story", "fun and good"]
NEG = ["bad movie", "awful plot", "boring film", "bad acting awful story", "boring and bad"]


def _data(n=120, seed=0):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, n)
    texts = np.array([(POS if y else NEG)[rng.integers(0, 5)] + "!" for y in labels])
    return texts, labels.astype("float32")


class _TextBatches(fkeras.utils.PyDataset):
    def __init__(self, texts, labels, batch_size):
        super().__init__()
        self.texts, self.labels, self.batch_size = texts, labels, batch_size

    def __len__(self):
        return -(-len(self.texts) // self.batch_size)

    def __getitem__(self, i):
        s = slice(i * self.batch_size, (i + 1) * self.batch_size)
        return self.texts[s], self.labels[s]


def _classifier(vectorize):
    inputs = fkeras.Input(shape=(1,), dtype="string")
    x = vectorize(inputs)
    x = layers.Embedding(vectorize.vocabulary_size(), 8)(x)
    x = layers.GlobalAveragePooling1D()(x)
    outputs = layers.Dense(1, activation="sigmoid")(x)
    model = fkeras.Model(inputs, outputs)
    model.compile(optimizer=fkeras.optimizers.Adam(0.05), loss="binary_crossentropy",
                  metrics=["accuracy"])
    return model


@pytest.mark.parametrize("adapt_on", ["pydataset", "generator", "array"])
def test_text_classification_trains_and_round_trips(tmp_path, adapt_on):
    fkeras.utils.set_random_seed(1)
    texts, labels = _data()
    vectorize = layers.TextVectorization(max_tokens=30, output_sequence_length=5)
    source = {"pydataset": _TextBatches(texts, labels, 32),
              "generator": (texts[i:i + 32] for i in range(0, len(texts), 32)),
              "array": texts}[adapt_on]
    vectorize.adapt(source)
    assert set(vectorize.get_vocabulary()[2:]) == {
        w for t in POS + NEG for w in t.split()}
    model = _classifier(vectorize)
    history = model.fit(texts.reshape(-1, 1), labels, batch_size=16, epochs=6, verbose=0,
                        validation_split=0.25)
    loss = history.history["loss"]
    assert loss[-1] < 0.5 * loss[0]
    assert history.history["val_accuracy"][-1] == 1.0
    probe = np.array([["great story"], ["awful film"], ["unknown words"]])
    before = model.predict(probe, verbose=0)
    assert before[0, 0] > 0.5 > before[1, 0]
    path = tmp_path / "text.keras"
    model.save(path)
    loaded = fkeras.models.load_model(path)
    np.testing.assert_array_equal(loaded.predict(probe, verbose=0), before)
    assert loaded.evaluate(texts, labels, verbose=0, return_dict=True)["accuracy"] == 1.0


def test_fit_on_pydataset_of_strings_and_1d_inputs():
    fkeras.utils.set_random_seed(2)
    texts, labels = _data(64, seed=3)
    vectorize = layers.TextVectorization(output_mode="multi_hot")
    vectorize.adapt(texts)
    inputs = fkeras.Input(shape=(1,), dtype="string")
    outputs = layers.Dense(1, activation="sigmoid")(vectorize(inputs))
    model = fkeras.Model(inputs, outputs)
    assert model.output_shape == (None, 1)
    model.compile(optimizer=fkeras.optimizers.Adam(0.1), loss="binary_crossentropy")
    loss = model.fit(_TextBatches(texts, labels, 16), epochs=4, verbose=0).history["loss"]
    assert loss[-1] < loss[0]
    one_d = model.predict(texts[:5], verbose=0)  # (N,) strings for an (N, 1) input
    np.testing.assert_allclose(one_d, model.predict(texts[:5].reshape(-1, 1), verbose=0))


def test_sequential_string_lookup_one_hot_features(tmp_path):
    fkeras.utils.set_random_seed(3)
    colors = np.array([["red"], ["green"], ["blue"], ["red"], ["green"], ["blue"]] * 10)
    y = (colors[:, 0] == "red").astype("float32")
    lookup = layers.StringLookup(output_mode="one_hot")
    lookup.adapt(colors)
    model = fkeras.Sequential([fkeras.Input(shape=(1,), dtype="string"), lookup,
                               layers.Dense(1, activation="sigmoid")])
    model.compile(optimizer=fkeras.optimizers.Adam(0.2), loss="binary_crossentropy")
    loss = model.fit(colors, y, epochs=10, batch_size=8, verbose=0).history["loss"]
    assert loss[-1] < 0.3 * loss[0]
    path = tmp_path / "seq.keras"
    model.save(path)
    loaded = fkeras.models.load_model(path)
    np.testing.assert_array_equal(loaded.predict(colors[:3], verbose=0),
                                  model.predict(colors[:3], verbose=0))


def test_string_input_rejects_numbers_clearly():
    vectorize = layers.TextVectorization(vocabulary=["a"])
    with pytest.raises(ValueError, match="expects string inputs"):
        vectorize(np.array([[1.0], [2.0]]))
