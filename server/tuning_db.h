// The tuning database: what autotuning measured, per program and hardware
// profile, on the server's disk (<cache_dir>/tuning/), so a restarted server
// keeps it and a fleet tunes each kernel once.
//
// Key: the program with its tile parameters unbound and its shapes bound (its
// canonical hash, plus the sizes of its dynamic dims when the autotune named
// them), the profile's id, the compiler's version and NVRTC's: a record
// measured by another compiler or toolkit is never used. Value: a
// TuningRecord (the config chosen, every candidate with its statistics and
// how it was measured).
//
// Files are written to a temporary name, synced and renamed, so a crash
// leaves either the old record or the new one; the temporary files of a
// tilecd that was killed are removed by the next Open. A record whose file does not
// parse, or whose key text differs from the key asked for, is absent (and
// reported once to stderr).
#ifndef TILEC_SERVER_TUNING_DB_H_
#define TILEC_SERVER_TUNING_DB_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "proto/tilec/v1/service.pb.h"

namespace tilec::server {

class SharedTier;

class TuningDb {
 public:
  // Creates `dir` when missing; errors name it.
  static absl::StatusOr<std::unique_ptr<TuningDb>> Open(const std::string& dir);

  static std::string KeyText(const std::string& program_hash, const std::string& profile_id,
                             const std::map<std::string, int64_t>& dyn_dims,
                             const std::string& compiler_version, const std::string& nvrtc_version);

  absl::StatusOr<std::optional<tilec::v1::TuningRecord>> Get(const std::string& key_text) const;
  // Stores `record` under its key_text (setting its key).
  absl::Status Put(tilec::v1::TuningRecord record);
  int64_t Count() const;
  // With the fleet's shared tier: a local miss reads the record from it
  // (and keeps it here), and Put stores it there too. Its failures only
  // make the record local.
  void SetShared(SharedTier* shared) { shared_ = shared; }

 private:
  explicit TuningDb(std::string dir) : dir_(std::move(dir)) {}
  std::string PathFor(const std::string& key) const;
  absl::Status PutLocal(const tilec::v1::TuningRecord& record);  // key set
  std::string dir_;
  SharedTier* shared_ = nullptr;
};

}  // namespace tilec::server

#endif  // TILEC_SERVER_TUNING_DB_H_
