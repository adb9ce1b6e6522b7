// Tile operators: copy, gemm, fill, reduce, cumsum and atomic_add with the
// tile-level semantics stated in interp.h.
#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "compiler/interp/exec.h"
#include "compiler/interp/numerics.h"

namespace tilec::interp::internal {
namespace {

using ir::DType;
using ir::IsFloat;

Scalar Zero(DType t) { return IsFloat(t) ? FloatScalar(0.0) : IntScalar(0); }

// a + b in dtype t, rounded (floats) or wrapped (integers).
Scalar AddIn(Scalar a, Scalar b, DType t) {
  if (IsFloat(t)) return FloatScalar(RoundToFloat(a.f + b.f, t));
  return IntScalar(
      WrapInt(static_cast<int64_t>(static_cast<uint64_t>(a.i) + static_cast<uint64_t>(b.i)), t));
}

Scalar MulIn(Scalar a, Scalar b, DType t) {
  if (IsFloat(t)) return FloatScalar(RoundToFloat(a.f * b.f, t));
  return IntScalar(
      WrapInt(static_cast<int64_t>(static_cast<uint64_t>(a.i) * static_cast<uint64_t>(b.i)), t));
}

Scalar AbsIn(Scalar a, DType t) {
  if (IsFloat(t)) return FloatScalar(std::fabs(a.f));
  if (!ir::IsSigned(t)) return a;
  return IntScalar(
      WrapInt(a.i < 0 ? static_cast<int64_t>(0 - static_cast<uint64_t>(a.i)) : a.i, t));
}

// Row-major strides of a shape.
std::vector<int64_t> Strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d) s[d] = s[d + 1] * shape[d + 1];
  return s;
}

// The flat index of a full index in t, or -1 when it lies outside t.
int64_t FlatOrNone(const Tensor& t, const std::vector<int64_t>& index) {
  int64_t flat = 0;
  const auto& shape = t.shape();
  for (size_t d = 0; d < index.size(); ++d) {
    if (index[d] < 0 || index[d] >= shape[d]) return -1;
    flat = flat * shape[d] + index[d];
  }
  return flat;
}

std::vector<int> NonUnitDims(const RegionValue& r) {
  std::vector<int> dims;
  for (size_t d = 0; d < r.extents.size(); ++d) {
    if (r.extents[d] != 1) dims.push_back(static_cast<int>(d));
  }
  return dims;
}

// Walks two regions whose extents agree after dropping extent-1 dimensions,
// element by element in row-major order, calling f(flat_a, flat_b) with -1
// for an element outside its buffer. False (error recorded) when the extents
// disagree.
template <typename F>
bool ForEachPair(Env& env, absl::string_view op, const RegionValue& a, const RegionValue& b, F f) {
  const std::vector<int> da = NonUnitDims(a), db = NonUnitDims(b);
  bool agree = da.size() == db.size();
  for (size_t k = 0; agree && k < da.size(); ++k) agree = a.extents[da[k]] == b.extents[db[k]];
  if (!agree) {
    env.Fail(absl::InvalidArgumentError(absl::StrCat(
        op, " from ", RegionString(a), " to ", RegionString(b), ": the extents do not match")));
    return false;
  }
  int64_t total = 1;
  for (int d : da) total *= a.extents[d];
  std::vector<int64_t> ia = a.mins, ib = b.mins;
  std::vector<int64_t> counter(da.size(), 0);
  for (int64_t n = 0; n < total; ++n) {
    f(FlatOrNone(*a.tensor, ia), FlatOrNone(*b.tensor, ib));
    // Odometer over the shared non-unit dims, last fastest.
    for (int k = static_cast<int>(da.size()) - 1; k >= 0; --k) {
      ++counter[k];
      ++ia[da[k]];
      ++ib[db[k]];
      if (counter[k] < a.extents[da[k]]) break;
      counter[k] = 0;
      ia[da[k]] = a.mins[da[k]];
      ib[db[k]] = b.mins[db[k]];
    }
  }
  return true;
}

class CopyStmt final : public CStmt {
 public:
  CopyStmt(CRegion src, CRegion dst) : src_(std::move(src)), dst_(std::move(dst)) {}

