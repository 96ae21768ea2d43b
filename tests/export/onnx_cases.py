"""The table of exportable layers for the ONNX tests: each case builds a small Functional
model around one layer (one configuration) and says how to draw its inputs."""

import numpy as np

import fkeras
from fkeras import layers as L


def _float(*shape):
    return ("float32", shape)


def _model(inputs, outputs):
    return fkeras.Model(inputs, outputs)


def single(layer_fn, shape, dtype="float32"):
    """A case builder: Input(shape) -> layer_fn() -> output(s)."""
    def build():
        x = fkeras.Input(shape, dtype=dtype, name="x")
        return _model(x, layer_fn()(x))
    return build


def _merge(layer_fn, shapes):
    def build():
        xs = [fkeras.Input(s, name=f"x{i}") for i, s in enumerate(shapes)]
        return _model(xs, layer_fn()(xs))
    return build


def _mha(cls=None, layer_kwargs=None, **call_kwargs):
    def build():
        q = fkeras.Input((5, 8), name="q")
        v = fkeras.Input((7, 8 if cls else 6), name="v")
        if cls is None:
            mha = L.MultiHeadAttention(num_heads=2, key_dim=3, value_dim=4,
                                       **(layer_kwargs or {}))
        else:
            mha = cls(**layer_kwargs)
        if call_kwargs.get("use_causal_mask"):
            return _model(q, mha(q, q, **call_kwargs))
        out = mha(q, v, **call_kwargs)
        return _model([q, v], out)
    return build


def _mha_mask():
    q = fkeras.Input((5, 8), name="q")
    v = fkeras.Input((7, 8), name="v")
    m = fkeras.Input((5, 7), name="m", dtype="bool")
    return _model([q, v, m], L.MultiHeadAttention(2, 4)(q, v, attention_mask=m))


def _attention(n_inputs=2, layer=None, **kwargs):
    call = {k: kwargs.pop(k) for k in ("use_causal_mask", "return_attention_scores")
            if k in kwargs}

    def build():
        xs = [fkeras.Input((5 if i == 0 else 6, 4), name=f"x{i}") for i in range(n_inputs)]
        if call.get("use_causal_mask"):
            xs = [xs[0], xs[0]]
            return _model(xs[0], (layer or L.Attention)(**kwargs)(xs, **call))
        return _model(xs, (layer or L.Attention)(**kwargs)(xs, **call))
    return build


def _rnn_initial_state(cls, n_states):
    def build():
        x = fkeras.Input((6, 3), name="x")
        states = [fkeras.Input((4,), name=f"s{i}") for i in range(n_states)]
        y = cls(4, return_sequences=True)(x, initial_state=states)
        return _model([x] + states, y)
    return build


def _bidirectional(**kwargs):
    def build():
        x = fkeras.Input((6, 3), name="x")
        rs = kwargs.pop("return_sequences", False)
        rst = kwargs.pop("return_state", False)
        inner = kwargs.pop("inner", L.LSTM)
        return _model(x, L.Bidirectional(inner(4, return_sequences=rs, return_state=rst),
                                         **kwargs)(x))
    return build


def _nested():
    inner_in = fkeras.Input((6,))
    inner = fkeras.Model(inner_in, L.Dense(4, activation="tanh")(inner_in), name="encoder")
    z = fkeras.Input((6,), name="z")
    return _model(z, L.Dense(2)(inner(z)))


def _sequential():
    return fkeras.Sequential([fkeras.Input((6,)), L.Dense(5, activation="relu"),
                              L.Dense(3)])


C = {}


def case(name, build, inputs=None):
    C[name] = (build, inputs)


# ---- core ----
case("dense", single(lambda: L.Dense(4), (6,)))
case("dense_no_bias_relu", single(lambda: L.Dense(4, use_bias=False, activation="relu"), (6,)))
case("dense_rank3", single(lambda: L.Dense(4, activation="tanh"), (3, 6)))
case("einsum_dense", single(lambda: L.EinsumDense("abc,cde->abde", output_shape=(None, 2, 3),
                                                  bias_axes="de"), (4, 5)))
