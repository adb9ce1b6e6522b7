// The fleet: a real redis-server and three real tilecd on loopback sharing
// it (server/shared_tier.h). A compile through one server is a hit through
// the others with no compile there; identical concurrent requests spread
// over the fleet compile once; Redis killed mid-traffic fails no request and
// the servers say "degraded"; Redis back, sharing resumes; a blob corrupted
// inside Redis is detected, not served, and recompiled.
#include <atomic>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "compiler/cache/digest.h"
#include "compiler/cache/signing.h"
#include "gtest/gtest.h"
#include "runtime/artifact.h"
#include "tests/e2e/cli_process.h"
#include "tests/e2e/tilecd_process.h"
#include "tests/testing/ed25519_key.h"
#include "tests/testing/redis_process.h"

namespace tilec::e2e {
namespace {

using ::tilec::testing::FreePort;
using ::tilec::testing::Redis;

// `tilec health --service tilec.SharedTier` against `d`: its first line.
std::string SharedHealth(Tilecd& d) {
  RunResult r = RunTilec({"health", "--server", d.address(), "--service", "tilec.SharedTier"});
  return r.out.substr(0, r.out.find('\n'));
}

// Compiles `m` through `d`; the artifact's digest ("" on failure, reported).
std::string CompileDigest(Tilecd& d, int m) {
  tilec::v1::CompileResponse resp;
  grpc::Status s = Compile(d, GemmRequest(m), &resp);
  EXPECT_TRUE(s.ok()) << s.error_message();
  if (!s.ok() || resp.results_size() != 1) return "";
  return resp.results(0).digest();
}

class Fleet : public ::testing::Test {
 protected:
  void SetUp() override {
    redis_ = std::make_unique<Redis>(FreePort(), REDIS_SERVER_BINARY);
    ASSERT_TRUE(redis_->Start()) << "redis-server did not start on port " << redis_->port();
    std::vector<std::string> flags = {absl::StrCat("--redis=127.0.0.1:", redis_->port()),
                                      "--redis_lock_ttl_s=3", "--redis_timeout_ms=500",
                                      "--redis_retry_s=0.2", "--jobs=2"};
    std::vector<std::string> extra = ExtraFlags();
    flags.insert(flags.end(), extra.begin(), extra.end());
    for (auto& d : servers_) {
      d = std::make_unique<Tilecd>();
      ASSERT_TRUE(d->Start(MakeTempDir("fleet_cache"), flags));
    }
  }
  // Unsigned unless a fixture gives a key (tilecd refuses --redis without
  // one unless told to accept unsigned entries).
  virtual std::vector<std::string> ExtraFlags() { return {"--allow_unsigned_shared_tier"}; }
  Tilecd& A() { return *servers_[0]; }
  Tilecd& B() { return *servers_[1]; }
  Tilecd& C() { return *servers_[2]; }
  int64_t FleetCompiles() {
    int64_t n = 0;
    for (auto& d : servers_) n += Stats(*d).compiles();
    return n;
  }

