#include "server/hit_path.h"

#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "compiler/cache/digest.h"
#include "server/service.h"

namespace tilec::server {
namespace {

HitReply FromStatus(const absl::Status& s) {
  int http = 500;
  switch (s.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kOutOfRange: http = 400; break;
    case absl::StatusCode::kNotFound: http = 404; break;
    case absl::StatusCode::kUnauthenticated: http = 401; break;
    case absl::StatusCode::kPermissionDenied: http = 403; break;
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kUnavailable: http = 503; break;
    default: break;
  }
  HitReply r = HitReply::Text(http, ClipMessage(s.message()));
  if (http == 401) r.headers = "WWW-Authenticate: Bearer\r\n";
  if (http == 503) r.headers = "Retry-After: 1\r\n";
  return r;
}

HitReply Bytes(std::string content_type, std::shared_ptr<const std::string> body) {
  HitReply r;
  r.content_type = std::move(content_type);
  r.body = std::move(body);
  return r;
}

constexpr char kProtobuf[] = "application/x-protobuf";

// `query` (a=b&c=d) as a compile-by-hash request, or INVALID_ARGUMENT naming
// what is wrong.
absl::Status ParseQuery(absl::string_view query, tilec::v1::CompileRequest* request) {
  for (absl::string_view pair : absl::StrSplit(query, '&', absl::SkipEmpty())) {
    std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(pair, absl::MaxSplits('=', 1));
    const absl::string_view key = kv.first, value = kv.second;
    if (key == "target") {
      request->add_targets(std::string(value));
    } else if (key == "line_info") {
      if (value != "0" && value != "1") {
        return absl::InvalidArgumentError("line_info takes 0 or 1");
      }
      request->mutable_options()->set_line_info(value == "1");
    } else if (key == "max_registers") {
      int n = 0;
      if (!absl::SimpleAtoi(value, &n) || n < 0) {
        return absl::InvalidArgumentError("max_registers takes a count of registers (0: any)");
      }
      request->mutable_options()->set_max_registers(n);
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown query parameter '", key.substr(0, 64),
                       "' (this path takes target, line_info and max_registers)"));
    }
  }
  if (request->targets().empty()) {
    return absl::InvalidArgumentError("name at least one target: ?target=sm_90a");
  }
  return absl::OkStatus();
}

}  // namespace

HitPath::~HitPath() {
  std::unique_lock<std::mutex> lock(pending_mu_);
  pending_done_.wait(lock, [this] { return pending_ == 0; });
}

std::optional<HitReply> HitPath::Handle(const HitRequest& request, HitResponder later) {
  if (options_.requests != nullptr) options_.requests->fetch_add(1);
  absl::string_view path = request.path;
  if (absl::ConsumePrefix(&path, "/v1/compile/")) {
    return Compile(request, path, std::move(later));
  }
  if (absl::ConsumePrefix(&path, "/v1/artifacts/")) {
    if (deps_.auth != nullptr) {
      if (absl::Status s = deps_.auth->Check(request.authorization, Access::kRead); !s.ok()) {
        return FromStatus(s);
      }
    }
    return Artifact(path, std::move(later));
  }
  return HitReply::Text(404, absl::StrCat("no such path: ", request.path.substr(0, 200),
                                          " (served: /v1/compile/<program_hash>?target=..., "
                                          "/v1/artifacts/<digest>)"));
}