  absl::Status Exec(Env& env) const override {
    RegionValue s, d;
    if (!EvalRegion(env, src_, &s) || !EvalRegion(env, dst_, &d)) return env.TakeError();
    const DType st = s.tensor->dtype(), dt = d.tensor->dtype();
    // Read everything first: a copy within one buffer sees only old values.
    std::vector<std::pair<int64_t, Scalar>> writes;
    bool ok = ForEachPair(env, "copy", s, d, [&](int64_t fs, int64_t fd) {
      if (fd < 0) return;
      Scalar v = fs >= 0 ? ReadElement(*s.tensor, fs) : Zero(st);
      writes.emplace_back(fd, Convert(v, st, dt));
    });
    if (!ok) return env.TakeError();
    for (const auto& [fd, v] : writes) WriteElement(*d.tensor, fd, v);
    return absl::OkStatus();
  }

 private:
  CRegion src_, dst_;
};

// A region used as a matrix: its last two dimensions, every other extent 1,
// inside its buffer.
struct Matrix {
  const Tensor* tensor;
  int64_t rows, cols;
  int64_t base, row_stride, col_stride;
  int64_t At(int64_t r, int64_t c) const { return base + r * row_stride + c * col_stride; }
};

bool AsMatrix(Env& env, absl::string_view role, const RegionValue& r, Matrix* m) {
  const size_t rank = r.extents.size();
  std::string problem;
  if (rank < 2) {
    problem = "is not two-dimensional";
  } else {
    for (size_t d = 0; d + 2 < rank; ++d) {
      if (r.extents[d] != 1) problem = "has a leading dimension of extent other than 1";
    }
    for (size_t d = 0; d < rank; ++d) {
      if (r.mins[d] < 0 || r.mins[d] + r.extents[d] > r.tensor->shape()[d]) {
        problem = absl::StrCat("lies outside the buffer's shape ", ShapeString(r.tensor->shape()));
      }
    }
  }
  if (!problem.empty()) {
    env.Fail(absl::InvalidArgumentError(
        absl::StrCat("gemm operand ", role, " ", RegionString(r), " ", problem)));
    return false;
  }
  const std::vector<int64_t> strides = Strides(r.tensor->shape());
  m->tensor = r.tensor;
  m->rows = r.extents[rank - 2];
  m->cols = r.extents[rank - 1];
  m->base = 0;
  for (size_t d = 0; d < rank; ++d) m->base += r.mins[d] * strides[d];
  m->row_stride = strides[rank - 2];
  m->col_stride = strides[rank - 1];
  return true;
}

class GemmStmt final : public CStmt {
 public:
  GemmStmt(CRegion a, CRegion b, CRegion c, bool ta, bool tb, bool clear)
      : a_(std::move(a)), b_(std::move(b)), c_(std::move(c)), ta_(ta), tb_(tb), clear_(clear) {}

