// Kernels written against the device library's API (the same CUDA C++ the
// emitter produces), built with the real clang-19 host toolchain and run on
// the emulator: each primitive's lane-by-lane results against the PTX ISA's
// documented layouts, the common gemm template end to end, and every check
// the emulator makes.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "compiler/device/host/tl/types.h"
#include "compiler/targets/host/launch.h"
#include "compiler/targets/host/toolchain.h"
#include "gtest/gtest.h"
#include "tests/compiler/targets/host/kernel_testing.h"

namespace tilec::host {
namespace {

constexpr char kKernels[] = R"cu(
#include <stdexcept>
#include "tl/tl.h"

// Loads each lane's m16n8k16 fragments from row-major A[16][16], B[16][8]
// (k, n) and C[16][8] by the documented layout, runs the mma and stores D the
// same way. `broken` swaps a[1] and a[2], the classic layout slip.
template <typename T, bool Bf16>
__device__ __forceinline__ void mma_probe(const T* A, const T* B, const float* C, float* D,
                                          int broken) {
  const int lane = threadIdx.x % 32, g = lane >> 2, q = lane & 3;
  uint32_t a[4], b[2];
  float c[4], d[4];
  for (int r = 0; r < 4; ++r) {
    const int row = g + (r & 1) * 8, col = 2 * q + (r >> 1) * 8;
    a[r] = tl::detail::pack_b16x2(A[row * 16 + col], A[row * 16 + col + 1]);
  }
  if (broken) {
    const uint32_t t = a[1];
    a[1] = a[2];
    a[2] = t;
  }
  for (int r = 0; r < 2; ++r) {
    const int k = 2 * q + r * 8;
    b[r] = tl::detail::pack_b16x2(B[k * 8 + g], B[(k + 1) * 8 + g]);
  }
  for (int i = 0; i < 4; ++i) c[i] = C[(g + (i / 2) * 8) * 8 + 2 * q + i % 2];
  if (Bf16) {
    tl::mma_m16n8k16_bf16f32(d, a, b, c);
  } else {
    tl::mma_m16n8k16_f16f32(d, a, b, c);
  }
  for (int i = 0; i < 4; ++i) D[(g + (i / 2) * 8) * 8 + 2 * q + i % 2] = d[i];
}

extern "C" __global__ void __launch_bounds__(32) mma_f16(
    const tl::half_t* __restrict__ A, const tl::half_t* __restrict__ B,
    const float* __restrict__ C, float* __restrict__ D, int broken) {
  mma_probe<tl::half_t, false>(A, B, C, D, broken);
}

extern "C" __global__ void __launch_bounds__(32) mma_bf16(
    const tl::bfloat16_t* __restrict__ A, const tl::bfloat16_t* __restrict__ B,
    const float* __restrict__ C, float* __restrict__ D, int broken) {
  mma_probe<tl::bfloat16_t, true>(A, B, C, D, broken);
}

// Four 8x8 matrices of 16-bit values copied to shared memory (matrix m row r
// at element m * 64 + r * 8), then one ldmatrix; each lane stores its
// registers to out[lane * 4 + j].
extern "C" __global__ void ldmatrix_probe(const uint16_t* __restrict__ src,
                                          uint32_t* __restrict__ out, int num, int trans) {
  uint16_t* s = reinterpret_cast<uint16_t*>(tl::dynamic_smem());
  const int lane = threadIdx.x;
  for (int i = lane; i < 4 * 64; i += 32) s[i] = src[i];
  tl::syncthreads();
  const void* row = s + (lane / 8) * 64 + (lane % 8) * 8;
  uint32_t r[4] = {0, 0, 0, 0};
  if (num == 1) {
    uint32_t x[1];
    if (trans) tl::ldmatrix_x1_trans(x, row); else tl::ldmatrix_x1(x, row);
    r[0] = x[0];
  } else if (num == 2) {
    uint32_t x[2];
    if (trans) tl::ldmatrix_x2_trans(x, row); else tl::ldmatrix_x2(x, row);
    r[0] = x[0], r[1] = x[1];
  } else {
    if (trans) tl::ldmatrix_x4_trans(r, row); else tl::ldmatrix_x4(r, row);
  }
  for (int j = 0; j < 4; ++j) out[lane * 4 + j] = r[j];
}

// Shuffles in every warp of the block.
extern "C" __global__ void shfl_probe(const float* __restrict__ in, float* __restrict__ xor_out,
                                      int* __restrict__ idx_out, float* __restrict__ sum8,
                                      float* __restrict__ max32, int mask) {
  const int t = threadIdx.x, lane = t % 32;
  const float v = in[t];
  xor_out[t] = tl::shfl_xor(v, mask);
  idx_out[t] = tl::shfl_sync(t * 10, (lane * 7) % 32);
  sum8[t] = tl::warp_allreduce<tl::SumOp, 8>(v);
  max32[t] = tl::warp_allreduce<tl::MaxOp, 32>(v);
}

// Two cp.async groups of 32 x 16 bytes each; reads shared memory before any
// wait, after wait_group 1 and after wait_group 0. Thread `zero_lane` issues
// its second copy with pred = false (zero fill).
extern "C" __global__ void cp_async_probe(const float* __restrict__ src,
                                          float* __restrict__ before, float* __restrict__ mid,
                                          float* __restrict__ after, int zero_lane) {
  float* s = reinterpret_cast<float*>(tl::dynamic_smem());
  const int t = threadIdx.x;
  tl::cp_async_16(s + t * 4, src + t * 4, true);
  tl::cp_async_commit();
  tl::cp_async_16(s + 128 + t * 4, src + 128 + t * 4, t != zero_lane);
  tl::cp_async_commit();
  for (int i = 0; i < 4; ++i) before[t * 4 + i] = s[t * 4 + i];
  tl::cp_async_wait<1>();
  for (int i = 0; i < 4; ++i) {
    mid[t * 4 + i] = s[t * 4 + i];
    mid[128 + t * 4 + i] = s[128 + t * 4 + i];
  }
  tl::cp_async_wait<0>();
  for (int i = 0; i < 4; ++i) {
    after[t * 4 + i] = s[t * 4 + i];
    after[128 + t * 4 + i] = s[128 + t * 4 + i];
  }
}

// Each thread copies 16 bytes of src[t * 4 ..] while t * 4 < limit.
extern "C" __global__ void cp_async_bounded(const float* __restrict__ src, int limit) {
  float* s = reinterpret_cast<float*>(tl::dynamic_smem());
  const int t = threadIdx.x;
  tl::cp_async_16(s + t * 4, src + t * 4, t * 4 < limit);
  tl::cp_async_commit();
  tl::cp_async_wait<0>();
}

extern "C" __global__ void cp_async_misaligned(const float* __restrict__ src) {
  float* s = reinterpret_cast<float*>(tl::dynamic_smem());
  tl::cp_async_16(s + 1, src, true);
}

extern "C" __global__ void indices(int* __restrict__ out) {
  const int b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  const int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const int nt = blockDim.x * blockDim.y * blockDim.z;
  out[(b * nt + t) * 2] = threadIdx.x * 10000 + threadIdx.y * 100 + threadIdx.z;
  out[(b * nt + t) * 2 + 1] = blockIdx.x * 10000 + blockIdx.y * 100 + blockIdx.z;
}

// Thread t writes t to shared memory, then reads its neighbour's slot after
// the barrier (a missing barrier would read poison for most threads).
extern "C" __global__ void barrier_exchange(int* __restrict__ out) {
  int* s = reinterpret_cast<int*>(tl::dynamic_smem());
  const int t = threadIdx.x, n = blockDim.x;
  s[t] = t * 3;
  tl::syncthreads();
  out[blockIdx.x * n + t] = s[(t + 1) % n];
  tl::syncthreads();
  s[t] = -1;
}

extern "C" __global__ void read_poison(uint32_t* __restrict__ out) {
  out[threadIdx.x] = reinterpret_cast<uint32_t*>(tl::dynamic_smem())[threadIdx.x];
}

extern "C" __global__ void atomics(int32_t* counter, float* fsum, double* dsum,
                                   tl::half_t* hsum, int32_t* olds) {
  const int old = tl::atomic_add(counter, 1);
  tl::atomic_add(fsum, 0.5f);
  tl::atomic_add(dsum, 0.25);
  if (threadIdx.x == 0) tl::atomic_add(hsum, tl::half_t(1.0f));
  olds[old] = 1;  // every old value is seen exactly once
}

// Records the order blocks run in: order[k] is the linear id of the k-th.
extern "C" __global__ void block_order(int32_t* counter, int32_t* order) {
  if (threadIdx.x == 0) {
    order[tl::atomic_add(counter, 1)] = blockIdx.x + gridDim.x * blockIdx.y;
  }
}

extern "C" __global__ void early_exit(float* out) {
  if (threadIdx.x >= 32) return;
  tl::syncthreads();
  out[threadIdx.x] = 1.0f;
}

extern "C" __global__ void shfl_partial(float* out) {
  if (threadIdx.x % 32 >= 16) return;
  out[threadIdx.x] = tl::shfl_xor(1.0f, 1);
}

extern "C" __global__ void mixed_collectives(float* out) {
  if (threadIdx.x < 16) {
    out[threadIdx.x] = tl::shfl_xor(1.0f, 1);
  } else {
    out[threadIdx.x] = tl::shfl_sync(2.0f, 0);
  }
}

extern "C" __global__ void collective_vs_barrier(float* out) {
  if (threadIdx.x < 16) {
    out[threadIdx.x] = tl::shfl_xor(1.0f, 1);
  } else {
    tl::syncthreads();
  }
}

extern "C" __global__ void ldmatrix_out_of_bounds(int offset_bytes) {
  uint8_t* s = tl::dynamic_smem();
  uint32_t r[4];
  tl::ldmatrix_x4(r, s + offset_bytes + (threadIdx.x % 32) * 16);
}

extern "C" __global__ void throws_at(int tid) {
  if (static_cast<int>(threadIdx.x) == tid) throw std::runtime_error("kernel says no");
}

extern "C" __global__ void checked_store(float* out, int n) {
  tl::check_global(out + threadIdx.x, sizeof(float));
  out[threadIdx.x] = 1.0f;
}

extern "C" __global__ void checked_shared_store(int offset) {
  float* s = reinterpret_cast<float*>(tl::dynamic_smem()) + offset;
  tl::check_shared(s + threadIdx.x, sizeof(float));
  s[threadIdx.x] = 1.0f;
}

// A 64x64x32 block gemm through common/tl/gemm.h with swizzled shared
// operands, 4 warps (2 x 2); C is written from the accumulator layout.
extern "C" __global__ void __launch_bounds__(128) gemm_64x64x32(
    const tl::half_t* __restrict__ A, const tl::half_t* __restrict__ B, float* __restrict__ C) {
  using LA = tl::Swizzled<64, 32, 2>;
  using LB = tl::Swizzled<32, 64, 2>;
  tl::half_t* As = reinterpret_cast<tl::half_t*>(tl::dynamic_smem());
  tl::half_t* Bs = reinterpret_cast<tl::half_t*>(tl::dynamic_smem() + 64 * 32 * 2);
  const int tx = threadIdx.x;
  for (int i = tx; i < 64 * 32; i += 128) As[LA::offset(i / 32, i % 32)] = A[i];
  for (int i = tx; i < 32 * 64; i += 128) Bs[LB::offset(i / 64, i % 64)] = B[i];
  tl::syncthreads();
  float acc[32];
  for (int i = 0; i < 32; ++i) acc[i] = 0.0f;
  tl::gemm_ss<64, 64, 32, 2, 2, false, false, LA, LB>(As, Bs, acc);
  const int w = tx / 32, lane = tx % 32, wm = w % 2, wn = w / 2;
  for (int mi = 0; mi < 2; ++mi)
    for (int ni = 0; ni < 4; ++ni)
      for (int h = 0; h < 2; ++h)
        for (int e = 0; e < 2; ++e) {
          const int row = wm * 32 + mi * 16 + h * 8 + lane / 4;
          const int col = wn * 32 + ni * 8 + 2 * (lane % 4) + e;
          C[row * 64 + col] = acc[((mi * 4 + ni) * 2 + h) * 2 + e];
        }
}
)cu";

// The module above, compiled once for the whole binary.
const absl::StatusOr<HostModule>& Module() { return CompileOnce(kKernels); }

template <typename T>
void* Arg(T& value) {
  return &value;
}

bool Contains(const absl::Status& s, const std::string& text) {
  return std::string(s.message()).find(text) != std::string::npos;
}

template <typename T>
void CheckMmaKernel(const char* kernel, uint32_t seed) {
  SCOPED_TRACE(testing::Message() << kernel << " seed " << seed);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> small(-6, 6);
  // Integers: products and sums are exact, independent of summation order.
  std::vector<T> a(16 * 16), b(16 * 8);
  std::vector<float> af(16 * 16), bf(16 * 8), c(16 * 8), d(16 * 8, -1.0f);
  for (int i = 0; i < 256; ++i) af[i] = static_cast<float>((i % 17) - 8 + small(rng));
  for (int i = 0; i < 128; ++i) bf[i] = static_cast<float>((i % 11) - 5 + small(rng));
  for (int i = 0; i < 128; ++i) c[i] = static_cast<float>(i) - 64.0f;
  for (int i = 0; i < 256; ++i) a[i] = T(af[i]);
  for (int i = 0; i < 128; ++i) b[i] = T(bf[i]);
  std::vector<float> want(128);
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 8; ++j) {
      float sum = c[i * 8 + j];
      for (int k = 0; k < 16; ++k) sum += af[i * 16 + k] * bf[k * 8 + j];
      want[i * 8 + j] = sum;
    }
  for (int broken : {0, 1}) {
    T* pa = a.data();
    T* pb = b.data();
    float* pc = c.data();
    float* pd = d.data();
    absl::Status s = Launch(*Module(), kernel, {1, 1, 1}, {32, 1, 1}, 0,
                            {Arg(pa), Arg(pb), Arg(pc), Arg(pd), Arg(broken)});
    ASSERT_TRUE(s.ok()) << s;
    int mismatches = 0;
    for (int i = 0; i < 128; ++i) mismatches += d[i] != want[i];
    if (broken) {
      EXPECT_GT(mismatches, 32) << "a swapped fragment register must give wrong numbers";
    } else {
      EXPECT_EQ(mismatches, 0);
    }
  }
}

