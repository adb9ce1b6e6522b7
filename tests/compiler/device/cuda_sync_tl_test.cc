// The CUDA side of tl/vote.h, tl/mbarrier.h and tl/buffer.h through real
// NVRTC compiles: votes map to VOTE, the mbarrier wrappers compile for the
// architectures the PTX ISA allows and the sm_90 ones fail on sm_80 with
// their message, and tl::gptr / tl::smem_buffer give exactly the SASS of
// `T* __restrict__` and a cast of the shared-memory base.
#include <string>

#include "absl/strings/str_replace.h"
#include "compiler/targets/cuda/nvrtc.h"
#include "compiler/targets/cuda/sass.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tilec::cuda {
namespace {

using ::testing::HasSubstr;

std::string Sass(const std::string& source, CudaArch arch) {
  absl::StatusOr<NvrtcResult> r = CompileCuda(source, "kernel.cu", arch);
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return "";
  absl::StatusOr<std::string> sass = DisassembleCubin(r->cubin);
  EXPECT_TRUE(sass.ok()) << sass.status();
  return sass.ok() ? *sass : "";
}

TEST(CudaSyncTl, VotesCompileToVote) {
  const std::string src = R"(#include "tl/tl.h"
extern "C" __global__ void votes(const int* __restrict__ p, unsigned* __restrict__ out) {
  const int tx = threadIdx.x;
  const unsigned mask = tl::activemask();
  out[tx] = tl::vote_ballot(mask, p[tx] > 0) + (tl::vote_all(0xffffffffu, p[tx] > 1) ? 1u : 0u) +
            (tl::vote_any(0x0000ffffu, p[tx] > 2) ? 2u : 0u);
}
)";
  for (CudaArch arch : {CudaArch::kSm80, CudaArch::kSm90a}) {
    const std::string sass = Sass(src, arch);
    EXPECT_GT(CountOpcode(sass, "VOTE"), 0) << sass;
  }
}

constexpr char kMbarrierSm80[] = R"(#include "tl/tl.h"
extern "C" __global__ void mbar(int* __restrict__ out) {
  uint8_t* smem = tl::dynamic_smem();
  uint64_t* bar = tl::smem_buffer<uint64_t>(smem, 0, 1, "bar");
  if (threadIdx.x == 0) tl::mbarrier_init(bar, blockDim.x);
  tl::syncthreads();
  const uint64_t token = tl::mbarrier_arrive(bar);
  while (!tl::mbarrier_test_wait(bar, token)) {
  }
  tl::mbarrier_wait_parity(bar, 0);
  out[threadIdx.x] = tl::mbarrier_test_wait_parity(bar, 1);
  tl::syncthreads();
  if (threadIdx.x == 0) tl::mbarrier_inval(bar);
}
)";

constexpr char kMbarrierSm90[] = R"(#include "tl/tl.h"
extern "C" __global__ void mbar(int* __restrict__ out) {
  uint8_t* smem = tl::dynamic_smem();
  uint64_t* bar = tl::smem_buffer<uint64_t>(smem, 0, 1, "bar");
  if (threadIdx.x == 0) tl::mbarrier_init(bar, blockDim.x);
  tl::syncthreads();
  if (threadIdx.x == 0) tl::mbarrier_expect_tx(bar, 64);
  uint64_t token = threadIdx.x == 0 ? tl::mbarrier_arrive_expect_tx(bar, 64)
                                    : tl::mbarrier_arrive(bar, 1);
  if (threadIdx.x == 0) tl::mbarrier_complete_tx(bar, 128);
  while (!tl::mbarrier_try_wait(bar, token)) {
  }
  out[threadIdx.x] = tl::mbarrier_try_wait_parity(bar, 0);
}
)";

TEST(CudaSyncTl, MbarriersCompileForTheirArchitectures) {
  for (CudaArch arch : {CudaArch::kSm80, CudaArch::kSm90a}) {
    absl::StatusOr<NvrtcResult> r = CompileCuda(kMbarrierSm80, "kernel.cu", arch);
    EXPECT_TRUE(r.ok()) << r.status();
  }
  absl::StatusOr<NvrtcResult> r = CompileCuda(kMbarrierSm90, "kernel.cu", CudaArch::kSm90a);
  EXPECT_TRUE(r.ok()) << r.status();
  r = CompileCuda(kMbarrierSm90, "kernel.cu", CudaArch::kSm80);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("tl::mbarrier_expect_tx needs sm_90 or later"));
}

TEST(CudaSyncTl, CheckedSpellingsGiveTheSassOfRawPointers) {
  const std::string checked = R"(#include "tl/tl.h"
extern "C" __global__ void __launch_bounds__(128) k(
    tl::gptr<tl::half_t> A,
    tl::gptr<float> B) {
  uint8_t* smem = tl::dynamic_smem();
  const int tx = threadIdx.x;
  auto A_shared = tl::smem_buffer<tl::half_t>(smem, 0, 1024, "A_shared");
  auto B_shared = tl::smem_buffer<float>(smem, 2048, 128, "B_shared");
  tl::copy_vec<16>(&A_shared[tx * 8], &A[blockIdx.x * 1024 + tx * 8]);
  B_shared[tx] = float(A[blockIdx.x * 1024 + tx]);
  tl::syncthreads();
  B[blockIdx.x * 128 + tx] = B_shared[127 - tx] + float(A_shared[(tx * 8 + 3) % 1024]);
}
)";
  const std::string raw = absl::StrReplaceAll(
      checked, {{"tl::gptr<tl::half_t>", "tl::half_t* __restrict__"},
                {"tl::gptr<float>", "float* __restrict__"},
                {"auto A_shared = tl::smem_buffer<tl::half_t>(smem, 0, 1024, \"A_shared\");",
                 "tl::half_t* A_shared = reinterpret_cast<tl::half_t*>(smem + 0);"},
                {"auto B_shared = tl::smem_buffer<float>(smem, 2048, 128, \"B_shared\");",
                 "float* B_shared = reinterpret_cast<float*>(smem + 2048);"}});
  ASSERT_NE(raw, checked);
  for (CudaArch arch : {CudaArch::kSm80, CudaArch::kSm90a}) {
    const std::string a = Sass(checked, arch), b = Sass(raw, arch);
    ASSERT_FALSE(a.empty());
    EXPECT_EQ(a, b);
    EXPECT_GT(CountOpcode(a, "LDG"), 0);
    EXPECT_FALSE(CountLocalMemoryTraffic(a).any());
  }
}

}  // namespace
}  // namespace tilec::cuda
