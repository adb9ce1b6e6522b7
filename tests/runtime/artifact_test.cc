#include "runtime/artifact.h"

#include <fstream>
#include <string>

#include "absl/strings/str_replace.h"
#include "compiler/cache/digest.h"
#include "compiler/cache/signing.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/compiler/targets/cuda/emit_testing.h"
#include "tests/runtime/runtime_testing.h"
#include "tests/testing/ed25519_key.h"
#include "tests/testing/temp_dir.h"

namespace tilec::runtime {
namespace {

using ::testing::HasSubstr;
using ::tilec::testing::BuildForRuntime;
using ::tilec::testing::CompileExampleCase;

TEST(RuntimeArtifact, ReadsWhatTheCompilerWrites) {
  absl::StatusOr<ir::Program> program = CompileExampleCase("gqa_decode_small");
  ASSERT_TRUE(program.ok()) << program.status();
  absl::StatusOr<testing::BuiltArtifact> built = BuildForRuntime(*program);
  ASSERT_TRUE(built.ok()) << built.status();
  const Artifact& a = built->artifact;
  EXPECT_EQ(a.program, built->cuda.program);
  EXPECT_EQ(a.target, "sm_80");
  EXPECT_EQ(a.vendor(), "cuda");
  EXPECT_EQ(a.source, built->cuda.source.code);
  ASSERT_EQ(a.params.size(), built->cuda.params.size());
  ASSERT_EQ(a.kernels.size(), built->cuda.source.kernels.size());
  ASSERT_EQ(a.workspaces.size(), built->cuda.source.workspaces.size());
  EXPECT_GE(a.kernels.size(), 2u);
  EXPECT_FALSE(a.workspaces.empty());
  for (size_t k = 0; k < a.kernels.size(); ++k) {
    EXPECT_EQ(a.kernels[k].name, built->cuda.source.kernels[k].name);
    EXPECT_EQ(a.kernels[k].block[0], built->cuda.source.kernels[k].threads);
    EXPECT_EQ(a.kernels[k].smem_bytes, built->cuda.source.kernels[k].smem_bytes);
    EXPECT_EQ(a.kernels[k].args.size(), built->cuda.source.kernels[k].params.size());
  }
}

TEST(RuntimeArtifact, ReadFilesFindsTheBinaryAndSourceBeside) {
  absl::StatusOr<ir::Program> program = CompileExampleCase("elementwise_add_ragged");
  ASSERT_TRUE(program.ok());
  absl::StatusOr<testing::BuiltArtifact> built = BuildForRuntime(*program);
  ASSERT_TRUE(built.ok());
  const std::string dir = testing::MakeTempDir("runtime_artifact");
  ASSERT_FALSE(dir.empty());
  ASSERT_TRUE(cuda::WriteCudaArtifact(built->cuda, dir, "k").ok());
  absl::StatusOr<Artifact> a = Artifact::ReadFiles(dir + "/k.json");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->binary, built->cuda.cubin);
  EXPECT_EQ(a->source, built->cuda.source.code);
  absl::StatusOr<Artifact> missing = Artifact::ReadFiles(dir + "/nope.json");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("nope.json"));
}