TEST(EmulatorTest, MmaF16FragmentsFollowThePtxLayout) {
  ASSERT_MODULE();
  CheckMmaKernel<tl::half_t>("mma_f16", std::random_device()());
}

TEST(EmulatorTest, MmaBf16FragmentsFollowThePtxLayout) {
  ASSERT_MODULE();
  CheckMmaKernel<tl::bfloat16_t>("mma_bf16", std::random_device()());
}

TEST(EmulatorTest, LdmatrixRegistersFollowThePtxDistribution) {
  ASSERT_MODULE();
  std::vector<uint16_t> src(4 * 64);
  // Element (r, c) of matrix m: distinct and never all zero.
  auto at = [](int m, int r, int c) { return static_cast<uint16_t>(1000 * (m + 1) + 10 * r + c); };
  for (int m = 0; m < 4; ++m)
    for (int r = 0; r < 8; ++r)
      for (int c = 0; c < 8; ++c) src[m * 64 + r * 8 + c] = at(m, r, c);
  for (int num : {1, 2, 4}) {
    for (int trans : {0, 1}) {
      SCOPED_TRACE(testing::Message() << "x" << num << (trans ? "_trans" : ""));
      std::vector<uint32_t> out(32 * 4, 0xDEADBEEF);
      uint16_t* ps = src.data();
      uint32_t* po = out.data();
      absl::Status s = Launch(*Module(), "ldmatrix_probe", {1, 1, 1}, {32, 1, 1}, 512,
                              {Arg(ps), Arg(po), Arg(num), Arg(trans)});
      ASSERT_TRUE(s.ok()) << s;
      for (int l = 0; l < 32; ++l) {
        for (int j = 0; j < num; ++j) {
          const int r = l / 4, c = 2 * (l % 4);
          const uint32_t lo = trans ? at(j, c, r) : at(j, r, c);
          const uint32_t hi = trans ? at(j, c + 1, r) : at(j, r, c + 1);
          EXPECT_EQ(out[l * 4 + j], lo | (hi << 16)) << "lane " << l << " register " << j;
        }
      }
    }
  }
}

