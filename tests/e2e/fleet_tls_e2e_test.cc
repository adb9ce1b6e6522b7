// A fleet over TLS to Redis (tilecd --redis_tls_ca/--redis_tls_cert/
// --redis_tls_key; server/redis_tls.h): a real redis-server that accepts
// only TLS clients with a certificate, two tilecd that share through it, and
// a third whose roots do not verify Redis, which serves degraded (compiles
// itself) and fails no request. Kept apart from fleet_e2e_test, whose
// --redis flags deploy/check_recipes.py requires of every fleet recipe.
#include <memory>
#include <vector>

#include "gtest/gtest.h"
#include "tests/e2e/cli_process.h"
#include "tests/e2e/tilecd_process.h"
#include "tests/testing/redis_process.h"
#include "tests/testing/test_pki.h"

namespace tilec::e2e {
namespace {

using ::tilec::testing::FreePort;
using ::tilec::testing::Redis;

TEST(FleetTls, ServersShareThroughRedisOverTls) {
  tilec::testing::TestPki pki;
  std::string error;
  ASSERT_TRUE(tilec::testing::MakeTestPki(&pki, &error)) << error;
  const int tls_port = FreePort();
  Redis redis(FreePort(), REDIS_SERVER_BINARY,
              {"--tls-port", std::to_string(tls_port), "--tls-cert-file", pki.server_cert(),
               "--tls-key-file", pki.server_key(), "--tls-ca-cert-file", pki.ca(),
               "--tls-auth-clients", "yes"});
  ASSERT_TRUE(redis.Start());
  auto flags = [&](const std::string& roots) {
    return std::vector<std::string>{absl::StrCat("--redis=127.0.0.1:", tls_port),
                                    "--redis_tls_ca=" + roots,
                                    "--redis_tls_cert=" + pki.client_cert(),
                                    "--redis_tls_key=" + pki.client_key(),
                                    "--redis_timeout_ms=500",
                                    "--redis_retry_s=0.2",
                                    "--allow_unsigned_shared_tier",
                                    "--jobs=2"};
  };
  Tilecd a, b, stranger;
  ASSERT_TRUE(a.Start(MakeTempDir("tls_fleet"), flags(pki.ca())));
  ASSERT_TRUE(b.Start(MakeTempDir("tls_fleet"), flags(pki.ca())));
  ASSERT_TRUE(stranger.Start(MakeTempDir("tls_fleet"), flags(pki.other_ca())));

  tilec::v1::CompileResponse first, second, third;
  ASSERT_TRUE(Compile(a, GemmRequest(96), &first).ok());
  ASSERT_TRUE(Compile(b, GemmRequest(96), &second).ok());
  ASSERT_EQ(first.results_size(), 1);
  ASSERT_EQ(second.results_size(), 1);
  EXPECT_EQ(second.results(0).digest(), first.results(0).digest());
  tilec::v1::StatsResponse sb = Stats(b);
  EXPECT_EQ(sb.compiles(), 0);
  EXPECT_EQ(sb.shared_tier_hits(), 1);
  EXPECT_EQ(sb.shared_tier(), "up");
  EXPECT_EQ(Stats(a).shared_tier(), "up");

  // Roots that do not verify Redis: never shared, never down.
  grpc::Status s = Compile(stranger, GemmRequest(96), &third);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(third.results(0).digest(), first.results(0).digest());
  tilec::v1::StatsResponse ss = Stats(stranger);
  EXPECT_EQ(ss.compiles(), 1);
  EXPECT_EQ(ss.shared_tier_hits(), 0);
  EXPECT_EQ(ss.shared_tier(), "degraded");
}

}  // namespace
}  // namespace tilec::e2e
