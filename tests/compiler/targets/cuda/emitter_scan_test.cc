// T.cummax / T.cummin (frontend/tl_helpers.cc): running extremes along a
// dimension of shared and fragment buffers, forward and reversed, rows and
// columns, a 1-D buffer, in place and into another buffer. The interpreter
// is checked against a reference computed here; the code emitted for sm_80
// runs on the SIMT emulator against the interpreter.
#include <algorithm>
#include <string>
#include <vector>

#include "compiler/interp/interp.h"
#include "compiler/targets/cuda/emitter.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/compiler/targets/cuda/emit_testing.h"

namespace tilec::cuda {
namespace {

using ::testing::HasSubstr;
using ::tilec::testing::CompileSource;
using ::tilec::testing::TestSeed;

constexpr char kScans[] = R"(
import tilelang.language as T

def scan(R, C, dim, reverse, frag, op):
    @T.prim_func
    def main(A: T.Tensor((R, C), "float32"), B: T.Tensor((R, C), "float32")):
        with T.Kernel(1, threads=128):
            s = T.alloc_shared((R, C), "float32")
            f = T.alloc_fragment((R, C), "float32")
            out = T.alloc_shared((R, C), "float32")
            T.copy(A, s)
            if frag:
                T.copy(s, f)
                if op == "max":
                    T.cummax(f, dim=dim, reverse=reverse)
                else:
                    T.cummin(f, dim=dim, reverse=reverse)
                T.copy(f, B)
            else:
                if op == "max":
                    T.cummax(s, out, dim=dim, reverse=reverse)
                else:
                    T.cummin(s, out, dim=dim, reverse=reverse)
                T.copy(out, B)
    return main

def scan1d(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "int32"), B: T.Tensor((N,), "int32")):
        with T.Kernel(1, threads=64):
            s = T.alloc_shared((N,), "int32")
            T.copy(A, s)
            T.cummax(s)
            T.copy(s, B)
    return main

# Bitwise reductions along dim 0 of a shared uint8 tile, combined with the
# old output (clear=False).
def bits_shared(R, C, op):
    @T.prim_func
    def main(A: T.Tensor((R, C), "uint8"), O: T.Tensor((C,), "uint8")):
        with T.Kernel(1, threads=64):
            s = T.alloc_shared((R, C), "uint8")
            o = T.alloc_shared((C,), "uint8")
            T.copy(A, s)
            T.copy(O, o)
            if op == "and":
                T.reduce_bitand(s, o, dim=0, clear=False)
            elif op == "or":
                T.reduce_bitor(s, o, dim=0, clear=False)
            else:
                T.reduce_bitxor(s, o, dim=0, clear=False)
            T.copy(o, O)
    return main

def on_global(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=64):
            T.cummax(A)
    return main
)";

TEST(ScanExtrema, RunningExtremesAlongEitherDimension) {
  const int64_t R = 6, C = 50;
  for (int dim : {0, 1}) {
    for (bool reverse : {false, true}) {
      for (bool frag : {false, true}) {
        const bool max = reverse != frag;  // both ops over the combinations
        SCOPED_TRACE(::testing::Message() << "dim " << dim << " reverse " << reverse << " frag "
                                          << frag << (max ? " max" : " min"));
        absl::StatusOr<ir::Program> p = CompileSource("scan.py", kScans, "scan",
                                                      {{"R", "6"},
                                                       {"C", "50"},
                                                       {"dim", std::to_string(dim)},
                                                       {"reverse", reverse ? "True" : "False"},
                                                       {"frag", frag ? "True" : "False"},
                                                       {"op", max ? "\"max\"" : "\"min\""}});
        ASSERT_TRUE(p.ok()) << p.status();
        const uint64_t seed = TestSeed(81);
        std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
        std::vector<interp::Tensor> args = {interp::RandomTensor(ir::DType::kFloat32, {R, C}, seed),
                                            interp::Tensor(ir::DType::kFloat32, {R, C})};
        ASSERT_TRUE(interp::RunProgram(*p, args).ok());
        const int64_t lines = dim == 0 ? C : R, n = dim == 0 ? R : C;
        for (int64_t l = 0; l < lines; ++l) {
          double run = 0;
          for (int64_t s = 0; s < n; ++s) {
            const int64_t t = reverse ? n - 1 - s : s;
            const int64_t flat = dim == 0 ? t * C + l : l * C + t;
            const double a = args[0].GetDouble(flat);
            run = s == 0 ? a : (max ? std::max(run, a) : std::min(run, a));
            EXPECT_EQ(args[1].GetDouble(flat), run) << "line " << l << " step " << s;
          }
        }
        absl::StatusOr<CudaSource> src = ::tilec::testing::EmitFor(*p, CudaArch::kSm80);
        ASSERT_TRUE(src.ok()) << src.status();
        ::tilec::testing::ExpectEmulatorMatchesInterpreter(*p, *src, {.seed = seed, .exact = true});
      }
    }
  }
}