  absl::Status Exec(Env& env) const override {
    RegionValue ra, rb, rc;
    if (!EvalRegion(env, a_, &ra) || !EvalRegion(env, b_, &rb) || !EvalRegion(env, c_, &rc)) {
      return env.TakeError();
    }
    Matrix a, b, c;
    if (!AsMatrix(env, "A", ra, &a) || !AsMatrix(env, "B", rb, &b) || !AsMatrix(env, "C", rc, &c)) {
      return env.TakeError();
    }
    const int64_t m = ta_ ? a.cols : a.rows, k = ta_ ? a.rows : a.cols;
    const int64_t kb = tb_ ? b.cols : b.rows, n = tb_ ? b.rows : b.cols;
    if (k != kb || c.rows != m || c.cols != n) {
      return absl::InvalidArgumentError(
          absl::StrCat("gemm shapes do not agree: op(A) is [", m, ", ", k, "] from ",
                       RegionString(ra), ta_ ? " (transposed)" : "", ", op(B) is [", kb, ", ", n,
                       "] from ", RegionString(rb), tb_ ? " (transposed)" : "", ", C is [", c.rows,
                       ", ", c.cols, "] from ", RegionString(rc)));
    }
    const DType at = ra.tensor->dtype(), bt = rb.tensor->dtype(), ct = rc.tensor->dtype();
    // Operands converted to C's dtype once (to float32 for a narrow float
    // accumulator, exactly): op(A) as [m][k], op(B) transposed as [n][k], so
    // the k loop reads both contiguously.
    const DType wide = ct == DType::kFloat16 || ct == DType::kBFloat16 ? DType::kFloat32 : ct;
    std::vector<Scalar> av(static_cast<size_t>(m * k)), bv(static_cast<size_t>(k * n));
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t kk = 0; kk < k; ++kk) {
        av[i * k + kk] = Convert(ReadElement(*a.tensor, ta_ ? a.At(kk, i) : a.At(i, kk)), at, wide);
      }
    }
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t kk = 0; kk < k; ++kk) {
        bv[j * k + kk] = Convert(ReadElement(*b.tensor, tb_ ? b.At(j, kk) : b.At(kk, j)), bt, wide);
      }
    }
    Tensor& ctensor = *rc.tensor;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        const int64_t fc = c.At(i, j);
        const Scalar* ar = &av[i * k];
        const Scalar* br = &bv[j * k];
        Scalar acc = clear_ ? Zero(ct) : ReadElement(ctensor, fc);
        if (ct == DType::kFloat32 || ct == DType::kFloat16 || ct == DType::kBFloat16) {
          // On native floats: each product and each sum is rounded to
          // float32 by the explicit conversions (which also keep the
          // compiler from fusing them into an FMA). A narrow accumulator
          // sums in float32 within the T.gemm and is rounded once, as the
          // CUDA backend computes it (the mma accumulates in float32).
          float f = static_cast<float>(acc.f);
          for (int64_t kk = 0; kk < k; ++kk) {
            const float p = static_cast<float>(ar[kk].f * br[kk].f);
            f = static_cast<float>(static_cast<double>(f) + static_cast<double>(p));
          }
          acc =
              ct == DType::kFloat32 ? FloatScalar(f) : Convert(FloatScalar(f), DType::kFloat32, ct);
        } else {
          for (int64_t kk = 0; kk < k; ++kk) acc = AddIn(acc, MulIn(ar[kk], br[kk], ct), ct);
        }
        WriteElement(ctensor, fc, acc);
      }
    }
    return absl::OkStatus();
  }

 private:
  CRegion a_, b_, c_;
  bool ta_, tb_, clear_;
};

class FillStmt final : public CStmt {
 public:
  FillStmt(CRegion dst, CExprPtr value) : dst_(std::move(dst)), value_(std::move(value)) {}

  absl::Status Exec(Env& env) const override {
    RegionValue d;
    if (!EvalRegion(env, dst_, &d)) return env.TakeError();
    const Scalar v = value_->Eval(env);
    if (env.failed()) return env.TakeError();
    // Walk the region against itself: every element, clipped to the buffer.
    ForEachPair(env, "fill", d, d, [&](int64_t f, int64_t) {
      if (f >= 0) WriteElement(*d.tensor, f, v);
    });
    return absl::OkStatus();
  }

 private:
  CRegion dst_;
  CExprPtr value_;  // already in the buffer's dtype
};

// The outer/reduced/inner decomposition of a buffer around `dim`.
struct Lines {
  int64_t outer = 1, length = 1, inner = 1;
  int64_t At(int64_t o, int64_t r, int64_t i) const { return (o * length + r) * inner + i; }
};

Lines LinesOf(const std::vector<int64_t>& shape, int dim) {
  Lines l;
  for (int d = 0; d < static_cast<int>(shape.size()); ++d) {
    if (d < dim) l.outer *= shape[d];
    if (d == dim) l.length = shape[d];
    if (d > dim) l.inner *= shape[d];
  }
  return l;
}

class ReduceStmt final : public CStmt {
 public:
  ReduceStmt(ir::ReduceKind kind, int src, int dst, int dim, bool clear)
      : kind_(kind), src_(src), dst_(dst), dim_(dim), clear_(clear) {}

