// Warp votes, mbarriers, the watchdog and 64-lane warps on the emulator,
// lane by lane against the PTX ISA's semantics (vote.sync, mbarrier.*),
// with kernels written against the device library as generated code is.
#include <bit>
#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "compiler/targets/host/launch.h"
#include "compiler/targets/host/toolchain.h"
#include "gtest/gtest.h"
#include "tests/compiler/targets/host/kernel_testing.h"

namespace tilec::host {
namespace {

constexpr char kKernels[] = R"cu(#include "tl/tl.h"

// Lanes of `mask` vote on pred[tx]; the others exit first.
extern "C" __global__ void votes(tl::gptr<const int> pred, unsigned long long mask, int ws,
                                 tl::gptr<unsigned long long> ballot, tl::gptr<int> all,
                                 tl::gptr<int> any) {
  const int tx = threadIdx.x;
  const int lane = tx % ws;
  if (((mask >> lane) & 1) == 0) return;
  const bool p = pred[tx] != 0;
  ballot[tx] = tl::vote_ballot(mask, p);
  all[tx] = tl::vote_all(mask, p) ? 1 : 0;
  any[tx] = tl::vote_any(mask, p) ? 1 : 0;
}

// Lanes 8.. exit; after two votes among lanes 0-7 (the exiting lanes run
// while the first vote's lanes are queued), activemask is 0xff.
extern "C" __global__ void active(tl::gptr<unsigned long long> out) {
  const int tx = threadIdx.x;
  if (tx % 32 >= 8) return;
  tl::vote_any(0xffull, true);
  tl::vote_any(0xffull, true);
  const unsigned long long mask = tl::activemask();
  tl::vote_any(0xffull, true);  // no lane of the eight exits before all have read it
  out[tx] = mask;
}

// Shuffles and a whole-warp sum with the warp size of the launch.
extern "C" __global__ void shuffles(tl::gptr<const float> in, tl::gptr<float> xor_out,
                                    tl::gptr<float> idx_out, tl::gptr<float> sum,
                                    tl::gptr<float> sum32, tl::gptr<float> neighbour, int mask,
                                    int ws) {
  uint8_t* smem = tl::dynamic_smem();
  const int tx = threadIdx.x;
  const int lane = tx % ws;
  auto S = tl::smem_buffer<float>(smem, 0, 128, "S");
  const float v = in[tx];
  xor_out[tx] = tl::shfl_xor(v, mask);
  idx_out[tx] = tl::shfl_sync(v, (lane * 7) % ws);
  float s = v;
  for (int m = ws / 2; m > 0; m /= 2) s += tl::shfl_xor(s, m);
  sum[tx] = s;
  sum32[tx] = tl::warp_allreduce<tl::SumOp, 32>(v);
  S[tx] = s;
  tl::syncthreads();
  neighbour[tx] = S[(tx + ws) % 128];
}

// Phases of one barrier over the whole block (64 threads).
extern "C" __global__ void mbar_phases(tl::gptr<int> out) {
  uint8_t* smem = tl::dynamic_smem();
  const int tx = threadIdx.x;
  auto bars = tl::smem_buffer<uint64_t>(smem, 0, 1, "bars");
  if (tx == 0) tl::mbarrier_init(bars, 64);
  tl::syncthreads();
  out[tx * 5 + 0] = tl::mbarrier_test_wait_parity(bars, 0);  // nobody arrived
  const uint64_t token = tl::mbarrier_arrive(bars);
  tl::mbarrier_wait_parity(bars, 0);
  out[tx * 5 + 1] = tl::mbarrier_test_wait(bars, token);     // phase 0 complete
  out[tx * 5 + 2] = tl::mbarrier_test_wait_parity(bars, 1);  // phase 1 open
  tl::syncthreads();
  if (tx < 32) tl::mbarrier_arrive(bars, 2);                 // 32 x 2 arrivals
  out[tx * 5 + 3] = tl::mbarrier_try_wait_parity(bars, 1);
  out[tx * 5 + 4] = tl::mbarrier_test_wait_parity(bars, 0);  // phase 2 open again
}

// The tx-count keeps a phase open until complete_tx brings it to zero.
extern "C" __global__ void mbar_tx(tl::gptr<int> out) {
  uint8_t* smem = tl::dynamic_smem();
  auto bars = tl::smem_buffer<uint64_t>(smem, 0, 1, "bars");
  tl::mbarrier_init(bars, 1);
  tl::mbarrier_arrive_expect_tx(bars, 128);
  out[0] = tl::mbarrier_test_wait_parity(bars, 0);
  tl::mbarrier_complete_tx(bars, 100);
  out[1] = tl::mbarrier_test_wait_parity(bars, 0);
  tl::mbarrier_complete_tx(bars, 28);
  out[2] = tl::mbarrier_test_wait_parity(bars, 0);
  tl::mbarrier_expect_tx(bars, 16);
  tl::mbarrier_arrive(bars);
  out[3] = tl::mbarrier_test_wait_parity(bars, 1);
  tl::mbarrier_complete_tx(bars, 16);
  out[4] = tl::mbarrier_test_wait_parity(bars, 1);
  tl::mbarrier_inval(bars);
}

// Every thread waits for a phase that needs one arrival more than the block
// makes.
extern "C" __global__ void mbar_deadlock(int count) {
  uint8_t* smem = tl::dynamic_smem();
  const int tx = threadIdx.x;
  auto bars = tl::smem_buffer<uint64_t>(smem, 0, 2, "bars");
  if (tx == 0) tl::mbarrier_init(bars + 1, count);
  tl::syncthreads();
  tl::mbarrier_arrive(bars + 1);
  tl::mbarrier_wait_parity(bars + 1, 0);  // @deadlock
}

extern "C" __global__ void mbar_uninitialised() {
  uint8_t* smem = tl::dynamic_smem();
  auto bars = tl::smem_buffer<uint64_t>(smem, 0, 1, "bars");
  tl::mbarrier_arrive(bars);
}

// Spins that never end: on an mbarrier phase nobody completes (test_wait
// lets the other threads run), and on a shared flag nobody sets.
extern "C" __global__ void spin_mbarrier() {
  uint8_t* smem = tl::dynamic_smem();
  auto bars = tl::smem_buffer<uint64_t>(smem, 0, 1, "bars");
  if (threadIdx.x == 0) tl::mbarrier_init(bars, 1000);
  tl::syncthreads();
  while (!tl::mbarrier_test_wait_parity(bars, 0)) {  // @spin_mbarrier
  }
}

extern "C" __global__ void spin_flag() {
  uint8_t* smem = tl::dynamic_smem();
  auto flag = tl::smem_buffer<int>(smem, 0, 1, "flag");
  if (threadIdx.x == 0) flag[0] = 0;
  tl::syncthreads();
  while (flag[0] == 0) {  // @spin_flag
  }
}
)cu";

// "sync.cu:<line of the marker>:" for a `// @name` marker of kKernels.
std::string LineOf(const std::string& marker) { return MarkerLine(kKernels, "sync.cu", marker); }

const absl::StatusOr<HostModule>& Module() { return CompileOnce(kKernels, "sync.cu"); }

void CheckVotes(int ws, uint64_t mask, uint32_t seed) {
  SCOPED_TRACE(testing::Message() << "warp size " << ws << " mask 0x" << std::hex << mask
                                  << std::dec << " seed " << seed);
  constexpr int kThreads = 128;
  std::mt19937 rng(seed);
  std::vector<int> pred(kThreads), all(kThreads, -1), any(kThreads, -1);
  std::vector<unsigned long long> ballot(kThreads, ~0ull);
  for (int& p : pred) p = static_cast<int>(rng() % 3 == 0);
  pred[0] = pred[ws] = 1;  // never all false in the masks' first lanes
  // One warp where the mask's lanes all vote true.
  for (int l = 0; l < ws; ++l) pred[ws + l] = 1;
  const int* pp = pred.data();
  unsigned long long* pb = ballot.data();
  int* pa = all.data();
  int* pn = any.data();
  unsigned long long m = mask;
  LaunchOptions options;
  options.warp_size = ws;
  absl::Status s = Launch(*Module(), "votes", {1, 1, 1}, {kThreads, 1, 1}, 0,
                          {&pp, &m, &ws, &pb, &pa, &pn}, options);
  ASSERT_TRUE(s.ok()) << s;
  for (int t = 0; t < kThreads; ++t) {
    const int warp = t / ws, lane = t % ws;
    if (((mask >> lane) & 1) == 0) {
      EXPECT_EQ(ballot[t], ~0ull) << "lane outside the mask " << t;
      continue;
    }
    uint64_t want = 0;
    for (int l = 0; l < ws; ++l) {
      if (((mask >> l) & 1) && pred[warp * ws + l]) want |= uint64_t{1} << l;
    }
    EXPECT_EQ(ballot[t], want) << "thread " << t;
    EXPECT_EQ(all[t], want == mask ? 1 : 0) << "thread " << t;
    EXPECT_EQ(any[t], want != 0 ? 1 : 0) << "thread " << t;
  }
}

TEST(VoteTest, FullAndPartialMasksLaneByLane) {
  ASSERT_MODULE();
  const uint32_t seed = std::random_device()();
  CheckVotes(32, 0xffffffffull, seed);
  CheckVotes(32, 0x0f0f00f1ull, seed);
  CheckVotes(32, 0x80000000ull, seed);
}

TEST(VoteTest, SixtyFourLaneWarpsBallotBits32To63) {
  ASSERT_MODULE();
  const uint32_t seed = std::random_device()();
  CheckVotes(64, ~0ull, seed);
  CheckVotes(64, 0xf0000000000000f1ull, seed);
  CheckVotes(64, 0xffffffff00000000ull, seed);
}

TEST(VoteTest, ActiveMaskLeavesOutExitedLanes) {
  ASSERT_MODULE();
  std::vector<unsigned long long> out(64, 0);
  unsigned long long* p = out.data();
  absl::Status s = Launch(*Module(), "active", {1, 1, 1}, {64, 1, 1}, 0, {&p});
  ASSERT_TRUE(s.ok()) << s;
  for (int t = 0; t < 64; ++t) EXPECT_EQ(out[t], t % 32 < 8 ? 0xffull : 0ull) << t;
}

TEST(VoteTest, MaskWithoutTheVotingLaneIsAnError) {
  ASSERT_MODULE();
  std::vector<int> pred(32, 1), all(32), any(32);
  std::vector<unsigned long long> ballot(32);
  const int* pp = pred.data();
  unsigned long long* pb = ballot.data();
  int* pa = all.data();
  int* pn = any.data();
  unsigned long long mask = 0xffffffffull;
  int ws = 16;  // lanes 16-31 compute lane = tx % 16 and vote with a mask of 32 lanes
  absl::Status s =
      Launch(*Module(), "votes", {1, 1, 1}, {32, 1, 1}, 0, {&pp, &mask, &ws, &pb, &pa, &pn});
  EXPECT_EQ(s.code(), absl::StatusCode::kOk) << s;  // the mask covers every lane
  mask = 0xffffull;  // lanes 16-31 pass lane % 16 < 16: in the mask by their own reckoning
  s = Launch(*Module(), "votes", {1, 1, 1}, {32, 1, 1}, 0, {&pp, &mask, &ws, &pb, &pa, &pn});
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted);
  EXPECT_TRUE(Contains(s,
                       "thread (16, 0, 0): vote_ballot: lane 16 votes with member mask 0xffff, "
                       "which does not include it"))
      << s;
}

