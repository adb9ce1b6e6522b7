#include "client/remote.h"

#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <sstream>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "client/embedded.h"
#include "client/hit_client.h"
#include "client/warmup.h"
#include "compiler/cache/digest.h"
#include "compiler/cache/signing.h"
#include "compiler/frontend/frontend.h"
#include "compiler/ir/hash.h"
#include "compiler/recommend/auto_bind.h"
#include "compiler/recommend/profile.h"
#include "compiler/targets/registry.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "proto/tilec/v1/service.grpc.pb.h"

namespace tilec::cli {
namespace {

struct RemoteFlags {
  std::string command, server, token, tls_ca, file, function, out, digest, cache_dir, profile;
  std::string service;     // health: the service asked about ("": the server)
  std::string verify_key;  // compile: refuse results not signed by this key
  std::string report;      // warmup: the JSON report's file
  std::string hit;         // compile: the server's hit path, HOST:PORT ("": none)
  int jobs = 4;            // warmup: compiles in flight
  std::vector<std::pair<std::string, std::string>> defines;
  std::vector<std::string> unbound;
  std::vector<std::string> targets;
  bool json = false, line_info = false;
  int max_registers = 0;
  double timeout_s = 600;
  int64_t cache_bytes = int64_t{10} << 30;  // the embedded cache's LRU budget
  // autotune
  int top = 0, iterations = 0, warmup = 0;
  uint64_t seed = 0;
  bool retune = false;
  std::vector<std::pair<std::string, int64_t>> dims;
};

int Usage(const std::string& msg) {
  std::fprintf(
      stderr,
      "tilec: %s\n"
      "usage:\n"
      "  tilec compile FILE --fn NAME [-D name=value ...] [-U name ...]\n"
      "            --target sm_80|sm_90a ... [--profile P]\n"
      "            [--out DIR] [--json] [--line_info] [--max_registers N] [--verify_key PEM]\n"
      "            [--server HOST:PORT [--hit HOST:PORT] | --cache_dir DIR]\n"
      "  tilec get DIGEST -o FILE --server HOST:PORT [--hit HOST:PORT]\n"
      "  tilec autotune FILE --fn NAME [-D name=value ...] [-U name ...] --target PROFILE\n"
      "            [--top K] [--dim name=size ...] [--iterations N] [--warmup W]\n"
      "            [--seed S] [--retune] [--json] --server HOST:PORT\n"
      "  tilec stats [--json] --server HOST:PORT\n"
      "  tilec health --server HOST:PORT [--service NAME (tilec.SharedTier)]\n"
      "  tilec warmup MANIFEST [--server HOST:PORT | --cache_dir DIR] [--jobs N]\n"
      "            [--report FILE] [--json]   (client/warmup.h)\n"
      "  common: --token_file F, --tls_ca F, --timeout_s S; $TILEC_SERVER, "
      "$TILEC_TOKEN\n",
      msg.c_str());
  return 2;
}

// gRPC's own answer to a request the server could not parse or a method it
// does not have: UNIMPLEMENTED with no message. Not the program's fault.
bool IsUnparsedOrUnknown(const grpc::Status& s) {
  return s.error_code() == grpc::StatusCode::UNIMPLEMENTED && s.error_message().empty();
}

int ExitFor(const grpc::Status& s, bool remote) { return ExitCodeForStatus(s, remote); }

int Report(const grpc::Status& s, bool remote = true) {
  if (s.error_code() == grpc::StatusCode::INVALID_ARGUMENT) {
    std::fprintf(stderr, "%s\n", s.error_message().c_str());
  } else if (s.error_code() == grpc::StatusCode::UNAVAILABLE && remote) {
    std::fprintf(stderr, "tilec: server unreachable: %s\n", s.error_message().c_str());
  } else if (IsUnparsedOrUnknown(s) && remote) {
    std::fprintf(stderr,
                 "tilec: the server answered UNIMPLEMENTED without a message: it does not "
                 "have this method or could not parse the request (is it a different version "
                 "of tilec?)\n");
  } else {
    std::fprintf(stderr, "tilec: error %d: %s\n", static_cast<int>(s.error_code()),
                 s.error_message().c_str());
  }
  return ExitFor(s, remote);
}

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::stringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return true;
}

// The first word of `path`'s first line (the bearer token); false, with the
// error printed, when the file cannot be read.
bool ReadToken(const std::string& path, std::string* token) {
  if (!ReadFile(path, token)) {
    std::fprintf(stderr, "tilec: cannot read %s\n", path.c_str());
    return false;
  }
  *token = std::string(absl::StripAsciiWhitespace(*token));
  *token = token->substr(0, token->find_first_of(" \n"));
  return true;
}

std::shared_ptr<grpc::Channel> Connect(const RemoteFlags& f) {
  std::shared_ptr<grpc::ChannelCredentials> creds = grpc::InsecureChannelCredentials();
  if (!f.tls_ca.empty()) {
    grpc::SslCredentialsOptions ssl;
    ReadFile(f.tls_ca, &ssl.pem_root_certs);
    creds = grpc::SslCredentials(ssl);
  }
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  return grpc::CreateCustomChannel(f.server, creds, args);
}

void Prepare(const RemoteFlags& f, grpc::ClientContext* ctx) {
  if (!f.token.empty()) ctx->AddMetadata("authorization", "Bearer " + f.token);
  ctx->set_deadline(std::chrono::system_clock::now() +
                    std::chrono::milliseconds(static_cast<int64_t>(f.timeout_s * 1000)));
}

// Where `compile` runs: a tilecd (--server) or this process (embedded).

grpc::Status FromAbsl(const absl::Status& s) {
  if (s.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()), std::string(s.message()));
}