// A signed artifact loads with its signer's public key; a modified binary or
// metadata, another key, or no signature is refused before loading.
TEST(RuntimeArtifact, ReadFilesVerifiedLoadsOnlyWhatTheKeySigned) {
  absl::StatusOr<ir::Program> program = CompileExampleCase("elementwise_add_ragged");
  ASSERT_TRUE(program.ok());
  absl::StatusOr<testing::BuiltArtifact> built = BuildForRuntime(*program);
  ASSERT_TRUE(built.ok());
  const std::string dir = testing::MakeTempDir("signed_artifact");
  ASSERT_TRUE(cuda::WriteCudaArtifact(built->cuda, dir, "k").ok());
  ASSERT_TRUE(testing::WriteEd25519Key(dir + "/fleet"));
  ASSERT_TRUE(testing::WriteEd25519Key(dir + "/other"));
  auto signer = cache::Signer::FromFile(dir + "/fleet.pem");
  auto fleet = cache::Verifier::FromFiles({dir + "/fleet.pub.pem"});
  auto other = cache::Verifier::FromFiles({dir + "/other.pub.pem"});
  ASSERT_TRUE(signer.ok() && fleet.ok() && other.ok());
  absl::StatusOr<Artifact> plain = Artifact::ReadFiles(dir + "/k.json");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(Artifact::ReadFilesVerified(dir + "/k.json", **fleet).status().code(),
            absl::StatusCode::kPermissionDenied);  // no signature yet
  std::string metadata = plain->metadata_json;
  if (!metadata.empty() && metadata.back() == '\n') metadata.pop_back();
  const std::string key(64, 'a');
  std::ofstream(dir + "/k.sig") << cache::SignatureFile(
      key,
      (*signer)->Sign(cache::ArtifactStatement(key, cache::Sha256Hex(plain->binary), metadata)));
  absl::StatusOr<Artifact> a = Artifact::ReadFilesVerified(dir + "/k.json", **fleet);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->binary, built->cuda.cubin);
  absl::Status foreign = Artifact::ReadFilesVerified(dir + "/k.json", **other).status();
  EXPECT_EQ(foreign.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(foreign.message(), HasSubstr("does not verify"));
  {  // One byte of the binary changed.
    std::string bin = plain->binary;
    bin[bin.size() / 2] ^= 1;
    std::ofstream(dir + "/k.cubin", std::ios::binary) << bin;
  }
  EXPECT_EQ(Artifact::ReadFilesVerified(dir + "/k.json", **fleet).status().code(),
            absl::StatusCode::kPermissionDenied);
  std::ofstream(dir + "/k.cubin", std::ios::binary) << plain->binary;
  ASSERT_TRUE(Artifact::ReadFilesVerified(dir + "/k.json", **fleet).ok());
  // The launch metadata changed (a wider grid, say).
  std::ofstream(dir + "/k.json") << metadata << " \n";
  EXPECT_EQ(Artifact::ReadFilesVerified(dir + "/k.json", **fleet).status().code(),
            absl::StatusCode::kPermissionDenied);
}

TEST(RuntimeArtifact, MalformedMetadataNamesTheField) {
  const std::string good =
      R"json({"schema": "tilec.cuda.artifact.v1", "program": "p", "target": "sm_80",
    "config": {}, "dyn_dims": ["N"],
    "params": [{"name": "X", "kind": "tensor", "dtype": "float32", "shape": ["N"]}],
    "workspaces": [{"name": "w", "dtype": "float32", "shape": ["N"], "bytes": "N * 4"}],
    "kernels": [{"name": "k0", "grid": ["T.ceildiv(N, 128)", "1", "1"], "block": [128, 1, 1],
                 "smem_bytes": 0, "params": ["X", "w", "N"]}]})json";
  ASSERT_TRUE(Artifact::Parse(good).ok()) << Artifact::Parse(good).status();
  struct Case {
    std::string from, to, message;
  } cases[] = {
      {"tilec.cuda.artifact.v1", "tilec.cuda.artifact.v9",
       "schema: \"tilec.cuda.artifact.v9\" is not"},
      {"\"float32\", \"shape\": [\"N\"]}]", "\"float33\", \"shape\": [\"N\"]}]",
       "params[0].dtype: unknown dtype \"float33\""},
      {"[\"N\"]}],\n    \"workspaces\"", "[\"M\"]}],\n    \"workspaces\"",
       "params[0].shape[0]: \"M\" names M, which is not a dynamic dim"},
      {"\"T.ceildiv(N, 128)\"", "\"T.exp(N)\"",
       "kernels[0].grid[0]: metadata expression \"T.exp(N)\""},
      {"[128, 1, 1]", "[2048, 1, 1]", "kernels[0].block[0]: must be an integer in [1, 1024]"},
      {"\"params\": [\"X\", \"w\", \"N\"]", "\"params\": [\"X\", \"v\", \"N\"]",
       "kernels[0].params[1]: \"v\" is not a parameter"},
      {"\"kind\": \"tensor\"", "\"kind\": \"pointer\"",
       "params[0].kind: \"pointer\" is not tensor or scalar"},
      {"\"smem_bytes\": 0", "\"smem_bytes\": \"0\"", "kernels[0].smem_bytes: must be an integer"},
      {"\"name\": \"w\"", "\"name\": \"X\"", "the name X is declared twice"},
      {"\"program\": \"p\",", "", "program: missing"},
  };
  for (const Case& c : cases) {
    std::string text = absl::StrReplaceAll(good, {{c.from, c.to}});
    ASSERT_NE(text, good) << c.from;
    absl::StatusOr<Artifact> a = Artifact::Parse(text);
    ASSERT_FALSE(a.ok()) << c.message;
    EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(a.status().message(), HasSubstr(c.message));
  }
  absl::StatusOr<Artifact> not_json = Artifact::Parse("{\"schema\": ");
  EXPECT_THAT(not_json.status().message(), HasSubstr("artifact metadata: JSON at byte"));
}

