// Conformance: kernels, allocations and data movement as TileLang documents
// them (T.Kernel, T.alloc_*, T.copy, T.fill, T.clear, T.annotate_safe_value,
// the shared-memory limit per target). Each test
// checks the interpreter against a reference computed here, on shapes that
// do not divide the tiles, then the emitted CUDA on the SIMT emulator against
// the interpreter; a refusal is checked by the message docs/language.md gives.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/conformance/conformance_testing.h"

namespace tilec::conformance {
namespace {

using ir::DType;

constexpr char kSource[] = R"(
import tilelang
import tilelang.language as T
from tilelang.layout import make_swizzled_layout

def grid1(N, block=32):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block), threads=64) as bx:
            for i in T.Parallel(block):
                B[bx * block + i] = A[bx * block + i] + 1.0
    return main

def grid2(M, N, bm=16, bn=32):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            for i, j in T.Parallel(bm, bn):
                B[by * bm + i, bx * bn + j] = A[by * bm + i, bx * bn + j] * 2.0 + by
    return main

def grid3(X, Y, Z):
    @T.prim_func
    def main(O: T.Tensor((Z, Y, X), "int32")):
        with T.Kernel(X, Y, Z, threads=32) as (bx, by, bz):
            O[bz, by, bx] = bx + 10 * by + 100 * bz
    return main

def no_grid(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(threads=64):
            for i in T.Parallel(N):
                B[i] = A[i] - 3.0
    return main

def no_grid_bound(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        with T.Kernel(threads=64) as bx:
            A[bx] = 1.0
    return main

def four_extents(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, 1, 1, 1, threads=64) as (a, b, c, d):
            A[a] = 1.0
    return main

def shared(N, block=64, scope="shared.dyn"):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
            S = T.alloc_shared((block,), "float32", scope=scope)
            T.copy(A[bx * block], S)
            for i in T.Parallel(block):
                B[bx * block + i] = S[block - 1 - i] + S[i]
    return main

def fragment(N, block=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "float16"), B: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
            F = T.alloc_fragment((block,), "float32")
            T.copy(A[bx * block], F)
            for i in T.Parallel(block):
                F[i] = F[i] * 3.0
            T.copy(F, B[bx * block])
    return main

def local(N, K, how="alloc_local"):
    @T.prim_func
    def main(A: T.Tensor((N, K), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, 128), threads=128) as bx:
            tx = T.get_thread_binding()
            if how == "alloc_local":
                acc = T.alloc_local((2,), "float32")
            else:
                acc = T.alloc_fragment((2,), "float32", "local")
            acc[0] = 0.0
            acc[1] = 0.0
            for k in T.serial(K):
                acc[k % 2] += A[bx * 128 + tx, k]
            B[bx * 128 + tx] = acc[0] - acc[1]
    return main

def var_init(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "int32"), B: T.Tensor((N,), "int32")):
        with T.Kernel(T.ceildiv(N, 64), threads=64) as bx:
            v = T.alloc_var("int32", init=7)
            w = T.alloc_var(T.int32)
            w = A[bx * 64] * 2
            for i in T.Parallel(64):
                B[bx * 64 + i] = A[bx * 64 + i] + v + w
    return main

def copy_tile(M, N, bm=16, bn=32):
    MP = (M + bm - 1) // bm * bm
    NP = (N + bn - 1) // bn * bn
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32"),
             P: T.Tensor((MP, NP), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            S = T.alloc_shared((bm, bn), "float32")
            T.copy(A[by * bm:(by + 1) * bm, bx * bn:(bx + 1) * bn], S)
            for i, j in T.Parallel(bm, bn):
                S[i, j] = S[i, j] + 1.0
            T.copy(S, B[by * bm, bx * bn])
            T.copy(S, P[by * bm:(by + 1) * bm, bx * bn:(bx + 1) * bn])
    return main

def copy_elem(N):
    @T.prim_func
    def main(A: T.Tensor((N, 2), "float32"), B: T.Tensor((2, N), "float32")):
        with T.Kernel(N, threads=32) as bx:
            T.copy(A[bx, 0], B[1, bx])
            T.copy(A[bx, 1], B[0, bx])
    return main

def fill(M, N, bm=16, bn=32, value=2.5):
    @T.prim_func
    def main(B: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            S = T.alloc_shared((bm, bn), "float32")
            F = T.alloc_fragment((bm, bn), "float32")
            T.fill(S, value)
            T.fill(F, by - value)
            T.copy(S, B[by * bm, bx * bn])
            T.copy(F, C[by * bm, bx * bn])
    return main

def clear(M, N, bm=16, bn=32):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            F = T.alloc_fragment((bm, bn), "float32")
            T.copy(A[by * bm, bx * bn], F)
            T.clear(F)
            for i, j in T.Parallel(bm, bn):
                F[i, j] = F[i, j] + A[by * bm + i, bx * bn + j] * 0.5
            T.copy(F, B[by * bm, bx * bn])
    return main

def safe_value(N, block=64):
    NP = (N + block - 1) // block * block
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((NP,), "float32"),
             C: T.Tensor((NP,), "float32")):
        with T.Kernel(T.ceildiv(N, block), threads=64) as bx:
            T.annotate_safe_value({A: -2.5})
            S = T.alloc_shared((block,), "float32")
            T.copy(A[bx * block], S)
            T.copy(S, B[bx * block])
            for i in T.Parallel(block):
                C[bx * block + i] = A[bx * block + i + 3]
    return main

# Indices proven negative count from the end (TileLang legalizes them);
# one that may be either is an out-of-bounds access like any other.
def negative_index(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((8,), "float32")):
        with T.Kernel(1, threads=32):
            S = T.alloc_shared((N,), "float32")
            T.copy(A, S)
            B[0] = A[-1]
            B[1] = S[-2]
            for i in T.serial(3):
                B[2 + i] = A[-i - 1]
            B[-3] = S[N - 3]
            for j in T.serial(2):
                B[6 + j] = A[j * 20 - 10]
    return main

# T.annotate_padding: out-of-bounds loads stored into S read the padding,
# element by element (rows shifted up by 3) and through T.copy; the tensor's
# own safe value still holds elsewhere. The size is a tvm.te.var.
def padding(block=32):
    import tvm
    N = tvm.te.var("n")
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32"),
             C: T.Tensor((N,), "float32"), D: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block), threads=32) as bx:
            S = T.alloc_shared((block,), "float32")
            R = T.alloc_shared((block,), "float32")
            T.annotate_padding({S: 7.0, R: -1.0})
            T.annotate_safe_value({A: 2.0})
            for i in T.Parallel(block):
                S[i] = A[bx * block + i - 3]
            T.copy(A[bx * block + 5], R)
            for i in T.Parallel(block):
                B[bx * block + i] = S[i]
                C[bx * block + i] = R[i]
                D[bx * block + i] = A[bx * block + i + 5]
    return main

