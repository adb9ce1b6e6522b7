// A client of tilecd's hit path (server/hit_path.h): cache hits by key over
// one kept-alive HTTP/1.1 connection, blocking, each request under a
// timeout; calls from several threads take turns. `tilec compile --hit HOST:PORT` asks it first;
// cache_bench measures it.
#ifndef TILEC_CLIENT_HIT_CLIENT_H_
#define TILEC_CLIENT_HIT_CLIENT_H_

#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "proto/tilec/v1/service.pb.h"

namespace tilec::cli {

class HitClient {
 public:
  // `address` is HOST:PORT ([V6]:PORT); `token` the bearer token ("" none).
  HitClient(std::string address, std::string token, absl::Duration timeout = absl::Seconds(60));
  ~HitClient();
  HitClient(const HitClient&) = delete;
  HitClient& operator=(const HitClient&) = delete;

  struct Response {
    int status = 0;
    std::string content_type;
    std::string body;
  };
  // GETs `target` (a path and query). UNAVAILABLE when the server cannot be
  // reached or breaks the connection, DEADLINE_EXCEEDED past the timeout,
  // INTERNAL for a reply that is not HTTP/1.1 as the hit path sends it. A
  // kept connection the server has closed meanwhile is opened again once.
  absl::StatusOr<Response> Get(const std::string& target);

 private:
  absl::Status Connect(absl::Time deadline);
  absl::StatusOr<Response> Exchange(const std::string& request, absl::Time deadline,
                                    bool* sent_nothing_back);
  void Close();

  std::mutex mu_;  // one request at a time on the connection
  std::string address_, host_, port_, token_;
  absl::Duration timeout_;
  int fd_ = -1;
};

// The status a hit-path reply other than 200 stands for, its text the
// message (404 NOT_FOUND, 400 INVALID_ARGUMENT, 401 UNAUTHENTICATED, 403
// PERMISSION_DENIED, 503 UNAVAILABLE, others INTERNAL).
absl::Status StatusOfReply(const HitClient::Response& r);

// The Compile response for the program `program_hash` on `targets`, every
// one a cache hit; NOT_FOUND when the server must be sent the program.
absl::StatusOr<tilec::v1::CompileResponse> HitCompile(HitClient& client,
                                                      const std::string& program_hash,
                                                      const std::vector<std::string>& targets,
                                                      bool line_info, int max_registers);

// The artifact named `digest`, its bytes checked against it (DATA_LOSS when
// they are not it).
absl::StatusOr<std::string> HitArtifact(HitClient& client, const std::string& digest);

}  // namespace tilec::cli

#endif  // TILEC_CLIENT_HIT_CLIENT_H_
