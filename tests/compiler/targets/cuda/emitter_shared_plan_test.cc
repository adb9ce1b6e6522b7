// The shared-memory plan in emitted code: buffers whose lifetimes do not
// overlap share bytes, so a kernel whose shared buffers add up to more than
// a block may use fits when no more than a block's worth is live at once;
// the block barrier between the last reader of a buffer and the first
// writer of the buffer placed on its bytes is emitted; the plan is reported
// in the artifact. Emulator against the interpreter on random inputs at
// ragged sizes, both architectures, NVRTC compiling what is emitted.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "compiler/targets/cuda/artifact.h"
#include "compiler/targets/cuda/emitter.h"
#include "compiler/targets/cuda/nvrtc.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/compiler/targets/cuda/emit_testing.h"

namespace tilec::cuda {
namespace {

using ::testing::HasSubstr;
using ::tilec::testing::CompileSource;
using ::tilec::testing::EmitFor;
using ::tilec::testing::ExpectEmulatorMatchesInterpreter;
using ::tilec::testing::TestSeed;

// Five 64 x 256 buffers (four float32 of 64 KiB, one float16 of 32 KiB):
// 288 KiB side by side, more than either architecture allows; at most
// 160 KiB are live at once. Top-level statements: 0-5 allocations, 6 A_s
// filled, 7 B_s from A_s, 8 C_s from B_s, 9 C_s out, 10 D_s from B_s and
// C_s, 11 E_s from X (E_s takes the bytes of B_s, whose last reader is
// statement 10: only the plan's aliasing puts a barrier between them), 12
// out from D_s and E_s. Each nest reads elements other threads wrote.
constexpr char kPhases[] = R"(
import tilelang.language as T

def phases(M, N=256, bm=64):
    @T.prim_func
    def main(X: T.Tensor((M, N), "float32"), Y: T.Tensor((M, N), "float16"),
             Z: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, bm), threads=128) as bx:
            A_s = T.alloc_shared((bm, N), "float32")
            B_s = T.alloc_shared((bm, N), "float32")
            C_s = T.alloc_shared((bm, N), "float16")
            D_s = T.alloc_shared((bm, N), "float32")
            E_s = T.alloc_shared((bm, N), "float32")
            unused = T.alloc_fragment((bm,), "float32")
            T.copy(X[bx * bm, 0], A_s)
            for i, j in T.Parallel(bm, N):
                B_s[i, j] = A_s[i, N - 1 - j] * 2.0
            for i, j in T.Parallel(bm, N):
                C_s[i, j] = B_s[bm - 1 - i, j]
            T.copy(C_s, Y[bx * bm, 0])
            for i, j in T.Parallel(bm, N):
                D_s[i, j] = C_s[i, N - 1 - j] + B_s[bm - 1 - i, (j + 7) % N]
            for i, j in T.Parallel(bm, N):
                if bx * bm + i < M:
                    E_s[i, j] = X[bx * bm + i, j] * 3.0
                else:
                    E_s[i, j] = 0.0
            for i, j in T.Parallel(bm, N):
                if bx * bm + i < M:
                    Z[bx * bm + i, j] = D_s[bm - 1 - i, j] + E_s[i, N - 1 - j]
    return main
)";

