// Checked loads and stores of generated code (tl::gptr parameters and
// tl::smem_buffer shared buffers, tl/buffer.h) on the emulator: a one-element
// overflow of a global load, a global store, and a shared store into the next
// shared buffer are each reported with the buffer, the byte count, load or
// store, and the line of the source; in-bounds code runs unchanged; the
// optional uninitialised-shared-read mode.
#include <random>
#include <string>
#include <vector>

#include "compiler/targets/host/launch.h"
#include "compiler/targets/host/toolchain.h"
#include "gtest/gtest.h"
#include "tests/compiler/targets/host/kernel_testing.h"

namespace tilec::host {
namespace {

// Written as the emitter writes kernels. The `// @name` markers name lines
// the tests expect in messages.
constexpr char kKernels[] = R"cu(#include "tl/tl.h"

extern "C" __global__ void __launch_bounds__(64) shifted(
    tl::gptr<float> X,
    tl::gptr<float> Y,
    int load_shift, int store_shift, int shared_shift) {
  uint8_t* smem = tl::dynamic_smem();
  const int tx = threadIdx.x;
  auto A_shared = tl::smem_buffer<float>(smem, 0, 64, "A_shared");  // float32[64]
  auto B_shared = tl::smem_buffer<float>(smem, 256, 64, "B_shared");  // float32[64]
  B_shared[tx] = 1.0f;
  A_shared[tx] = X[tx + load_shift];  // @load
  tl::syncthreads();
  A_shared[tx + shared_shift] = 2.0f * float(A_shared[tx + shared_shift]);  // @shared
  tl::syncthreads();
  Y[tx + store_shift] = A_shared[tx] + B_shared[tx];  // @store
}

// Vector and async accesses through the checked overloads: a 16-byte copy of
// four floats per thread from X into A_shared (cp.async) and back to Y.
extern "C" __global__ void __launch_bounds__(16) vectors(
    tl::gptr<float> X,
    tl::gptr<float> Y,
    int shift) {
  uint8_t* smem = tl::dynamic_smem();
  const int tx = threadIdx.x;
  auto A_shared = tl::smem_buffer<float>(smem, 0, 64, "A_shared");
  auto B_shared = tl::smem_buffer<float>(smem, 256, 64, "B_shared");
  tl::cp_async_16(&A_shared[tx * 4 + shift], &X[tx * 4], true);  // @cp_async
  tl::cp_async_commit();
  tl::cp_async_wait<0>();
  tl::syncthreads();
  auto v = tl::load_vec<float, 4>(&A_shared[tx * 4]);
  tl::store_vec<float, 4>(&B_shared[tx * 4], v);
  tl::copy_vec<16>(&Y[tx * 4], &B_shared[tx * 4 + shift]);  // @copy_vec
}

// A 16-byte vector load from a float offset: misaligned unless shift % 4 == 0.
extern "C" __global__ void __launch_bounds__(8) misaligned(
    tl::gptr<float> X,
    tl::gptr<float> Y,
    int shift) {
  const int tx = threadIdx.x;
  auto v = tl::load_vec<float, 4>(&X[tx * 4 + shift]);
  tl::store_vec<float, 4>(&Y[tx * 4], v);
}

// Reads A_shared[tx ^ 1] after every thread but `skip` wrote its element.
extern "C" __global__ void __launch_bounds__(32) uninit(tl::gptr<float> Y, int skip) {
  uint8_t* smem = tl::dynamic_smem();
  const int tx = threadIdx.x;
  auto A_shared = tl::smem_buffer<float>(smem, 0, 32, "A_shared");
  if (tx != skip) A_shared[tx] = static_cast<float>(tx);
  tl::syncthreads();
  Y[tx] = A_shared[tx ^ 1];  // @uninit
}
)cu";

// "checked.cu:<line of the marker>:" for a `// @name` marker of kKernels.
std::string LineOf(const std::string& marker) { return MarkerLine(kKernels, "checked.cu", marker); }

const absl::StatusOr<HostModule>& Module() { return CompileOnce(kKernels, "checked.cu"); }

struct Buffers {
  std::vector<float> x, y;
  LaunchOptions options;
  explicit Buffers(size_t n) : x(n), y(n, -1.0f) {
    const uint32_t seed = std::random_device()();
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
    for (float& v : x) v = dist(rng);
    options.buffers = {{x.data(), x.size() * sizeof(float), "X"},
                       {y.data(), y.size() * sizeof(float), "Y"}};
  }
};

absl::Status RunShifted(Buffers& b, int load, int store, int shared) {
  float* px = b.x.data();
  float* py = b.y.data();
  return Launch(*Module(), "shifted", {1, 1, 1}, {64, 1, 1}, 512,
                {&px, &py, &load, &store, &shared}, b.options);
}

TEST(CheckedAccessTest, InBoundsCodeRunsUnchanged) {
  ASSERT_MODULE();
  Buffers b(64);
  absl::Status s = RunShifted(b, 0, 0, 0);
  ASSERT_TRUE(s.ok()) << s;
  for (int i = 0; i < 64; ++i) EXPECT_EQ(b.y[i], 2.0f * b.x[i] + 1.0f) << i;
}

TEST(CheckedAccessTest, GlobalLoadOneElementPastTheEnd) {
  ASSERT_MODULE();
  Buffers b(64);
  absl::Status s = RunShifted(b, 1, 0, 0);
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted);
  EXPECT_TRUE(Contains(s,
                       "kernel shifted, block (0, 0, 0), thread (63, 0, 0): out-of-bounds load "
                       "of 4 bytes at "))
      << s;
  EXPECT_TRUE(Contains(s, ": 4 bytes past the end of global buffer 'X' (256 bytes)")) << s;
  EXPECT_TRUE(Contains(s, " at " + LineOf("load"))) << s;
}