TEST(EmulatorTest, ShufflesAndWarpReductions) {
  ASSERT_MODULE();
  const uint32_t seed = std::random_device()();
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(-100, 100);
  constexpr int kThreads = 64;  // two warps: collectives stay within a warp
  std::vector<float> in(kThreads), xor_out(kThreads), sum8(kThreads), max32(kThreads);
  std::vector<int> idx_out(kThreads);
  for (float& v : in) v = static_cast<float>(dist(rng)) + 0.5f;
  for (int mask : {1, 5, 16}) {
    float* p[5] = {in.data(), xor_out.data(), nullptr, sum8.data(), max32.data()};
    int* pi = idx_out.data();
    absl::Status s = Launch(*Module(), "shfl_probe", {1, 1, 1}, {kThreads, 1, 1}, 0,
                            {Arg(p[0]), Arg(p[1]), Arg(pi), Arg(p[3]), Arg(p[4]), Arg(mask)});
    ASSERT_TRUE(s.ok()) << s;
    for (int t = 0; t < kThreads; ++t) {
      const int warp = t / 32, lane = t % 32;
      EXPECT_EQ(xor_out[t], in[warp * 32 + (lane ^ mask)]) << "thread " << t;
      EXPECT_EQ(idx_out[t], (warp * 32 + (lane * 7) % 32) * 10) << "thread " << t;
      float group = 0, best = in[warp * 32];
      for (int i = 0; i < 8; ++i) group += in[warp * 32 + (lane / 8) * 8 + i];
      for (int i = 0; i < 32; ++i) best = std::max(best, in[warp * 32 + i]);
      EXPECT_EQ(sum8[t], group) << "thread " << t;  // halves of integers: exact
      EXPECT_EQ(max32[t], best) << "thread " << t;
    }
  }
}

