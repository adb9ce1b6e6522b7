// TMA loads on the emulator (host/tl/tma.h, emulator/block_tma.cc), from the
// PTX ISA and the CUDA driver's tensor-map rules: every element of a box
// lands where the ISA's swizzle modes put it (16-byte chunk c of row r of a
// 128-byte span at c ^ (r % 8); of a 64-byte span at c ^ (r / 2 % 4); of a
// 32-byte span at c ^ (r / 4 % 2)), which is where tilec's tl::Swizzled
// layouts read it, with zeros outside the tensor; the data lands only when a
// thread waits on the barrier, so a read that does not wait sees old data;
// a load nobody waits for and maps the driver would refuse are errors.
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "compiler/targets/host/launch.h"
#include "compiler/targets/host/tensor_map.h"
#include "gtest/gtest.h"
#include "tests/compiler/targets/host/kernel_testing.h"

namespace tilec::host {
namespace {

constexpr char kKernels[] = R"cu(
#include "tl/tl.h"

// Thread 0 loads the [R, C] tile at (row r0, column c0) of a 2-D tensor of
// 16-bit elements through `map` (box [C or 128 bytes, R]) into shared memory
// at offset 1024, one load per 128-byte column block as tilec lays wide rows
// out; every thread then reads element (r, c) where tl::Swizzled<R, C, 2>
// (row-major when `plain`) keeps it. `wait` 0 skips the wait (a bug).
template <int R, int C>
__device__ void load_tile(const tl::TmaMap& map, int r0, int c0, uint16_t* out, int plain,
                          int wait) {
  using L = tl::Swizzled<R, C, 2>;
  constexpr int kBlock = C * 2 > 128 ? 64 : C;  // elements per load
  uint8_t* smem = tl::dynamic_smem();
  uint64_t* bar = reinterpret_cast<uint64_t*>(smem);
  uint16_t* tile = reinterpret_cast<uint16_t*>(smem + 1024);
  if (threadIdx.x == 0) tl::mbarrier_init(bar, 1);
  tl::syncthreads();
  if (threadIdx.x == 0) {
    tl::mbarrier_arrive_expect_tx(bar, R * C * 2);
    for (int b = 0; b < C / kBlock; ++b) tl::tma_load(tile + b * R * kBlock, map, bar, c0 + b * kBlock, r0);
  }
  if (wait) tl::mbarrier_wait_parity(bar, 0);
  for (int i = threadIdx.x; i < R * C; i += blockDim.x) {
    const int r = i / C, c = i % C;
    out[i] = tile[plain ? i : L::offset(r, c)];
  }
  if (!wait) {  // every thread has read before any waits
    tl::syncthreads();
    tl::mbarrier_wait_parity(bar, 0);
  }
}

extern "C" __global__ void tile_64x64(const tl::TmaMap map, int r0, int c0, uint16_t* out, int plain, int wait) {
  load_tile<64, 64>(map, r0, c0, out, plain, wait);
}
extern "C" __global__ void tile_32x32(const tl::TmaMap map, int r0, int c0, uint16_t* out, int plain, int wait) {
  load_tile<32, 32>(map, r0, c0, out, plain, wait);
}
extern "C" __global__ void tile_16x16(const tl::TmaMap map, int r0, int c0, uint16_t* out, int plain, int wait) {
  load_tile<16, 16>(map, r0, c0, out, plain, wait);
}
extern "C" __global__ void tile_32x128(const tl::TmaMap map, int r0, int c0, uint16_t* out, int plain, int wait) {
  load_tile<32, 128>(map, r0, c0, out, plain, wait);
}

// The raw bytes of shared memory after one load of the map's whole box to
// offset `dst`, coordinates (c0, c1, c2) (c2 < 0: (c0, c1) of a 2-d map).
extern "C" __global__ void raw_box(const tl::TmaMap map, int dst, int c0, int c1, int c2,
                                   uint8_t* out, int bytes) {
  uint8_t* smem = tl::dynamic_smem();
  uint64_t* bar = reinterpret_cast<uint64_t*>(smem);
  if (threadIdx.x == 0) {
    tl::mbarrier_init(bar, 1);
    tl::mbarrier_arrive_expect_tx(bar, bytes);
    if (c2 < 0) {
      tl::tma_load(smem + dst, map, bar, c0, c1);  // a 2-d map
    } else {
      tl::tma_load(smem + dst, map, bar, c0, c1, c2);
    }
  }
  tl::syncthreads();
  tl::mbarrier_wait_parity(bar, 0);
  for (int i = threadIdx.x; i < bytes; i += blockDim.x) out[i] = smem[dst + i];
}

// Threads fill a [32, 32] tile of 16-bit values in tl::Swizzled<32, 32, 2>
// (the 64-byte swizzle), value r * 32 + c + 1; thread 0 stores it by TMA at
// (r0, c0). `overwrite` zeroes the tile after the commit but before the
// wait (a bug: the store reads shared memory until the wait).
extern "C" __global__ void store_tile(const tl::TmaMap map, int r0, int c0, int overwrite,
                                      int wait) {
  using L = tl::Swizzled<32, 32, 2>;
  uint16_t* tile = reinterpret_cast<uint16_t*>(tl::dynamic_smem());
  for (int i = threadIdx.x; i < 32 * 32; i += blockDim.x) {
    tile[L::offset(i / 32, i % 32)] = static_cast<uint16_t>(i + 1);
  }
  tl::syncthreads();
  if (threadIdx.x == 0) {
    tl::tma_store(map, tile, c0, r0);
    tl::tma_store_commit();
    if (overwrite) {
      for (int i = 0; i < 32 * 32; ++i) tile[i] = 0;
    }
    if (wait) tl::tma_store_wait<0>();  // @store_wait
  }
}

// A load nobody waits for.
extern "C" __global__ void never_waited(const tl::TmaMap map) {
  uint8_t* smem = tl::dynamic_smem();
  uint64_t* bar = reinterpret_cast<uint64_t*>(smem);
  tl::mbarrier_init(bar, 1);
  tl::mbarrier_arrive_expect_tx(bar, 16 * 16 * 2);
  tl::tma_load(smem + 1024, map, bar, 0, 0);  // @issue
}
)cu";

const absl::StatusOr<HostModule>& Module() { return CompileOnce(kKernels, "tma.cu"); }

template <typename T>
void* Arg(T& value) {
  return &value;
}

struct alignas(64) Map {
  tl::host::TensorMapDesc desc;
};

// A map of a row-major [rows, cols] tensor of 16-bit elements.
Map Map2d(const void* base, uint64_t rows, uint64_t cols, uint32_t box_cols, uint32_t box_rows,
          uint32_t swizzle) {
  tl::host::TensorMapDesc d{};
  d.rank = 2;
  d.elem_bytes = 2;
  d.swizzle_bytes = swizzle;
  d.base = base;
  d.dims[0] = cols;
  d.dims[1] = rows;
  d.strides[0] = 2;
  d.strides[1] = cols * 2;
  d.box[0] = box_cols;
  d.box[1] = box_rows;
  absl::StatusOr<tl::host::TensorMapDesc> m = EncodeHostTensorMap(d, "the test tensor");
  EXPECT_TRUE(m.ok()) << m.status();
  return Map{m.ok() ? *m : d};
}

// The ISA's swizzle patterns, written out per mode: the shared byte of
// (row r, byte b) of a box with rows of `row_bytes` at a period-aligned
// address.
uint32_t IsaByte(uint32_t r, uint32_t b, uint32_t row_bytes, uint32_t swizzle) {
  const uint32_t chunk = b / 16, rest = b % 16;
  uint32_t x = 0;
  if (swizzle == 128) x = r % 8;       // rows of 128 bytes: 8-row period
  if (swizzle == 64) x = (r / 2) % 4;  // rows of 64 bytes: two rows per 128 bytes
  if (swizzle == 32) x = (r / 4) % 2;  // rows of 32 bytes: four rows per 128 bytes
  return r * row_bytes + ((chunk ^ x) * 16) + rest;
}

struct Tensor {
  uint64_t rows, cols;
  std::vector<uint16_t> data;
  uint16_t at(int64_t r, int64_t c) const {
    if (r < 0 || c < 0 || r >= static_cast<int64_t>(rows) || c >= static_cast<int64_t>(cols))
      return 0;
    return data[r * cols + c];
  }
};

Tensor Random(uint64_t rows, uint64_t cols, std::mt19937& rng) {
  Tensor t{rows, cols, std::vector<uint16_t>(rows * cols)};
  for (uint16_t& x : t.data) x = static_cast<uint16_t>(1 + rng() % 60000);  // never 0
  return t;
}

TEST(TmaTest, BoxesLandWhereTheIsaSwizzlesPutThem) {
  ASSERT_MODULE();
  const uint32_t seed = std::random_device()();
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937 rng(seed);
  // [rows, cols] boxes of 16-bit elements with rows of 32, 64, 128 bytes and
  // no swizzle (128-byte rows), each at in-bounds and ragged coordinates.
  struct Case {
    uint32_t rows, cols, swizzle;
  };
  for (const Case& c : {Case{16, 64, 128}, Case{32, 32, 64}, Case{64, 16, 32}, Case{8, 64, 0}}) {
    SCOPED_TRACE(testing::Message() << c.rows << "x" << c.cols << " swizzle " << c.swizzle);
    Tensor t = Random(50, 88, rng);
    Map map = Map2d(t.data.data(), t.rows, t.cols, c.cols, c.rows, c.swizzle);
    const uint32_t bytes = c.rows * c.cols * 2;
    for (auto [r0, c0] : {std::pair{0, 0}, {40, 70}, {-3, -5}, {49, 85}}) {
      SCOPED_TRACE(testing::Message() << "at (" << r0 << ", " << c0 << ")");
      std::vector<uint8_t> out(bytes, 0xEE);
      int dst = 1024, two_d = -1, b = static_cast<int>(bytes);
      uint8_t* po = out.data();
      absl::Status s = Launch(*Module(), "raw_box", {1, 1, 1}, {64, 1, 1}, 1024 + bytes,
                              {Arg(map), Arg(dst), Arg(c0), Arg(r0), Arg(two_d), Arg(po), Arg(b)});
      ASSERT_TRUE(s.ok()) << s;
      for (uint32_t r = 0; r < c.rows; ++r) {
        for (uint32_t k = 0; k < c.cols; ++k) {
          const uint32_t at = IsaByte(r, k * 2, c.cols * 2, c.swizzle);
          uint16_t got;
          std::memcpy(&got, &out[at], 2);
          ASSERT_EQ(got, t.at(r0 + r, c0 + k)) << "element (" << r << ", " << k << ")";
        }
      }
    }
  }
}

TEST(TmaTest, ThreeDimensionalBoxesAndTheirOutOfBoundsPlanes) {
  ASSERT_MODULE();
  std::mt19937 rng(std::random_device{}());
  // A [3, 20, 32] tensor; box [1, 16, 32] (a [16, 32] tile of one plane), 64-byte swizzle.
  std::vector<uint16_t> data(3 * 20 * 32);
  for (uint16_t& x : data) x = static_cast<uint16_t>(1 + rng() % 60000);
  tl::host::TensorMapDesc d{};
  d.rank = 3;
  d.elem_bytes = 2;
  d.swizzle_bytes = 64;
  d.base = data.data();
  d.dims[0] = 32, d.dims[1] = 20, d.dims[2] = 3;
  d.strides[0] = 2, d.strides[1] = 64, d.strides[2] = 20 * 64;
  d.box[0] = 32, d.box[1] = 16, d.box[2] = 1;
  absl::StatusOr<tl::host::TensorMapDesc> enc = EncodeHostTensorMap(d, "x");
  ASSERT_TRUE(enc.ok()) << enc.status();
  Map map{*enc};
  for (int plane : {0, 2, 3}) {
    for (int r0 : {0, 8}) {
      std::vector<uint8_t> out(16 * 64, 0xEE);
      int dst = 2048, c0 = 0, bytes = 16 * 64;
      uint8_t* po = out.data();
      absl::Status s = Launch(*Module(), "raw_box", {1, 1, 1}, {32, 1, 1}, 4096,
                              {Arg(map), Arg(dst), Arg(c0), Arg(r0), Arg(plane), Arg(po), Arg(bytes)});
      ASSERT_TRUE(s.ok()) << s;
      for (int r = 0; r < 16; ++r) {
        for (int k = 0; k < 32; ++k) {
          uint16_t got;
          std::memcpy(&got, &out[IsaByte(r, k * 2, 64, 64)], 2);
          const bool in = plane < 3 && r0 + r < 20;
          ASSERT_EQ(got, in ? data[(plane * 20 + r0 + r) * 32 + k] : 0)
              << "plane " << plane << " row " << r0 + r << " column " << k;
        }
      }
    }
  }
}

// What tilec's layouts read after a load is the tile, for each row width;
// the same bytes read row-major (a consumer that disagrees with the map's
// swizzle) are not.
TEST(TmaTest, SwizzledLayoutsReadWhatTmaWrote) {
  ASSERT_MODULE();
  const uint32_t seed = std::random_device()();
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937 rng(seed);
  struct Case {
    const char* kernel;
    int rows, cols, box_cols, swizzle;
  };
  for (const Case& c : {Case{"tile_64x64", 64, 64, 64, 128}, Case{"tile_32x32", 32, 32, 32, 64},
                        Case{"tile_16x16", 16, 16, 16, 32}, Case{"tile_32x128", 32, 128, 64, 128}}) {
    SCOPED_TRACE(c.kernel);
    Tensor t = Random(100, 200, rng);
    Map map = Map2d(t.data.data(), t.rows, t.cols, c.box_cols, c.rows, c.swizzle);
    for (int plain : {0, 1}) {
      int r0 = 70, c0 = 120, wait = 1;  // ragged: rows 70..(70 + rows), columns past 200
      std::vector<uint16_t> out(c.rows * c.cols, 0xEEEE);
      uint16_t* po = out.data();
      absl::Status s =
          Launch(*Module(), c.kernel, {1, 1, 1}, {128, 1, 1}, 1024 + c.rows * c.cols * 2,
                 {Arg(map), Arg(r0), Arg(c0), Arg(po), Arg(plain), Arg(wait)});
      ASSERT_TRUE(s.ok()) << s;
      int mismatches = 0;
      for (int r = 0; r < c.rows; ++r)
        for (int k = 0; k < c.cols; ++k) mismatches += out[r * c.cols + k] != t.at(r0 + r, c0 + k);
      if (plain) {
        EXPECT_GT(mismatches, c.rows * c.cols / 4) << "a row-major read of a swizzled box";
      } else {
        EXPECT_EQ(mismatches, 0);
      }
    }
  }
}

TEST(TmaTest, AReadThatDoesNotWaitSeesOldData) {
  ASSERT_MODULE();
  std::mt19937 rng(std::random_device{}());
  Tensor t = Random(64, 64, rng);
  Map map = Map2d(t.data.data(), t.rows, t.cols, 64, 64, 128);
  int r0 = 0, c0 = 0, plain = 0, wait = 0;
  std::vector<uint16_t> out(64 * 64, 0);
  uint16_t* po = out.data();
  absl::Status s = Launch(*Module(), "tile_64x64", {1, 1, 1}, {128, 1, 1}, 1024 + 64 * 64 * 2,
                          {Arg(map), Arg(r0), Arg(c0), Arg(po), Arg(plain), Arg(wait)});
  ASSERT_TRUE(s.ok()) << s;
  for (int i = 0; i < 64 * 64; ++i) {
    ASSERT_EQ(out[i], 0xFFFF) << "element " << i << " read before the wait saw the load";
  }
}

TEST(TmaTest, ALoadNobodyWaitsForIsAnError) {
  ASSERT_MODULE();
  std::vector<uint16_t> data(16 * 16, 1);
  Map map = Map2d(data.data(), 16, 16, 16, 16, 32);
  absl::Status s = Launch(*Module(), "never_waited", {1, 1, 1}, {1, 1, 1}, 2048, {Arg(map)});
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted) << s;
  EXPECT_TRUE(Contains(s, "never waited for")) << s;
  EXPECT_TRUE(Contains(s, MarkerLine(kKernels, "tma.cu", "issue"))) << s;
}