// GetArtifact of `digest`, refusing (DATA_LOSS) bytes that are not it: what
// is written to disk is exactly what was asked for, whatever the server.
grpc::Status FetchArtifact(tilec::v1::Tilec::Stub* stub, const RemoteFlags& f,
                           const std::string& digest, std::string* bytes) {
  grpc::ClientContext ctx;
  Prepare(f, &ctx);
  tilec::v1::GetArtifactRequest req;
  req.set_digest(digest);
  auto reader = stub->GetArtifact(&ctx, req);
  tilec::v1::ArtifactChunk chunk;
  while (reader->Read(&chunk)) *bytes += chunk.data();
  grpc::Status s = reader->Finish();
  if (s.ok() && cache::Sha256Hex(*bytes) != digest) {
    const std::string got = cache::Sha256Hex(*bytes);
    bytes->clear();
    return grpc::Status(grpc::StatusCode::DATA_LOSS,
                        absl::StrCat("the server sent bytes that are not the artifact ",
                                     digest.substr(0, 80), " (their SHA-256 is ", got,
                                     "); nothing was written"));
  }
  return s;
}

CompileBackend RemoteBackend(const RemoteFlags& f) {
  std::shared_ptr<tilec::v1::Tilec::Stub> stub = tilec::v1::Tilec::NewStub(Connect(f));
  CompileBackend b;
  b.where = f.server;
  b.remote = true;
  b.compile = [stub, &f](const tilec::v1::CompileRequest& req, tilec::v1::CompileResponse* resp) {
    grpc::ClientContext ctx;
    Prepare(f, &ctx);
    return stub->Compile(&ctx, req, resp);
  };
  std::shared_ptr<HitClient> hit;
  if (!f.hit.empty()) hit = std::make_shared<HitClient>(f.hit, f.token, absl::Seconds(f.timeout_s));
  b.hit = hit;
  b.fetch = [stub, hit, &f](const std::string& digest, std::string* bytes) {
    if (hit != nullptr) {
      // The hit path first; gRPC when it cannot answer (bytes not the
      // artifact are refused either way).
      absl::StatusOr<std::string> r = HitArtifact(*hit, digest);
      if (r.ok() || r.status().code() == absl::StatusCode::kDataLoss) {
        if (r.ok()) *bytes = *std::move(r);
        return FromAbsl(r.status());
      }
    }
    return FetchArtifact(stub.get(), f, digest, bytes);
  };
  b.autotune = [stub, &f](const tilec::v1::AutotuneRequest& req) {
    grpc::ClientContext ctx;
    Prepare(f, &ctx);
    auto reader = stub->Autotune(&ctx, req);
    tilec::v1::AutotuneProgress p;
    while (reader->Read(&p)) {
    }
    return reader->Finish();
  };
  return b;
}

