// The worker end to end without tilecd: a real artifact (NVRTC builds it,
// the emulator backend runs its source) served by a loopback gRPC server
// (fake_tilecd.h) and measured through the session loop, the artifact cache
// and GetArtifact. The samples must be what the kernel computes from the
// inputs runtime::FillInputs makes (Y = 2 * X).
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <future>
#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "compiler/cache/digest.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/tensor_data.h"
#include "tests/compiler/targets/cuda/emit_testing.h"
#include "tests/runtime/runtime_testing.h"
#include "tests/testing/ed25519_key.h"
#include "tests/worker/fake_tilecd.h"
#include "worker/grpc_fetch.h"
#include "worker/measure.h"
#include "worker/session.h"

namespace tilec::worker {
namespace {

using ::testing::HasSubstr;
using ::tilec::testing::FakeTilecd;
using ::tilec::testing::Next;
using ::tilec::testing::SessionStream;
using ::tilec::v1::MeasureResult;
using ::tilec::v1::WorkerCommand;
using ::tilec::v1::WorkerMessage;

constexpr int64_t kN = 1000;  // not a multiple of the block: a ragged last block
constexpr int kSamples = 32;

struct Served {
  std::string digest, metadata;
  runtime::Artifact artifact;
};

Served BuildScale() {
  absl::StatusOr<ir::Program> program =
      testing::CompileSource("scale.py", testing::kScaleKernel, "scale");
  EXPECT_TRUE(program.ok()) << program.status();
  absl::StatusOr<testing::BuiltArtifact> built = testing::BuildForRuntime(*program);
  EXPECT_TRUE(built.ok()) << built.status();
  return Served{cache::Sha256Hex(built->cuda.cubin), cuda::CudaArtifactMetadataJson(built->cuda),
                built->artifact};
}

WorkerCommand Job(const std::string& id, const Served& a, const std::string& digest,
                  uint64_t seed) {
  WorkerCommand c;
  tilec::v1::MeasureJob* j = c.mutable_job();
  j->set_job_id(id);
  j->set_lease(11);
  j->set_artifact_digest(digest);
  j->set_metadata_json(a.metadata);
  tilec::v1::NamedValue* n = j->add_dims();
  n->set_name("N");
  n->set_value(kN);
  j->set_seed(seed);
  j->set_warmup(1);
  j->set_iterations(2);
  j->set_samples(kSamples);
  return c;
}

// Runs `jobs` through a worker on the emulator; the results in order.
std::vector<MeasureResult> Measure(const Served& served, const std::vector<WorkerCommand>& jobs,
                                   const MeasureOptions& options, int* artifact_calls = nullptr) {
  std::vector<MeasureResult> results;
  std::promise<void> done;
  FakeTilecd server([&](int, grpc::ServerContext*, SessionStream* s) {
    WorkerMessage m;
    EXPECT_TRUE(Next(s, &m));
    EXPECT_EQ(m.hello().device().device(), "emulator");
    s->Write(testing::Welcome(30));
    for (const WorkerCommand& job : jobs) s->Write(job);
    while (results.size() < jobs.size() && Next(s, &m)) {
      if (m.has_result()) results.push_back(m.result());
    }
    done.set_value();
    while (Next(s, &m)) {
    }
    return grpc::Status::OK;
  });
  server.AddArtifact(served.digest, served.artifact.binary);
  const std::string dir =
      absl::StrCat(::testing::TempDir(), "/worker_measure_", ::getpid(), "_", std::rand());
  std::unique_ptr<runtime::Backend> backend = runtime::OpenEmulatorBackend();
  ArtifactCache cache(dir, GrpcFetcher(server.Channel(), ""));
  EXPECT_TRUE(cache.Init().ok());
  Measurer measurer(backend.get(), &cache, options);
  SessionOptions session;
  session.channel = server.Channel();
  session.hello.mutable_device()->set_device("emulator");
  WorkerLoop loop(session, &measurer);
  int code = -1;
  std::thread worker([&] { code = loop.Run(); });
  EXPECT_EQ(done.get_future().wait_for(std::chrono::seconds(300)), std::future_status::ready);
  loop.Drain();
  worker.join();
  EXPECT_EQ(code, 0);
  if (artifact_calls) *artifact_calls = server.artifact_calls();
  std::filesystem::remove_all(dir);
  return results;
}

// Checks that `r` holds X and Y = 2 * X (plus `offset`) at the positions
// the job's seed chooses.
void ExpectScaleSamples(const Served& served, const MeasureResult& r, uint64_t seed,
                        double offset) {
  ASSERT_EQ(r.code(), 0) << r.message();
  EXPECT_EQ(r.ms_size(), 2);
  EXPECT_EQ(r.timing(), "emulator wall time");
  absl::StatusOr<std::vector<runtime::HostValue>> in =
      runtime::FillInputs(served.artifact, {{"N", kN}}, seed);
  ASSERT_TRUE(in.ok()) << in.status();
  const runtime::DTypeInfo& f32 = served.artifact.params[0].dtype;
  ASSERT_EQ(r.outputs_size(), 2);
  EXPECT_EQ(r.outputs(0).name(), "X");
  EXPECT_EQ(r.outputs(1).name(), "Y");
  const std::vector<int64_t> at_x = runtime::SamplePositions(seed, kN, kSamples);
  const std::vector<int64_t> at_y = runtime::SamplePositions(seed + 1, kN, kSamples);
  ASSERT_EQ(r.outputs(0).values_size(), kSamples);
  ASSERT_EQ(r.outputs(1).values_size(), kSamples);
  bool nonzero = false;
  for (int k = 0; k < kSamples; ++k) {
    const double x = runtime::ReadElement(f32, (*in)[0].bytes.data(), at_x[k]);
    const double y = 2 * runtime::ReadElement(f32, (*in)[0].bytes.data(), at_y[k]);
    EXPECT_EQ(r.outputs(0).values(k), x + offset) << "X[" << at_x[k] << "]";
    EXPECT_EQ(r.outputs(1).values(k), y + offset) << "Y[" << at_y[k] << "]";
    nonzero |= y != 0;
  }
  EXPECT_TRUE(nonzero);
}

uint64_t Seed() {
  const uint64_t seed = testing::TestSeed(std::random_device{}());
  std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
  return seed;
}

TEST(WorkerOnTheEmulator, MeasuresJobsAndSamplesWhatTheKernelComputed) {
  const Served served = BuildScale();
  ASSERT_FALSE(served.digest.empty());
  const uint64_t seed = Seed();
  const std::string missing(64, 'a');
  int calls = 0;
  std::vector<MeasureResult> r =
      Measure(served,
              {Job("j0", served, missing, seed), Job("j1", served, served.digest, seed),
               Job("j2", served, served.digest, seed + 17)},
              {}, &calls);
  ASSERT_EQ(r.size(), 3u);
  // A job that fails is reported with its code; the worker goes on.
  EXPECT_EQ(r[0].job_id(), "j0");
  EXPECT_EQ(r[0].code(), static_cast<int>(absl::StatusCode::kNotFound));
  EXPECT_THAT(r[0].message(), HasSubstr(missing));
  EXPECT_EQ(r[1].job_id(), "j1");
  EXPECT_EQ(r[1].lease(), 11u);
  ExpectScaleSamples(served, r[1], seed, 0);
  ExpectScaleSamples(served, r[2], seed + 17, 0);
  EXPECT_EQ(calls, 2);  // the missing one, then the artifact once: j2 reuses it
}

// With --verify_key, a job's artifact is fetched and loaded only when the
// job carries the fleet key's signature of its cache key, digest and
// metadata: unsigned, signed by another key, or signed for other metadata,
// it fails with PERMISSION_DENIED before any fetch.
TEST(WorkerOnTheEmulator, WithAVerifyKeyOnlySignedArtifactsAreLoaded) {
  const Served served = BuildScale();
  ASSERT_FALSE(served.digest.empty());
  const std::string keys = ::testing::TempDir() + "/worker_keys_" + std::to_string(::getpid());
  std::filesystem::create_directories(keys);
  ASSERT_TRUE(tilec::testing::WriteEd25519Key(keys + "/fleet"));
  ASSERT_TRUE(tilec::testing::WriteEd25519Key(keys + "/other"));
  auto fleet = cache::Signer::FromFile(keys + "/fleet.pem");
  auto other = cache::Signer::FromFile(keys + "/other.pem");
  auto verifier = cache::Verifier::FromFiles({keys + "/fleet.pub.pem"});
  ASSERT_TRUE(fleet.ok() && other.ok() && verifier.ok());
  const std::string key(64, 'c');
  auto signed_by = [&](const std::string& id, const cache::Signer& signer,
                       const std::string& metadata) {
    WorkerCommand c = Job(id, served, served.digest, 5);
    c.mutable_job()->set_cache_key(key);
    c.mutable_job()->set_signature(
        signer.Sign(cache::ArtifactStatement(key, served.digest, metadata)));
    return c;
  };
  MeasureOptions options;
  options.verifier = verifier->get();
  int calls = 0;
  std::vector<MeasureResult> r =
      Measure(served,
              {Job("unsigned", served, served.digest, 5), signed_by("other", **other, served.metadata),
               signed_by("stale", **fleet, served.metadata + " "),
               signed_by("good", **fleet, served.metadata)},
              options, &calls);
  ASSERT_EQ(r.size(), 4u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(r[i].code(), static_cast<int>(absl::StatusCode::kPermissionDenied)) << r[i].job_id();
    EXPECT_THAT(r[i].message(), HasSubstr("refusing to load it")) << r[i].job_id();
  }
  EXPECT_THAT(r[0].message(), HasSubstr("not signed (is tilecd run with --signing_key?)"));
  ExpectScaleSamples(served, r[3], 5, 0);
  EXPECT_EQ(calls, 1);  // only the signed one was fetched
  std::filesystem::remove_all(keys);
}

TEST(WorkerOnTheEmulator, TestOnlyCorruptionAddsOneToTheMatchingConfig) {
  const Served served = BuildScale();
  ASSERT_FALSE(served.digest.empty());
  ASSERT_FALSE(served.artifact.config.empty());
  const auto [name, value] = served.artifact.config[0];
  const uint64_t seed = Seed();
  MeasureOptions corrupt;
  corrupt.corrupt_output = std::make_pair(name, value);
  std::vector<MeasureResult> r = Measure(served, {Job("j1", served, served.digest, seed)}, corrupt);
  ASSERT_EQ(r.size(), 1u);
  ExpectScaleSamples(served, r[0], seed, 1.0);
  MeasureOptions other;
  other.corrupt_output = std::make_pair(name, value + 1);
  r = Measure(served, {Job("j1", served, served.digest, seed)}, other);
  ASSERT_EQ(r.size(), 1u);
  ExpectScaleSamples(served, r[0], seed, 0);
}

}  // namespace
}  // namespace tilec::worker