case("dense_int_input", single(lambda: L.Dense(3), (4,), "int32"), ("int", 5))
case("conv1d_float64_input", single(lambda: L.Conv1D(2, 2), (5, 3), "float64"))
case("embedding", single(lambda: L.Embedding(10, 3), (5,), "int32"), ("int", 10))
case("masking", single(lambda: L.Masking(0.0), (4, 3)), ("mask_rows",))
for _cls in (L.Dropout, L.GaussianDropout, L.AlphaDropout):
    case(_cls.__name__.lower(), single(lambda c=_cls: c(0.4), (5,)))
case("gaussian_noise", single(lambda: L.GaussianNoise(0.5), (5,)))
case("spatial_dropout1d", single(lambda: L.SpatialDropout1D(0.3), (4, 3)))
case("spatial_dropout2d", single(lambda: L.SpatialDropout2D(0.3), (4, 4, 3)))
case("spatial_dropout3d", single(lambda: L.SpatialDropout3D(0.3), (3, 3, 3, 2)))
case("activity_regularization", single(lambda: L.ActivityRegularization(0.1, 0.1), (5,)))
case("identity", single(lambda: L.Identity(), (5,)))

# ---- activation layers ----
case("activation", single(lambda: L.Activation("swish"), (7,)))
case("relu", single(lambda: L.ReLU(), (7,)))
case("relu_options", single(lambda: L.ReLU(max_value=1.5, negative_slope=0.1, threshold=0.2),
                            (7,)))
case("relu_threshold_no_cap", single(lambda: L.ReLU(negative_slope=0.3, threshold=0.5),
                                       (7,)))
case("leaky_relu", single(lambda: L.LeakyReLU(0.25), (7,)))
case("elu_layer", single(lambda: L.ELU(0.7), (7,)))
case("prelu", single(lambda: L.PReLU(), (3, 4)))
case("prelu_shared", single(lambda: L.PReLU(shared_axes=[1]), (3, 4)))
case("softmax_layer", single(lambda: L.Softmax(), (6,)))
case("softmax_axis1", single(lambda: L.Softmax(axis=1), (4, 3)))
case("softmax_two_axes", single(lambda: L.Softmax(axis=[1, 2]), (4, 3)))

# ---- convolutions ----
case("conv1d", single(lambda: L.Conv1D(4, 3), (9, 2)))
case("conv1d_causal_dilated", single(lambda: L.Conv1D(4, 3, padding="causal",
                                                      dilation_rate=2), (9, 2)))
case("conv1d_same_stride", single(lambda: L.Conv1D(3, 4, strides=2, padding="same",
                                                   activation="relu"), (9, 2)))
case("conv1d_channels_first", single(lambda: L.Conv1D(3, 3, data_format="channels_first"),
                                     (2, 9)))
case("conv2d", single(lambda: L.Conv2D(4, 3, activation="relu"), (7, 6, 2)))
case("conv2d_same_strides", single(lambda: L.Conv2D(4, (3, 2), strides=(2, 1),
                                                    padding="same"), (7, 6, 2)))
case("conv2d_dilation", single(lambda: L.Conv2D(3, 3, dilation_rate=2, padding="same"),
                               (8, 8, 2)))
case("conv2d_groups", single(lambda: L.Conv2D(4, 3, groups=2, padding="same"), (6, 6, 4)))
case("conv2d_channels_first", single(lambda: L.Conv2D(3, 3, data_format="channels_first",
                                                      padding="same", strides=2), (2, 7, 7)))
case("conv2d_gelu", single(lambda: L.Conv2D(3, 2, activation="gelu"), (5, 5, 2)))
case("conv3d", single(lambda: L.Conv3D(3, 2, padding="same"), (4, 5, 3, 2)))
case("conv1d_transpose", single(lambda: L.Conv1DTranspose(3, 3, strides=2), (5, 2)))
case("conv1d_transpose_same", single(lambda: L.Conv1DTranspose(3, 4, strides=2,
                                                               padding="same"), (5, 2)))
case("conv2d_transpose", single(lambda: L.Conv2DTranspose(3, 3, strides=2, padding="same"),
                                (4, 5, 2)))
case("conv2d_transpose_valid_big_stride", single(lambda: L.Conv2DTranspose(3, 2, strides=3),
                                                 (4, 4, 2)))
