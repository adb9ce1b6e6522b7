// Conformance: queries of the device (tilelang.carver.arch.driver,
// torch.cuda), answered from the hardware profile of the target the kernel
// is built for, recorded in the program, its printed form and the artifact
// (docs/language.md). The kernels are checked on the interpreter against
// references computed here, then on the emulator against the interpreter.
#include <string>
#include <vector>

#include "compiler/frontend/frontend.h"
#include "compiler/ir/printer.h"
#include "compiler/recommend/profile.h"
#include "compiler/targets/cuda/artifact.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/conformance/conformance_testing.h"

namespace tilec::conformance {
namespace {

using ir::DType;
using ::testing::HasSubstr;

constexpr char kSource[] = R"(
import torch
import tilelang
import tilelang.language as T
from tilelang.carver.arch import driver

def persistent(N):
    sm_num = driver.get_num_sms()
    @T.prim_func
    def main(O: T.Tensor((N,), "int32")):
        with T.Kernel(sm_num, threads=32) as b:
            for k in T.serial(T.ceildiv(N, sm_num)):
                if k * sm_num + b < N:
                    O[k * sm_num + b] = b
    return main

def is_hopper():
    if not torch.cuda.is_available():
        return False
    props = torch.cuda.get_device_properties(0)
    return (props.major, props.minor) == (9, 0)

def by_capability(N):
    major, minor = torch.cuda.get_device_capability(torch.cuda.current_device())
    width = 2 if is_hopper() else 1
    smem = driver.get_max_dynamic_shared_size_bytes(format="kb")
    @T.prim_func
    def main(O: T.Tensor((N,), "int32")):
        with T.Kernel(1, threads=32) as b:
            for i in T.Parallel(N):
                O[i] = major * 10 + minor + width * 1000 + smem * 100000
    return main

def persistent_tiles(M, N, bm=16, bn=32, group=8):
    sm_num = driver.get_num_sms()
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), O: T.Tensor((M, N), "float32")):
        with T.Kernel(sm_num, threads=128) as block_id:
            for bx, by in T.Persistent([T.ceildiv(M, bm), T.ceildiv(N, bn)], sm_num, block_id,
                                       group_size=group):
                for i, j in T.Parallel(bm, bn):
                    O[bx * bm + i, by * bn + j] = O[bx * bm + i, by * bn + j] + A[bx * bm + i, by * bn + j]
    return main

def persistent_1d(N, b=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), O: T.Tensor((N,), "float32")):
        with T.Kernel(3, threads=64) as block_id:
            for t in T.Persistent([T.ceildiv(N, b)], 3, block_id):
                for i in T.Parallel(b):
                    O[t * b + i] = O[t * b + i] + A[t * b + i]
    return main

def other_device():
    n = driver.get_num_sms(1)
    @T.prim_func
    def main(O: T.Tensor((1,), "int32")):
        with T.Kernel(1, threads=32) as b:
            O[0] = n
    return main
)";

frontend::DeviceFacts Facts(const std::string& profile) {
  absl::StatusOr<recommend::HardwareProfile> p =
      recommend::FindProfile(recommend::BuiltinProfiles(), profile);
  EXPECT_TRUE(p.ok()) << p.status();
  return recommend::DeviceFactsOf(*p);
}

absl::StatusOr<ir::Program> CompileFor(const std::string& function, const BindingList& bindings,
                                       std::optional<frontend::DeviceFacts> device) {
  frontend::Bindings b;
  for (const auto& [k, v] : bindings) b.values.emplace_back(k, v);
  b.device = std::move(device);
  return frontend::CompileTileLang({"conformance.py", kSource}, function, b);
}

TEST(ConformanceDevice, TheNumberOfSmsIsTheProfiles) {
  for (const std::string profile : {"h100", "a100"}) {
    const frontend::DeviceFacts dev = Facts(profile);
    absl::StatusOr<ir::Program> p = CompileFor("persistent", {{"N", "1000"}}, dev);
    ASSERT_TRUE(p.ok()) << p.status();
    ASSERT_EQ(p->device_queries.size(), 1u);
    EXPECT_EQ(p->device_queries[0], "driver.get_num_sms() = " + std::to_string(dev.sm_count) +
                                        " (profile " + dev.profile + ")");
    EXPECT_THAT(ir::Print(*p), HasSubstr("# device query: driver.get_num_sms()"));
    Tensors args = {Zeros(DType::kInt32, {1000})};
    Interpret(*p, args);
    std::vector<int64_t> want;
    for (int64_t i = 0; i < 1000; ++i) want.push_back(i % dev.sm_count);
    ExpectEqualInts(args[0], want);
    ExpectTargetsMatch(*p, {.seed = Seed(401)});
  }
}

TEST(ConformanceDevice, TorchCudaPropertiesAndTheDriversMemory) {
  const frontend::DeviceFacts h100 = Facts("h100"), a100 = Facts("a100");
  for (const frontend::DeviceFacts& dev : {h100, a100}) {
    absl::StatusOr<ir::Program> p = CompileFor("by_capability", {{"N", "40"}}, dev);
    ASSERT_TRUE(p.ok()) << p.status();
    Tensors args = {Zeros(DType::kInt32, {40})};
    Interpret(*p, args);
    const int64_t width = dev.major == 9 && dev.minor == 0 ? 2 : 1;
    const int64_t want =
        dev.major * 10 + dev.minor + width * 1000 + dev.shared_memory_per_block / 1024 * 100000;
    ExpectEqualInts(args[0], std::vector<int64_t>(40, want));
    EXPECT_GE(p->device_queries.size(), 4u);
  }
  EXPECT_EQ(h100.major, 9);
  EXPECT_EQ(a100.major, 8);
}