TEST(EmulatorTest, CpAsyncLandsOnlyAtTheMatchingWait) {
  ASSERT_MODULE();
  std::vector<float> src(256), before(128), mid(256), after(256);
  for (int i = 0; i < 256; ++i) src[i] = static_cast<float>(i) + 1.0f;
  float* p[4] = {src.data(), before.data(), mid.data(), after.data()};
  int zero_lane = 5;
  absl::Status s = Launch(*Module(), "cp_async_probe", {1, 1, 1}, {32, 1, 1}, 1024,
                          {Arg(p[0]), Arg(p[1]), Arg(p[2]), Arg(p[3]), Arg(zero_lane)});
  ASSERT_TRUE(s.ok()) << s;
  for (int i = 0; i < 128; ++i) {
    // Before any wait: the poison (0xFF bytes) the block started with.
    EXPECT_EQ(std::bit_cast<uint32_t>(before[i]), 0xFFFFFFFFu) << i;
    // wait_group 1 retires the first group only.
    EXPECT_EQ(mid[i], src[i]) << i;
    EXPECT_EQ(std::bit_cast<uint32_t>(mid[128 + i]), 0xFFFFFFFFu) << i;
    EXPECT_EQ(after[i], src[i]) << i;
    // pred = false zero-fills instead of reading.
    const float want = i / 4 == zero_lane ? 0.0f : src[128 + i];
    EXPECT_EQ(after[128 + i], want) << i;
  }
}