case("conv2d_transpose_output_padding", single(
    lambda: L.Conv2DTranspose(2, 3, strides=2, output_padding=1), (4, 4, 2)))
case("conv2d_transpose_dilated", single(lambda: L.Conv2DTranspose(2, 3, dilation_rate=2,
                                                                  padding="same"), (5, 5, 2)))
case("conv2d_transpose_channels_first", single(lambda: L.Conv2DTranspose(
    3, 3, strides=2, data_format="channels_first"), (2, 4, 4)))
case("conv3d_transpose", single(lambda: L.Conv3DTranspose(2, 2, strides=2), (3, 3, 3, 2)))
case("depthwise_conv1d", single(lambda: L.DepthwiseConv1D(3, depth_multiplier=2), (8, 3)))
case("depthwise_conv2d", single(lambda: L.DepthwiseConv2D(3, depth_multiplier=2,
                                                          padding="same", strides=2),
                                (7, 7, 3)))
case("separable_conv1d", single(lambda: L.SeparableConv1D(4, 3, padding="same"), (8, 3)))
case("separable_conv2d", single(lambda: L.SeparableConv2D(4, 3, depth_multiplier=2,
                                                          activation="relu"), (7, 7, 3)))

# ---- pooling ----
for _name, _cls, _shape in (("1d", "Pooling1D", (9, 3)), ("2d", "Pooling2D", (7, 6, 3)),
                            ("3d", "Pooling3D", (5, 4, 4, 2))):
    for _kind in ("Max", "Average"):
        case(f"{_kind.lower()}_pooling{_name}",
             single(lambda c=getattr(L, _kind + _cls): c(2), _shape))
        case(f"{_kind.lower()}_pooling{_name}_same",
             single(lambda c=getattr(L, _kind + _cls): c(3, strides=2, padding="same"), _shape))
        case(f"global_{_kind.lower()}_pooling{_name}",
             single(lambda c=getattr(L, f"Global{_kind}{_cls}"): c(), _shape))
case("max_pooling2d_channels_first", single(lambda: L.MaxPooling2D(2, data_format=
                                                                   "channels_first"), (3, 6, 6)))
case("global_average_pooling2d_keepdims", single(lambda: L.GlobalAveragePooling2D(
    keepdims=True), (4, 4, 3)))

# ---- normalization ----
case("batch_norm", single(lambda: L.BatchNormalization(), (5, 4)))
case("batch_norm_axis1", single(lambda: L.BatchNormalization(axis=1, center=False), (3, 4, 4)))
case("batch_norm_virtual_batch", single(lambda: L.BatchNormalization(virtual_batch_size=2),
                                        (3, 4)))
case("layer_norm", single(lambda: L.LayerNormalization(), (3, 6)))
case("layer_norm_axes", single(lambda: L.LayerNormalization(axis=[1, 2]), (3, 6)))
case("layer_norm_rms", single(lambda: L.LayerNormalization(rms_scaling=True), (3, 6)))
case("group_norm", single(lambda: L.GroupNormalization(groups=2), (4, 4, 6)))
case("group_norm_axis1", single(lambda: L.GroupNormalization(groups=3, axis=1), (6, 5)))
case("rms_norm", single(lambda: L.RMSNormalization(), (3, 6)))
case("unit_norm", single(lambda: L.UnitNormalization(axis=[1, 2]), (3, 6)))

# ---- merges ----
for _cls in (L.Add, L.Subtract, L.Multiply, L.Average, L.Maximum, L.Minimum):
    n = 2 if _cls is L.Subtract else 3
    case(_cls.__name__.lower(), _merge(lambda c=_cls: c(), [(4, 5)] * n))
case("add_broadcast_rank", _merge(lambda: L.Add(), [(4, 5), (5,)]))
case("concatenate", _merge(lambda: L.Concatenate(), [(3, 2), (3, 4)]))
case("concatenate_axis1", _merge(lambda: L.Concatenate(axis=1), [(3, 2), (5, 2)]))
case("dot_2d", _merge(lambda: L.Dot(axes=1), [(5,), (5,)]))
case("dot_3d", _merge(lambda: L.Dot(axes=(2, 2)), [(3, 4), (5, 4)]))
case("dot_normalize", _merge(lambda: L.Dot(axes=(1, 1), normalize=True), [(3, 4), (3, 5)]))

