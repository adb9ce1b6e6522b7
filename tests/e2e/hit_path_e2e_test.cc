// The hit path (server/hit_path.h) of a real tilecd on loopback: hits by key
// over HTTP/1.1 answer what gRPC answers (the same digests, the same bytes),
// misses are 404 so the client sends the program; tokens as gRPC's; a blob
// changed on disk is never served from memory (its corruption is caught and
// it is compiled again); in a fleet, a server serves by key what another
// compiled (through the shared tier, no compile of its own). `tilec compile
// --hit` is in cli_e2e_test.
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "client/hit_client.h"
#include "compiler/cache/digest.h"
#include "gtest/gtest.h"
#include "tests/e2e/tilecd_process.h"
#include "tests/testing/redis_process.h"

namespace tilec::e2e {
namespace {

using cli::HitArtifact;
using cli::HitClient;
using cli::HitCompile;

// Compiles GEMM `m` through `d` over gRPC; the response (a failure fails).
tilec::v1::CompileResponse CompiledOverGrpc(Tilecd& d, int m,
                                            const std::vector<std::string>& targets = {"sm_80"}) {
  tilec::v1::CompileResponse resp;
  grpc::Status s = Compile(d, GemmRequest(m, targets), &resp);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return resp;
}

TEST(HitPathE2E, HitsByKeyAnswerWhatGrpcAnswers) {
  Tilecd d;
  d.hit_path = true;
  ASSERT_TRUE(d.Start(MakeTempDir("hit_cache")));
  const tilec::v1::CompileResponse compiled = CompiledOverGrpc(d, 96);
  ASSERT_EQ(compiled.results_size(), 1);
  const std::string hash = compiled.program_hash(), digest = compiled.results(0).digest();
  HitClient client(d.http_address(), "");

  absl::StatusOr<tilec::v1::CompileResponse> hit = HitCompile(client, hash, {"sm_80"}, false, 0);
  ASSERT_TRUE(hit.ok()) << hit.status();
  ASSERT_EQ(hit->results_size(), 1);
  EXPECT_TRUE(hit->results(0).cache_hit());
  EXPECT_EQ(hit->results(0).digest(), digest);
  EXPECT_EQ(hit->results(0).cache_key(), compiled.results(0).cache_key());
  EXPECT_EQ(hit->results(0).metadata_json(), compiled.results(0).metadata_json());
  // Again: remembered, the same answer.
  absl::StatusOr<tilec::v1::CompileResponse> again = HitCompile(client, hash, {"sm_80"}, false, 0);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->SerializeAsString(), hit->SerializeAsString());

  std::string grpc_bytes;
  ASSERT_TRUE(GetArtifact(d, digest, &grpc_bytes).ok());
  for (int i = 0; i < 3; ++i) {  // from disk, then from memory
    absl::StatusOr<std::string> bytes = HitArtifact(client, digest);
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    EXPECT_EQ(*bytes, grpc_bytes);
  }