CompileBackend EmbeddedBackend(const RemoteFlags& f, std::shared_ptr<EmbeddedCompiler> local) {
  CompileBackend b;
  b.where = "this machine";
  b.compile = [local, &f](const tilec::v1::CompileRequest& req, tilec::v1::CompileResponse* resp) {
    absl::StatusOr<tilec::v1::CompileResponse> r =
        local->Compile(req, absl::Now() + absl::Seconds(f.timeout_s));
    if (r.ok()) *resp = *std::move(r);
    return FromAbsl(r.status());
  };
  b.fetch = [local](const std::string& digest, std::string* bytes) {
    absl::StatusOr<std::string> r = local->Artifact(digest);
    if (r.ok()) *bytes = *std::move(r);
    return FromAbsl(r.status());
  };
  return b;
}

// The hash of the program the request names, computed here with the same
// frontend the server runs, so that a server may answer by key before the
// source is shipped (CompileRequest.program_hash). Nullopt when the program
// leaves tile parameters to the server (recommendation) or does not build
// here (the server then reports it as usual).
std::optional<std::string> LocalProgramHash(const RemoteFlags& f, const std::string& text) {
  if (!f.unbound.empty() || f.targets.empty()) return std::nullopt;
  frontend::SourceFile file{f.file, text};
  frontend::Bindings bindings;
  for (const auto& [k, v] : f.defines) bindings.values.emplace_back(k, v);
  absl::StatusOr<recommend::HardwareProfile> profile =
      recommend::ProfileForTarget(recommend::BuiltinProfiles(), f.targets[0], f.profile);
  if (profile.ok()) bindings.device = recommend::DeviceFactsOf(*profile);
  absl::StatusOr<ir::Program> program = frontend::CompileTileLang(file, f.function, bindings);
  if (!program.ok() || recommend::HasUnboundTileParams(*program)) return std::nullopt;
  return ir::ProgramHash(*program);
}

// The server of --server, else this process's compiler with the local cache
// (nullopt, after saying why, when that cache cannot be opened).
std::optional<CompileBackend> BackendFor(const RemoteFlags& f) {
  if (!f.server.empty()) return RemoteBackend(f);
  std::string dir = f.cache_dir.empty() ? DefaultCacheDir() : f.cache_dir;
  absl::StatusOr<std::unique_ptr<EmbeddedCompiler>> local =
      EmbeddedCompiler::Open(dir, f.cache_bytes);
  if (!local.ok()) {
    std::fprintf(stderr, "tilec: %s\n", std::string(local.status().message()).c_str());
    return std::nullopt;
  }
  return EmbeddedBackend(f, std::shared_ptr<EmbeddedCompiler>(*std::move(local)));
}

