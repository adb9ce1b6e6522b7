// Allocations and tile operators.
//
// Mapping to the IR:
// - T.alloc_shared/fragment/local(shape, dtype[, scope]) -> Allocate of that
//   scope (the buffer is named after the assignment target); T.alloc_var(dtype,
//   init) -> Allocate of scope var, shape [1], with its init; T.alloc_global
//   (shape, dtype) -> a global workspace, outside T.Kernel only.
// - T.copy(src, dst): each operand is a buffer (the whole buffer), a region
//   (`A[i, lo:hi]`: a scalar index is an extent-1 dim) or a head address
//   (`A[i, j]`, every index scalar) whose extents come from the other operand,
//   aligned from the trailing dim. disable_tma=True keeps the copy off TMA
//   (a constant; sm_90a). coalesced_width, eviction_policy, loop_layout and
//   annotations are performance hints: accepted and ignored.
// - T.gemm(A, B, C, transpose_A, transpose_B, policy, clear_accum): operands
//   are buffers or regions. k_pack only changes how AMD MFMA loads operands
//   (accepted, ignored); wg_wait must be 0 (other values leave the result
//   pending, which tilec cannot express); mbar is not supported.
// - T.fill(dst, value), T.clear(dst) -> Fill (value cast to dst's dtype).
// - T.reduce_{max,min,sum,abssum,absmax}(src, dst, dim=-1, clear=True) ->
//   Reduce on whole buffers; dst's shape is src's without `dim` ([1] for 1-D).
//   TileLang's other accepted dst shape, with `dim` kept as extent 1, is not
//   supported.
// - T.cumsum(src, dst=None, dim=0, reverse=False) -> Cumsum (dst defaults to
//   src).
// - T.atomic_* : tl_atomic.cc.
// - T.annotate_layout({buf: layout, ...}) -> one AnnotateLayout per entry.
// - T.use_swizzle(panel_size, order="row", enable=True) -> UseSwizzle.
#include <algorithm>
#include <tuple>

#include "compiler/frontend/index_simplify.h"
#include "compiler/frontend/str_util.h"
#include "compiler/frontend/tl_builtins.h"
#include "compiler/frontend/tl_operands.h"
#include "compiler/frontend/value_ops.h"
#include "compiler/ir/printer.h"

