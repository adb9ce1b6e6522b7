#include "server/metrics_compiler.h"

#include <memory>

#include "gtest/gtest.h"
#include "prometheus/text_serializer.h"
#include "tests/compiler/cache/test_compiler.h"

namespace tilec::server {
namespace {

class StepClock : public cache::Clock {
 public:
  absl::Time Now() override {
    now += absl::Milliseconds(250);
    return now;
  }
  absl::Time now = absl::UnixEpoch();
};

std::string Scrape(ServerMetrics& m) {
  auto families = m.registry()->Collect();
  auto more = m.snapshot_collector()->Collect();
  families.insert(families.end(), more.begin(), more.end());
  return prometheus::TextSerializer().Serialize(families);
}

TEST(MetricsCompilerTest, CountsCompilesByTargetAndCode) {
  ServerMetrics metrics;
  StepClock clock;
  auto inner = std::make_unique<cache::HashingCompiler>();
  cache::HashingCompiler* raw = inner.get();
  MetricsCompiler mc(std::move(inner), &metrics, &clock);
  ASSERT_TRUE(mc.Compile(cache::TestJob("p", "sm_80")).ok());
  ASSERT_TRUE(mc.Compile(cache::TestJob("q", "sm_80")).ok());
  raw->fail = true;
  EXPECT_FALSE(mc.Compile(cache::TestJob("r", "sm_90a")).ok());
  EXPECT_EQ(mc.compiles(), 3);
  EXPECT_EQ(mc.failures(), 1);
  EXPECT_EQ(mc.in_flight(), 0);
  metrics.SetSnapshot([] {
    Snapshot s;
    s.cache_hits = 7;
    s.queue_depth = 2;
    return s;
  });
  std::string text = Scrape(metrics);
  EXPECT_NE(text.find("tilec_compiles_total{code=\"OK\",target=\"sm_80\"} 2"), std::string::npos)
      << text;
  EXPECT_NE(text.find("tilec_compiles_total{code=\"INVALID_ARGUMENT\",target=\"sm_90a\"} 1"),
            std::string::npos);
  // Each compile took exactly one clock step (0.25 s).
  EXPECT_NE(text.find("tilec_compile_duration_seconds_sum{target=\"sm_80\"} 0.5"),
            std::string::npos);
  EXPECT_NE(text.find("tilec_compiles_in_flight 0"), std::string::npos);
  EXPECT_NE(text.find("tilec_cache_hits_total 7"), std::string::npos);
  EXPECT_NE(text.find("tilec_queue_depth 2"), std::string::npos);
}

TEST(MetricsTest, RpcConventions) {
  ServerMetrics metrics;
  metrics.RpcStarted("Compile", "unary");
  metrics.RpcHandled("Compile", "unary", absl::StatusCode::kInvalidArgument, 0.003);
  std::string text = Scrape(metrics);
  EXPECT_NE(text.find("grpc_server_handled_total{grpc_code=\"INVALID_ARGUMENT\",grpc_method="
                      "\"Compile\",grpc_service=\"tilec.v1.Tilec\",grpc_type=\"unary\"} 1"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("grpc_server_handling_seconds_count{grpc_method=\"Compile\""),
            std::string::npos);
  EXPECT_EQ(ServerMetrics::CodeName(absl::StatusCode::kResourceExhausted), "RESOURCE_EXHAUSTED");
}

}  // namespace
}  // namespace tilec::server
