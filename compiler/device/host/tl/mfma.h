// Host twin of AMD's matrix instructions (wave64; compiler/device/hip/tl/mfma.h
// is the device side):
//   mfma_32x32x8(d, a, b)    v_mfma_f32_32x32x8_{f16,bf16}: d (16 floats) += A @ B
//   mfma_16x16x16(d, a, b)   v_mfma_f32_16x16x16_{f16,bf16}: d (4 floats) += A @ B
// a and b are this lane's four operand values (tl::half_t or tl::bfloat16_t).
// The emulator gathers all 64 lanes' registers and places them where AMD's
// lane tables put them (warp_ops.cc, Mfma), so operands loaded in the wrong
// layout compute the wrong product. Every lane of the wavefront must call.
#ifndef TILEC_DEVICE_HOST_TL_MFMA_H_
#define TILEC_DEVICE_HOST_TL_MFMA_H_

#include "tl/thread.h"
#include "tl/types.h"

namespace tl {
namespace host {

template <int R, typename AT>
inline void mfma(int32_t kind, float (&d)[R], const AT (&a)[4], const AT (&b)[4]) {
  MfmaIn in{kind, {}, {}, {}};
  for (int j = 0; j < 4; ++j) {
    in.a[j] = a[j].bits();
    in.b[j] = b[j].bits();
  }
  for (int r = 0; r < R; ++r) in.c[r] = d[r];
  float out[16];
  collective(kWarpMfma, &in, out);
  for (int r = 0; r < R; ++r) d[r] = out[r];
}

}  // namespace host

inline void mfma_32x32x8(float (&d)[16], const half_t (&a)[4], const half_t (&b)[4]) {
  host::mfma(host::kMfma32x32x8F16, d, a, b);
}
inline void mfma_32x32x8(float (&d)[16], const bfloat16_t (&a)[4], const bfloat16_t (&b)[4]) {
  host::mfma(host::kMfma32x32x8Bf16, d, a, b);
}
inline void mfma_16x16x16(float (&d)[4], const half_t (&a)[4], const half_t (&b)[4]) {
  host::mfma(host::kMfma16x16x16F16, d, a, b);
}
inline void mfma_16x16x16(float (&d)[4], const bfloat16_t (&a)[4], const bfloat16_t (&b)[4]) {
  host::mfma(host::kMfma16x16x16Bf16, d, a, b);
}

}  // namespace tl

#endif  // TILEC_DEVICE_HOST_TL_MFMA_H_
