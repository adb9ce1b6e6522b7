#include "server/shared_tier.h"

#include <hiredis/hiredis.h>
#include <sys/time.h>

#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "compiler/cache/digest.h"

namespace tilec::server {
namespace {

timeval RedisTimeout(absl::Duration d) {
  if (d < absl::Milliseconds(1)) d = absl::Milliseconds(1);
  timeval tv;
  tv.tv_sec = static_cast<time_t>(absl::ToInt64Seconds(d));
  tv.tv_usec = static_cast<suseconds_t>(absl::ToInt64Microseconds(d) % 1000000);
  return tv;
}

// Stores the entry, then releases the lock if it still holds the token and
// wakes the waiters. KEYS: idx, lock, channel. ARGV: entry, token ("0": none).
constexpr char kPutScript[] = R"lua(
redis.call('SET', KEYS[1], ARGV[1])
if ARGV[2] ~= '0' then
  if redis.call('GET', KEYS[2]) == ARGV[2] then redis.call('DEL', KEYS[2]) end
  redis.call('PUBLISH', KEYS[3], '1')
end
return 1
)lua";

// KEYS: lock. ARGV: token, ttl in ms.
constexpr char kRefreshScript[] = R"lua(
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
)lua";

// KEYS: lock, channel. ARGV: token.
constexpr char kUnlockScript[] = R"lua(
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
redis.call('PUBLISH', KEYS[2], '1')
return 1
)lua";

}  // namespace

struct SharedTier::Conn {
  redisContext* c = nullptr;
  std::unique_ptr<RedisTlsLink> link;  // with TLS: the relay behind c's socket
  ~Conn() {
    if (c != nullptr) redisFree(c);  // first: closing hiredis's socket ends the relay
    link.reset();
  }
  // hiredis's error, and what ended the TLS side if that is why.
  std::string Why() const {
    std::string why = c->errstr;
    if (std::string tls = link != nullptr ? link->error() : ""; !tls.empty()) {
      absl::StrAppend(&why, " (TLS: ", tls, ")");
    }
    return why;
  }
};

struct SharedTier::Reply {
  int type = REDIS_REPLY_NIL;
  long long integer = 0;
  std::string str;
  std::vector<std::string> elements;
};

absl::StatusOr<std::unique_ptr<SharedTier>> SharedTier::Create(SharedTierOptions options) {
  std::unique_ptr<SharedTier> t(new SharedTier(std::move(options)));
  if (!t->options_.password_file.empty()) {
    std::ifstream in(t->options_.password_file);
    if (!in) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot read the Redis credentials file '", t->options_.password_file, "'"));
    }
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text(absl::StripAsciiWhitespace(ss.str()));
    std::vector<std::string> parts = absl::StrSplit(text, ' ', absl::SkipEmpty());
    if (parts.empty() || parts.size() > 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("the Redis credentials file '", t->options_.password_file,
                       "' must hold `password` or `user password` on one line"));
    }
    if (parts.size() == 2) t->user_ = parts[0];
    t->password_ = parts.back();
  }
  if (t->options_.tls) {
    absl::StatusOr<std::unique_ptr<RedisTls>> tls = RedisTls::Create(t->options_.tls_options);
    if (!tls.ok()) return tls.status();
    t->tls_ = *std::move(tls);
  }
  return t;
}

SharedTier::SharedTier(SharedTierOptions o) : options_(std::move(o)) {}
SharedTier::~SharedTier() = default;

std::string SharedTier::Describe() const {
  return absl::StrCat("redis ", options_.host, ":", options_.port, options_.tls ? " (TLS)" : "");
}

bool SharedTier::available() const {
  if (up_.load()) return true;
  std::lock_guard<std::mutex> l(mu_);
  return absl::Now() >= retry_at_;
}

absl::Status SharedTier::Unavailable() const {
  return absl::UnavailableError(absl::StrCat("the shared tier (", Describe(), ") is down"));
}