int Compile(const RemoteFlags& f) {
  if (f.file.empty() || f.function.empty() || f.targets.empty()) {
    return Usage("compile needs FILE, --fn NAME and at least one --target");
  }
  tilec::v1::CompileRequest req;
  tilec::v1::TileLangSource* src = req.mutable_source();
  if (!ReadFile(f.file, src->mutable_text())) {
    std::fprintf(stderr, "tilec: cannot read %s\n", f.file.c_str());
    return 4;
  }
  src->set_path(f.file);
  src->set_function(f.function);
  for (const auto& [k, v] : f.defines) {
    tilec::v1::Binding* b = src->add_bindings();
    b->set_name(k);
    b->set_value(v);
  }
  for (const std::string& u : f.unbound) src->add_unbound(u);
  for (const std::string& t : f.targets) req.add_targets(t);
  req.mutable_options()->set_profile(f.profile);
  req.mutable_options()->set_line_info(f.line_info);
  req.mutable_options()->set_max_registers(f.max_registers);
  if (!f.out.empty()) {
    // Before compiling, so that a compile is never lost to a bad --out.
    std::error_code ec;
    std::filesystem::create_directories(f.out, ec);
    if (ec || !std::filesystem::is_directory(f.out)) {
      std::fprintf(stderr, "tilec: --out %s: cannot create the folder: %s\n", f.out.c_str(),
                   ec ? ec.message().c_str() : "a file of that name is in the way");
      return 4;
    }
  }
  std::optional<CompileBackend> chosen = BackendFor(f);
  if (!chosen) return 4;
  const CompileBackend& backend = *chosen;
  tilec::v1::CompileResponse resp;
  std::atomic<bool> done{false};
  std::thread progress;
  if (!f.json && ::isatty(2)) {
    progress = std::thread([&] {
      int ticks = 0;
      while (!done.load()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(250));
        if (++ticks >= 4 && !done.load()) {
          std::fprintf(stderr, "\rtilec: compiling %s on %s ... %.1f s", f.function.c_str(),
                       backend.where.c_str(), ticks / 4.0);
        }
      }
      if (ticks >= 4) std::fprintf(stderr, "\r\033[K");
    });
  }
  std::unique_ptr<cache::Verifier> verifier;
  if (!f.verify_key.empty()) {
    absl::StatusOr<std::unique_ptr<cache::Verifier>> v = cache::Verifier::FromFiles({f.verify_key});
    if (!v.ok()) {
      std::fprintf(stderr, "tilec: --verify_key: %s\n", std::string(v.status().message()).c_str());
      return 4;
    }
    verifier = *std::move(v);
  }
  grpc::Status s;
  bool answered = false;
  if (backend.remote) {
    // Ask by key first; the source travels only when the server lacks it.
    std::optional<std::string> hash = LocalProgramHash(f, src->text());
    if (hash && backend.hit != nullptr) {
      std::vector<std::string> targets(req.targets().begin(), req.targets().end());
      absl::StatusOr<tilec::v1::CompileResponse> r =
          HitCompile(*backend.hit, *hash, targets, f.line_info, f.max_registers);
      if (r.ok()) resp = *std::move(r);
      answered = r.ok() && resp.results_size() == req.targets_size();
      if (!r.ok() && r.status().code() != absl::StatusCode::kNotFound) {
        std::fprintf(stderr, "tilec: hit path: %s; asking over gRPC\n",
                     std::string(r.status().message()).c_str());
      }
    }
    if (hash && !answered) {
      tilec::v1::CompileRequest by_hash;
      by_hash.set_program_hash(*hash);
      *by_hash.mutable_targets() = req.targets();
      *by_hash.mutable_options() = req.options();
      s = backend.compile(by_hash, &resp);
      answered = s.ok() && resp.results_size() == req.targets_size();
    }
  }
  if (!answered) {
    resp.Clear();
    s = backend.compile(req, &resp);
  }
  done.store(true);
  if (progress.joinable()) progress.join();
  if (!s.ok()) return Report(s, backend.remote);
  // Results name files under --out: each must be for a target asked for,
  // once, whatever the server says (a target of "../x" would write outside).
  if (resp.results_size() != req.targets_size()) {
    std::fprintf(stderr, "tilec: the server answered %d results for %d targets; refusing them\n",
                 resp.results_size(), req.targets_size());
    return kRemoteRefused;
  }
  for (int i = 0; i < resp.results_size(); ++i) {
    if (resp.results(i).target() != req.targets(i)) {
      std::fprintf(stderr,
                   "tilec: the server answered for target \"%.80s\" where %s was asked; "
                   "refusing it\n",
                   resp.results(i).target().c_str(), req.targets(i).c_str());
      return kRemoteRefused;
    }
  }
  for (const auto& r : resp.results()) {
    if (!r.store_error().empty()) {
      std::fprintf(stderr, "tilec: warning: %s: %s\n", r.target().c_str(), r.store_error().c_str());
    }
    if (verifier &&
        !verifier->Verify(cache::ArtifactStatement(r.cache_key(), r.digest(), r.metadata_json()),
                          r.signature())) {
      std::fprintf(stderr, "tilec: %s: the artifact %s is %s by the key in %s; refusing it\n",
                   r.target().c_str(), r.digest().c_str(),
                   r.signature().empty() ? "not signed (is the server run with --signing_key?)"
                                         : "not signed",
                   f.verify_key.c_str());
      return kRemoteRefused;
    }
    if (f.out.empty()) continue;
    std::string bytes;
    if (!r.store_error().empty()) {
      // Not in the cache: the response holds the only copy (fetches are
      // checked against the digest where they are read).
      bytes = r.artifact();
      if (cache::Sha256Hex(bytes) != r.digest()) {
        std::fprintf(stderr, "tilec: %s: the bytes answered are not the artifact %s\n",
                     r.target().c_str(), r.digest().c_str());
        return kRemoteRefused;
      }
    } else if (grpc::Status gs = backend.fetch(r.digest(), &bytes); !gs.ok()) {
      return Report(gs, backend.remote);
    }
    std::string base = absl::StrCat(f.out, "/", f.function, ".", r.target());
    absl::StatusOr<const targets::Target*> target = targets::FindTarget(r.target());
    const std::string suffix = target.ok() ? std::string((*target)->binary_suffix) : ".bin";
    std::ofstream cubin(base + suffix, std::ios::binary);
    cubin << bytes;
    std::ofstream meta(base + ".json");
    meta << r.metadata_json() << "\n";
    if (!r.signature().empty()) {
      std::ofstream(base + ".sig") << cache::SignatureFile(r.cache_key(), r.signature());
    }
    if (!cubin || !meta) {
      std::fprintf(stderr, "tilec: cannot write %s%s and .json\n", base.c_str(), suffix.c_str());
      return 4;
    }
  }
  if (f.json) {
    std::string json;
    google::protobuf::util::JsonPrintOptions opts;
    opts.preserve_proto_field_names = true;
    (void)google::protobuf::util::MessageToJsonString(resp, &json, opts);
    std::printf("%s\n", json.c_str());
  } else {
    std::printf("program %s\n", resp.program_hash().c_str());
    for (const auto& r : resp.results()) {
      std::string how = r.cache_hit() ? std::string("cache hit")
                                      : absl::StrCat("compiled in ", r.compile_seconds(), " s");
      std::printf("%-7s %s %8lld bytes  %s\n", r.target().c_str(), r.digest().c_str(),
                  static_cast<long long>(r.size_bytes()), how.c_str());
      if (r.config_size() > 0) {
        std::string config;
        for (const tilec::v1::NamedValue& v : r.config()) {
          absl::StrAppend(&config, config.empty() ? "" : " ", v.name(), "=", v.value());
        }
        if (r.config_source() == "autotune") {
          std::printf("        config chosen by autotuning: %s (profile %s, measured %.4f ms)\n",
                      config.c_str(), r.profile().c_str(), r.measured_ms());
        } else {
          std::printf(
              "        config chosen by recommendation: %s (profile %s, predicted %.1f us)\n",
              config.c_str(), r.profile().c_str(), r.predicted_us());
        }
      }
    }
  }
  return 0;
}