void CheckShuffles(int ws, int mask, uint32_t seed) {
  SCOPED_TRACE(testing::Message() << "warp size " << ws << " mask " << mask << " seed " << seed);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(-100, 100);
  std::vector<float> in(128), x(128), idx(128), sum(128), sum32(128), nb(128);
  for (float& v : in) v = static_cast<float>(dist(rng)) + 0.5f;
  const float* pi = in.data();
  float* p[5] = {x.data(), idx.data(), sum.data(), sum32.data(), nb.data()};
  LaunchOptions options;
  options.warp_size = ws;
  absl::Status s = Launch(*Module(), "shuffles", {1, 1, 1}, {128, 1, 1}, 512,
                          {&pi, &p[0], &p[1], &p[2], &p[3], &p[4], &mask, &ws}, options);
  ASSERT_TRUE(s.ok()) << s;
  std::vector<float> warp_sum(128 / ws, 0.0f);
  for (int t = 0; t < 128; ++t) warp_sum[t / ws] += in[t];  // halves of integers: exact
  for (int t = 0; t < 128; ++t) {
    const int base = t / ws * ws, lane = t % ws;
    EXPECT_EQ(x[t], in[base + (lane ^ mask)]) << t;
    EXPECT_EQ(idx[t], in[base + (lane * 7) % ws]) << t;
    EXPECT_EQ(sum[t], warp_sum[t / ws]) << t;
    float group = 0;
    for (int i = 0; i < 32; ++i) group += in[t / 32 * 32 + i];
    EXPECT_EQ(sum32[t], group) << "warp_allreduce<32> sums 32 consecutive lanes, thread " << t;
    EXPECT_EQ(nb[t], warp_sum[((t + ws) % 128) / ws]) << t;
  }
}

