// Number formats of the tile IR's element types, stored and rounded as the
// hardware does. The reference interpreter and the Tensor type route every
// store, cast and arithmetic result through these functions.
//
// Floats (values travel as doubles; a double holds every value of every float
// dtype exactly):
// - float64, float32: IEEE binary64/binary32, round-to-nearest-even (RNE),
//   subnormals kept (no flush to zero).
// - float16 (IEEE binary16) and bfloat16 (1 sign, 8 exponent, 7 mantissa
//   bits): RNE straight from the double (no double rounding through float32),
//   subnormals kept, results whose rounded magnitude exceeds the largest finite
//   value become +-inf, NaN stays NaN.
// - float8_e4m3 (OCP E4M3FN: bias 7, no infinities, max 448, NaN is
//   S.1111.111) and float8_e5m2 (bias 15, IEEE-like, max 57344): conversions
//   into them follow CUDA's `cvt.rn.satfinite` (what __nv_fp8_e4m3(float) and
//   __nv_fp8_e5m2(float) use, and hence TileLang's generated CUDA): RNE;
//   finite values beyond the max normal clamp to +-max; +-inf clamps to +-max
//   too (satfinite never produces an infinity: cuda_fp8.hpp's
//   __nv_cvt_double_to_fp8 treats an infinite input as an overflow, which
//   saturates); NaN stays NaN; subnormals kept; magnitudes at or below half
//   the smallest subnormal round to a zero of the same sign.
// - float8_e4m3fnuz (bias 8, max 240) and float8_e5m2fnuz (bias 16, max
//   57344), AMD's float8 on MI300: no infinities and no negative zero; the
//   one NaN is 0x80. Conversions round and saturate as above (HIP's
//   __HIP_SATFINITE, the default of its fnuz types), except that every zero,
//   -0 and negative values that round to zero included, is +0.
// Integers (values travel as int64_t):
// - int8/int16/int32/int64 and uint8/uint16/uint32/uint64 wrap around modulo
//   2^bits as C's fixed-width conversions do; int4 is a signed 4-bit integer
//   (-8..7) that wraps the same way; bool is 0 or 1 (any nonzero value
//   converts to 1).
// - uint64 values travel as their bit pattern: 2^63 and above read as negative
//   int64_t. Every operation whose result depends on the sign (comparison,
//   division, right shift, conversion to float) goes through the helpers below
//   or tests for uint64 itself. The narrower unsigned types are always
//   non-negative int64_t values, so signed arithmetic on them is exact.
// - float -> integer conversion truncates toward zero and saturates at the
//   integer type's range, NaN giving 0: CUDA's cvt.rzi behaviour (C leaves
//   both cases undefined). float -> bool is `x != 0` (NaN gives true, as in C).
#ifndef TILEC_COMPILER_INTERP_NUMERICS_H_
#define TILEC_COMPILER_INTERP_NUMERICS_H_

#include <cstdint>

#include "compiler/ir/dtype.h"

namespace tilec::interp {

// Rounds x to the nearest value of float dtype t by the rules above.
double RoundToFloat(double x, ir::DType t);

// The storage bits of x (rounded first) in float dtype t, in the low
// DTypeBits(t) bits. NaN encodes as the sign and a canonical quiet NaN.
uint64_t EncodeFloat(double x, ir::DType t);
// The value of the storage bits of float dtype t.
double DecodeFloat(uint64_t bits, ir::DType t);

// Largest finite value of float dtype t.
double MaxFinite(ir::DType t);

// Wraps v into integer or bool dtype t.
int64_t WrapInt(int64_t v, ir::DType t);
// Range of integer dtype t (0 and 1 for bool), as values of t: IntMax(uint64)
// is the bit pattern of 2^64 - 1, i.e. -1.
int64_t IntMin(ir::DType t);
int64_t IntMax(ir::DType t);
// a < b for values of integer or bool dtype t (unsigned for uint64).
bool IntLess(int64_t a, int64_t b, ir::DType t);
// The value of integer v of dtype t as a double, rounded to nearest when its
// magnitude exceeds 2^53.
double IntAsDouble(int64_t v, ir::DType t);

// Conversions across the float/integer divide, by the rules above. The
// integer -> float conversion is exact-then-rounded for |v| <= 2^53; `from`
// is the integer's dtype (uint64 reads v's bits as unsigned).
int64_t FloatToInt(double x, ir::DType t);
double IntToFloat(int64_t v, ir::DType t, ir::DType from = ir::DType::kInt64);

// max/min as CUDA's fmaxf/fminf (and __hmax/__hmin): a NaN operand is
// ignored, the result is NaN only when both operands are NaN.
double FloatMax(double a, double b);
double FloatMin(double a, double b);

}  // namespace tilec::interp

#endif  // TILEC_COMPILER_INTERP_NUMERICS_H_