TEST(SharedPlan, FitsWhatSideBySideWouldNotAndMatchesTheInterpreter) {
  absl::StatusOr<ir::Program> p = CompileSource("phases.py", kPhases, "phases", {{"M", "100"}});
  ASSERT_TRUE(p.ok()) << p.status();
  for (CudaArch arch : {CudaArch::kSm80, CudaArch::kSm90a}) {
    absl::StatusOr<CudaSource> src = EmitFor(*p, arch);
    ASSERT_TRUE(src.ok()) << src.status();
    ASSERT_EQ(src->kernels.size(), 1u);
    const CudaKernel& k = src->kernels[0];
    EXPECT_EQ(k.smem_bytes, 160 * 1024);
    ASSERT_EQ(k.shared.size(), 5u);
    std::map<std::string, CudaKernel::SharedBuffer> by_name;
    for (const CudaKernel::SharedBuffer& b : k.shared) by_name[b.name] = b;
    EXPECT_EQ(by_name["E_s"].offset, by_name["B_s"].offset) << src->code;
    EXPECT_EQ(by_name["D_s"].offset, by_name["A_s"].offset) << src->code;
    EXPECT_EQ(by_name["B_s"].first, 7);
    EXPECT_EQ(by_name["B_s"].last, 10);
    EXPECT_EQ(by_name["E_s"].first, 11);
    absl::StatusOr<NvrtcResult> cubin = CompileCuda(src->code, p->name + ".cu", arch);
    EXPECT_TRUE(cubin.ok()) << cubin.status();
    ExpectEmulatorMatchesInterpreter(*p, *src, {.seed = TestSeed(20261126), .written = {"Y", "Z"}});
  }
}

// The barrier only the aliasing asks for: between the nest that last reads
// B_s and the nest that writes E_s (which reads no shared memory).
TEST(SharedPlan, BarrierBeforeWritingTheBytesOfADeadBuffer) {
  absl::StatusOr<ir::Program> p = CompileSource("phases.py", kPhases, "phases", {{"M", "128"}});
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<CudaSource> src = EmitFor(*p, CudaArch::kSm80);
  ASSERT_TRUE(src.ok()) << src.status();
  const std::string& code = src->code;
  size_t e_write = code.find("E_s[");
  ASSERT_NE(e_write, std::string::npos) << code;
  size_t d_write = code.rfind("D_s[", e_write);
  ASSERT_NE(d_write, std::string::npos) << code;
  EXPECT_NE(code.substr(d_write, e_write - d_write).find("tl::syncthreads();"), std::string::npos)
      << code;
}

TEST(SharedPlan, TheArtifactReportsThePlan) {
  absl::StatusOr<ir::Program> p = CompileSource("phases.py", kPhases, "phases", {{"M", "128"}});
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<CudaArtifact> a = BuildCudaArtifact(*p, CudaTarget::ForArch(CudaArch::kSm90a));
  ASSERT_TRUE(a.ok()) << a.status();
  const std::string json = CudaArtifactMetadataJson(*a);
  EXPECT_THAT(json, HasSubstr("\"shared\": [{\"buffer\": \"A_s\", \"offset\": 0, \"bytes\": "
                              "65536, \"live\": [6, 7]}"))
      << json;
  EXPECT_THAT(json, HasSubstr("\"smem_bytes\": 163840")) << json;
}

// Side by side the same buffers do not fit, and the message says so.
TEST(SharedPlan, LiveBuffersThatDoNotFitAreRefused) {
  constexpr char kAllLive[] = R"(
import tilelang.language as T

def all_live(M, N=256, bm=64):
    @T.prim_func
    def main(X: T.Tensor((M, N), "float32"), Z: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, bm), threads=128) as bx:
            A_s = T.alloc_shared((bm, N), "float32")
            B_s = T.alloc_shared((bm, N), "float32")
            C_s = T.alloc_shared((bm, N), "float32")
            T.copy(X[bx * bm, 0], A_s)
            T.copy(X[bx * bm, 0], B_s)
            T.copy(X[bx * bm, 0], C_s)
            for i, j in T.Parallel(bm, N):
                Z[bx * bm + i, j] = A_s[i, j] + B_s[i, j] + C_s[i, j]
    return main
)";
  absl::StatusOr<ir::Program> p = CompileSource("all_live.py", kAllLive, "all_live", {{"M", "64"}});
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<CudaSource> src = EmitFor(*p, CudaArch::kSm80);
  ASSERT_FALSE(src.ok());
  EXPECT_THAT(std::string(src.status().message()), HasSubstr("196608 bytes")) << src.status();
}

}  // namespace
}  // namespace tilec::cuda