TEST(WarpSize64Test, ShufflesReductionsAndBarriers) {
  ASSERT_MODULE();
  const uint32_t seed = std::random_device()();
  CheckShuffles(64, 33, seed);  // lane l reads lane l ^ 33: across the 32-lane halves
  CheckShuffles(64, 1, seed);
  CheckShuffles(32, 17, seed);
}

TEST(MbarrierTest, PhaseCompletesAfterTheExpectedArrivals) {
  ASSERT_MODULE();
  std::vector<int> out(64 * 5, -1);
  int* p = out.data();
  absl::Status s = Launch(*Module(), "mbar_phases", {2, 1, 1}, {64, 1, 1}, 8, {&p});
  ASSERT_TRUE(s.ok()) << s;
  for (int t = 0; t < 64; ++t) {
    EXPECT_EQ(out[t * 5 + 0], 0) << "before any arrival, thread " << t;
    EXPECT_EQ(out[t * 5 + 1], 1) << "the token's phase completed, thread " << t;
    EXPECT_EQ(out[t * 5 + 2], 0) << "the next phase is open, thread " << t;
    EXPECT_EQ(out[t * 5 + 3], 1) << "32 arrivals of 2 complete phase 1, thread " << t;
    EXPECT_EQ(out[t * 5 + 4], 0) << "phase 2 (parity 0) is open, thread " << t;
  }
}