absl::Status SharedTier::Down(const absl::Status& why) {
  errors_.fetch_add(1);
  const bool was_up = up_.exchange(false);
  {
    std::lock_guard<std::mutex> l(mu_);
    retry_at_ = absl::Now() + options_.retry_after;
    idle_.clear();  // connections made before the failure are suspect
  }
  // Said when the tier goes down, and for the first failure of a tier that
  // was never up (a wrong address, roots or password shows at start).
  const bool first = !failure_reported_.exchange(true);
  if (was_up || first) {
    std::fprintf(stderr,
                 "tilecd: shared tier %s is down (%s); serving from disk and compiling "
                 "here until it is back\n",
                 Describe().c_str(), std::string(why.message()).c_str());
  }
  return absl::UnavailableError(absl::StrCat(Describe(), ": ", why.message()));
}

void SharedTier::Up() {
  if (!up_.exchange(true)) {
    std::fprintf(stderr, "tilecd: shared tier %s is up\n", Describe().c_str());
  }
}

absl::StatusOr<std::unique_ptr<SharedTier::Conn>> SharedTier::Connect() {
  auto conn = std::make_unique<Conn>();
  timeval tv = RedisTimeout(options_.connect_timeout);
  if (tls_ != nullptr) {
    absl::StatusOr<std::unique_ptr<RedisTlsLink>> link =
        tls_->Connect(options_.host, options_.port, options_.connect_timeout, options_.io_timeout);
    if (!link.ok()) return link.status();
    conn->link = *std::move(link);
    conn->c = redisConnectFd(conn->link->TakeHiredisFd());
  } else {
    conn->c = redisConnectWithTimeout(options_.host.c_str(), options_.port, tv);
  }
  if (conn->c == nullptr) return absl::UnavailableError("cannot allocate a Redis context");
  if (conn->c->err != 0) {
    return absl::UnavailableError(absl::StrCat("cannot connect: ", conn->c->errstr));
  }
  tv = RedisTimeout(options_.io_timeout);
  redisSetTimeout(conn->c, tv);
  if (!password_.empty()) {
    redisReply* r =
        user_.empty()
            ? static_cast<redisReply*>(redisCommand(conn->c, "AUTH %s", password_.c_str()))
            : static_cast<redisReply*>(
                  redisCommand(conn->c, "AUTH %s %s", user_.c_str(), password_.c_str()));
    if (r == nullptr) return absl::UnavailableError(absl::StrCat("AUTH: ", conn->Why()));
    const bool ok = r->type != REDIS_REPLY_ERROR;
    std::string msg = r->type == REDIS_REPLY_ERROR ? std::string(r->str, r->len) : "";
    freeReplyObject(r);
    if (!ok) return absl::UnavailableError(absl::StrCat("AUTH refused: ", msg));
  }
  return conn;
}

absl::StatusOr<std::unique_ptr<SharedTier::Conn>> SharedTier::Take() {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (!idle_.empty()) {
      std::unique_ptr<Conn> c = std::move(idle_.back());
      idle_.pop_back();
      return c;
    }
  }
  return Connect();
}

void SharedTier::Give(std::unique_ptr<Conn> c) {
  std::lock_guard<std::mutex> l(mu_);
  if (idle_.size() < 16) idle_.push_back(std::move(c));
}

absl::StatusOr<SharedTier::Reply> SharedTier::Command(const std::vector<std::string>& argv) {
  if (!available()) return Unavailable();
  absl::StatusOr<std::unique_ptr<Conn>> conn = Take();
  if (!conn.ok()) return Down(conn.status());
  std::vector<const char*> args;
  std::vector<size_t> lens;
  for (const std::string& a : argv) {
    args.push_back(a.data());
    lens.push_back(a.size());
  }
  auto* r = static_cast<redisReply*>(
      redisCommandArgv((*conn)->c, static_cast<int>(args.size()), args.data(), lens.data()));
  if (r == nullptr) {
    return Down(absl::UnavailableError(absl::StrCat(argv[0], ": ", (*conn)->Why())));
  }
  Reply out;
  out.type = r->type;
  out.integer = r->integer;
  if (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS ||
      r->type == REDIS_REPLY_ERROR) {
    out.str.assign(r->str, r->len);
  }
  if (r->type == REDIS_REPLY_ARRAY) {
    for (size_t i = 0; i < r->elements; ++i) {
      const redisReply* e = r->element[i];
      out.elements.push_back(e->type == REDIS_REPLY_STRING ? std::string(e->str, e->len) : "");
    }
  }
  freeReplyObject(r);
  if (out.type == REDIS_REPLY_ERROR) {
    return Down(absl::UnavailableError(absl::StrCat(argv[0], ": ", out.str)));
  }
  Give(*std::move(conn));
  Up();
  {
    std::lock_guard<std::mutex> l(mu_);
    last_ok_ = absl::Now();
  }
  return out;
}

