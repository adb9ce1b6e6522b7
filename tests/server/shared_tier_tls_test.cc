// SharedTier over TLS to a real redis-server's tls-port (server/redis_tls.h):
// entries, the lock and its wake-ups, large blobs through the relay, Redis
// killed and back; and the refusals: unknown roots, a wrong name, no client
// certificate where Redis asks for one, plaintext to the TLS port, bad files.
#include <memory>
#include <random>
#include <thread>

#include "gtest/gtest.h"
#include "server/shared_tier.h"
#include "tests/testing/redis_process.h"
#include "tests/testing/test_pki.h"

namespace tilec::server {
namespace {

using ::tilec::testing::FreePort;
using ::tilec::testing::Redis;
using ::tilec::testing::TestPki;

class SharedTierTls : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    ASSERT_TRUE(tilec::testing::MakeTestPki(&pki_, &error)) << error;
    tls_port_ = FreePort();
    // The plaintext port stays open for the harness (PING, tampering).
    redis_ = std::make_unique<Redis>(
        FreePort(), REDIS_SERVER_BINARY,
        std::vector<std::string>{"--tls-port", std::to_string(tls_port_), "--tls-cert-file",
                                 pki_.server_cert(), "--tls-key-file", pki_.server_key(),
                                 "--tls-ca-cert-file", pki_.ca(), "--tls-auth-clients", "yes"});
    ASSERT_TRUE(redis_->Start());
  }

  RedisTlsOptions Client() const {
    RedisTlsOptions o;
    o.ca_file = pki_.ca();
    o.cert_file = pki_.client_cert();
    o.key_file = pki_.client_key();
    return o;
  }

  absl::StatusOr<std::unique_ptr<SharedTier>> Tier(RedisTlsOptions tls, bool use_tls = true) {
    SharedTierOptions o;
    o.port = tls_port_;
    o.tls = use_tls;
    o.tls_options = std::move(tls);
    o.lock_ttl = absl::Milliseconds(600);
    o.retry_after = absl::Milliseconds(100);
    o.io_timeout = o.connect_timeout = absl::Milliseconds(500);
    return SharedTier::Create(o);
  }

  TestPki pki_;
  int tls_port_ = 0;
  std::unique_ptr<Redis> redis_;
};

TEST_F(SharedTierTls, EntriesLocksAndLargeBlobsOverTls) {
  auto a = Tier(Client());
  auto b = Tier(Client());
  ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
  EXPECT_NE((*a)->Describe().find("(TLS)"), std::string::npos);
  // 3 MiB of random bytes: many TLS records and partial socket writes.
  const unsigned seed = std::random_device{}();
  std::mt19937 rng(seed);
  std::string blob(3 << 20, '\0');
  for (char& c : blob) c = static_cast<char>(rng());
  ASSERT_TRUE((*a)->Put("big", blob, "{\"n\":1}", 0).ok()) << "seed " << seed;
  absl::StatusOr<std::optional<SharedEntry>> e = (*b)->Get("big");
  ASSERT_TRUE(e.ok() && e->has_value()) << e.status();
  EXPECT_EQ((*e)->bytes, blob) << "seed " << seed;
  EXPECT_EQ((*e)->metadata_json, "{\"n\":1}");
  // Tampering through the plaintext port is detected over TLS as anywhere.
  ASSERT_TRUE(redis_->Set("tilec:blob:" + (*e)->digest, "tampered"));
  EXPECT_FALSE((*b)->Get("big")->has_value());
  EXPECT_EQ((*b)->counters().corrupt, 1);

  // The fleet-wide lock and the waiter's wake-up (SUBSCRIBE) over TLS.
  absl::StatusOr<std::optional<int64_t>> ta = (*a)->TryLock("k");
  ASSERT_TRUE(ta.ok() && ta->has_value()) << ta.status();
  EXPECT_FALSE((*b)->TryLock("k")->has_value());
  std::thread holder([&] {
    absl::SleepFor(absl::Milliseconds(200));
    ASSERT_TRUE((*a)->Put("k", "artifact", "{}", **ta).ok());
  });
  const absl::Time start = absl::Now();
  absl::StatusOr<bool> woken = (*b)->Wait("k", absl::Now() + absl::Seconds(5));
  holder.join();
  ASSERT_TRUE(woken.ok()) << woken.status();
  EXPECT_TRUE(*woken);
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
  EXPECT_EQ((*(*b)->Get("k"))->bytes, "artifact");
}

TEST_F(SharedTierTls, DegradedWhileRedisIsAwayAndBackAfterwards) {
  auto t = Tier(Client());
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_TRUE((*t)->Put("k", "v", "{}", 0).ok());
  redis_->Kill();
  EXPECT_EQ((*t)->Get("k").status().code(), absl::StatusCode::kUnavailable);
  EXPECT_FALSE((*t)->counters().up);
  ASSERT_TRUE(redis_->Start());
  absl::SleepFor(absl::Milliseconds(150));
  (*t)->Probe();
  EXPECT_TRUE((*t)->counters().up);
  EXPECT_TRUE((*t)->Put("k2", "v2", "{}", 0).ok());
  EXPECT_EQ((*(*t)->Get("k2"))->bytes, "v2");
}

TEST_F(SharedTierTls, RefusedConnectionsSayWhy) {
  auto Message = [&](RedisTlsOptions o, bool use_tls = true) {
    auto t = Tier(std::move(o), use_tls);
    EXPECT_TRUE(t.ok()) << t.status();
    if (!t.ok()) return std::string();
    absl::StatusOr<std::optional<SharedEntry>> e = (*t)->Get("k");
    EXPECT_EQ(e.status().code(), absl::StatusCode::kUnavailable) << e.status();
    return std::string(e.status().message());
  };
  RedisTlsOptions unrelated = Client();
  unrelated.ca_file = pki_.other_ca();
  EXPECT_NE(Message(unrelated).find("does not verify"), std::string::npos);
  RedisTlsOptions named = Client();
  named.server_name = "other.test";
  EXPECT_NE(Message(named).find("does not verify for 'other.test'"), std::string::npos);
  named.server_name = "tilec.test";  // the certificate's DNS name
  auto ok = Tier(named);
  ASSERT_TRUE(ok.ok());
  EXPECT_TRUE((*ok)->Put("k", "v", "{}", 0).ok());
  RedisTlsOptions anonymous = Client();
  anonymous.cert_file.clear();
  anonymous.key_file.clear();
  // Redis asks for a client certificate: its alert is named.
  EXPECT_NE(Message(anonymous).find("certificate required"), std::string::npos);
  Message(RedisTlsOptions{}, false);  // plaintext to the TLS port: UNAVAILABLE
}

TEST_F(SharedTierTls, BadFilesAreRefusedAtStart) {
  RedisTlsOptions o = Client();
  o.ca_file = pki_.dir + "/missing.pem";
  auto t = Tier(o);
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(t.status().message().find("missing.pem"), std::string_view::npos) << t.status();
  o = Client();
  o.key_file.clear();
  EXPECT_EQ(Tier(o).status().code(), absl::StatusCode::kInvalidArgument);
  o = Client();
  o.key_file = pki_.server_key();  // not the certificate's key
  t = Tier(o);
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(t.status().message().find("does not match"), std::string_view::npos) << t.status();
}

}  // namespace
}  // namespace tilec::server
