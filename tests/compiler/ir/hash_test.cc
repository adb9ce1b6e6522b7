#include "compiler/ir/hash.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tilec::ir {
namespace {

// Every knob of a small GEMM-with-epilogue program. The defaults build the
// golden program; each test changes one knob.
struct Knobs {
  // Interface (part of the hash).
  std::string program = "matmul";
  std::string a_param = "A";
  std::string scale_param = "scale";
  std::string dyn_dim = "M";
  std::string tile_param = "block_M";
  // Local names (not part of the hash).
  std::string bx = "bx", by = "by", k = "k", i = "i", j = "j", tmp = "tmp";
  std::string a_shared = "A_shared", c_local = "C_local", row_max = "row_max";
  // Semantics (part of the hash).
  int64_t block_m = 64;
  int64_t block_k = 32;
  DType in_dtype = DType::kFloat16;
  DType acc_dtype = DType::kFloat32;
  ForKind inner_loop = ForKind::kParallel;
  bool transpose_b = false;
  Scope a_scope = Scope::kShared;
  int64_t num_stages = 3;
  int reduce_dim = 1;
  bool reduce_clear = true;
  double scale = 0.5;
  bool swap_store_indices = false;
  bool share_loop_var = false;  // the epilogue reuses the pipelined loop's var node
};

Program Build(const Knobs& o) {
  Program p;
  p.name = o.program;
  Var m = MakeVar(o.dyn_dim);
  p.dyn_dims = {m};
  Var block_m = MakeVar(o.tile_param);
  Var stages = MakeVar("num_stages");
  p.tile_params = {{block_m, o.block_m, {64, 128}}, {stages, o.num_stages, {2, 3, 4}}};
  Buffer a = MakeBuffer(o.a_param, o.in_dtype, {m, IntImm(256)}, Scope::kGlobal);
  Buffer b = MakeBuffer("B", o.in_dtype, {IntImm(256), IntImm(128)}, Scope::kGlobal);
  Buffer c = MakeBuffer("C", o.acc_dtype, {m, IntImm(128)}, Scope::kGlobal);
  Var scale = MakeVar(o.scale_param, DType::kFloat32);
  p.params = {{a, nullptr}, {b, nullptr}, {c, nullptr}, {nullptr, scale}};

  Var bx = MakeVar(o.bx), by = MakeVar(o.by), k = MakeVar(o.k);
  Var i = o.share_loop_var ? k : MakeVar(o.i);
  Var j = MakeVar(o.j), tmp = MakeVar(o.tmp, o.acc_dtype);
  Buffer a_s =
      MakeBuffer(o.a_shared, o.in_dtype, {IntImm(o.block_m), IntImm(o.block_k)}, o.a_scope);
  Buffer b_s = MakeBuffer("B_shared", o.in_dtype, {IntImm(o.block_k), IntImm(128)}, Scope::kShared);
  Buffer c_l =
      MakeBuffer(o.c_local, o.acc_dtype, {IntImm(o.block_m), IntImm(128)}, Scope::kFragment);
  Buffer rmax = MakeBuffer(o.row_max, o.acc_dtype, {IntImm(o.block_m)}, Scope::kFragment);

  auto gemm = std::make_shared<GemmNode>();
  gemm->a = FullRegion(a_s);
  gemm->b = FullRegion(b_s);
  gemm->c = FullRegion(c_l);
  gemm->transpose_b = o.transpose_b;
  Expr row0 = Binary(BinaryOp::kMul, bx, IntImm(o.block_m));
  auto pipe = std::make_shared<ForNode>();
  pipe->var = k;
  pipe->min = IntImm(0);
  pipe->extent = IntImm(256 / o.block_k);
  pipe->kind = ForKind::kPipelined;
  pipe->num_stages = IntImm(o.num_stages);
  pipe->body = Seq({Copy(Region{a,
                                {row0, Binary(BinaryOp::kMul, k, IntImm(o.block_k))},
                                {IntImm(o.block_m), IntImm(o.block_k)}},
                         FullRegion(a_s)),
                    Copy(Region{b,
                                {Binary(BinaryOp::kMul, k, IntImm(o.block_k)), IntImm(0)},
                                {IntImm(o.block_k), IntImm(128)}},
                         FullRegion(b_s)),
                    gemm});
  std::vector<Expr> idx = {Binary(BinaryOp::kAdd, row0, i), j};
  if (o.swap_store_indices) std::swap(idx[0], idx[1]);
  Stmt epilogue =
      For(i, IntImm(0), IntImm(o.block_m), ForKind::kParallel,
          For(j, IntImm(0), IntImm(128), o.inner_loop,
              Seq({Let(tmp,
                       Binary(BinaryOp::kMul, Load(c_l, {i, j}),
                              Cast(o.acc_dtype, Binary(BinaryOp::kMul, scale, FloatImm(o.scale))))),
                   Store(c, idx, Binary(BinaryOp::kSub, tmp, Load(rmax, {i})))})));
  auto kernel = std::make_shared<KernelNode>();
  kernel->grid = {Call(CallFn::kCeilDiv, {m, IntImm(o.block_m)}), IntImm(1)};
  kernel->block_vars = {bx, by};
  kernel->threads = IntImm(128);
  kernel->body =
      Seq({Allocate(a_s), Allocate(b_s), Allocate(c_l), Allocate(rmax),
           Fill(FullRegion(c_l), FloatImm(0.0, o.acc_dtype)), pipe,
           std::make_shared<ReduceNode>(ReduceKind::kMax, c_l, rmax, o.reduce_dim, o.reduce_clear),
           epilogue});
  p.body = Seq({kernel});
  return p;
}

std::string Hash(const Knobs& o) { return ProgramHash(Build(o)); }

// Regression golden: ProgramHash(Build(Knobs{})) as first computed. It may
// only change together with kHashSchemaVersion.
constexpr char kGolden[] = "79a447557b9c6ecb12a6f436b374f1eb82e02ad6a1d1c52fbd0c7cc831dd98c2";
constexpr char kChildEnv[] = "TILEC_HASH_TEST_PRINT_GOLDEN";

// When started by GoldenIsStableAcrossProcesses with kChildEnv set, this
// process only prints the golden program's hash and exits before any test.
[[maybe_unused]] const bool kIsChild = [] {
  const char* v = std::getenv(kChildEnv);
  if (v == nullptr || std::string_view(v) != "1") return false;
  std::printf("%s\n", Hash(Knobs{}).c_str());
  std::fflush(stdout);
  std::_Exit(0);
}();

TEST(ProgramHashTest, IsLowercaseHexSha256) {
  std::string h = Hash(Knobs{});
  ASSERT_EQ(h.size(), 64u);
  for (char ch : h) EXPECT_TRUE((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f')) << h;
}

TEST(ProgramHashTest, IndependentlyBuiltCopiesHashEqual) {
  Program x = Build(Knobs{}), y = Build(Knobs{});
  ASSERT_NE(x.body, y.body);
  ASSERT_NE(x.params[0].tensor, y.params[0].tensor);
  EXPECT_EQ(ProgramHash(x), ProgramHash(y));
  EXPECT_EQ(ProgramHash(x), ProgramHash(x));
}

TEST(ProgramHashTest, RenamingLocalsKeepsHash) {
  const std::string base = Hash(Knobs{});
  struct Rename {
    const char* what;
    std::function<void(Knobs&)> apply;
  };
  const std::vector<Rename> renames = {
      {"loop var (pipelined)", [](Knobs& o) { o.k = "ko"; }},
      {"loop var (parallel)", [](Knobs& o) { o.i = "row"; }},
      {"loop vars swapped by name", [](Knobs& o) { std::swap(o.i, o.j); }},
      {"block var", [](Knobs& o) { o.bx = "block_x"; }},
      {"let var", [](Knobs& o) { o.tmp = "scaled"; }},
      {"allocated shared buffer", [](Knobs& o) { o.a_shared = "As"; }},
      {"allocated fragment buffer", [](Knobs& o) { o.c_local = "acc"; }},
      {"every local at once",
       [](Knobs& o) {
         o.bx = "x0", o.by = "x1", o.k = "x2", o.i = "x3", o.j = "x4", o.tmp = "x5";
         o.a_shared = "s0", o.c_local = "f0", o.row_max = "f1";
       }},
      // One var node bound by two loops in turn is the same program as two.
      {"loop var node reused", [](Knobs& o) { o.share_loop_var = true; }},
  };
  for (const Rename& r : renames) {
    Knobs o;
    r.apply(o);
    EXPECT_EQ(Hash(o), base) << r.what;
  }
}

TEST(ProgramHashTest, EveryFieldChangesHash) {
  const std::string base = Hash(Knobs{});
  struct Change {
    const char* what;
    std::function<void(Knobs&)> apply;
  };
  const std::vector<Change> changes = {
      {"program name", [](Knobs& o) { o.program = "matmul2"; }},
      {"tensor param name", [](Knobs& o) { o.a_param = "X"; }},
      {"scalar param name", [](Knobs& o) { o.scale_param = "alpha"; }},
      {"dyn dim name", [](Knobs& o) { o.dyn_dim = "rows"; }},
      {"tile param name", [](Knobs& o) { o.tile_param = "BLOCK_M"; }},
      {"tile size", [](Knobs& o) { o.block_m = 128; }},
      {"k tile size", [](Knobs& o) { o.block_k = 64; }},
      {"input dtype", [](Knobs& o) { o.in_dtype = DType::kBFloat16; }},
      {"accumulator dtype", [](Knobs& o) { o.acc_dtype = DType::kFloat16; }},
      {"loop kind", [](Knobs& o) { o.inner_loop = ForKind::kVectorized; }},
      {"transpose flag", [](Knobs& o) { o.transpose_b = true; }},
      {"scope", [](Knobs& o) { o.a_scope = Scope::kFragment; }},
      {"num_stages", [](Knobs& o) { o.num_stages = 2; }},
      {"reduce dim", [](Knobs& o) { o.reduce_dim = 0; }},
      {"reduce clear", [](Knobs& o) { o.reduce_clear = false; }},
      {"float constant", [](Knobs& o) { o.scale = 0.25; }},
      {"which local goes where", [](Knobs& o) { o.swap_store_indices = true; }},
  };
  std::vector<std::string> seen = {base};
  for (const Change& c : changes) {
    Knobs o;
    c.apply(o);
    std::string h = Hash(o);
    EXPECT_NE(h, base) << c.what;
    seen.push_back(h);
  }
  // Floats are hashed by bit pattern: 0.0 and -0.0 differ.
  Knobs pos, neg;
  pos.scale = 0.0;
  neg.scale = -0.0;
  EXPECT_NE(Hash(pos), Hash(neg));
  // Distinct changes give distinct hashes.
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(std::unique(seen.begin(), seen.end()), seen.end());
}

TEST(ProgramHashTest, StatementFieldsNotInKnobsChangeHash) {
  Program p = Build(Knobs{});
  const std::string base = ProgramHash(p);
  auto kernel = std::make_shared<KernelNode>(*p.body->as<SeqNode>()->stmts[0]->as<KernelNode>());
  auto with_kernel = [&](std::shared_ptr<KernelNode> k) {
    Program q = p;
    q.body = Seq({k});
    return ProgramHash(q);
  };
  EXPECT_EQ(with_kernel(std::make_shared<KernelNode>(*kernel)), base);
  auto k2 = std::make_shared<KernelNode>(*kernel);
  k2->prelude = "#include <cuda_fp16.h>";
  EXPECT_NE(with_kernel(k2), base) << "prelude";
  k2 = std::make_shared<KernelNode>(*kernel);
  k2->threads = IntImm(256);
  EXPECT_NE(with_kernel(k2), base) << "threads";
  // Tile param candidates and bound value are part of the interface.
  Program q = p;
  q.tile_params[0].candidates.push_back(256);
  EXPECT_NE(ProgramHash(q), base) << "candidates";
  q = p;
  q.tile_params[1].value.reset();
  EXPECT_NE(ProgramHash(q), base) << "bound vs unbound";
  // Parameter order is the ABI.
  q = p;
  std::swap(q.params[0], q.params[1]);
  EXPECT_NE(ProgramHash(q), base) << "param order";
  // A strided tensor's view (shape and axis order) is part of the interface.
  q = p;
  ASSERT_TRUE(q.params[0].tensor);
  const size_t rank = q.params[0].tensor->shape.size();
  q.params[0].view = TensorView{q.params[0].tensor->shape, {}};
  for (size_t d = 0; d < rank; ++d) q.params[0].view->axes.push_back(static_cast<int32_t>(d));
  const std::string viewed = ProgramHash(q);
  EXPECT_NE(viewed, base) << "view";
  if (rank >= 2) {
    std::swap(q.params[0].view->axes[0], q.params[0].view->axes[1]);
    EXPECT_NE(ProgramHash(q), viewed) << "view axes";
  }
}

TEST(ProgramHashTest, GoldenIsStableAcrossProcesses) {
  const std::string in_process = Hash(Knobs{});
  char self[4096];
  ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
  ASSERT_GT(len, 0);
  self[len] = '\0';
  std::string cmd = std::string(kChildEnv) + "=1 '" + self + "'";
  FILE* child = popen(cmd.c_str(), "r");
  ASSERT_NE(child, nullptr);
  std::string out;
  char buf[256];
  while (size_t n = fread(buf, 1, sizeof(buf), child)) out.append(buf, n);
  ASSERT_EQ(pclose(child), 0) << out;
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  EXPECT_EQ(out, in_process);
  EXPECT_EQ(in_process, kGolden) << "The canonical hash encoding changed. If intended, bump "
                                    "kHashSchemaVersion and update kGolden.";
}

TEST(ExprHashTest, StructureNamesAndIdentity) {
  Var x = MakeVar("x"), y = MakeVar("y");
  Expr e = Binary(BinaryOp::kAdd, x, IntImm(1));
  EXPECT_EQ(ExprHash(e), ExprHash(Binary(BinaryOp::kAdd, MakeVar("x"), IntImm(1))));
  EXPECT_NE(ExprHash(e), ExprHash(Binary(BinaryOp::kAdd, x, IntImm(2))));
  EXPECT_NE(ExprHash(e), ExprHash(Binary(BinaryOp::kSub, x, IntImm(1))));
  EXPECT_NE(ExprHash(e), ExprHash(Binary(BinaryOp::kAdd, y, IntImm(1))));
  EXPECT_NE(ExprHash(e), ExprHash(Binary(BinaryOp::kAdd, x, IntImm(1, DType::kInt64))));
  // x + x is not x + x' where x' is a distinct var also named "x".
  EXPECT_NE(ExprHash(Binary(BinaryOp::kAdd, x, x)),
            ExprHash(Binary(BinaryOp::kAdd, x, MakeVar("x"))));
  EXPECT_EQ(ExprHash(e).size(), 64u);
  // The expression domain is separate from the program domain.
  EXPECT_NE(ExprHash(nullptr), ProgramHash(Program{}));
}

}  // namespace
}  // namespace tilec::ir
