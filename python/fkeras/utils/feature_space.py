"""keras.utils.FeatureSpace: one object that preprocesses the columns of structured data.

Each named feature gets a preprocessing layer (Normalization, Discretization, IntegerLookup,
StringLookup, Hashing, Rescaling, or one of the user's), optional feature crosses get a
HashedCrossing, and categorical results are one-hot (multi-hot) encoded with CategoryEncoding.
`adapt` fits the layers that learn from data; calling the FeatureSpace on a dict of columns
gives one concatenated float32 matrix ("concat") or a dict of encoded features ("dict").
Called on data, the results are NumPy arrays (Keras returns backend tensors); `get_inputs()`
and `get_encoded_features()` give the same encoding as a symbolic graph for a Functional model
that takes the raw columns.
"""

import numpy as np

from fkeras.engine import naming


class _Identity:
    """The "float" features' preprocessor: the values as float32."""

    def __init__(self, name=None):
        self.name = name or naming.unique_name("float_preprocessor")

    def __call__(self, x):
        return np.asarray(x, np.float32)

    def get_config(self):
        return {"name": self.name}


class Cross:
    """A crossing of features (`FeatureSpace.cross`), hashed into `crossing_dim` bins."""

    def __init__(self, feature_names, crossing_dim, output_mode="one_hot"):
        if output_mode not in ("int", "one_hot"):
            raise ValueError("Invalid value for argument `output_mode`. Expected one of "
                             f"{{'int', 'one_hot'}}. Received: output_mode={output_mode}")
        self.feature_names = tuple(feature_names)
        self.crossing_dim = crossing_dim
        self.output_mode = output_mode

    @property
    def name(self):
        return "_X_".join(self.feature_names)

    def get_config(self):
        return {"feature_names": self.feature_names, "crossing_dim": self.crossing_dim,
                "output_mode": self.output_mode}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class Feature:
    """One feature: its input dtype, its preprocessing layer and how its result is encoded
    ("int": as the preprocessor returns it, "one_hot": multi-hot over the preprocessor's
    cardinality, "float": as is)."""

    def __init__(self, dtype, preprocessor, output_mode):
        if output_mode not in ("int", "one_hot", "float"):
            raise ValueError("Invalid value for argument `output_mode`. Expected one of "
                             "{'int', 'one_hot', 'float'}. Received: "
                             f"output_mode={output_mode}")
        self.dtype, self.preprocessor, self.output_mode = dtype, preprocessor, output_mode

    def get_config(self):
        return {"dtype": self.dtype, "output_mode": self.output_mode,
                "preprocessor": type(self.preprocessor).__name__}


def _layers():
    from fkeras import layers

    return layers


def _columns(dataset):
    """A dict of arrays from a dict of arrays/lists or an iterable of such dicts (rows or
    batches)."""
    if isinstance(dataset, dict):
        return {k: np.asarray(v) for k, v in dataset.items()}
    if isinstance(dataset, (str, bytes)) or not hasattr(dataset, "__iter__"):
        raise ValueError("`adapt()` can only be called on a dict of arrays/lists or an "
                         "iterable of such dicts. Received instead: "
                         f"{dataset!r} (of type {type(dataset)})")
    parts = {}
    for element in dataset:
        if isinstance(element, tuple):  # (features, labels) pairs: the features
            element = element[0]
        if not isinstance(element, dict):
            raise ValueError("`adapt()` on an iterable needs dicts of feature values. "
                             f"Received an element of type {type(element)}")
        for k, v in element.items():
            parts.setdefault(k, []).append(np.atleast_1d(np.asarray(v)))
    if not parts:
        raise ValueError("`adapt()` received an empty dataset.")
    return {k: np.concatenate(v) for k, v in parts.items()}


def _as_column(x):
    x = np.asarray(x)
    return x.reshape(-1, 1) if x.ndim <= 1 else x