std::optional<HitReply> HitPath::Compile(const HitRequest& request, absl::string_view hash,
                                         HitResponder later) {
  if (deps_.auth != nullptr) {
    if (absl::Status s = deps_.auth->Check(request.authorization, Access::kCompile); !s.ok()) {
      return FromStatus(s);
    }
  }
  if (!cache::IsHexDigest(std::string_view(hash.data(), hash.size()))) {
    return HitReply::Text(400, "the program hash must be 64 lowercase hex digits");
  }
  tilec::v1::CompileRequest by_hash;
  by_hash.set_program_hash(std::string(hash));
  if (absl::Status s = ParseQuery(request.query, &by_hash); !s.ok()) return FromStatus(s);
  if (deps_.hash_lookups != nullptr) deps_.hash_lookups->fetch_add(1);
  std::string key;
  if (deps_.memo != nullptr) {
    key = ResponseMemo::KeyOf(by_hash.SerializeAsString());
    if (std::optional<std::string> bytes = deps_.memo->Get(key)) {
      if (deps_.hash_hits != nullptr) deps_.hash_hits->fetch_add(1);
      if (options_.from_memory != nullptr) options_.from_memory->fetch_add(1);
      return Bytes(kProtobuf, std::make_shared<const std::string>(*std::move(bytes)));
    }
  }
  return Later(std::move(later), [this, by_hash, key]() -> HitReply {
    absl::StatusOr<tilec::v1::CompileResponse> r = deps_.core->LookupByHash(by_hash);
    if (!r.ok()) return FromStatus(r.status());
    if (deps_.hash_hits != nullptr) deps_.hash_hits->fetch_add(1);
    SignResults(deps_.signer, &*r);
    if (deps_.memo != nullptr) deps_.memo->Put(key, *r);
    return Bytes(kProtobuf, std::make_shared<const std::string>(r->SerializeAsString()));
  });
}

std::optional<HitReply> HitPath::Artifact(absl::string_view digest, HitResponder later) {
  if (!cache::IsHexDigest(std::string_view(digest.data(), digest.size()))) {
    return HitReply::Text(400, "an artifact's digest is 64 lowercase hex digits");
  }
  std::string name(digest);
  if (std::shared_ptr<const std::string> bytes = Remembered(name)) {
    if (options_.from_memory != nullptr) options_.from_memory->fetch_add(1);
    return Bytes("application/octet-stream", std::move(bytes));
  }
  return Later(std::move(later), [this, name] { return ReadAndRemember(name); });
}

HitReply HitPath::ReadAndRemember(const std::string& digest) {
  const std::string stamp = deps_.store->BlobStamp(digest);
  absl::StatusOr<std::string> blob = ReadArtifact(deps_, digest);
  if (!blob.ok()) return FromStatus(blob.status());
  auto bytes = std::make_shared<const std::string>(*std::move(blob));
  // Kept only when the disk's file was there, unchanged, before and after
  // the verified read (not for bytes from the shared tier).
  if (!stamp.empty() && deps_.store->BlobStamp(digest) == stamp) Remember(digest, stamp, bytes);
  return Bytes("application/octet-stream", std::move(bytes));
}

std::shared_ptr<const std::string> HitPath::Remembered(const std::string& digest) {
  std::string stamp;
  std::shared_ptr<const std::string> bytes;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const Blob* blob = blobs_.Find(digest);
    if (blob == nullptr) return nullptr;
    stamp = blob->stamp;
    bytes = blob->bytes;
  }
  if (deps_.store->BlobStamp(digest) == stamp) return bytes;
  std::lock_guard<std::mutex> lock(mu_);  // replaced, modified or evicted on disk
  if (const Blob* blob = blobs_.Find(digest); blob != nullptr && blob->stamp == stamp) {
    blobs_.Erase(digest);
  }
  return nullptr;
}

void HitPath::Remember(const std::string& digest, const std::string& stamp,
                       std::shared_ptr<const std::string> bytes) {
  if (bytes->size() > options_.blob_cache_bytes / 4) return;
  const size_t size = bytes->size();
  std::lock_guard<std::mutex> lock(mu_);
  blobs_.Put(digest, Blob{stamp, std::move(bytes)}, size);
}

std::optional<HitReply> HitPath::Later(HitResponder later, std::function<HitReply()> work) {
  {
    std::lock_guard<std::mutex> lock(pending_mu_);
    ++pending_;
  }
  auto done = [this] {
    std::lock_guard<std::mutex> lock(pending_mu_);
    if (--pending_ == 0) pending_done_.notify_all();
  };
  absl::Status queued = deps_.scheduler->Submit([later, work, done] {
    later(work());
    done();
  });
  if (!queued.ok()) {
    done();
    return FromStatus(queued);
  }
  return std::nullopt;
}

}  // namespace tilec::server
