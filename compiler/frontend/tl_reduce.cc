// The reductions and scans: T.reduce_{sum,max,min,abssum,absmax} (one
// ReduceNode, or a reduction into a view of an output that keeps the reduced
// dimension as extent 1), T.reduce_argmax / argmin (built from tile
// operators), T.cumsum, T.cummax / T.cummin and the bitwise reductions
// T.reduce_bitand / bitor / bitxor (the last two lowered to serial folds in
// shared memory).
#include <algorithm>
#include <optional>

#include "compiler/frontend/str_util.h"
#include "compiler/frontend/tl_builtins.h"
#include "compiler/frontend/value_ops.h"
#include "compiler/ir/printer.h"

namespace tilec::frontend {
namespace {

using Args = std::vector<std::optional<Arg>>;

absl::StatusOr<ir::Buffer> WholeBuffer(Builder& b, const Arg& a, std::string_view fn) {
  if (a.value.kind == ValueKind::kBuffer) return a.value.buffer;
  return b.Err(a.loc, Cat(fn, " works on whole buffers, got ", DescribeValue(a.value)));
}

absl::StatusOr<int> Dim(Builder& b, const std::optional<Arg>& a, int64_t dflt, size_t rank,
                        std::string_view fn, SourceLoc call_loc) {
  int64_t dim = dflt;
  if (a) {
    absl::StatusOr<int64_t> d = b.StaticInt(a->value, a->loc, Cat("the dim of ", fn));
    if (!d.ok()) return d.status();
    dim = *d;
  }
  int64_t r = static_cast<int64_t>(rank);
  if (dim < -r || dim >= r) {
    return b.Err(a ? a->loc : call_loc,
                 Cat(fn, ": dim ", dim, " is out of range for a buffer of rank ", rank));
  }
  return static_cast<int>(dim < 0 ? dim + r : dim);
}

absl::StatusOr<Value> Reduce(Builder& b, std::string_view name, CallArgs& args) {
  ir::ReduceKind kind = ir::ReduceKind::kSum;
  if (name == "T.reduce_max") kind = ir::ReduceKind::kMax;
  if (name == "T.reduce_min") kind = ir::ReduceKind::kMin;
  if (name == "T.reduce_abssum") kind = ir::ReduceKind::kAbsSum;
  if (name == "T.reduce_absmax") kind = ir::ReduceKind::kAbsMax;
  absl::StatusOr<Args> a =
      BindArgs(b, args, name, {"buffer", "out", "dim", "clear", "batch", "annotations"}, 2);
  if (!a.ok()) return a.status();
  // batch= (how many rows TileLang's lowering reduces together) tunes the
  // lowering, not the values: checked, then left to tilec's own.
  if ((*a)[4]) {
    absl::StatusOr<int64_t> batch = b.StaticInt((*a)[4]->value, (*a)[4]->loc, "batch");
    if (!batch.ok()) return batch.status();
    if (*batch < 1)
      return b.Err((*a)[4]->loc, Cat(name, ": batch must be at least 1, got ", *batch));
  }
  absl::StatusOr<ir::Buffer> src = WholeBuffer(b, *(*a)[0], name);
  if (!src.ok()) return src.status();
  absl::StatusOr<ir::Buffer> dst = WholeBuffer(b, *(*a)[1], name);
  if (!dst.ok()) return dst.status();
  absl::StatusOr<int> dim = Dim(b, (*a)[2], -1, (*src)->shape.size(), name, args.loc);
  if (!dim.ok()) return dim.status();
  bool clear = true;
  if ((*a)[3]) {
    absl::StatusOr<bool> c = b.StaticBool((*a)[3]->value, (*a)[3]->loc, "clear");
    if (!c.ok()) return c.status();
    clear = *c;
  }
  // dst must be src's shape without `dim` ([1] when src is 1-D).
  std::vector<ir::Expr> expected;
  for (size_t d = 0; d < (*src)->shape.size(); ++d) {
    if (static_cast<int>(d) != *dim) expected.push_back((*src)->shape[d]);
  }
  if (expected.empty()) expected.push_back(ir::IntImm(1));
  const std::vector<ir::Expr>& got = (*dst)->shape;
  bool keep_dim =
      got.size() == (*src)->shape.size() && got.size() > 1 && ir::AsConstInt(got[*dim]) == 1;
  if (keep_dim) {
    // The output keeps `dim` with extent 1: reduce into a view of it in the
    // reduced shape (views.h), which holds the same elements.
    if ((*dst)->scope != ir::Scope::kShared && (*dst)->scope != ir::Scope::kFragment) {
      return b.Err((*a)[1]->loc, Cat(name, ": the output `", (*dst)->name,
                                     "` must be a shared or fragment buffer"));
    }
    ir::Buffer base = *dst;
    if (auto it = b.views().find(base.get()); it != b.views().end()) base = it->second.base;
    ir::Buffer view =
        ir::MakeBuffer(Cat((*dst)->name, "_kept"), (*dst)->dtype, expected, (*dst)->scope);
    b.views()[view.get()] = View{base, {}};
    *dst = view;
  }
  bool mismatch = !keep_dim && got.size() != expected.size();
  for (size_t d = 0; !keep_dim && !mismatch && d < got.size(); ++d) {
    std::optional<int64_t> x = ir::AsConstInt(got[d]), y = ir::AsConstInt(expected[d]);
    if (x && y && *x != *y) mismatch = true;
  }
  if (mismatch) {
    return b.Err((*a)[1]->loc, Cat(name, ": the output `", (*dst)->name, "` has shape ",
                                   ExtentsText(got), " but reducing dim ", *dim, " of `",
                                   (*src)->name, "` gives ", ExtentsText(expected)));
  }
  if ((*src)->scope != ir::Scope::kFragment || (*dst)->scope != ir::Scope::kShared) {
    absl::Status s =
        b.Emit(std::make_shared<ir::ReduceNode>(kind, *src, *dst, *dim, clear), args.loc, name);
    if (!s.ok()) return s;
    return Value::None();
  }
  // A fragment reduced into shared memory goes through a fragment of the
  // output's shape: filled from the output first when clear=False, then
  // stored to it by the threads that hold each result.
  ir::Buffer part = ir::MakeBuffer(b.TakeNameHint(Cat((*dst)->name, "_part")), (*dst)->dtype,
                                   expected, ir::Scope::kFragment);
  auto move = [&](const ir::Buffer& from, const ir::Buffer& to) {
    std::vector<ir::Var> vars;
    std::vector<ir::Expr> idx;
    for (size_t d = 0; d < expected.size(); ++d) {
      vars.push_back(ir::MakeVar(Cat("i", d), ir::DType::kInt32));
      idx.push_back(vars.back());
    }
    ir::Stmt body = ir::Store(to, idx, ir::Load(from, idx));
    for (size_t d = expected.size(); d-- > 0;) {
      body = ir::For(vars[d], ir::IntImm(0), expected[d], ir::ForKind::kParallel, body);
    }
    return b.Emit(body, args.loc, name);
  };
  absl::Status s = b.Emit(ir::Allocate(part), args.loc, name);
  if (s.ok() && !clear) s = move(*dst, part);
  if (s.ok()) {
    s = b.Emit(std::make_shared<ir::ReduceNode>(kind, *src, part, *dim, clear), args.loc, name);
  }
  if (s.ok()) s = move(part, *dst);
  if (!s.ok()) return s;
  return Value::None();
}

// T.reduce_argmax / T.reduce_argmin(buffer, out, dim=-1): the index along
// `dim` of the first maximum (minimum), as torch.argmax gives it, built from
// tile operators: the extreme value (a reduction), then each element's index
// where it equals the extreme and the extent where not (a T.Parallel nest),
// then the smallest of those (a reduction into `out`, or into a fragment
// copied into `out` when `out` keeps `dim` with extent 1).
absl::StatusOr<Value> ArgReduce(Builder& b, std::string_view name, CallArgs& args) {
  const bool max = name == "T.reduce_argmax";
  absl::StatusOr<Args> a = BindArgs(b, args, name, {"buffer", "out", "dim"}, 2);
  if (!a.ok()) return a.status();
  absl::StatusOr<ir::Buffer> src = WholeBuffer(b, *(*a)[0], name);
  if (!src.ok()) return src.status();
  absl::StatusOr<ir::Buffer> dst = WholeBuffer(b, *(*a)[1], name);
  if (!dst.ok()) return dst.status();
  const size_t rank = (*src)->shape.size();
  absl::StatusOr<int> dim = Dim(b, (*a)[2], -1, rank, name, args.loc);
  if (!dim.ok()) return dim.status();
  if (!ir::IsInt((*dst)->dtype)) {
    return b.Err((*a)[1]->loc, Cat(name, ": the output `", (*dst)->name,
                                   "` holds indices and must have an integer dtype"));
  }
  std::vector<int64_t> shape;
  for (const ir::Expr& e : (*src)->shape) {
    std::optional<int64_t> v = ir::AsConstInt(e);
    if (!v) return b.Err(args.loc, Cat(name, " needs a source of constant shape"));
    shape.push_back(*v);
  }
  std::vector<ir::Expr> reduced;
  for (size_t d = 0; d < rank; ++d) {
    if (static_cast<int>(d) != *dim) reduced.push_back(ir::IntImm(shape[d]));
  }
  if (reduced.empty()) reduced.push_back(ir::IntImm(1));
  // `out` keeping `dim` as extent 1 gets the result through a fragment.
  const bool keep =
      (*dst)->shape.size() == rank && rank > 1 && ir::AsConstInt((*dst)->shape[*dim]) == 1;
  auto alloc = [&](const std::string& hint, ir::DType t, std::vector<ir::Expr> s) {
    ir::Buffer buf = ir::MakeBuffer(b.TakeNameHint(hint), t, std::move(s), ir::Scope::kFragment);
    absl::Status st = b.Emit(ir::Allocate(buf), args.loc, name);
    return st.ok() ? absl::StatusOr<ir::Buffer>(buf) : absl::StatusOr<ir::Buffer>(st);
  };
  absl::StatusOr<ir::Buffer> extreme =
      alloc(max ? "argmax_value" : "argmin_value", (*src)->dtype, reduced);
  if (!extreme.ok()) return extreme.status();
  std::vector<ir::Expr> full;
  for (int64_t v : shape) full.push_back(ir::IntImm(v));
  absl::StatusOr<ir::Buffer> index = alloc("arg_index", ir::DType::kInt32, full);
  if (!index.ok()) return index.status();
  absl::Status st =
      b.Emit(std::make_shared<ir::ReduceNode>(max ? ir::ReduceKind::kMax : ir::ReduceKind::kMin,
                                              *src, *extreme, *dim, true),
             args.loc, name);
  if (!st.ok()) return st;
  // index[i...] = i_dim where src[i...] == extreme[i... without dim], else the extent.
  std::vector<ir::Var> vars;
  std::vector<ir::Expr> idx, red_idx;
  for (size_t d = 0; d < rank; ++d) {
    vars.push_back(ir::MakeVar(Cat("i", d), ir::DType::kInt32));
    idx.push_back(vars.back());
    if (static_cast<int>(d) != *dim) red_idx.push_back(vars.back());
  }
  if (red_idx.empty()) red_idx.push_back(ir::IntImm(0));
  ir::Expr hit = ir::Binary(ir::BinaryOp::kEq, ir::Load(*src, idx), ir::Load(*extreme, red_idx));
  ir::Expr pos = vars[*dim];
  ir::Expr miss = ir::IntImm(shape[*dim]);
  ir::Stmt body = ir::Store(*index, idx, ir::Select(hit, pos, miss));
  for (size_t d = rank; d-- > 0;) {
    body = ir::For(vars[d], ir::IntImm(0), ir::IntImm(shape[d]), ir::ForKind::kParallel, body);
  }
  st = b.Emit(body, args.loc, name);
  if (!st.ok()) return st;
  // Indices are found in int32; another output dtype, an output that keeps
  // `dim`, or one in shared memory is filled from an int32 fragment.
  const bool through =
      keep || (*dst)->dtype != ir::DType::kInt32 || (*dst)->scope != ir::Scope::kFragment;
  ir::Buffer out = *dst;
  if (through) {
    absl::StatusOr<ir::Buffer> r = alloc("arg_out", ir::DType::kInt32, reduced);
    if (!r.ok()) return r.status();
    out = *r;
  }
  st = b.Emit(std::make_shared<ir::ReduceNode>(ir::ReduceKind::kMin, *index, out, *dim, true),
              args.loc, name);
  if (!st.ok()) return st;
  if (through) {
    std::vector<ir::Var> ov;
    std::vector<ir::Expr> oi, ri;
    for (size_t d = 0; d < rank; ++d) {
      ov.push_back(ir::MakeVar(Cat("j", d), ir::DType::kInt32));
      if (static_cast<int>(d) == *dim) {
        if (keep) oi.push_back(ir::IntImm(0));
      } else {
        oi.push_back(ov.back());
        ri.push_back(ov.back());
      }
    }
    ir::Stmt copy;
    if (ri.empty()) {
      // A 1-D source: one element, through a one-iteration nest.
      ir::Var j = ir::MakeVar("j", ir::DType::kInt32);
      copy = ir::For(j, ir::IntImm(0), ir::IntImm(1), ir::ForKind::kParallel,
                     ir::Store(*dst, {j}, ir::Cast((*dst)->dtype, ir::Load(out, {j}))));
    } else {
      copy = ir::Store(*dst, oi, ir::Cast((*dst)->dtype, ir::Load(out, ri)));
      for (size_t d = rank; d-- > 0;) {
        if (static_cast<int>(d) == *dim) continue;
        copy = ir::For(ov[d], ir::IntImm(0), ir::IntImm(shape[d]), ir::ForKind::kParallel, copy);
      }
    }
    st = b.Emit(copy, args.loc, name);
    if (!st.ok()) return st;
  }
  return Value::None();
}

absl::StatusOr<Value> Cumsum(Builder& b, CallArgs& args) {
  absl::StatusOr<Args> a = BindArgs(b, args, "T.cumsum", {"src", "dst", "dim", "reverse"}, 1);
  if (!a.ok()) return a.status();
  absl::StatusOr<ir::Buffer> src = WholeBuffer(b, *(*a)[0], "T.cumsum");
  if (!src.ok()) return src.status();
  ir::Buffer dst = *src;
  if ((*a)[1] && (*a)[1]->value.kind != ValueKind::kNone) {
    absl::StatusOr<ir::Buffer> d = WholeBuffer(b, *(*a)[1], "T.cumsum");
    if (!d.ok()) return d.status();
    dst = *d;
  }
  absl::StatusOr<int> dim = Dim(b, (*a)[2], 0, (*src)->shape.size(), "T.cumsum", args.loc);
  if (!dim.ok()) return dim.status();
  bool reverse = false;
  if ((*a)[3]) {
    absl::StatusOr<bool> r = b.StaticBool((*a)[3]->value, (*a)[3]->loc, "reverse");
    if (!r.ok()) return r.status();
    reverse = *r;
  }
  absl::Status s =
      b.Emit(std::make_shared<ir::CumsumNode>(*src, dst, *dim, reverse), args.loc, "T.cumsum");
  if (!s.ok()) return s;
  return Value::None();
}

// T.cummax / T.cummin: dst[..., t, ...] = max (min) of src[..., 0..t, ...]
// along `dim` (from the end when reversed).
absl::StatusOr<Value> ScanExtremum(Builder& b, std::string_view name, CallArgs& args) {
  absl::StatusOr<Args> a =
      BindArgs(b, args, name, {"src", "dst", "dim", "reverse", "annotations"}, 1);
  if (!a.ok()) return a.status();
  auto buffer = [&](const std::optional<Arg>& x) -> absl::StatusOr<ir::Buffer> {
    if (x->value.kind != ValueKind::kBuffer) {
      return b.Err(x->loc, Cat(name, " works on whole buffers, got ", DescribeValue(x->value)));
    }
    const ir::Buffer& buf = x->value.buffer;
    if (buf->scope != ir::Scope::kShared && buf->scope != ir::Scope::kFragment) {
      return b.Err(x->loc, Cat(name, " works on shared and fragment buffers; `", buf->name,
                               "` is a ", ir::ScopeName(buf->scope), " buffer"));
    }
    return buf;
  };
  absl::StatusOr<ir::Buffer> src = buffer((*a)[0]);
  if (!src.ok()) return src.status();
  ir::Buffer dst = *src;
  if ((*a)[1] && (*a)[1]->value.kind != ValueKind::kNone) {
    absl::StatusOr<ir::Buffer> d = buffer((*a)[1]);
    if (!d.ok()) return d.status();
    dst = *d;
  }
  std::vector<int64_t> shape;
  for (const ir::Expr& e : (*src)->shape) shape.push_back(ir::AsConstInt(e).value_or(-1));
  std::vector<int64_t> dshape;
  for (const ir::Expr& e : dst->shape) dshape.push_back(ir::AsConstInt(e).value_or(-1));
  if (shape != dshape || dst->dtype != (*src)->dtype) {
    return b.Err(args.loc, Cat(name, ": dst must have src's shape and dtype"));
  }
  const int64_t rank = static_cast<int64_t>(shape.size());
  absl::StatusOr<int> d = Dim(b, (*a)[2], 0, shape.size(), name, args.loc);
  if (!d.ok()) return d.status();
  const int64_t dim = *d;
  bool reverse = false;
  if ((*a)[3] && (*a)[3]->value.kind != ValueKind::kNone) {
    absl::StatusOr<bool> r = b.StaticBool((*a)[3]->value, (*a)[3]->loc, "reverse");
    if (!r.ok()) return r.status();
    reverse = *r;
  }
  // The scan runs in shared memory: fragments are staged through a buffer.
  auto emit = [&](ir::Stmt s) { return b.Emit(std::move(s), args.loc, name); };
  ir::Buffer work =
      (*src)->scope == ir::Scope::kShared && dst->scope == ir::Scope::kShared
          ? dst
          : ir::MakeBuffer(b.TakeNameHint("scan"), dst->dtype, dst->shape, ir::Scope::kShared);
  if (work != dst) {
    if (absl::Status st = emit(ir::Allocate(work)); !st.ok()) return st;
  }
  if (work != *src) {
    if (absl::Status st = emit(ir::Copy(ir::FullRegion(*src), ir::FullRegion(work))); !st.ok()) {
      return st;
    }
  }
  // T.Parallel over the other dims (one iteration for a 1-D buffer), a serial
  // loop along dim inside.
  std::vector<ir::Var> vars;
  std::vector<ir::Expr> extents;
  for (int64_t d = 0; d < rank; ++d) {
    if (d == dim) continue;
    vars.push_back(ir::MakeVar(Cat("i", d), ir::DType::kInt32));
    extents.push_back(ir::IntImm(shape[d]));
  }
  if (vars.empty()) {
    vars.push_back(ir::MakeVar("line", ir::DType::kInt32));
    extents.push_back(ir::IntImm(1));
  }
  ir::Var t = ir::MakeVar("t", ir::DType::kInt32);
  const int64_t n = shape[dim];
  auto at = [&](const ir::Expr& pos) {
    std::vector<ir::Expr> idx;
    size_t k = 0;
    for (int64_t d = 0; d < rank; ++d) idx.push_back(d == dim ? pos : ir::Expr(vars[k++]));
    return idx;
  };
  // Step t (1 .. n-1) reads the element before it in scan order.
  ir::Expr cur = reverse ? ir::Binary(ir::BinaryOp::kSub, ir::IntImm(n - 1), t) : ir::Expr(t);
  ir::Expr prev = reverse ? ir::Binary(ir::BinaryOp::kSub, ir::IntImm(n), t)
                          : ir::Binary(ir::BinaryOp::kSub, t, ir::IntImm(1));
  const ir::BinaryOp op = name == "T.cummax" ? ir::BinaryOp::kMax : ir::BinaryOp::kMin;
  ir::Stmt body = ir::For(
      t, ir::IntImm(1), ir::IntImm(n - 1), ir::ForKind::kSerial,
      ir::Store(work, at(cur), ir::Binary(op, ir::Load(work, at(prev)), ir::Load(work, at(cur)))));
  for (size_t k = vars.size(); k-- > 0;) {
    body = ir::For(vars[k], ir::IntImm(0), extents[k], ir::ForKind::kParallel, body);
  }
  if (absl::Status st = emit(body); !st.ok()) return st;
  if (work != dst) {
    if (absl::Status st = emit(ir::Copy(ir::FullRegion(work), ir::FullRegion(dst))); !st.ok()) {
      return st;
    }
  }
  return Value::None();
}

// T.reduce_bitand / bitor / bitxor: out[..] = src[.., 0, ..] op src[.., 1,
// ..] op ... along `dim` (and op the old out[..] when clear=False).
absl::StatusOr<Value> BitwiseReduce(Builder& b, std::string_view name, CallArgs& args) {
  absl::StatusOr<Args> a =
      BindArgs(b, args, name, {"buffer", "out", "dim", "clear", "batch", "annotations"}, 2);
  if (!a.ok()) return a.status();
  ir::Buffer bufs[2];
  for (int k = 0; k < 2; ++k) {
    const Arg& x = *(*a)[k];
    if (x.value.kind != ValueKind::kBuffer) {
      return b.Err(x.loc, Cat(name, " works on whole buffers, got ", DescribeValue(x.value)));
    }
    bufs[k] = x.value.buffer;
    if ((bufs[k]->scope != ir::Scope::kShared && bufs[k]->scope != ir::Scope::kFragment) ||
        !ir::IsInt(bufs[k]->dtype)) {
      return b.Err(x.loc, Cat(name, " takes integer or bool shared and fragment buffers; `",
                              bufs[k]->name, "` is a ", ir::DTypeName(bufs[k]->dtype), " ",
                              ir::ScopeName(bufs[k]->scope), " buffer"));
    }
  }
  const ir::Buffer& src = bufs[0];
  const ir::Buffer& dst = bufs[1];
  std::vector<int64_t> shape;
  for (const ir::Expr& e : src->shape) shape.push_back(ir::AsConstInt(e).value_or(-1));
  const int64_t rank = static_cast<int64_t>(shape.size());
  absl::StatusOr<int> d = Dim(b, (*a)[2], -1, shape.size(), name, args.loc);
  if (!d.ok()) return d.status();
  const int64_t dim = *d;
  bool clear = true;
  if ((*a)[3] && (*a)[3]->value.kind != ValueKind::kNone) {
    absl::StatusOr<bool> c = b.StaticBool((*a)[3]->value, (*a)[3]->loc, "clear");
    if (!c.ok()) return c.status();
    clear = *c;
  }
  std::vector<int64_t> expected;
  for (int64_t d = 0; d < rank; ++d) {
    if (d != dim) expected.push_back(shape[d]);
  }
  if (expected.empty()) expected.push_back(1);
  std::vector<int64_t> got;
  for (const ir::Expr& e : dst->shape) got.push_back(ir::AsConstInt(e).value_or(-1));
  if (got != expected || std::count(shape.begin(), shape.end(), -1) > 0) {
    return b.Err((*a)[1]->loc, Cat(name, ": `", dst->name, "` must have the constant shape of `",
                                   src->name, "` without dim ", dim));
  }
  auto emit = [&](ir::Stmt s) { return b.Emit(std::move(s), args.loc, name); };
  // Both sides in shared memory.
  auto staged = [&](const ir::Buffer& buf, bool copy_in) -> absl::StatusOr<ir::Buffer> {
    if (buf->scope == ir::Scope::kShared) return buf;
    ir::Buffer s =
        ir::MakeBuffer(b.TakeNameHint("bits"), buf->dtype, buf->shape, ir::Scope::kShared);
    if (absl::Status st = emit(ir::Allocate(s)); !st.ok()) return st;
    if (copy_in) {
      if (absl::Status st = emit(ir::Copy(ir::FullRegion(buf), ir::FullRegion(s))); !st.ok()) {
        return st;
      }
    }
    return s;
  };
  absl::StatusOr<ir::Buffer> in = staged(src, true);
  if (!in.ok()) return in.status();
  absl::StatusOr<ir::Buffer> out = staged(dst, !clear);
  if (!out.ok()) return out.status();
  const ir::BinaryOp op = name == "T.reduce_bitand"  ? ir::BinaryOp::kBitAnd
                          : name == "T.reduce_bitor" ? ir::BinaryOp::kBitOr
                                                     : ir::BinaryOp::kBitXor;
  std::vector<ir::Var> vars;
  for (size_t d = 0; d < expected.size(); ++d) {
    vars.push_back(ir::MakeVar(Cat("o", d), ir::DType::kInt32));
  }
  std::vector<ir::Expr> out_idx(vars.begin(), vars.end());
  if (rank == 1) out_idx = {ir::IntImm(0)};
  ir::Var r = ir::MakeVar("r", ir::DType::kInt32);
  auto src_at = [&](const ir::Expr& pos) {
    std::vector<ir::Expr> idx;
    size_t k = 0;
    for (int64_t d = 0; d < rank; ++d) idx.push_back(d == dim ? pos : ir::Expr(vars[k++]));
    return idx;
  };
  auto cast = [&](ir::Expr e) {
    return e->dtype == dst->dtype ? e : ir::Cast(dst->dtype, std::move(e));
  };
  // Element 0 (combined with the old output when not clearing), then the
  // rest of the line.
  ir::Expr first = cast(ir::Load(*in, src_at(ir::IntImm(0))));
  if (!clear) first = ir::Binary(op, ir::Load(*out, out_idx), first);
  ir::Stmt body = ir::Seq(
      {ir::Store(*out, out_idx, first),
       ir::For(
           r, ir::IntImm(1), ir::IntImm(shape[dim] - 1), ir::ForKind::kSerial,
           ir::Store(*out, out_idx,
                     ir::Binary(op, ir::Load(*out, out_idx), cast(ir::Load(*in, src_at(r))))))});
  for (size_t k = vars.size(); k-- > 0;) {
    body = ir::For(vars[k], ir::IntImm(0), ir::IntImm(expected[k]), ir::ForKind::kParallel, body);
  }
  if (absl::Status st = emit(body); !st.ok()) return st;
  if (*out != dst) {
    if (absl::Status st = emit(ir::Copy(ir::FullRegion(*out), ir::FullRegion(dst))); !st.ok()) {
      return st;
    }
  }
  return Value::None();
}

}  // namespace

std::optional<absl::StatusOr<Value>> CallTlReduce(Builder& b, std::string_view name,
                                                  CallArgs& args) {
  if (name == "T.reduce_max" || name == "T.reduce_min" || name == "T.reduce_sum" ||
      name == "T.reduce_abssum" || name == "T.reduce_absmax") {
    return Reduce(b, name, args);
  }
  if (name == "T.cumsum") return Cumsum(b, args);
  if (name == "T.reduce_argmax" || name == "T.reduce_argmin") return ArgReduce(b, name, args);
  if (name == "T.cummax" || name == "T.cummin") return ScanExtremum(b, name, args);
  if (name == "T.reduce_bitand" || name == "T.reduce_bitor" || name == "T.reduce_bitxor") {
    return BitwiseReduce(b, name, args);
  }
  return std::nullopt;
}

}  // namespace tilec::frontend
