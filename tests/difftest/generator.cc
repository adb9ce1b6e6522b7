#include "tests/difftest/generator.h"

#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tilec::difftest {
namespace {

class Rng {
 public:
  explicit Rng(uint64_t seed) : gen_(seed) {}
  uint64_t Next() { return gen_(); }
  // Uniform in [lo, hi].
  int64_t Int(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(Next() % static_cast<uint64_t>(hi - lo + 1));
  }
  bool Chance(double p) { return static_cast<double>(Next() >> 11) * 0x1.0p-53 < p; }
  template <typename T>
  const T& Pick(const std::vector<T>& v) {
    return v[Next() % v.size()];
  }
  // An index drawn with probability proportional to its weight.
  size_t Weighted(const std::vector<double>& w) {
    double total = 0;
    for (double x : w) total += x;
    double u = static_cast<double>(Next() >> 11) * 0x1.0p-53 * total;
    for (size_t i = 0; i < w.size(); ++i) {
      if (u < w[i]) return i;
      u -= w[i];
    }
    return w.size() - 1;
  }

 private:
  std::mt19937_64 gen_;
};

// The logical shape of a tile value: the block's bm x bn tile, its
// transpose, its flattening, a row vector (bm) or a column vector (bn).
enum class Shape { kRC, kCR, kFlat, kRow, kCol };

bool Is2D(Shape s) { return s == Shape::kRC || s == Shape::kCR || s == Shape::kFlat; }

// A defined tile buffer holding a logical value.
struct Val {
  std::string buf;
  Shape shape = Shape::kRC;
  DType dtype;
  std::string scope;
  bool exact = false;  // a plain copy of input data (no rounding happened)
};

// A T.Parallel nest and the logical coordinates (tile row r, column c) of
// its iteration.
struct Loop {
  Shape shape = Shape::kRC;
  std::vector<std::string> vars, extents;
  std::string r, c;
};

struct Coord {
  std::string r, c;
};

class Gen {
 public:
  Gen(uint64_t seed, const GeneratorOptions& options) : rng_(seed), o_(options) { p_.seed = seed; }

  Program Run() {
    const GeneratorWeights& w = o_.weights;
    size_t f = rng_.Weighted({w.family_tile, w.family_gemm, w.family_local});
    if (f == 0) {
      Tile();
    } else if (f == 1) {
      Gemm();
    } else {
      Local();
    }
    p_.PruneBuffers();
    return std::move(p_);
  }

 private:
  // ---- parameters, tensors, buffers ----

  void SizeParam(const std::string& name, int64_t lo, int64_t hi) {
    Param p;
    p.name = name;
    p.value = rng_.Int(lo, hi);
    p.dynamic = rng_.Chance(o_.weights.dynamic_dim);
    if (p.dynamic) Feature("dynamic_dim");
    p_.params.push_back(p);
  }
  void TileParam(const std::string& name, std::vector<int64_t> choices, int64_t min,
                 int64_t multiple) {
    Param p;
    p.name = name;
    p.value = rng_.Pick(choices);
    p.min = min;
    p.multiple = multiple;
    p.is_tile = true;
    p_.params.push_back(p);
  }
  int64_t ParamValue(const std::string& name) const { return p_.FindParam(name)->value; }

  void Feature(const std::string& f) {
    for (const std::string& x : p_.features) {
      if (x == f) return;
    }
    p_.features.push_back(f);
  }

  DType InputDType(bool allow_int = true) {
    const GeneratorWeights& w = o_.weights;
    static const std::vector<DType> kTypes = {"float32", "float16",     "bfloat16",
                                              "int32",   "float8_e4m3", "float8_e5m2"};
    size_t i = rng_.Weighted({3, 3, 2, allow_int ? w.int32 * 10 : 0, w.float8 * 6, w.float8 * 4});
    return kTypes[i];
  }
  DType ComputeDType(const DType& in) {
    if (in == "int32") return rng_.Chance(0.8) ? "int32" : "float32";
    return rng_.Weighted({6, 2, 1}) == 0 ? "float32" : (rng_.Chance(0.5) ? "float16" : "bfloat16");
  }

  void Widen(const DType& t) {
    // The loosest float dtype in the program sets the tolerance.
    static const std::vector<DType> kOrder = {"int32",    "float32",     "float16",
                                              "bfloat16", "float8_e4m3", "float8_e5m2"};
    auto rank = [&](const DType& x) {
      for (size_t i = 0; i < kOrder.size(); ++i) {
        if (kOrder[i] == x) return i;
      }
      return size_t{0};
    };
    if (rank(t) > rank(loosest_)) loosest_ = t;
    p_.tolerance_dtype = loosest_;
  }

  std::string NewBuf(const std::string& scope, Shape s, const DType& t) {
    std::string name =
        absl::StrCat(scope == "shared" ? "S" : (scope == "local" ? "L" : "F"), next_buf_++);
    p_.buffers.push_back({name, scope, Dims(s), t});
    Widen(t);
    return name;
  }
  static std::vector<std::string> Dims(Shape s) {
    switch (s) {
      case Shape::kRC: return {"bm", "bn"};
      case Shape::kCR: return {"bn", "bm"};
      case Shape::kFlat: return {"bm * bn"};
      case Shape::kRow: return {"bm"};
      case Shape::kCol: return {"bn"};
    }
    return {};
  }

