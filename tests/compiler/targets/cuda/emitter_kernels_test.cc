// Small kernels that exercise lowering paths the examples do not: block
// rasterization, integer floor division of negative values, atomics in both
// forms, reductions of every kind and along either dimension, cumsum on
// fragments, per-thread buffers, partial fills. Each is emitted for sm_80,
// run on the SIMT emulator and compared with the reference interpreter on
// random inputs (TILEC_TEST_SEED reproduces a run; TILEC_DUMP_CUDA=1 prints
// the generated source).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "compiler/interp/interp.h"
#include "compiler/targets/cuda/emitter.h"
#include "gtest/gtest.h"
#include "tests/compiler/targets/cuda/emit_testing.h"

namespace tilec::cuda {
namespace {

// Compiles `function` of `source` with `bindings`, emits it for sm_80, runs
// it on the emulator and on the interpreter from the same random inputs
// (`zero` names parameters that start at zero, as accumulation outputs
// must), and expects every tensor to match within the default tolerance of
// its dtype.
void ExpectEmulatorMatchesInterpreter(const std::string& source, const std::string& function,
                                      const ::tilec::testing::BindingList& bindings,
                                      const std::vector<std::string>& zero = {}) {
  absl::StatusOr<ir::Program> program =
      ::tilec::testing::CompileSource("test.py", source, function, bindings);
  ASSERT_TRUE(program.ok()) << program.status();
  absl::StatusOr<CudaSource> src = ::tilec::testing::EmitFor(*program, CudaArch::kSm80);
  ASSERT_TRUE(src.ok()) << src.status();
  ::tilec::testing::ExpectEmulatorMatchesInterpreter(
      *program, *src, {.seed = ::tilec::testing::TestSeed(7), .zero = zero});
}

// Each block adds its (remapped) block index to its own tile: the output
// matches the interpreter (which ignores T.use_swizzle) only if the remap
// visits every block exactly once.
constexpr char kSwizzle[] = R"(
import tilelang.language as T

def swizzled(M, N, panel, order):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, 16), T.ceildiv(M, 8), threads=128) as (bx, by):
            T.use_swizzle(panel_size=panel, order=order)
            for i, j in T.Parallel(8, 16):
                if by * 8 + i < M and bx * 16 + j < N:
                    B[by * 8 + i, bx * 16 + j] = A[by * 8 + i, bx * 16 + j] + T.cast(
                        by * 100 + bx, "float32")
    return main
)";

TEST(EmittedKernels, UseSwizzleVisitsEveryBlockOnce) {
  // A 7 x 5 grid: panels of 2 rows (the last one short) and of 3 columns.
  ExpectEmulatorMatchesInterpreter(kSwizzle, "swizzled",
                                   {{"M", "40"}, {"N", "100"}, {"panel", "2"}, {"order", "row"}});
  ExpectEmulatorMatchesInterpreter(
      kSwizzle, "swizzled", {{"M", "40"}, {"N", "100"}, {"panel", "3"}, {"order", "column"}});
}

// A float16 accumulator: the gemm widens it to float32, adds A @ B over a
// pipelined K loop, and rounds back, per T.gemm call; ragged M, N and K (the
// copies zero-fill past the edges). float16 and bfloat16 operands.
constexpr char kNarrowAccumulator[] = R"(
import tilelang.language as T

def gemm(M, N, K, dtype, accum, bm=64, bn=64, bk=32):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype),
             C: T.Tensor((M, N), accum)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            A_s = T.alloc_shared((bm, bk), dtype)
            B_s = T.alloc_shared((bk, bn), dtype)
            C_f = T.alloc_fragment((bm, bn), accum)
            T.clear(C_f)
            for k in T.Pipelined(T.ceildiv(K, bk), num_stages=2):
                T.copy(A[by * bm, k * bk], A_s)
                T.copy(B[k * bk, bx * bn], B_s)
                T.gemm(A_s, B_s, C_f)
            T.copy(C_f, C[by * bm, bx * bn])
    return main
)";