TEST(CheckedAccessTest, GlobalLoadBeforeTheStart) {
  ASSERT_MODULE();
  Buffers b(64);
  absl::Status s = RunShifted(b, -1, 0, 0);
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted);
  EXPECT_TRUE(Contains(s, "thread (0, 0, 0): out-of-bounds load of 4 bytes")) << s;
  EXPECT_TRUE(Contains(s, "4 bytes before the start of global buffer 'X'")) << s;
}

TEST(CheckedAccessTest, GlobalStoreOneElementPastTheEnd) {
  ASSERT_MODULE();
  Buffers b(64);
  absl::Status s = RunShifted(b, 0, 1, 0);
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted);
  EXPECT_TRUE(Contains(s, "thread (63, 0, 0): out-of-bounds store of 4 bytes at ")) << s;
  EXPECT_TRUE(Contains(s, ": 4 bytes past the end of global buffer 'Y' (256 bytes)")) << s;
  EXPECT_TRUE(Contains(s, " at " + LineOf("store"))) << s;
}

TEST(CheckedAccessTest, SharedAccessIntoTheNextSharedBuffer) {
  ASSERT_MODULE();
  Buffers b(64);
  // A_shared[64] is B_shared[0]: inside shared memory, outside A_shared. The
  // load on the same line comes first.
  absl::Status s = RunShifted(b, 0, 0, 1);
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted);
  EXPECT_TRUE(Contains(s,
                       "thread (63, 0, 0): out-of-bounds load of 4 bytes at shared offset 256: 4 "
                       "bytes past the end of shared buffer 'A_shared' (offset 0, 256 bytes)"))
      << s;
  EXPECT_TRUE(Contains(s, " at " + LineOf("shared"))) << s;
}

TEST(CheckedAccessTest, UnregisteredLaunchesCheckSharedBuffersOnly) {
  ASSERT_MODULE();
  Buffers b(65);  // one spare element: the shifted load stays in memory
  b.options.buffers.clear();
  EXPECT_TRUE(RunShifted(b, 1, 0, 0).ok());
  EXPECT_EQ(RunShifted(b, 0, 0, 1).code(), absl::StatusCode::kAborted);
}

TEST(CheckedAccessTest, VectorAndAsyncCopiesAreChecked) {
  ASSERT_MODULE();
  Buffers b(64);
  float* px = b.x.data();
  float* py = b.y.data();
  int shift = 0;
  absl::Status s =
      Launch(*Module(), "vectors", {1, 1, 1}, {16, 1, 1}, 512, {&px, &py, &shift}, b.options);
  ASSERT_TRUE(s.ok()) << s;
  for (int i = 0; i < 64; ++i) EXPECT_EQ(b.y[i], b.x[i]) << i;
  shift = 4;  // thread 15's 16 bytes land in B_shared
  s = Launch(*Module(), "vectors", {1, 1, 1}, {16, 1, 1}, 512, {&px, &py, &shift}, b.options);
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted);
  EXPECT_TRUE(Contains(s,
                       "thread (15, 0, 0): out-of-bounds store of 16 bytes at shared offset 256: "
                       "16 bytes past the end of shared buffer 'A_shared'"))
      << s;
  EXPECT_TRUE(Contains(s, " at " + LineOf("cp_async"))) << s;
}

// The GPU faults on a vector access at an address that is not a multiple of
// its size; the emulator must not quietly perform it.
TEST(CheckedAccessTest, MisalignedVectorAccessTraps) {
  ASSERT_MODULE();
  Buffers b(64);
  float* px = b.x.data();
  float* py = b.y.data();
  int shift = 4;
  absl::Status s =
      Launch(*Module(), "misaligned", {1, 1, 1}, {8, 1, 1}, 0, {&px, &py, &shift}, b.options);
  ASSERT_TRUE(s.ok()) << s;
  for (int i = 0; i < 32; ++i) EXPECT_EQ(b.y[i], b.x[i + 4]) << i;
  shift = 1;  // in bounds, 4 bytes off the 16-byte grid
  s = Launch(*Module(), "misaligned", {1, 1, 1}, {8, 1, 1}, 0, {&px, &py, &shift}, b.options);
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted);
  EXPECT_TRUE(Contains(s, "thread (0, 0, 0): misaligned 16-byte load_vec")) << s;
}

TEST(CheckedAccessTest, UninitialisedSharedReadsWhenAsked) {
  ASSERT_MODULE();
  std::vector<float> y(32);
  float* py = y.data();
  int skip = 6;
  LaunchOptions options;
  absl::Status s = Launch(*Module(), "uninit", {1, 1, 1}, {32, 1, 1}, 128, {&py, &skip}, options);
  EXPECT_TRUE(s.ok()) << "not checked unless asked: " << s;
  options.check_uninit = true;
  s = Launch(*Module(), "uninit", {1, 1, 1}, {32, 1, 1}, 128, {&py, &skip}, options);
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted);
  EXPECT_TRUE(Contains(s,
                       "thread (7, 0, 0): load of 4 bytes at shared offset 24 reads byte 24, "
                       "which no thread of the block has written"))
      << s;
  EXPECT_TRUE(Contains(s, " at " + LineOf("uninit"))) << s;
  skip = -1;
  s = Launch(*Module(), "uninit", {1, 1, 1}, {32, 1, 1}, 128, {&py, &skip}, options);
  EXPECT_TRUE(s.ok()) << s;
  for (int i = 0; i < 32; ++i) EXPECT_EQ(y[i], static_cast<float>(i ^ 1));
}

}  // namespace
}  // namespace tilec::host
