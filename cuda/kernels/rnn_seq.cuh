// rnn_seq.cuh: the CUDA recurrent kernels, mirrors of fkeras._C's lstm_*, gru_*, simple_rnn_*
// (same names, argument order and semantics; cpp/include/fkeras/kernels.h). Raw device
// pointers; optional ones may be null. Sizes are validated by the bindings.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace fk_cuda {

void lstm_sequence_forward(float* hs, float* h_final, float* c_final, float* gates, float* cs,
                           const float* x, const float* h0, const float* c0, const float* kernel,
                           const float* recurrent_kernel, const float* bias, int64_t N,
                           int64_t T, int64_t F, int64_t U, bool go_backwards, int64_t act,
                           int64_t rec_act, cudaStream_t stream);
void lstm_sequence_backward(float* dx, float* dh0, float* dc0, float* dkernel,
                            float* drecurrent_kernel, float* dbias, const float* dhs,
                            const float* dh_final, const float* dc_final, const float* gates,
                            const float* cs, const float* hs, const float* x, const float* h0,
                            const float* c0, const float* kernel, const float* recurrent_kernel,
                            int64_t N, int64_t T, int64_t F, int64_t U, bool go_backwards,
                            int64_t act, int64_t rec_act, cudaStream_t stream);
void gru_sequence_forward(float* hs, float* h_final, float* gates, float* hproj, const float* x,
                          const float* h0, const float* kernel, const float* recurrent_kernel,
                          const float* bias, int64_t N, int64_t T, int64_t F, int64_t U,
                          bool go_backwards, bool reset_after, int64_t act, int64_t rec_act,
                          cudaStream_t stream);
void gru_sequence_backward(float* dx, float* dh0, float* dkernel, float* drecurrent_kernel,
                           float* dbias, const float* dhs, const float* dh_final,
                           const float* gates, const float* hproj, const float* hs,
                           const float* x, const float* h0, const float* kernel,
                           const float* recurrent_kernel, int64_t N, int64_t T, int64_t F,
                           int64_t U, bool go_backwards, bool reset_after, int64_t act,
                           int64_t rec_act, cudaStream_t stream);
void simple_rnn_sequence_forward(float* hs, float* h_final, const float* x, const float* h0,
                                 const float* kernel, const float* recurrent_kernel,
                                 const float* bias, int64_t N, int64_t T, int64_t F, int64_t U,
                                 bool go_backwards, int64_t act, cudaStream_t stream);
void simple_rnn_sequence_backward(float* dx, float* dh0, float* dkernel, float* drecurrent_kernel,
                                  float* dbias, const float* dhs, const float* dh_final,
                                  const float* hs, const float* x, const float* h0,
                                  const float* kernel, const float* recurrent_kernel, int64_t N,
                                  int64_t T, int64_t F, int64_t U, bool go_backwards, int64_t act,
                                  cudaStream_t stream);

}  // namespace fk_cuda

namespace fk_cuda {

// The cell kernels: one step, the sequences' code with T = 1 (rnn_seq.cu).
void lstm_cell_forward(float* h, float* c, float* gates, const float* x, const float* h_prev,
                       const float* c_prev, const float* kernel, const float* recurrent_kernel,
                       const float* bias, int64_t N, int64_t F, int64_t U, int64_t act,
                       int64_t rec_act, cudaStream_t stream);
void lstm_cell_backward(float* dx, float* dh_prev, float* dc_prev, float* dkernel,
                        float* drecurrent_kernel, float* dbias, const float* dh, const float* dc,
                        const float* gates, const float* c, const float* x, const float* h_prev,
                        const float* c_prev, const float* kernel, const float* recurrent_kernel,
                        int64_t N, int64_t F, int64_t U, int64_t act, int64_t rec_act,
                        cudaStream_t stream);
void gru_cell_forward(float* h, float* gates, float* hproj, const float* x, const float* h_prev,
                      const float* kernel, const float* recurrent_kernel, const float* bias,
                      int64_t N, int64_t F, int64_t U, bool reset_after, int64_t act,
                      int64_t rec_act, cudaStream_t stream);
void gru_cell_backward(float* dx, float* dh_prev, float* dkernel, float* drecurrent_kernel,
                       float* dbias, const float* dh, const float* gates, const float* hproj,
                       const float* x, const float* h_prev, const float* kernel,
                       const float* recurrent_kernel, int64_t N, int64_t F, int64_t U,
                       bool reset_after, int64_t act, int64_t rec_act, cudaStream_t stream);
void simple_rnn_cell_forward(float* h, const float* x, const float* h_prev, const float* kernel,
                             const float* recurrent_kernel, const float* bias, int64_t N,
                             int64_t F, int64_t U, int64_t act, cudaStream_t stream);
void simple_rnn_cell_backward(float* dx, float* dh_prev, float* dkernel,
                              float* drecurrent_kernel, float* dbias, const float* dh,
                              const float* h, const float* x, const float* h_prev,
                              const float* kernel, const float* recurrent_kernel, int64_t N,
                              int64_t F, int64_t U, int64_t act, cudaStream_t stream);

}  // namespace fk_cuda
