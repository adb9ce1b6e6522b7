// Fragments written in one T.Parallel nest at indices the nest does not own
// (reshapes, transposes, read-modify-writes through registers) and read in
// another: inference stages the stores through shared memory
// (compiler/inference/fragment_staging.h), and the emitted code must match the
// interpreter on the emulator for sm_80 and sm_90a, ragged shapes included.
// Also math calls on elements read straight from global and shared buffers,
// and defects the differential tests (tests/difftest) found. Set
// TILEC_TEST_SEED to reproduce a run; TILEC_DUMP_CUDA=1 prints the source.
#include <map>
#include <string>
#include <utility>

#include "compiler/targets/cuda/emitter.h"
#include "compiler/targets/cuda/target.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/compiler/targets/cuda/emit_testing.h"

namespace tilec::cuda {
namespace {

using ::testing::HasSubstr;
using ::tilec::testing::BindingList;
using ::tilec::testing::CompileSource;
using ::tilec::testing::EmitFor;

// The reshape through registers a user wrote: t2 is [bm, bn], t1 its
// row-major flattening, read back in a nest of another shape. The guard makes
// ragged M and N valid.
constexpr char kFlatten[] = R"(
import tilelang.language as T

def flatten_tile(M, N, bm, bn, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M * N,), dtype)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            t2 = T.alloc_fragment([bm, bn], dtype)
            t1 = T.alloc_fragment([bm * bn], dtype)
            T.copy(X[by * bm, bx * bn], t2)
            for i, j in T.Parallel(bm, bn):
                t1[i * bn + j] = t2[i, j] * 2
            for k in T.Parallel(bm * bn):
                if by * bm + k // bn < M and bx * bn + k % bn < N:
                    Y[(by * bm + k // bn) * N + bx * bn + k % bn] = t1[k]
    return main
)";

// The same fragment reshaped from a T.gemm accumulator (whose mma layout is
// strict), transposed on the way, and a second nest that updates only every
// other element in place (a read-modify-write, so the staging buffer is
// filled from the fragment first).
constexpr char kGemmReshape[] = R"(
import tilelang.language as T

def gemm_reshape(M, N, K, bm, bn, bk):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"),
             Y: T.Tensor((N, M), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            A_s = T.alloc_shared((bm, bk), "float16")
            B_s = T.alloc_shared((bk, bn), "float16")
            acc = T.alloc_fragment((bm, bn), "float32")
            flat = T.alloc_fragment((bn * bm,), "float32")
            T.clear(acc)
            for ko in T.Pipelined(T.ceildiv(K, bk), num_stages=2):
                T.copy(A[by * bm, ko * bk], A_s)
                T.copy(B[ko * bk, bx * bn], B_s)
                T.gemm(A_s, B_s, acc)
            for i, j in T.Parallel(bm, bn):
                flat[j * bm + i] = acc[i, j]
            for h in T.Parallel(bn * bm // 2):
                flat[2 * h] = flat[2 * h] + 1.0
            for k in T.Parallel(bn * bm):
                if bx * bn + k // bm < N and by * bm + k % bm < M:
                    Y[bx * bn + k // bm, by * bm + k % bm] = flat[k]
    return main
)";

// The accumulator read flattened, at indices the nest does not own: the
// mma layout is strict, so the nest reads a staged copy.
constexpr char kFlatRead[] = R"(
import tilelang.language as T

def flat_read(M, N, K, bm, bn, bk):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"),
             Y: T.Tensor((M * N,), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            A_s = T.alloc_shared((bm, bk), "float16")
            B_s = T.alloc_shared((bk, bn), "float16")
            acc = T.alloc_fragment((bm, bn), "float32")
            T.clear(acc)
            for ko in T.Pipelined(T.ceildiv(K, bk), num_stages=2):
                T.copy(A[by * bm, ko * bk], A_s)
                T.copy(B[ko * bk, bx * bn], B_s)
                T.gemm(A_s, B_s, acc)
            for k in T.Parallel(bm * bn):
                if by * bm + k // bn < M and bx * bn + k % bn < N:
                    Y[(by * bm + k // bn) * N + bx * bn + k % bn] = acc[k // bn, k % bn] * 0.5
    return main
)";

// Stores under a condition: the nest writes only part of the fragment, the
// rest keeps what an earlier statement put there.
constexpr char kPartialStore[] = R"(
import tilelang.language as T

def partial_store(M, N, bm):
    @T.prim_func
    def main(X: T.Tensor((M, N), "int32"), Y: T.Tensor((M, N), "int32")):
        with T.Kernel(T.ceildiv(M, bm), threads=64) as bx:
            f = T.alloc_fragment((bm * N,), "int32")
            for k in T.Parallel(bm * N):
                f[k] = k
            for i, j in T.Parallel(bm, N):
                if (i + j) % 3 == 0:
                    f[j * bm + i] = X[T.min(bx * bm + i, M - 1), j] * 3
            for i, j in T.Parallel(bm, N):
                if bx * bm + i < M:
                    Y[bx * bm + i, j] = f[i * N + j]
    return main
)";

// The second defect: math on elements read straight from a global tensor.
constexpr char kRowmaxExp[] = R"(
import tilelang.language as T

def rowmax_exp(M, N, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M,), dtype)):
        with T.Kernel(M, threads=32) as bx:
            acc = T.alloc_local([1], dtype)
            acc[0] = -T.infinity(dtype)
            for k in T.serial(N):
                acc[0] = T.max(acc[0], T.exp(X[bx, k]))
            Y[bx] = acc[0]
    return main
)";

// Math and integer helpers straight on elements of global and shared
// buffers, both arguments elements or one of them a value.
constexpr char kElementMath[] = R"(
import tilelang.language as T

def element_math(M, N):
    @T.prim_func
    def main(X: T.Tensor((M, N), "float32"), I: T.Tensor((M, N), "int32"),
             Y: T.Tensor((M, N), "float32"), Z: T.Tensor((M, N), "int32")):
        with T.Kernel(M, threads=32) as bx:
            S = T.alloc_shared((N,), "float32")
            SI = T.alloc_shared((N,), "int32")
            T.copy(X[bx, 0:N], S)
            T.copy(I[bx, 0:N], SI)
            for j in T.Parallel(N):
                Y[bx, j] = T.max(T.exp(S[j] * 0.1), X[bx, j]) + T.abs(S[j]) + T.min(X[bx, j], S[j])
                Z[bx, j] = T.abs(SI[j]) + T.max(I[bx, j], SI[j]) + T.min(I[bx, j], 3) + I[bx, j] // 7
    return main
)";

// A cross-warp reduction inside a serial loop: its scratch is read at the end
// of one iteration and written again in the next, which needs a barrier
// (found by the differential tests, generator seed 1000461).
constexpr char kReduceInLoop[] = R"(
import tilelang.language as T

def reduce_in_loop(M, N, bm, bn):
    @T.prim_func
    def main(A: T.Tensor((M, N), "int32"), Y: T.Tensor((M * N,), "float32")):
        with T.Kernel(T.ceildiv(M, bm), threads=128) as bx:
            F0 = T.alloc_fragment((bn, bm), "int32")
            F1 = T.alloc_fragment((bm,), "int32")
            for ko in T.serial(T.ceildiv(N, bn)):
                for i, j in T.Parallel(bn, bm):
                    F0[i, j] = T.if_then_else((bx * bm + j < M) and (ko * bn + i < N),
                                              A[bx * bm + j, ko * bn + i], 0)
                T.reduce_min(F0, F1, dim=0)
                for i, j in T.Parallel(bm, bn):
                    if (bx * bm + i < M) and (ko * bn + j < N):
                        Y[(bx * bm + i) * N + ko * bn + j] = T.cast(F1[i], "float32")
    return main
)";