TEST(EmulatorTest, BuiltinIndicesInMultiDimensionalLaunches) {
  ASSERT_MODULE();
  const Dim3 grid{3, 2, 2}, block{4, 2, 3};
  std::vector<int> out(12 * 24 * 2, -1);
  int* p = out.data();
  for (int threads : {1, 3}) {
    LaunchOptions options;
    options.os_threads = threads;
    absl::Status s = Launch(*Module(), "indices", grid, block, 0, {Arg(p)}, options);
    ASSERT_TRUE(s.ok()) << s;
    int i = 0;
    for (uint32_t bz = 0; bz < 2; ++bz)
      for (uint32_t by = 0; by < 2; ++by)
        for (uint32_t bx = 0; bx < 3; ++bx)
          for (uint32_t tz = 0; tz < 3; ++tz)
            for (uint32_t ty = 0; ty < 2; ++ty)
              for (uint32_t tx = 0; tx < 4; ++tx, ++i) {
                EXPECT_EQ(out[i * 2], static_cast<int>(tx * 10000 + ty * 100 + tz));
                EXPECT_EQ(out[i * 2 + 1], static_cast<int>(bx * 10000 + by * 100 + bz));
              }
  }
}

TEST(EmulatorTest, BarrierPublishesSharedWrites) {
  ASSERT_MODULE();
  constexpr int kThreads = 96, kBlocks = 5;
  std::vector<int> out(kThreads * kBlocks, -7);
  int* p = out.data();
  absl::Status s = Launch(*Module(), "barrier_exchange", {kBlocks, 1, 1}, {kThreads, 1, 1},
                          4 * kThreads, {Arg(p)});
  ASSERT_TRUE(s.ok()) << s;
  for (int b = 0; b < kBlocks; ++b)
    for (int t = 0; t < kThreads; ++t) EXPECT_EQ(out[b * kThreads + t], ((t + 1) % kThreads) * 3);
}

TEST(EmulatorTest, SharedMemoryStartsPoisonedWithTheConfiguredByte) {
  ASSERT_MODULE();
  std::vector<uint32_t> out(32);
  uint32_t* p = out.data();
  ASSERT_TRUE(Launch(*Module(), "read_poison", {1, 1, 1}, {32, 1, 1}, 128, {Arg(p)}).ok());
  for (uint32_t v : out) EXPECT_EQ(v, 0xFFFFFFFFu);
  LaunchOptions options;
  options.smem_fill = 0xA5;
  ASSERT_TRUE(Launch(*Module(), "read_poison", {1, 1, 1}, {32, 1, 1}, 128, {Arg(p)}, options).ok());
  for (uint32_t v : out) EXPECT_EQ(v, 0xA5A5A5A5u);
}