  // Element (r, c) of a value.
  std::string At(const std::string& buf, Shape s, const Coord& at) const {
    // In a flat loop, a flat buffer's element k (written out as
    // (k // bn) * bn + k % bn, an open bug, unless avoid_open_bugs).
    if (s == Shape::kFlat && avoid() && at.r == "k // bn" && at.c == "k % bn")
      return absl::StrCat(buf, "[k]");
    switch (s) {
      case Shape::kRC: return absl::StrCat(buf, "[", at.r, ", ", at.c, "]");
      case Shape::kCR: return absl::StrCat(buf, "[", at.c, ", ", at.r, "]");
      case Shape::kFlat: return absl::StrCat(buf, "[(", at.r, ") * bn + ", at.c, "]");
      case Shape::kRow: return absl::StrCat(buf, "[", at.r, "]");
      case Shape::kCol: return absl::StrCat(buf, "[", at.c, "]");
    }
    return "";
  }

  // A global tensor element at tile coordinates, with the batch index.
  std::string GlobalAt(const std::string& t, const std::string& r, const std::string& c) const {
    return absl::StrCat(t, "[", batch_.empty() ? "" : batch_ + ", ", r, ", ", c, "]");
  }
  Tensor& AddTensor(const std::string& name, std::vector<std::string> shape, const DType& t,
                    bool output) {
    if (!batch_.empty()) shape.insert(shape.begin(), "B");
    p_.tensors.push_back({name, std::move(shape), t, output});
    Widen(t);
    return p_.tensors.back();
  }

  Loop MakeLoop(Shape s) {
    Loop l;
    l.shape = s;
    switch (s) {
      case Shape::kRC: l = {s, {"i", "j"}, {"bm", "bn"}, "i", "j"}; break;
      case Shape::kCR: l = {s, {"i", "j"}, {"bn", "bm"}, "j", "i"}; break;
      case Shape::kFlat: l = {s, {"k"}, {"bm * bn"}, "k // bn", "k % bn"}; break;
      case Shape::kRow: l = {s, {"i"}, {"bm"}, "i", ""}; break;
      case Shape::kCol: l = {s, {"j"}, {"bn"}, "", "j"}; break;
    }
    return l;
  }

  // The coordinates a read of a `value_shape` value uses in loop `l`: a row
  // loop reads 2-D values at a fixed column (broadcast the other way).
  Coord CoordIn(const Loop& l) {
    Coord c{l.r, l.c};
    if (c.c.empty()) c.c = rng_.Pick(std::vector<std::string>{"0", "bn - 1", "i % bn"});
    if (c.r.empty()) c.r = rng_.Pick(std::vector<std::string>{"0", "bm - 1", "j % bm"});
    return c;
  }

  // ---- expressions ----

  // Values readable in loop `l`.
  std::vector<const Val*> Readable(const Loop& l) const {
    std::vector<const Val*> out;
    for (const Val& v : pool_) {
      // (A fragment read in a loop of another shape: open bug, see avoid_open_bugs.)
      if (avoid() && v.scope == "fragment" && v.shape != l.shape) continue;
      if (Is2D(v.shape)) out.push_back(&v);
      if (v.shape == Shape::kRow && l.shape != Shape::kCol) out.push_back(&v);
      if (v.shape == Shape::kCol && l.shape != Shape::kRow) out.push_back(&v);
    }
    return out;
  }

  ExprPtr GlobalRead(const Loop& l, const Coord& at) {
    std::string r = absl::StrCat(row0_, " + ", at.r);
    std::string c = absl::StrCat(col0_, " + ", at.c);
    if (input_transposed_) std::swap(r, c);
    std::string cond = input_transposed_ ? absl::StrCat("(", r, " < N) and (", c, " < M)")
                                         : absl::StrCat("(", r, " < M) and (", c, " < N)");
    ExprPtr zero = Const(IsFloat(in_dtype_) ? "0.0" : "0", in_dtype_);
    Feature("global_read_in_parallel");
    return Select(cond, Load(GlobalAt(input_name_, r, c), in_dtype_), zero);
  }

  // A leaf: a tile value, a guarded global element, an index, or a constant;
  // `exact` says whether it is unrounded input data.
  ExprPtr Leaf(const Loop& l, bool* exact) {
    std::vector<const Val*> vals = Readable(l);
    size_t k = rng_.Weighted({vals.empty() ? 0.0 : 6.0, input_name_.empty() ? 0.0 : 2.0, 1, 1});
    *exact = false;
    Coord at = CoordIn(l);
    if (k == 0) {
      const Val& v = *rng_.Pick(vals);
      *exact = v.exact;
      return Load(At(v.buf, v.shape, at), v.dtype, v.buf);
    }
    if (k == 1) {
      *exact = true;
      return GlobalRead(l, at);
    }
    if (k == 2) {
      Feature("index_value");
      return Binary("*",
                    Cast(Load(absl::StrCat("(", at.r, ") - (", at.c, ")"), "int32"), "float32"),
                    Const("0.125", "float32"), "float32");
    }
    static const std::vector<std::string> kConsts = {"0.5", "1.5", "-2.0", "3.0", "0.25"};
    return Const(rng_.Pick(kConsts), "float32");
  }