// Two T.gemm accumulators whose warp layouts differ (S is 64x32 over 8 warps,
// O is 64x128): a row vector computed from S's rows is read in O's nest,
// where its layout cannot be S's projection. Inference reads a staged copy
// there (the layout conversion TileLang inserts; MLA decode at 256 threads
// needs it).
constexpr char kTwoLayouts[] = R"(
import tilelang.language as T

def two_layouts(M, N, K, D, bm):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((N, K), "float16"),
             V: T.Tensor((N, D), "float16"), Y: T.Tensor((M, D), "float32")):
        with T.Kernel(T.ceildiv(M, bm), threads=256) as bx:
            A_s = T.alloc_shared((bm, K), "float16")
            B_s = T.alloc_shared((N, K), "float16")
            V_s = T.alloc_shared((N, D), "float16")
            P_s = T.alloc_shared((bm, N), "float16")
            S = T.alloc_fragment((bm, N), "float32")
            O = T.alloc_fragment((bm, D), "float32")
            rmax = T.alloc_fragment((bm,), "float32")
            scale = T.alloc_fragment((bm,), "float32")
            T.copy(A[bx * bm, 0], A_s)
            T.copy(B[0, 0], B_s)
            T.copy(V[0, 0], V_s)
            T.gemm(A_s, B_s, S, transpose_B=True, clear_accum=True,
                   policy=T.GemmWarpPolicy.FullCol)
            T.reduce_max(S, rmax, dim=1)
            for i in T.Parallel(bm):
                scale[i] = rmax[i] * 0.5 + 1.0
            T.copy(S, P_s)
            T.gemm(P_s, V_s, O, clear_accum=True, policy=T.GemmWarpPolicy.FullCol)
            for i, j in T.Parallel(bm, D):
                O[i, j] = O[i, j] * scale[i]
            T.copy(O, Y[bx * bm, 0])
    return main
)";