absl::StatusOr<std::optional<SharedEntry>> SharedTier::Get(const std::string& key) {
  const std::string idx = options_.prefix + "idx:" + key;
  absl::StatusOr<Reply> e = Command({"GET", idx});
  if (!e.ok()) return e.status();
  if (e->type == REDIS_REPLY_NIL) {
    misses_.fetch_add(1);
    return std::nullopt;
  }
  // "<digest>\n<metadata sha256>\n<signature or ->\n<metadata>"
  const std::string& s = e->str;
  const size_t a = s.find('\n'), b = a == std::string::npos ? a : s.find('\n', a + 1);
  const size_t c = b == std::string::npos ? b : s.find('\n', b + 1);
  SharedEntry out;
  bool good = c != std::string::npos;
  std::string signature;
  if (good) {
    out.digest = s.substr(0, a);
    signature = s.substr(b + 1, c - b - 1);
    out.metadata_json = s.substr(c + 1);
    good = cache::Sha256Hex(out.metadata_json) == s.substr(a + 1, b - a - 1);
  }
  if (good && options_.verifier != nullptr &&
      !options_.verifier->Verify(cache::ArtifactStatement(key, out.digest, out.metadata_json),
                                 signature)) {
    // Not placed by a holder of the fleet's key: never served. Left for a
    // signed compile to overwrite.
    rejected_.fetch_add(1);
    misses_.fetch_add(1);
    std::fprintf(stderr, "tilecd: shared tier entry %s is %s; refused\n", key.c_str(),
                 signature == "-" ? "unsigned" : "signed by no key this server trusts");
    return std::nullopt;
  }
  if (good) {
    absl::StatusOr<std::string> blob = GetBlob(out.digest);
    if (!blob.ok() && blob.status().code() != absl::StatusCode::kNotFound) return blob.status();
    if (!blob.ok()) {
      // Evicted by Redis, or corrupt (GetBlob counted and removed it).
      (void)Command({"DEL", idx});
      misses_.fetch_add(1);
      return std::nullopt;
    }
    out.bytes = *std::move(blob);
    hits_.fetch_add(1);
    return out;
  }
  corrupt_.fetch_add(1);
  misses_.fetch_add(1);
  std::fprintf(stderr, "tilecd: shared tier entry %s is corrupt; removed\n", key.c_str());
  (void)Command({"DEL", idx});
  return std::nullopt;
}

absl::StatusOr<std::string> SharedTier::GetBlob(const std::string& digest) {
  const std::string name = options_.prefix + "blob:" + digest;
  absl::StatusOr<Reply> r = Command({"GET", name});
  if (!r.ok()) return r.status();
  if (r->type != REDIS_REPLY_STRING) {
    return absl::NotFoundError(absl::StrCat("no artifact ", digest, " in the shared tier"));
  }
  if (cache::Sha256Hex(r->str) != digest) {
    corrupt_.fetch_add(1);
    std::fprintf(stderr, "tilecd: shared tier blob %s does not match its digest; removed\n",
                 digest.c_str());
    (void)Command({"DEL", name});
    return absl::NotFoundError(absl::StrCat("artifact ", digest, " in the shared tier is corrupt"));
  }
  return std::move(r->str);
}

absl::Status SharedTier::Put(const std::string& key, const std::string& bytes,
                             const std::string& metadata_json, int64_t token) {
  const std::string digest = cache::Sha256Hex(bytes);
  absl::StatusOr<Reply> b = Command({"SET", options_.prefix + "blob:" + digest, bytes});
  if (!b.ok()) return b.status();
  const std::string signature =
      options_.signer != nullptr
          ? options_.signer->Sign(cache::ArtifactStatement(key, digest, metadata_json))
          : std::string("-");
  const std::string entry = absl::StrCat(digest, "\n", cache::Sha256Hex(metadata_json), "\n",
                                         signature, "\n", metadata_json);
  absl::StatusOr<Reply> r = Command({"EVAL", kPutScript, "3", options_.prefix + "idx:" + key,
                                     options_.prefix + "lock:" + key,
                                     options_.prefix + "done:" + key, entry, absl::StrCat(token)});
  if (!r.ok()) return r.status();
  stores_.fetch_add(1);
  return absl::OkStatus();
}