// T.Persistent visits every tile of its domain exactly once: O += A would
// add twice where a tile were visited twice, and not at all where missed.
TEST(ConformanceDevice, PersistentLoopsVisitEveryTileOnce) {
  struct Case {
    const char* fn;
    BindingList bindings;
    std::vector<int64_t> shape;
  };
  const Case cases[] = {
      {"persistent_tiles", {{"M", "300"}, {"N", "700"}}, {300, 700}},
      {"persistent_tiles", {{"M", "200"}, {"N", "90"}, {"group", "3"}}, {200, 90}},
      {"persistent_1d", {{"N", "1000"}}, {1000}},
  };
  for (const Case& c : cases) {
    absl::StatusOr<ir::Program> p = CompileFor(c.fn, c.bindings, Facts("h100"));
    ASSERT_TRUE(p.ok()) << p.status();
    const uint64_t seed = Seed(402);
    Tensors args = {Random(DType::kFloat32, c.shape, seed),
                    Random(DType::kFloat32, c.shape, seed + 1)};
    const interp::Tensor before = args[1];
    Interpret(*p, args);
    ExpectClose(args[1],
                Table(args[1].num_elements(),
                      [&](int64_t k) {
                        return static_cast<float>(before.GetDouble(k) + args[0].GetDouble(k));
                      }),
                interp::DefaultTolerance(DType::kFloat32));
    ExpectTargetsMatch(*p, {.seed = seed});
  }
}

TEST(ConformanceDevice, TheArtifactSaysWhatWasAsked) {
  absl::StatusOr<ir::Program> p = CompileFor("persistent", {{"N", "100"}}, Facts("h100"));
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<cuda::CudaTarget> target = cuda::CudaTarget::FromName("sm_90a");
  ASSERT_TRUE(target.ok());
  absl::StatusOr<cuda::CudaArtifact> a = cuda::BuildCudaArtifact(*p, *target);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_THAT(cuda::CudaArtifactMetadataJson(*a),
              HasSubstr("\"device_queries\": [\"driver.get_num_sms() = "));
}

TEST(ConformanceDevice, WithoutATargetOrForAnotherDeviceTheQueryIsRefused) {
  absl::Status st = CompileFor("persistent", {{"N", "100"}}, std::nullopt).status();
  EXPECT_THAT(std::string(st.message()),
              HasSubstr("driver.get_num_sms() asks the device; tilec answers from the hardware "
                        "profile of the target it compiles for, and none was given (--target)"));
  EXPECT_THAT(std::string(st.message()), HasSubstr("conformance.py:"));
  st = CompileFor("other_device", {}, Facts("h100")).status();
  EXPECT_THAT(std::string(st.message()), HasSubstr("tilec answers for device 0"));
}

// Torch tensors of module-level host code, known to tilec by shape and dtype.
constexpr char kTorchSource[] = R"(
import torch
import tilelang.language as T

torch.random.manual_seed(0)
torch.backends.cuda.matmul.allow_tf32 = False
A = torch.rand(70, 33, device="cuda", dtype=torch.float16) * 2 - 1
B = torch.randn((33, 40), dtype=torch.float16).cuda()
M, K = A.shape
N = B.shape[1]
C = torch.empty(M, N, device="cuda")
W = torch.zeros_like(C, dtype=torch.bfloat16)
idx = torch.randint(0, 10, (M,), device="cuda")
r = torch.arange(0, 12, 3)
prod = (A @ B).T
bc = torch.ones(4, 1, 5) + torch.ones(3, 1)

def sizes():
    @T.prim_func
    def main(X: T.Tensor((M, K), A.dtype), O: T.Tensor((13,), "int32")):
        with T.Kernel(1, threads=32):
            O[0] = M
            O[1] = K
            O[2] = N
            O[3] = W.dtype.bits
            O[4] = idx.numel()
            O[5] = r.shape[0]
            O[6] = prod.shape[0]
            O[7] = bc.shape[1]
            O[8] = A.stride(0)
            O[9] = A.view(-1, 11).shape[0]
            O[10] = A.permute(1, 0).size(0)
            O[11] = C.element_size()
            O[12] = idx.dtype.bits
    return main

def values():
    @T.prim_func
    def main(O: T.Tensor((1,), "float32")):
        with T.Kernel(1, threads=32):
            O[0] = A.sum()
    return main

def mismatch():
    bad = torch.ones(3, 4) + torch.ones(5)
    @T.prim_func
    def main(O: T.Tensor((1,), "float32")):
        with T.Kernel(1, threads=32):
            O[0] = 1.0
    return main
)";

TEST(ConformanceTorch, ModuleLevelTensorsGiveShapesAndDtypes) {
  ir::Program p = Compile(kTorchSource, "sizes");
  ASSERT_EQ(p.params.size(), 2u);
  Tensors args = {Random(DType::kFloat16, {70, 33}, Seed(441)), Zeros(DType::kInt32, {13})};
  Interpret(p, args);
  ExpectEqualInts(args[1], {70, 33, 40, 16, 70, 4, 40, 3, 33, 210, 33, 4, 64});
}

TEST(ConformanceTorch, ValuesAndUnbroadcastableShapesRefused) {
  ExpectRefused(kTorchSource, "values", {},
                "a torch tensor has no attribute `sum` that tilec knows; tilec knows a host "
                "tensor's shape and dtype, never its values");
  ExpectRefused(kTorchSource, "mismatch", {}, "their shapes do not broadcast");
}

}  // namespace
}  // namespace tilec::conformance