  std::unique_ptr<Redis> redis_;
  std::unique_ptr<Tilecd> servers_[3];
};

TEST_F(Fleet, ACompileThroughOneServerIsAHitThroughTheOthers) {
  const std::string digest = CompileDigest(A(), 96);
  ASSERT_FALSE(digest.empty());
  EXPECT_EQ(CompileDigest(B(), 96), digest);
  EXPECT_EQ(CompileDigest(C(), 96), digest);
  EXPECT_EQ(Stats(A()).compiles(), 1);
  for (Tilecd* d : {&B(), &C()}) {
    tilec::v1::StatsResponse s = Stats(*d);
    EXPECT_EQ(s.compiles(), 0) << d->address();
    EXPECT_EQ(s.shared_tier_hits(), 1) << d->address();
    EXPECT_EQ(s.shared_tier(), "up");
  }
  // Read-through: B now has it on its own disk, and serves the blob.
  int64_t hits_before = Stats(B()).shared_tier_hits();
  EXPECT_EQ(CompileDigest(B(), 96), digest);
  EXPECT_EQ(Stats(B()).shared_tier_hits(), hits_before);
  // GetArtifact of a digest C never compiled comes from the shared tier.
  const std::string other = CompileDigest(A(), 160);
  grpc::ClientContext ctx;
  tilec::v1::GetArtifactRequest req;
  req.set_digest(other);
  auto reader = C().stub()->GetArtifact(&ctx, req);
  std::string bytes;
  tilec::v1::ArtifactChunk chunk;
  while (reader->Read(&chunk)) bytes += chunk.data();
  ASSERT_TRUE(reader->Finish().ok());
  EXPECT_EQ(cache::Sha256Hex(bytes), other);
}

TEST_F(Fleet, IdenticalConcurrentRequestsCompileOnceFleetWide) {
  std::vector<std::thread> threads;
  std::vector<std::string> digests(32);
  for (int i = 0; i < 32; ++i) {
    threads.emplace_back([&, i] { digests[i] = CompileDigest(*servers_[i % 3], 224); });
  }
  for (std::thread& t : threads) t.join();
  for (const std::string& d : digests) EXPECT_EQ(d, digests[0]);
  EXPECT_FALSE(digests[0].empty());
  EXPECT_EQ(FleetCompiles(), 1);
}

TEST_F(Fleet, RedisDownFailsNoRequestAndSharingResumesWhenItIsBack) {
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0}, done{0};
  // Traffic on every server while Redis goes away: kernels none has yet.
  std::vector<std::thread> traffic;
  for (int s = 0; s < 3; ++s) {
    traffic.emplace_back([&, s] {
      for (int k = 0; !stop.load(); ++k) {
        tilec::v1::CompileResponse resp;
        grpc::Status st = Compile(*servers_[s], GemmRequest(64 * (k % 6 + 1) + s), &resp);
        if (!st.ok()) failures.fetch_add(1);
        done.fetch_add(1);
      }
    });
  }
  while (done.load() < 6) absl::SleepFor(absl::Milliseconds(20));
  redis_->Kill();
  const int at_kill = done.load();
  while (done.load() < at_kill + 9) absl::SleepFor(absl::Milliseconds(20));
  stop.store(true);
  for (std::thread& t : traffic) t.join();
  EXPECT_EQ(failures.load(), 0);
  for (auto& d : servers_) EXPECT_EQ(Stats(*d).shared_tier(), "degraded") << d->address();
  absl::SleepFor(absl::Milliseconds(300));  // the health status follows within 0.1 s
  EXPECT_EQ(SharedHealth(A()), "NOT_SERVING");
  EXPECT_EQ(RunTilec({"health", "--server", A().address()}).out, "SERVING\n");
  EXPECT_NE(HttpGet(A().metrics_port(), "/metrics").find("tilec_shared_tier_up 0"),
            std::string::npos);
  // Degraded, a new kernel still compiles (locally, not shared).
  EXPECT_FALSE(CompileDigest(A(), 480).empty());
  EXPECT_FALSE(CompileDigest(B(), 480).empty());