int Get(const RemoteFlags& f) {
  if (f.digest.empty() || f.out.empty()) return Usage("get needs DIGEST and -o FILE");
  std::string bytes;
  grpc::Status s = RemoteBackend(f).fetch(f.digest, &bytes);  // the hit path first, with --hit
  if (!s.ok()) return Report(s);
  std::ofstream out(f.out, std::ios::binary);
  out << bytes;
  if (!out) {
    std::fprintf(stderr, "tilec: cannot write %s\n", f.out.c_str());
    return 4;
  }
  return 0;
}

int Stats(const RemoteFlags& f) {
  auto stub = tilec::v1::Tilec::NewStub(Connect(f));
  grpc::ClientContext ctx;
  Prepare(f, &ctx);
  tilec::v1::StatsResponse resp;
  grpc::Status s = stub->Stats(&ctx, tilec::v1::StatsRequest(), &resp);
  if (!s.ok()) return Report(s);
  std::string out;
  google::protobuf::util::JsonPrintOptions opts;
  opts.preserve_proto_field_names = true;
  opts.always_print_primitive_fields = true;
  opts.add_whitespace = !f.json;
  (void)google::protobuf::util::MessageToJsonString(resp, &out, opts);
  std::printf("%s\n", std::string(absl::StripTrailingAsciiWhitespace(out)).c_str());
  return 0;
}

// grpc.health.v1.Health/Check through the generic stub (Debian ships no
// generated health stubs): the request is a HealthCheckRequest (field 1 the
// service, "" for the server), the response's field 1 is the serving status
// (1 = SERVING).
int Health(const RemoteFlags& f) {
  grpc::GenericStub stub(Connect(f));
  grpc::ClientContext ctx;
  Prepare(f, &ctx);
  grpc::ByteBuffer request, response;
  std::string req;
  if (!f.service.empty()) {
    if (f.service.size() > 127) return Usage("--service: a name of at most 127 bytes");
    req.push_back(0x0a);  // field 1, length-delimited
    req.push_back(static_cast<char>(f.service.size()));
    req += f.service;
  }
  grpc::Slice body(req);
  request = grpc::ByteBuffer(&body, 1);
  std::promise<grpc::Status> done;
  stub.UnaryCall(&ctx, "/grpc.health.v1.Health/Check", grpc::StubOptions(), &request, &response,
                 [&](grpc::Status s) { done.set_value(s); });
  grpc::Status s = done.get_future().get();
  if (!s.ok()) return Report(s);
  std::vector<grpc::Slice> slices;
  std::string bytes;
  if (response.Dump(&slices).ok()) {
    for (const grpc::Slice& sl : slices) {
      bytes.append(reinterpret_cast<const char*>(sl.begin()), sl.size());
    }
  }
  bool serving = bytes.size() == 2 && bytes[0] == 0x08 && bytes[1] == 0x01;
  std::printf("%s\n", serving ? "SERVING" : "NOT_SERVING");
  return serving ? 0 : kRemoteUnreachable;
}