TEST(EmulatorTest, AtomicsAreAtomicAcrossOsThreads) {
  ASSERT_MODULE();
  constexpr int kBlocks = 48, kThreads = 64;
  int32_t counter = 0;
  float fsum = 0;
  double dsum = 0;
  tl::half_t hsum(0.0f);
  std::vector<int32_t> olds(kBlocks * kThreads, 0);
  int32_t* pc = &counter;
  float* pf = &fsum;
  double* pd = &dsum;
  tl::half_t* ph = &hsum;
  int32_t* po = olds.data();
  LaunchOptions options;
  options.os_threads = 4;
  options.buffers = {{&counter, sizeof(counter), "counter"},
                     {&fsum, sizeof(fsum), "fsum"},
                     {&dsum, sizeof(dsum), "dsum"},
                     {&hsum, sizeof(hsum), "hsum"}};
  absl::Status s = Launch(*Module(), "atomics", {kBlocks, 1, 1}, {kThreads, 1, 1}, 0,
                          {Arg(pc), Arg(pf), Arg(pd), Arg(ph), Arg(po)}, options);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(counter, kBlocks * kThreads);
  EXPECT_EQ(fsum, 0.5f * kBlocks * kThreads);
  EXPECT_EQ(dsum, 0.25 * kBlocks * kThreads);
  EXPECT_EQ(float(hsum), static_cast<float>(kBlocks));
  for (int i = 0; i < kBlocks * kThreads; ++i) EXPECT_EQ(olds[i], 1) << i;
}

TEST(EmulatorTest, ShuffledBlockOrderIsAReproduciblePermutation) {
  ASSERT_MODULE();
  constexpr int kBlocks = 8 * 8;
  auto run = [](bool shuffle, uint64_t seed) {
    int32_t counter = 0;
    std::vector<int32_t> order(kBlocks, -1);
    int32_t* pc = &counter;
    int32_t* po = order.data();
    LaunchOptions options;
    options.shuffle_blocks = shuffle;
    options.shuffle_seed = seed;
    absl::Status s =
        Launch(*Module(), "block_order", {8, 8, 1}, {32, 1, 1}, 0, {Arg(pc), Arg(po)}, options);
    EXPECT_TRUE(s.ok()) << s;
    return order;
  };
  std::vector<int32_t> identity(kBlocks);
  for (int i = 0; i < kBlocks; ++i) identity[i] = i;
  EXPECT_EQ(run(false, 0), identity);
  const uint64_t seed = std::random_device()();
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::vector<int32_t> shuffled = run(true, seed);
  EXPECT_NE(shuffled, identity);  // 1 / 64! to fail by chance
  EXPECT_EQ(run(true, seed), shuffled);
  std::sort(shuffled.begin(), shuffled.end());
  EXPECT_EQ(shuffled, identity);
}

TEST(EmulatorTest, CommonGemmTemplateComputesTheBlockProduct) {
  ASSERT_MODULE();
  const uint32_t seed = std::random_device()();
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(-4, 4);
  std::vector<float> af(64 * 32), bf(32 * 64), c(64 * 64, -1.0f), want(64 * 64, 0.0f);
  std::vector<tl::half_t> a(64 * 32), b(32 * 64);
  for (size_t i = 0; i < af.size(); ++i) af[i] = static_cast<float>(dist(rng) + (i % 3 == 0));
  for (size_t i = 0; i < bf.size(); ++i) bf[i] = static_cast<float>(dist(rng) - (i % 5 == 0));
  for (size_t i = 0; i < af.size(); ++i) a[i] = tl::half_t(af[i]);
  for (size_t i = 0; i < bf.size(); ++i) b[i] = tl::half_t(bf[i]);
  for (int i = 0; i < 64; ++i)
    for (int j = 0; j < 64; ++j)
      for (int k = 0; k < 32; ++k) want[i * 64 + j] += af[i * 32 + k] * bf[k * 64 + j];
  tl::half_t* pa = a.data();
  tl::half_t* pb = b.data();
  float* pc = c.data();
  absl::Status s = Launch(*Module(), "gemm_64x64x32", {1, 1, 1}, {128, 1, 1}, 2 * 64 * 32 * 2,
                          {Arg(pa), Arg(pb), Arg(pc)});
  ASSERT_TRUE(s.ok()) << s;
  for (int i = 0; i < 64 * 64; ++i)
    ASSERT_EQ(c[i], want[i]) << "C(" << i / 64 << ", " << i % 64 << ")";
}

