// Reference results for the example kernels in examples/, computed from the
// mathematical definitions in float64 with naive loops.
//
// These are the independent oracle that the interpreter and every backend are
// checked against, so they follow the math, never the kernels' tiling: no
// blocks, no online softmax, no split bookkeeping (except where a function
// names a split explicitly, to check a kernel's workspaces).
//
// Conventions shared by every function:
// - Tensors are flat std::vector<double> in row-major (C) order; a shape
//   written [a, b, c] means element (i, j, l) is at index (i * b + j) * c + l.
// - Low-precision inputs (float16, bfloat16, int4) are passed as the exact
//   values the kernel reads, widened to double; the results are exact-math
//   results in double, not rounded to any kernel dtype. Tests compare with a
//   tolerance suited to the kernel's dtypes.
// - Size arguments are element counts per dimension. An input whose size does
//   not match its documented shape is a bug in the calling test: the function
//   prints what is wrong and aborts.
#ifndef TILEC_TESTS_REFERENCE_REFERENCE_H_
#define TILEC_TESTS_REFERENCE_REFERENCE_H_

#include <string>
#include <vector>

namespace tilec::reference {

// ---------------------------------------------------------------------------
// Matrix products (gemm.py, gemm_eager.py, batched_gemm.py, gemm_splitk.py)

// C = op(A) @ op(B).
//   a: [m, k], or [k, m] when trans_a (then op(A) = a^T).
//   b: [k, n], or [n, k] when trans_b (then op(B) = b^T).
// Returns c: [m, n].
std::vector<double> GemmRef(const std::vector<double>& a, const std::vector<double>& b, int m,
                            int n, int k, bool trans_a, bool trans_b);

// C[i] = A[i] @ B[i] for i in [0, batch).
//   a: [batch, m, k]; b: [batch, k, n]. Returns c: [batch, m, n].
std::vector<double> BatchedGemmRef(const std::vector<double>& a, const std::vector<double>& b,
                                   int batch, int m, int n, int k);

// The split-K kernel accumulates into its output: C_out = C_in + A @ B. How K
// is split does not change the result.
//   a: [m, k]; b: [k, n]; c_in: [m, n] (zeros for a plain product).
// Returns c_out: [m, n].
std::vector<double> GemmSplitKRef(const std::vector<double>& a, const std::vector<double>& b,
                                  const std::vector<double>& c_in, int m, int n, int k);

// ---------------------------------------------------------------------------
// Element-wise and row-wise kernels

// C = A + B (elementwise_add.py; the kernel then casts C to its out_dtype).
//   a, b: [m, n]. Returns c: [m, n].
std::vector<double> ElementwiseAddRef(const std::vector<double>& a, const std::vector<double>& b,
                                      int m, int n);

// Y[i, :] = softmax(X[i, :]) = exp(X[i, j] - max_j X[i, j]) / sum_j exp(...)
// (softmax.py).
//   x: [m, n]. Returns y: [m, n].
std::vector<double> SoftmaxRef(const std::vector<double>& x, int m, int n);

// Y[i, j] = X[i, j] / sqrt(mean_j(X[i, :]^2) + eps) * weight[j] (rmsnorm.py).
//   x: [m, n]; weight: [n]. Returns y: [m, n].
std::vector<double> RmsNormRef(const std::vector<double>& x, const std::vector<double>& weight,
                               int m, int n, double eps);

// Y[i, j] = (X[i, j] - mean_i) / sqrt(var_i + eps) * gamma[j] + beta[j]
// (layernorm.py), where mean_i and the biased variance var_i are taken over
// row i.
//   x: [m, n]; gamma, beta: [n]. Returns y: [m, n].
std::vector<double> LayerNormRef(const std::vector<double>& x, const std::vector<double>& gamma,
                                 const std::vector<double>& beta, int m, int n, double eps);

// Y[i] = sum_j X[i, j] (reduce_sum.py).
//   x: [m, n]. Returns y: [m].
std::vector<double> RowSumRef(const std::vector<double>& x, int m, int n);

// Inclusive prefix sum along each row (cumsum.py):
//   forward: Y[i, j] = sum_{j' <= j} X[i, j'];  reverse: sum_{j' >= j}.
//   x: [m, n]. Returns y: [m, n].
std::vector<double> CumsumRef(const std::vector<double>& x, int m, int n, bool reverse);

// ---------------------------------------------------------------------------
// Attention

// Multi-head attention forward (flash_attention.py):
//   O[b, i, h, :] = sum_j P[j] V[b, j, h, :],
//   P = softmax_j(scale * Q[b, i, h, :] . K[b, j, h, :]) over the visible j.
// Without causal every key is visible; with causal, key j is visible to query
// i when j <= i (positions counted from the start of both sequences, so query
// i >= seq_kv sees every key).
//   q: [batch, seq_q, heads, dim]; k, v: [batch, seq_kv, heads, dim].
//   scale: the softmax scale, 1 / sqrt(dim) for the kernel.
// Returns o: [batch, seq_q, heads, dim].
std::vector<double> AttentionRef(const std::vector<double>& q, const std::vector<double>& k,
                                 const std::vector<double>& v, int batch, int heads, int seq_q,
                                 int seq_kv, int dim, bool causal, double scale);

// Grouped-query attention for one decoding step (gqa_decode.py): query head h
// reads KV head g = h / (heads / groups).
//   O[b, h, :] = sum_j softmax_j(scale * Q[b, h, :] . K[b, j, g, :]) V[b, j, g, :]
//   q: [batch, heads, dim]; k, v: [batch, seqlen_kv, groups, dim];
//   heads is a multiple of groups; scale is 1 / sqrt(dim) for the kernel.
// Returns o: [batch, heads, dim] (the kernel's combined output).
std::vector<double> GqaDecodeRef(const std::vector<double>& q, const std::vector<double>& k,
                                 const std::vector<double>& v, int batch, int heads, int groups,
                                 int seqlen_kv, int dim, double scale);

// The per-slice results that a split-KV decode combines: slice s covers keys
// [s * split_len, (s + 1) * split_len) clipped to seqlen_kv.
struct GqaDecodeSplit {
  // [batch, heads, num_split, dim]: attention of each head to the keys of
  // the slice alone (softmax over the slice); zeros for a slice with no key.
  std::vector<double> out_partial;
  // [batch, heads, num_split]: natural log of sum_j exp(scale * q . k_j) over
  // the slice; -infinity for a slice with no key. (gqa_decode.py stores this
  // value times log2(e), as it works in base 2.)
  std::vector<double> lse;
};
// Same layouts and meaning of q, k, v, scale as GqaDecodeRef. The combined
// output is sum_s exp(lse_s - L) out_partial_s / sum_s exp(lse_s - L) for any
// finite L.
GqaDecodeSplit GqaDecodeSplitRef(const std::vector<double>& q, const std::vector<double>& k,
                                 const std::vector<double>& v, int batch, int heads, int groups,
                                 int seqlen_kv, int dim, double scale, int num_split,
                                 int split_len);

// Multi-head latent attention for one decoding step (mla_decode.py). All heads
// share one latent cache KV, which serves as key and value, plus a rotary key
// part K_pe:
//   s_j = scale * (Q[b, h, :] . KV[b, j, :] + Q_pe[b, h, :] . K_pe[b, j, :])
//   O[b, h, :] = sum_j softmax_j(s_j) KV[b, j, :]
//   q: [batch, heads, dim]; q_pe: [batch, heads, pe_dim];
//   kv: [batch, seqlen_kv, dim]; k_pe: [batch, seqlen_kv, pe_dim];
//   scale is 1 / sqrt(dim + pe_dim) for the kernel.
// Returns o: [batch, heads, dim].
std::vector<double> MlaDecodeRef(const std::vector<double>& q, const std::vector<double>& q_pe,
                                 const std::vector<double>& kv, const std::vector<double>& k_pe,
                                 int batch, int heads, int seqlen_kv, int dim, int pe_dim,
                                 double scale);

// ---------------------------------------------------------------------------
// Quantised and convolution kernels

// Unpacks int4 weights as dequant_gemm.py does:
//   W[r, c] = int4(byte >> (4 * (c % 2)) & 0xF) * scales[r, c / group_size],
//   byte = b_packed[r, c / 2]
// Element 2t of a row is the low nibble of byte t, element 2t + 1 the high
// nibble; a nibble is two's complement in [-8, 7].
//   b_packed: [n, k / 2], each an integer byte value in [0, 255] (the uint8
//   tensor's contents); scales: [n, ceil(k / group_size)]; k is even.
// Returns w: [n, k].
std::vector<double> DequantInt4Ref(const std::vector<double>& b_packed,
                                   const std::vector<double>& scales, int n, int k, int group_size);

// C = A @ W^T with W = DequantInt4Ref(b_packed, scales, n, k, group_size)
// (dequant_gemm.py). a: [m, k]; b_packed, scales as above. Returns c: [m, n].
std::vector<double> DequantGemmRef(const std::vector<double>& a,
                                   const std::vector<double>& b_packed,
                                   const std::vector<double>& scales, int m, int n, int k,
                                   int group_size);

// 2-D convolution, stride `stride` and zero padding `pad` on every side
// (conv2d_im2col.py):
//   out[b, oh, ow, f] = sum_{r, s, c} x[b, oh*stride + r - pad, ow*stride + s - pad, c]
//                                     * w[r, s, c, f]
// where input positions outside the image count as zero,
// out_h = (in_h + 2 pad - kh) / stride + 1, out_w likewise.
//   x: NHWC [batch, in_h, in_w, channels]; w: HWIO [kh, kw, channels, filters].
// Returns out: NHWC [batch, out_h, out_w, filters].
std::vector<double> Conv2dRef(const std::vector<double>& x, const std::vector<double>& w, int batch,
                              int in_h, int in_w, int channels, int filters, int kh, int kw,
                              int stride, int pad);

// ---------------------------------------------------------------------------
// Atomics (atomics.py)

// atomic_fold with op "add", "max" or "min" (order-free results only):
//   B[i, j] = op(B[i, j], A[i, j]);  when fold, O[j] = op(O[j], A[0..m-1, j]).
//   a, b: [m, n]; o: [n]. Sums are reduced modulo `modulus` (2^bits of an
//   unsigned dtype whose adds wrap; 0: no wrap). Returns {b, o}.
struct AtomicFold {
  std::vector<double> b, o;
};
AtomicFold AtomicFoldRef(const std::vector<double>& a, const std::vector<double>& b,
                         const std::vector<double>& o, int m, int n, const std::string& op,
                         bool fold, double modulus);

// claim_slots: element i of X goes to bucket X[i] & 3, takes
// pos = Count[bucket]++ and sets Slots[bucket, pos] = 1 where 0 <= pos < slots.
//   x: [n] (integers); count: [4]; slots_in: [4, slots]. Returns {count, slots}.
struct ClaimSlots {
  std::vector<double> count, slots;
};
ClaimSlots ClaimSlotsRef(const std::vector<double>& x, const std::vector<double>& count,
                         const std::vector<double>& slots_in, int n, int slots);

}  // namespace tilec::reference

#endif  // TILEC_TESTS_REFERENCE_REFERENCE_H_
