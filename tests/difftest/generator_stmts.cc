// The generator's statement builders (generator_internal.h).
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tests/difftest/generator_internal.h"

namespace tilec::difftest::generator_internal {

Shape Gen::Pick2D() {
  size_t k = rng_.Weighted({4, 1, o_.weights.fragment_reshape});
  return k == 0 ? Shape::kRC : (k == 1 ? Shape::kCR : Shape::kFlat);
}

// Loads a tile of the input into a new buffer.
void Gen::LoadTile() {
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
void Gen::Transform() {
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
void Gen::StoreTile(bool column_loop) {
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
void Gen::Grid(int dims, StmtPtr* column_loop) {
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

void Gen::Tile() {
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

void Gen::Gemm() {
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
  DType ab = dk == 0 ? "float16" : (dk == 1 ? "bfloat16" : Float8For("float8_e4m3"));
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

void Gen::Local() {
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

// With avoid_open_bugs, a memory element as the argument of a math call
// goes through arithmetic first (the call straight on it is an open bug).
ExprPtr Gen::Detach(ExprPtr a) {
  // (A cast to the element's own type vanishes in the frontend.)
  if (!avoid() || (a->kind != Expr::Kind::kLoad && a->kind != Expr::Kind::kSelect &&
                   a->kind != Expr::Kind::kCast)) {
    return a;
  }
  if (IsFloat8(a->dtype)) a = Cast(a, "float32");
  return Binary("+", a, Const(IsFloat(a->dtype) ? "0.5" : "1", a->dtype), a->dtype);
}

}  // namespace tilec::difftest::generator_internal