  ExprPtr GenExpr(const Loop& l, int depth, const DType& want) {
    bool exact = false;
    if (depth <= 0 || rng_.Chance(0.3)) {
      ExprPtr e = Leaf(l, &exact);
      if (exact && IsFloat(e->dtype) && rng_.Chance(0.1)) {
        // Rounding and float->int casts only on exact input data.
        if (rng_.Chance(0.5)) {
          Feature("float_to_int_cast");
          return Cast(e, "int32");
        }
        Feature("floor_ceil_round");
        return Unary(rng_.Pick(std::vector<std::string>{"floor", "ceil", "round"}), Detach(e));
      }
      return e;
    }
    size_t k = rng_.Weighted({4, 3, 1.5, 0.7});
    if (k == 0) {  // binary arithmetic
      ExprPtr a = GenExpr(l, depth - 1, want);
      ExprPtr b = GenExpr(l, depth - 1, want);
      DType t = IsFloat(a->dtype) || IsFloat(b->dtype) || IsFloat(want)
                    ? (IsFloat(want) && !IsFloat8(want) ? want : "float32")
                    : "int32";
      if (!IsFloat(t)) {
        size_t op = rng_.Weighted({3, 2, 2, 1, 1, 1, 1});
        switch (op) {
          case 0: return Binary("+", a, b, t);
          case 1: return Binary("-", a, b, t);
          case 2: return Binary("*", a, b, t);
          case 3: return Binary("max", Detach(a), Detach(b), t);
          case 4: return Binary("min", Detach(a), Detach(b), t);
          case 5: Feature("int_floordiv"); return Binary("//", a, Const("3", "int32"), t);
          default: Feature("int_mod"); return Binary("%", a, Const("5", "int32"), t);
        }
      }
      Widen(t);
      size_t op = rng_.Weighted({3, 2, 2, 1, 1, 1});
      switch (op) {
        case 0: return Binary("+", a, b, t);
        case 1: return Binary("-", a, b, t);
        case 2: return Binary("*", a, b, t);
        case 3: return Binary("max", Detach(a), Detach(b), t);
        case 4: return Binary("min", Detach(a), Detach(b), t);
        default:
          Feature("division");
          return Binary("/", a, Binary("+", Unary("abs", Detach(b)), Const("1.0", t), t), t);
      }
    }
    if (k == 1) {  // math
      ExprPtr a = GenExpr(l, depth - 1, want);
      if (!IsFloat(a->dtype)) {
        return rng_.Chance(0.5) ? Unary("abs", Detach(a)) : Cast(a, "float32");
      }
      Feature("math");
      if (IsFloat8(a->dtype)) a = Cast(a, "float32");
      a = Detach(a);
      DType t = a->dtype;
      ExprPtr one = Const("1.0", t);
      switch (rng_.Int(0, 9)) {
        case 0: return Unary("exp", Binary("min", a, Const("2.0", t), t));
        case 1: return Unary("exp2", Binary("min", a, Const("2.0", t), t));
        case 2: return Unary("log", Binary("+", Unary("abs", a), one, t));
        case 3: return Unary("log2", Binary("+", Unary("abs", a), one, t));
        case 4: return Unary("sqrt", Unary("abs", a));
        case 5: return Unary("rsqrt", Binary("+", Unary("abs", a), one, t));
        case 6: return Unary("tanh", a);
        case 7: return Unary("sigmoid", a);
        case 8: return Unary(rng_.Chance(0.5) ? "sin" : "cos", a);
        default: return Unary("abs", a);
      }
    }
    if (k == 2) {  // cast
      ExprPtr a = GenExpr(l, depth - 1, want);
      if (!IsFloat(a->dtype)) return Cast(a, "float32");
      Feature("cast");
      DType t = rng_.Pick(std::vector<DType>{"float32", "float16", "bfloat16", "float32"});
      Widen(t);
      return Cast(a, t);
    }
    // A condition on indices (never on computed floats).
    Feature("select");
    Coord at = CoordIn(l);
    std::string cond =
        rng_.Pick(std::vector<std::string>{absl::StrCat("(", at.r, ") < (", at.c, ")"),
                                           absl::StrCat("((", at.r, ") + (", at.c, ")) % 2 == 0"),
                                           absl::StrCat("(", at.c, ") * 2 >= (", at.r, ")")});
    ExprPtr a = GenExpr(l, depth - 1, want);
    ExprPtr b = GenExpr(l, depth - 1, want);
    if (a->dtype != b->dtype) b = Cast(b, a->dtype);
    return Select(cond, a, b);
  }

  // ---- statements ----

  void Emit(StmtPtr s) { out_->push_back(std::move(s)); }

  StmtPtr Parallel(const Loop& l, const std::string& target, const DType& t, ExprPtr value,
                   std::set<std::string> defines, const std::string& guard = "") {
    auto s = std::make_shared<Stmt>();
    s->kind = Stmt::Kind::kParallel;
    s->vars = l.vars;
    s->extents = l.extents;
    s->target = target;
    s->dtype = t;
    s->value = std::move(value);
    s->defines = std::move(defines);
    s->guard = guard;
    return s;
  }

