// T.gemm: a call to the block-level tensor-core templates of tl/gemm.h and
// tl/gemm_fp8.h.
//
//   tl::gemm_ss<M, N, K, WarpsM, WarpsN, TransA, TransB, LayoutA, LayoutB>(A, B, C)
//   tl::gemm_rs<...>(A_frag, B, C)          A in registers (register-A layout)
//   tl::gemm_ss_fp8<..., Native>(A, B, C)   float8 operands: m16n8k32 float8
//                                           mma (Native, sm_90a), else converted
//                                           to f16 for m16n8k16 (sm_80)
//
// C is the accumulator fragment (mma accumulator layout of the gemm's warp
// partition), A and B whole shared buffers addressed through their layout
// types; clear_accum zero-fills C first. A float16 C is widened into a
// float32 copy for the call and rounded back after it (each T.gemm sums in
// float32, more precisely than a float16-accumulating mma). What the
// templates cannot do (operand types other than float16/bfloat16/float8, an
// accumulator other than float32/float16, float8 A in registers,
// tiles that do not split into whole mma tiles over the warps) is rejected
// here with UNIMPLEMENTED before any code is generated.
#include <algorithm>
#include <initializer_list>

#include "absl/strings/str_cat.h"
#include "compiler/targets/cuda/emitter_internal.h"

