// Views of shared and fragment buffers (T.reshape, T.view): element
// accesses and copies through a view, and tile operations on a view (a
// reduction, an in-place scan, a gemm operand). The interpreter is checked
// against a float64 reference computed here; the code emitted for sm_80 runs
// on the SIMT emulator against the interpreter, on random inputs with shapes
// that do not divide the thread count.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "compiler/interp/interp.h"
#include "compiler/targets/cuda/emitter.h"
#include "compiler/targets/cuda/nvrtc.h"
#include "gtest/gtest.h"
#include "tests/compiler/targets/cuda/emit_testing.h"

namespace tilec::cuda {
namespace {

constexpr char kViews[] = R"(
import tilelang.language as T

def shared_reshape(N, M):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N // M, M), "float32")):
        with T.Kernel(1, threads=64):
            A_shared = T.alloc_shared((N,), "float32")
            A_rows = T.reshape(A_shared, [N // M, M])
            T.copy(A, A_shared)
            for i, j in T.Parallel(N // M, M):
                A_rows[i, j] = A_rows[i, j] * 2.0 + T.cast(j, "float32")
            T.copy(A_rows, B)
    return main

def fragment_reduce(rows, cols):
    @T.prim_func
    def main(A: T.Tensor((rows * cols,), "float32"), S: T.Tensor((rows,), "float32"),
             C: T.Tensor((rows, cols), "float32")):
        with T.Kernel(1, threads=128):
            flat = T.alloc_fragment((rows * cols,), "float32")
            m = T.alloc_fragment((rows,), "float32")
            T.copy(A, flat)
            tile = T.reshape(flat, (rows, cols))
            T.reduce_max(tile, m, dim=1)
            for i, j in T.Parallel(rows, cols):
                tile[i, j] = tile[i, j] - m[i]
            T.copy(m, S)
            T.copy(tile, C)
    return main

def shared_cumsum(H):
    num_tokens = T.dynamic("num_tokens")

    @T.prim_func
    def main(x: T.Tensor((num_tokens, H), "float32"), y: T.Tensor((num_tokens, H), "float32")):
        with T.Kernel(num_tokens, threads=128) as pid:
            smem = T.alloc_shared((H,), "float32")
            T.copy(x[pid, :], smem)
            T.cumsum(T.view(smem, (1, H)), dim=1)
            T.copy(smem, y[pid, :])
    return main

# Views that read the bits of another dtype: f32 as f16 (two per element),
# f16 as f32 (two elements each), and a store through an f32 view of an f16
# tensor; T.reinterpret of values, in both argument orders.
def bit_views(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), H: T.Tensor((2 * N,), "float16"),
             B: T.Tensor((N // 32, 64), "float16"), C: T.Tensor((N // 32, 16), "float32"),
             D: T.Tensor((N,), "float16"), U: T.Tensor((N,), "uint32")):
        with T.Kernel(1, threads=128):
            T.copy(T.view(A, (N // 32, 64), dtype="float16"), B)
            T.copy(T.view(H, (N // 32, 16), dtype="float32"), C)
            D_as_f32 = T.view(D, (N // 2,), dtype="float32")
            for i in T.Parallel(N // 2):
                D_as_f32[i] = A[i] * 2.0
            for i in T.Parallel(N):
                U[i] = T.reinterpret(A[i], "uint32") ^ T.reinterpret("uint32", A[N - 1 - i])
    return main

def narrow_store(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=128):
            A_as_f16 = T.view(A, (2 * N,), dtype="float16")
            for i in T.Parallel(2 * N):
                A_as_f16[i] = 1.0
    return main

def view_gemm(M, N, K):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"),
             C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128):
            A_flat = T.alloc_shared((M * K,), "float16")
            B_s = T.alloc_shared((K, N), "float16")
            acc = T.alloc_fragment((M, N), "float32")
            A_s = T.view(A_flat, (M, K))
            T.copy(A, A_s)
            T.copy(B, B_s)
            T.clear(acc)
            T.gemm(A_s, B_s, acc)
            T.copy(acc, C)
    return main
)";

ir::Program Compile(const std::string& function, const ::tilec::testing::BindingList& bindings) {
  absl::StatusOr<ir::Program> p =
      ::tilec::testing::CompileSource("views.py", kViews, function, bindings);
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? *p : ir::Program{};
}

void ExpectEmulatorMatches(const ir::Program& p, std::map<std::string, int64_t> dims = {}) {
  absl::StatusOr<CudaSource> src = ::tilec::testing::EmitFor(p, CudaArch::kSm80);
  ASSERT_TRUE(src.ok()) << src.status();
  ::tilec::testing::ExpectEmulatorMatchesInterpreter(
      p, *src, {.seed = ::tilec::testing::TestSeed(11), .dims = std::move(dims)});
}

TEST(EmittedViews, ElementAccessesThroughAReshapedSharedBuffer) {
  ir::Program p = Compile("shared_reshape", {{"N", "480"}, {"M", "24"}});
  uint64_t seed = ::tilec::testing::TestSeed(5);
  std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
  std::vector<interp::Tensor> args = {interp::RandomTensor(ir::DType::kFloat32, {480}, seed),
                                      interp::Tensor(ir::DType::kFloat32, {20, 24})};
  ASSERT_TRUE(interp::RunProgram(p, args).ok());
  for (int64_t k = 0; k < 480; ++k) {
    float a = static_cast<float>(args[0].GetDouble(k));
    EXPECT_EQ(args[1].GetDouble(k), a * 2.0f + static_cast<float>(k % 24)) << "element " << k;
  }
  ExpectEmulatorMatches(p);
}

TEST(EmittedViews, ReductionOnAReshapedFragment) {
  ir::Program p = Compile("fragment_reduce", {{"rows", "6"}, {"cols", "40"}});
  uint64_t seed = ::tilec::testing::TestSeed(6);
  std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
  std::vector<interp::Tensor> args = {interp::RandomTensor(ir::DType::kFloat32, {240}, seed),
                                      interp::Tensor(ir::DType::kFloat32, {6}),
                                      interp::Tensor(ir::DType::kFloat32, {6, 40})};
  ASSERT_TRUE(interp::RunProgram(p, args).ok());
  for (int64_t r = 0; r < 6; ++r) {
    double best = -INFINITY;
    for (int64_t c = 0; c < 40; ++c) best = std::max(best, args[0].GetDouble(r * 40 + c));
    EXPECT_EQ(args[1].GetDouble(r), best) << "row " << r;
    for (int64_t c = 0; c < 40; ++c) {
      EXPECT_EQ(args[2].GetDouble(r * 40 + c),
                static_cast<float>(args[0].GetDouble(r * 40 + c) - best));
    }
  }
  ExpectEmulatorMatches(p);
}

TEST(EmittedViews, InPlaceScanOnAViewOfASharedBuffer) {
  ir::Program p = Compile("shared_cumsum", {{"H", "100"}});
  uint64_t seed = ::tilec::testing::TestSeed(7);
  std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
  std::vector<interp::Tensor> args = {interp::RandomTensor(ir::DType::kFloat32, {3, 100}, seed),
                                      interp::Tensor(ir::DType::kFloat32, {3, 100})};
  ASSERT_TRUE(interp::RunProgram(p, args).ok());
  for (int64_t t = 0; t < 3; ++t) {
    double sum = 0;
    for (int64_t h = 0; h < 100; ++h) {
      sum += args[0].GetDouble(t * 100 + h);
      EXPECT_NEAR(args[1].GetDouble(t * 100 + h), sum, 1e-4 * (1 + std::fabs(sum)))
          << "token " << t << " element " << h;
    }
  }
  ExpectEmulatorMatches(p, {{"num_tokens", 3}});
}

TEST(EmittedViews, GemmOperandThroughAView) {
  ir::Program p = Compile("view_gemm", {{"M", "64"}, {"N", "32"}, {"K", "48"}});
  uint64_t seed = ::tilec::testing::TestSeed(8);
  std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
  std::vector<interp::Tensor> args = {interp::RandomTensor(ir::DType::kFloat16, {64, 48}, seed),
                                      interp::RandomTensor(ir::DType::kFloat16, {48, 32}, seed + 1),
                                      interp::Tensor(ir::DType::kFloat32, {64, 32})};
  ASSERT_TRUE(interp::RunProgram(p, args).ok());
  for (int64_t i = 0; i < 64; ++i) {
    for (int64_t j = 0; j < 32; ++j) {
      double ref = 0;
      for (int64_t k = 0; k < 48; ++k) {
        ref += args[0].GetDouble(i * 48 + k) * args[1].GetDouble(k * 32 + j);
      }
      EXPECT_NEAR(args[2].GetDouble(i * 32 + j), ref, 1e-3 * (1 + std::fabs(ref)));
    }
  }
  ExpectEmulatorMatches(p);
}

TEST(EmittedViews, ViewsOfAnotherDtypeReadAndWriteTheBits) {
  const int64_t n = 256;
  ir::Program p = Compile("bit_views", {{"N", "256"}});
  const uint64_t seed = ::tilec::testing::TestSeed(9);
  std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
  std::vector<interp::Tensor> args = {interp::RandomTensor(ir::DType::kFloat32, {n}, seed),
                                      interp::RandomTensor(ir::DType::kFloat16, {2 * n}, seed + 1),
                                      interp::Tensor(ir::DType::kFloat16, {n / 32, 64}),
                                      interp::Tensor(ir::DType::kFloat32, {n / 32, 16}),
                                      interp::RandomTensor(ir::DType::kFloat16, {n}, seed + 2),
                                      interp::Tensor(ir::DType::kUInt32, {n})};
  ASSERT_TRUE(interp::RunProgram(p, args).ok());
  auto bytes_of = [](const interp::Tensor& t, int64_t offset, int64_t count) {
    uint64_t v = 0;
    for (int64_t k = count; k-- > 0;) v = v << 8 | t.bytes()[offset + k];  // little-endian
    return v;
  };
  for (int64_t k = 0; k < 2 * n; ++k) {
    EXPECT_EQ(args[2].GetBits(k), bytes_of(args[0], 2 * k, 2)) << "B element " << k;
  }
  for (int64_t k = 0; k < n / 2; ++k) {
    EXPECT_EQ(args[3].GetBits(k), bytes_of(args[1], 4 * k, 4)) << "C element " << k;
  }
  for (int64_t k = 0; k < n / 2; ++k) {
    float twice = static_cast<float>(args[0].GetDouble(k)) * 2.0f;
    uint32_t bits;
    std::memcpy(&bits, &twice, 4);
    EXPECT_EQ(bytes_of(args[4], 4 * k, 4), bits) << "D word " << k;
  }
  for (int64_t k = 0; k < n; ++k) {
    EXPECT_EQ(args[5].GetBits(k), args[0].GetBits(k) ^ args[0].GetBits(n - 1 - k)) << k;
  }
  ExpectEmulatorMatches(p);
  // The bit casts compile for the GPU too.
  for (CudaArch arch : {CudaArch::kSm80, CudaArch::kSm90a}) {
    absl::StatusOr<CudaSource> src = ::tilec::testing::EmitFor(p, arch);
    ASSERT_TRUE(src.ok()) << src.status();
    absl::StatusOr<NvrtcResult> cubin = CompileCuda(src->code, p.name + ".cu", arch);
    EXPECT_TRUE(cubin.ok()) << cubin.status();
  }
}

TEST(EmittedViews, AStoreThroughANarrowerViewIsRefused) {
  absl::StatusOr<ir::Program> p =
      ::tilec::testing::CompileSource("views.py", kViews, "narrow_store", {{"N", "64"}});
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("would write part of an element of `A`"), std::string::npos)
      << p.status();
}

// A view keeps its base's element count; a view of a T.alloc_var is refused.
TEST(EmittedViews, ViewsThatCannotBeMadeAreRefused) {
  constexpr char kBad[] = R"(
import tilelang.language as T

def bad(kind):
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64):
            s = T.alloc_shared((64,), "float32")
            v = T.alloc_var("float32")
            if kind == 0:
                w = T.reshape(s, (8, 4))
            else:
                w = T.view(v, (1,))
            T.copy(A, s)
    return main
)";
  absl::StatusOr<ir::Program> p =
      ::tilec::testing::CompileSource("bad.py", kBad, "bad", {{"kind", "0"}});
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("shared buffer `s` (64 elements) must have as many"),
            std::string::npos)
      << p.status();
  p = ::tilec::testing::CompileSource("bad.py", kBad, "bad", {{"kind", "1"}});
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("T.view of the variable `v`"), std::string::npos)
      << p.status();
}

}  // namespace
}  // namespace tilec::cuda
