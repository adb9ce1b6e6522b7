// SharedTier against a real redis-server: entries verified on every read,
// the fleet-wide lock with fencing tokens and wake-ups, tuning records shared
// between two TuningDbs, credentials, and the degraded mode (Redis absent:
// every call answers UNAVAILABLE at once, and the tier comes back).
#include "server/shared_tier.h"

#include <fstream>
#include <thread>

#include "compiler/cache/digest.h"
#include "gtest/gtest.h"
#include "server/tuning_db.h"
#include "tests/testing/ed25519_key.h"
#include "tests/testing/redis_process.h"
#include "tests/testing/temp_dir.h"

namespace tilec::server {
namespace {

using ::tilec::testing::FreePort;
using ::tilec::testing::Redis;

std::unique_ptr<SharedTier> TierFor(int port, std::string password_file = "",
                                    const cache::Signer* signer = nullptr,
                                    const cache::Verifier* verifier = nullptr) {
  SharedTierOptions o;
  o.signer = signer;
  o.verifier = verifier;
  o.port = port;
  o.password_file = std::move(password_file);
  o.lock_ttl = absl::Milliseconds(600);
  o.retry_after = absl::Milliseconds(100);
  o.io_timeout = o.connect_timeout = absl::Milliseconds(300);
  absl::StatusOr<std::unique_ptr<SharedTier>> t = SharedTier::Create(o);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *std::move(t) : nullptr;
}

TEST(SharedTier, EntriesAreVerifiedOnEveryRead) {
  Redis redis(FreePort(), REDIS_SERVER_BINARY);
  ASSERT_TRUE(redis.Start());
  std::unique_ptr<SharedTier> t = TierFor(redis.port());
  ASSERT_TRUE(t->Put("k1", std::string("\0cubin\xff", 7), "{\"a\":1}", 0).ok());
  absl::StatusOr<std::optional<SharedEntry>> e = t->Get("k1");
  ASSERT_TRUE(e.ok() && e->has_value());
  EXPECT_EQ((*e)->bytes, std::string("\0cubin\xff", 7));
  EXPECT_EQ((*e)->metadata_json, "{\"a\":1}");
  EXPECT_EQ((*e)->digest, cache::Sha256Hex((*e)->bytes));
  EXPECT_EQ(t->Get("k2")->has_value(), false);
  EXPECT_EQ(t->counters().hits, 1);
  EXPECT_EQ(t->counters().misses, 1);

  // A blob that does not match its name, and an entry whose metadata does
  // not match its checksum: both removed, reported as misses.
  ASSERT_TRUE(redis.Set("tilec:blob:" + (*e)->digest, "tampered"));
  EXPECT_FALSE(t->Get("k1")->has_value());
  EXPECT_EQ(t->GetBlob((*e)->digest).status().code(), absl::StatusCode::kNotFound);
  ASSERT_TRUE(t->Put("k3", "bytes", "{}", 0).ok());
  ASSERT_TRUE(redis.Set("tilec:idx:k3", cache::Sha256Hex("bytes") + "\nffff\n-\n{}"));
  EXPECT_FALSE(t->Get("k3")->has_value());
  EXPECT_EQ(t->counters().corrupt, 2);
  EXPECT_TRUE(t->counters().up);
}

TEST(SharedTier, OneHolderAtATimeAndWaitersAreWoken) {
  Redis redis(FreePort(), REDIS_SERVER_BINARY);
  ASSERT_TRUE(redis.Start());
  std::unique_ptr<SharedTier> a = TierFor(redis.port()), b = TierFor(redis.port());
  absl::StatusOr<std::optional<int64_t>> ta = a->TryLock("key");
  ASSERT_TRUE(ta.ok() && ta->has_value());
  absl::StatusOr<std::optional<int64_t>> tb = b->TryLock("key");
  ASSERT_TRUE(tb.ok());
  EXPECT_FALSE(tb->has_value());
  // The holder refreshes past the time to live; the waiter is woken by the
  // holder's store, long before its wait would end.
  std::thread holder([&] {
    for (int i = 0; i < 4; ++i) {
      absl::SleepFor(absl::Milliseconds(250));
      ASSERT_TRUE(a->Refresh("key", **ta).ok());
    }
    ASSERT_TRUE(a->Put("key", "artifact", "{}", **ta).ok());
  });
  const absl::Time start = absl::Now();
  bool woken = false;
  while (!woken && absl::Now() - start < absl::Seconds(5)) {
    absl::StatusOr<bool> w = b->Wait("key", absl::Now() + absl::Seconds(5));
    ASSERT_TRUE(w.ok()) << w.status();
    woken = *w;
    // Before the store, the lock never lapsed: nobody else could take it.
    if (!woken) {
      EXPECT_FALSE(b->TryLock("key")->has_value());
    }
  }
  holder.join();
  EXPECT_TRUE(woken);
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
  EXPECT_TRUE(b->Get("key")->has_value());
  // The store released the lock: the next compile of the key may take it.
  absl::StatusOr<std::optional<int64_t>> again = b->TryLock("key");
  ASSERT_TRUE(again.ok() && again->has_value());
  EXPECT_GT(**again, **ta);  // fencing tokens only grow
  // A stale holder cannot release the new holder's lock.
  ASSERT_TRUE(a->Unlock("key", **ta).ok());
  EXPECT_FALSE(a->TryLock("key")->has_value());
}

TEST(SharedTier, ADeadHoldersLockExpires) {
  Redis redis(FreePort(), REDIS_SERVER_BINARY);
  ASSERT_TRUE(redis.Start());
  std::unique_ptr<SharedTier> a = TierFor(redis.port()), b = TierFor(redis.port());
  ASSERT_TRUE(a->TryLock("k")->has_value());  // and never refreshed: a crash
  const absl::Time start = absl::Now();
  absl::StatusOr<bool> w = b->Wait("k", absl::Now() + absl::Seconds(5));
  ASSERT_TRUE(w.ok());
  EXPECT_FALSE(*w);  // not woken: the lock ran out
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
  EXPECT_TRUE(b->TryLock("k")->has_value());
}

TEST(SharedTier, TuningRecordsAreSharedBetweenServers) {
  Redis redis(FreePort(), REDIS_SERVER_BINARY);
  ASSERT_TRUE(redis.Start());
  std::unique_ptr<SharedTier> a = TierFor(redis.port()), b = TierFor(redis.port());
  auto db_a = TuningDb::Open(tilec::testing::MakeTempDir("tuning_a"));
  auto db_b = TuningDb::Open(tilec::testing::MakeTempDir("tuning_b"));
  ASSERT_TRUE(db_a.ok() && db_b.ok());
  (*db_a)->SetShared(a.get());
  (*db_b)->SetShared(b.get());
  tilec::v1::TuningRecord r;
  r.set_key_text(TuningDb::KeyText("hash", "h100", {{"N", 4096}}, "v1", "13.0"));
  r.add_best()->set_name("block_M");
  r.mutable_best(0)->set_value(128);
  ASSERT_TRUE((*db_a)->Put(r).ok());
  absl::StatusOr<std::optional<tilec::v1::TuningRecord>> got = (*db_b)->Get(r.key_text());
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->best(0).value(), 128);
  EXPECT_EQ((*db_b)->Count(), 1);  // kept on B's disk too
}

TEST(SharedTier, CredentialsFromAFile) {
  Redis redis(FreePort(), REDIS_SERVER_BINARY, {"--requirepass", "s3cret"});
  ASSERT_TRUE(redis.Start());
  const std::string dir = tilec::testing::MakeTempDir("redis_cred");
  {
    std::ofstream(dir + "/good") << "s3cret\n";
    std::ofstream(dir + "/bad") << "default wrong\n";
  }
  std::unique_ptr<SharedTier> good = TierFor(redis.port(), dir + "/good");
  EXPECT_TRUE(good->Put("k", "v", "{}", 0).ok());
  EXPECT_TRUE(good->Get("k")->has_value());
  std::unique_ptr<SharedTier> bad = TierFor(redis.port(), dir + "/bad");
  absl::StatusOr<std::optional<SharedEntry>> e = bad->Get("k");
  EXPECT_EQ(e.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(e.status().message().find("AUTH"), std::string_view::npos) << e.status();
  SharedTierOptions o;
  o.password_file = dir + "/missing";
  EXPECT_EQ(SharedTier::Create(o).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(SharedTier, DegradedWhileRedisIsAwayAndBackAfterwards) {
  const int port = FreePort();
  std::unique_ptr<SharedTier> t = TierFor(port);  // nothing listens yet
  absl::StatusOr<std::optional<SharedEntry>> e = t->Get("k");
  EXPECT_EQ(e.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_FALSE(t->available());  // for retry_after: no call touches the network
  const absl::Time start = absl::Now();
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(t->Get("k").status().code(), absl::StatusCode::kUnavailable);
  }
  EXPECT_LT(absl::Now() - start, absl::Milliseconds(50));
  Redis redis(port, REDIS_SERVER_BINARY);
  ASSERT_TRUE(redis.Start());
  absl::SleepFor(absl::Milliseconds(150));
  t->Probe();
  EXPECT_TRUE(t->counters().up);
  EXPECT_TRUE(t->Put("k", "v", "{}", 0).ok());
  redis.Kill();
  EXPECT_EQ(t->Get("k").status().code(), absl::StatusCode::kUnavailable);
  EXPECT_FALSE(t->counters().up);
  EXPECT_GE(t->counters().errors, 2);
}

// With the fleet's key, entries are signed; a tier that verifies refuses an
// entry someone without the key wrote (even with a blob that matches its
// digest), and one signed by another key; rotation accepts both keys.
TEST(SharedTier, SignedEntriesAndForgeriesRefused) {
  Redis redis(FreePort(), REDIS_SERVER_BINARY);
  ASSERT_TRUE(redis.Start());
  const std::string dir = tilec::testing::MakeTempDir("tier_keys");
  ASSERT_TRUE(tilec::testing::WriteEd25519Key(dir + "/fleet"));
  ASSERT_TRUE(tilec::testing::WriteEd25519Key(dir + "/other"));
  auto signer = cache::Signer::FromFile(dir + "/fleet.pem");
  auto other = cache::Signer::FromFile(dir + "/other.pem");
  auto verifier = cache::Verifier::FromFiles({dir + "/fleet.pub.pem"});
  ASSERT_TRUE(signer.ok() && other.ok() && verifier.ok());
  std::unique_ptr<SharedTier> fleet = TierFor(redis.port(), "", signer->get(), verifier->get());
  ASSERT_TRUE(fleet->Put("good", "artifact", "{}", 0).ok());
  EXPECT_TRUE(fleet->Get("good")->has_value());

  std::unique_ptr<SharedTier> unsigned_writer = TierFor(redis.port());
  ASSERT_TRUE(unsigned_writer->Put("forged", "malicious", "{}", 0).ok());
  EXPECT_TRUE(unsigned_writer->Get("forged")->has_value());  // a reader that does not verify
  EXPECT_FALSE(fleet->Get("forged")->has_value());
  std::unique_ptr<SharedTier> other_writer = TierFor(redis.port(), "", other->get());
  ASSERT_TRUE(other_writer->Put("other", "bytes", "{}", 0).ok());
  EXPECT_FALSE(fleet->Get("other")->has_value());
  // A signed entry replayed under another key: refused.
  ASSERT_TRUE(fleet->Put("k1", "bytes1", "{}", 0).ok());
  redisContext* c = redisConnect("127.0.0.1", redis.port());
  auto* r = static_cast<redisReply*>(redisCommand(c, "GET tilec:idx:k1"));
  ASSERT_TRUE(r != nullptr && r->type == REDIS_REPLY_STRING);
  ASSERT_TRUE(redis.Set("tilec:idx:k2", std::string(r->str, r->len)));
  freeReplyObject(r);
  redisFree(c);
  EXPECT_FALSE(fleet->Get("k2")->has_value());
  EXPECT_EQ(fleet->counters().rejected, 3);
  // Rotation: a tier trusting both keys accepts the other key's entry.
  auto both = cache::Verifier::FromFiles({dir + "/fleet.pub.pem", dir + "/other.pub.pem"});
  ASSERT_TRUE(both.ok());
  std::unique_ptr<SharedTier> rotating = TierFor(redis.port(), "", signer->get(), both->get());
  EXPECT_TRUE(rotating->Get("other")->has_value());
  EXPECT_FALSE(rotating->Get("forged")->has_value());
}

TEST(SharedTier, AnIdleTierNoticesRedisGone) {
  Redis redis(FreePort(), REDIS_SERVER_BINARY);
  ASSERT_TRUE(redis.Start());
  std::unique_ptr<SharedTier> t = TierFor(redis.port());
  t->Probe();
  EXPECT_TRUE(t->counters().up);
  redis.Kill();
  t->Probe();  // within a second of the last contact: no PING yet
  EXPECT_TRUE(t->counters().up);
  absl::SleepFor(absl::Milliseconds(1100));
  t->Probe();
  EXPECT_FALSE(t->counters().up);
}

}  // namespace
}  // namespace tilec::server