# ---- reshaping ----
case("reshape", single(lambda: L.Reshape((3, 4)), (12,)))
case("reshape_minus_one", single(lambda: L.Reshape((-1, 2)), (3, 4)))
case("flatten", single(lambda: L.Flatten(), (3, 4, 2)))
case("flatten_channels_first", single(lambda: L.Flatten(data_format="channels_first"),
                                      (3, 4, 2)))
case("permute", single(lambda: L.Permute((2, 1)), (3, 4)))
case("repeat_vector", single(lambda: L.RepeatVector(3), (4,)))
case("zero_padding1d", single(lambda: L.ZeroPadding1D((1, 2)), (4, 3)))
case("zero_padding2d", single(lambda: L.ZeroPadding2D(((1, 0), (2, 1))), (4, 4, 2)))
case("zero_padding3d", single(lambda: L.ZeroPadding3D(1), (2, 3, 2, 2)))
case("cropping1d", single(lambda: L.Cropping1D((1, 2)), (6, 3)))
case("cropping2d", single(lambda: L.Cropping2D(((1, 0), (1, 2))), (5, 6, 2)))
case("cropping3d", single(lambda: L.Cropping3D(1), (4, 4, 4, 2)))
case("up_sampling1d", single(lambda: L.UpSampling1D(3), (4, 2)))
case("up_sampling2d", single(lambda: L.UpSampling2D((2, 3)), (3, 4, 2)))
case("up_sampling2d_bilinear", single(lambda: L.UpSampling2D(2, interpolation="bilinear"),
                                      (3, 4, 2)))
case("up_sampling3d", single(lambda: L.UpSampling3D(2), (2, 3, 2, 2)))

# ---- recurrent ----
for _cls in (L.LSTM, L.GRU, L.SimpleRNN):
    _n = _cls.__name__.lower()
    case(_n, single(lambda c=_cls: c(4), (6, 3)))
    case(f"{_n}_sequences", single(lambda c=_cls: c(4, return_sequences=True), (6, 3)))
    case(f"{_n}_state", single(lambda c=_cls: c(4, return_state=True), (6, 3)))
    case(f"{_n}_backwards", single(lambda c=_cls: c(4, go_backwards=True,
                                                    return_sequences=True), (6, 3)))
    case(f"{_n}_initial_state", _rnn_initial_state(_cls, 2 if _cls is L.LSTM else 1))
case("gru_reset_before", single(lambda: L.GRU(4, reset_after=False, return_sequences=True),
                                (6, 3)))
case("lstm_hard_sigmoid", single(lambda: L.LSTM(4, recurrent_activation="hard_sigmoid"),
                                 (6, 3)))
case("lstm_relu", single(lambda: L.LSTM(4, activation="relu", use_bias=False), (6, 3)))
case("simple_rnn_relu", single(lambda: L.SimpleRNN(4, activation="relu"), (6, 3)))
case("rnn_lstm_cell", single(lambda: L.RNN(L.LSTMCell(4), return_sequences=True), (6, 3)))
case("rnn_gru_cell", single(lambda: L.RNN(L.GRUCell(4), go_backwards=True), (6, 3)))
case("rnn_simple_cell", single(lambda: L.RNN(L.SimpleRNNCell(4)), (6, 3)))
case("rnn_stacked_cells", single(lambda: L.RNN(L.StackedRNNCells(
    [L.LSTMCell(4), L.GRUCell(3, reset_after=False), L.SimpleRNNCell(2)])), (6, 3)))
case("rnn_stacked_cells_state_backwards", single(lambda: L.RNN(L.StackedRNNCells(
    [L.LSTMCell(4), L.GRUCell(3)]), return_sequences=True, return_state=True,
    go_backwards=True), (6, 3)))