absl::StatusOr<std::optional<int64_t>> SharedTier::TryLock(const std::string& key) {
  absl::StatusOr<Reply> t = Command({"INCR", options_.prefix + "fence"});
  if (!t.ok()) return t.status();
  // The counter orders tokens; 24 random low bits keep them unique should
  // Redis lose the counter (evicted, or restarted without persistence).
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  const int64_t token =
      static_cast<int64_t>((static_cast<uint64_t>(t->integer) << 24) | (rng() & 0xffffff));
  absl::StatusOr<Reply> r =
      Command({"SET", options_.prefix + "lock:" + key, absl::StrCat(token), "NX", "PX",
               absl::StrCat(absl::ToInt64Milliseconds(options_.lock_ttl))});
  if (!r.ok()) return r.status();
  if (r->type == REDIS_REPLY_NIL) return std::nullopt;
  locks_taken_.fetch_add(1);
  return token;
}

absl::Status SharedTier::Refresh(const std::string& key, int64_t token) {
  return Command({"EVAL", kRefreshScript, "1", options_.prefix + "lock:" + key, absl::StrCat(token),
                  absl::StrCat(absl::ToInt64Milliseconds(options_.lock_ttl))})
      .status();
}

absl::Status SharedTier::Unlock(const std::string& key, int64_t token) {
  return Command({"EVAL", kUnlockScript, "2", options_.prefix + "lock:" + key,
                  options_.prefix + "done:" + key, absl::StrCat(token)})
      .status();
}

absl::StatusOr<bool> SharedTier::Wait(const std::string& key, absl::Time until) {
  if (!available()) return Unavailable();
  waits_.fetch_add(1);
  // A connection of its own: a subscribed connection takes no other command.
  absl::StatusOr<std::unique_ptr<Conn>> sub = Connect();
  if (!sub.ok()) return Down(sub.status());
  const std::string channel = options_.prefix + "done:" + key;
  auto* r = static_cast<redisReply*>(
      redisCommand((*sub)->c, "SUBSCRIBE %b", channel.data(), channel.size()));
  if (r == nullptr) return Down(absl::UnavailableError(absl::StrCat("SUBSCRIBE: ", (*sub)->Why())));
  freeReplyObject(r);
  // Subscribed: a release from now on reaches us. One before it left no
  // lock behind, so there is nothing to wait for.
  absl::StatusOr<Reply> ttl = Command({"PTTL", options_.prefix + "lock:" + key});
  if (!ttl.ok()) return ttl.status();
  if (ttl->integer < 0) return false;  // -2: released; -1 cannot happen (always PX)
  const absl::Time now = absl::Now();
  until = std::min(until, now + absl::Milliseconds(ttl->integer + 20));
  redisSetTimeout((*sub)->c, RedisTimeout(until - now));
  void* msg = nullptr;
  if (redisGetReply((*sub)->c, &msg) != REDIS_OK) {
    const bool timed_out =
        (*sub)->c->err == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK);
    if (timed_out) return false;
    return Down(absl::UnavailableError(absl::StrCat("waiting: ", (*sub)->Why())));
  }
  freeReplyObject(msg);
  wakeups_.fetch_add(1);
  return true;
}

absl::StatusOr<std::optional<std::string>> SharedTier::GetTuning(const std::string& key) {
  absl::StatusOr<Reply> r = Command({"GET", options_.prefix + "tuning:" + key});
  if (!r.ok()) return r.status();
  if (r->type != REDIS_REPLY_STRING) return std::nullopt;
  return std::move(r->str);
}

absl::Status SharedTier::PutTuning(const std::string& key, const std::string& record) {
  return Command({"SET", options_.prefix + "tuning:" + key, record}).status();
}