TEST(EmittedKernels, GemmWithANarrowAccumulator) {
  for (const char* t : {"float16", "bfloat16"}) {
    ExpectEmulatorMatchesInterpreter(
        kNarrowAccumulator, "gemm",
        {{"M", "100"}, {"N", "72"}, {"K", "80"}, {"dtype", t}, {"accum", "float16"}});
  }
  // Eight T.gemm calls: rounding every product would drift past float16's
  // tolerance from the float32 sums of each call.
  ExpectEmulatorMatchesInterpreter(
      kNarrowAccumulator, "gemm",
      {{"M", "70"}, {"N", "40"}, {"K", "251"}, {"dtype", "float16"}, {"accum", "float16"}});
}

// T.reduce_argmax / T.reduce_argmin: the first extreme's index along a
// dimension, from a fragment or a shared buffer, into a fragment, a shared
// buffer, or one that keeps the dimension; int32 sources have many ties.
constexpr char kArgReduce[] = R"(
import tilelang.language as T

def arg(R, C, dim, kind, dtype, index_dtype="int32", src_shared=False, keep=False,
        dst_shared=False):
    out_shape = [C if dim == 0 else R]
    if keep:
        out_shape = [1, C] if dim == 0 else [R, 1]
    op = T.reduce_argmax if kind == "max" else T.reduce_argmin

    @T.prim_func
    def main(A: T.Tensor((R, C), dtype), B: T.Tensor(out_shape, index_dtype)):
        with T.Kernel(1, threads=128):
            if src_shared:
                src = T.alloc_shared((R, C), dtype)
            else:
                src = T.alloc_fragment((R, C), dtype)
            if dst_shared:
                dst = T.alloc_shared(out_shape, index_dtype)
            else:
                dst = T.alloc_fragment(out_shape, index_dtype)
            T.copy(A, src)
            op(src, dst, dim)
            T.copy(dst, B)
    return main
)";

TEST(EmittedKernels, ArgMaxAndArgMin) {
  const std::vector<std::vector<std::pair<std::string, std::string>>> cases = {
      {{"R", "4"}, {"C", "128"}, {"dim", "1"}, {"kind", "\"max\""}, {"dtype", "float32"}},
      {{"R", "4"}, {"C", "128"}, {"dim", "-1"}, {"kind", "\"min\""}, {"dtype", "int32"}},
      {{"R", "16"},
       {"C", "8"},
       {"dim", "0"},
       {"kind", "\"max\""},
       {"dtype", "int32"},
       {"src_shared", "True"}},
      {{"R", "8"},
       {"C", "32"},
       {"dim", "1"},
       {"kind", "\"min\""},
       {"dtype", "float16"},
       {"index_dtype", "int64"},
       {"keep", "True"}},
      {{"R", "4"},
       {"C", "96"},
       {"dim", "1"},
       {"kind", "\"max\""},
       {"dtype", "int32"},
       {"dst_shared", "True"}},
  };
  for (const auto& c : cases) ExpectEmulatorMatchesInterpreter(kArgReduce, "arg", c);
}

// The interpreter's answer is the first extreme, as torch.argmax's.
TEST(EmittedKernels, ArgMaxIsTheFirstMaximum) {
  absl::StatusOr<ir::Program> p = ::tilec::testing::CompileSource(
      "test.py", kArgReduce, "arg",
      {{"R", "4"}, {"C", "128"}, {"dim", "1"}, {"kind", "\"max\""}, {"dtype", "int32"}});
  ASSERT_TRUE(p.ok()) << p.status();
  std::vector<interp::Tensor> args = {interp::RandomTensor(ir::DType::kInt32, {4, 128}, 9),
                                      interp::Tensor(ir::DType::kInt32, {4})};
  ASSERT_TRUE(interp::RunProgram(*p, args).ok());
  for (int64_t r = 0; r < 4; ++r) {
    int64_t best = 0;
    for (int64_t c = 1; c < 128; ++c) {
      if (args[0].GetInt(r * 128 + c) > args[0].GetInt(r * 128 + best)) best = c;
    }
    EXPECT_EQ(args[1].GetInt(r), best) << "row " << r;
  }
}

// A T.Parallel extent known at run time, bounded by a constant: the loop
// runs to the bound, guarded by the extent (the scalar is random in [1, 8]).
constexpr char kDynamicParallel[] = R"(
import tilelang.language as T

def dyn(max_len):
    @T.prim_func
    def main(A: T.Tensor((max_len,), "float32"), B: T.Tensor((max_len,), "float32"),
             valid_len: T.int32):
        with T.Kernel(1, threads=128):
            for i in T.Parallel(max_len):
                B[i] = 0.0
            span = T.min(valid_len, max_len)
            for i in T.Parallel(span):
                B[i] = A[i] - 1.0
    return main
)";

