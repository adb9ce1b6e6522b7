// Host twin of AMD's matrix instructions (wave64; compiler/device/hip/tl/mfma.h
// is the device side):
//   mfma_32x32x8(d, a, b)    v_mfma_f32_32x32x8_{f16,bf16}: d (16 floats) += A @ B
//   mfma_16x16x16(d, a, b)   v_mfma_f32_16x16x16_{f16,bf16}: d (4 floats) += A @ B
//   mfma_32x32x16(d, a, b)   v_mfma_f32_32x32x16_{fp8,bf8}_{fp8,bf8} (gfx942)
//   mfma_16x16x32(d, a, b)   v_mfma_f32_16x16x32_{fp8,bf8}_{fp8,bf8} (gfx942)
// a and b are this lane's four operand values (tl::half_t or tl::bfloat16_t),
// or eight (tl::fp8_e4m3fnuz_t is fp8, tl::fp8_e5m2fnuz_t bf8).
// The emulator gathers all 64 lanes' registers and places them where AMD's
// lane tables put them (warp_ops.cc, Mfma), so operands loaded in the wrong
// layout compute the wrong product. Every lane of the wavefront must call.
#ifndef TILEC_DEVICE_HOST_TL_MFMA_H_
#define TILEC_DEVICE_HOST_TL_MFMA_H_

#include <type_traits>

#include "tl/thread.h"
#include "tl/types.h"

namespace tl {
namespace host {

template <typename T>
constexpr int32_t mfma_type() {
  if constexpr (std::is_same_v<T, half_t>) return kMfmaF16;
  if constexpr (std::is_same_v<T, bfloat16_t>) return kMfmaBf16;
  if constexpr (std::is_same_v<T, fp8_e4m3fnuz_t>) return kMfmaFp8;
  if constexpr (std::is_same_v<T, fp8_e5m2fnuz_t>) return kMfmaBf8;
  return 0;
}

template <int T, int R, int V, typename AT, typename BT>
inline void mfma(float (&d)[R], const AT (&a)[V], const BT (&b)[V]) {
  static_assert(mfma_type<AT>() != 0 && mfma_type<BT>() != 0 && sizeof(AT) == sizeof(BT) &&
                    V * sizeof(AT) == 8,
                "tl::mfma: operands are four tl::half_t / tl::bfloat16_t or eight fnuz float8");
  MfmaIn in{T, mfma_type<AT>(), mfma_type<BT>(), {}, {}, {}};
  for (int j = 0; j < V; ++j) {
    in.a[j] = a[j].bits();
    in.b[j] = b[j].bits();
  }
  for (int r = 0; r < R; ++r) in.c[r] = d[r];
  float out[16];
  collective(kWarpMfma, &in, out);
  for (int r = 0; r < R; ++r) d[r] = out[r];
}

}  // namespace host

template <typename AT, typename BT>
inline void mfma_32x32x8(float (&d)[16], const AT (&a)[4], const BT (&b)[4]) {
  host::mfma<32>(d, a, b);
}
template <typename AT, typename BT>
inline void mfma_16x16x16(float (&d)[4], const AT (&a)[4], const BT (&b)[4]) {
  host::mfma<16>(d, a, b);
}
template <typename AT, typename BT>
inline void mfma_32x32x16(float (&d)[16], const AT (&a)[8], const BT (&b)[8]) {
  host::mfma<32>(d, a, b);
}
template <typename AT, typename BT>
inline void mfma_16x16x32(float (&d)[4], const AT (&a)[8], const BT (&b)[8]) {
  host::mfma<16>(d, a, b);
}

}  // namespace tl

#endif  // TILEC_DEVICE_HOST_TL_MFMA_H_