namespace tilec::frontend {
namespace {

using Args = std::vector<std::optional<Arg>>;

absl::StatusOr<Value> Alloc(Builder& b, std::string_view name, ir::Scope scope, CallArgs& args) {
  absl::StatusOr<Args> a = BindArgs(b, args, name, {"shape", "dtype", "scope"}, 2);
  if (!a.ok()) return a.status();
  absl::StatusOr<ir::DType> t =
      b.StaticDType((*a)[1]->value, (*a)[1]->loc, Cat("the dtype of ", name));
  if (!t.ok()) return t.status();
  if ((*a)[2] && (*a)[2]->value.kind != ValueKind::kNone) {
    // scope= names the storage, whatever the function: T.alloc_fragment(...,
    // "local") is a per-thread local buffer, as in TileLang.
    absl::StatusOr<std::string> sc = b.StaticStr((*a)[2]->value, (*a)[2]->loc, "scope");
    if (!sc.ok()) return sc.status();
    if (*sc == "shared" || *sc == "shared.dyn") {
      scope = ir::Scope::kShared;
    } else if (*sc == "local.fragment") {
      scope = ir::Scope::kFragment;
    } else if (*sc == "local") {
      scope = ir::Scope::kLocal;
    } else if (*sc == "global") {
      scope = ir::Scope::kGlobal;
    } else {
      return b.Err((*a)[2]->loc, Cat(name, "(scope=\"", *sc,
                                     "\"): the scopes are \"shared\", \"shared.dyn\", "
                                     "\"local.fragment\", \"local\" and \"global\""));
    }
  }
  bool tile = scope != ir::Scope::kGlobal;
  absl::StatusOr<std::vector<ir::Expr>> shape =
      b.ShapeOf((*a)[0]->value, (*a)[0]->loc, Cat("the shape of ", name), tile);
  if (!shape.ok()) return shape.status();
  if (scope == ir::Scope::kGlobal && b.InKernel()) {
    return b.Err(args.loc,
                 "T.alloc_global must be outside T.Kernel (workspaces are allocated "
                 "between kernels)");
  }
  ir::Buffer buf = ir::MakeBuffer(b.TakeNameHint("buf"), *t, *shape, scope);
  absl::Status s = b.Emit(ir::Allocate(buf), args.loc, name);
  if (!s.ok()) return s;
  return Value::BufferRef(buf);
}

absl::StatusOr<Value> AllocVar(Builder& b, CallArgs& args) {
  absl::StatusOr<Args> a = BindArgs(b, args, "T.alloc_var", {"dtype", "init", "scope"}, 1);
  if (!a.ok()) return a.status();
  {
    // A vector variable: one local element per lane (T.extract_lane reads one).
    const Value& d = (*a)[0]->value;
    std::optional<std::pair<ir::DType, int>> vec;
    if (d.kind == ValueKind::kDType && d.lanes > 1) vec = std::make_pair(d.dtype, d.lanes);
    if (d.kind == ValueKind::kStr) vec = ParseVectorDType(d.s);
    if (vec) {
      if ((*a)[1] && (*a)[1]->value.kind != ValueKind::kNone) {
        return b.Err((*a)[1]->loc, "T.alloc_var of a vector dtype takes no init; assign it");
      }
      ir::Buffer buf = ir::MakeBuffer(b.TakeNameHint("var"), vec->first, {ir::IntImm(vec->second)},
                                      ir::Scope::kLocal);
      absl::Status s = b.Emit(ir::Allocate(buf), args.loc, "T.alloc_var");
      if (!s.ok()) return s;
      b.vector_vars()[buf.get()] = vec->second;
      return Value::BufferRef(buf);
    }
  }
  absl::StatusOr<ir::DType> t =
      b.StaticDType((*a)[0]->value, (*a)[0]->loc, "the dtype of T.alloc_var");
  if (!t.ok()) return t.status();
  ir::Expr init;
  if ((*a)[1] && (*a)[1]->value.kind != ValueKind::kNone) {
    absl::StatusOr<ir::Expr> e = b.ExprAs((*a)[1]->value, *t, (*a)[1]->loc);
    if (!e.ok()) return e.status();
    init = *e;
  }
  ir::Buffer buf = ir::MakeBuffer(b.TakeNameHint("var"), *t, {ir::IntImm(1)}, ir::Scope::kVar);
  absl::Status s = b.Emit(ir::Allocate(buf, init), args.loc, "T.alloc_var");
  if (!s.ok()) return s;
  return Value::BufferRef(buf);
}

}  // namespace

absl::StatusOr<Operand> ReadOperand(Builder& b, const Arg& a, std::string_view fn,
                                    bool allow_head) {
  Operand op;
  op.loc = a.loc;
  switch (a.value.kind) {
    case ValueKind::kBuffer: op.region = ir::FullRegion(a.value.buffer); return op;
    case ValueKind::kRegion: op.region = *a.value.region; return op;
    case ValueKind::kElement:
      if (allow_head) {
        op.head = *a.value.element;
        return op;
      }
      return b.Err(a.loc, Cat(fn,
                              " needs a buffer or a region here, got a single "
                              "element; slice it (A[i, lo:hi])"));
    default: break;
  }
  return b.Err(a.loc, Cat(fn, " needs a buffer or a region, got ", DescribeValue(a.value)));
}

// The region a head address covers when the other operand has `extents`.
absl::StatusOr<ir::Region> HeadRegion(Builder& b, const ElementValue& head,
                                      const std::vector<ir::Expr>& extents, SourceLoc loc,
                                      std::string_view fn) {
  size_t r = head.indices.size();
  size_t m = extents.size();
  ir::Region region{head.buffer, head.indices, {}};
  for (size_t k = 0; m > r && k < m - r; ++k) {
    if (ir::AsConstInt(extents[k]) != 1) {
      return b.Err(loc, Cat(fn, ": the other operand has ", m,
                            " dimensions, more than "
                            "the ",
                            r, " of `", head.buffer->name, "`"));
    }
  }
  for (size_t d = 0; d < r; ++d) {
    if (d + m >= r) {
      region.extents.push_back(extents[d + m - r]);
    } else {
      region.extents.push_back(ir::IntImm(1));
    }
  }
  return region;
}

std::string ExtentsText(const std::vector<ir::Expr>& extents) {
  std::vector<std::string> parts;
  for (const ir::Expr& e : extents) parts.push_back(ir::PrintExpr(e));
  return Cat("[", Join(parts, ", "), "]");
}

absl::StatusOr<std::pair<ir::Region, ir::Region>> ResolvePair(Builder& b, const Operand& x,
                                                              const Operand& y, SourceLoc loc,
                                                              std::string_view fn) {
  if (x.head && y.head && fn == "T.copy") {
    // T.copy(A[i], B[j]) copies one element, as TileLang lowers it to a store.
    absl::StatusOr<ir::Region> rx = HeadRegion(b, *x.head, {ir::IntImm(1)}, x.loc, fn);
    if (!rx.ok()) return rx.status();
    absl::StatusOr<ir::Region> ry = HeadRegion(b, *y.head, {ir::IntImm(1)}, y.loc, fn);
    if (!ry.ok()) return ry.status();
    return std::make_pair(*rx, *ry);
  }
  if (x.head && y.head) {
    return b.Err(loc, Cat(fn,
                          " cannot tell the extents: both operands are single "
                          "elements; slice one of them (A[i, lo:hi])"));
  }
  ir::Region rx, ry;
  if (x.head) {
    absl::StatusOr<ir::Region> r = HeadRegion(b, *x.head, y.region->extents, x.loc, fn);
    if (!r.ok()) return r.status();
    rx = *r;
  } else {
    rx = *x.region;
  }
  if (y.head) {
    absl::StatusOr<ir::Region> r = HeadRegion(b, *y.head, rx.extents, y.loc, fn);
    if (!r.ok()) return r.status();
    ry = *r;
  } else {
    ry = *y.region;
  }
  auto squeeze = [](const std::vector<ir::Expr>& ext) {
    std::vector<ir::Expr> out;
    for (const ir::Expr& e : ext) {
      if (ir::AsConstInt(e) != 1) out.push_back(e);
    }
    return out;
  };
  std::vector<ir::Expr> ex = squeeze(rx.extents), ey = squeeze(ry.extents);
  bool mismatch = ex.size() != ey.size();
  for (size_t k = 0; !mismatch && k < ex.size(); ++k) {
    std::optional<int64_t> cx = ir::AsConstInt(ex[k]), cy = ir::AsConstInt(ey[k]);
    if (cx && cy && *cx != *cy) mismatch = true;
  }
  if (mismatch) {
    bool all_const = true;
    for (const ir::Expr& e : ex) all_const &= ir::AsConstInt(e).has_value();
    for (const ir::Expr& e : ey) all_const &= ir::AsConstInt(e).has_value();
    if (all_const) {
      return b.Err(
          loc, Cat(fn, ": the extents of `", rx.buffer->name, "` ", ExtentsText(rx.extents),
                   " and of `", ry.buffer->name, "` ", ExtentsText(ry.extents), " do not match"));
    }
  }
  return std::make_pair(rx, ry);
}

namespace {

absl::StatusOr<Value> Copy(Builder& b, CallArgs& args) {
  absl::StatusOr<Args> a = BindArgs(b, args, "T.copy",
                                    {"src", "dst", "coalesced_width", "disable_tma",
                                     "eviction_policy", "loop_layout", "annotations"},
                                    2);
  if (!a.ok()) return a.status();
  absl::StatusOr<Operand> src = ReadOperand(b, *(*a)[0], "T.copy", true);
  if (!src.ok()) return src.status();
  absl::StatusOr<Operand> dst = ReadOperand(b, *(*a)[1], "T.copy", true);
  if (!dst.ok()) return dst.status();
  // T.copy(A[i, j], B[i, j]) inside T.Parallel: each iteration moves its own
  // element, the store TileLang lowers it to.
  if (src->head && dst->head && b.InParallel()) {
    absl::Status s =
        b.StoreElement(dst->head->buffer, dst->head->indices,
                       Value::Runtime(ir::Load(src->head->buffer, src->head->indices)), args.loc);
    if (!s.ok()) return s;
    return Value::None();
  }
  absl::StatusOr<std::pair<ir::Region, ir::Region>> p =
      ResolvePair(b, *src, *dst, args.loc, "T.copy");
  if (!p.ok()) return p.status();
  // A region written as slices and fixed at compile time must lie inside its
  // buffer, as TileLang requires (regions that move with block indices, and
  // those a head address spans, are clipped at the edge).
  for (const auto& [r, role, arg, sliced] :
       {std::tuple{&p->first, "source", &*(*a)[0], src->region.has_value()},
        {&p->second, "destination", &*(*a)[1], dst->region.has_value()}}) {
    if (!sliced || arg->value.kind != ValueKind::kRegion) continue;
    for (size_t d = 0; d < r->mins.size(); ++d) {
      std::optional<int64_t> lo = ir::AsConstInt(r->mins[d]), n = ir::AsConstInt(r->extents[d]);
      std::optional<int64_t> size = ir::AsConstInt(r->buffer->shape[d]);
      if (lo && n && size && (*lo < 0 || *lo + *n > *size)) {
        return b.Err(arg->loc, Cat("T.copy ", role, " region ", r->buffer->name, "[", *lo, ":",
                                   *lo + *n, "] along dimension ", d, " lies outside `",
                                   r->buffer->name, "` (", *size, " elements)"));
      }
    }
  }
  bool disable_tma = false;
  if ((*a)[3]) {
    absl::StatusOr<bool> v = b.StaticBool((*a)[3]->value, (*a)[3]->loc, "disable_tma");
    if (!v.ok()) return v.status();
    disable_tma = *v;
  }
  absl::Status s = b.Emit(ir::Copy(p->first, p->second, disable_tma), args.loc, "T.copy");
  if (!s.ok()) return s;
  return Value::None();
}

absl::StatusOr<Value> Gemm(Builder& b, CallArgs& args) {
  absl::StatusOr<Args> a = BindArgs(b, args, "T.gemm",
                                    {"A", "B", "C", "transpose_A", "transpose_B", "policy",
                                     "clear_accum", "k_pack", "wg_wait", "mbar"},
                                    3);
  if (!a.ok()) return a.status();
  auto gemm = std::make_shared<ir::GemmNode>();
  ir::Region* regions[3] = {&gemm->a, &gemm->b, &gemm->c};
  for (int k = 0; k < 3; ++k) {
    absl::StatusOr<Operand> op = ReadOperand(b, *(*a)[k], "T.gemm", false);
    if (!op.ok()) return op.status();
    *regions[k] = *op->region;
  }
  auto flag = [&](int k, std::string_view use, bool* out) -> absl::Status {
    if (!(*a)[k]) return absl::OkStatus();
    absl::StatusOr<bool> v = b.StaticBool((*a)[k]->value, (*a)[k]->loc, use);
    if (!v.ok()) return v.status();
    *out = *v;
    return absl::OkStatus();
  };
  if (absl::Status s = flag(3, "transpose_A", &gemm->transpose_a); !s.ok()) return s;
  if (absl::Status s = flag(4, "transpose_B", &gemm->transpose_b); !s.ok()) return s;
  if (absl::Status s = flag(6, "clear_accum", &gemm->clear_accum); !s.ok()) return s;
  if ((*a)[5]) {
    const Arg& p = *(*a)[5];
    if (p.value.kind == ValueKind::kGemmPolicy) {
      gemm->policy = p.value.policy;
    } else if (p.value.kind == ValueKind::kStr &&
               (p.value.s == "Square" || p.value.s == "FullRow" || p.value.s == "FullCol")) {
      gemm->policy = p.value.s == "Square"    ? ir::GemmPolicy::kSquare
                     : p.value.s == "FullRow" ? ir::GemmPolicy::kFullRow
                                              : ir::GemmPolicy::kFullCol;
    } else {
      return b.Err(p.loc, Cat("policy must be a T.GemmWarpPolicy, got ", DescribeValue(p.value)));
    }
  }
  if ((*a)[7]) {
    absl::StatusOr<int64_t> k = b.StaticInt((*a)[7]->value, (*a)[7]->loc, "k_pack");
    if (!k.ok()) return k.status();
    if (*k < 1) return b.Err((*a)[7]->loc, "k_pack must be at least 1");
  }
  if ((*a)[8]) {
    absl::StatusOr<int64_t> w = b.StaticInt((*a)[8]->value, (*a)[8]->loc, "wg_wait");
    if (!w.ok()) return w.status();
    if (*w != 0) {
      return b.Err((*a)[8]->loc,
                   "T.gemm with wg_wait other than 0 (leaving the result pending) "
                   "is not supported");
    }
  }
  if ((*a)[9] && (*a)[9]->value.kind != ValueKind::kNone) {
    return b.Err((*a)[9]->loc, "T.gemm with an mbarrier (mbar=) is not supported");
  }
  absl::Status s = b.Emit(gemm, args.loc, "T.gemm");
  if (!s.ok()) return s;
  return Value::None();
}

absl::StatusOr<Value> Fill(Builder& b, std::string_view name, CallArgs& args) {
  bool clear = name == "T.clear";
  absl::StatusOr<Args> a = clear ? BindArgs(b, args, name, {"buffer"}, 1)
                                 : BindArgs(b, args, name, {"buffer", "value"}, 2);
  if (!a.ok()) return a.status();
  absl::StatusOr<Operand> dst = ReadOperand(b, *(*a)[0], name, true);
  if (!dst.ok()) return dst.status();
  Value v = clear ? Value::Int(0) : (*a)[1]->value;
  SourceLoc vloc = clear ? args.loc : (*a)[1]->loc;
  if (!dst->region) {
    // A single element (`T.fill(count[0], 0)`): a store.
    const ir::Buffer& buf = dst->head->buffer;
    absl::StatusOr<ir::Expr> value = b.ExprAs(v, buf->dtype, vloc);
    if (!value.ok()) return value.status();
    absl::Status s = b.Emit(ir::Store(buf, dst->head->indices, *value), args.loc, name);
    if (!s.ok()) return s;
    return Value::None();
  }
  absl::StatusOr<ir::Expr> value = b.ExprAs(v, dst->region->buffer->dtype, vloc);
  if (!value.ok()) return value.status();
  absl::Status s = b.Emit(ir::Fill(*dst->region, *value), args.loc, name);
  if (!s.ok()) return s;
  return Value::None();
}

// T.transpose(src, dst): dst[j, i] = src[i, j] for two-dimensional tiles of
// transposed constant shapes, as a T.Parallel nest over src.
absl::StatusOr<Value> Transpose(Builder& b, CallArgs& args) {
  constexpr std::string_view kFn = "T.transpose";
  absl::StatusOr<Args> a = BindArgs(b, args, kFn, {"src", "dst"}, 2);
  if (!a.ok()) return a.status();
  absl::StatusOr<Operand> src = ReadOperand(b, *(*a)[0], kFn, false);
  if (!src.ok()) return src.status();
  absl::StatusOr<Operand> dst = ReadOperand(b, *(*a)[1], kFn, false);
  if (!dst.ok()) return dst.status();
  const ir::Region& sr = *src->region;
  const ir::Region& dr = *dst->region;
  std::vector<int64_t> se, de;
  for (const ir::Expr& e : sr.extents) se.push_back(ir::AsConstInt(e).value_or(-1));
  for (const ir::Expr& e : dr.extents) de.push_back(ir::AsConstInt(e).value_or(-1));
  if (se.size() != 2 || de.size() != 2 || se[0] < 0 || se[1] < 0 || de[0] != se[1] ||
      de[1] != se[0]) {
    return b.Err(args.loc, Cat(kFn, " takes two-dimensional tiles of constant transposed shapes (",
                               "[m, n] into [n, m])"));
  }
  ir::Var i = ir::MakeVar("i", ir::DType::kInt32), j = ir::MakeVar("j", ir::DType::kInt32);
  auto at = [](const ir::Expr& base, const ir::Var& v) {
    return ir::Binary(ir::BinaryOp::kAdd, base, v);
  };
  ir::Expr value = ir::Load(sr.buffer, {at(sr.mins[0], i), at(sr.mins[1], j)});
  if (sr.buffer->dtype != dr.buffer->dtype) value = ir::Cast(dr.buffer->dtype, value);
  ir::Stmt body = ir::Store(dr.buffer, {at(dr.mins[0], j), at(dr.mins[1], i)}, value);
  body = ir::For(j, ir::IntImm(0), ir::IntImm(se[1]), ir::ForKind::kParallel, body);
  body = ir::For(i, ir::IntImm(0), ir::IntImm(se[0]), ir::ForKind::kParallel, body);
  absl::Status st = b.Emit(body, args.loc, kFn);
  if (!st.ok()) return st;
  return Value::None();
}

absl::StatusOr<Value> AnnotateLayout(Builder& b, CallArgs& args) {
  absl::StatusOr<Args> a = BindArgs(b, args, "T.annotate_layout", {"layout_map"}, 1);
  if (!a.ok()) return a.status();
  const Arg& m = *(*a)[0];
  if (m.value.kind != ValueKind::kDict) {
    return b.Err(m.loc, Cat("T.annotate_layout needs a dict {buffer: layout}, got ",
                            DescribeValue(m.value)));
  }
  for (const auto& [key, layout] : *m.value.dict) {
    if (key.kind != ValueKind::kBuffer) {
      return b.Err(m.loc,
                   Cat("T.annotate_layout: a key must be a buffer, got ", DescribeValue(key)));
    }
    if (layout.kind == ValueKind::kLayout && !layout.layout) {
      // T.Fragment(...): a thread mapping for a fragment. Values do not
      // depend on it and tilec infers fragment layouts itself: ignored. (A
      // local buffer given one keeps a copy in every thread, which holds
      // the same values.)
      if (key.buffer->scope != ir::Scope::kFragment && key.buffer->scope != ir::Scope::kLocal) {
        return b.Err(m.loc,
                     Cat("T.annotate_layout: T.Fragment(...) is for fragments, but `",
                         key.buffer->name, "` is a ", ir::ScopeName(key.buffer->scope), " buffer"));
      }
      continue;
    }
    if (layout.kind != ValueKind::kLayout) {
      return b.Err(m.loc, Cat("T.annotate_layout: the layout of `", key.buffer->name,
                              "` must be a T.Layout or make_swizzled_layout(...), got ",
                              DescribeValue(layout)));
    }
    if (layout.layout->kind == ir::Layout::Kind::kCustom &&
        layout.layout->vars.size() != key.buffer->shape.size()) {
      return b.Err(m.loc, Cat("T.annotate_layout: the layout of `", key.buffer->name, "` takes ",
                              layout.layout->vars.size(), " indices but the buffer has ",
                              key.buffer->shape.size(), " dimensions"));
    }
    if (layout.layout->kind == ir::Layout::Kind::kCustom &&
        key.buffer->scope == ir::Scope::kGlobal) {
      // A storage order for a global tensor that kernels exchange (the
      // atomics-friendly order of an attention backward's dQ, read back by a
      // postprocess kernel annotated the same way). tilec keeps global
      // tensors in logical order, so such a pair computes the same results;
      // only the bytes of the intermediate tensor are in another order.
      continue;
    }
    absl::Status s = b.Emit(std::make_shared<ir::AnnotateLayoutNode>(key.buffer, *layout.layout),
                            args.loc, "T.annotate_layout");
    if (!s.ok()) return s;
  }
  return Value::None();
}

absl::StatusOr<Value> UseSwizzle(Builder& b, CallArgs& args) {
  absl::StatusOr<Args> a = BindArgs(b, args, "T.use_swizzle", {"panel_size", "order", "enable"}, 1);
  if (!a.ok()) return a.status();
  absl::StatusOr<ir::Expr> panel = b.SizeExpr((*a)[0]->value, (*a)[0]->loc, "panel_size", true);
  if (!panel.ok()) return panel.status();
  bool column = false;
  if ((*a)[1]) {
    absl::StatusOr<std::string> o = b.StaticStr((*a)[1]->value, (*a)[1]->loc, "order");
    if (!o.ok()) return o.status();
    if (*o == "column" || *o == "col") {
      column = true;
    } else if (*o != "row") {
      return b.Err((*a)[1]->loc, Cat("order must be \"row\" or \"column\", got '", *o, "'"));
    }
  }
  bool enable = true;
  if ((*a)[2]) {
    absl::StatusOr<bool> e = b.StaticBool((*a)[2]->value, (*a)[2]->loc, "enable");
    if (!e.ok()) return e.status();
    enable = *e;
  }
  absl::Status s = b.Emit(std::make_shared<ir::UseSwizzleNode>(*panel, column, enable), args.loc,
                          "T.use_swizzle");
  if (!s.ok()) return s;
  return Value::None();
}

}  // namespace

// T.c2d_im2col(img, col, nhw_step, c_step, kernel, stride=1, dilation=1,
// pad=0): tile (nhw_step, c_step) of the im2col matrix of the NHWC image
// `img` for a square `kernel`, into the two-dimensional tile `col`: row m
// is output pixel (n, oh, ow), column k is (kh, kw, c), and the element is
// img[n, oh * stride + kh * dilation - pad, ow * stride + kw * dilation -
// pad, c], zero in the padding. As a T.Parallel nest over `col`.
absl::StatusOr<Value> Im2col(Builder& b, CallArgs& args) {
  constexpr std::string_view kFn = "T.c2d_im2col";
  absl::StatusOr<Args> a = BindArgs(
      b, args, kFn, {"img", "col", "nhw_step", "c_step", "kernel", "stride", "dilation", "pad"}, 5);
  if (!a.ok()) return a.status();
  const Arg& img_arg = *(*a)[0];
  if (img_arg.value.kind != ValueKind::kBuffer || img_arg.value.buffer->shape.size() != 4 ||
      img_arg.value.buffer->scope != ir::Scope::kGlobal) {
    return b.Err(img_arg.loc, Cat(kFn, " takes an NHWC image tensor of rank 4, got ",
                                  DescribeValue(img_arg.value)));
  }
  const ir::Buffer img = img_arg.value.buffer;
  absl::StatusOr<Operand> col = ReadOperand(b, *(*a)[1], kFn, false);
  if (!col.ok()) return col.status();
  const ir::Region& cr = *col->region;
  std::vector<int64_t> ce;
  for (const ir::Expr& e : cr.extents) ce.push_back(ir::AsConstInt(e).value_or(-1));
  if (ce.size() != 2 || ce[0] < 1 || ce[1] < 1) {
    return b.Err((*a)[1]->loc, Cat(kFn, " writes a two-dimensional tile of constant shape"));
  }
  std::vector<int64_t> ints;  // kernel, stride, dilation, pad
  const char* names[] = {"kernel", "stride", "dilation", "pad"};
  const int64_t defaults[] = {0, 1, 1, 0};
  for (int k = 0; k < 4; ++k) {
    const std::optional<Arg>& v = (*a)[4 + k];
    if (!v || v->value.kind == ValueKind::kNone) {
      ints.push_back(defaults[k]);
      continue;
    }
    absl::StatusOr<int64_t> x = b.StaticInt(v->value, v->loc, names[k]);
    if (!x.ok()) return x.status();
    if (*x < (k == 3 ? 0 : 1)) return b.Err(v->loc, Cat(kFn, ": ", names[k], " is ", *x));
    ints.push_back(*x);
  }
  const int64_t kk = ints[0], s = ints[1], d = ints[2], pad = ints[3];
  absl::StatusOr<ir::Expr> nhw = b.ExprAs((*a)[2]->value, ir::DType::kInt32, (*a)[2]->loc);
  if (!nhw.ok()) return nhw.status();
  absl::StatusOr<ir::Expr> cstep = b.ExprAs((*a)[3]->value, ir::DType::kInt32, (*a)[3]->loc);
  if (!cstep.ok()) return cstep.status();
  using ir::BinaryOp;
  auto I = [](int64_t v) { return ir::IntImm(v); };
  auto op = [](BinaryOp o, ir::Expr x, ir::Expr y) {
    return ir::Binary(o, std::move(x), CastTo(x->dtype, std::move(y)));
  };
  const ir::Expr h = CastTo(ir::DType::kInt32, img->shape[1]);
  const ir::Expr w = CastTo(ir::DType::kInt32, img->shape[2]);
  const ir::Expr c = CastTo(ir::DType::kInt32, img->shape[3]);
  // OH = (H + 2P - D(K-1) - 1) // S + 1, the same for OW.
  auto out = [&](const ir::Expr& e) {
    return op(BinaryOp::kAdd,
              op(BinaryOp::kFloorDiv, op(BinaryOp::kSub, e, I(d * (kk - 1) + 1 - 2 * pad)), I(s)),
              I(1));
  };
  const ir::Expr oh = out(h), ow = out(w);
  ir::Var i = ir::MakeVar("i", ir::DType::kInt32), j = ir::MakeVar("j", ir::DType::kInt32);
  const ir::Expr m = op(BinaryOp::kAdd, op(BinaryOp::kMul, *nhw, I(ce[0])), i);
  const ir::Expr k = op(BinaryOp::kAdd, op(BinaryOp::kMul, *cstep, I(ce[1])), j);
  const ir::Expr pix = op(BinaryOp::kMul, oh, ow);
  const ir::Expr ih =
      op(BinaryOp::kSub,
         op(BinaryOp::kAdd,
            op(BinaryOp::kMul, op(BinaryOp::kFloorDiv, op(BinaryOp::kFloorMod, m, pix), ow), I(s)),
            op(BinaryOp::kMul, op(BinaryOp::kFloorDiv, k, op(BinaryOp::kMul, c, I(kk))), I(d))),
         I(pad));
  const ir::Expr iw = op(
      BinaryOp::kSub,
      op(BinaryOp::kAdd, op(BinaryOp::kMul, op(BinaryOp::kFloorMod, m, ow), I(s)),
         op(BinaryOp::kMul, op(BinaryOp::kFloorMod, op(BinaryOp::kFloorDiv, k, c), I(kk)), I(d))),
      I(pad));
  ir::Expr in =
      op(BinaryOp::kAnd, op(BinaryOp::kAnd, op(BinaryOp::kGe, ih, I(0)), op(BinaryOp::kLt, ih, h)),
         op(BinaryOp::kAnd, op(BinaryOp::kGe, iw, I(0)), op(BinaryOp::kLt, iw, w)));
  ir::Expr value =
      ir::Load(img, {op(BinaryOp::kFloorDiv, m, pix), ih, iw, op(BinaryOp::kFloorMod, k, c)});
  value = ir::Select(in, value, ir::Cast(img->dtype, I(0)));
  if (img->dtype != cr.buffer->dtype) value = ir::Cast(cr.buffer->dtype, value);
  auto at = [&](const ir::Expr& base, const ir::Var& v) { return op(BinaryOp::kAdd, base, v); };
  ir::Stmt body = ir::Store(cr.buffer, {at(cr.mins[0], i), at(cr.mins[1], j)}, value);
  body = ir::For(j, I(0), I(ce[1]), ir::ForKind::kParallel, body);
  body = ir::For(i, I(0), I(ce[0]), ir::ForKind::kParallel, body);
  absl::Status st = b.Emit(body, args.loc, kFn);
  if (!st.ok()) return st;
  return Value::None();
}

std::optional<absl::StatusOr<Value>> CallTileOp(Builder& b, std::string_view name, CallArgs& args) {
  if (name == "T.c2d_im2col") return Im2col(b, args);
  if (name == "T.alloc_shared") return Alloc(b, name, ir::Scope::kShared, args);
  if (name == "T.alloc_fragment") return Alloc(b, name, ir::Scope::kFragment, args);
  if (name == "T.alloc_local") return Alloc(b, name, ir::Scope::kLocal, args);
  if (name == "T.alloc_global") return Alloc(b, name, ir::Scope::kGlobal, args);
  // TVM's T.alloc_buffer(shape, dtype, scope="global"): the storage scope= names.
  if (name == "T.alloc_buffer") return Alloc(b, name, ir::Scope::kGlobal, args);
  if (name == "T.alloc_var") return AllocVar(b, args);
  if (name == "T.alloc_reducer") {
    // T.alloc_reducer(shape, dtype, op="sum", replication=...): a fragment
    // whose T.Parallel accumulations become reductions (reducers.h).
    absl::StatusOr<Args> a = BindArgs(b, args, name, {"shape", "dtype", "op", "replication"}, 2);
    if (!a.ok()) return a.status();
    ir::ReduceKind op = ir::ReduceKind::kSum;
    if ((*a)[2]) {
      absl::StatusOr<std::string> o = b.StaticStr((*a)[2]->value, (*a)[2]->loc, "op");
      if (!o.ok()) return o.status();
      if (*o == "max") {
        op = ir::ReduceKind::kMax;
      } else if (*o == "min") {
        op = ir::ReduceKind::kMin;
      } else if (*o != "sum") {
        return b.Err((*a)[2]->loc, Cat("T.alloc_reducer(op=\"", *o,
                                       "\"): the op is \"sum\", \"max\" or \"min\""));
      }
    }
    CallArgs alloc;
    alloc.loc = args.loc;
    alloc.positional.push_back(*(*a)[0]);
    alloc.positional.push_back(*(*a)[1]);
    absl::StatusOr<Value> buf = Alloc(b, "T.alloc_fragment", ir::Scope::kFragment, alloc);
    if (!buf.ok()) return buf.status();
    b.reducer_buffers()[buf->buffer.get()] = op;
    return buf;
  }
  if (name == "T.finalize_reducer") {
    absl::StatusOr<Args> a = BindArgs(b, args, name, {"reducer", "batch"}, 1);
    if (!a.ok()) return a.status();
    if ((*a)[1]) {  // a lowering knob, as T.reduce_*'s
      absl::StatusOr<int64_t> batch = b.StaticInt((*a)[1]->value, (*a)[1]->loc, "batch");
      if (!batch.ok()) return batch.status();
      if (*batch < 1)
        return b.Err((*a)[1]->loc, Cat(name, ": batch must be at least 1, got ", *batch));
    }
    const Arg& r = *(*a)[0];
    if (r.value.kind != ValueKind::kBuffer || !b.reducer_buffers().count(r.value.buffer.get())) {
      return b.Err(r.loc, Cat("T.finalize_reducer takes a buffer from T.alloc_reducer, got ",
                              DescribeValue(r.value)));
    }
    return Value::None();  // the reductions already combined every iteration
  }
  if (name == "T.copy") return Copy(b, args);
  if (name == "T.gemm") return Gemm(b, args);
  if (name == "T.tma_copy" || name == "T.async_copy" || name == "T.wgmma_gemm") {
    // The explicitly asynchronous forms: tilec completes every operation
    // before the next statement, so they are T.copy / T.gemm, and the waits
    // a kernel spells out for them (barriers, T.wait_wgmma) are no-ops. Their
    // synchronisation and lowering arguments change no value.
    static constexpr std::string_view kDropped[] = {"barrier",
                                                    "cluster_mask",
                                                    "leader_scope_threads",
                                                    "inner_cache_policy",
                                                    "outer_cache_policy",
                                                    "emit_arrive",
                                                    "emit_commit",
                                                    "emit_fence_before",
                                                    "emit_fence_after",
                                                    "instruction_n",
                                                    "annotations"};
    CallArgs kept = args;
    kept.keywords.clear();
    for (const auto& kw : args.keywords) {
      if (std::find(std::begin(kDropped), std::end(kDropped), kw.first) == std::end(kDropped)) {
        kept.keywords.push_back(kw);
      }
    }
    return name == "T.wgmma_gemm" ? Gemm(b, kept) : Copy(b, kept);
  }
  if (name == "T.fill" || name == "T.clear") return Fill(b, name, args);
  if (name == "T.transpose") return Transpose(b, args);
  if (std::optional<absl::StatusOr<Value>> r = CallTlReduce(b, name, args)) return *r;
  if (auto atomic = CallTileAtomic(b, name, args)) return *atomic;
  if (name == "T.annotate_layout") return AnnotateLayout(b, args);
  if (name == "T.use_swizzle") return UseSwizzle(b, args);
  if (name == "T.disable_warp_group_reg_alloc") {
    // A register-allocation hint for warp-specialised kernels (setmaxnreg):
    // it changes no value, and tilec's sm_90a kernels do not move registers
    // between warp groups, so there is nothing to disable.
    absl::StatusOr<Args> a = BindArgs(b, args, "T.disable_warp_group_reg_alloc", {}, 0);
    if (!a.ok()) return a.status();
    return Value::None();
  }
  return std::nullopt;
}

}  // namespace tilec::frontend