  Shape Pick2D() {
    size_t k = rng_.Weighted({4, 1, o_.weights.fragment_reshape});
    return k == 0 ? Shape::kRC : (k == 1 ? Shape::kCR : Shape::kFlat);
  }

  // Loads a tile of the input into a new buffer.
  void LoadTile() {
    Tensor a{input_name_, {}, in_dtype_, false};
    size_t how = rng_.Weighted({4, 2, 1, 2});
    bool frag = rng_.Chance(0.5);
    std::string scope = frag ? "fragment" : "shared";
    Shape s = input_transposed_ ? Shape::kCR : Shape::kRC;
    std::string r0 = row0_, c0 = col0_, M = "M", N = "N", bm = "bm", bn = "bn";
    if (input_transposed_) {
      std::swap(r0, c0);
      std::swap(bm, bn);
    }
    if (how == 3) {
      // Element-wise through a T.Parallel loop, guarded at the ragged edges.
      Shape d = Pick2D();
      std::string buf = NewBuf(scope, d, a.dtype);
      Loop l = MakeLoop(rng_.Chance(0.7) || (avoid() && scope == "fragment") ? d : Pick2D());
      Coord at{l.r, l.c};
      Emit(Parallel(l, At(buf, d, at), a.dtype, GlobalRead(l, at), {buf}));
      pool_.push_back({buf, d, a.dtype, scope, true});
      return;
    }
    std::string buf = NewBuf(scope, s, a.dtype);
    if (how == 0) {
      Feature("copy_head_address");
      Emit(Line(absl::StrCat("T.copy(", GlobalAt(a.name, r0, c0), ", ", buf, ")"), {}, {buf}));
    } else if (how == 1) {
      Feature("copy_slice");
      Emit(Line(absl::StrCat("T.copy(",
                             GlobalAt(a.name, absl::StrCat(r0, ":", r0, " + ", bm),
                                      absl::StrCat(c0, ":", c0, " + ", bn)),
                             ", ", buf, ")"),
                {}, {buf}));
    } else {
      // Half the rows at an offset into a zero-filled tile.
      Feature("copy_partial_offset");
      Emit(Line(absl::StrCat("T.fill(", buf, ", 0)"), {}, {buf}));
      Emit(Line(absl::StrCat("T.copy(",
                             GlobalAt(a.name, absl::StrCat(r0, " + ", bm, " // 2:", r0, " + ", bm),
                                      absl::StrCat(c0, ":", c0, " + ", bn)),
                             ", ", buf, "[", bm, " // 2:", bm, ", 0:", bn, "])"),
                {buf}, {buf}));
    }
    pool_.push_back({buf, s, a.dtype, scope, true});
  }

  // One transform step: a new value from the pool.
  void Transform() {
    size_t k = rng_.Weighted({5, 1.5, 2.5, 1});
    if (k == 0 || pool_.empty()) {
      // Element-wise T.Parallel into a new buffer.
      bool vec = rng_.Chance(0.2);
      Shape d = vec ? (rng_.Chance(0.5) ? Shape::kRow : Shape::kCol) : Pick2D();
      std::string scope = rng_.Chance(0.75) ? "fragment" : "shared";
      Shape ls = vec || (avoid() && scope == "fragment") ? d : (rng_.Chance(0.6) ? d : Pick2D());
      if (ls != d) Feature("parallel_reshape");
      Loop l = MakeLoop(ls);
      DType t = ComputeDType(in_dtype_);
      ExprPtr v = GenExpr(l, rng_.Int(1, 3), t);
      if (!IsFloat(t) && IsFloat(v->dtype)) t = "float32";
      std::string buf = NewBuf(scope, d, t);
      Emit(Parallel(l, At(buf, d, Coord{l.r, l.c}), t, v, {buf}));
      pool_.push_back({buf, d, t, scope, false});
      return;
    }
    const Val v = rng_.Pick(pool_);
    if (k == 1) {
      // T.copy to another scope (same shape).
      std::string scope = v.scope == "shared" ? "fragment" : "shared";
      std::string buf = NewBuf(scope, v.shape, v.dtype);
      Feature("copy_" + v.scope + "_to_" + scope);
      Emit(Line(absl::StrCat("T.copy(", v.buf, ", ", buf, ")"), {v.buf}, {buf}));
      pool_.push_back({buf, v.shape, v.dtype, scope, v.exact});
      return;
    }
    if (k == 2) {
      // A reduction of a 2-D fragment over either axis.
      if (v.shape != Shape::kRC && v.shape != Shape::kCR) return;
      const char* ops[] = {"sum", "max", "min", "abssum", "absmax"};
      std::string op = ops[rng_.Int(0, 4)];
      int dim = static_cast<int>(rng_.Int(0, 1));
      Shape out = (dim == 1) == (v.shape == Shape::kRC) ? Shape::kRow : Shape::kCol;
      DType t = !IsFloat(v.dtype) ? "int32"
                                  : (rng_.Chance(0.8) || IsFloat8(v.dtype) ? "float32" : v.dtype);
      std::string src = v.buf;
      if (v.scope != "fragment") {
        src = NewBuf("fragment", v.shape, v.dtype);
        Emit(Line(absl::StrCat("T.copy(", v.buf, ", ", src, ")"), {v.buf}, {src}));
      }
      std::string dst = NewBuf("fragment", out, t);
      bool clear = rng_.Chance(0.6);
      Feature(absl::StrCat("reduce_", op, clear ? "_clear" : "_accumulate"));
      std::set<std::string> reads = {src};
      if (!clear) {
        Emit(Line(absl::StrCat("T.fill(", dst, ", ", IsFloat(t) ? "0.5" : "1", ")"), {}, {dst}));
        reads.insert(dst);
      }
      Emit(Line(absl::StrCat("T.reduce_", op, "(", src, ", ", dst, ", dim=", dim,
                             clear ? "" : ", clear=False", ")"),
                reads, {dst}));
      p_.accum_depth = std::max<int64_t>(p_.accum_depth, ParamValue(dim == 1 ? "bn" : "bm"));
      pool_.push_back({dst, out, t, "fragment", false});
      return;
    }
    // T.fill of a new buffer.
    Shape d = Pick2D();
    DType t = ComputeDType(in_dtype_);
    std::string buf = NewBuf(rng_.Chance(0.5) ? "fragment" : "shared", d, t);
    Emit(Line(absl::StrCat("T.fill(", buf, ", ", IsFloat(t) ? "1.25" : "2", ")"), {}, {buf}));
    pool_.push_back({buf, d, t, p_.buffers.back().scope, true});
  }