// Fills `src` from FILE, --fn, -D and -U; false (after saying why) when the
// file cannot be read.
bool FillSource(const RemoteFlags& f, tilec::v1::TileLangSource* src) {
  if (!ReadFile(f.file, src->mutable_text())) {
    std::fprintf(stderr, "tilec: cannot read %s\n", f.file.c_str());
    return false;
  }
  src->set_path(f.file);
  src->set_function(f.function);
  for (const auto& [k, v] : f.defines) {
    tilec::v1::Binding* b = src->add_bindings();
    b->set_name(k);
    b->set_value(v);
  }
  for (const std::string& u : f.unbound) src->add_unbound(u);
  return true;
}

std::string ConfigText(const google::protobuf::RepeatedPtrField<tilec::v1::NamedValue>& config) {
  std::vector<std::string> parts;
  for (const tilec::v1::NamedValue& v : config)
    parts.push_back(absl::StrCat(v.name(), "=", v.value()));
  return absl::StrJoin(parts, " ");
}

// `tilec autotune`: the Autotune RPC, its progress on a terminal, the
// measured table (or the record as JSON).
int Autotune(const RemoteFlags& f) {
  if (f.file.empty() || f.function.empty() || f.targets.size() != 1) {
    return Usage("autotune needs FILE, --fn NAME and one --target PROFILE");
  }
  tilec::v1::AutotuneRequest req;
  if (!FillSource(f, req.mutable_source())) return 4;
  req.set_profile(f.targets[0]);
  req.set_top_k(f.top);
  req.set_iterations(f.iterations);
  req.set_warmup(f.warmup);
  req.set_seed(f.seed);
  req.set_retune(f.retune);
  for (const auto& [name, size] : f.dims) {
    tilec::v1::NamedValue* d = req.add_dyn_dims();
    d->set_name(name);
    d->set_value(size);
  }
  auto stub = tilec::v1::Tilec::NewStub(Connect(f));
  grpc::ClientContext ctx;
  Prepare(f, &ctx);
  std::unique_ptr<grpc::ClientReader<tilec::v1::AutotuneProgress>> reader =
      stub->Autotune(&ctx, req);
  const bool bar = !f.json && ::isatty(2);
  tilec::v1::AutotuneProgress p, last;
  bool have_last = false;
  while (reader->Read(&p)) {
    if (bar) {
      const int width = 30;
      const int filled = p.total() > 0 ? width * p.done() / p.total() : 0;
      std::fprintf(stderr, "\r\033[K[%s%s] %d/%d %s", std::string(filled, '#').c_str(),
                   std::string(width - filled, '.').c_str(), p.done(), p.total(),
                   p.message().substr(0, 60).c_str());
    } else if (!f.json && !p.has_record()) {
      std::fprintf(stderr, "tilec: %s: %s\n", p.stage().c_str(), p.message().c_str());
    }
    if (p.has_record()) {
      last = p;
      have_last = true;
    }
  }
  if (bar) std::fprintf(stderr, "\r\033[K");
  grpc::Status s = reader->Finish();
  if (!s.ok()) return Report(s);
  if (!have_last) {
    std::fprintf(stderr, "tilec: the server ended the autotune without a result\n");
    return 70;
  }
  if (f.json) {
    std::string out;
    google::protobuf::util::JsonPrintOptions opts;
    opts.preserve_proto_field_names = true;
    (void)google::protobuf::util::MessageToJsonString(last, &out, opts);
    std::printf("%s\n", out.c_str());
    return 0;
  }
  const tilec::v1::TuningRecord& r = last.record();
  std::printf("%s on %s%s\n", f.function.c_str(), r.profile().c_str(),
              last.from_database() ? " (from the tuning database: nothing measured)" : "");
  std::printf("%-4s %-4s %-44s %12s %12s %9s  %s\n", "rank", "pred", "config", "predicted us",
              "median ms", "stddev", "status");
  for (const tilec::v1::MeasuredCandidate& c : r.candidates()) {
    std::printf("%-4s %-4d %-44s %12.2f %12.4f %8.1f%%  %s%s\n",
                c.measured_rank() > 0 ? absl::StrCat(c.measured_rank()).c_str() : "-",
                c.predicted_rank(), ConfigText(c.config()).c_str(), c.predicted_us(), c.median_ms(),
                c.median_ms() > 0 ? 100 * c.stddev_ms() / c.median_ms() : 0.0, c.status().c_str(),
                c.worker_id().empty() ? "" : absl::StrCat(" (", c.worker_id(), ")").c_str());
  }
  if (std::isinf(r.noise_band())) {
    std::printf(
        "best: %s (emulator wall times rank nothing: the best predicted of the checked "
        "candidates)\n",
        ConfigText(r.best()).c_str());
  } else {
    std::printf("best: %s (noise band %.1f%%; ties go to the better prediction)\n",
                ConfigText(r.best()).c_str(), 100 * r.noise_band());
  }
  std::printf("Spearman rank correlation, predicted vs measured: %.3f\n", r.spearman());
  if (!r.candidates().empty()) std::printf("timing: %s\n", r.candidates(0).timing().c_str());
  return 0;
}