TEST(EmittedKernels, ParallelWithABoundedRuntimeExtent) {
  ExpectEmulatorMatchesInterpreter(kDynamicParallel, "dyn", {{"max_len", "200"}});
  ExpectEmulatorMatchesInterpreter(kDynamicParallel, "dyn", {{"max_len", "5"}});
}

// Views of global tensors: a convolution that reads its filter and writes
// its output through 2-D views of 4-D tensors (T.Tensor(shape, dtype,
// t.data) and T.reshape), with ragged edges.
constexpr char kViews[] = R"(
import tilelang.language as T

def conv(N, H, W, C, F, K, bm=64, bn=32, bk=32):
    OH, OW = H - K + 1, W - K + 1

    @T.prim_func
    def main(data: T.Tensor((N, H, W, C), "float16"), kernel: T.Tensor((K, K, C, F), "float16"),
             out: T.Tensor((N, OH, OW, F), "float32")):
        with T.Kernel(T.ceildiv(F, bn), T.ceildiv(N * OH * OW, bm), threads=128) as (bx, by):
            data_s = T.alloc_shared((bm, bk), "float16")
            kernel_s = T.alloc_shared((bk, bn), "float16")
            acc = T.alloc_fragment((bm, bn), "float32")
            kernel_flat = T.Tensor((K * K * C, F), "float16", kernel.data)
            out_flat = T.reshape(out, (N * OH * OW, F))
            T.clear(acc)
            for ko in T.Pipelined(T.ceildiv(K * K * C, bk), num_stages=2):
                for i, j in T.Parallel(bm, bk):
                    k = ko * bk + j
                    m = by * bm + i
                    h = m % (OH * OW) // OW + k // (K * C)
                    w = m % OW + k // C % K
                    data_s[i, j] = T.if_then_else(m < N * OH * OW and k < K * K * C,
                                                  data[m // (OH * OW), h, w, k % C], 0)
                T.copy(kernel_flat[ko * bk, bx * bn], kernel_s)
                T.gemm(data_s, kernel_s, acc)
            T.copy(acc, out_flat[by * bm, bx * bn])
    return main
)";

TEST(EmittedKernels, ConvolutionThroughViewsOfGlobalTensors) {
  ExpectEmulatorMatchesInterpreter(
      kViews, "conv", {{"N", "2"}, {"H", "7"}, {"W", "6"}, {"C", "8"}, {"F", "40"}, {"K", "3"}});
}

// T.alloc_reducer: T.Parallel iterations accumulate into a reducer (sum
// over rows, max over columns), T.finalize_reducer, then the result out.
constexpr char kReducers[] = R"(
import tilelang.language as T

def colsum(M, N, bm=32):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), S: T.Tensor((N,), "float32"),
             X: T.Tensor((bm,), "float32")):
        with T.Kernel(1, threads=128):
            s = T.alloc_reducer((N,), "float32", op="sum", replication="all")
            x = T.alloc_reducer((bm,), "float32", op="max")
            T.clear(s)
            T.fill(x, -T.infinity("float32"))
            for ko in T.serial(T.ceildiv(M, bm)):
                for i, j in T.Parallel(bm, N):
                    s[j] += T.if_then_else(ko * bm + i < M, A[ko * bm + i, j], 0)
                for i, j in T.Parallel(bm, N):
                    x[i] = T.max(x[i], T.if_then_else(ko * bm + i < M, A[ko * bm + i, j],
                                                      -T.infinity("float32")))
            T.finalize_reducer(s)
            T.finalize_reducer(x)
            T.copy(s, S)
            T.copy(x, X)
    return main
)";

