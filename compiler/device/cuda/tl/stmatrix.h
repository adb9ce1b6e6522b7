// Warp-collective stores of 8x8 16-bit matrices to shared memory (sm_90 and
// later): stmatrix.sync.aligned.m8n8.x{2,4}.shared.b16, the inverse of
// ldmatrix (tl/ldmatrix.h).
//
// Every lane of the warp must execute the call. Lane i supplies the address
// of row (i % 8) of matrix (i / 8) (16 contiguous, 16-byte aligned bytes in
// shared memory; with x2 the addresses of lanes 16-31 are not used, but pass
// a valid one). Register j of lane l holds the elements (row l / 4, columns
// 2(l % 4) and 2(l % 4) + 1) of matrix j, lower column in the low half:
// exactly the layout of one 8x8 half of an mma accumulator tile (the
// m16n8k16 C fragment's c0,c1 and c2,c3 pairs) once converted to 16 bits.
//
// On an earlier architecture the wrappers fail to compile with a message
// naming the operation (sm_80 stores fragments with ordinary stores).
#ifndef TILEC_DEVICE_CUDA_TL_STMATRIX_H_
#define TILEC_DEVICE_CUDA_TL_STMATRIX_H_

#include "tl/sync.h"
#include "tl/types.h"

namespace tl {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define TL_STMATRIX_REQUIRE_SM90(what)                           \
  static_assert(N == 0, what                                     \
                " needs sm_90 or later (PTX ISA 7.8); on sm_80 " \
                "store the fragment element by element")
#else
#define TL_STMATRIX_REQUIRE_SM90(what)
#endif

template <int N>
__device__ __forceinline__ void stmatrix_x2(const uint32_t (&r)[N], void* smem_row_ptr) {
  static_assert(N == 2, "tl::stmatrix_x2 stores two 8x8 matrices: pass uint32_t[2]");
  TL_STMATRIX_REQUIRE_SM90("tl::stmatrix_x2");
  asm volatile("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1, %2};" ::"r"(
                   detail::smem_addr(smem_row_ptr)),
               "r"(r[0]), "r"(r[1])
               : "memory");
}

template <int N>
__device__ __forceinline__ void stmatrix_x4(const uint32_t (&r)[N], void* smem_row_ptr) {
  static_assert(N == 4, "tl::stmatrix_x4 stores four 8x8 matrices: pass uint32_t[4]");
  TL_STMATRIX_REQUIRE_SM90("tl::stmatrix_x4");
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(
                   detail::smem_addr(smem_row_ptr)),
               "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3])
               : "memory");
}

#undef TL_STMATRIX_REQUIRE_SM90

}  // namespace tl

#endif  // TILEC_DEVICE_CUDA_TL_STMATRIX_H_