int RunWarmup(const RemoteFlags& f) {
  if (f.file.empty()) return Usage("warmup needs a MANIFEST file");
  std::optional<CompileBackend> backend = BackendFor(f);
  if (!backend) return 4;
  WarmupOptions o;
  o.manifest = f.file;
  o.report = f.report;
  o.json = f.json;
  o.jobs = f.jobs;
  return Warmup(o, *backend);
}

}  // namespace

int ExitCodeForStatus(const grpc::Status& s, bool remote) {
  if (IsUnparsedOrUnknown(s)) return 70;
  switch (s.error_code()) {
    case grpc::StatusCode::OK: return 0;
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::FAILED_PRECONDITION:
    case grpc::StatusCode::UNIMPLEMENTED: return 1;
    case grpc::StatusCode::UNAVAILABLE: return remote ? kRemoteUnreachable : 4;
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
    case grpc::StatusCode::DEADLINE_EXCEEDED:
    case grpc::StatusCode::CANCELLED: return kRemoteTemporary;
    case grpc::StatusCode::UNAUTHENTICATED:
    case grpc::StatusCode::PERMISSION_DENIED: return kRemoteRefused;
    case grpc::StatusCode::NOT_FOUND: return 1;
    default: return 70;
  }
}

int RemoteRecommend(const ServerConnection& connection, const tilec::v1::RecommendRequest& request,
                    tilec::v1::RecommendResponse* response) {
  RemoteFlags f;
  f.server = connection.server;
  f.tls_ca = connection.tls_ca;
  f.timeout_s = connection.timeout_s;
  if (const char* t = std::getenv("TILEC_TOKEN")) f.token = t;
  if (!connection.token_file.empty() && !ReadToken(connection.token_file, &f.token)) return 4;
  auto stub = tilec::v1::Tilec::NewStub(Connect(f));
  grpc::ClientContext ctx;
  Prepare(f, &ctx);
  grpc::Status s = stub->Recommend(&ctx, request, response);
  return s.ok() ? 0 : Report(s);
}

bool IsRemoteCommand(const std::vector<std::string>& args) {
  if (args.empty()) return false;
  const std::string& c = args[0];
  if (c == "get" || c == "stats" || c == "health" || c == "autotune" || c == "warmup") {
    return true;
  }
  return c == "compile";
}