// Two reductions into one row vector from accumulators of different warp
// layouts (2x2 and FullRow 4x1): the second cannot write m in m's layout, so
// it reduces into a fresh fragment copied into m (the conversion TileLang
// inserts; clear=False, so the fresh fragment starts from m).
constexpr char kTwoReduces[] = R"(
import tilelang.language as T

def two_reduces(M, N, K, bm):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((N, K), "float16"),
             Y: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, bm), threads=128) as bx:
            A_s = T.alloc_shared((bm, K), "float16")
            B_s = T.alloc_shared((N, K), "float16")
            S = T.alloc_fragment((bm, N), "float32")
            S2 = T.alloc_fragment((bm, N), "float32")
            m = T.alloc_fragment((bm,), "float32")
            T.copy(A[bx * bm, 0], A_s)
            T.copy(B[0, 0], B_s)
            T.gemm(A_s, B_s, S, transpose_B=True, clear_accum=True)
            T.gemm(A_s, B_s, S2, transpose_B=True, clear_accum=True,
                   policy=T.GemmWarpPolicy.FullRow)
            T.reduce_max(S2, m, dim=1)
            T.reduce_sum(S, m, dim=1, clear=False)
            for i in T.Parallel(bm):
                if bx * bm + i < M:
                    Y[bx * bm + i] = m[i]
    return main
)";

// A row reduction (thread-local along dim 1: the column sums of X put a row
// on each thread) whose result the next nest reads whole, at k // bn (every
// thread needs every element, so m is replicated): the reduction goes to a
// fresh fragment in its source's layout, filled from m (clear=False) and
// copied back. Found by the program generator (seed 15000021): the copy that
// fills the fresh fragment used to decide its layout as m's, so each round
// converted it again.
constexpr char kReduceThenReadWhole[] = R"(
import tilelang.language as T

