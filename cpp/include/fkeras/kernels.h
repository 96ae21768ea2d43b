// kernels.h: the kernel contract. Every name below exists with the same arguments, in the same
// order, on every device: `reference` (python/fkeras/backend/reference/, NumPy float64),
// `cpu` (this library, exposed as fkeras._C) and `cuda` (fkeras._C_cuda). A key-set test keeps
// the three tables equal.
//
// Conventions (see common.h for the dimension letters):
// - Argument order: outputs, saved state, inputs, sizes (int64_t), scalar attributes.
// - Buffers are contiguous row-major float32, except index buffers (int64_t), named so, and
//   attention masks (uint8_t, NumPy bool).
// - Every output is OVERWRITTEN (never accumulated) unless its kernel says otherwise; GEMM's beta
//   is how a caller accumulates. Optimizer updates read and write their parameter and slots.
// - Outputs never overlap inputs or each other, except where a kernel's file says it may run in
//   place (activation_*, softmax and log-softmax: the very same buffer); the bindings refuse
//   anything else. Any size may be 0.
// - [opt] marks a pointer that may be null (None from Python): an optional input is treated as
//   absent (no bias, ...), an optional output is simply not computed.
// - Saved state is an explicit output written by the forward and read by the backward.
// - NaN and +/-Inf propagate as IEEE arithmetic does: an output is NaN (or +/-Inf) where the
//   float64 reference gives NaN (or that infinity). max/min/clamps let a NaN operand win (as
//   np.maximum), a max-pool window holding a NaN pools to it (its first NaN is the argmax),
//   zero padding times a non-finite weight is NaN. tests/kernels/test_nan_propagation.py
//   checks every kernel on every ISA and lists the few documented departures.
// - Errors throw fk::Error. Index buffers are range-checked before anything is written: by the
//   bindings, or (maxpool2d_backward) by the kernel itself in parallel, raising ValueError.
#pragma once

#include <cstdint>

#include "fkeras/common.h"