void SharedTier::Probe() {
  // Up: a PING when nothing else touched Redis for a second, so that an idle
  // server notices Redis gone. Down: once the retry time has come.
  if (up_.load()) {
    std::lock_guard<std::mutex> l(mu_);
    if (absl::Now() - last_ok_ < absl::Seconds(1)) return;
  } else if (!available()) {
    return;
  }
  (void)Command({"PING"});
}

SharedTierCounters SharedTier::counters() const {
  SharedTierCounters c;
  c.hits = hits_.load();
  c.misses = misses_.load();
  c.corrupt = corrupt_.load();
  c.errors = errors_.load();
  c.stores = stores_.load();
  c.rejected = rejected_.load();
  c.locks_taken = locks_taken_.load();
  c.waits = waits_.load();
  c.wakeups = wakeups_.load();
  c.up = up_.load();
  return c;
}

// ---------------------------------------------------------------------------

namespace {

cache::Artifact FromEntry(SharedEntry e, const std::string& key) {
  cache::Artifact a;
  a.bytes = std::move(e.bytes);
  a.metadata_json = std::move(e.metadata_json);
  a.cache_hit = true;
  a.shared_tier_hit = true;
  a.cache_key = key;
  return a;
}

}  // namespace

std::optional<cache::Artifact> SharedTierCompiler::Lookup(const cache::CompileJob& job) {
  if (!tier_->available()) return std::nullopt;
  const std::string key = cache::MakeCacheKey(job, toolchain_).Digest();
  absl::StatusOr<std::optional<SharedEntry>> got = tier_->Get(key);
  if (!got.ok() || !got->has_value()) return std::nullopt;
  return FromEntry(**std::move(got), key);
}

absl::StatusOr<cache::Artifact> SharedTierCompiler::Compile(const cache::CompileJob& job) {
  const std::string key = cache::MakeCacheKey(job, toolchain_).Digest();
  for (;;) {
    absl::StatusOr<std::optional<SharedEntry>> got = tier_->Get(key);
    if (!got.ok()) return inner_->Compile(job);  // degraded: compile here
    if (got->has_value()) return FromEntry(**std::move(got), key);
    absl::StatusOr<std::optional<int64_t>> token = tier_->TryLock(key);
    if (!token.ok()) return inner_->Compile(job);
    if (token->has_value()) return CompileHolding(job, key, **token);
    // Another server compiles it: sleep until it says so (or its lock
    // expires), checking this request's deadline and cancellation.
    if (job.cancel && job.cancel->cancelled()) {
      return absl::CancelledError("cancelled while another server compiled the kernel");
    }
    const absl::Time now = absl::Now();
    if (now >= job.deadline) {
      return absl::DeadlineExceededError(
          "the deadline passed while another server compiled the kernel");
    }
    absl::StatusOr<bool> woke = tier_->Wait(key, std::min(job.deadline, now + absl::Seconds(1)));
    if (!woke.ok()) return inner_->Compile(job);
  }
}

absl::StatusOr<cache::Artifact> SharedTierCompiler::CompileHolding(const cache::CompileJob& job,
                                                                   const std::string& key,
                                                                   int64_t token) {
  // Keep the lock alive while compiling: a third of its time to live apart.
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  std::thread refresher([&] {
    std::unique_lock<std::mutex> l(mu);
    const auto period = absl::ToChronoMilliseconds(tier_->options().lock_ttl / 3);
    while (!cv.wait_for(l, period, [&] { return done; })) (void)tier_->Refresh(key, token);
  });
  absl::StatusOr<cache::Artifact> a = inner_->Compile(job);
  {
    std::lock_guard<std::mutex> l(mu);
    done = true;
  }
  cv.notify_all();
  refresher.join();
  if (a.ok()) {
    absl::Status st = tier_->Put(key, a->bytes, a->metadata_json, token);
    if (!st.ok()) {
      std::fprintf(stderr, "tilecd: could not store %s in the shared tier: %s\n", key.c_str(),
                   std::string(st.message()).c_str());
    }
  } else {
    (void)tier_->Unlock(key, token);  // the waiters try themselves
  }
  return a;
}

}  // namespace tilec::server