def reduce_read_whole(M, N, bm, bn):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), Y: T.Tensor((M * N,), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=32) as (bx, by):
            X = T.alloc_fragment((bm, bn), "float32")
            colsum = T.alloc_fragment((bn,), "float32")
            m = T.alloc_fragment((bm,), "float32")
            out = T.alloc_fragment((bm * bn,), "float32")
            T.copy(A[by * bm, bx * bn], X)
            T.reduce_abssum(X, colsum, dim=0)
            T.fill(m, 0.5)
            T.reduce_min(X, m, dim=1, clear=False)
            for k in T.Parallel(bm * bn):
                out[k] = m[k // bn] * colsum[k % bn]
            for k in T.Parallel(bm * bn):
                if (by * bm + k // bn < M) and (bx * bn + k % bn < N):
                    Y[(by * bm + k // bn) * N + bx * bn + k % bn] = out[k]
    return main
)";

struct Case {
  const char* name;
  const char* text;
  const char* function;
  BindingList bindings;
};

class ReshapeTest : public ::testing::TestWithParam<std::pair<Case, CudaArch>> {};

TEST_P(ReshapeTest, EmulatorMatchesInterpreter) {
  const auto& [c, arch] = GetParam();
  absl::StatusOr<ir::Program> program =
      CompileSource(std::string(c.name) + ".py", c.text, c.function, c.bindings);
  ASSERT_TRUE(program.ok()) << program.status();
  absl::StatusOr<CudaSource> src = EmitFor(*program, arch);
  ASSERT_TRUE(src.ok()) << src.status();
  ::tilec::testing::ExpectEmulatorMatchesInterpreter(
      *program, *src, {.seed = ::tilec::testing::TestSeed(20261125), .written = {"Y"}});
}

const Case kCases[] = {
    {"flatten_issue",
     kFlatten,
     "flatten_tile",
     {{"M", "128"}, {"N", "64"}, {"bm", "64"}, {"bn", "32"}}},
    {"flatten_ragged",
     kFlatten,
     "flatten_tile",
     {{"M", "100"}, {"N", "72"}, {"bm", "32"}, {"bn", "32"}}},
    {"flatten_bf16",
     kFlatten,
     "flatten_tile",
     {{"M", "48"}, {"N", "40"}, {"bm", "16"}, {"bn", "16"}, {"dtype", "bfloat16"}}},
    {"gemm_reshape",
     kGemmReshape,
     "gemm_reshape",
     {{"M", "80"}, {"N", "72"}, {"K", "40"}, {"bm", "32"}, {"bn", "32"}, {"bk", "16"}}},
    {"flat_read",
     kFlatRead,
     "flat_read",
     {{"M", "72"}, {"N", "40"}, {"K", "24"}, {"bm", "32"}, {"bn", "32"}, {"bk", "16"}}},
    {"partial_store", kPartialStore, "partial_store", {{"M", "37"}, {"N", "12"}, {"bm", "8"}}},
    {"element_math", kElementMath, "element_math", {{"M", "5"}, {"N", "40"}}},
    {"reduce_in_loop", kReduceInLoop, "reduce_in_loop",
     {{"M", "44"}, {"N", "154"}, {"bm", "16"}, {"bn", "8"}}},
    {"rowmax_exp", kRowmaxExp, "rowmax_exp", {{"M", "33"}, {"N", "70"}}},
    {"two_layouts", kTwoLayouts, "two_layouts",
     {{"M", "100"}, {"N", "32"}, {"K", "32"}, {"D", "128"}, {"bm", "64"}}},
    {"two_reduces", kTwoReduces, "two_reduces",
     {{"M", "100"}, {"N", "64"}, {"K", "32"}, {"bm", "64"}}},
    {"reduce_read_whole", kReduceThenReadWhole, "reduce_read_whole",
     {{"M", "81"}, {"N", "141"}, {"bm", "32"}, {"bn", "4"}}},
};

std::vector<std::pair<Case, CudaArch>> AllCases() {
  std::vector<std::pair<Case, CudaArch>> out;
  for (const Case& c : kCases) {
    out.push_back({c, CudaArch::kSm80});
    out.push_back({c, CudaArch::kSm90a});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Cases, ReshapeTest, ::testing::ValuesIn(AllCases()),
                         [](const ::testing::TestParamInfo<std::pair<Case, CudaArch>>& info) {
                           return std::string(info.param.first.name) +
                                  (info.param.second == CudaArch::kSm80 ? "_sm80" : "_sm90a");
                         });

// The staged reshape reads like what it does: the nest stores into a shared
// staging buffer, and one T.copy hands every thread its part of t1. The nest
// writes every element, so the staging buffer is not filled first.
TEST(ReshapeEmission, StagesTheStoreThroughSharedMemory) {
  absl::StatusOr<ir::Program> program =
      CompileSource("flatten.py", kFlatten, "flatten_tile",
                    {{"M", "128"}, {"N", "64"}, {"bm", "64"}, {"bn", "32"}});
  ASSERT_TRUE(program.ok()) << program.status();
  absl::StatusOr<CudaSource> src = EmitFor(*program, CudaArch::kSm80);
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_THAT(src->code, HasSubstr("t1_stage"));
  EXPECT_THAT(src->code, HasSubstr("tl::syncthreads();"));
}

// The conversion reads like what it does: the row vector goes to shared
// memory before the nest that needs it in another layout, and that nest
// reads it there.
TEST(ReshapeEmission, ConvertsALayoutConflictThroughSharedMemory) {
  absl::StatusOr<ir::Program> program =
      CompileSource("two_layouts.py", kTwoLayouts, "two_layouts",
                    {{"M", "128"}, {"N", "32"}, {"K", "32"}, {"D", "128"}, {"bm", "64"}});
  ASSERT_TRUE(program.ok()) << program.status();
  absl::StatusOr<CudaSource> src = EmitFor(*program, CudaArch::kSm80);
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_THAT(src->code, HasSubstr("scale_stage"));
}

}  // namespace
}  // namespace tilec::cuda
