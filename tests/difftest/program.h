// The generator's own representation of a random tile program: a small tree
// of statements and expressions that renders to TileLang source text, and
// that the reducer edits (removes statements, replaces expressions by an
// operand, shrinks sizes) before rendering again.
//
// A program is one generator function `kernel(...)` returning one
// `@T.prim_func main(...)` with one `T.Kernel`. Problem sizes are function
// parameters: bound ones carry a Python default, dynamic ones (no default)
// become dynamic dims whose values the runner passes (`--dim`). Tile sizes
// and the thread count are defaulted parameters too, so index expressions in
// the body are written over names (`by * bm + i`) and stay valid when the
// reducer changes a value.
//
// Validity bookkeeping: every statement lists the tile buffers it reads and
// the ones it defines completely (a partial write also counts as a read of
// the old contents), so the reducer never produces a program that reads a
// buffer before writing it: hardware leaves those undefined while the
// interpreter zero-fills them, a difference that is no compiler bug.
#ifndef TILEC_TESTS_DIFFTEST_PROGRAM_H_
#define TILEC_TESTS_DIFFTEST_PROGRAM_H_

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace tilec::difftest {

// A dtype as TileLang spells it ("float32", "float16", "bfloat16", "int32",
// "float8_e4m3", "float8_e5m2", and the fnuz pair for AMD targets).
using DType = std::string;

bool IsFloat(const DType& t);
bool IsFloat8(const DType& t);
// The rank of a generated dtype in tolerance, loosest highest: int32,
// float32, float16, bfloat16, then the float8 types; any other type ranks
// as float32.
int Looseness(const DType& t);

// An expression of the tile program, typed. The renderer inserts casts where
// operand types differ, so any node may replace any other.
struct Expr {
  enum class Kind { kConst, kLoad, kUnary, kBinary, kCast, kSelect };
  Kind kind = Kind::kConst;
  DType dtype = "float32";
  std::string text;  // kConst: the literal; kLoad: "X[i, j]"; kUnary/kBinary: op
  std::string cond;  // kSelect: the (lazily evaluated) condition
  std::vector<std::shared_ptr<Expr>> args;
  std::set<std::string> reads;  // kLoad: the tile buffer read (empty for globals)
};
using ExprPtr = std::shared_ptr<Expr>;

ExprPtr Const(const std::string& literal, const DType& t);
ExprPtr Load(const std::string& text, const DType& t, const std::string& tile_buffer = "");
ExprPtr Unary(const std::string& fn, ExprPtr a);  // T.<fn>(a), dtype of a
ExprPtr Binary(const std::string& op, ExprPtr a, ExprPtr b, const DType& t);
ExprPtr Cast(ExprPtr a, const DType& t);
ExprPtr Select(const std::string& cond, ExprPtr a, ExprPtr b);

// Python source of `e`, its operands cast to its dtype where they differ.
std::string Render(const Expr& e);
// The tile buffers `e` reads.
std::set<std::string> ReadsOf(const Expr& e);

struct Stmt;
using StmtPtr = std::shared_ptr<Stmt>;

struct Stmt {
  enum class Kind {
    kLine,       // one line of source (`text`), e.g. T.copy / T.fill / T.reduce / T.gemm
    kParallel,   // for vars in T.Parallel(extents): [if guard:] target = value
    kPipelined,  // for var in T.Pipelined(extent, num_stages=stages): body
    kSerial,     // for var in T.serial(extent): body
  };
  Kind kind = Kind::kLine;
  std::string text;                  // kLine
  std::vector<std::string> vars;     // loop variables
  std::vector<std::string> extents;  // loop extents (Python expressions)
  std::string stages = "0";          // kPipelined: num_stages (a literal or a parameter)
  // kSerial: rendered as a runtime `while` over a T.alloc_var counter (the
  // same iterations), so that generated programs exercise kernel loops
  // whose trip count the compiler does not see.
  bool as_while = false;
  std::string guard;          // kParallel: condition on the store, empty for none
  std::string target;         // kParallel: "X[i, j]" or "T.atomic_add(Y[..], "...
  bool atomic = false;        // kParallel: target is an atomic_add destination
  DType dtype;                // kParallel: the target's element type
  ExprPtr value;              // kParallel
  std::vector<StmtPtr> body;  // loops
  // Tile buffers read and completely defined (kLine, kParallel; loops derive
  // theirs from the body).
  std::set<std::string> reads;
  std::set<std::string> defines;
};

StmtPtr Line(const std::string& text, std::set<std::string> reads, std::set<std::string> defines);

// A tensor parameter of the prim_func.
struct Tensor {
  std::string name;
  std::vector<std::string> shape;  // Python expressions over the size parameters
  DType dtype;
  bool output = false;  // written by the kernel (its initial contents are random)
};

// A tile buffer allocated in the kernel.
struct Buffer {
  std::string name;
  std::string scope;  // "shared", "fragment", "local"
  std::vector<std::string> shape;
  DType dtype;
};

// A parameter of the generator function.
struct Param {
  std::string name;
  int64_t value = 0;
  bool dynamic = false;  // no default: a dynamic dim, its value passed by the runner
  int64_t min = 1;       // the reducer keeps value >= min ...
  int64_t multiple = 1;  // ... and a multiple of this
  bool is_tile = false;  // a tile size / thread count (not a tensor dimension)
};

struct Program {
  uint64_t seed = 0;
  std::string family;                 // which generator template made it
  std::vector<std::string> features;  // the weighted choices taken, for statistics
  std::vector<Param> params;
  std::vector<Tensor> tensors;
  std::vector<std::string> grid;        // T.Kernel extents
  std::vector<std::string> block_vars;  // bx, by, bz
  std::string threads = "threads";      // expression for threads=
  std::vector<Buffer> buffers;
  std::vector<StmtPtr> body;
  // The longest chain of accumulations into one output element (reduction
  // length, gemm K): the runner widens float tolerances with it.
  int64_t accum_depth = 1;
  // Float outputs written through atomics from several blocks: their order
  // varies, so they compare with tolerance even when integral.
  bool unordered_atomics = false;
  // The least precise dtype any value of the program passes through: the
  // base of the comparison tolerance ("int32" when all math is integral).
  DType tolerance_dtype = "int32";

  // The Python module text (`import tilelang.language as T` + the function).
  std::string Render() const;
  // Values of the dynamic dims, by name.
  std::map<std::string, int64_t> DynamicDims() const;
  const Param* FindParam(const std::string& name) const;
  // Whether no statement reads a tile buffer before a statement defines it
  // (program order; loop bodies in order, a loop counts its body's reads).
  bool DefinedBeforeUse() const;
  // Drops buffers no statement mentions.
  void PruneBuffers();
  // A deep copy (statements and expressions are shared pointers).
  Program Clone() const;
};

// The generator function's name in every rendered program.
inline constexpr char kFunctionName[] = "kernel";

}  // namespace tilec::difftest

#endif  // TILEC_TESTS_DIFFTEST_PROGRAM_H_