  // Stores a value of the tile to a new output tensor, each element by one
  // thread of one block (or atomically).
  void StoreTile(bool column_loop) {
    size_t k = rng_.Weighted({3, 3, 1, 1, o_.weights.atomics * 2});
    std::vector<const Val*> twod;
    for (const Val& v : pool_) {
      if (Is2D(v.shape)) twod.push_back(&v);
    }
    std::string name = absl::StrCat("Y", outputs_++);
    if (k == 0 && !twod.empty()) {
      // T.copy of a tile (or transposed tile) buffer to the output.
      std::vector<const Val*> ok;
      for (const Val* v : twod) {
        if (v->shape != Shape::kFlat) ok.push_back(v);
      }
      if (!ok.empty()) {
        const Val& v = *rng_.Pick(ok);
        bool t = v.shape == Shape::kCR;
        DType dt = rng_.Chance(0.7) ? v.dtype : ComputeDType(v.dtype);
        if (!IsFloat(v.dtype) && IsFloat(dt)) dt = "float32";
        if (IsFloat(v.dtype) && !IsFloat(dt)) dt = v.dtype;
        AddTensor(name, t ? std::vector<std::string>{"N", "M"} : std::vector<std::string>{"M", "N"},
                  dt, true);
        std::string r0 = t ? col0_ : row0_, c0 = t ? row0_ : col0_;
        if (rng_.Chance(0.5)) {
          Emit(
              Line(absl::StrCat("T.copy(", v.buf, ", ", GlobalAt(name, r0, c0), ")"), {v.buf}, {}));
        } else {
          std::string bm = t ? "bn" : "bm", bn = t ? "bm" : "bn";
          Emit(Line(absl::StrCat("T.copy(", v.buf, ", ",
                                 GlobalAt(name, absl::StrCat(r0, ":", r0, " + ", bm),
                                          absl::StrCat(c0, ":", c0, " + ", bn)),
                                 ")"),
                    {v.buf}, {}));
        }
        Feature(std::string("store_copy_from_") + v.scope);
        return;
      }
    }
    if (k == 4 && !column_loop) {
      // A column vector from every row block, added atomically.
      std::vector<const Val*> cols;
      for (const Val& v : pool_) {
        if (v.shape == Shape::kCol && IsFloat(v.dtype)) cols.push_back(&v);
      }
      if (!cols.empty() || !twod.empty()) {
        Feature("atomic_add");
        AddTensor(name, {"N"}, "float32", true);
        Loop l = MakeLoop(Shape::kCol);
        ExprPtr value = cols.empty() ? GenExpr(l, 2, "float32")
                                     : Load(At(cols[0]->buf, Shape::kCol, {"0", "j"}),
                                            cols[0]->dtype, cols[0]->buf);
        std::string target = batch_.empty() ? absl::StrCat(name, "[", col0_, " + j]")
                                            : absl::StrCat(name, "[bz, ", col0_, " + j]");
        auto s = Parallel(l, target, "float32", value, {}, absl::StrCat(col0_, " + j < N"));
        s->atomic = true;
        Emit(s);
        p_.unordered_atomics = true;
        p_.accum_depth = std::max<int64_t>(p_.accum_depth, 8);
        return;
      }
    }
    // A guarded T.Parallel store of an expression over the pool; the output is
    // plain, transposed or flattened.
    Shape ls = Pick2D();
    Loop l = MakeLoop(ls);
    DType t = ComputeDType(in_dtype_);
    if (rng_.Chance(0.2)) t = InputDType(!IsFloat(t));
    ExprPtr v = GenExpr(l, rng_.Int(0, 2), t);
    // An integer output only from integer math (no rounding in between).
    if (!IsFloat(t) && IsFloat(v->dtype)) t = "float32";
    Widen(t);
    std::string r = absl::StrCat(row0_, " + ", l.r), c = absl::StrCat(col0_, " + ", l.c);
    std::string guard = absl::StrCat("(", r, " < M) and (", c, " < N)");
    size_t form = rng_.Weighted({3, 1, 1});
    if (form == 0) {
      AddTensor(name, {"M", "N"}, t, true);
      Emit(Parallel(l, GlobalAt(name, r, c), t, v, {}, guard));
    } else if (form == 1) {
      Feature("store_transposed");
      AddTensor(name, {"N", "M"}, t, true);
      Emit(Parallel(l, GlobalAt(name, c, r), t, v, {}, guard));
    } else {
      Feature("store_flattened");
      AddTensor(name, {"M * N"}, t, true);
      std::string idx = absl::StrCat("(", r, ") * N + ", c);
      Emit(Parallel(l,
                    batch_.empty() ? absl::StrCat(name, "[", idx, "]")
                                   : absl::StrCat(name, "[bz, ", idx, "]"),
                    t, v, {}, guard));
    }
  }

