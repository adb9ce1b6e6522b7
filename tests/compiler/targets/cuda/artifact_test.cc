#include "compiler/targets/cuda/artifact.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tests/compiler/targets/cuda/emit_testing.h"

namespace tilec::cuda {
namespace {

using ::testing::HasSubstr;
using ::tilec::testing::CompileExampleCase;
using ::tilec::testing::CompileSource;
using ::tilec::testing::kScaleKernel;

// The metadata parsed back as JSON.
google::protobuf::Struct ParseJson(const std::string& json) {
  google::protobuf::Struct s;
  auto st = google::protobuf::util::JsonStringToMessage(json, &s);
  EXPECT_TRUE(st.ok()) << st.ToString() << "\n" << json;
  return s;
}

const google::protobuf::Value& Field(const google::protobuf::Struct& s, const std::string& name) {
  static const google::protobuf::Value kMissing;
  auto it = s.fields().find(name);
  EXPECT_NE(it, s.fields().end()) << name;
  return it == s.fields().end() ? kMissing : it->second;
}

std::vector<std::string> Strings(const google::protobuf::Value& list) {
  std::vector<std::string> out;
  for (const auto& v : list.list_value().values()) out.push_back(v.string_value());
  return out;
}

TEST(CudaArtifact, MetadataDescribesKernelsParametersAndConfig) {
  absl::StatusOr<ir::Program> program = CompileExampleCase("elementwise_add_ragged");
  ASSERT_TRUE(program.ok()) << program.status();
  absl::StatusOr<CudaArtifact> a =
      BuildCudaArtifact(*program, CudaTarget::ForArch(CudaArch::kSm80));
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_GE(a->cubin.size(), 4u);
  EXPECT_EQ(a->cubin.substr(0, 4),
            "\x7f"
            "ELF");
  google::protobuf::Struct m = ParseJson(CudaArtifactMetadataJson(*a));
  EXPECT_EQ(Field(m, "schema").string_value(), "tilec.cuda.artifact.v1");
  EXPECT_EQ(Field(m, "program").string_value(), "elementwise_add");
  EXPECT_EQ(Field(m, "target").string_value(), "sm_80");
  EXPECT_EQ(Field(m, "nvrtc").string_value(), NvrtcVersion());
  const auto& config = Field(m, "config").struct_value();
  EXPECT_EQ(Field(config, "block_M").number_value(), 32);
  EXPECT_EQ(Field(config, "block_N").number_value(), 64);
  EXPECT_EQ(Field(config, "threads").number_value(), 128);
  const auto& params = Field(m, "params").list_value();
  ASSERT_EQ(params.values_size(), 3);
  const auto& c = params.values(2).struct_value();
  EXPECT_EQ(Field(c, "name").string_value(), "C");
  EXPECT_EQ(Field(c, "kind").string_value(), "tensor");
  EXPECT_EQ(Field(c, "dtype").string_value(), "float16");
  EXPECT_EQ(Strings(Field(c, "shape")), (std::vector<std::string>{"100", "72"}));
  const auto& kernels = Field(m, "kernels").list_value();
  ASSERT_EQ(kernels.values_size(), 1);
  const auto& k = kernels.values(0).struct_value();
  EXPECT_EQ(Field(k, "name").string_value(), "elementwise_add_k0");
  // ceildiv(72, 64) x ceildiv(100, 32)
  EXPECT_EQ(Strings(Field(k, "grid")), (std::vector<std::string>{"2", "4", "1"}));
  EXPECT_EQ(Field(k, "block").list_value().values(0).number_value(), 128);
  EXPECT_EQ(Field(k, "smem_bytes").number_value(), 0);
  EXPECT_GT(Field(k, "registers").number_value(), 0);
  EXPECT_EQ(Field(k, "spill_store_bytes").number_value(), 0);
  EXPECT_EQ(Strings(Field(k, "params")), (std::vector<std::string>{"A", "B", "C"}));
  EXPECT_TRUE(Strings(Field(k, "mma")).empty());  // no T.gemm
}

// The metadata names the tensor-core instruction of each kernel: the float8
// mma on sm_90a, the f16 mma the operands are converted for on sm_80.
TEST(CudaArtifact, NamesTheMmaInstruction) {
  absl::StatusOr<ir::Program> program = CompileExampleCase("gemm_fp8_mixed_nn_ragged");
  ASSERT_TRUE(program.ok()) << program.status();
  for (auto [arch, mma] :
       {std::pair{CudaArch::kSm90a, "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32"},
        std::pair{CudaArch::kSm80, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"}}) {
    absl::StatusOr<CudaArtifact> a = BuildCudaArtifact(*program, CudaTarget::ForArch(arch));
    ASSERT_TRUE(a.ok()) << a.status();
    google::protobuf::Struct m = ParseJson(CudaArtifactMetadataJson(*a));
    const auto& k = Field(m, "kernels").list_value().values(0).struct_value();
    EXPECT_EQ(Strings(Field(k, "mma")), (std::vector<std::string>{mma}));
  }
}

TEST(CudaArtifact, DynamicDimsAppearAsExpressions) {
  absl::StatusOr<ir::Program> program = CompileSource("scale.py", kScaleKernel, "scale", {});
  ASSERT_TRUE(program.ok()) << program.status();
  absl::StatusOr<CudaArtifact> a =
      BuildCudaArtifact(*program, CudaTarget::ForArch(CudaArch::kSm90a));
  ASSERT_TRUE(a.ok()) << a.status();
  google::protobuf::Struct m = ParseJson(CudaArtifactMetadataJson(*a));
  EXPECT_EQ(Field(m, "target").string_value(), "sm_90a");
  EXPECT_EQ(Strings(Field(m, "dyn_dims")), (std::vector<std::string>{"N"}));
  const auto& x = Field(m, "params").list_value().values(0).struct_value();
  EXPECT_EQ(Strings(Field(x, "shape")), (std::vector<std::string>{"N"}));
  const auto& k = Field(m, "kernels").list_value().values(0).struct_value();
  EXPECT_EQ(Strings(Field(k, "grid")), (std::vector<std::string>{"T.ceildiv(N, 128)", "1", "1"}));
  EXPECT_EQ(Strings(Field(k, "params")), (std::vector<std::string>{"X", "Y", "N"}));
}

TEST(CudaArtifact, WorkspacesListTheirBytes) {
  absl::StatusOr<ir::Program> program = CompileExampleCase("gqa_decode_small");
  ASSERT_TRUE(program.ok()) << program.status();
  absl::StatusOr<CudaArtifact> a =
      BuildCudaArtifact(*program, CudaTarget::ForArch(CudaArch::kSm80));
  ASSERT_TRUE(a.ok()) << a.status();
  google::protobuf::Struct m = ParseJson(CudaArtifactMetadataJson(*a));
  const auto& ws = Field(m, "workspaces").list_value();
  ASSERT_EQ(ws.values_size(), 2);
  // Output_partial: [batch=1, heads=8, num_split=2, dim=32] float32.
  const auto& partial = ws.values(1).struct_value();
  EXPECT_EQ(Field(partial, "name").string_value(), "Output_partial");
  EXPECT_EQ(Field(partial, "bytes").string_value(), "2048");
  EXPECT_EQ(Field(m, "kernels").list_value().values_size(), 2);
}

TEST(CudaArtifact, WritesCubinSourceAndMetadata) {
  absl::StatusOr<ir::Program> program =
      CompileSource("scale.py", kScaleKernel, "scale", {{"N", "1000"}});
  ASSERT_TRUE(program.ok()) << program.status();
  absl::StatusOr<CudaArtifact> a =
      BuildCudaArtifact(*program, CudaTarget::ForArch(CudaArch::kSm80));
  ASSERT_TRUE(a.ok()) << a.status();
  const std::string dir = (std::filesystem::temp_directory_path() /
                           absl::StrCat("tilec_artifact_test_", ::getpid(), "/out"))
                              .string();
  ASSERT_TRUE(WriteCudaArtifact(*a, dir, "scale").ok());
  auto read = [&](const std::string& ext) {
    std::ifstream in(dir + "/scale" + ext, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  };
  EXPECT_EQ(read(".cubin"), a->cubin);
  EXPECT_EQ(read(".cu"), a->source.code);
  EXPECT_EQ(read(".json"), CudaArtifactMetadataJson(*a));
  std::filesystem::remove_all(std::filesystem::path(dir).parent_path());
}

TEST(CudaArtifact, UnboundTileParameterFailsBeforeCompiling) {
  absl::StatusOr<ir::Program> program =
      CompileSource("scale.py", kScaleKernel, "scale", {{"N", "1000"}});
  ASSERT_TRUE(program.ok()) << program.status();
  ir::Program p = *program;
  p.tile_params.push_back({ir::MakeVar("num_stages"), std::nullopt, {2, 3}});
  absl::StatusOr<CudaArtifact> a = BuildCudaArtifact(p, CudaTarget::ForArch(CudaArch::kSm80));
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(a.status().message()),
              HasSubstr("tile parameter num_stages is unbound; bind it with -D"));
}

}  // namespace
}  // namespace tilec::cuda