class FeatureSpace:
    """Preprocesses and encodes the named features of structured data
    (keras.utils.FeatureSpace).

    Args:
        features: dict of feature name -> a type name ("float", "float_normalized",
            "float_rescaled", "float_discretized", "integer_categorical",
            "string_categorical", "integer_hashed", "string_hashed") or a Feature from the
            class methods (`FeatureSpace.float_discretized(num_bins=8)`, ...).
        output_mode: "concat" (one float32 matrix, features in name order then crosses) or
            "dict" (each encoded feature by name).
        crosses: feature-name tuples or `FeatureSpace.cross(...)` objects; each is hashed
            into `crossing_dim` bins and named "a_X_b".
        crossing_dim: bins of the crosses given as tuples.
        hashing_dim: bins of "integer_hashed"/"string_hashed".
        num_discretization_bins: bins of "float_discretized".
        name: optional name.

    Example:
    ```python
    fs = fkeras.utils.FeatureSpace(
        {"age": "float_normalized", "city": "string_categorical", "zip": "integer_hashed"},
        crosses=[("city", "zip")])
    fs.adapt({"age": ages, "city": cities, "zip": zips})
    x = fs({"age": ages, "city": cities, "zip": zips})   # (n, width) float32
    ```
    """

    # ---------------------------------------------------------------- feature constructors
    @classmethod
    def cross(cls, feature_names, crossing_dim, output_mode="one_hot"):
        return Cross(feature_names, crossing_dim, output_mode=output_mode)

    @classmethod
    def feature(cls, dtype, preprocessor, output_mode):
        return Feature(dtype, preprocessor, output_mode)

    @classmethod
    def float(cls, name=None):  # noqa: A003
        return Feature("float32", _Identity(f"{name}_preprocessor" if name else None), "float")

    @classmethod
    def float_rescaled(cls, scale=1.0, offset=0.0, name=None):
        name = name or naming.unique_name("float_rescaled")
        layer = _layers().Rescaling(scale=scale, offset=offset, name=f"{name}_preprocessor")
        return Feature("float32", layer, "float")

    @classmethod
    def float_normalized(cls, name=None):
        name = name or naming.unique_name("float_normalized")
        return Feature("float32", _layers().Normalization(axis=-1, name=f"{name}_preprocessor"),
                       "float")

    @classmethod
    def float_discretized(cls, num_bins, bin_boundaries=None, output_mode="one_hot",
                          name=None):
        name = name or naming.unique_name("float_discretized")
        layer = _layers().Discretization(num_bins=None if bin_boundaries else num_bins,
                                         bin_boundaries=bin_boundaries,
                                         name=f"{name}_preprocessor")
        return Feature("float32", layer, output_mode)

    @classmethod
    def integer_categorical(cls, max_tokens=None, num_oov_indices=1, output_mode="one_hot",
                            name=None):
        name = name or naming.unique_name("integer_categorical")
        layer = _layers().IntegerLookup(name=f"{name}_preprocessor", max_tokens=max_tokens,
                                        num_oov_indices=num_oov_indices)
        return Feature("int32", layer, output_mode)

    @classmethod
    def string_categorical(cls, max_tokens=None, num_oov_indices=1, output_mode="one_hot",
                           name=None):
        name = name or naming.unique_name("string_categorical")
        layer = _layers().StringLookup(name=f"{name}_preprocessor", max_tokens=max_tokens,
                                       num_oov_indices=num_oov_indices)
        return Feature("string", layer, output_mode)

    @classmethod
    def string_hashed(cls, num_bins, output_mode="one_hot", name=None):
        name = name or naming.unique_name("string_hashed")
        return Feature("string", _layers().Hashing(name=f"{name}_preprocessor",
                                                   num_bins=num_bins), output_mode)

    @classmethod
    def integer_hashed(cls, num_bins, output_mode="one_hot", name=None):
        name = name or naming.unique_name("integer_hashed")
        return Feature("int32", _layers().Hashing(name=f"{name}_preprocessor",
                                                  num_bins=num_bins), output_mode)

    # ---------------------------------------------------------------- construction
    def __init__(self, features, output_mode="concat", crosses=None, crossing_dim=32,
                 hashing_dim=32, num_discretization_bins=32, name=None):
        if not features:
            raise ValueError("The `features` argument cannot be None or empty.")
        if output_mode not in ("dict", "concat"):
            raise ValueError("Invalid value for argument `output_mode`. Expected one of "
                             f"{{'dict', 'concat'}}. Received: output_mode={output_mode}")
        self.name = name or naming.unique_name("feature_space")
        self.output_mode = output_mode
        self.crossing_dim, self.hashing_dim = crossing_dim, hashing_dim
        self.num_discretization_bins = num_discretization_bins
        self.features = {n: self._standardize(n, f) for n, f in features.items()}
        self.crosses = []
        for cross in crosses or ():
            if not isinstance(cross, Cross):
                if not crossing_dim:
                    raise ValueError("When specifying `crosses`, the argument `crossing_dim` "
                                     "(dimensionality of the crossing space) should be "
                                     "specified as well.")
                cross = Cross(cross, crossing_dim=crossing_dim)
            unknown = [n for n in cross.feature_names if n not in self.features]
            if unknown:
                raise ValueError("All features referenced in the `crosses` argument should "
                                 "be present in the `features` dict. Received unknown "
                                 f"features: {cross.feature_names}")
            self.crosses.append(cross)
        self.preprocessors = {n: f.preprocessor for n, f in self.features.items()}
        self.crossers = {c.name: _layers().HashedCrossing(c.crossing_dim, name=c.name)
                         for c in self.crosses}
        self.one_hot_encoders = {}
        self._is_adapted = not self._adaptable()

    def _standardize(self, name, feature):
        if isinstance(feature, Feature):
            return feature
        makers = {
            "float": lambda: self.float(name=name),
            "float_normalized": lambda: self.float_normalized(name=name),
            "float_rescaled": lambda: self.float_rescaled(name=name),
            "float_discretized": lambda: self.float_discretized(
                num_bins=self.num_discretization_bins, name=name),
            "integer_categorical": lambda: self.integer_categorical(name=name),
            "string_categorical": lambda: self.string_categorical(name=name),
            "integer_hashed": lambda: self.integer_hashed(self.hashing_dim, name=name),
            "string_hashed": lambda: self.string_hashed(self.hashing_dim, name=name),
        }
        if feature not in makers:
            raise ValueError(f"Invalid feature type: {feature}")
        return makers[feature]()

    def _adaptable(self):
        layers = _layers()
        names = []
        for name, pre in self.preprocessors.items():
            if isinstance(pre, layers.Normalization) and getattr(pre, "input_mean",
                                                                 None) is not None:
                continue
            if isinstance(pre, layers.Discretization) and \
                    getattr(pre, "bin_boundaries", None) is not None and \
                    getattr(pre, "num_bins", None) is None:
                continue
            if isinstance(pre, layers.TextVectorization) and \
                    getattr(pre, "_has_input_vocabulary", False):
                continue
            if hasattr(pre, "adapt"):
                names.append(name)
        return names

    # ---------------------------------------------------------------- adapt and call
    def adapt(self, dataset):
        """Fits the features' layers that learn from data (normalization statistics, bin
        boundaries, vocabularies) on `dataset`: a dict of arrays/lists, or an iterable of
        such dicts (rows or batches, or (features, labels) pairs)."""
        columns = _columns(dataset)
        for name in self._adaptable():
            if name not in columns:
                raise ValueError(f"`adapt()` data has no column for feature '{name}'. "
                                 f"Received columns: {sorted(columns)}")
            self.preprocessors[name].adapt(_as_column(columns[name]))
        self._is_adapted = True
        self.one_hot_encoders = {}
        self._inputs = self._encoded = None

    def _cardinality(self, name, layer):
        layers = _layers()
        if isinstance(layer, (layers.IntegerLookup, layers.StringLookup)):
            return layer.vocabulary_size()
        if isinstance(layer, layers.CategoryEncoding):
            return layer.num_tokens
        if isinstance(layer, (layers.Discretization, layers.Hashing, layers.HashedCrossing)):
            return layer.num_bins
        raise ValueError(f"Feature '{name}' has `output_mode='one_hot'`. However it isn't a "
                         "standard feature and the dimensionality of its output space is not "
                         "known, thus it cannot be one-hot encoded. Try using "
                         "`output_mode='int'`.")

    def _encoder(self, name, layer):
        if name not in self.one_hot_encoders:
            self.one_hot_encoders[name] = _layers().CategoryEncoding(
                num_tokens=self._cardinality(name, layer), output_mode="multi_hot")
        return self.one_hot_encoders[name]

    def _encode(self, name, value, spec, layer):
        value = np.asarray(value)
        if spec.output_mode == "one_hot":
            if value.dtype.kind not in "iu":
                raise ValueError(f"Feature '{name}' has `output_mode='one_hot'`. Thus its "
                                 "preprocessor should return an integer dtype. Instead it "
                                 f"returns a {value.dtype} dtype.")
            value = np.asarray(self._encoder(name, layer)(value), np.float32)
        if self.output_mode == "concat" and (value.dtype.kind in "iuSUO"):
            raise ValueError(f"Cannot concatenate features because feature '{name}' has not "
                             f"been encoded (it has dtype {value.dtype}). Consider using "
                             "`output_mode='dict'`.")
        return value

    def __call__(self, data):
        """Encodes `data`, a dict of feature name -> values (a batch, or one row of scalars).
        Returns a float32 matrix ("concat") or a dict of encoded features ("dict")."""
        if not self._is_adapted:
            raise ValueError("You need to call `.adapt(dataset)` on the FeatureSpace before "
                             "you can start using it.")
        if not isinstance(data, dict):
            raise ValueError("A FeatureSpace can only be called with a dict. "
                             f"Received: data={data} (of type {type(data)})")
        missing = [n for n in self.features if n not in data]
        if missing:
            raise ValueError(f"The data has no value for the features {missing}.")
        single = all(np.ndim(data[n]) == 0 for n in self.features)
        columns = {n: _as_column(data[n]) for n in self.features}
        pre = {n: self.preprocessors[n](columns[n]) for n in self.features}
        crossed = {c.name: self.crossers[c.name]([pre[f] for f in c.feature_names])
                   for c in self.crosses}
        outputs = {}
        for name in sorted(pre):
            outputs[name] = self._encode(name, pre[name], self.features[name],
                                         self.preprocessors[name])
        cross_by_name = {c.name: c for c in self.crosses}
        for name in sorted(crossed):
            outputs[name] = self._encode(name, crossed[name], cross_by_name[name],
                                         self.crossers[name])
        if self.output_mode == "concat":
            merged = np.concatenate([v.astype(np.float32) for v in outputs.values()], -1)
            return merged[0] if single else merged
        if single:
            outputs = {k: v[0] if v.ndim == 2 and v.shape[0] == 1 else v
                       for k, v in outputs.items()}
        return outputs

    # ---------------------------------------------------------------- symbolic graph
    def get_inputs(self):
        """A dict of `fkeras.Input(shape=(1,), dtype=...)`, one per feature (built once)."""
        if not self._is_adapted:
            raise ValueError("You need to call `.adapt(dataset)` on the FeatureSpace before "
                             "you can start using it.")
        if getattr(self, "_inputs", None) is None:
            from fkeras.layers import Input

            self._inputs = {n: Input(shape=(1,), dtype=f.dtype, name=n)
                            for n, f in self.features.items()}
        return self._inputs

    def get_encoded_features(self):
        """The encoded features as KerasTensors computed from `get_inputs()`: one tensor
        ("concat") or a dict ("dict"), for `fkeras.Model(fs.get_inputs(), ...)`."""
        inputs = self.get_inputs()
        if getattr(self, "_encoded", None) is not None:
            return self._encoded
        pre = {n: inputs[n] if isinstance(self.preprocessors[n], _Identity)
               else self.preprocessors[n](inputs[n]) for n in self.features}
        specs = {n: (self.features[n], self.preprocessors[n]) for n in pre}
        for c in self.crosses:
            pre[c.name] = self.crossers[c.name]([pre[f] for f in c.feature_names])
            specs[c.name] = (c, self.crossers[c.name])
        names = sorted(n for n in pre if n in self.features) + sorted(c.name for c in
                                                                     self.crosses)
        outputs = {}
        for name in names:
            spec, layer = specs[name]
            value = pre[name]
            dtype = str(value.dtype)
            if spec.output_mode == "one_hot":
                if not dtype.startswith(("int", "uint")):
                    raise ValueError(f"Feature '{name}' has `output_mode='one_hot'`. Thus its "
                                     "preprocessor should return an integer dtype. Instead "
                                     f"it returns a {dtype} dtype.")
                value = self._encoder(name, layer)(value)
            elif self.output_mode == "concat" and not dtype.startswith("float"):
                raise ValueError(f"Cannot concatenate features because feature '{name}' has "
                                 f"not been encoded (it has dtype {dtype}). Consider using "
                                 "`output_mode='dict'`.")
            outputs[name] = value
        if self.output_mode == "dict":
            self._encoded = outputs
        elif len(outputs) == 1:
            self._encoded = next(iter(outputs.values()))
        else:
            self._encoded = _layers().Concatenate(axis=-1)(list(outputs.values()))
        return self._encoded

    def get_config(self):
        return {"features": {n: f.get_config() for n, f in self.features.items()},
                "output_mode": self.output_mode,
                "crosses": [c.get_config() for c in self.crosses],
                "crossing_dim": self.crossing_dim, "hashing_dim": self.hashing_dim,
                "num_discretization_bins": self.num_discretization_bins}

    def __repr__(self):
        return (f"<FeatureSpace {self.name}: {len(self.features)} features, "
                f"{len(self.crosses)} crosses, output_mode={self.output_mode!r}>")