  // The grid and the tile origin; a 1-D grid walks the column tiles in a loop
  // whose body `out_` then points into.
  void Grid(int dims, StmtPtr* column_loop) {
    if (dims == 3) {
      SizeParam("B", 1, 3);
      batch_ = "bz";
    }
    if (dims == 1) {
      p_.grid = {"T.ceildiv(M, bm)"};
      p_.block_vars = {"bx"};
      row0_ = "bx * bm";
      col0_ = "ko * bn";
      auto loop = std::make_shared<Stmt>();
      bool pipelined = rng_.Chance(0.7);
      loop->kind = pipelined ? Stmt::Kind::kPipelined : Stmt::Kind::kSerial;
      loop->vars = {"ko"};
      loop->extents = {"T.ceildiv(N, bn)"};
      if (pipelined) {
        TileParam("stages", {0, 1, 2, 3, 4}, 0, 1);
        loop->stages = "stages";
        Feature(absl::StrCat("pipelined_", ParamValue("stages"), "_stages"));
      } else if (rng_.Chance(0.4)) {
        loop->as_while = true;
        Feature("while_loop");
      } else {
        Feature("serial_loop");
      }
      *column_loop = loop;
    } else {
      p_.grid = {"T.ceildiv(N, bn)", "T.ceildiv(M, bm)"};
      p_.block_vars = {"bx", "by"};
      if (dims == 3) {
        p_.grid.push_back("B");
        p_.block_vars.push_back("bz");
      }
      row0_ = "by * bm";
      col0_ = "bx * bn";
    }
    Feature(absl::StrCat("grid_", dims, "d"));
  }

  void Threads() { TileParam("threads", {32, 64, 128, 128, 256, 512}, 32, 32); }

  // ---- families ----

  void Tile() {
    p_.family = "tile";
    SizeParam("M", 1, 160);
    SizeParam("N", 1, 160);
    TileParam("bm", {2, 4, 8, 16, 32, 64}, 1, 1);
    TileParam("bn", {2, 4, 8, 16, 32, 64}, 1, 1);
    Threads();
    int dims = static_cast<int>(rng_.Weighted({1, 3, 1})) + 1;
    StmtPtr loop;
    Grid(dims, &loop);
    input_transposed_ = rng_.Chance(0.2);
    if (input_transposed_) Feature("transposed_input");
    DType in = InputDType();
    AddTensor(
        "A",
        input_transposed_ ? std::vector<std::string>{"N", "M"} : std::vector<std::string>{"M", "N"},
        in, false);
    input_name_ = "A";
    in_dtype_ = in;
    // The row accumulator a 1-D grid carries across its column tiles.
    std::string acc;
    if (loop && rng_.Chance(0.6)) {
      acc = NewBuf("fragment", Shape::kRow, "float32");
      Emit(Line(absl::StrCat("T.fill(", acc, ", 0.0)"), {}, {acc}));
    }
    std::vector<StmtPtr>* outer = out_;
    if (loop) {
      Emit(loop);
      out_ = &loop->body;
    }
    int loads = static_cast<int>(rng_.Int(1, 2));
    for (int i = 0; i < loads; ++i) LoadTile();
    int steps = static_cast<int>(rng_.Int(0, 4));
    for (int i = 0; i < steps; ++i) Transform();
    if (!acc.empty()) {
      // Fold a row reduction of a 2-D fragment into the accumulator.
      std::vector<const Val*> src;
      for (const Val& v : pool_) {
        if ((v.shape == Shape::kRC || v.shape == Shape::kCR) && v.scope == "fragment")
          src.push_back(&v);
      }
      if (!src.empty()) {
        const Val& v = *rng_.Pick(src);
        int dim = v.shape == Shape::kRC ? 1 : 0;
        Feature("reduce_accumulate_across_tiles");
        Emit(Line(absl::StrCat("T.reduce_sum(", v.buf, ", ", acc, ", dim=", dim, ", clear=False)"),
                  {v.buf, acc}, {acc}));
        p_.accum_depth = std::max<int64_t>(p_.accum_depth, ParamValue("N"));
      } else {
        acc.clear();
      }
    }
    int stores = static_cast<int>(rng_.Int(1, 2));
    for (int i = 0; i < stores; ++i) StoreTile(loop != nullptr);
    out_ = outer;
    if (!acc.empty()) {
      std::string name = absl::StrCat("Y", outputs_++);
      DType t = "float32";
      AddTensor(name, {"M"}, t, true);
      Loop l = MakeLoop(Shape::kRow);
      if (rng_.Chance(0.5)) {
        Emit(Line(absl::StrCat("T.copy(", acc, ", ", name, "[", row0_, "])"), {acc}, {}));
      } else {
        Emit(Parallel(l, absl::StrCat(name, "[", row0_, " + i]"), t,
                      Load(absl::StrCat(acc, "[i]"), t, acc), {}, absl::StrCat(row0_, " + i < M")));
      }
    }
  }

