// End to end with the real tilec CLI binary: against a real tilecd on
// 127.0.0.1 (compile, hit on repeat, get, stats, health, exit codes), and the
// embedded compile with its local cache (no server).
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "compiler/cache/digest.h"
#include "gtest/gtest.h"
#include "tests/e2e/cli_process.h"
#include "tests/e2e/tilecd_process.h"

namespace tilec::e2e {
namespace {

std::vector<std::string> GemmArgs(const std::string& target) {
  return {"compile",  "examples/gemm.py",
          "--fn",     "matmul",
          "-D",       "M=192",
          "-D",       "N=128",
          "-D",       "K=64",
          "-D",       "block_M=64",
          "-D",       "block_N=64",
          "-D",       "block_K=32",
          "--target", target};
}

std::vector<std::string> With(std::vector<std::string> a, const std::vector<std::string>& more) {
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

// The value of a JSON string field `"name":"..."` in `json`, or "".
std::string JsonString(const std::string& json, const std::string& name) {
  std::string key = "\"" + name + "\":\"";
  size_t at = json.find(key);
  if (at == std::string::npos) return "";
  at += key.size();
  return json.substr(at, json.find('"', at) - at);
}

TEST(CliE2E, CompileThroughServerHitGetStatsHealth) {
  Tilecd d;
  ASSERT_TRUE(d.Start(MakeTempDir("cache"), {"--metrics_port=-1"}));
  std::string out = MakeTempDir("out");
  RunResult first =
      RunTilec(With(GemmArgs("sm_80"), {"--server", d.address(), "--json", "--out", out}));
  ASSERT_EQ(first.code, 0) << first.err;
  EXPECT_EQ(first.out.find("\"cache_hit\":true"), std::string::npos) << first.out;
  std::string digest = JsonString(first.out, "digest");
  ASSERT_EQ(digest.size(), 64u) << first.out;
  std::string cubin = ReadFile(out + "/matmul.sm_80.cubin");
  EXPECT_EQ(cache::Sha256Hex(cubin), digest);
  EXPECT_EQ(cubin.substr(0, 4),
            "\x7f"
            "ELF");
  EXPECT_NE(ReadFile(out + "/matmul.sm_80.json").find("\"target\": \"sm_80\""), std::string::npos);

  RunResult second = RunTilec(With(GemmArgs("sm_80"), {"--server", d.address()}));
  ASSERT_EQ(second.code, 0) << second.err;
  EXPECT_NE(second.out.find(digest), std::string::npos) << second.out;
  EXPECT_NE(second.out.find("cache hit"), std::string::npos) << second.out;

  std::string got = MakeTempDir("get") + "/a.cubin";
  RunResult get = RunTilec({"get", digest, "-o", got, "--server", d.address()});
  ASSERT_EQ(get.code, 0) << get.err;
  EXPECT_TRUE(ReadFile(got) == cubin);

  RunResult stats = RunTilec({"stats", "--json", "--server", d.address()});
  ASSERT_EQ(stats.code, 0) << stats.err;
  EXPECT_NE(stats.out.find("\"compiles\":\"1\""), std::string::npos) << stats.out;
  EXPECT_NE(stats.out.find("\"cache_hits\":\"1\""), std::string::npos) << stats.out;
  // The CLI asked by program hash first both times: the first a miss (the
  // source followed), the second answered without the source.
  EXPECT_NE(stats.out.find("\"hash_lookups\":\"2\""), std::string::npos) << stats.out;
  EXPECT_NE(stats.out.find("\"hash_hits\":\"1\""), std::string::npos) << stats.out;

  RunResult health = RunTilec({"health", "--server", d.address()});
  EXPECT_EQ(health.code, 0) << health.err;
  EXPECT_EQ(health.out, "SERVING\n");

  // The embedded compile runs the same pipeline: the same launch metadata (the
  // cubin's bytes may differ between processes), and a hit from its own cache
  // the second time.
  std::string local_cache = MakeTempDir("local_cache"), local_out = MakeTempDir("local_out");
  RunResult local =
      RunTilec(With(GemmArgs("sm_80"), {"--cache_dir", local_cache, "--out", local_out}));
  ASSERT_EQ(local.code, 0) << local.err;
  EXPECT_NE(local.out.find("compiled in"), std::string::npos) << local.out;
  std::string server_meta = ReadFile(out + "/matmul.sm_80.json");
  EXPECT_EQ(ReadFile(local_out + "/matmul.sm_80.json"), server_meta);
  std::string local_cubin = ReadFile(local_out + "/matmul.sm_80.cubin");
  EXPECT_EQ(local_cubin.substr(0, 4),
            "\x7f"
            "ELF");
  RunResult local_again = RunTilec(With(GemmArgs("sm_80"), {"--cache_dir", local_cache, "--json"}));
  ASSERT_EQ(local_again.code, 0) << local_again.err;
  EXPECT_NE(local_again.out.find("\"cache_hit\":true"), std::string::npos) << local_again.out;
  EXPECT_EQ(JsonString(local_again.out, "digest"), cache::Sha256Hex(local_cubin));
}

// A Compile request by program hash: answered from the cache, NOT_FOUND
// when the program is not cached, INVALID_ARGUMENT for a malformed hash.
// AMD targets compile like CUDA ones: embedded (local cache) and through the
// server, each writing the code object clang-19 made (.hsaco, an ELF) and
// metadata naming the compiler; an unknown target is refused naming the
// known ones.
TEST(CliE2E, AnAmdTargetCompilesEmbeddedAndThroughTheServer) {
  const std::string cache = MakeTempDir("cli_amd");
  const std::string local_out = MakeTempDir("cli_amd_out");
  RunResult local =
      RunTilec(With(GemmArgs("gfx942"), {"--cache_dir", cache, "--out", local_out, "--json"}));
  ASSERT_EQ(local.code, 0) << local.err;
  const std::string local_hsaco = ReadFile(local_out + "/matmul.gfx942.hsaco");
  EXPECT_EQ(local_hsaco.substr(0, 4),
            "\x7f"
            "ELF");
  EXPECT_EQ(JsonString(local.out, "digest"), cache::Sha256Hex(local_hsaco));
  const std::string meta = ReadFile(local_out + "/matmul.gfx942.json");
  EXPECT_NE(meta.find("\"clang\": \"19."), std::string::npos) << meta;
  EXPECT_NE(meta.find("v_mfma_f32_"), std::string::npos) << meta;
  Tilecd d;
  ASSERT_TRUE(d.Start(MakeTempDir("cache"), {"--metrics_port=-1"}));
  const std::string out = MakeTempDir("cli_amd_served");
  RunResult served = RunTilec(With(GemmArgs("gfx90a"), {"--server", d.address(), "--out", out}));
  ASSERT_EQ(served.code, 0) << served.err;
  EXPECT_EQ(ReadFile(out + "/matmul.gfx90a.hsaco").substr(0, 4),
            "\x7f"
            "ELF");
  RunResult unknown = RunTilec(With(GemmArgs("sm_75"), {"--server", d.address()}));
  EXPECT_NE(unknown.code, 0);
  EXPECT_NE(unknown.err.find("unknown target 'sm_75'"), std::string::npos) << unknown.err;
  EXPECT_NE(unknown.err.find("gfx942"), std::string::npos) << unknown.err;
}

TEST(CliE2E, CompileByProgramHash) {
  Tilecd d;
  ASSERT_TRUE(d.Start(MakeTempDir("cache"), {"--metrics_port=-1"}));
  RunResult first = RunTilec(With(GemmArgs("sm_80"), {"--server", d.address(), "--json"}));
  ASSERT_EQ(first.code, 0) << first.err;
  const std::string hash = JsonString(first.out, "program_hash");
  ASSERT_EQ(hash.size(), 64u) << first.out;
  RunResult parsed =
      RunTilec({"parse", "examples/gemm.py", "--fn", "matmul", "-D", "M=192", "-D", "N=128", "-D",
                "K=64", "-D", "block_M=64", "-D", "block_N=64", "-D", "block_K=32"});
  EXPECT_NE(parsed.out.find(hash), std::string::npos) << parsed.out;  // the hash tilec prints
  tilec::v1::CompileRequest req;
  req.set_program_hash(hash);
  req.add_targets("sm_80");
  tilec::v1::CompileResponse resp;
  ASSERT_TRUE(Compile(d, req, &resp).ok());
  ASSERT_EQ(resp.results_size(), 1);
  EXPECT_TRUE(resp.results(0).cache_hit());
  EXPECT_EQ(resp.results(0).digest(), JsonString(first.out, "digest"));
  req.set_targets(0, "sm_90a");  // not compiled for this target
  EXPECT_EQ(Compile(d, req, &resp).error_code(), grpc::StatusCode::NOT_FOUND);
  req.set_program_hash("../../etc/passwd");
  EXPECT_EQ(Compile(d, req, &resp).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST(CliE2E, ExitCodesScriptsBranchOn) {
  std::string dir = MakeTempDir("codes");
  std::ofstream(dir + "/tokens") << "good-token\n";
  std::ofstream(dir + "/bad_token") << "wrong\n";
  std::ofstream(dir + "/bad.py") << "def matmul(M):\n    x = (1 +\n";
  Tilecd d;
  ASSERT_TRUE(
      d.Start(MakeTempDir("cache"), {"--tokens_file=" + dir + "/tokens", "--metrics_port=-1"}));

  // A bad program: exit 1 with the located diagnostic, remote and embedded.
  std::vector<std::string> bad = {"compile", dir + "/bad.py", "--fn",
                                  "matmul",  "--target",      "sm_80"};
  RunResult remote_bad =
      RunTilec(With(bad, {"--server", d.address(), "--token_file", dir + "/tokens"}));
  EXPECT_EQ(remote_bad.code, 1) << remote_bad.err;
  EXPECT_TRUE(Located(remote_bad.err, dir + "/bad.py")) << remote_bad.err;
  RunResult local_bad = RunTilec(With(bad, {"--cache_dir", MakeTempDir("local")}));
  EXPECT_EQ(local_bad.code, 1) << local_bad.err;
  EXPECT_TRUE(Located(local_bad.err, dir + "/bad.py")) << local_bad.err;

  // Refused: no token, a wrong token.
  RunResult no_token = RunTilec(With(bad, {"--server", d.address()}));
  EXPECT_EQ(no_token.code, 77) << no_token.err;
  RunResult wrong =
      RunTilec(With(bad, {"--server", d.address(), "--token_file", dir + "/bad_token"}));
  EXPECT_EQ(wrong.code, 77) << wrong.err;

  // Unreachable: nothing listens there once the server is stopped.
  std::string address = d.address();
  d.Stop();
  RunResult down = RunTilec({"stats", "--server", address, "--timeout_s", "5"});
  EXPECT_EQ(down.code, 69) << down.err;
  EXPECT_NE(down.err.find("unreachable"), std::string::npos) << down.err;

  // Usage.
  EXPECT_EQ(RunTilec({"compile", "examples/gemm.py", "--fn", "matmul"}).code, 2);
  EXPECT_EQ(RunTilec({"stats"}).code, 2);
}

// `run --emulate`: a kernel that reads past its tensor stops with the fault
// located in the generated source (exit 70); one that runs past --timeout_s
// stops with exit 5, naming where it was.
TEST(CliE2E, EmulatorFaultAndTimeout) {
  std::string dir = MakeTempDir("emulate");
  std::ofstream(dir + "/k.py") << R"(import tilelang.language as T

def shifted(n):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            S = T.alloc_shared((n,), "float32")
            T.copy(A, S)
            for i in T.Parallel(n):
                B[i] = S[i + 1]
    return main

def spin(n, steps):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for k in T.serial(steps):
                for i in T.Parallel(n):
                    A[i] = A[i] * 0.5 + 1.0
    return main
)";
  RunResult fault = RunTilec(
      {"run", dir + "/k.py", "--fn", "shifted", "-D", "n=64", "--emulate", "--target", "sm_80"});
  EXPECT_EQ(fault.code, 70) << fault.err;
  EXPECT_NE(fault.err.find("faulted on the emulator"), std::string::npos) << fault.err;
  EXPECT_NE(fault.err.find("4 bytes past the end of shared buffer 'S' (offset 0, 256 bytes)"),
            std::string::npos)
      << fault.err;
  EXPECT_NE(fault.err.find("at shifted.cu:"), std::string::npos) << fault.err;

  RunResult spin =
      RunTilec({"run", dir + "/k.py", "--fn", "spin", "-D", "n=32", "-D", "steps=2000000000",
                "--emulate", "--target", "sm_80", "--timeout_s", "1"});
  EXPECT_EQ(spin.code, 5) << spin.err;
  EXPECT_NE(spin.err.find("did not finish within --timeout_s"), std::string::npos) << spin.err;
  EXPECT_NE(spin.err.find("at spin.cu:"), std::string::npos) << spin.err;
}

// TLS: a server with a certificate serves clients that trust it, and a
// plaintext client cannot talk to it.
TEST(CliE2E, TlsWithTheServersRoot) {
  if (::access("/usr/bin/openssl", X_OK) != 0) GTEST_SKIP() << "openssl is not installed";
  std::string dir = MakeTempDir("tls");
  std::string cmd =
      "/usr/bin/openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost"
      " -addext subjectAltName=DNS:localhost,IP:127.0.0.1 -keyout " +
      dir + "/key.pem -out " + dir + "/cert.pem >/dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  Tilecd d;
  ASSERT_TRUE(d.Start(
      MakeTempDir("cache"),
      {"--tls_cert=" + dir + "/cert.pem", "--tls_key=" + dir + "/key.pem", "--metrics_port=-1"}));
  RunResult health = RunTilec({"health", "--server", d.address(), "--tls_ca", dir + "/cert.pem"});
  EXPECT_EQ(health.code, 0) << health.err;
  EXPECT_EQ(health.out, "SERVING\n");
  RunResult stats =
      RunTilec({"stats", "--json", "--server", d.address(), "--tls_ca", dir + "/cert.pem"});
  EXPECT_EQ(stats.code, 0) << stats.err;
  EXPECT_NE(stats.out.find("\"compiler_version\""), std::string::npos) << stats.out;
  RunResult plain = RunTilec({"health", "--server", d.address(), "--timeout_s", "5"});
  EXPECT_EQ(plain.code, 69) << plain.err;
}

// Asked by key over the hit path (tilecd --http_port) first, the second
// compile is answered there: no gRPC lookup, the same cubin.
TEST(CliE2E, CompileAsksTheHitPathFirst) {
  Tilecd d;
  d.hit_path = true;
  ASSERT_TRUE(d.Start(MakeTempDir("hit_cache")));
  const std::string out1 = MakeTempDir("hit_out1"), out2 = MakeTempDir("hit_out2");
  auto run = [&](const std::string& out) {
    return RunTilec({"compile",  "examples/gemm.py",
                     "--fn",     "matmul",
                     "-D",       "M=96",
                     "-D",       "N=128",
                     "-D",       "K=64",
                     "-D",       "block_M=64",
                     "-D",       "block_N=64",
                     "-D",       "block_K=32",
                     "--target", "sm_80",
                     "--server", d.address(),
                     "--hit",    d.http_address(),
                     "--out",    out});
  };
  RunResult first = run(out1);
  ASSERT_EQ(first.code, 0) << first.err;
  const tilec::v1::StatsResponse before = Stats(d);
  RunResult second = run(out2);
  ASSERT_EQ(second.code, 0) << second.err;
  const tilec::v1::StatsResponse after = Stats(d);
  EXPECT_EQ(after.compiles(), 1);
  // One lookup by key, answered: the hit path's (gRPC's would be a second).
  EXPECT_EQ(after.hash_lookups() - before.hash_lookups(), 1);
  EXPECT_EQ(after.hash_hits() - before.hash_hits(), 1);
  EXPECT_FALSE(absl::StrContains(second.err, "hit path")) << second.err;
  const std::string cubin1 = ReadFile(out1 + "/matmul.sm_80.cubin");
  EXPECT_FALSE(cubin1.empty());
  EXPECT_EQ(ReadFile(out2 + "/matmul.sm_80.cubin"), cubin1);
  // get by digest reads it from the hit path too (one request more there).
  auto hit_requests = [&] {
    const std::string m = HttpGet(d.metrics_port(), "/metrics");
    const std::string name = "\ntilec_hit_path_requests_total ";  // not the HELP line
    const size_t at = m.find(name);
    return at == std::string::npos ? -1 : std::atoll(m.c_str() + at + name.size());
  };
  const long long requests_before = hit_requests();
  const std::string got = out2 + "/got.cubin";
  RunResult get = RunTilec({"get", cache::Sha256Hex(cubin1), "-o", got, "--server", d.address(),
                            "--hit", d.http_address()});
  ASSERT_EQ(get.code, 0) << get.err;
  EXPECT_EQ(ReadFile(got), cubin1);
  EXPECT_EQ(hit_requests(), requests_before + 1);
  // --hit goes with compile and a server.
  RunResult lone = RunTilec({"compile", "examples/gemm.py", "--fn", "matmul", "--target", "sm_80",
                             "--hit", d.http_address()});
  EXPECT_EQ(lone.code, 2) << lone.err;
  EXPECT_TRUE(absl::StrContains(lone.err, "--hit")) << lone.err;
}

}  // namespace
}  // namespace tilec::e2e