int RemoteMain(const std::vector<std::string>& args) {
  RemoteFlags f;
  f.command = args[0];
  if (const char* s = std::getenv("TILEC_SERVER")) f.server = s;
  if (const char* t = std::getenv("TILEC_TOKEN")) f.token = t;
  std::string token_file;
  for (size_t i = 1; i < args.size(); ++i) {
    std::string a = args[i], value;
    size_t eq = a.find('=');
    bool inline_value = a.rfind("--", 0) == 0 && eq != std::string::npos;
    if (inline_value) {
      value = a.substr(eq + 1);
      a = a.substr(0, eq);
    }
    auto next = [&](std::string* out) {
      if (inline_value) {
        *out = value;
        return true;
      }
      if (i + 1 >= args.size()) return false;
      *out = args[++i];
      return true;
    };
    std::string v;
    if (a == "--json") {
      f.json = true;
    } else if (a == "--line_info") {
      f.line_info = true;
    } else if (a == "--retune") {
      f.retune = true;
    } else if (a == "--server" || a == "--token_file" || a == "--tls_ca" || a == "--fn" ||
               a == "--target" || a == "--out" || a == "-o" || a == "-D" ||
               a == "--max_registers" || a == "--timeout_s" || a == "--cache_dir" ||
               a == "--cache_bytes" || a == "-U" || a == "--profile" || a == "--top" ||
               a == "--iterations" || a == "--warmup" || a == "--seed" || a == "--dim" ||
               a == "--service" || a == "--report" || a == "--jobs" || a == "--verify_key" ||
               a == "--hit") {
      if (!next(&v)) return Usage(absl::StrCat(a, " needs a value"));
      if (a == "--hit") f.hit = v;
      if (a == "--verify_key") f.verify_key = v;
      if (a == "--service") f.service = v;
      if (a == "--report") f.report = v;
      if (a == "--jobs" && (!absl::SimpleAtoi(v, &f.jobs) || f.jobs < 1 || f.jobs > 256)) {
        return Usage("--jobs needs an integer from 1 to 256");
      }
      if (a == "--server") f.server = v;
      if (a == "--token_file") token_file = v;
      if (a == "--tls_ca") f.tls_ca = v;
      if (a == "--cache_dir") f.cache_dir = v;
      if (a == "--cache_bytes" && (!absl::SimpleAtoi(v, &f.cache_bytes) || f.cache_bytes <= 0)) {
        return Usage("--cache_bytes needs a positive integer");
      }
      if (a == "--fn") f.function = v;
      if (a == "--profile") f.profile = v;
      if (a == "-U") {
        if (v.empty() || v.find('=') != std::string::npos) {
          return Usage(absl::StrCat("-U needs a parameter name, got '", v, "'"));
        }
        f.unbound.push_back(v);
      }
      if (a == "--target") f.targets.push_back(v);
      if (a == "--out" || a == "-o") f.out = v;
      if (a == "-D") {
        size_t e = v.find('=');
        if (e == std::string::npos) return Usage("-D needs name=value");
        f.defines.emplace_back(v.substr(0, e), v.substr(e + 1));
      }
      if (a == "--max_registers" && !absl::SimpleAtoi(v, &f.max_registers)) {
        return Usage("--max_registers needs an integer");
      }
      if (a == "--timeout_s" && !absl::SimpleAtod(v, &f.timeout_s)) {
        return Usage("--timeout_s needs a number");
      }
      if ((a == "--top" && (!absl::SimpleAtoi(v, &f.top) || f.top < 1)) ||
          (a == "--iterations" && (!absl::SimpleAtoi(v, &f.iterations) || f.iterations < 1)) ||
          (a == "--warmup" && (!absl::SimpleAtoi(v, &f.warmup) || f.warmup < 0)) ||
          (a == "--seed" && !absl::SimpleAtoi(v, &f.seed))) {
        return Usage(absl::StrCat(a, " needs a ",
                                  a == "--seed" || a == "--warmup" ? "non-negative" : "positive",
                                  " integer, got '", v, "'"));
      }
      if (a == "--dim") {
        size_t e = v.find('=');
        int64_t size = 0;
        if (e == std::string::npos || !absl::SimpleAtoi(v.substr(e + 1), &size) || size < 0) {
          return Usage("--dim needs name=size");
        }
        f.dims.emplace_back(v.substr(0, e), size);
      }
    } else if (a.rfind("-", 0) == 0) {
      return Usage(absl::StrCat("unknown flag ", a));
    } else if ((f.command == "compile" || f.command == "autotune" || f.command == "warmup") &&
               f.file.empty()) {
      f.file = a;
    } else if (f.command == "get" && f.digest.empty()) {
      f.digest = a;
    } else {
      return Usage(absl::StrCat("unexpected argument ", a));
    }
  }
  if (f.server.empty() && f.command != "compile" && f.command != "warmup") {
    return Usage("no server: pass --server HOST:PORT or set TILEC_SERVER");
  }
  if (!f.hit.empty() && (f.server.empty() || (f.command != "compile" && f.command != "get"))) {
    return Usage("--hit (the server's hit path) goes with compile or get and --server HOST:PORT");
  }
  if (!token_file.empty() && !ReadToken(token_file, &f.token)) return 4;
  if (f.command == "compile") return Compile(f);
  if (f.command == "get") return Get(f);
  if (f.command == "stats") return Stats(f);
  if (f.command == "autotune") return Autotune(f);
  if (f.command == "warmup") return RunWarmup(f);
  return Health(f);
}

}  // namespace tilec::cli
