// tilelang.quantize's converters of packed integers, which kernels call
// while they are built to get an expression:
// - _tir_packed_int_to_int_convert(storage_type, storage_nbit) returns
//   f(nbit, val, pos, dtype): field `pos` of `nbit` bits of `val`, sign
//   extended, as dtype;
// - _tir_packed_to_unsigned_convert(storage_type, storage_nbit) returns
//   f(nbit, val, pos, dtype): the same field, zero extended.
// The fields are extracted in int32 (`val` converted to it, as TVM promotes
// the shift), so a signed storage type gives the same bits as an unsigned one.
#include <optional>

#include "compiler/frontend/builder.h"
#include "compiler/frontend/str_util.h"
#include "compiler/frontend/tl_builtins.h"
#include "compiler/frontend/value_ops.h"

namespace tilec::frontend {
namespace {

constexpr std::string_view kPrefix = "tilelang.quantize.";
constexpr std::string_view kFactories[] = {"_tir_packed_int_to_int_convert",
                                           "_tir_packed_to_unsigned_convert"};

}  // namespace

std::optional<Value> QuantizeModuleAttribute(std::string_view path, std::string_view attr) {
  if (path == "tilelang" && attr == "quantize") return Value::Module("tilelang.quantize");
  if (path != "tilelang.quantize" && path != "tilelang.quantize.quantization") return std::nullopt;
  for (std::string_view f : kFactories) {
    if (attr == f) return Value::Builtin(Cat(kPrefix, attr));
  }
  return std::nullopt;
}

std::optional<absl::StatusOr<Value>> CallQuantize(Builder& b, std::string_view name,
                                                  CallArgs& args) {
  if (!StartsWith(name, kPrefix)) return std::nullopt;
  const std::string_view rest = name.substr(kPrefix.size());
  for (std::string_view f : kFactories) {
    if (rest != f) continue;
    // The factory: the converter for a storage type, named after it.
    absl::StatusOr<std::vector<std::optional<Arg>>> a =
        BindArgs(b, args, Cat(kPrefix, f), {"storage_type", "storage_nbit"}, 0);
    if (!a.ok()) return a.status();
    std::string type = "uint";
    int64_t nbit = 8;
    if ((*a)[0]) {
      absl::StatusOr<std::string> t = b.StaticStr((*a)[0]->value, (*a)[0]->loc, "storage_type");
      if (!t.ok()) return t.status();
      type = *t;
    }
    if ((*a)[1]) {
      absl::StatusOr<int64_t> n = b.StaticInt((*a)[1]->value, (*a)[1]->loc, "storage_nbit");
      if (!n.ok()) return n.status();
      nbit = *n;
    }
    if ((type != "int" && type != "uint") || (nbit != 8 && nbit != 16 && nbit != 32)) {
      return b.Err(args.loc, Cat(f, ": storage ", type, nbit, " is not an integer type tilec has"));
    }
    return Value::Builtin(Cat(kPrefix, "convert:", f == kFactories[0] ? "signed" : "unsigned"));
  }
  if (!StartsWith(rest, "convert:")) return std::nullopt;
  const bool sign = rest == "convert:signed";
  absl::StatusOr<std::vector<std::optional<Arg>>> a =
      BindArgs(b, args, "the converter", {"nbit", "val", "pos", "dtype"}, 4);
  if (!a.ok()) return a.status();
  absl::StatusOr<int64_t> nbit = b.StaticInt((*a)[0]->value, (*a)[0]->loc, "nbit");
  if (!nbit.ok()) return nbit.status();
  if (*nbit < 1 || *nbit > 16) {
    return b.Err((*a)[0]->loc, Cat("a packed field of ", *nbit, " bits; tilec converts 1 to 16"));
  }
  absl::StatusOr<ir::DType> dtype = b.StaticDType((*a)[3]->value, (*a)[3]->loc, "dtype");
  if (!dtype.ok()) return dtype.status();
  absl::StatusOr<ir::Expr> val = b.ExprOf((*a)[1]->value, (*a)[1]->loc);
  if (!val.ok()) return val.status();
  absl::StatusOr<ir::Expr> pos = b.ExprAs((*a)[2]->value, ir::DType::kInt32, (*a)[2]->loc);
  if (!pos.ok()) return pos.status();
  if (ir::IsFloat((*val)->dtype) || (*val)->dtype == ir::DType::kBool) {
    return b.Err((*a)[1]->loc,
                 Cat("the packed value must be an integer, got ", ir::DTypeName((*val)->dtype)));
  }
  using ir::BinaryOp;
  auto i32 = [](int64_t v) { return ir::IntImm(v, ir::DType::kInt32); };
  const ir::Expr v = CastTo(ir::DType::kInt32, *val);
  const ir::Expr shift = ir::Binary(BinaryOp::kMul, *pos, i32(*nbit));
  ir::Expr field = ir::Binary(BinaryOp::kBitAnd, ir::Binary(BinaryOp::kShr, v, shift),
                              i32((int64_t{1} << *nbit) - 1));
  if (sign) {
    // (u ^ h) - h sign-extends an nbit field u, h its sign bit.
    const ir::Expr h = i32(int64_t{1} << (*nbit - 1));
    field = ir::Binary(BinaryOp::kSub, ir::Binary(BinaryOp::kBitXor, field, h), h);
  }
  return Value::Runtime(ir::Cast(*dtype, field));
}

}  // namespace tilec::frontend