  ASSERT_TRUE(redis_->Start());
  absl::SleepFor(absl::Milliseconds(300));  // past --redis_retry_s
  const std::string digest = CompileDigest(A(), 544);
  const int64_t b_compiles = Stats(B()).compiles();
  EXPECT_EQ(CompileDigest(B(), 544), digest);
  EXPECT_EQ(Stats(B()).compiles(), b_compiles);
  EXPECT_EQ(Stats(B()).shared_tier(), "up");
  // C had no traffic since: its probe found Redis back on its own.
  absl::SleepFor(absl::Milliseconds(300));
  EXPECT_EQ(Stats(C()).shared_tier(), "up");
  EXPECT_EQ(SharedHealth(C()), "SERVING");
}

TEST_F(Fleet, ABlobCorruptedInRedisIsNotServedAndIsRecompiled) {
  const std::string digest = CompileDigest(A(), 608);
  ASSERT_FALSE(digest.empty());
  std::string garbage(1000, 'x');
  ASSERT_TRUE(redis_->Set("tilec:blob:" + digest, garbage));
  EXPECT_EQ(CompileDigest(B(), 608), digest);
  tilec::v1::StatsResponse s = Stats(B());
  EXPECT_EQ(s.shared_tier_corrupt(), 1);
  EXPECT_EQ(s.shared_tier_hits(), 0);
  EXPECT_EQ(s.compiles(), 1);
  // B stored a good copy again: C hits.
  EXPECT_EQ(CompileDigest(C(), 608), digest);
  EXPECT_EQ(Stats(C()).compiles(), 0);
}

// `tilec warmup` through one server fills the fleet: the others then hit.
// A bad entry fails alone, reported, with the program's exit code.
TEST_F(Fleet, WarmupThroughOneServerFillsTheFleet) {
  const std::string dir = MakeTempDir("warmup");
  const std::string gemm = std::string(TILEC_SOURCE_DIR) + "/examples/gemm.py";
  std::ofstream(dir + "/manifest.json") << R"({"kernels": [
    {"file": ")" + gemm + R"(", "fn": "matmul",
     "defines": {"N": "128", "K": "64", "block_M": "64", "block_N": "64", "block_K": "32",
                 "dtype": "float16", "accum_dtype": "float32", "transpose_A": "False",
                 "transpose_B": "False", "num_stages": "2", "threads": "128",
                 "enable_rasterization": "True"},
     "shapes": [{"defines": {"M": "672"}}, {"defines": {"M": "736"}}],
     "targets": ["sm_80"]},
    {"file": ")" + gemm + R"(", "fn": "no_such_kernel", "targets": ["sm_80"]}]})";
  RunResult r = RunTilec({"warmup", dir + "/manifest.json", "--server", A().address(), "--report",
                          dir + "/report.json", "--jobs", "2"});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("[3/3]"), std::string::npos) << r.err;
  const std::string report = ReadFile(dir + "/report.json");
  EXPECT_NE(report.find("\"total\": 3"), std::string::npos) << report;
  EXPECT_NE(report.find("\"failed\": 1"), std::string::npos) << report;
  EXPECT_NE(report.find("\"compiled\": 2"), std::string::npos) << report;
  EXPECT_NE(report.find("no_such_kernel"), std::string::npos) << report;
  EXPECT_EQ(Stats(A()).compiles(), 2);
  EXPECT_FALSE(CompileDigest(B(), 672).empty());
  EXPECT_FALSE(CompileDigest(C(), 736).empty());
  EXPECT_EQ(Stats(B()).compiles(), 0);
  EXPECT_EQ(Stats(C()).compiles(), 0);
}

// The fleet signs what it stores (--signing_key): an entry written into
// Redis by anyone without the key is refused and the kernel compiled again;
// clients verify results with the public key (tilec compile --verify_key).
class SignedFleet : public Fleet {
 protected:
  void SetUp() override {
    keys_ = MakeTempDir("fleet_keys");
    ASSERT_TRUE(tilec::testing::WriteEd25519Key(keys_ + "/fleet"));
    ASSERT_TRUE(tilec::testing::WriteEd25519Key(keys_ + "/other"));
    Fleet::SetUp();
  }
  std::vector<std::string> ExtraFlags() override {
    return {"--signing_key=" + keys_ + "/fleet.pem"};
  }
  std::string keys_;
};

// By default a server does not trust a shared tier that nobody signs: with
// --redis and no key it refuses to start, saying what to give; accepting
// unsigned entries is an explicit choice that Stats reports.
TEST_F(Fleet, WithoutAKeyTheSharedTierIsRefusedUnlessUnsignedIsAccepted) {
  const std::string redis_flag = absl::StrCat("--redis=127.0.0.1:", redis_->port());
  RunResult r = RunBinary(TILECD_BINARY, {"--cache_dir=" + MakeTempDir("unsigned"), redis_flag,
                                          "--port=0", "--metrics_port=-1", "--host=127.0.0.1"});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--signing_key"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--allow_unsigned_shared_tier"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("listening"), std::string::npos) << r.err;
  // The fleet of this fixture accepted unsigned entries knowingly.
  EXPECT_EQ(Stats(A()).shared_tier_signing(), "unsigned accepted");
}