def safe_value_shared(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=64):
            S = T.alloc_shared((N,), "float32")
            T.annotate_safe_value({S: 1.0})
            T.copy(A, S)
            T.copy(S, A)
    return main

def big_shared(N, K, stages=3):
    @T.prim_func
    def main(A: T.Tensor((K * N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=128):
            S = T.alloc_shared((N,), "float32")
            F = T.alloc_fragment((N,), "float32")
            T.clear(F)
            for k in T.Pipelined(K, num_stages=stages):
                T.copy(A[k * N], S)
                for i in T.Parallel(N):
                    F[i] += S[i]
            T.copy(F, B)
    return main
)";

double F32(double v) { return static_cast<float>(v); }
const interp::Tolerance kF32 = interp::DefaultTolerance(DType::kFloat32);

TEST(ConformanceKernel, OneGridExtent) {
  for (int64_t n : {1, 100, 257}) {
    ir::Program p = Compile(kSource, "grid1", {{"N", std::to_string(n)}});
    const uint64_t seed = Seed(101);
    Tensors args = {Random(DType::kFloat32, {n}, seed), Zeros(DType::kFloat32, {n})};
    Interpret(p, args);
    ExpectClose(args[1], Table(n, [&](int64_t i) { return F32(args[0].GetDouble(i) + 1); }), kF32);
    ExpectTargetsMatch(p, {.seed = seed});
  }
}

TEST(ConformanceKernel, TwoGridExtents) {
  const int64_t m = 37, n = 70;
  ir::Program p = Compile(kSource, "grid2", {{"M", "37"}, {"N", "70"}});
  const uint64_t seed = Seed(102);
  Tensors args = {Random(DType::kFloat32, {m, n}, seed), Zeros(DType::kFloat32, {m, n})};
  Interpret(p, args);
  ExpectClose(args[1],
              Table(m * n, [&](int64_t k) { return F32(args[0].GetDouble(k) * 2 + (k / n) / 16); }),
              kF32);
  ExpectTargetsMatch(p, {.seed = seed}, kBothArchs);
}

TEST(ConformanceKernel, ThreeGridExtents) {
  const int64_t x = 5, y = 3, z = 2;
  ir::Program p = Compile(kSource, "grid3", {{"X", "5"}, {"Y", "3"}, {"Z", "2"}});
  Tensors args = {Zeros(DType::kInt32, {z, y, x})};
  Interpret(p, args);
  std::vector<int64_t> want;
  for (int64_t k = 0; k < z; ++k) {
    for (int64_t j = 0; j < y; ++j) {
      for (int64_t i = 0; i < x; ++i) want.push_back(i + 10 * j + 100 * k);
    }
  }
  ExpectEqualInts(args[0], want);
  ExpectTargetsMatch(p, {.seed = Seed(103), .exact = true});
}

TEST(ConformanceKernel, WithoutGridExtentsRunsOneBlock) {
  const int64_t n = 150;
  ir::Program p = Compile(kSource, "no_grid", {{"N", "150"}});
  const uint64_t seed = Seed(104);
  Tensors args = {Random(DType::kFloat32, {n}, seed), Zeros(DType::kFloat32, {n})};
  Interpret(p, args);
  ExpectClose(args[1], Table(n, [&](int64_t i) { return F32(args[0].GetDouble(i) - 3); }), kF32);
  ExpectTargetsMatch(p, {.seed = seed});
}

TEST(ConformanceKernel, WithoutGridExtentsRefusesABlockIndex) {
  ExpectRefused(kSource, "no_grid_bound", {{"N", "8"}},
                "T.Kernel without grid extents has no block index to bind");
}

TEST(ConformanceKernel, FourGridExtentsRefused) {
  ExpectRefused(kSource, "four_extents", {{"N", "8"}}, "T.Kernel takes 0 to 3 grid extents, got 4");
}

TEST(ConformanceAlloc, Shared) {
  const int64_t n = 200;
  for (const char* scope : {"shared", "shared.dyn"}) {
    ir::Program p = Compile(kSource, "shared", {{"N", "200"}, {"scope", Quoted(scope)}});
    const uint64_t seed = Seed(105);
    Tensors args = {Random(DType::kFloat32, {n}, seed), Zeros(DType::kFloat32, {n})};
    Interpret(p, args);
    ExpectClose(args[1],
                Table(n,
                      [&](int64_t k) {
                        int64_t base = k / 64 * 64, i = k % 64, r = base + 63 - i;
                        return F32((r < n ? args[0].GetDouble(r) : 0.0) + args[0].GetDouble(k));
                      }),
                kF32);
    ExpectTargetsMatch(p, {.seed = seed});
  }
}

TEST(ConformanceAlloc, UnknownScopeRefused) {
  ExpectRefused(kSource, "shared", {{"N", "200"}, {"scope", Quoted("register")}},
                "T.alloc_shared(scope=\"register\"): the scopes are \"shared\", \"shared.dyn\", "
                "\"local.fragment\", \"local\" and \"global\"");
}

TEST(ConformanceAlloc, Fragment) {
  const int64_t n = 150;
  ir::Program p = Compile(kSource, "fragment", {{"N", "150"}});
  const uint64_t seed = Seed(106);
  Tensors args = {Random(DType::kFloat16, {n}, seed), Zeros(DType::kFloat32, {n})};
  Interpret(p, args);
  ExpectClose(args[1], Table(n, [&](int64_t i) { return F32(args[0].GetDouble(i) * 3); }), kF32);
  ExpectTargetsMatch(p, {.seed = seed});
}

// T.alloc_local, and T.alloc_fragment with scope "local" (a local buffer).
TEST(ConformanceAlloc, Local) {
  const int64_t n = 140, k = 7;
  for (const char* how : {"alloc_local", "fragment_scope_local"}) {
    ir::Program p = Compile(kSource, "local", {{"N", "140"}, {"K", "7"}, {"how", Quoted(how)}});
    const uint64_t seed = Seed(107);
    Tensors args = {Random(DType::kFloat32, {n, k}, seed), Zeros(DType::kFloat32, {n})};
    Interpret(p, args);
    ExpectClose(args[1],
                Table(n,
                      [&](int64_t i) {
                        double even = 0, odd = 0;
                        for (int64_t j = 0; j < k; ++j)
                          (j % 2 ? odd : even) += args[0].GetDouble(i * k + j);
                        return even - odd;
                      }),
                kF32);
    ExpectTargetsMatch(p, {.seed = seed});
  }
}

TEST(ConformanceAlloc, VarWithInit) {
  const int64_t n = 150;
  ir::Program p = Compile(kSource, "var_init", {{"N", "150"}});
  const uint64_t seed = Seed(108);
  Tensors args = {Random(DType::kInt32, {n}, seed), Zeros(DType::kInt32, {n})};
  Interpret(p, args);
  std::vector<int64_t> want(n);
  for (int64_t i = 0; i < n; ++i) want[i] = args[0].GetInt(i) + 7 + 2 * args[0].GetInt(i / 64 * 64);
  ExpectEqualInts(args[1], want);
  ExpectTargetsMatch(p, {.seed = seed, .exact = true});
}

TEST(ConformanceCopy, Regions) {
  const int64_t m = 37, n = 70;
  ir::Program p = Compile(kSource, "copy_tile", {{"M", "37"}, {"N", "70"}});
  const uint64_t seed = Seed(109);
  Tensors args = {Random(DType::kFloat32, {m, n}, seed), Zeros(DType::kFloat32, {m, n}),
                  Zeros(DType::kFloat32, {48, 96})};
  Interpret(p, args);
  ExpectClose(args[1], Table(m * n, [&](int64_t k) { return F32(args[0].GetDouble(k) + 1); }),
              kF32);
  ExpectTargetsMatch(p, {.seed = seed}, kBothArchs);
}

TEST(ConformanceCopy, ClippingPadsWithZero) {
  const int64_t m = 37, n = 70;
  ir::Program p = Compile(kSource, "copy_tile", {{"M", "37"}, {"N", "70"}});
  const uint64_t seed = Seed(110);
  Tensors args = {Random(DType::kFloat32, {m, n}, seed), Zeros(DType::kFloat32, {m, n}),
                  Random(DType::kFloat32, {48, 96}, seed + 1)};
  Interpret(p, args);
  ExpectClose(args[2],
              Table(48 * 96,
                    [&](int64_t k) {
                      int64_t i = k / 96, j = k % 96;
                      return i < m && j < n ? F32(args[0].GetDouble(i * n + j) + 1) : 1.0;
                    }),
              kF32, "padded tile");
  ExpectTargetsMatch(p, {.seed = seed});
}

TEST(ConformanceCopy, SingleElements) {
  const int64_t n = 9;
  ir::Program p = Compile(kSource, "copy_elem", {{"N", "9"}});
  const uint64_t seed = Seed(111);
  Tensors args = {Random(DType::kFloat32, {n, 2}, seed), Zeros(DType::kFloat32, {2, n})};
  Interpret(p, args);
  ExpectClose(args[1],
              Table(2 * n,
                    [&](int64_t k) {
                      int64_t r = k / n, c = k % n;
                      return args[0].GetDouble(c * 2 + (1 - r));
                    }),
              {});
  ExpectTargetsMatch(p, {.seed = seed, .exact = true});
}

TEST(ConformanceFill, SharedAndFragment) {
  const int64_t m = 37, n = 70;
  ir::Program p = Compile(kSource, "fill", {{"M", "37"}, {"N", "70"}});
  const uint64_t seed = Seed(112);
  Tensors args = {Random(DType::kFloat32, {m, n}, seed), Random(DType::kFloat32, {m, n}, seed)};
  Interpret(p, args);
  ExpectClose(args[0], Table(m * n, [](int64_t) { return 2.5; }), {}, "B");
  ExpectClose(args[1], Table(m * n, [&](int64_t k) { return (k / n) / 16 - 2.5; }), {}, "C");
  ExpectTargetsMatch(p, {.seed = seed, .exact = true});
}

TEST(ConformanceFill, Clear) {
  const int64_t m = 37, n = 70;
  ir::Program p = Compile(kSource, "clear", {{"M", "37"}, {"N", "70"}});
  const uint64_t seed = Seed(113);
  Tensors args = {Random(DType::kFloat32, {m, n}, seed), Zeros(DType::kFloat32, {m, n})};
  Interpret(p, args);
  ExpectClose(args[1], Table(m * n, [&](int64_t k) { return args[0].GetDouble(k) * 0.5; }), {});
  ExpectTargetsMatch(p, {.seed = seed, .exact = true});
}

TEST(ConformanceAnnotate, SafeValue) {
  const int64_t n = 150;
  ir::Program p = Compile(kSource, "safe_value", {{"N", "150"}});
  const uint64_t seed = Seed(114);
  Tensors args = {Random(DType::kFloat32, {n}, seed), Zeros(DType::kFloat32, {192}),
                  Zeros(DType::kFloat32, {192})};
  Interpret(p, args);
  ExpectClose(args[1], Table(192, [&](int64_t i) { return i < n ? args[0].GetDouble(i) : -2.5; }),
              {}, "copy");
  ExpectClose(args[2],
              Table(192, [&](int64_t i) { return i + 3 < n ? args[0].GetDouble(i + 3) : -2.5; }),
              {}, "element loads");
  ExpectTargetsMatch(p, {.seed = seed, .exact = true});
}

TEST(ConformanceAnnotate, NegativeIndicesCountFromTheEnd) {
  const int64_t n = 16;
  ir::Program p = Compile(kSource, "negative_index", {{"N", "16"}});
  const uint64_t seed = Seed(115);
  Tensors args = {Random(DType::kFloat32, {n}, seed), Zeros(DType::kFloat32, {8})};
  Interpret(p, args);
  auto a = [&](int64_t i) { return args[0].GetDouble(i); };
  // j * 20 - 10 is -10 then 10: not provably negative, so -10 is out of
  // bounds (reads 0) and 10 reads A[10].
  ExpectClose(args[1], {a(15), a(14), a(15), a(14), a(13), a(13), 0.0, a(10)}, {});
  ExpectTargetsMatch(p, {.seed = seed, .exact = true});
}

TEST(ConformanceAnnotate, PaddingOfASharedBuffer) {
  const int64_t n = 70;
  ir::Program p = Compile(kSource, "padding");
  const uint64_t seed = Seed(116);
  Tensors args = {Random(DType::kFloat32, {n}, seed), Zeros(DType::kFloat32, {n}),
                  Zeros(DType::kFloat32, {n}), Zeros(DType::kFloat32, {n})};
  Interpret(p, args);
  auto a = [&](int64_t i) { return args[0].GetDouble(i); };
  ExpectClose(args[1], Table(n, [&](int64_t i) { return i >= 3 ? a(i - 3) : 7.0; }), {},
              "element stores into S");
  ExpectClose(args[2], Table(n, [&](int64_t i) { return i + 5 < n ? a(i + 5) : -1.0; }), {},
              "T.copy into R");
  ExpectClose(args[3], Table(n, [&](int64_t i) { return i + 5 < n ? a(i + 5) : 2.0; }), {},
              "A's own safe value");
  ExpectTargetsMatch(p, {.seed = seed, .dims = {{"n", n}}, .exact = true});
}

TEST(ConformanceAnnotate, SafeValueOfASharedBufferRefused) {
  ExpectRefused(kSource, "safe_value_shared", {{"N", "64"}},
                "T.annotate_safe_value: a key must be a global tensor, got");
}

// A 64 KB shared buffer in a three-stage pipeline takes 192 KB: more than
// sm_80's shared memory per block, refused when emitting with the bytes
// named; sm_90a has room for it.
TEST(ConformanceAlloc, SharedMemoryLimitPerTarget) {
  ir::Program p = Compile(kSource, "big_shared", {{"N", "16384"}, {"K", "3"}});
  absl::StatusOr<cuda::CudaSource> sm80 = ::tilec::testing::EmitFor(p, cuda::CudaArch::kSm80);
  ASSERT_FALSE(sm80.ok());
  EXPECT_NE(sm80.status().message().find(
                "needs 196608 bytes of shared memory; sm_80 allows 166912 per block (use smaller "
                "tiles or fewer pipeline stages)"),
            std::string::npos)
      << sm80.status();
  absl::StatusOr<cuda::CudaSource> sm90 = ::tilec::testing::EmitFor(p, cuda::CudaArch::kSm90a);
  EXPECT_TRUE(sm90.ok()) << sm90.status();
}

}  // namespace
}  // namespace tilec::conformance