  void Gemm() {
    p_.family = "gemm";
    SizeParam("M", 1, 200);
    SizeParam("N", 1, 200);
    SizeParam("K", 1, 200);
    TileParam("bm", {16, 32, 64, 128}, 16, 16);
    TileParam("bn", {16, 32, 64, 128}, 16, 16);
    TileParam("threads", {32, 64, 128, 128, 256}, 32, 32);
    int dims = rng_.Chance(0.2) ? 3 : 2;
    StmtPtr unused;
    Grid(dims, &unused);
    // Split-K: blocks along z take every splits-th K tile and add their
    // partial tile into the output atomically.
    bool splitk = dims == 2 && rng_.Chance(o_.weights.atomics * 0.4);
    std::string kt = "ko";
    if (splitk) {
      TileParam("splits", {2, 3}, 1, 1);
      p_.grid.push_back("splits");
      p_.block_vars.push_back("bz");
      kt = "(ko * splits + bz)";
      Feature("gemm_splitk_tile_atomic_add");
    }
    size_t dk = rng_.Weighted({4, 3, o_.weights.float8 * 10});
    DType ab = dk == 0 ? "float16" : (dk == 1 ? "bfloat16" : "float8_e4m3");
    TileParam("bk", IsFloat8(ab) ? std::vector<int64_t>{32, 64} : std::vector<int64_t>{16, 32, 64},
              IsFloat8(ab) ? 32 : 16, IsFloat8(ab) ? 32 : 16);
    bool ta = rng_.Chance(0.3), tb = rng_.Chance(0.4);
    Feature(absl::StrCat("gemm_", ab, ta ? "_tA" : "", tb ? "_tB" : ""));
    AddTensor("A", ta ? std::vector<std::string>{"K", "M"} : std::vector<std::string>{"M", "K"}, ab,
              false);
    AddTensor("Bm", tb ? std::vector<std::string>{"N", "K"} : std::vector<std::string>{"K", "N"},
              ab, false);
    std::string as = NewBuf("shared", Shape::kRC, ab);
    p_.buffers.back().shape =
        ta ? std::vector<std::string>{"bk", "bm"} : std::vector<std::string>{"bm", "bk"};
    std::string bs = NewBuf("shared", Shape::kRC, ab);
    p_.buffers.back().shape =
        tb ? std::vector<std::string>{"bn", "bk"} : std::vector<std::string>{"bk", "bn"};
    std::string c = NewBuf("fragment", Shape::kRC, "float32");
    Emit(Line(absl::StrCat("T.clear(", c, ")"), {}, {c}));
    auto loop = std::make_shared<Stmt>();
    loop->kind = Stmt::Kind::kPipelined;
    loop->vars = {"ko"};
    loop->extents = {splitk ? "T.ceildiv(T.ceildiv(K, bk), splits)" : "T.ceildiv(K, bk)"};
    TileParam("stages", {0, 1, 2, 3, 4}, 0, 1);
    loop->stages = "stages";
    Feature(absl::StrCat("pipelined_", ParamValue("stages"), "_stages"));
    Emit(loop);
    std::vector<StmtPtr>* outer = out_;
    out_ = &loop->body;
    std::string k0 = kt + " * bk";
    std::string a_src = ta ? GlobalAt("A", k0, row0_) : GlobalAt("A", row0_, k0);
    std::string b_src = tb ? GlobalAt("Bm", col0_, k0) : GlobalAt("Bm", k0, col0_);
    Emit(Line(absl::StrCat("T.copy(", a_src, ", ", as, ")"), {}, {as}));
    Emit(Line(absl::StrCat("T.copy(", b_src, ", ", bs, ")"), {}, {bs}));
    std::string a_op = as;
    if (!ta && !IsFloat8(ab) && rng_.Chance(0.25)) {
      Feature("gemm_rs");
      a_op = NewBuf("fragment", Shape::kRC, ab);
      p_.buffers.back().shape = {"bm", "bk"};
      Emit(Line(absl::StrCat("T.copy(", as, ", ", a_op, ")"), {as}, {a_op}));
    }
    std::string policy = rng_.Pick(std::vector<std::string>{"Square", "FullRow", "FullCol"});
    Feature("gemm_policy_" + policy);
    Emit(Line(absl::StrCat("T.gemm(", a_op, ", ", bs, ", ", c, ", transpose_A=",
                           ta ? "True" : "False", ", transpose_B=", tb ? "True" : "False",
                           ", policy=T.GemmWarpPolicy.", policy, ")"),
              {a_op, bs, c}, {c}));
    out_ = outer;
    p_.accum_depth = std::max<int64_t>(p_.accum_depth, ParamValue("K"));
    Widen(ab);
    if (splitk) {
      AddTensor("Y0", {"M", "N"}, "float32", true);
      Emit(Line(absl::StrCat("T.atomic_add(Y0[", row0_, ", ", col0_, "], ", c, ")"), {c}, {}));
      p_.unordered_atomics = true;
      return;
    }
    // The epilogue works on the accumulator as a tile value.
    pool_.push_back({c, Shape::kRC, "float32", "fragment", false});
    input_name_.clear();
    in_dtype_ = "float32";
    int steps = static_cast<int>(rng_.Int(0, 2));
    for (int i = 0; i < steps; ++i) Transform();
    StoreTile(false);
  }