TEST_F(SignedFleet, StatsSayOnlySignedEntriesAreAccepted) {
  EXPECT_EQ(Stats(A()).shared_tier_signing(), "signed entries only");
}

TEST_F(SignedFleet, AForgedEntryIsRefusedAndClientsVerify) {
  tilec::v1::CompileResponse first;
  ASSERT_TRUE(Compile(A(), GemmRequest(800), &first).ok());
  const tilec::v1::CompileResult& r = first.results(0);
  EXPECT_EQ(r.signature().size(), 128u);
  // Someone with write access to Redis but not the key replaces the entry
  // with other bytes (whose blob matches its own digest).
  const std::string forged =
      "\x7f"
      "ELF forged artifact";
  const std::string forged_digest = cache::Sha256Hex(forged);
  ASSERT_TRUE(redis_->Set("tilec:blob:" + forged_digest, forged));
  ASSERT_TRUE(redis_->Set(
      "tilec:idx:" + r.cache_key(),
      forged_digest + "\n" + cache::Sha256Hex(r.metadata_json()) + "\n-\n" + r.metadata_json()));
  tilec::v1::CompileResponse second;
  ASSERT_TRUE(Compile(B(), GemmRequest(800), &second).ok());
  EXPECT_EQ(second.results(0).digest(), r.digest());  // compiled again, not the forgery
  tilec::v1::StatsResponse s = Stats(B());
  EXPECT_GE(s.shared_tier_rejected(), 1);  // by the lookup, and again by the compile path
  EXPECT_EQ(s.compiles(), 1);

  // Clients: the fleet's public key verifies; another key is refused (77).
  const std::string dir = MakeTempDir("verify_out");
  const std::string gemm = std::string(TILEC_SOURCE_DIR) + "/examples/gemm.py";
  std::vector<std::string> args = {"compile", gemm,       "--fn",        "matmul", "--target",
                                   "sm_80",   "--server", C().address(), "--out",  dir};
  const tilec::v1::CompileRequest request = GemmRequest(800);
  for (const auto& b : request.source().bindings()) {
    args.push_back("-D");
    args.push_back(b.name() + "=" + b.value());
  }
  std::vector<std::string> good = args, bad = args;
  good.insert(good.end(), {"--verify_key", keys_ + "/fleet.pub.pem"});
  bad.insert(bad.end(), {"--verify_key", keys_ + "/other.pub.pem"});
  RunResult ok = RunTilec(good);
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_EQ(ReadFile(dir + "/matmul.sm_80.sig"),
            cache::SignatureFile(r.cache_key(), r.signature()));
  // The runtime loads what tilec wrote only with the fleet's key.
  auto fleet_key = cache::Verifier::FromFiles({keys_ + "/fleet.pub.pem"});
  auto other_key = cache::Verifier::FromFiles({keys_ + "/other.pub.pem"});
  ASSERT_TRUE(fleet_key.ok() && other_key.ok());
  absl::StatusOr<runtime::Artifact> loaded =
      runtime::Artifact::ReadFilesVerified(dir + "/matmul.sm_80.json", **fleet_key);
  EXPECT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(
      runtime::Artifact::ReadFilesVerified(dir + "/matmul.sm_80.json", **other_key).status().code(),
      absl::StatusCode::kPermissionDenied);
  RunResult refused = RunTilec(bad);
  EXPECT_EQ(refused.code, 77) << refused.err;
  EXPECT_NE(refused.err.find("refusing it"), std::string::npos) << refused.err;
}

}  // namespace
}  // namespace tilec::e2e