TEST(EmittedKernels, ReducersAccumulatedByParallelIterations) {
  ExpectEmulatorMatchesInterpreter(kReducers, "colsum", {{"M", "70"}, {"N", "48"}});
  absl::StatusOr<ir::Program> p =
      ::tilec::testing::CompileSource("test.py", kReducers, "colsum", {{"M", "70"}, {"N", "48"}});
  ASSERT_TRUE(p.ok()) << p.status();
  std::vector<interp::Tensor> args = {interp::RandomTensor(ir::DType::kFloat32, {70, 48}, 11),
                                      interp::Tensor(ir::DType::kFloat32, {48}),
                                      interp::Tensor(ir::DType::kFloat32, {32})};
  ASSERT_TRUE(interp::RunProgram(*p, args).ok());
  for (int64_t j = 0; j < 48; ++j) {
    double want = 0;
    for (int64_t i = 0; i < 70; ++i) want += args[0].GetDouble(i * 48 + j);
    EXPECT_NEAR(args[1].GetDouble(j), want, 1e-4) << "column " << j;
  }
  for (int64_t i = 0; i < 32; ++i) {
    double want = -1e30;
    for (int64_t ko = 0; ko * 32 + i < 70; ++ko) {
      for (int64_t j = 0; j < 48; ++j)
        want = std::max(want, args[0].GetDouble((ko * 32 + i) * 48 + j));
    }
    EXPECT_EQ(args[2].GetDouble(i), want) << "row " << i;
  }
}

// T.gemm on tiles of 3-D shared buffers (A_s[b, :, :]): a batched gemm
// whose operands keep every batch's tile in shared memory, ragged M, N, K.
constexpr char kBatchedTiles[] = R"(
import tilelang.language as T