namespace fk {

// Activation codes shared by activation_*, dense_*, conv2d_forward and the recurrent kernels.
// python/fkeras/backend/codes.py mirrors this list.
enum Activation : int64_t {
  kLinear = 0,
  kRelu = 1,
  kSigmoid = 2,
  kTanh = 3,
  kElu = 4,          // alpha (default 1)
  kSelu = 5,
  kGelu = 6,         // exact: x * Phi(x)
  kGeluTanh = 7,     // the tanh approximation
  kSoftplus = 8,
  kSoftsign = 9,
  kSwish = 10,       // x * sigmoid(x), a.k.a. silu
  kHardSigmoid = 11, // Keras 3: relu6(x + 3) / 6
  kExponential = 12,
  kLeakyRelu = 13,   // alpha (negative slope)
};
// Fused epilogues (dense_*, conv2d_forward) take the backward's derivative from the activation's
// OUTPUT, so they accept every code but kGelu, kGeluTanh and kSwish (alpha >= 0); the ops apply
// those separately. The recurrent kernels accept kLinear, kRelu, kSigmoid, kTanh, kHardSigmoid.
// The bindings reject anything else.

// ---------------------------------------------------------------------------------------------
// GEMM and Dense (cpp/gemm/)
// ---------------------------------------------------------------------------------------------
// C = alpha * op(A) @ op(B) + beta * C.  op(A) is (M, K): A is (M, K), or (K, M) when trans_a.
// op(B) is (K, N): B is (K, N), or (N, K) when trans_b. C is (M, N). beta == 0 ignores C's
// contents (NaN in C does not leak). Any size may be 0 (K == 0 gives beta * C).
void gemm(float* C, const float* A, const float* B, int64_t M, int64_t N, int64_t K,
          bool trans_a, bool trans_b, float alpha, float beta);

// y (M, N) = act(x (M, K) @ kernel (K, N) + bias (N) [opt]); bias and activation fused
// into the GEMM epilogue.
void dense_forward(float* y, const float* x, const float* kernel, const float* bias,
                   int64_t M, int64_t N, int64_t K, int64_t activation, float alpha);
// Backward of dense_forward given dy (M, N) and the forward's x and y:
// dx (M, K) [opt], dkernel (K, N) [opt], dbias (N) [opt].
void dense_backward(float* dx, float* dkernel, float* dbias, const float* dy, const float* x,
                    const float* y, const float* kernel, int64_t M, int64_t N, int64_t K,
                    int64_t activation, float alpha);
// The pass over dy that a fused activation and a bias need in a backward (dense_backward's,
// and the conv2d op's before its two product kernels): dz (M, N) [opt] = dy * act'(from y),
// dbias (N) [opt] = dz summed over rows (as bias_add_backward: groups of 8 rows in float, their
// totals in float64, over row chunks fixed by the sizes, so the same for every thread count).
// act is a fused-epilogue code; linear does not read y.
void bias_activation_backward(float* dz, float* dbias, const float* dy, const float* y,
                              int64_t M, int64_t N, int64_t activation, float alpha);

// ---------------------------------------------------------------------------------------------
// Elementwise (cpp/elementwise/)
// ---------------------------------------------------------------------------------------------
// y (n) = act(x (n)).  alpha is ELU's alpha or LeakyReLU's slope, ignored by the others.
void activation_forward(float* y, const float* x, int64_t n, int64_t activation, float alpha);
// dx (n) = dy (n) * act'(x); x and y are the forward's input and output (y may be used).
void activation_backward(float* dx, const float* dy, const float* x, const float* y, int64_t n,
                         int64_t activation, float alpha);
// Softmax and log-softmax over the last axis of a (rows, cols) view.
void softmax_forward(float* y, const float* x, int64_t rows, int64_t cols);
void softmax_backward(float* dx, const float* dy, const float* y, int64_t rows, int64_t cols);
void log_softmax_forward(float* y, const float* x, int64_t rows, int64_t cols);
void log_softmax_backward(float* dx, const float* dy, const float* y, int64_t rows, int64_t cols);
// y (rows, cols) = x + b (cols);  db (cols) = sum over rows of dy.
void bias_add_forward(float* y, const float* x, const float* b, int64_t rows, int64_t cols);
void bias_add_backward(float* db, const float* dy, int64_t rows, int64_t cols);
// Dropout with an explicit mask: mask[i] = keep ? 1 / (1 - rate) : 0 and y = x * mask, where
// keep = u(seed, i) >= rate and u is the counter-based uniform
//   z = splitmix64(seed + i); u = (z >> 40) * 2^-24,
//   splitmix64(z): z += 0x9E3779B97F4A7C15; z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9;
//                  z = (z ^ (z >> 27)) * 0x94D049BB133111EB; return z ^ (z >> 31)
// (uint64 arithmetic), so every device draws the same mask for the same seed.
void dropout_forward(float* y, float* mask, const float* x, int64_t n, float rate, int64_t seed);
void dropout_backward(float* dx, const float* dy, const float* mask, int64_t n);
// Embedding lookup: y (n, D) = table (V, D)[indices (n)];  dtable (V, D) = scatter-add of dy.
void embedding_forward(float* y, const int64_t* indices, const float* table, int64_t n,
                       int64_t V, int64_t D);
void embedding_backward(float* dtable, const float* dy, const int64_t* indices, int64_t n,
                        int64_t V, int64_t D);

// ---------------------------------------------------------------------------------------------
// Fused scaled-dot-product attention (cpp/attention/)
// ---------------------------------------------------------------------------------------------
// out (N, Tq, heads, Dv) = softmax(scale * q k^T, visible keys) (x) z, times v, per query head
// h, whose key/value head is h / (heads / kv_heads); q (N, Tq, heads, D), k (N, Tk, kv_heads,
// D), v (N, Tk, kv_heads, Dv) in Keras's (batch, time, heads, size) layout. Key j is visible
// from query i when mask [opt] (mask_batch, mask_heads, Tq, Tk) booleans (mask_batch 1 or N,
// mask_heads 1 or heads) hold True there and, if causal, j <= i. A row without a visible key
// attends uniformly to all Tk keys (Keras's large-negative fill) and has lse -inf. z is the
// dropout factor of dropout_forward for the element (n, h, i, j) of the (N, heads, Tq, Tk)
// probabilities (seed, rate dropout_rate; 1 when the rate is 0). Saved state:
// lse (N, heads, Tq) = log sum_j visible exp(scale * q_i . k_j).
void attention_forward(float* out, float* lse, const float* q, const float* k, const float* v,
                       const uint8_t* mask, int64_t N, int64_t Tq, int64_t Tk, int64_t heads,
                       int64_t kv_heads, int64_t D, int64_t Dv, int64_t mask_batch,
                       int64_t mask_heads, bool causal, float scale, float dropout_rate,
                       int64_t seed);
// dq, dk, dv (shapes of q, k, v) from dout (N, Tq, heads, Dv) and the forward's out and lse;
// the probabilities are recomputed from lse. Same mask, causal, scale, dropout arguments.
void attention_backward(float* dq, float* dk, float* dv, const float* dout, const float* q,
                        const float* k, const float* v, const float* out, const float* lse,
                        const uint8_t* mask, int64_t N, int64_t Tq, int64_t Tk, int64_t heads,
                        int64_t kv_heads, int64_t D, int64_t Dv, int64_t mask_batch,
                        int64_t mask_heads, bool causal, float scale, float dropout_rate,
                        int64_t seed);

// ---------------------------------------------------------------------------------------------
// Fused losses from logits (cpp/elementwise/)
// ---------------------------------------------------------------------------------------------
// loss (rows) = -sum_j labels (rows, cols) * log_softmax(logits)_j; saves probs (rows, cols).
void softmax_crossentropy_forward(float* loss, float* probs, const float* logits,
                                  const float* labels, int64_t rows, int64_t cols);
// dlogits (rows, cols) = dloss (rows) * (probs * sum_j labels_j - labels).
void softmax_crossentropy_backward(float* dlogits, const float* dloss, const float* probs,
                                   const float* labels, int64_t rows, int64_t cols);
// The same with integer class labels (rows), each in [0, cols).
void sparse_softmax_crossentropy_forward(float* loss, float* probs, const float* logits,
                                         const int64_t* labels, int64_t rows, int64_t cols);
void sparse_softmax_crossentropy_backward(float* dlogits, const float* dloss, const float* probs,
                                          const int64_t* labels, int64_t rows, int64_t cols);
// Elementwise: loss (n) = max(x, 0) - x * z + log1p(exp(-|x|));  dlogits = dloss * (sigmoid(x) - z).
void sigmoid_crossentropy_forward(float* loss, const float* logits, const float* labels,
                                  int64_t n);
void sigmoid_crossentropy_backward(float* dlogits, const float* dloss, const float* logits,
                                   const float* labels, int64_t n);

// ---------------------------------------------------------------------------------------------
// Convolution and pooling (cpp/conv/), NHWC activations, (R, S, C / groups, K) filters
// ---------------------------------------------------------------------------------------------
// y (N, P, Q, K) = act(conv(x (N, H, W, C), w (R, S, C/groups, K)) + bias (K) [opt]).
// Input row h = p * stride_h + r * dil_h - pad_top (likewise for columns); rows outside
// [0, H) read zero. The op computes P, Q and the (asymmetric, TensorFlow) padding.
// C and K are divisible by groups; output channel k belongs to group k / (K / groups).
void conv2d_forward(float* y, const float* x, const float* w, const float* bias, int64_t N,
                    int64_t H, int64_t W, int64_t C, int64_t K, int64_t R, int64_t S, int64_t P,
                    int64_t Q, int64_t stride_h, int64_t stride_w, int64_t dil_h, int64_t dil_w,
                    int64_t pad_top, int64_t pad_left, int64_t groups, int64_t activation,
                    float alpha);
// Inference: y (N, P / pool_h, Q / pool_w, K) = max pooling of conv2d_forward's output (same
// arguments; P, Q its size) over pool_h x pool_w windows at stride (pool_h, pool_w), 'valid'
// (rows and columns past the last whole window dropped): the values of conv2d_forward then
// maxpool2d_forward, without writing the convolution's output (the direct path pools each
// window row while it is in L1; other paths go through a temporary).
// Training: indices (N, P / pool_h, Q / pool_w, K) [opt] = maxpool2d_forward's indices of that
// output (flat offsets into the unwritten (N, P, Q, K) output; first maximum wins).
void conv2d_forward_maxpool2d(float* y, const float* x, const float* w, const float* bias,
                              int64_t N, int64_t H, int64_t W, int64_t C, int64_t K, int64_t R,
                              int64_t S, int64_t P, int64_t Q, int64_t stride_h,
                              int64_t stride_w, int64_t dil_h, int64_t dil_w, int64_t pad_top,
                              int64_t pad_left, int64_t groups, int64_t activation, float alpha,
                              int64_t pool_h, int64_t pool_w, int64_t* indices = nullptr);
// The backward of conv2d_forward_maxpool2d (with indices) up to the convolution's own
// products: dz (N, P, Q, K) [opt] = the pooled cotangent dy (N, Pp, Qp, K) times act'(y) (y:
// the pooled output; activation kLinear, kRelu or kLeakyRelu) scattered to the indices, 0
// elsewhere; dbias (K) [opt] = the column sums of dz (float64 accumulation). Pp = P / pool_h,
// Qp = Q / pool_w. Bit-identical to maxpool2d_backward then bias_activation_backward on the
// unfused pair's tensors (same chunks and order of the sums), in one pass; dz then feeds
// conv2d_backward_input / _weight. An index that is not its window's own yields zeros there.
void conv2d_maxpool2d_backward(float* dz, float* dbias, const float* dy, const float* y,
                               const int64_t* indices, int64_t N, int64_t P, int64_t Q,
                               int64_t K, int64_t pool_h, int64_t pool_w, int64_t activation,
                               float alpha);
// dx (N, H, W, C) from dy (N, P, Q, K) and w.
void conv2d_backward_input(float* dx, const float* dy, const float* w, int64_t N, int64_t H,
                           int64_t W, int64_t C, int64_t K, int64_t R, int64_t S, int64_t P,
                           int64_t Q, int64_t stride_h, int64_t stride_w, int64_t dil_h,
                           int64_t dil_w, int64_t pad_top, int64_t pad_left, int64_t groups);
// dw (R, S, C/groups, K) from dy (N, P, Q, K) and x.
void conv2d_backward_weight(float* dw, const float* dy, const float* x, int64_t N, int64_t H,
                            int64_t W, int64_t C, int64_t K, int64_t R, int64_t S, int64_t P,
                            int64_t Q, int64_t stride_h, int64_t stride_w, int64_t dil_h,
                            int64_t dil_w, int64_t pad_top, int64_t pad_left, int64_t groups);
// Max pooling over R x S windows; saves indices (N, P, Q, C): the flat offset within x of each
// maximum (first maximum wins). Padded positions never win. dx is overwritten (zeros elsewhere).
// indices == nullptr: the values only (inference), the same y.
void maxpool2d_forward(float* y, int64_t* indices, const float* x, int64_t N, int64_t H,
                       int64_t W, int64_t C, int64_t P, int64_t Q, int64_t R, int64_t S,
                       int64_t stride_h, int64_t stride_w, int64_t pad_top, int64_t pad_left);
void maxpool2d_backward(float* dx, const float* dy, const int64_t* indices, int64_t N, int64_t H,
                        int64_t W, int64_t C, int64_t P, int64_t Q);
// Average pooling; each window divides by its count of in-bounds elements (TensorFlow 'same').
void avgpool2d_forward(float* y, const float* x, int64_t N, int64_t H, int64_t W, int64_t C,
                       int64_t P, int64_t Q, int64_t R, int64_t S, int64_t stride_h,
                       int64_t stride_w, int64_t pad_top, int64_t pad_left);
void avgpool2d_backward(float* dx, const float* dy, int64_t N, int64_t H, int64_t W, int64_t C,
                        int64_t P, int64_t Q, int64_t R, int64_t S, int64_t stride_h,
                        int64_t stride_w, int64_t pad_top, int64_t pad_left);

// ---------------------------------------------------------------------------------------------
// Batch normalization (cpp/batchnorm/) over a tensor viewed as (outer, C, inner)
// ---------------------------------------------------------------------------------------------
// Training: statistics over outer and inner for each channel (accumulated in float64).
// Outputs y (outer, C, inner) and var (C) (biased batch variance, for the moving average);
// saves mean (C) and inv_std (C) = 1 / sqrt(var + epsilon). gamma, beta (C) [opt].
void batchnorm_forward_train(float* y, float* var, float* mean, float* inv_std, const float* x,
                             const float* gamma, const float* beta, int64_t outer, int64_t C,
                             int64_t inner, float epsilon);
// Inference: y = (x - mean) / sqrt(var + epsilon) * gamma + beta with the given statistics.
void batchnorm_forward_infer(float* y, const float* x, const float* mean, const float* var,
                             const float* gamma, const float* beta, int64_t outer, int64_t C,
                             int64_t inner, float epsilon);
// dx (outer, C, inner) [opt], dgamma (C) [opt], dbeta (C) [opt] from dy and the saved state.
void batchnorm_backward(float* dx, float* dgamma, float* dbeta, const float* dy, const float* x,
                        const float* mean, const float* inv_std, const float* gamma,
                        int64_t outer, int64_t C, int64_t inner);
// BatchNormalization followed by ReLU in one op (all outputs overwritten). The training forward
// writes y = max(bn(x), 0), var, mean, inv_std as batchnorm_forward_train, and saves scale (C)
// and shift (C), the coefficients of its write pass (bn(x) = (x - mean) * scale + shift).
void batchnorm_relu_forward_train(float* y, float* var, float* mean, float* inv_std,
                                  float* scale, float* shift, const float* x, const float* gamma,
                                  const float* beta, int64_t outer, int64_t C, int64_t inner,
                                  float epsilon);
// y = max(batchnorm_forward_infer(x), 0).
void batchnorm_relu_forward_infer(float* y, const float* x, const float* mean, const float* var,
                                  const float* gamma, const float* beta, int64_t outer,
                                  int64_t C, int64_t inner, float epsilon);
// batchnorm_backward of dy * relu'(bn(x)), the mask recomputed from x, mean, scale, shift.
void batchnorm_relu_backward(float* dx, float* dgamma, float* dbeta, const float* dy,
                             const float* x, const float* mean, const float* inv_std,
                             const float* scale, const float* shift, const float* gamma,
                             int64_t outer, int64_t C, int64_t inner);
// BatchNormalization + ReLU + MaxPooling2D (pool == strides, 'valid') in one op, channels_last:
// x, dx (N, H, W, C); y, dy, positions (N, H / pool_h, W / pool_w, C), pool_h * pool_w <= 128.
// The forward computes the statistics as batchnorm_relu_forward_train (var, mean, inv_std,
// scale, shift alike) and writes only the max pool of max(bn(x), 0) (maxpool2d_forward's
// values, window order and tie rule) and each maximum's position in its window, int8
// (r * pool_w + s). The backward is batchnorm_relu_backward of maxpool2d_backward's
// cotangent for those maxima, bit for bit, without writing that un-pooled cotangent.
void batchnorm_relu_maxpool_forward_train(float* y, int8_t* positions, float* var, float* mean,
                                          float* inv_std, float* scale, float* shift,
                                          const float* x, const float* gamma, const float* beta,
                                          int64_t N, int64_t H, int64_t W, int64_t C,
                                          int64_t pool_h, int64_t pool_w, float epsilon);
void batchnorm_relu_maxpool_backward(float* dx, float* dgamma, float* dbeta, const float* dy,
                                     const int8_t* positions, const float* x, const float* mean,
                                     const float* inv_std, const float* scale,
                                     const float* shift, const float* gamma, int64_t N,
                                     int64_t H, int64_t W, int64_t C, int64_t pool_h,
                                     int64_t pool_w);

// ---------------------------------------------------------------------------------------------
// Layer normalization (cpp/layernorm/) over the last axis: x (rows, D), one row at a time
// ---------------------------------------------------------------------------------------------
// y = (x - mean) * rstd * gamma + beta per row (rms_scaling: y = x * rstd * gamma, Keras 3's
// uncentred flag; rstd still from the centred variance), statistics in float64 (two-pass).
// Saves mean (rows) and rstd (rows) = 1 / sqrt(var + epsilon). gamma, beta (D) [opt].
void layer_norm_forward(float* y, float* mean, float* rstd, const float* x, const float* gamma,
                        const float* beta, int64_t rows, int64_t D, double epsilon,
                        bool rms_scaling);
// dx (rows, D) [opt], dgamma (D) [opt], dbeta (D) [opt] from dy and the saved mean and rstd;
// dgamma / dbeta are summed in a fixed order (the same for every thread count).
void layer_norm_backward(float* dx, float* dgamma, float* dbeta, const float* dy, const float* x,
                         const float* mean, const float* rstd, const float* gamma, int64_t rows,
                         int64_t D, bool rms_scaling);

// ---------------------------------------------------------------------------------------------
// Recurrent (cpp/rnn/). Keras layouts: x (N, T, F), kernel (F, G*U), recurrent_kernel (U, G*U),
// gates in Keras order (LSTM: i, f, c, o; GRU: z, r, h). Sequences are batch-major; step s
// reads x[:, s] (or x[:, T-1-s] with go_backwards) and writes hs[:, s] (processing order, as
// Keras returns it). Saved state is indexed by step.
// ---------------------------------------------------------------------------------------------
// LSTM sequence: hs (N, T, U), h_final (N, U), c_final (N, U); saves gates (N, T, 4U) after
// their activations and cs (N, T, U), the cell state after each step. bias (4U) [opt].
// gates and cs are optional together: without them (inference) nothing but the outputs is
// written (the cell state lives in an internal (2, N, U) scratch).
void lstm_sequence_forward(float* hs, float* h_final, float* c_final, float* gates, float* cs,
                           const float* x, const float* h0, const float* c0, const float* kernel,
                           const float* recurrent_kernel, const float* bias, int64_t N,
                           int64_t T, int64_t F, int64_t U, bool go_backwards,
                           int64_t activation, int64_t recurrent_activation);
// dhs (N, T, U) [opt], dh_final [opt], dc_final [opt] are the incoming gradients.
// Outputs dx (N, T, F) [opt], dh0 (N, U) [opt], dc0 (N, U) [opt], dkernel, drecurrent_kernel,
// dbias [opt].
void lstm_sequence_backward(float* dx, float* dh0, float* dc0, float* dkernel,
                            float* drecurrent_kernel, float* dbias, const float* dhs,
                            const float* dh_final, const float* dc_final, const float* gates,
                            const float* cs, const float* hs, const float* x, const float* h0,
                            const float* c0, const float* kernel, const float* recurrent_kernel,
                            int64_t N, int64_t T, int64_t F, int64_t U, bool go_backwards,
                            int64_t activation, int64_t recurrent_activation);
// One step: h, c (N, U); saves gates (N, 4U). x (N, F).
void lstm_cell_forward(float* h, float* c, float* gates, const float* x, const float* h_prev,
                       const float* c_prev, const float* kernel, const float* recurrent_kernel,
                       const float* bias, int64_t N, int64_t F, int64_t U, int64_t activation,
                       int64_t recurrent_activation);
// dh (N, U), dc (N, U) [opt] incoming; c is the forward's new cell state.
void lstm_cell_backward(float* dx, float* dh_prev, float* dc_prev, float* dkernel,
                        float* drecurrent_kernel, float* dbias, const float* dh, const float* dc,
                        const float* gates, const float* c, const float* x, const float* h_prev,
                        const float* c_prev, const float* kernel, const float* recurrent_kernel,
                        int64_t N, int64_t F, int64_t U, int64_t activation,
                        int64_t recurrent_activation);

// GRU sequence: hs (N, T, U), h_final (N, U); saves gates (N, T, 3U) (z, r and the candidate
// after their activations) and hproj (N, T, U): the recurrent part of the candidate's
// pre-activation (reset_after: h_prev @ Wr_h + br_h; otherwise (r * h_prev) @ Wr_h).
// bias [opt]: (3U) when !reset_after, (2, 3U) = [input bias; recurrent bias] when reset_after.
void gru_sequence_forward(float* hs, float* h_final, float* gates, float* hproj, const float* x,
                          const float* h0, const float* kernel, const float* recurrent_kernel,
                          const float* bias, int64_t N, int64_t T, int64_t F, int64_t U,
                          bool go_backwards, bool reset_after, int64_t activation,
                          int64_t recurrent_activation);
void gru_sequence_backward(float* dx, float* dh0, float* dkernel, float* drecurrent_kernel,
                           float* dbias, const float* dhs, const float* dh_final,
                           const float* gates, const float* hproj, const float* hs,
                           const float* x, const float* h0, const float* kernel,
                           const float* recurrent_kernel, int64_t N, int64_t T, int64_t F,
                           int64_t U, bool go_backwards, bool reset_after, int64_t activation,
                           int64_t recurrent_activation);
void gru_cell_forward(float* h, float* gates, float* hproj, const float* x, const float* h_prev,
                      const float* kernel, const float* recurrent_kernel, const float* bias,
                      int64_t N, int64_t F, int64_t U, bool reset_after, int64_t activation,
                      int64_t recurrent_activation);
void gru_cell_backward(float* dx, float* dh_prev, float* dkernel, float* drecurrent_kernel,
                       float* dbias, const float* dh, const float* gates, const float* hproj,
                       const float* x, const float* h_prev, const float* kernel,
                       const float* recurrent_kernel, int64_t N, int64_t F, int64_t U,
                       bool reset_after, int64_t activation, int64_t recurrent_activation);

// SimpleRNN: h_t = act(x_t @ kernel + h_{t-1} @ recurrent_kernel + bias). No extra saved state:
// the backward reads hs.
void simple_rnn_sequence_forward(float* hs, float* h_final, const float* x, const float* h0,
                                 const float* kernel, const float* recurrent_kernel,
                                 const float* bias, int64_t N, int64_t T, int64_t F, int64_t U,
                                 bool go_backwards, int64_t activation);
void simple_rnn_sequence_backward(float* dx, float* dh0, float* dkernel, float* drecurrent_kernel,
                                  float* dbias, const float* dhs, const float* dh_final,
                                  const float* hs, const float* x, const float* h0,
                                  const float* kernel, const float* recurrent_kernel, int64_t N,
                                  int64_t T, int64_t F, int64_t U, bool go_backwards,
                                  int64_t activation);
void simple_rnn_cell_forward(float* h, const float* x, const float* h_prev, const float* kernel,
                             const float* recurrent_kernel, const float* bias, int64_t N,
                             int64_t F, int64_t U, int64_t activation);
void simple_rnn_cell_backward(float* dx, float* dh_prev, float* dkernel,
                              float* drecurrent_kernel, float* dbias, const float* dh,
                              const float* h, const float* x, const float* h_prev,
                              const float* kernel, const float* recurrent_kernel, int64_t N,
                              int64_t F, int64_t U, int64_t activation);

// ---------------------------------------------------------------------------------------------
// Optimizer updates over flat buffers (cpp/optimizers/), Keras 3 formulas. Each READS AND
// WRITES param (n) and its slots (n). weight_decay w applies first, decoupled:
// param -= param * w * lr. step is the 1-based iteration count.
// ---------------------------------------------------------------------------------------------
// momentum == 0: param -= lr * g. Otherwise v = momentum * v - lr * g, then
// param += v (or, nesterov, param += momentum * v - lr * g). velocity [opt] when momentum == 0.
void sgd_update(float* param, float* velocity, const float* grad, int64_t n, float lr,
                float momentum, bool nesterov, float weight_decay);
// m += (g - m)(1 - b1); v += (g^2 - v)(1 - b2); amsgrad (vhat given): vhat = max(vhat, v),
// use vhat for v; param -= lr * sqrt(1 - b2^step) / (1 - b1^step) * m / (sqrt(v) + eps).
void adam_update(float* param, float* m, float* v, float* vhat, const float* grad, int64_t n,
                 float lr, float beta1, float beta2, float epsilon, int64_t step,
                 float weight_decay);
// m += (g - m)(1 - b1); u = max(b2 * u, |g|); param -= lr / (1 - b1^step) * m / (u + eps).
void adamax_update(float* param, float* m, float* u, const float* grad, int64_t n, float lr,
                   float beta1, float beta2, float epsilon, int64_t step, float weight_decay);
// Keras 3 Nadam; u_t, u_t1 (the momentum schedule at step and step + 1) and u_product_t
// (the running product including u_t) are computed by the caller, which keeps that scalar:
//   u_t = b1 (1 - 0.5 * 0.96^step), u_t1 = b1 (1 - 0.5 * 0.96^(step+1)), u_product_t *= u_t.
// m, v as Adam; m_hat = u_t1 m / (1 - u_product_t u_t1) + (1 - u_t) g / (1 - u_product_t);
// v_hat = v / (1 - b2^step); param -= lr * m_hat / (sqrt(v_hat) + eps).
void nadam_update(float* param, float* m, float* v, const float* grad, int64_t n, float lr,
                  float beta1, float beta2, float epsilon, int64_t step, float u_t, float u_t1,
                  float u_product_t, float weight_decay);
// centered: average_grad [opt] tracks E[g]; momentum > 0: momentum_buf [opt] is the velocity.
void rmsprop_update(float* param, float* velocity, float* momentum_buf, float* average_grad,
                    const float* grad, int64_t n, float lr, float rho, float momentum,
                    float epsilon, bool centered, float weight_decay);
// acc += g^2; param -= lr * g / sqrt(acc + eps).
void adagrad_update(float* param, float* accumulator, const float* grad, int64_t n, float lr,
                    float epsilon, float weight_decay);
// Keras 3 Adadelta: ag = rho ag + (1 - rho) g^2; delta = -sqrt(ad + eps) g / sqrt(ag + eps);
// ad = rho ad + (1 - rho) delta^2; param += lr * delta.
void adadelta_update(float* param, float* accumulated_grad, float* accumulated_delta,
                     const float* grad, int64_t n, float lr, float rho, float epsilon,
                     float weight_decay);

// Keras 3 Lion: c = b1 m + (1 - b1) g; param -= lr sign(c); m = b2 m + (1 - b2) g.
void lion_update(float* param, float* m, const float* grad, int64_t n, float lr, float beta1,
                 float beta2, float weight_decay);
// Keras 3 Ftrl (l2 += beta / (2 lr); -learning_rate_power is the accumulator power).
void ftrl_update(float* param, float* accumulator, float* linear, const float* grad, int64_t n,
                 float lr, float learning_rate_power, float l1, float l2, float l2_shrinkage,
                 float beta, float weight_decay);
// Keras 3 Lamb over ONE variable (n elements): Adam moments, update u = m_hat / (sqrt(v_hat) +
// eps), param -= lr * (||param|| / ||u|| if both > 0 else 1) * u (norms in float64).
void lamb_update(float* param, float* m, float* v, const float* grad, int64_t n, float lr,
                 float beta1, float beta2, float epsilon, int64_t step, float weight_decay);
// Keras 3 Adafactor over ONE variable. factored: v holds the caller's factored second moment
// (read only); else v = b v + (1 - b)(g^2 + eps1) with b = 1 - step^beta_2_decay.
// u = g / sqrt(v); param -= max(eps2, rms(param)) min(lr, 1/sqrt(step)) u / max(1, rms(u)/clip).
void adafactor_update(float* param, float* v, const float* grad, int64_t n, float lr,
                      float beta_2_decay, float epsilon_1, float epsilon_2, float clip_threshold,
                      int64_t step, bool factored, float weight_decay);
// Keras 3 Muon, elementwise parts: m += g + m (momentum - 1); out = nesterov ? g + momentum m
// : m (the Newton-Schulz input); then, on the orthogonalized out, param -= (lr ortho) scale.
void muon_momentum_update(float* m, float* out, const float* grad, int64_t n, float momentum,
                          bool nesterov);
void muon_update(float* param, const float* ortho, int64_t n, float lr, float scale,
                 float weight_decay);
// Keras 3.15 ScheduleFreeAdamW (torch backend numbers); z is the "momentum" slot.
void schedule_free_adamw_update(float* param, float* z, float* v, const float* grad, int64_t n,
                                float lr, float beta1, float beta2, float epsilon, int64_t step,
                                int64_t warmup_steps, float weight_decay);

// ---- int8 quantization (Keras 3's quantize("int8"); cpp/quantize/) ----
//
// Layouts are row-major and every output is OVERWRITTEN (never accumulated):
//   quantize_int8_rows   x (M, K) float32 -> q (M, K) int8, scale (M) float32.
//                        Per row (the last axis), as Keras's abs_max_quantize(axis=-1) with
//                        value_range (-127, 127) and epsilon 1e-7, in float32:
//                          scale = 127 / (max_k |x[m, k]| + 1e-7)
//                          q = clip(round_half_even(x * scale), -127, 127)
//                        A row holding NaN gets scale NaN and q 0 for every NaN entry (the
//                        dequantized product is then NaN, never a made-up number).
//   matmul_int8          a (M, K) int8 @ b (K, N) int8 -> c (M, N) int32, exact integer sums
//                        (two's complement: a sum past the int32 range wraps, as an int32
//                        matmul does; never for K <= 131072 whatever the int8 values).
//   dense_int8_forward   y (M, N) float32 = float(quantize_rows(x) @ kernel) /
//                        (kernel_scale[n] * inputs_scale[m]), Keras's int8 Dense product before
//                        bias and activation; kernel (K, N) int8, kernel_scale (N) float32.
// Threads: rows of M over the pool (runtime.h). ISA: scalar / avx2 / avx512 builds of the same
// loops (quantize_kernels.h), picked at run time by fk::cpu_isa().
void quantize_int8_rows(int8_t* q, float* scale, const float* x, int64_t M, int64_t K);
void matmul_int8(int32_t* c, const int8_t* a, const int8_t* b, int64_t M, int64_t N, int64_t K);
void dense_int8_forward(float* y, const float* x, const int8_t* kernel, const float* kernel_scale,
                        int64_t M, int64_t N, int64_t K);

}  // namespace fk