  // Misses and bad keys: 404 and 400, saying what.
  absl::StatusOr<tilec::v1::CompileResponse> other_target =
      HitCompile(client, hash, {"sm_90a"}, false, 0);
  EXPECT_EQ(other_target.status().code(), absl::StatusCode::kNotFound) << other_target.status();
  EXPECT_TRUE(absl::StrContains(other_target.status().message(), "send the program"));
  EXPECT_EQ(HitCompile(client, hash, {"sm_80"}, true, 0).status().code(),
            absl::StatusCode::kNotFound);  // compiled without line info
  EXPECT_EQ(HitCompile(client, std::string(64, 'a'), {"sm_80"}, false, 0).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(HitArtifact(client, std::string(64, 'b')).status().code(), absl::StatusCode::kNotFound);
  struct Bad {
    std::string target;
    int status;
    std::string says;
  };
  const Bad bad[] = {
      {"/v1/compile/" + std::string(64, 'A') + "?target=sm_80", 400, "64 lowercase hex"},
      {"/v1/compile/" + hash, 400, "name at least one target"},
      {"/v1/compile/" + hash + "?target=sm_7", 400, "unknown target"},
      {"/v1/compile/" + hash + "?target=sm_80&max_registers=-1", 400, "max_registers"},
      {"/v1/compile/" + hash + "?target=sm_80&source=x", 400, "unknown query parameter 'source'"},
      {"/v1/artifacts/../../etc/passwd", 400, "64 lowercase hex"},
      {"/v1/artifacts/" + digest + "/x", 400, "64 lowercase hex"},
      {"/etc/passwd", 404, "no such path"},
  };
  for (const Bad& b : bad) {
    absl::StatusOr<HitClient::Response> r = client.Get(b.target);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->status, b.status) << b.target << ": " << r->body;
    EXPECT_TRUE(absl::StrContains(r->body, b.says)) << b.target << ": " << r->body;
  }
  const tilec::v1::StatsResponse stats = Stats(d);
  EXPECT_EQ(stats.compiles(), 1);
  EXPECT_GE(stats.hash_hits(), 2);
  // Counted: every request above; from memory the remembered response and
  // the artifact's second and third reads.
  const std::string metrics = HttpGet(d.metrics_port(), "/metrics");
  const int requests = 2 + 3 + 4 + static_cast<int>(std::size(bad));
  EXPECT_TRUE(
      absl::StrContains(metrics, absl::StrCat("tilec_hit_path_requests_total ", requests, "\n")))
      << metrics;
  EXPECT_TRUE(absl::StrContains(metrics, "tilec_hit_path_from_memory_total 3\n")) << metrics;
}

TEST(HitPathE2E, TokensAreCheckedAsGrpcChecksThem) {
  const std::string dir = MakeTempDir("hit_tokens");
  std::ofstream(dir + "/tokens") << "compile-tok compile\nread-tok read\n";
  Tilecd d;
  d.hit_path = true;
  ASSERT_TRUE(d.Start(MakeTempDir("hit_cache"), {"--tokens_file=" + dir + "/tokens"}));
  tilec::v1::CompileResponse compiled;
  ASSERT_TRUE(Compile(d, GemmRequest(96), &compiled, "compile-tok").ok());
  const std::string hash = compiled.program_hash(), digest = compiled.results(0).digest();
  HitClient none(d.http_address(), ""), wrong(d.http_address(), "guess"),
      reader(d.http_address(), "read-tok"), compiler(d.http_address(), "compile-tok");
  EXPECT_EQ(HitCompile(none, hash, {"sm_80"}, false, 0).status().code(),
            absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(HitCompile(wrong, hash, {"sm_80"}, false, 0).status().code(),
            absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(HitCompile(reader, hash, {"sm_80"}, false, 0).status().code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(HitCompile(compiler, hash, {"sm_80"}, false, 0).ok());
  EXPECT_EQ(HitArtifact(none, digest).status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(HitArtifact(wrong, digest).status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_TRUE(HitArtifact(reader, digest).ok());
  EXPECT_TRUE(HitArtifact(compiler, digest).ok());
  absl::StatusOr<HitClient::Response> r = none.Get("/v1/artifacts/" + digest);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 401);
  EXPECT_FALSE(absl::StrContains(r->body, "read-tok")) << r->body;
}

TEST(HitPathE2E, ABlobChangedOnDiskIsNeverServedFromMemory) {
  const std::string cache = MakeTempDir("hit_cache");
  Tilecd d;
  d.hit_path = true;
  ASSERT_TRUE(d.Start(cache));
  const tilec::v1::CompileResponse compiled = CompiledOverGrpc(d, 96);
  const std::string digest = compiled.results(0).digest();
  HitClient client(d.http_address(), "");
  absl::StatusOr<std::string> good = HitArtifact(client, digest);
  ASSERT_TRUE(good.ok()) << good.status();
  ASSERT_TRUE(HitArtifact(client, digest).ok());  // now kept in memory
  // One byte flipped in place on disk, the size unchanged.
  const std::string path = cache + "/blobs/" + digest;
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(f.good()) << path;
    f.seekp(static_cast<std::streamoff>(good->size() / 2));
    f.put(static_cast<char>((*good)[good->size() / 2] ^ 0x5a));
  }
  absl::StatusOr<HitClient::Response> r = client.Get("/v1/artifacts/" + digest);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 404) << "a changed blob was served";
  // Compiled again (the corrupt entry is gone), then served again, intact.
  tilec::v1::CompileResponse recompiled = CompiledOverGrpc(d, 96);
  EXPECT_EQ(recompiled.results(0).digest(), digest);
  absl::StatusOr<std::string> after = HitArtifact(client, digest);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(*after, *good);
  EXPECT_EQ(Stats(d).compiles(), 2);
}

TEST(HitPathE2E, AFleetServerAnswersByKeyWhatAnotherCompiled) {
  testing::Redis redis(testing::FreePort(), REDIS_SERVER_BINARY);
  ASSERT_TRUE(redis.Start()) << "redis-server did not start";
  const std::vector<std::string> flags = {absl::StrCat("--redis=127.0.0.1:", redis.port()),
                                          "--redis_timeout_ms=500", "--allow_unsigned_shared_tier"};
  Tilecd a, b;
  b.hit_path = true;
  ASSERT_TRUE(a.Start(MakeTempDir("fleet_a"), flags));
  ASSERT_TRUE(b.Start(MakeTempDir("fleet_b"), flags));
  const tilec::v1::CompileResponse compiled = CompiledOverGrpc(a, 160);
  const std::string digest = compiled.results(0).digest();
  HitClient client(b.http_address(), "");
  absl::StatusOr<std::string> bytes = HitArtifact(client, digest);  // only in Redis
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(cache::Sha256Hex(*bytes), digest);
  absl::StatusOr<tilec::v1::CompileResponse> hit =
      HitCompile(client, compiled.program_hash(), {"sm_80"}, false, 0);
  ASSERT_TRUE(hit.ok()) << hit.status();
  EXPECT_EQ(hit->results(0).digest(), digest);
  const tilec::v1::StatsResponse s = Stats(b);
  EXPECT_EQ(s.compiles(), 0);
  EXPECT_GE(s.shared_tier_hits(), 1);
}

}  // namespace
}  // namespace tilec::e2e