TEST(EmulatorTest, BarrierDivergenceNamesKernelBlockAndThreads) {
  ASSERT_MODULE();
  std::vector<float> out(64);
  float* p = out.data();
  absl::Status s = Launch(*Module(), "early_exit", {2, 1, 1}, {64, 1, 1}, 0, {Arg(p)});
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted);
  EXPECT_TRUE(Contains(s,
                       "barrier divergence in kernel early_exit, block (0, 0, 0): threads "
                       "0-31 wait at syncthreads but threads 32-63 have exited"))
      << s;
}

TEST(EmulatorTest, CollectiveWithExitedLanesIsAnError) {
  ASSERT_MODULE();
  std::vector<float> out(64);
  float* p = out.data();
  absl::Status s = Launch(*Module(), "shfl_partial", {1, 1, 1}, {64, 1, 1}, 0, {Arg(p)});
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted);
  EXPECT_TRUE(Contains(s,
                       "kernel shfl_partial, block (0, 0, 0), warp 0: lanes 0-15 wait at "
                       "shfl_xor but lanes 16-31 have exited"))
      << s;
}

TEST(EmulatorTest, LanesAtDifferentCollectivesAreAnError) {
  ASSERT_MODULE();
  std::vector<float> out(32);
  float* p = out.data();
  absl::Status s = Launch(*Module(), "mixed_collectives", {1, 1, 1}, {32, 1, 1}, 0, {Arg(p)});
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted);
  EXPECT_TRUE(Contains(s, "warp 0: lane 16 executes shfl_sync while lanes 0-15 wait at shfl_xor"))
      << s;
  s = Launch(*Module(), "collective_vs_barrier", {1, 1, 1}, {32, 1, 1}, 0, {Arg(p)});
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted);
  EXPECT_TRUE(Contains(s, "lanes 0-15 wait at shfl_xor but lanes 16-31 wait at syncthreads")) << s;
}

TEST(EmulatorTest, LdmatrixOutsideSharedMemoryIsAnError) {
  ASSERT_MODULE();
  int offset = 0;
  EXPECT_TRUE(
      Launch(*Module(), "ldmatrix_out_of_bounds", {1, 1, 1}, {32, 1, 1}, 512, {Arg(offset)}).ok());
  offset = 16;  // the last lane's row ends 16 bytes past the end
  absl::Status s =
      Launch(*Module(), "ldmatrix_out_of_bounds", {1, 1, 1}, {32, 1, 1}, 512, {Arg(offset)});
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted);
  EXPECT_TRUE(Contains(s,
                       "kernel ldmatrix_out_of_bounds, block (0, 0, 0), warp 0: ldmatrix: "
                       "lane 31's row address"))
      << s;
}

TEST(EmulatorTest, CpAsyncSourcesAreCheckedAgainstRegisteredBuffers) {
  ASSERT_MODULE();
  std::vector<float> src(64, 1.0f);  // 32 threads x 4 floats would need 128
  const float* p = src.data();
  LaunchOptions options;
  options.buffers = {{src.data(), src.size() * sizeof(float), "src"}};
  int limit = 64;  // threads past the buffer zero-fill: nothing is read
  absl::Status s = Launch(*Module(), "cp_async_bounded", {1, 1, 1}, {32, 1, 1}, 512,
                          {Arg(p), Arg(limit)}, options);
  EXPECT_TRUE(s.ok()) << s;
  limit = 128;
  s = Launch(*Module(), "cp_async_bounded", {1, 1, 1}, {32, 1, 1}, 512, {Arg(p), Arg(limit)},
             options);
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted);
  EXPECT_TRUE(Contains(s, "thread (16, 0, 0): cp_async source: global address")) << s;
  EXPECT_TRUE(Contains(s, "(256 bytes from the start of buffer 'src', which has 256 bytes)")) << s;
  // Without registered buffers the source is not checked (and is readable here).
  std::vector<float> big(128, 2.0f);
  const float* pb = big.data();
  s = Launch(*Module(), "cp_async_bounded", {1, 1, 1}, {32, 1, 1}, 512, {Arg(pb), Arg(limit)});
  EXPECT_TRUE(s.ok()) << s;
}