TEST(TmaTest, StoresWriteTheBoxInsideTheTensorWhenWaitedFor) {
  ASSERT_MODULE();
  for (int overwrite : {0, 1}) {
    SCOPED_TRACE(overwrite ? "tile overwritten before the wait" : "tile kept");
    // A [50, 40] tensor; the tile at (30, 20) hangs over both edges.
    std::vector<uint16_t> t(50 * 40, 7);
    Map map = Map2d(t.data(), 50, 40, 32, 32, 64);
    int r0 = 30, c0 = 20, wait = 1;
    absl::Status s = Launch(*Module(), "store_tile", {1, 1, 1}, {128, 1, 1}, 2048,
                            {Arg(map), Arg(r0), Arg(c0), Arg(overwrite), Arg(wait)});
    ASSERT_TRUE(s.ok()) << s;
    for (int r = 0; r < 50; ++r) {
      for (int c = 0; c < 40; ++c) {
        const int tr = r - r0, tc = c - c0;
        const bool in_tile = tr >= 0 && tr < 32 && tc >= 0 && tc < 32;
        const uint16_t want = !in_tile ? 7 : overwrite ? 0 : static_cast<uint16_t>(tr * 32 + tc + 1);
        ASSERT_EQ(t[r * 40 + c], want) << "(" << r << ", " << c << ")";
      }
    }
  }
  std::vector<uint16_t> t(64 * 64, 7);
  Map map = Map2d(t.data(), 64, 64, 32, 32, 64);
  int r0 = 0, c0 = 0, overwrite = 0, wait = 0;
  absl::Status s = Launch(*Module(), "store_tile", {1, 1, 1}, {128, 1, 1}, 2048,
                          {Arg(map), Arg(r0), Arg(c0), Arg(overwrite), Arg(wait)});
  EXPECT_TRUE(Contains(s, "a TMA store from shared offset 0 was never waited for")) << s;
}