TEST(RuntimeArtifact, TensorMapsAreReadAndChecked) {
  const std::string good =
      R"json({"schema": "tilec.cuda.artifact.v1", "program": "p", "target": "sm_90a",
    "config": {}, "dyn_dims": ["M"],
    "params": [{"name": "A", "kind": "tensor", "dtype": "float16", "shape": ["M", "64"]}],
    "workspaces": [],
    "kernels": [{"name": "k0", "grid": ["1", "1", "1"], "block": [384, 1, 1],
                 "smem_bytes": 0, "params": ["A", "M", "A_tmap"],
                 "tensor_maps": [{"name": "A_tmap", "tensor": "A", "box": [128, 64],
                                  "swizzle": 128}]}]})json";
  absl::StatusOr<Artifact> a = Artifact::Parse(good);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_EQ(a->kernels[0].tensor_maps.size(), 1u);
  const TensorMapSpec& m = a->kernels[0].tensor_maps[0];
  EXPECT_EQ(m.param, 0);
  EXPECT_EQ(m.box, (std::vector<int64_t>{128, 64}));
  EXPECT_EQ(m.swizzle_bytes, 128);
  ASSERT_EQ(a->kernels[0].args.size(), 3u);
  EXPECT_EQ(a->kernels[0].args[2].kind, KernelArgRef::Kind::kTensorMap);
  struct Case {
    std::string from, to, message;
  } cases[] = {
      {"\"tensor\": \"A\"", "\"tensor\": \"M\"", "tensor_maps[0].tensor: \"M\" is not a tensor"},
      {"[128, 64]", "[128, 512]", "tensor_maps[0].box: must be integers in [1, 256]"},
      {"[128, 64]", "[128]", "tensor_maps[0].box: must have one extent per dimension"},
      {"\"swizzle\": 128", "\"swizzle\": 96", "tensor_maps[0].swizzle: must be 0, 32, 64 or 128"},
      {"\"name\": \"A_tmap\"", "\"name\": \"M\"", "tensor_maps[0].name: names another"},
  };
  for (const Case& c : cases) {
    std::string text = absl::StrReplaceAll(good, {{c.from, c.to}});
    ASSERT_NE(text, good) << c.from;
    absl::StatusOr<Artifact> bad = Artifact::Parse(text);
    ASSERT_FALSE(bad.ok()) << c.message;
    EXPECT_THAT(bad.status().message(), HasSubstr(c.message));
  }
}

}  // namespace
}  // namespace tilec::runtime