case("bidirectional", _bidirectional())
case("bidirectional_sequences_sum", _bidirectional(return_sequences=True, merge_mode="sum"))
case("bidirectional_gru_state", _bidirectional(inner=L.GRU, return_state=True))
case("bidirectional_none", _bidirectional(return_sequences=True, merge_mode=None))
case("bidirectional_ave_mul", _bidirectional(inner=L.SimpleRNN, merge_mode="mul"))
case("time_distributed_dense", single(lambda: L.TimeDistributed(L.Dense(3)), (4, 5)))
case("time_distributed_conv", single(lambda: L.TimeDistributed(L.Conv2D(2, 2)), (3, 4, 4, 2)))

# ---- attention ----
case("multi_head_attention", _mha())
case("multi_head_attention_scores", _mha(return_attention_scores=True))
case("multi_head_attention_causal", _mha(use_causal_mask=True))
case("multi_head_attention_mask", _mha_mask, ("mha_mask",))
case("multi_head_attention_gate_window", _mha(layer_kwargs=dict(use_gate=True,
                                                                 sliding_window=2)))
case("grouped_query_attention", _mha(L.GroupedQueryAttention, dict(
    head_dim=3, num_query_heads=4, num_key_value_heads=2)))
case("grouped_query_attention_causal_scores", _mha(L.GroupedQueryAttention, dict(
    head_dim=3, num_query_heads=4, num_key_value_heads=1), use_causal_mask=True,
    return_attention_scores=True))
case("grouped_query_attention_window_gate", _mha(L.GroupedQueryAttention, dict(
    head_dim=2, num_query_heads=2, num_key_value_heads=2, sliding_window=3, use_gate=True)))
case("attention", _attention())
case("attention_key_scale", _attention(3, use_scale=True, return_attention_scores=True))
case("attention_concat", _attention(score_mode="concat", use_scale=True))
case("attention_causal", _attention(use_causal_mask=True))
case("additive_attention", _attention(layer=L.AdditiveAttention))
case("additive_attention_no_scale_key", _attention(3, layer=L.AdditiveAttention, use_scale=False))

# ---- raw ops in the graph (OpLayer) ----
def _ops_graph():
    from fkeras import ops

    x = fkeras.Input((4, 6), name="x")
    y = fkeras.Input((4, 6), name="y")
    a = ops.exp(x * 0.5) - 1.0 + (y / 2.0)
    a = ops.maximum(ops.concatenate([a, ops.sqrt(ops.abs(y))], axis=-1), 0.1)
    b = ops.transpose(ops.reshape(a, (-1, 6, 8)), (0, 2, 1))
    c = ops.mean(b, axis=1, keepdims=True) + ops.sum(ops.square(b), axis=-1)[:, None, :6]
    d = ops.softmax(ops.matmul(x, ops.transpose(y, (0, 2, 1))), axis=-1)
    e = ops.squeeze(ops.expand_dims(ops.relu(-x[:, 1:3, ::2]), 1), 1)
    f = ops.max(ops.tanh(x[..., -1]), axis=-1, keepdims=True) + ops.sigmoid(y[:, 0])
    f = ops.gelu(ops.leaky_relu(f, 0.1)) + ops.elu(f, 0.5) + ops.gelu(f, approximate=False)
    return _model([x, y], [c, d, e, f])


case("raw_ops", _ops_graph)

# ---- graphs ----
case("nested_functional", _nested)
case("sequential", _sequential)


def randomize(model, rng):
    """Random weights everywhere (variances positive, so batch norm's statistics matter)."""
    for w in model.weights:
        shape = tuple(w.shape)
        value = rng.normal(0.0, 0.5, shape)
        if "variance" in w.name:
            value = np.abs(value) + 0.5
        w.assign(value.astype(np.float32))


def draw_inputs(model, spec, batch, rng):
    """One batch for each model input (spec: None, ("int", n), ("mask_rows",), ...)."""
    arrays = []
    for t in model.inputs:
        shape = (batch,) + tuple(t.shape[1:])
        if str(t.dtype) == "bool":
            a = rng.random(shape) < 0.7
            a[..., 0] = True  # every query sees one key
        elif spec and spec[0] == "int":
            a = rng.integers(0, spec[1], shape).astype(str(t.dtype))
        else:
            a = rng.normal(0.0, 1.0, shape).astype(str(t.dtype))
            if spec and spec[0] == "mask_rows":
                a[:, 1] = 0.0
        arrays.append(a)
    return arrays