TEST(TmaTest, MapsTheDriverWouldRefuseAreRefused) {
  alignas(64) static uint16_t data[64 * 64];
  auto base = [&] {
    tl::host::TensorMapDesc d{};
    d.rank = 2, d.elem_bytes = 2, d.swizzle_bytes = 128, d.base = data;
    d.dims[0] = 64, d.dims[1] = 64, d.strides[0] = 2, d.strides[1] = 128;
    d.box[0] = 64, d.box[1] = 64;
    return d;
  };
  EXPECT_TRUE(CheckTensorMap(base(), "A").ok());
  struct Bad {
    const char* says;
    void (*edit)(tl::host::TensorMapDesc&);
  };
  const Bad bad[] = {
      {"not 16-byte aligned", [](tl::host::TensorMapDesc& d) { d.base = data + 1; }},
      {"multiple of 16", [](tl::host::TensorMapDesc& d) { d.strides[1] = 120; }},
      {"(1 to 256)", [](tl::host::TensorMapDesc& d) { d.box[1] = 512; }},
      {"wider than the 64-byte swizzle", [](tl::host::TensorMapDesc& d) { d.swizzle_bytes = 64; }},
      {"not a multiple of 16", [](tl::host::TensorMapDesc& d) { d.box[0] = 4; }},
      {"rank 6", [](tl::host::TensorMapDesc& d) { d.rank = 6; }},
      {"(1 to 2^32)", [](tl::host::TensorMapDesc& d) { d.dims[1] = 0; }},
  };
  for (const Bad& b : bad) {
    tl::host::TensorMapDesc d = base();
    b.edit(d);
    absl::Status s = CheckTensorMap(d, "A");
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << b.says;
    EXPECT_TRUE(Contains(s, b.says)) << s;
    EXPECT_TRUE(Contains(s, "of A")) << s;
  }
}

}  // namespace
}  // namespace tilec::host