def bgemm(Bt, M, N, K, bm=64, bn=64, bk=32):
    @T.prim_func
    def main(A: T.Tensor((Bt, M, K), "float16"), B: T.Tensor((Bt, K, N), "float16"),
             C: T.Tensor((Bt, M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            A_s = T.alloc_shared((Bt, bm, bk), "float16")
            B_s = T.alloc_shared((Bt, bk, bn), "float16")
            C_f = T.alloc_fragment((bm, bn), "float32")
            for b in T.serial(Bt):
                T.clear(C_f)
                for k in T.Pipelined(T.ceildiv(K, bk), num_stages=1):
                    T.copy(A[b, by * bm, k * bk], A_s[b, :, :])
                    T.copy(B[b, k * bk, bx * bn], B_s[b, :, :])
                    T.gemm(A_s[b, :, :], B_s[b, :, :], C_f)
                T.copy(C_f, C[b, by * bm, bx * bn])
    return main
)";

TEST(EmittedKernels, GemmOnTilesOfThreeDimensionalSharedBuffers) {
  ExpectEmulatorMatchesInterpreter(kBatchedTiles, "bgemm",
                                   {{"Bt", "2"}, {"M", "100"}, {"N", "72"}, {"K", "80"}});
}

constexpr char kIntOps[] = R"(
import tilelang.language as T

def intops(n):
    @T.prim_func
    def main(A: T.Tensor((n,), "int32"), B: T.Tensor((n,), "int32"), Q: T.Tensor((n,), "int32"),
             R: T.Tensor((n,), "int32"), F: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            for i in T.Parallel(n):
                d = B[i] * 2 + 1
                Q[i] = A[i] // d
                R[i] = A[i] % d
                F[i] = T.cast(T.max(A[i], B[i]) - T.min(A[i], d), "float32") / 3.0
    return main
)";

TEST(EmittedKernels, IntegerFloorDivisionAndModuloOfNegativeValues) {
  ExpectEmulatorMatchesInterpreter(kIntOps, "intops", {{"n", "200"}});
}

// Scalar atomics once per block and once per iteration; a tile atomic from a
// fragment of another layout than the destination's copies.
constexpr char kAtomics[] = R"(
import tilelang.language as T

def atomics(M, N):
    @T.prim_func
    def main(X: T.Tensor((M, N), "float32"), Total: T.Tensor((1,), "float32"),
             Rows: T.Tensor((M,), "float32"), Acc: T.Tensor((16, 32), "float32")):
        with T.Kernel(T.ceildiv(M, 16), threads=128) as bx:
            tile = T.alloc_fragment((16, 32), "float32")
            T.copy(X[bx * 16, 0], tile)
            T.atomic_add(Total[0], 1.0)
            for i, j in T.Parallel(16, 32):
                if bx * 16 + i < M and j < N:
                    T.atomic_add(Rows[bx * 16 + i], tile[i, j])
            T.atomic_add(Acc, tile)
    return main
)";

TEST(EmittedKernels, AtomicsInBothForms) {
  ExpectEmulatorMatchesInterpreter(kAtomics, "atomics", {{"M", "50"}, {"N", "30"}},
                                   {"Total", "Rows", "Acc"});
}

// Every reduction kind, along rows and columns, clearing or accumulating.
constexpr char kReductions[] = R"(
import tilelang.language as T

def reductions(M, N):
    @T.prim_func
    def main(X: T.Tensor((M, N), "float32"), RowMin: T.Tensor((M,), "float32"),
             RowAbsSum: T.Tensor((M,), "float32"), ColAbsMax: T.Tensor((N,), "float32"),
             ColSum: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            x = T.alloc_fragment((M, N), "float32")
            rmin = T.alloc_fragment((M,), "float32")
            rabs = T.alloc_fragment((M,), "float32")
            camax = T.alloc_fragment((N,), "float32")
            csum = T.alloc_fragment((N,), "float32")
            T.copy(X, x)
            T.reduce_min(x, rmin, dim=1)
            T.reduce_abssum(x, rabs, dim=1)
            T.reduce_absmax(x, camax, dim=0)
            T.fill(csum, 1.0)
            T.reduce_sum(x, csum, dim=0, clear=False)
            T.copy(rmin, RowMin)
            T.copy(rabs, RowAbsSum)
            T.copy(camax, ColAbsMax)
            T.copy(csum, ColSum)
    return main
)";

TEST(EmittedKernels, ReductionsOfEveryKindAlongBothDims) {
  ExpectEmulatorMatchesInterpreter(kReductions, "reductions", {{"M", "32"}, {"N", "64"}});
}

// Cumsum of a fragment (staged through shared memory) along dim 0, a copy
// into a per-thread local buffer, and a fill of part of a shared buffer.
constexpr char kMisc[] = R"(
import tilelang.language as T

def misc(M, N):
    @T.prim_func
    def main(X: T.Tensor((M, N), "float32"), Scan: T.Tensor((M, N), "float32"),
             Rowsum: T.Tensor((M,), "float32"), Part: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            x = T.alloc_fragment((M, N), "float32")
            s = T.alloc_shared((M, N), "float32")
            row = T.alloc_local((N,), "float32")
            T.copy(X, x)
            T.cumsum(x, dim=0, reverse=True)
            T.copy(x, Scan)
            T.copy(X, s)
            T.fill(s[2:5, 3:9], 0.5)
            T.copy(s, Part)
            for r in T.serial(M):
                T.copy(X[r, 0:N], row)
                acc = T.alloc_var("float32", init=0)
                for j in T.serial(N):
                    acc += row[j]
                Rowsum[r] = acc
    return main
)";

TEST(EmittedKernels, FragmentCumsumLocalBuffersAndPartialFills) {
  ExpectEmulatorMatchesInterpreter(kMisc, "misc", {{"M", "8"}, {"N", "16"}});
}

// Reductions whose rows span warps combine partials through scratch areas
// that alternate between operators; when the kernel's shared memory does not
// fit with two areas, every operator takes the same one (and a barrier
// separates them). `pad` is live throughout, so the plan cannot reuse it.
// K = 48 (96-byte rows, which no wgmma swizzle takes) keeps the gemm on
// mma.sync, whose FullCol partition spreads each row over the 8 warps.
constexpr char kTightScratch[] = R"(
import tilelang.language as T

def tight(M, N, K, big):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((N, K), "float16"),
             P: T.Tensor((big,), "float32"), mx: T.Tensor((M,), "float32"),
             sm: T.Tensor((M,), "float32"), Q: T.Tensor((big,), "float32")):
        with T.Kernel(1, threads=256):
            A_s = T.alloc_shared((M, K), "float16")
            B_s = T.alloc_shared((N, K), "float16")
            pad = T.alloc_shared((big,), "float32")
            acc = T.alloc_fragment((M, N), "float32")
            m = T.alloc_fragment((M,), "float32")
            s = T.alloc_fragment((M,), "float32")
            T.copy(P, pad)
            T.copy(A, A_s)
            T.copy(B, B_s)
            T.gemm(A_s, B_s, acc, transpose_B=True, policy=T.GemmWarpPolicy.FullCol,
                   clear_accum=True)
            T.reduce_max(acc, m, dim=1)
            for i, j in T.Parallel(M, N):
                acc[i, j] = T.exp2(acc[i, j] - m[i])
            T.reduce_sum(acc, s, dim=1)
            T.copy(m, mx)
            T.copy(s, sm)
            for i in T.Parallel(big):
                Q[i] = pad[i] * 2.0
    return main
)";