TEST(MbarrierTest, TxCountKeepsThePhaseOpenUntilCompleteTx) {
  ASSERT_MODULE();
  std::vector<int> out(5, -1);
  int* p = out.data();
  absl::Status s = Launch(*Module(), "mbar_tx", {1, 1, 1}, {1, 1, 1}, 8, {&p});
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0], 0) << "arrived, 128 bytes pending";
  EXPECT_EQ(out[1], 0) << "28 bytes pending";
  EXPECT_EQ(out[2], 1) << "every byte landed";
  EXPECT_EQ(out[3], 0) << "expect_tx before the arrival keeps phase 1 open";
  EXPECT_EQ(out[4], 1);
}

TEST(MbarrierTest, AWaitNobodyCanCompleteIsADeadlockNamingTheBarrier) {
  ASSERT_MODULE();
  int count = 65;
  absl::Status s = Launch(*Module(), "mbar_deadlock", {1, 1, 1}, {64, 1, 1}, 16, {&count});
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted);
  EXPECT_TRUE(Contains(s,
                       "deadlock in kernel mbar_deadlock, block (0, 0, 0): threads 0-63 wait on "
                       "the mbarrier at shared offset 8 (phase parity 0, 1 of 65 arrivals "
                       "pending, tx-count 0) at " +
                           LineOf("deadlock")))
      << s;
  count = 64;
  s = Launch(*Module(), "mbar_deadlock", {1, 1, 1}, {64, 1, 1}, 16, {&count});
  EXPECT_TRUE(s.ok()) << s;
}

TEST(MbarrierTest, UninitialisedBarrierIsAnError) {
  ASSERT_MODULE();
  absl::Status s = Launch(*Module(), "mbar_uninitialised", {1, 1, 1}, {1, 1, 1}, 8, {});
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted);
  EXPECT_TRUE(Contains(s,
                       "thread (0, 0, 0): the mbarrier at shared offset 0: the 8 bytes "
                       "(0xffffffffffffffff) hold no initialised mbarrier"))
      << s;
}

void CheckSpinStops(const char* kernel, const std::string& line) {
  SCOPED_TRACE(kernel);
  LaunchOptions options;
  options.time_limit_s = 0.5;
  const auto start = std::chrono::steady_clock::now();
  absl::Status s = Launch(*Module(), kernel, {1, 1, 1}, {64, 1, 1}, 8, {}, options);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_TRUE(Contains(s, absl::StrCat("kernel ", kernel, ", block (0, 0, 0), thread ("))) << s;
  EXPECT_TRUE(Contains(s, "ran past its time limit of 0.5 s")) << s;
  EXPECT_TRUE(Contains(s, "this thread was at " + line)) << s;
  EXPECT_LT(seconds, 5.0);
}

TEST(WatchdogTest, SpinOnAnMbarrierStopsAtTheTimeLimit) {
  ASSERT_MODULE();
  CheckSpinStops("spin_mbarrier", LineOf("spin_mbarrier"));
}

TEST(WatchdogTest, SpinOnASharedFlagStopsAtTheTimeLimit) {
  ASSERT_MODULE();
  CheckSpinStops("spin_flag", LineOf("spin_flag"));
}

}  // namespace
}  // namespace tilec::host
