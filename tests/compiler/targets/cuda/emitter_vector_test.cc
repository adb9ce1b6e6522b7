// Vector loads and stores in T.Parallel nests (emitter_vector.cc): the
// emitted code, the SASS NVRTC makes of it, and runs on the emulator against
// the reference interpreter, ragged and misaligned rows included. Set
// TILEC_TEST_SEED to reproduce a run; TILEC_DUMP_CUDA=1 prints the source.
#include <cstdio>
#include <map>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "compiler/targets/cuda/emitter.h"
#include "compiler/targets/cuda/nvrtc.h"
#include "compiler/targets/cuda/sass.h"
#include "compiler/targets/cuda/target.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/compiler/targets/cuda/emit_testing.h"

namespace tilec::cuda {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::tilec::testing::CompileSource;
using ::tilec::testing::EmitFor;

absl::StatusOr<ir::Program> Elementwise(const std::string& m, const std::string& n) {
  return ::tilec::testing::CompileExample("elementwise_add.py", "elementwise_add",
                                          {{"M", m},
                                           {"N", n},
                                           {"block_M", "32"},
                                           {"block_N", "64"},
                                           {"in_dtype", "bfloat16"},
                                           {"out_dtype", "float16"},
                                           {"threads", "128"}});
}

// Runs the program on the emulator and the interpreter from the same random
// inputs and compares every tensor.
void ExpectMatchesInterpreter(const ir::Program& program,
                              const std::map<std::string, int64_t>& dims) {
  absl::StatusOr<CudaSource> src = EmitFor(program, CudaArch::kSm80);
  ASSERT_TRUE(src.ok()) << src.status();
  ::tilec::testing::ExpectEmulatorMatchesInterpreter(
      program, *src, {.seed = ::tilec::testing::TestSeed(20260317), .dims = dims});
}

// Rows of 72 elements: 8-element (16-byte) runs, tested against both ends
// of the guard; the runs past column 72 take the element path.
TEST(ElementwiseExample, MovesWholeRunsWithVectors) {
  absl::StatusOr<ir::Program> program = Elementwise("100", "72");
  ASSERT_TRUE(program.ok()) << program.status();
  absl::StatusOr<CudaSource> src = EmitFor(*program, CudaArch::kSm80);
  ASSERT_TRUE(src.ok()) << src.status();
  const std::string& code = src->code;
  EXPECT_THAT(code, HasSubstr("if (by * 32 + i0 < 100 && bx * 64 + (j0 + 7) < 72) {"));
  EXPECT_THAT(code, HasSubstr("const tl::Vec<tl::bfloat16_t, 8> A_vec = "
                              "tl::load_vec<tl::bfloat16_t, 8>(&A[(by * 32 + i0) * 72 + "
                              "(bx * 64 + j0)]);"));
  EXPECT_THAT(code, HasSubstr("tl::load_vec<tl::bfloat16_t, 8>(&B["));
  EXPECT_THAT(code, HasSubstr("C_vec.v[e] = tl::half_t(float(tl::hadd(A_vec.v[e], "
                              "B_vec.v[e])));"));
  EXPECT_THAT(code, HasSubstr("tl::store_vec<tl::half_t, 8>(&C[(by * 32 + i0) * 72 + "
                              "(bx * 64 + j0)], C_vec);"));
  // Alignment is proven (72 and 64 are multiples of 8): no run-time test.
  EXPECT_THAT(code, Not(HasSubstr("is_aligned")));
  // The element path keeps the program's guard.
  EXPECT_THAT(code, HasSubstr("if (y < 100 && x < 72) {"));
}

// Rows of 72 give 16-byte runs, rows of 100 8-byte runs: LDG/STG of that
// width in the SASS of both targets.
TEST(ElementwiseExample, SassHasWideGlobalLoadsAndStores) {
  for (const auto& [n, width] : {std::pair{"72", "128"}, std::pair{"100", "64"}}) {
    absl::StatusOr<ir::Program> program = Elementwise("100", n);
    ASSERT_TRUE(program.ok()) << program.status();
    for (CudaArch arch : {CudaArch::kSm80, CudaArch::kSm90a}) {
      SCOPED_TRACE(absl::StrCat("N=", n, " ", CudaTarget::ForArch(arch).name()));
      absl::StatusOr<CudaSource> src = EmitFor(*program, arch);
      ASSERT_TRUE(src.ok()) << src.status();
      absl::StatusOr<NvrtcResult> r = CompileCuda(src->code, "elementwise_add.cu", arch);
      ASSERT_TRUE(r.ok()) << r.status();
      absl::StatusOr<std::string> sass = DisassembleCubin(r->cubin);
      if (!sass.ok()) {
        std::printf("no SASS check: %s\n", std::string(sass.status().message()).c_str());
        return;
      }
      // A and B, each once per run of the thread (two runs).
      EXPECT_GE(CountOpcode(*sass, absl::StrCat("LDG.E.", width)), 4) << *sass;
      EXPECT_GE(CountOpcode(*sass, absl::StrCat("STG.E.", width)), 2) << *sass;
    }
  }
}

constexpr char kKernels[] = R"(
import tilelang.language as T

# Dynamic M and N: the row length is unknown at compile time, so each run's
# alignment is tested at run time.
def scale_add(M, N, block_M=16, block_N=64):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float16"), B: T.Tensor((M, N), "float16"),
             C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            for i, j in T.Parallel(block_M, block_N):
                y = by * block_M + i
                x = bx * block_N + j
                if y < M and x < N:
                    C[y, x] = T.cast(A[y, x], "float32") * 2.0 + T.cast(B[y, x], "float32")
    return main

# X is stored and then read again in the same element: its accesses stay
# element accesses; Y's store is a vector.
def reread():
    @T.prim_func
    def main(X: T.Tensor((64, 64), "float32"), Y: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, threads=128) as bx:
            for i, j in T.Parallel(64, 64):
                X[i, j] = X[i, j] + 1.0
                Y[i, j] = X[i, j] * 2.0
    return main

# Loads under a condition (a branch of if_then_else, a data-dependent if) stay
# element accesses, and so does the store under the data-dependent if; the
# unconditional load of A is a vector.
def conditional():
    @T.prim_func
    def main(A: T.Tensor((64, 64), "float32"), B: T.Tensor((64, 64), "float32"),
             C: T.Tensor((64, 64), "float32"), D: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, threads=128) as bx:
            for i, j in T.Parallel(64, 64):
                D[i, j] = T.if_then_else(A[i, j] > 0.0, B[i, j], 0.0)
                if A[i, j] < 0.5:
                    C[i, j] = A[i, j] * 3.0
    return main

# Through shared memory: a nest fills a shared tile from global memory (8
# bfloat16 per run), a second one reads it (4 per run: float32 output).
def staged(M, block=32):
    @T.prim_func
    def main(A: T.Tensor((M, 32), "bfloat16"), C: T.Tensor((M, 32), "float32")):
        with T.Kernel(T.ceildiv(M, block), threads=128) as bx:
            S = T.alloc_shared((block, 32), "bfloat16")
            for i, j in T.Parallel(block, 32):
                if bx * block + i < M:
                    S[i, j] = A[bx * block + i, j]
            for i, j in T.Parallel(block, 32):
                if bx * block + i < M:
                    C[bx * block + i, j] = T.cast(S[i, j], "float32") + 1.0
    return main

# A guard with || beside the run's bounds: the vector path's condition
# keeps its grouping, so runs that cross N take the element path.
def either(M, N, block_M=16, block_N=64):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            for i, j in T.Parallel(block_M, block_N):
                y = by * block_M + i
                x = bx * block_N + j
                if (by < 1 or bx < 1) and y < M and x < N:
                    C[y, x] = A[y, x] + 1.0
    return main

# An im2col-style gather: row m, column k = (tap, c) of a padded 1-D
# convolution over L positions with C channels. Where C is a multiple of
# the run length the run's tap, its padding test and its k < 3 * C test
# hold for all of its elements: one guarded vector load of X per run,
# zeros outside.
def gather(L, C, block_M=16, block_K=32):
    @T.prim_func
    def main(X: T.Tensor((L, C), "float16"), Y: T.Tensor((L, 3 * C), "float16")):
        with T.Kernel(T.ceildiv(3 * C, block_K), T.ceildiv(L, block_M), threads=128) as (bx, by):
            S = T.alloc_shared((block_M, block_K), "float16")
            for i, j in T.Parallel(block_M, block_K):
                m = by * block_M + i
                k = bx * block_K + j
                pos = m + k // C - 1
                S[i, j] = T.if_then_else(pos >= 0 and pos < L and k < 3 * C, X[pos, k % C], 0)
            for i, j in T.Parallel(block_M, block_K):
                if by * block_M + i < L and bx * block_K + j < 3 * C:
                    Y[by * block_M + i, bx * block_K + j] = S[i, j]
    return main

# Two 4-bit values per byte and one scale per group of k: a run of 8 reads
# its 4 bytes at k // 2 with one load and its one scale at k // group.
def unpack(N, K, group=32, block_N=16, block_K=64):
    @T.prim_func
    def main(B: T.Tensor((N, K // 2), "uint8"), Sc: T.Tensor((N, K // group), "float16"),
             W: T.Tensor((N, K), "float16")):
        with T.Kernel(T.ceildiv(N, block_N), threads=128) as bx:
            Bs = T.alloc_shared((block_N, block_K // 2), "uint8")
            Ss = T.alloc_shared((block_N, block_K // group), "float16")
            for ko in T.serial(K // block_K):
                T.copy(B[bx * block_N, ko * (block_K // 2)], Bs)
                T.copy(Sc[bx * block_N, ko * (block_K // group)], Ss)
                for j, k in T.Parallel(block_N, block_K):
                    nib = (Bs[j, k // 2] >> (4 * (k % 2))) & 15
                    if bx * block_N + j < N:
                        W[bx * block_N + j, ko * block_K + k] = (
                            T.cast(nib, "float16") - T.float16(8)) * Ss[j, k // group]
    return main
)";

TEST(DynamicRows, RunTimeAlignmentTestsAndRaggedRowsMatchTheInterpreter) {
  absl::StatusOr<ir::Program> program = CompileSource("kernels.py", kKernels, "scale_add");
  ASSERT_TRUE(program.ok()) << program.status();
  ASSERT_EQ(program->dyn_dims.size(), 2u);
  absl::StatusOr<CudaSource> src = EmitFor(*program, CudaArch::kSm80);
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_THAT(src->code, HasSubstr("tl::load_vec<tl::half_t, 4>(&A["));
  EXPECT_THAT(src->code, HasSubstr("tl::is_aligned<8>(&A["));
  EXPECT_THAT(src->code, HasSubstr("tl::is_aligned<16>(&C["));
  EXPECT_THAT(src->code, HasSubstr("tl::store_vec<float, 4>(&C["));
  // Rows of 72 and 100 (aligned), 99 (odd: most rows misaligned), 3 (runs
  // cross the row end); M not a multiple of the block.
  for (int64_t n : {72, 100, 99, 3}) {
    ExpectMatchesInterpreter(*program, {{"M", 37}, {"N", n}});
  }
}

TEST(Ordering, ABufferReadAfterItsStoreStaysElementwise) {
  absl::StatusOr<ir::Program> program = CompileSource("kernels.py", kKernels, "reread");
  ASSERT_TRUE(program.ok()) << program.status();
  absl::StatusOr<CudaSource> src = EmitFor(*program, CudaArch::kSm80);
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_THAT(src->code, HasSubstr("tl::store_vec<float, 4>(&Y["));
  EXPECT_THAT(src->code, Not(HasSubstr("_vec<float, 4>(&X[")));
  ExpectMatchesInterpreter(*program, {});
}

TEST(Conditions, ConditionalAccessesStayElementwise) {
  absl::StatusOr<ir::Program> program = CompileSource("kernels.py", kKernels, "conditional");
  ASSERT_TRUE(program.ok()) << program.status();
  absl::StatusOr<CudaSource> src = EmitFor(*program, CudaArch::kSm80);
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_THAT(src->code, HasSubstr("tl::load_vec<float, 4>(&A["));
  EXPECT_THAT(src->code, HasSubstr("tl::store_vec<float, 4>(&D["));
  EXPECT_THAT(src->code, Not(HasSubstr("(&B[")));
  EXPECT_THAT(src->code, Not(HasSubstr("(&C[")));
  ExpectMatchesInterpreter(*program, {});
}

TEST(SharedMemory, NestsThroughSharedMemoryUseVectors) {
  absl::StatusOr<ir::Program> program = CompileSource("kernels.py", kKernels, "staged");
  ASSERT_TRUE(program.ok()) << program.status();
  absl::StatusOr<CudaSource> src = EmitFor(*program, CudaArch::kSm80);
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_THAT(src->code, HasSubstr("tl::store_vec<tl::bfloat16_t, 8>(&S["));
  EXPECT_THAT(src->code, HasSubstr("tl::load_vec<tl::bfloat16_t, 4>(&S["));
  for (int64_t m : {64, 45}) ExpectMatchesInterpreter(*program, {{"M", m}});
}

TEST(Conditions, AGuardWithAnOrKeepsItsGroupingInTheVectorTest) {
  // Dynamic M and N: rows of 99 put a run across N.
  absl::StatusOr<ir::Program> program = CompileSource("kernels.py", kKernels, "either");
  ASSERT_TRUE(program.ok()) << program.status();
  absl::StatusOr<CudaSource> src = EmitFor(*program, CudaArch::kSm80);
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_THAT(src->code, HasSubstr("if ((by < 1 || bx < 1) && "));
  for (int64_t n : {99, 64}) ExpectMatchesInterpreter(*program, {{"M", 37}, {"N", n}});
}

TEST(Gather, AGuardOneOnEachRunLoadsItsVectorOrZeros) {
  for (const char* c : {"12", "10"}) {
    SCOPED_TRACE(absl::StrCat("C=", c));
    absl::StatusOr<ir::Program> program =
        CompileSource("kernels.py", kKernels, "gather", {{"L", "37"}, {"C", c}});
    ASSERT_TRUE(program.ok()) << program.status();
    absl::StatusOr<CudaSource> src = EmitFor(*program, CudaArch::kSm80);
    ASSERT_TRUE(src.ok()) << src.status();
    // Runs of 4 (16 x 32 elements over 128 threads).
    if (std::string(c) == "12") {
      EXPECT_THAT(src->code, HasSubstr("? tl::load_vec<tl::half_t, 4>(&X["));
      EXPECT_THAT(src->code, HasSubstr(": tl::vec_zero<tl::half_t, 4>();"));
    } else {
      // 10 channels: a run can cross a tap, so X stays element by element.
      EXPECT_THAT(src->code, Not(HasSubstr("(&X[")));
    }
    ExpectMatchesInterpreter(*program, {});
  }
}

TEST(SubRate, PackedBytesAndGroupScalesLoadOncePerRun) {
  absl::StatusOr<ir::Program> program =
      CompileSource("kernels.py", kKernels, "unpack", {{"N", "37"}, {"K", "128"}});
  ASSERT_TRUE(program.ok()) << program.status();
  absl::StatusOr<CudaSource> src = EmitFor(*program, CudaArch::kSm80);
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_THAT(src->code, HasSubstr("tl::load_vec<uint8_t, 4>(&Bs["));
  EXPECT_THAT(src->code, HasSubstr("tl::load_vec<tl::half_t, 1>(&Ss["));
  EXPECT_THAT(src->code, ::testing::ContainsRegex(R"(Bs_vec\.v\[e(_[0-9]+)? >> 1\])"));
  // k // 2 and k % 2 of the non-negative k are a shift and a mask.
  EXPECT_THAT(src->code, HasSubstr("k & 1"));
  ExpectMatchesInterpreter(*program, {});
}

}  // namespace
}  // namespace tilec::cuda
