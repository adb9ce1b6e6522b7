// The program generator's internals (tests/difftest/generator.h): the
// random source, the logical shapes of tile values, and the generator
// itself. Expressions and small helpers are defined here; the statement
// builders (tile, gemm and local families, loads, transforms, stores, the
// grid) in generator_stmts.cc.
#ifndef TILEC_TESTS_DIFFTEST_GENERATOR_INTERNAL_H_
#define TILEC_TESTS_DIFFTEST_GENERATOR_INTERNAL_H_

#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tests/difftest/generator.h"

namespace tilec::difftest::generator_internal {

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

inline bool Is2D(Shape s) { return s == Shape::kRC || s == Shape::kCR || s == Shape::kFlat; }

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
    return Float8For(kTypes[i]);
  }
  // float8_e4m3 / float8_e5m2 as the generator's float8 types say.
  DType Float8For(const DType& t) const {
    return o_.fnuz_float8 && IsFloat8(t) ? t + "fnuz" : t;
  }
  DType ComputeDType(const DType& in) {
    if (in == "int32") return rng_.Chance(0.8) ? "int32" : "float32";
    return rng_.Weighted({6, 2, 1}) == 0 ? "float32" : (rng_.Chance(0.5) ? "float16" : "bfloat16");
  }

  void Widen(const DType& t) {
    // The loosest float dtype in the program sets the tolerance.
    if (Looseness(t) > Looseness(loosest_)) loosest_ = t;
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

  Shape Pick2D();

  // Loads a tile of the input into a new buffer.
  void LoadTile();

  // One transform step: a new value from the pool.
  void Transform();

  // Stores a value of the tile to a new output tensor, each element by one
  // thread of one block (or atomically).
  void StoreTile(bool column_loop);

  // The grid and the tile origin; a 1-D grid walks the column tiles in a loop
  // whose body `out_` then points into.
  void Grid(int dims, StmtPtr* column_loop);

  void Threads() { TileParam("threads", {32, 64, 128, 128, 256, 512}, 32, 32); }

  // ---- families ----

  void Tile();

  void Gemm();

  void Local();

  bool avoid() const { return o_.avoid_open_bugs; }

  // With avoid_open_bugs, a memory element as the argument of a math call
  // goes through arithmetic first (the call straight on it is an open bug).
  ExprPtr Detach(ExprPtr a);

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

}  // namespace tilec::difftest::generator_internal

#endif  // TILEC_TESTS_DIFFTEST_GENERATOR_INTERNAL_H_