  absl::Status Exec(Env& env) const override {
    Tensor* s = env.Buffer(src_);
    Tensor* d = s != nullptr ? env.Buffer(dst_) : nullptr;
    if (d == nullptr) return env.TakeError();
    const Lines l = LinesOf(s->shape(), dim_);
    if (d->num_elements() != l.outer * l.inner) {
      return absl::InvalidArgumentError(absl::StrCat(
          "reduce_", Sv(ir::ReduceKindName(kind_)), " of ", env.buffer_names[src_],
          ShapeString(s->shape()), " along dim ", dim_, " into ", env.buffer_names[dst_],
          ShapeString(d->shape()), ": the destination needs ", l.outer * l.inner, " elements"));
    }
    const DType st = s->dtype(), dt = d->dtype();
    const bool fl = IsFloat(dt);
    const bool accumulate = kind_ == ir::ReduceKind::kSum || kind_ == ir::ReduceKind::kAbsSum;
    // Sums of 16- and 8-bit floats keep their partial in float32 and round
    // once, as the emitted code does.
    const DType at = accumulate && fl && ir::DTypeBits(dt) < 32 ? DType::kFloat32 : dt;
    for (int64_t o = 0; o < l.outer; ++o) {
      for (int64_t i = 0; i < l.inner; ++i) {
        const int64_t fd = o * l.inner + i;
        const Scalar old = ReadElement(*d, fd);
        Scalar acc = Init(at);
        if (!clear_ && !accumulate) acc = kind_ == ir::ReduceKind::kAbsMax ? AbsIn(old, dt) : old;
        for (int64_t r = 0; r < l.length; ++r) {
          const Scalar x = Convert(ReadElement(*s, l.At(o, r, i)), st, dt);
          acc = Combine(acc, x, at, fl);
        }
        if (!clear_ && accumulate) acc = AddIn(old, acc, at);
        if (at != dt) acc = FloatScalar(RoundToFloat(acc.f, dt));
        WriteElement(*d, fd, acc);
      }
    }
    return absl::OkStatus();
  }

 private:
  Scalar Init(DType t) const {
    const double inf = std::numeric_limits<double>::infinity();
    switch (kind_) {
      case ir::ReduceKind::kMax: return IsFloat(t) ? FloatScalar(-inf) : IntScalar(IntMin(t));
      case ir::ReduceKind::kMin: return IsFloat(t) ? FloatScalar(inf) : IntScalar(IntMax(t));
      default: return Zero(t);
    }
  }

  Scalar Combine(Scalar acc, Scalar x, DType t, bool fl) const {
    switch (kind_) {
      case ir::ReduceKind::kSum: return AddIn(acc, x, t);
      case ir::ReduceKind::kAbsSum: return AddIn(acc, AbsIn(x, t), t);
      case ir::ReduceKind::kMax:
        return fl ? FloatScalar(FloatMax(acc.f, x.f)) : (IntLess(acc.i, x.i, t) ? x : acc);
      case ir::ReduceKind::kMin:
        return fl ? FloatScalar(FloatMin(acc.f, x.f)) : (IntLess(x.i, acc.i, t) ? x : acc);
      case ir::ReduceKind::kAbsMax: {
        const Scalar ax = AbsIn(x, t);
        return fl ? FloatScalar(FloatMax(acc.f, ax.f)) : (IntLess(acc.i, ax.i, t) ? ax : acc);
      }
    }
    return acc;
  }

  ir::ReduceKind kind_;
  int src_, dst_, dim_;
  bool clear_;
};

class CumsumStmt final : public CStmt {
 public:
  CumsumStmt(int src, int dst, int dim, bool reverse)
      : src_(src), dst_(dst), dim_(dim), reverse_(reverse) {}