TEST(EmulatorTest, CpAsyncMisalignedDestinationIsAnError) {
  ASSERT_MODULE();
  std::vector<float> src(8, 1.0f);
  const float* p = src.data();
  absl::Status s = Launch(*Module(), "cp_async_misaligned", {1, 1, 1}, {1, 1, 1}, 64, {Arg(p)});
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted);
  EXPECT_TRUE(Contains(s, "cp_async destination at shared offset 4 is not 16-byte aligned")) << s;
}

TEST(EmulatorTest, CheckGlobalHook) {
  ASSERT_MODULE();
  std::vector<float> out(32, 0.0f);
  float* p = out.data();
  int n = 32;
  LaunchOptions options;
  options.buffers = {{out.data(), 31 * sizeof(float), "out"}};
  absl::Status s =
      Launch(*Module(), "checked_store", {1, 1, 1}, {32, 1, 1}, 0, {Arg(p), Arg(n)}, options);
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted);
  EXPECT_TRUE(Contains(s, "thread (31, 0, 0): check_global")) << s;
  options.buffers[0].bytes = 32 * sizeof(float);
  s = Launch(*Module(), "checked_store", {1, 1, 1}, {32, 1, 1}, 0, {Arg(p), Arg(n)}, options);
  EXPECT_TRUE(s.ok()) << s;
  for (float v : out) EXPECT_EQ(v, 1.0f);
}

TEST(EmulatorTest, CheckSharedHook) {
  ASSERT_MODULE();
  int offset = 0;
  EXPECT_TRUE(
      Launch(*Module(), "checked_shared_store", {1, 1, 1}, {32, 1, 1}, 128, {Arg(offset)}).ok());
  offset = 1;
  absl::Status s =
      Launch(*Module(), "checked_shared_store", {1, 1, 1}, {32, 1, 1}, 128, {Arg(offset)});
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted);
  EXPECT_TRUE(Contains(s, "thread (31, 0, 0): check_shared: shared address")) << s;
}

TEST(EmulatorTest, FirstFaultStopsAMultiThreadedLaunch) {
  ASSERT_MODULE();
  std::vector<float> out(64);
  float* p = out.data();
  LaunchOptions options;
  options.os_threads = 3;
  absl::Status s = Launch(*Module(), "early_exit", {40, 1, 1}, {64, 1, 1}, 0, {Arg(p)}, options);
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted);
  EXPECT_TRUE(Contains(s, "barrier divergence in kernel early_exit")) << s;
}

TEST(EmulatorTest, ExceptionInAThreadIsReportedNotFatal) {
  ASSERT_MODULE();
  int tid = 7;
  absl::Status s = Launch(*Module(), "throws_at", {2, 1, 1}, {64, 1, 1}, 0, {Arg(tid)});
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted);
  EXPECT_TRUE(Contains(s,
                       "kernel throws_at, block (0, 0, 0), thread (7, 0, 0): C++ exception: "
                       "kernel says no"))
      << s;
  tid = -1;
  EXPECT_TRUE(Launch(*Module(), "throws_at", {2, 1, 1}, {64, 1, 1}, 0, {Arg(tid)}).ok());
}

TEST(EmulatorTest, LaunchConfigurationErrors) {
  ASSERT_MODULE();
  float* p = nullptr;
  absl::Status s = Launch(*Module(), "early_exit", {1, 1, 1}, {1025, 1, 1}, 0, {Arg(p)});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(s, "1025 threads per block (at most 1024)")) << s;
  s = Launch(*Module(), "early_exit", {0, 1, 1}, {32, 1, 1}, 0, {Arg(p)});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  s = Launch(*Module(), "early_exit", {0x80000000u, 1, 1}, {32, 1, 1}, 0, {Arg(p)});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(s, "x is at most 2^31 - 1")) << s;
  s = Launch(*Module(), "early_exit", {1, 1, 1}, {32, 1, 1}, 1 << 20, {Arg(p)});
  EXPECT_TRUE(Contains(s, "1048576 bytes of dynamic shared memory")) << s;
  s = Launch(*Module(), "early_exit", {1, 1, 1}, {32, 1, 1}, 0, {});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(s, "it takes 1 parameters, 0 arguments given")) << s;
  s = Launch(*Module(), "no_such_kernel", {1, 1, 1}, {32, 1, 1}, 0, {});
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(Contains(s, "no kernel 'no_such_kernel'")) << s;
}

}  // namespace
}  // namespace tilec::host