namespace tilec::cuda {
namespace {

// The two trailing extents of a gemm operand region (leading unit dims
// dropped), and whether the region covers its whole buffer.
struct Operand {
  int64_t rows = 0, cols = 0;
  bool whole = true;
};

std::optional<Operand> OperandShape(const ir::Region& r) {
  std::vector<int64_t> ext;
  for (const ir::Expr& e : r.extents) {
    auto v = ConstValue(e);
    if (!v) return std::nullopt;
    ext.push_back(*v);
  }
  Operand o;
  for (size_t d = 0; d < r.extents.size(); ++d) {
    auto m = ConstValue(r.mins[d]);
    auto n = ConstValue(r.buffer->shape[d]);
    if (!m || *m != 0 || !n || *n != ext[d]) o.whole = false;
  }
  while (ext.size() > 2 && ext.front() == 1) ext.erase(ext.begin());
  if (ext.size() != 2) return std::nullopt;
  o.rows = ext[0];
  o.cols = ext[1];
  return o;
}

// A gemm operand that is part of a shared buffer: one element in every dim
// but the last two (`A_shared[b, :, :]`), and in those a window at constant
// offsets (`A_shared[:, k0:k0 + K]`). The pointer to its tile and the layout
// type that addresses the window from it: the tile of leading index b starts
// at row (b * rows) of the buffer's [rows, cols] view, so the buffer's layout
// addresses it from that pointer when the swizzle's period (8 rows) divides
// its rows; a window is tl::Window over the buffer's layout, whose rows must
// start on 16-byte chunks. nullopt for any other region.
struct SharedPart {
  std::string pointer, layout;
};
std::optional<SharedPart> PartOfShared(EmitContext& ctx, const std::string& base,
                                       const std::string& layout, const ir::Region& r) {
  const std::vector<ir::Expr>& shape = r.buffer->shape;
  const size_t n = shape.size();
  if (n < 2) return std::nullopt;
  for (size_t d = 0; d + 2 < n; ++d) {
    if (ConstValue(r.extents[d]) != 1) return std::nullopt;
  }
  auto rows = ConstValue(shape[n - 2]), cols = ConstValue(shape[n - 1]);
  auto r0 = ConstValue(r.mins[n - 2]), c0 = ConstValue(r.mins[n - 1]);
  auto er = ConstValue(r.extents[n - 2]), ec = ConstValue(r.extents[n - 1]);
  if (!rows || !cols || !r0 || !c0 || !er || !ec) return std::nullopt;
  SharedPart out{base, layout};
  if (n > 2) {
    if (*rows % 8 != 0) return std::nullopt;
    ir::Expr lead = r.mins[0];
    for (size_t d = 1; d + 2 < n; ++d) {
      lead =
          ir::Binary(ir::BinaryOp::kAdd, ir::Binary(ir::BinaryOp::kMul, lead, shape[d]), r.mins[d]);
    }
    out.pointer = absl::StrCat("(", base, " + (", ctx.Expr(lead), ") * ", *rows * *cols, ")");
  }
  if (*r0 != 0 || *c0 != 0 || *er != *rows || *ec != *cols) {
    if ((*c0 * ElemBytes(r.buffer->dtype)) % 16 != 0) return std::nullopt;
    out.layout = ctx.Fresh(absl::StrCat(r.buffer->name, "_window"));
    ctx.w().Line(absl::StrCat("using ", out.layout, " = tl::Window<", layout, ", ", *r0, ", ", *c0,
                              ", ", *er, ", ", *ec, ">;"));
  }
  return out;
}


// The PTX type name of a float8 dtype.
const char* Float8PtxName(ir::DType t) { return t == ir::DType::kFloat8E4M3 ? "e4m3" : "e5m2"; }

// Operand and accumulator types the CUDA cores multiply: 8- to 32-bit
// integers into int32; float16, bfloat16, float32 into float32 (the pairs
// the tensor cores do not take: one of them float32) and with float64 into
// float64.
bool SimtGemmTypes(ir::DType a, ir::DType b, ir::DType c) {
  using ir::DType;
  auto in = [](DType t, std::initializer_list<DType> set) {
    return std::find(set.begin(), set.end(), t) != set.end();
  };
  const auto ints = {DType::kInt8, DType::kUInt8, DType::kInt16, DType::kUInt16, DType::kInt32};
  const auto floats = {DType::kFloat16, DType::kBFloat16, DType::kFloat32};
  const auto doubles = {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64};
  switch (c) {
    case DType::kInt32: return in(a, ints) && in(b, ints);
    case DType::kFloat32:
      return in(a, floats) && in(b, floats) && (a == DType::kFloat32 || b == DType::kFloat32);
    case DType::kFloat64: return in(a, doubles) && in(b, doubles);
    default: return false;
  }
}

// T.gemm on the CUDA cores, for the types the tensor cores do not take
// (float32 and float64, integers into int32): every thread computes the
// accumulator elements it holds, C[i, j] += sum over k of A[i, k] * B[k, j]
// in C's type (each product and sum rounded to it, as the interpreter
// computes), reading A and B from shared memory through their layouts.
absl::Status LowerSimtGemm(EmitContext& ctx, const ir::GemmNode& g, const std::string& shape,
                           int64_t m, int64_t n, int64_t k) {
  const ir::Buffer& a = g.a.buffer;
  const ir::Buffer& b = g.b.buffer;
  const ir::Buffer& c = g.c.buffer;
  if (a->scope != ir::Scope::kShared || b->scope != ir::Scope::kShared ||
      c->scope != ir::Scope::kFragment) {
    return ctx.Unimplemented(absl::StrCat(
        shape, " with ", Sv(ir::DTypeName(a->dtype)),
        " operands on the CUDA cores, which takes A and B in shared memory and C in a fragment"));
  }
  const inference::FragmentLayout* cl = ctx.FragmentOf(c.get());
  BufferInfo* ai = ctx.Info(a.get());
  BufferInfo* bi = ctx.Info(b.get());
  BufferInfo* ci = ctx.Info(c.get());
  if (!cl || !ai || !bi || !ci) return ctx.Internal("T.gemm operand not declared");
  std::optional<SharedPart> pa = PartOfShared(ctx, ctx.SharedBase(*ai), ai->layout_type, g.a);
  std::optional<SharedPart> pb = PartOfShared(ctx, ctx.SharedBase(*bi), bi->layout_type, g.b);
  if (!pa || !pb) {
    return ctx.Unimplemented(absl::StrCat(
        shape,
        " with an operand that is a part of a shared buffer tilec cannot address (tiles "
        "X[b, :, :] of 8k rows and windows X[r0:r1, c0:c1] at constant offsets)"));
  }
  const std::string ct = CType(c->dtype);
  ctx.w().Line(absl::StrCat("// ", shape, ": ", Sv(ir::DTypeName(a->dtype)), " x ",
                            Sv(ir::DTypeName(b->dtype)), " -> ", Sv(ir::DTypeName(c->dtype)),
                            " on the CUDA cores"));
  const std::string slot = ctx.Fresh("s"), kk = ctx.Fresh("k");
  if (g.clear_accum) {
    ctx.w().Line("#pragma unroll");
    ctx.w().Line(absl::StrCat("for (int ", slot, " = 0; ", slot, " < ", cl->local_size, "; ++",
                              slot, ") ", ci->name, "[", slot, "] = ", ct, "(0);  // clear_accum"));
  }
  ctx.w().Line("#pragma unroll 1");
  ctx.w().Open(absl::StrCat("for (int ", kk, " = 0; ", kk, " < ", k, "; ++", kk, ")"));
  ctx.w().Line("#pragma unroll");
  ctx.w().Open(
      absl::StrCat("for (int ", slot, " = 0; ", slot, " < ", cl->local_size, "; ++", slot, ")"));
  std::vector<std::string> ij = ctx.LogicalText(*cl, slot);
  const std::string i = ctx.Fresh("i"), j = ctx.Fresh("j");
  ctx.w().Line(absl::StrCat("const int ", i, " = ", ij[0], ", ", j, " = ", ij[1], ";"));
  std::string cond = absl::StrCat(i, " < ", m, " && ", j, " < ", n);
  if (cl->valid) cond = absl::StrCat(ctx.LayoutExprText(*cl, cl->valid, slot), " && ", cond);
  const std::string av = absl::StrCat(pa->pointer, "[", pa->layout, "::offset(",
                                      g.transpose_a ? kk : i, ", ", g.transpose_a ? i : kk, ")]");
  const std::string bv = absl::StrCat(pb->pointer, "[", pb->layout, "::offset(",
                                      g.transpose_b ? j : kk, ", ", g.transpose_b ? kk : j, ")]");
  auto wide = [&](const std::string& v, ir::DType t) {
    return ctx.Convert({v, 0}, t, c->dtype).text;
  };
  ctx.w().Line(absl::StrCat("if (", cond, ") ", ci->name, "[", slot, "] = ", ci->name, "[", slot,
                            "] + ", ct, "(", wide(av, a->dtype), " * ", wide(bv, b->dtype), ");"));
  ctx.w().Close();
  ctx.w().Close();
  return ctx.status();
}

// The tl::gemm_ss / gemm_rs / gemm_ss_fp8 call of a gemm on mma.sync.
absl::Status MmaCall(EmitContext& ctx, const ir::GemmNode& gemm,
                     const inference::GemmWarpPartition& p, const std::string& shape, int64_t m,
                     int64_t n, int64_t k, int64_t mp, int64_t np, const std::string& layout_b,
                     const std::string& b_arg, const std::string& c_arg, std::string& call) {
  const ir::GemmNode* g = &gemm;
  const ir::Buffer& a = g->a.buffer;
  const ir::Buffer& b = g->b.buffer;
  const bool f16 = a->dtype == ir::DType::kFloat16 && b->dtype == ir::DType::kFloat16;
  const bool fp8 = IsFloat8(a->dtype) && IsFloat8(b->dtype);
  BufferInfo* ai = ctx.Info(a.get());
  auto as = OperandShape(g->a);
  std::string fn, a_arg, layout_a, native;
  if (fp8 && a->scope != ir::Scope::kShared) {
    return ctx.Unimplemented(absl::StrCat(shape, " with float8 A in ", Sv(ir::ScopeName(a->scope)),
                                          " memory (float8 T.gemm "
                                          "takes A from shared memory)"));
  }
  if (p.mfma != 0) {
    // AMD's matrix cores: the template's last argument is the MFMA tile.
    native = absl::StrCat(", ", p.mfma);
    if (fp8 && !IsFnuz(a->dtype)) {
      // The OCP float8 types: no MFMA takes them; converted to half as read.
      ctx.NoteMma(p.mfma == 32 ? "v_mfma_f32_32x32x8_f16" : "v_mfma_f32_16x16x16_f16");
    } else if (fp8) {
      auto kind = [](ir::DType t) { return t == ir::DType::kFloat8E5M2FNUZ ? "bf8" : "fp8"; };
      // The instruction's A operand is B's fragment (gemm_mfma.h computes C^T).
      ctx.NoteMma(absl::StrCat(p.mfma == 32 ? "v_mfma_f32_32x32x16_" : "v_mfma_f32_16x16x32_",
                               kind(b->dtype), "_", kind(a->dtype)));
    } else {
      ctx.NoteMma(absl::StrCat(p.mfma == 32 ? "v_mfma_f32_32x32x8" : "v_mfma_f32_16x16x16",
                               f16 ? "_f16" : "_bf16"));
    }
  } else if (fp8) {
    // sm_89 and later have the float8 mma; sm_80 converts to f16.
    const bool has_fp8_mma = ctx.target().arch != CudaArch::kSm80;
    native = has_fp8_mma ? ", true" : ", false";
    ctx.NoteMma(has_fp8_mma
                    ? absl::StrCat("mma.sync.aligned.m16n8k32.row.col.f32.",
                                   Float8PtxName(a->dtype), ".", Float8PtxName(b->dtype), ".f32")
                    : "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32");
  } else {
    ctx.NoteMma(f16 ? "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
                    : "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32");
  }
  if (a->scope == ir::Scope::kShared) {
    a_arg = ctx.SharedBase(*ai);
    layout_a = ai->layout_type;
    if (!as->whole) {
      std::optional<SharedPart> part = PartOfShared(ctx, a_arg, layout_a, g->a);
      if (!part || mp != m) {
        return ctx.Unimplemented(absl::StrCat(
            shape,
            " with A a part of a shared buffer (tilec takes tiles A_shared[b, :, :] of 8k rows "
            "and windows A_shared[r0:r1, c0:c1] at constant offsets, c0 a multiple of 16 "
            "bytes, M a multiple of 16 * warps_m)"));
      }
      a_arg = part->pointer;
      layout_a = part->layout;
    }
    fn = p.mfma != 0 ? "tl::gemm_ss_mfma" : fp8 ? "tl::gemm_ss_fp8" : "tl::gemm_ss";
  } else if (a->scope == ir::Scope::kFragment) {
    // A transposed register A ([K, M]) holds element (k, m) in the slot the
    // untransposed layout gives (m, k): the registers are op(A) either way,
    // and gemm_rs takes them untransposed.
    const inference::FragmentLayout* al = ctx.FragmentOf(a.get());
    if (!al || !inference::SameLayout(*al, inference::RegisterA(m, k, p, g->transpose_a))) {
      return ctx.Internal(absl::StrCat("the register A operand ", a->name,
                                       " of T.gemm is not in the register-A layout"));
    }
    fn = p.mfma != 0 ? "tl::gemm_rs_mfma" : "tl::gemm_rs";
    a_arg = ai->name;
    // gemm_rs does not read LayoutA; pass B's so the template is complete.
    layout_a = layout_b;
  } else {
    return ctx.Unimplemented(
        absl::StrCat(shape, " with A in ", Sv(ir::ScopeName(a->scope)), " memory"));
  }
  if (mp != m || np != n) {
    ctx.w().Line(absl::StrCat("// padded to whole mma tiles: ", mp, " x ", np,
                              " (the extra rows of C are never read)"));
  }
  const bool trans_a = g->transpose_a && a->scope != ir::Scope::kFragment;
  call =
      absl::StrCat(fn, "<", mp, ", ", np, ", ", k, ", ", p.warps_m, ", ", p.warps_n, ", ",
                   trans_a ? "true" : "false", ", ", g->transpose_b ? "true" : "false", ", ",
                   layout_a, ", ", layout_b, native, ">(", a_arg, ", ", b_arg, ", ", c_arg, ");");
  return ctx.status();
}

// The tl::gemm_ss_wgmma call of a gemm the layout plan runs as wgmma
// (inference/wgmma_plan.h chose it: both operands swizzled shared matrices,
// whole or X[b, :, :]).
absl::Status WgmmaCall(EmitContext& ctx, const ir::GemmNode& g,
                       const inference::GemmWarpPartition& p, const std::string& shape, int64_t m,
                       int64_t n, int64_t k, const std::string& c_arg, std::string& call) {
  const ir::Buffer& a = g.a.buffer;
  const ir::Buffer& b = g.b.buffer;
  BufferInfo* ai = ctx.Info(a.get());
  BufferInfo* bi = ctx.Info(b.get());
  const bool a_regs = a->scope == ir::Scope::kFragment;
  if (!ai || !bi || !bi->shared || bi->shared->kind != inference::SharedLayout::Kind::kSwizzled ||
      (!a_regs && (!ai->shared || ai->shared->kind != inference::SharedLayout::Kind::kSwizzled))) {
    return ctx.Internal(absl::StrCat(shape, " runs as wgmma but an operand is not swizzled"));
  }
  std::optional<SharedPart> pb = PartOfShared(ctx, ctx.SharedBase(*bi), bi->layout_type, g.b);
  if (!pb || pb->layout != bi->layout_type) {
    return ctx.Internal(absl::StrCat(shape, " runs as wgmma on a part of a shared buffer"));
  }
  if (a_regs) {
    const inference::FragmentLayout* al = ctx.FragmentOf(a.get());
    if (!al || !inference::SameLayout(*al, inference::RegisterA(m, k, p, g.transpose_a))) {
      return ctx.Internal(absl::StrCat("the register A operand ", a->name,
                                       " of T.gemm is not in the register-A layout"));
    }
    const int64_t wgn = n / p.warps_n;
    ctx.NoteWgmmaN(wgn, /*a_in_registers=*/true);
    ctx.NoteMma(absl::StrCat("wgmma.mma_async.sync.aligned.m64n", wgn, "k16.f32.",
                             a->dtype == ir::DType::kFloat16 ? "f16.f16" : "bf16.bf16",
                             " (A from registers)"));
    call = absl::StrCat("tl::gemm_rs_wgmma<", m, ", ", n, ", ", k, ", ", p.warps_m / 4, ", ",
                        p.warps_n, ", ", g.transpose_b ? "true" : "false", ", ", pb->layout, ">(",
                        ai->name, ", ", pb->pointer, ", ", c_arg, ");");
    return ctx.status();
  }
  std::optional<SharedPart> pa = PartOfShared(ctx, ctx.SharedBase(*ai), ai->layout_type, g.a);
  if (!pa || pa->layout != ai->layout_type) {
    return ctx.Internal(absl::StrCat(shape, " runs as wgmma on a part of a shared buffer"));
  }
  const int64_t wg_m = p.warps_m / 4, wg_n = p.warps_n, wgn = n / wg_n;
  const bool fp8 = IsFloat8(a->dtype);
  ctx.NoteWgmmaN(wgn, /*a_in_registers=*/false);
  ctx.NoteMma(absl::StrCat(
      "wgmma.mma_async.sync.aligned.m64n", wgn, fp8 ? "k32.f32." : "k16.f32.",
      fp8 ? absl::StrCat(Float8PtxName(a->dtype), ".", Float8PtxName(b->dtype))
          : (a->dtype == ir::DType::kFloat16 ? std::string("f16.f16") : std::string("bf16.bf16"))));
  const std::string& group = ctx.wgmma_group();
  call = absl::StrCat(group.empty() ? "tl::gemm_ss_wgmma<" : "tl::gemm_ss_wgmma_issue<", m, ", ", n,
                      ", ", k, ", ", wg_m, ", ", wg_n, ", ", g.transpose_a ? "true" : "false", ", ",
                      g.transpose_b ? "true" : "false", ", ", pa->layout, ", ", pb->layout, ">(",
                      pa->pointer, ", ", pb->pointer, ", ", c_arg,
                      group.empty() ? ");" : absl::StrCat(", ", group, ");"));
  return ctx.status();
}

}  // namespace

absl::Status LowerGemm(EmitContext& ctx, const ir::Stmt& s) {
  const auto* g = s->as<ir::GemmNode>();
  auto pit = ctx.plan().gemms.find(g);
  if (pit == ctx.plan().gemms.end()) {
    return ctx.Internal("T.gemm has no warp partition in the layout plan");
  }
  const inference::GemmWarpPartition& p = pit->second;
  const ir::Buffer& a = g->a.buffer;
  const ir::Buffer& b = g->b.buffer;
  const ir::Buffer& c = g->c.buffer;
  auto as = OperandShape(g->a);
  auto bs = OperandShape(g->b);
  auto cs = OperandShape(g->c);
  if (!as || !bs || !cs) {
    return ctx.Unimplemented("T.gemm with operands that are not constant 2-D tiles");
  }
  const int64_t m = cs->rows, n = cs->cols;
  const int64_t k = g->transpose_a ? as->rows : as->cols;
  const std::string shape = absl::StrCat("T.gemm ", a->name, " x ", b->name, " -> ", c->name,
                                         " (M=", m, ", N=", n, ", K=", k, ")");
  const bool f16 = a->dtype == ir::DType::kFloat16 && b->dtype == ir::DType::kFloat16;
  const bool bf16 = a->dtype == ir::DType::kBFloat16 && b->dtype == ir::DType::kBFloat16;
  const bool fp8 = IsFloat8(a->dtype) && IsFloat8(b->dtype);
  // A float16 accumulator is widened to float32 for the gemm and rounded
  // back after it: each T.gemm sums in float32. (bfloat16 accumulators, which
  // no mma has, stay refused: summed in float32 they would differ from the
  // reference's bfloat16 sums by far more than bfloat16's tolerance.)
  const bool narrow_c = c->dtype == ir::DType::kFloat16;
  if (ctx.target().amd && p.mfma == 0) {
    // The layout plan gave this gemm no MFMA partition (a block that is not
    // whole wavefronts): it runs on the CUDA cores.
    return LowerSimtGemm(ctx, *g, shape, m, n, k);
  }
  if ((!f16 && !bf16 && !fp8) || (c->dtype != ir::DType::kFloat32 && !narrow_c)) {
    if (SimtGemmTypes(a->dtype, b->dtype, c->dtype)) return LowerSimtGemm(ctx, *g, shape, m, n, k);
    return ctx.Unimplemented(
        absl::StrCat(shape, " with ", Sv(ir::DTypeName(a->dtype)), " x ",
                     Sv(ir::DTypeName(b->dtype)), " -> ", Sv(ir::DTypeName(c->dtype)),
                     " (tensor-core gemm takes float16, bfloat16 or float8 (e4m3, e5m2; "
                     "e4m3fnuz, e5m2fnuz on AMD) operands with a float32 or float16 "
                     "accumulator)"));
  }
  // float8 on AMD: both operands fnuz (the float8 MFMA), or both OCP
  // (multiplied as half).
  if (ctx.target().amd && fp8 && IsFnuz(a->dtype) != IsFnuz(b->dtype)) {
    return ctx.Unimplemented(absl::StrCat(
        shape, " with ", Sv(ir::DTypeName(a->dtype)), " x ", Sv(ir::DTypeName(b->dtype)),
        " (a float8 T.gemm on AMD takes two fnuz operands or two OCP operands)"));
  }
  const bool fp8_mfma = fp8 && (!ctx.target().amd || IsFnuz(a->dtype));
  // The k-step of the mma: 32 for 8-bit operands, 16 otherwise; MFMA's is
  // 8 for its 32 x 32 tile (16 for fnuz float8, and 32 for it on 16 x 16).
  // Its tiles: 16 x 8 (mma.sync), T x T (MFMA).
  const int64_t k_step = p.mfma == 32 ? (fp8_mfma ? 16 : 8) : fp8_mfma ? 32 : 16;
  const int64_t tile_m = p.mfma != 0 ? p.mfma : 16, tile_n = p.mfma != 0 ? p.mfma : 8;
  const int64_t wave = p.mfma != 0 ? 64 : 32;
  if (c->scope != ir::Scope::kFragment) {
    return ctx.Unimplemented(
        absl::StrCat(shape, " accumulating into a ", Sv(ir::ScopeName(c->scope)), " buffer"));
  }
  if (b->scope != ir::Scope::kShared) {
    return ctx.Unimplemented(absl::StrCat(shape, " with B not in shared memory"));
  }
  // The tile the templates compute: M and N rounded up to whole mma tiles
  // when the partition is inexact (the accumulator layout is then padded).
  const int64_t mp = (m + tile_m * p.warps_m - 1) / (tile_m * p.warps_m) * (tile_m * p.warps_m);
  const int64_t np = (n + tile_n * p.warps_n - 1) / (tile_n * p.warps_n) * (tile_n * p.warps_n);
  const bool pad_ok = (mp == m || (a->scope == ir::Scope::kShared && !g->transpose_a)) &&
                      (np == n || g->transpose_b);
  if (k % k_step != 0 || !pad_ok || wave * p.warps_m * p.warps_n * p.replicas != ctx.threads()) {
    return ctx.Unimplemented(absl::StrCat(
        shape, " over ", ctx.threads() / wave, wave == 64 ? " wavefronts (" : " warps (", p.warps_m,
        " x ", p.warps_n, "): K must be a multiple of ", k_step,
        ", and a tile that does not split into whole mma tiles "
        "(M a multiple of ", tile_m, " * ", p.warps_m, ", N of ", tile_n, " * ", p.warps_n,
        ") needs A and B stored with M and N as their rows"));
  }
  const inference::FragmentLayout* cl = ctx.FragmentOf(c.get());
  if (!cl || !inference::SameLayout(*cl, inference::MmaAccumulator(m, n, p))) {
    return ctx.Internal(absl::StrCat("the accumulator ", c->name,
                                     " of T.gemm is not in the mma accumulator layout"));
  }
  BufferInfo* ci = ctx.Info(c.get());
  BufferInfo* bi = ctx.Info(b.get());
  BufferInfo* ai = ctx.Info(a.get());
  if (!ci || !bi || !ai) return ctx.Internal("T.gemm operand not declared");
  std::string b_arg = ctx.SharedBase(*bi), layout_b = bi->layout_type;
  if (!bs->whole) {
    std::optional<SharedPart> part = PartOfShared(ctx, b_arg, layout_b, g->b);
    if (!part || np != n) {
      return ctx.Unimplemented(absl::StrCat(
          shape,
          " with B a part of a shared buffer (tilec takes tiles B_shared[b, :, :] of 8k rows "
          "and windows B_shared[r0:r1, c0:c1] at constant offsets, c0 a multiple of 16 bytes, "
          "N a multiple of 8 * warps_n)"));
    }
    b_arg = part->pointer;
    layout_b = part->layout;
  }
  std::string c_arg = ci->name;
  if (narrow_c) {
    // The float32 accumulator the mma adds into, from the narrow one.
    c_arg = ctx.Fresh(absl::StrCat(c->name, "_f32"));
    const std::string i = ctx.Fresh("i");
    ctx.w().Line(absl::StrCat("float ", c_arg, "[", cl->local_size, "];  // ",
                              Sv(ir::DTypeName(c->dtype)), " ", c->name, " widened"));
    ctx.w().Line("#pragma unroll");
    ctx.w().Line(absl::StrCat(
        "for (int ", i, " = 0; ", i, " < ", cl->local_size, "; ++", i, ") ", c_arg, "[", i,
        "] = ", g->clear_accum ? "0.0f" : absl::StrCat("float(", ci->name, "[", i, "])"), ";"));
  } else if (g->clear_accum) {
    ctx.w().Line("#pragma unroll");
    const std::string i = ctx.Fresh("i");
    ctx.w().Line(absl::StrCat("for (int ", i, " = 0; ", i, " < ", cl->local_size, "; ++", i, ") ",
                              ci->name, "[", i, "] = 0.0f;  // clear_accum"));
  }
  if (p.wgmma) {
    std::string call;
    absl::Status st = WgmmaCall(ctx, *g, p, shape, m, n, k, c_arg, call);
    if (!st.ok()) return st;
    ctx.w().Line(call);
    if (!ctx.wgmma_group().empty()) {
      // Keep this group in flight; the previous one (which read the stage the
      // next copies refill) is retired.
      ctx.w().Line(absl::StrCat("tl::wgmma_wait<1>(", ctx.wgmma_group(), ");"));
    }
  } else {
    std::string call;
    absl::Status st = MmaCall(ctx, *g, p, shape, m, n, k, mp, np, layout_b, b_arg, c_arg, call);
    if (!st.ok()) return st;
    ctx.w().Line(call);
  }
  if (narrow_c) {
    const std::string i = ctx.Fresh("i");
    ctx.w().Line("#pragma unroll");
    ctx.w().Line(absl::StrCat("for (int ", i, " = 0; ", i, " < ", cl->local_size, "; ++", i, ") ",
                              ci->name, "[", i, "] = ", ci->ctype, "(", c_arg, "[", i, "]);"));
  }
  return ctx.status();
}

}  // namespace tilec::cuda