  absl::Status Exec(Env& env) const override {
    Tensor* s = env.Buffer(src_);
    Tensor* d = s != nullptr ? env.Buffer(dst_) : nullptr;
    if (d == nullptr) return env.TakeError();
    if (s->shape() != d->shape()) {
      return absl::InvalidArgumentError(
          absl::StrCat("cumsum from ", env.buffer_names[src_], ShapeString(s->shape()), " into ",
                       env.buffer_names[dst_], ShapeString(d->shape()), ": the shapes differ"));
    }
    const Lines l = LinesOf(s->shape(), dim_);
    const DType st = s->dtype(), dt = d->dtype();
    for (int64_t o = 0; o < l.outer; ++o) {
      for (int64_t i = 0; i < l.inner; ++i) {
        Scalar acc = Zero(dt);
        for (int64_t step = 0; step < l.length; ++step) {
          const int64_t r = reverse_ ? l.length - 1 - step : step;
          const int64_t f = l.At(o, r, i);
          // Reading element f before writing it keeps an in-place scan exact.
          acc = AddIn(acc, Convert(ReadElement(*s, f), st, dt), dt);
          WriteElement(*d, f, acc);
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  int src_, dst_, dim_;
  bool reverse_;
};

Scalar AtomicCombine(ir::AtomicOp op, Scalar old, Scalar v, DType t);

class AtomicAddTileStmt final : public CStmt {
 public:
  AtomicAddTileStmt(CRegion dst, CRegion src, ir::AtomicOp op)
      : dst_(std::move(dst)), src_(std::move(src)), op_(op) {}

  absl::Status Exec(Env& env) const override {
    RegionValue s, d;
    if (!EvalRegion(env, src_, &s) || !EvalRegion(env, dst_, &d)) return env.TakeError();
    const DType st = s.tensor->dtype(), dt = d.tensor->dtype();
    std::vector<std::pair<int64_t, Scalar>> adds;
    bool ok = ForEachPair(env, "atomic_add", s, d, [&](int64_t fs, int64_t fd) {
      if (fd < 0) return;
      adds.emplace_back(fd, Convert(fs >= 0 ? ReadElement(*s.tensor, fs) : Zero(st), st, dt));
    });
    if (!ok) return env.TakeError();
    for (const auto& [fd, v] : adds) {
      WriteElement(*d.tensor, fd, AtomicCombine(op_, ReadElement(*d.tensor, fd), v, dt));
    }
    return absl::OkStatus();
  }

 private:
  CRegion dst_, src_;
  ir::AtomicOp op_;
};

// The new value of an atomic update of `old` with `v` (both in dtype t).
Scalar AtomicCombine(ir::AtomicOp op, Scalar old, Scalar v, DType t) {
  switch (op) {
    case ir::AtomicOp::kAdd: return AddIn(old, v, t);
    case ir::AtomicOp::kMax:
      if (IsFloat(t)) return FloatScalar(FloatMax(old.f, v.f));
      return IntLess(old.i, v.i, t) ? v : old;
    case ir::AtomicOp::kMin:
      if (IsFloat(t)) return FloatScalar(FloatMin(old.f, v.f));
      return IntLess(v.i, old.i, t) ? v : old;
  }
  return old;
}

class AtomicAddScalarStmt final : public CStmt {
 public:
  AtomicAddScalarStmt(CRegion dst, CExprPtr value, ir::AtomicOp op, int result_slot)
      : dst_(std::move(dst)), value_(std::move(value)), op_(op), result_slot_(result_slot) {}

  absl::Status Exec(Env& env) const override {
    RegionValue d;
    if (!EvalRegion(env, dst_, &d)) return env.TakeError();
    const Scalar v = value_->Eval(env);
    if (env.failed()) return env.TakeError();
    for (int64_t e : d.extents) {
      if (e != 1) {
        return absl::InvalidArgumentError(absl::StrCat("scalar atomic_add into ", RegionString(d),
                                                       ": the destination is not one element"));
      }
    }
    const int64_t f = FlatOrNone(*d.tensor, d.mins);
    if (f < 0) {
      return absl::OutOfRangeError(absl::StrCat("atomic_add ", d.name, ShapeString(d.mins),
                                                " is out of bounds of shape ",
                                                ShapeString(d.tensor->shape())));
    }
    const DType dt = d.tensor->dtype();
    const Scalar old = ReadElement(*d.tensor, f);
    WriteElement(*d.tensor, f, AtomicCombine(op_, old, v, dt));
    if (result_slot_ >= 0) {
      Tensor* r = env.Buffer(result_slot_);
      if (r == nullptr) return env.TakeError();
      WriteElement(*r, 0, old);
    }
    return absl::OkStatus();
  }

 private:
  CRegion dst_;
  CExprPtr value_;  // already in the destination's dtype
  ir::AtomicOp op_;
  int result_slot_;  // return_prev=True: the variable's slot; -1 without
};

absl::Status CheckDim(const ir::Buffer& b, int dim, absl::string_view op) {
  if (dim < 0 || dim >= static_cast<int>(b->shape.size())) {
    return Unverified(absl::StrCat(op, " along dim ", dim, " of ", b->name, ", which has rank ",
                                   b->shape.size()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<CStmtPtr> CompileCopy(Compiler& c, const ir::CopyNode& s) {
  auto src = c.CompileRegion(s.src);
  if (!src.ok()) return src.status();
  auto dst = c.CompileRegion(s.dst);
  if (!dst.ok()) return dst.status();
  return CStmtPtr(std::make_unique<CopyStmt>(std::move(*src), std::move(*dst)));
}

absl::StatusOr<CStmtPtr> CompileGemm(Compiler& c, const ir::GemmNode& s) {
  auto a = c.CompileRegion(s.a);
  if (!a.ok()) return a.status();
  auto b = c.CompileRegion(s.b);
  if (!b.ok()) return b.status();
  auto cc = c.CompileRegion(s.c);
  if (!cc.ok()) return cc.status();
  return CStmtPtr(std::make_unique<GemmStmt>(std::move(*a), std::move(*b), std::move(*cc),
                                             s.transpose_a, s.transpose_b, s.clear_accum));
}

absl::StatusOr<CStmtPtr> CompileFill(Compiler& c, const ir::FillNode& s) {
  auto dst = c.CompileRegion(s.dst);
  if (!dst.ok()) return dst.status();
  auto value = c.CompileExprAs(s.value, s.dst.buffer->dtype);
  if (!value.ok()) return value.status();
  return CStmtPtr(std::make_unique<FillStmt>(std::move(*dst), std::move(*value)));
}

absl::StatusOr<CStmtPtr> CompileReduce(Compiler& c, const ir::ReduceNode& s) {
  auto src = c.BufferSlot(s.src);
  if (!src.ok()) return src.status();
  auto dst = c.BufferSlot(s.dst);
  if (!dst.ok()) return dst.status();
  absl::Status dim = CheckDim(s.src, s.dim, "reduce");
  if (!dim.ok()) return dim;
  return CStmtPtr(std::make_unique<ReduceStmt>(s.reduce_kind, *src, *dst, s.dim, s.clear));
}

absl::StatusOr<CStmtPtr> CompileCumsum(Compiler& c, const ir::CumsumNode& s) {
  auto src = c.BufferSlot(s.src);
  if (!src.ok()) return src.status();
  auto dst = c.BufferSlot(s.dst);
  if (!dst.ok()) return dst.status();
  absl::Status dim = CheckDim(s.src, s.dim, "cumsum");
  if (!dim.ok()) return dim;
  return CStmtPtr(std::make_unique<CumsumStmt>(*src, *dst, s.dim, s.reverse));
}

absl::StatusOr<CStmtPtr> CompileAtomicAdd(Compiler& c, const ir::AtomicAddNode& s) {
  auto dst = c.CompileRegion(s.dst);
  if (!dst.ok()) return dst.status();
  if (s.src.has_value()) {
    auto src = c.CompileRegion(*s.src);
    if (!src.ok()) return src.status();
    return CStmtPtr(std::make_unique<AtomicAddTileStmt>(std::move(*dst), std::move(*src), s.op));
  }
  if (s.value == nullptr) return Unverified("atomic_add has neither a source region nor a value");
  auto value = c.CompileExprAs(s.value, s.dst.buffer->dtype);
  if (!value.ok()) return value.status();
  int result_slot = -1;
  if (s.result) {
    absl::StatusOr<int> slot = c.BufferSlot(s.result);
    if (!slot.ok()) return slot.status();
    result_slot = *slot;
  }
  return CStmtPtr(
      std::make_unique<AtomicAddScalarStmt>(std::move(*dst), std::move(*value), s.op, result_slot));
}

}  // namespace tilec::interp::internal