TEST(EmittedKernels, CrossWarpReductionsShareOneScratchAreaWhenSharedMemoryIsTight) {
  for (const char* big : {"1024", "54476"}) {
    SCOPED_TRACE(big);
    absl::StatusOr<ir::Program> p = ::tilec::testing::CompileSource(
        "tight.py", kTightScratch, "tight", {{"M", "64"}, {"N", "64"}, {"K", "48"}, {"big", big}});
    ASSERT_TRUE(p.ok()) << p.status();
    absl::StatusOr<CudaSource> src = ::tilec::testing::EmitFor(*p, CudaArch::kSm90a);
    ASSERT_TRUE(src.ok()) << src.status();
    ASSERT_EQ(src->kernels.size(), 1u);
    const bool tight = std::string(big) == "54476";
    // Two areas of [8][64] floats would need 232320 + 2048 bytes.
    EXPECT_LE(src->kernels[0].smem_bytes, 232448);
    EXPECT_EQ(src->code.find("scratch_1") == std::string::npos, tight);
    ::tilec::testing::ExpectEmulatorMatchesInterpreter(
        *p, *src, {.seed = ::tilec::testing::TestSeed(19), .written = {"mx", "sm", "Q"}});
  }
}

// T.gemm with A in registers and transpose_A: the [K, M] fragment is
// loaded from shared memory into the transposed register-A layout, whose
// registers are op(A) as the untransposed gemm takes them.
constexpr char kRegisterATransposed[] = R"(
import tilelang.language as T

def gemm_rs(M, N, K, bm=64, bn=64, bk=32, accum="float32"):
    @T.prim_func
    def main(A: T.Tensor((K, M), "float16"), B: T.Tensor((K, N), "float16"),
             C: T.Tensor((M, N), accum)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            A_s = T.alloc_shared((bk, bm), "float16")
            A_l = T.alloc_fragment((bk, bm), "float16")
            B_s = T.alloc_shared((bk, bn), "float16")
            C_l = T.alloc_fragment((bm, bn), accum)
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(K, bk), num_stages=0):
                T.copy(A[k * bk, by * bm], A_s)
                T.copy(A_s, A_l)
                T.copy(B[k * bk, bx * bn], B_s)
                T.gemm(A_l, B_s, C_l, transpose_A=True)
            T.copy(C_l, C[by * bm, bx * bn])
    return main
)";

TEST(EmittedKernels, GemmWithATransposedRegisterOperand) {
  absl::StatusOr<ir::Program> p = ::tilec::testing::CompileSource(
      "test.py", kRegisterATransposed, "gemm_rs", {{"M", "100"}, {"N", "70"}, {"K", "80"}});
  ASSERT_TRUE(p.ok()) << p.status();
  const uint64_t seed = ::tilec::testing::TestSeed(71);
  std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
  std::vector<interp::Tensor> args = {interp::RandomTensor(ir::DType::kFloat16, {80, 100}, seed),
                                      interp::RandomTensor(ir::DType::kFloat16, {80, 70}, seed + 1),
                                      interp::Tensor(ir::DType::kFloat32, {100, 70})};
  ASSERT_TRUE(interp::RunProgram(*p, args).ok());
  for (int64_t i = 0; i < 100; ++i) {
    for (int64_t j = 0; j < 70; ++j) {
      double ref = 0;
      for (int64_t k = 0; k < 80; ++k) {
        ref += args[0].GetDouble(k * 100 + i) * args[1].GetDouble(k * 70 + j);
      }
      EXPECT_NEAR(args[2].GetDouble(i * 70 + j), ref, 1e-3 * (1 + std::abs(ref))) << i << ", " << j;
    }
  }
  for (CudaArch arch : {CudaArch::kSm80, CudaArch::kSm90a}) {
    absl::StatusOr<CudaSource> src = ::tilec::testing::EmitFor(*p, arch);
    ASSERT_TRUE(src.ok()) << src.status();
    // sm_90a: one warpgroup, one m64 tile: wgmma with A from registers.
    EXPECT_NE(src->code.find(arch == CudaArch::kSm80 ? "tl::gemm_rs<" : "tl::gemm_rs_wgmma<"),
              std::string::npos);
    ::tilec::testing::ExpectEmulatorMatchesInterpreter(*p, *src, {.seed = seed, .zero = {"C"}});
  }
}

}  // namespace
}  // namespace tilec::cuda
