#include "compiler/recommend/cost_model.h"

#include "gtest/gtest.h"

namespace tilec::recommend {
namespace {

const HardwareProfile& H100() {
  static const HardwareProfile p = *FindProfile(BuiltinProfiles(), "h100");
  return p;
}

// A memory-heavy kernel filling the H100 many times over.
KernelStats Streaming() {
  KernelStats k;
  k.blocks = 132 * 16;
  k.threads = 128;
  k.shared_bytes = 32 * 1024;
  k.registers = 64;
  k.global_bytes = 512 * 1024;
  k.bytes_per_stage = 32 * 1024;
  k.num_stages = 3;
  k.vector_flops = 64 * 1024;
  return k;
}

TEST(CostModelTest, TwiceTheTrafficForTheSameWorkIsSlower) {
  KernelStats a = Streaming(), b = Streaming();
  b.global_bytes *= 2;
  KernelCost ca = PredictKernel(a, H100()), cb = PredictKernel(b, H100());
  EXPECT_EQ(ca.limiter, "memory") << ca.reason;
  EXPECT_GT(cb.time_us, ca.time_us * 1.5);
}

TEST(CostModelTest, FewerBlocksThanSmsIsFlaggedByWaves) {
  KernelStats k = Streaming();
  k.blocks = 100;  // 100 of 132 SMs busy
  KernelCost c = PredictKernel(k, H100());
  EXPECT_EQ(c.limiter, "waves") << c.reason;
  EXPECT_LT(c.sm_utilization, 0.8);
  // One more full wave plus one block: the tail wave is nearly empty.
  k.blocks = 132 * 2 + 1;
  c = PredictKernel(k, H100());
  EXPECT_EQ(c.limiter, "waves") << c.reason;
}

TEST(CostModelTest, ShallowPipelinesLeaveLatencyExposed) {
  KernelStats k = Streaming();
  k.num_stages = 1;
  k.bytes_per_stage = 2 * 1024;
  k.shared_bytes = 200 * 1024;  // one block per SM
  KernelCost c = PredictKernel(k, H100());
  EXPECT_EQ(c.blocks_per_sm, 1);
  EXPECT_EQ(c.occupancy_limit, "shared memory");
  EXPECT_EQ(c.limiter, "occupancy") << c.reason;
  KernelStats deeper = k;
  deeper.num_stages = 4;
  EXPECT_LT(PredictKernel(deeper, H100()).time_us, c.time_us);
}

TEST(CostModelTest, MatrixWorkIsComputeBoundAtThePeak) {
  KernelStats k;
  k.blocks = 132 * 8;
  k.threads = 256;
  k.shared_bytes = 64 * 1024;
  k.registers = 128;
  k.matrix_flops = 2.0 * 128 * 128 * 4096;
  k.matrix_dtype = ir::DType::kFloat16;
  // Operands mostly re-read from L2: 16 MB of tensors in all.
  k.global_bytes = 256 * 1024;
  k.unique_bytes = 16 << 20;
  k.bytes_per_stage = 2.0 * (128 + 128) * 32;
  k.num_stages = 3;
  KernelCost c = PredictKernel(k, H100());
  EXPECT_EQ(c.limiter, "compute") << c.reason;
  // Never faster than the whole device at its fp16 peak.
  const double floor_us = k.blocks * k.matrix_flops / (989.4e12) * 1e6;
  EXPECT_GE(c.time_us, floor_us);
  EXPECT_LT(c.time_us, floor_us * 1.5 + kLaunchOverheadUs);
  // The same work in float8 inputs is faster (twice the peak).
  KernelStats f8 = k;
  f8.matrix_dtype = ir::DType::kFloat8E4M3;
  EXPECT_LT(PredictKernel(f8, H100()).time_us, c.time_us);
}

TEST(CostModelTest, ReReadsBeyondL2GoToDram) {
  // The same tile traffic over tensors that fit in L2 and tensors 8x larger.
  KernelStats fits = Streaming();
  fits.unique_bytes = 8 << 20;
  KernelStats spills = fits;
  spills.unique_bytes = 400 << 20;
  EXPECT_LT(PredictKernel(fits, H100()).time_us, PredictKernel(spills, H100()).time_us);
}

TEST(CostModelTest, MoreMainLoopIterationsForTheSameWorkAreSlower) {
  KernelStats k;
  k.blocks = 132 * 4;
  k.threads = 128;
  k.shared_bytes = 48 * 1024;
  k.registers = 96;
  k.matrix_flops = 2.0 * 128 * 128 * 4096;
  k.global_bytes = 64 * 1024;
  k.unique_bytes = 8 << 20;
  k.bytes_per_stage = 16 * 1024;
  k.num_stages = 2;
  k.loop_trips = 4096 / 64;
  KernelStats small_k = k;
  small_k.loop_trips = 4096 / 16;
  EXPECT_LT(PredictKernel(k, H100()).time_us, PredictKernel(small_k, H100()).time_us);
}

TEST(CostModelTest, ProgramTimeSumsKernels) {
  ProgramCost one = PredictProgram({Streaming()}, H100());
  ProgramCost two = PredictProgram({Streaming(), Streaming()}, H100());
  EXPECT_DOUBLE_EQ(two.time_us, 2 * one.time_us);
  EXPECT_EQ(two.kernels.size(), 2u);
}

}  // namespace
}  // namespace tilec::recommend