TEST(ScanExtrema, OneDimensionalInPlace) {
  absl::StatusOr<ir::Program> p = CompileSource("scan.py", kScans, "scan1d", {{"N", "77"}});
  ASSERT_TRUE(p.ok()) << p.status();
  const uint64_t seed = TestSeed(82);
  std::vector<interp::Tensor> args = {interp::RandomTensor(ir::DType::kInt32, {77}, seed),
                                      interp::Tensor(ir::DType::kInt32, {77})};
  ASSERT_TRUE(interp::RunProgram(*p, args).ok());
  int64_t run = args[0].GetInt(0);
  for (int64_t i = 0; i < 77; ++i) {
    run = std::max(run, args[0].GetInt(i));
    EXPECT_EQ(args[1].GetInt(i), run) << i;
  }
  absl::StatusOr<CudaSource> src = ::tilec::testing::EmitFor(*p, CudaArch::kSm80);
  ASSERT_TRUE(src.ok()) << src.status();
  ::tilec::testing::ExpectEmulatorMatchesInterpreter(*p, *src, {.seed = seed, .exact = true});
}

TEST(BitwiseReductions, AlongRowsOfASharedTileKeepingTheOldOutput) {
  for (const char* op : {"and", "or", "xor"}) {
    SCOPED_TRACE(op);
    absl::StatusOr<ir::Program> p =
        CompileSource("scan.py", kScans, "bits_shared",
                      {{"R", "7"}, {"C", "45"}, {"op", std::string("\"") + op + "\""}});
    ASSERT_TRUE(p.ok()) << p.status();
    const uint64_t seed = TestSeed(83);
    std::vector<interp::Tensor> args = {interp::RandomTensor(ir::DType::kUInt8, {7, 45}, seed),
                                        interp::RandomTensor(ir::DType::kUInt8, {45}, seed + 1)};
    const interp::Tensor old = args[1];
    ASSERT_TRUE(interp::RunProgram(*p, args).ok());
    for (int64_t c = 0; c < 45; ++c) {
      int64_t acc = old.GetInt(c);
      for (int64_t r = 0; r < 7; ++r) {
        const int64_t a = args[0].GetInt(r * 45 + c);
        acc = op[0] == 'a' ? acc & a : op[0] == 'o' ? acc | a : acc ^ a;
      }
      EXPECT_EQ(args[1].GetInt(c), acc) << c;
    }
    absl::StatusOr<CudaSource> src = ::tilec::testing::EmitFor(*p, CudaArch::kSm80);
    ASSERT_TRUE(src.ok()) << src.status();
    ::tilec::testing::ExpectEmulatorMatchesInterpreter(*p, *src, {.seed = seed, .exact = true});
  }
}

TEST(ScanExtrema, AGlobalTensorIsRefused) {
  absl::StatusOr<ir::Program> p = CompileSource("scan.py", kScans, "on_global", {{"N", "64"}});
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(p.status().message(),
              HasSubstr("T.cummax works on shared and fragment buffers; `A` is a global buffer"));
}

}  // namespace
}  // namespace tilec::cuda