  void Local() {
    p_.family = "local";
    SizeParam("M", 1, 64);
    SizeParam("N", 1, 96);
    TileParam("threads", {32, 64, 128}, 32, 32);
    p_.grid = {"M"};
    p_.block_vars = {"bx"};
    DType in = InputDType(false);
    AddTensor("A", {"M", "N"}, in, false);
    DType t = rng_.Chance(0.7) ? "float32" : in;
    if (IsFloat8(t)) t = "float32";
    AddTensor("Y0", {"M"}, t, true);
    std::string acc = NewBuf("local", Shape::kRow, t);
    p_.buffers.back().shape = {"1"};
    bool is_max = rng_.Chance(0.5);
    Feature(is_max ? "local_max_of_math_on_global" : "local_sum_of_math_on_global");
    Emit(
        Line(absl::StrCat(acc, "[0] = ", is_max ? absl::StrCat("-T.infinity(\"", t, "\")") : "0.0"),
             {}, {acc}));
    auto loop = std::make_shared<Stmt>();
    loop->kind = Stmt::Kind::kSerial;
    loop->vars = {"k"};
    loop->extents = {"N"};
    if (rng_.Chance(0.3)) {
      loop->as_while = true;
      Feature("while_loop_per_thread");
    }
    // A per-thread loop: math straight on the global element.
    ExprPtr x = Load("A[bx, k]", in);
    if (IsFloat8(in)) x = Cast(x, "float32");
    x = Detach(x);
    const char* fns[] = {"exp", "tanh", "sigmoid", "abs", "sin"};
    ExprPtr f = Unary(fns[rng_.Int(0, 4)], Binary("min", x, Const("2.0", x->dtype), x->dtype));
    ExprPtr accv = Load(absl::StrCat(acc, "[0]"), t, acc);
    ExprPtr v = is_max ? Binary("max", accv, f, t) : Binary("+", accv, f, t);
    auto s = std::make_shared<Stmt>();
    s->kind = Stmt::Kind::kParallel;  // with no loop variables: a plain assignment
    s->target = absl::StrCat(acc, "[0]");
    s->dtype = t;
    s->value = v;
    s->defines = {acc};
    loop->body.push_back(s);
    Emit(loop);
    Emit(Line(absl::StrCat("Y0[bx] = ", acc, "[0]"), {acc}, {}));
    p_.accum_depth = std::max<int64_t>(p_.accum_depth, ParamValue("N"));
    Widen(t);
    Widen(in);
  }

  bool avoid() const { return o_.avoid_open_bugs; }

  // With avoid_open_bugs, a memory element as the argument of a math call
  // goes through arithmetic first (the call straight on it is an open bug).
  ExprPtr Detach(ExprPtr a) {
    // (A cast to the element's own type vanishes in the frontend.)
    if (!avoid() || (a->kind != Expr::Kind::kLoad && a->kind != Expr::Kind::kSelect &&
                     a->kind != Expr::Kind::kCast)) {
      return a;
    }
    if (IsFloat8(a->dtype)) a = Cast(a, "float32");
    return Binary("+", a, Const(IsFloat(a->dtype) ? "0.5" : "1", a->dtype), a->dtype);
  }

  Rng rng_;
  GeneratorOptions o_;
  Program p_;
  std::vector<StmtPtr>* out_ = &p_.body;
  int next_buf_ = 0;
  int outputs_ = 0;
  std::vector<Val> pool_;
  std::string row0_, col0_, batch_;
  // The 2-D input tile source (name empty in the gemm epilogue) and the
  // dtype computations start from.
  std::string input_name_;
  DType in_dtype_ = "float32";
  bool input_transposed_ = false;
  DType loosest_ = "int32";
};

}  // namespace

Program Generate(uint64_t seed, const GeneratorOptions& options) {
  return Gen(seed, options).Run();
}

}  // namespace tilec::difftest
