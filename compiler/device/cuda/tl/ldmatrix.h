// Warp-collective loads of 8x8 16-bit matrices from shared memory (sm_75 and
// later): ldmatrix.sync.aligned.m8n8.x{1,2,4}{.trans}.shared.b16.
//
// Every lane of the warp must execute the call. Lane i supplies the address
// of row (i % 8) of matrix (i / 8) (16 contiguous, 16-byte aligned bytes in
// shared memory; lanes beyond the matrix count still pass a valid address).
// Register j of lane l receives the elements (row l / 4, columns 2(l % 4)
// and 2(l % 4) + 1) of matrix j, lower column in the low half; with _trans,
// the elements (rows 2(l % 4) and 2(l % 4) + 1, column l / 4).
#ifndef TILEC_DEVICE_CUDA_TL_LDMATRIX_H_
#define TILEC_DEVICE_CUDA_TL_LDMATRIX_H_

#include "tl/sync.h"
#include "tl/types.h"

namespace tl {

template <int N>
__device__ __forceinline__ void ldmatrix_x1(uint32_t (&r)[N], const void* smem_row_ptr) {
  static_assert(N == 1, "tl::ldmatrix_x1 loads one 8x8 matrix: pass uint32_t[1]");
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];"
               : "=r"(r[0])
               : "r"(detail::smem_addr(smem_row_ptr)));
}

template <int N>
__device__ __forceinline__ void ldmatrix_x2(uint32_t (&r)[N], const void* smem_row_ptr) {
  static_assert(N == 2, "tl::ldmatrix_x2 loads two 8x8 matrices: pass uint32_t[2]");
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(detail::smem_addr(smem_row_ptr)));
}

template <int N>
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[N], const void* smem_row_ptr) {
  static_assert(N == 4, "tl::ldmatrix_x4 loads four 8x8 matrices: pass uint32_t[4]");
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(detail::smem_addr(smem_row_ptr)));
}

template <int N>
__device__ __forceinline__ void ldmatrix_x1_trans(uint32_t (&r)[N], const void* smem_row_ptr) {
  static_assert(N == 1, "tl::ldmatrix_x1_trans loads one 8x8 matrix: pass uint32_t[1]");
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];"
               : "=r"(r[0])
               : "r"(detail::smem_addr(smem_row_ptr)));
}

template <int N>
__device__ __forceinline__ void ldmatrix_x2_trans(uint32_t (&r)[N], const void* smem_row_ptr) {
  static_assert(N == 2, "tl::ldmatrix_x2_trans loads two 8x8 matrices: pass uint32_t[2]");
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(detail::smem_addr(smem_row_ptr)));
}

template <int N>
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[N], const void* smem_row_ptr) {
  static_assert(N == 4, "tl::ldmatrix_x4_trans loads four 8x8 matrices: pass uint32_t[4]");
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(detail::smem_addr(smem_row_ptr)));
}

}  // namespace tl

#endif  // TILEC_DEVICE_CUDA_TL_LDMATRIX_H_
