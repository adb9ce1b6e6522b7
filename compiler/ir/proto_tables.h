// Internal to the IR <-> tilec.v1 conversion: the enum tables shared by the
// writer (proto_convert.cc) and the reader (proto_reader.cc).
#ifndef TILEC_COMPILER_IR_PROTO_TABLES_H_
#define TILEC_COMPILER_IR_PROTO_TABLES_H_

#include <cstddef>
#include <iterator>
#include <optional>

#include "compiler/ir/ir.h"
#include "proto/tilec/v1/ir.pb.h"

namespace tilec::ir::proto_internal {

namespace v1 = ::tilec::v1;

// ---------------------------------------------------------------------------
// Enum tables. Each lists the IR enum in declaration order next to its wire
// value; the static_asserts keep them dense and complete, so conversion is by
// index.

template <typename Ir, typename Wire>
struct EnumPair {
  Ir ir;
  Wire wire;
};

template <typename Ir, typename Wire, size_t N>
constexpr bool IsDense(const EnumPair<Ir, Wire> (&table)[N]) {
  for (size_t i = 0; i < N; ++i) {
    if (static_cast<size_t>(table[i].ir) != i) return false;
    if (static_cast<size_t>(table[i].wire) != i + 1) return false;
  }
  return true;
}

template <typename Ir, typename Wire, size_t N>
Wire ToWire(const EnumPair<Ir, Wire> (&table)[N], Ir v) {
  size_t i = static_cast<size_t>(v);
  return i < N ? table[i].wire : static_cast<Wire>(0);
}

template <typename Ir, typename Wire, size_t N>
std::optional<Ir> FromWire(const EnumPair<Ir, Wire> (&table)[N], int v) {
  if (v < 1 || static_cast<size_t>(v) > N) return std::nullopt;
  return table[v - 1].ir;
}

constexpr EnumPair<DType, v1::DType> kDTypes[] = {
    {DType::kBool, v1::DTYPE_BOOL},
    {DType::kInt4, v1::DTYPE_INT4},
    {DType::kInt8, v1::DTYPE_INT8},
    {DType::kUInt8, v1::DTYPE_UINT8},
    {DType::kInt16, v1::DTYPE_INT16},
    {DType::kInt32, v1::DTYPE_INT32},
    {DType::kInt64, v1::DTYPE_INT64},
    {DType::kFloat8E4M3, v1::DTYPE_FLOAT8_E4M3},
    {DType::kFloat8E5M2, v1::DTYPE_FLOAT8_E5M2},
    {DType::kFloat16, v1::DTYPE_FLOAT16},
    {DType::kBFloat16, v1::DTYPE_BFLOAT16},
    {DType::kFloat32, v1::DTYPE_FLOAT32},
    {DType::kFloat64, v1::DTYPE_FLOAT64},
    {DType::kUInt16, v1::DTYPE_UINT16},
    {DType::kUInt32, v1::DTYPE_UINT32},
    {DType::kUInt64, v1::DTYPE_UINT64},
    {DType::kFloat8E4M3FNUZ, v1::DTYPE_FLOAT8_E4M3FNUZ},
    {DType::kFloat8E5M2FNUZ, v1::DTYPE_FLOAT8_E5M2FNUZ},
};
static_assert(IsDense(kDTypes) && std::size(kDTypes) == std::size(kAllDTypes) &&
              v1::DType_MAX == std::size(kDTypes));

constexpr EnumPair<BinaryOp, v1::BinaryOp> kBinaryOps[] = {
    {BinaryOp::kAdd, v1::BINARY_OP_ADD},
    {BinaryOp::kSub, v1::BINARY_OP_SUB},
    {BinaryOp::kMul, v1::BINARY_OP_MUL},
    {BinaryOp::kDiv, v1::BINARY_OP_DIV},
    {BinaryOp::kMod, v1::BINARY_OP_MOD},
    {BinaryOp::kFloorDiv, v1::BINARY_OP_FLOOR_DIV},
    {BinaryOp::kFloorMod, v1::BINARY_OP_FLOOR_MOD},
    {BinaryOp::kMin, v1::BINARY_OP_MIN},
    {BinaryOp::kMax, v1::BINARY_OP_MAX},
    {BinaryOp::kEq, v1::BINARY_OP_EQ},
    {BinaryOp::kNe, v1::BINARY_OP_NE},
    {BinaryOp::kLt, v1::BINARY_OP_LT},
    {BinaryOp::kLe, v1::BINARY_OP_LE},
    {BinaryOp::kGt, v1::BINARY_OP_GT},
    {BinaryOp::kGe, v1::BINARY_OP_GE},
    {BinaryOp::kAnd, v1::BINARY_OP_AND},
    {BinaryOp::kOr, v1::BINARY_OP_OR},
    {BinaryOp::kBitAnd, v1::BINARY_OP_BIT_AND},
    {BinaryOp::kBitOr, v1::BINARY_OP_BIT_OR},
    {BinaryOp::kBitXor, v1::BINARY_OP_BIT_XOR},
    {BinaryOp::kShl, v1::BINARY_OP_SHL},
    {BinaryOp::kShr, v1::BINARY_OP_SHR},
};
static_assert(IsDense(kBinaryOps) && std::size(kBinaryOps) == kNumBinaryOps &&
              v1::BinaryOp_MAX == kNumBinaryOps);

constexpr EnumPair<UnaryOp, v1::UnaryOp> kUnaryOps[] = {
    {UnaryOp::kNeg, v1::UNARY_OP_NEG},
    {UnaryOp::kNot, v1::UNARY_OP_NOT},
    {UnaryOp::kBitNot, v1::UNARY_OP_BIT_NOT},
};
static_assert(IsDense(kUnaryOps) && std::size(kUnaryOps) == kNumUnaryOps &&
              v1::UnaryOp_MAX == kNumUnaryOps);

constexpr EnumPair<CallFn, v1::CallFn> kCallFns[] = {
    {CallFn::kAbs, v1::CALL_FN_ABS},
    {CallFn::kCeilDiv, v1::CALL_FN_CEIL_DIV},
    {CallFn::kExp, v1::CALL_FN_EXP},
    {CallFn::kExp2, v1::CALL_FN_EXP2},
    {CallFn::kLog, v1::CALL_FN_LOG},
    {CallFn::kLog2, v1::CALL_FN_LOG2},
    {CallFn::kSqrt, v1::CALL_FN_SQRT},
    {CallFn::kRsqrt, v1::CALL_FN_RSQRT},
    {CallFn::kTanh, v1::CALL_FN_TANH},
    {CallFn::kSigmoid, v1::CALL_FN_SIGMOID},
    {CallFn::kSin, v1::CALL_FN_SIN},
    {CallFn::kCos, v1::CALL_FN_COS},
    {CallFn::kErf, v1::CALL_FN_ERF},
    {CallFn::kFloor, v1::CALL_FN_FLOOR},
    {CallFn::kCeil, v1::CALL_FN_CEIL},
    {CallFn::kRound, v1::CALL_FN_ROUND},
    {CallFn::kPow, v1::CALL_FN_POW},
    {CallFn::kThreadIndex, v1::CALL_FN_THREAD_INDEX},
    {CallFn::kReinterpret, v1::CALL_FN_REINTERPRET},
    {CallFn::kTan, v1::CALL_FN_TAN},
    {CallFn::kAsin, v1::CALL_FN_ASIN},
    {CallFn::kAcos, v1::CALL_FN_ACOS},
    {CallFn::kAtan, v1::CALL_FN_ATAN},
    {CallFn::kSinh, v1::CALL_FN_SINH},
    {CallFn::kCosh, v1::CALL_FN_COSH},
    {CallFn::kAsinh, v1::CALL_FN_ASINH},
    {CallFn::kAcosh, v1::CALL_FN_ACOSH},
    {CallFn::kAtanh, v1::CALL_FN_ATANH},
    {CallFn::kLog10, v1::CALL_FN_LOG10},
    {CallFn::kLog1p, v1::CALL_FN_LOG1P},
    {CallFn::kExp10, v1::CALL_FN_EXP10},
    {CallFn::kExpm1, v1::CALL_FN_EXPM1},
    {CallFn::kTrunc, v1::CALL_FN_TRUNC},
    {CallFn::kAtan2, v1::CALL_FN_ATAN2},
    {CallFn::kFmod, v1::CALL_FN_FMOD},
    {CallFn::kHypot, v1::CALL_FN_HYPOT},
    {CallFn::kCopysign, v1::CALL_FN_COPYSIGN},
    {CallFn::kPopcount, v1::CALL_FN_POPCOUNT},
    {CallFn::kClz, v1::CALL_FN_CLZ},
};
static_assert(IsDense(kCallFns) && std::size(kCallFns) == kNumCallFns &&
              v1::CallFn_MAX == kNumCallFns);

constexpr EnumPair<Scope, v1::Scope> kScopes[] = {
    {Scope::kGlobal, v1::SCOPE_GLOBAL},     {Scope::kShared, v1::SCOPE_SHARED},
    {Scope::kFragment, v1::SCOPE_FRAGMENT}, {Scope::kLocal, v1::SCOPE_LOCAL},
    {Scope::kVar, v1::SCOPE_VAR},
};
static_assert(IsDense(kScopes) && v1::Scope_MAX == std::size(kScopes));

constexpr EnumPair<ForKind, v1::ForKind> kForKinds[] = {
    {ForKind::kSerial, v1::FOR_KIND_SERIAL},         {ForKind::kParallel, v1::FOR_KIND_PARALLEL},
    {ForKind::kPipelined, v1::FOR_KIND_PIPELINED},   {ForKind::kUnrolled, v1::FOR_KIND_UNROLLED},
    {ForKind::kVectorized, v1::FOR_KIND_VECTORIZED},
};
static_assert(IsDense(kForKinds) && v1::ForKind_MAX == std::size(kForKinds));

constexpr EnumPair<GemmPolicy, v1::GemmPolicy> kGemmPolicies[] = {
    {GemmPolicy::kSquare, v1::GEMM_POLICY_SQUARE},
    {GemmPolicy::kFullRow, v1::GEMM_POLICY_FULL_ROW},
    {GemmPolicy::kFullCol, v1::GEMM_POLICY_FULL_COL},
};
static_assert(IsDense(kGemmPolicies) && v1::GemmPolicy_MAX == std::size(kGemmPolicies));

constexpr EnumPair<ReduceKind, v1::ReduceKind> kReduceKinds[] = {
    {ReduceKind::kSum, v1::REDUCE_KIND_SUM},        {ReduceKind::kMax, v1::REDUCE_KIND_MAX},
    {ReduceKind::kMin, v1::REDUCE_KIND_MIN},        {ReduceKind::kAbsSum, v1::REDUCE_KIND_ABS_SUM},
    {ReduceKind::kAbsMax, v1::REDUCE_KIND_ABS_MAX},
};
static_assert(IsDense(kReduceKinds) && v1::ReduceKind_MAX == std::size(kReduceKinds));

constexpr EnumPair<Layout::Kind, v1::LayoutKind> kLayoutKinds[] = {
    {Layout::Kind::kSwizzled, v1::LAYOUT_KIND_SWIZZLED},
    {Layout::Kind::kCustom, v1::LAYOUT_KIND_CUSTOM},
};
static_assert(IsDense(kLayoutKinds) && v1::LayoutKind_MAX == std::size(kLayoutKinds));

}  // namespace tilec::ir::proto_internal

#endif  // TILEC_COMPILER_IR_PROTO_TABLES_H_
