// Signed artifacts: Ed25519 (OpenSSL) signatures over what an artifact is,
// so that an entry written into a shared tier by anyone but a tilecd holding
// the fleet's key is refused.
//
// What is signed: the statement
//   "tilec-artifact-v1\n<cache key>\n<artifact digest>\n<sha256 of the metadata JSON>"
// so a signature binds the bytes (through their digest), the launch metadata
// and the cache key they answer; it cannot be replayed for another key.
//
// Keys are PEM files: a private key (`openssl genpkey -algorithm ed25519`)
// signs; its public key (`openssl pkey -pubout`) verifies, and a private key
// file verifies too. A Verifier holds one or more public keys and accepts a
// signature made by any of them, which is how keys rotate: servers verify
// with the old and the new key while they switch to signing with the new
// one, then drop the old (docs/fleet.md).
#ifndef TILEC_COMPILER_CACHE_SIGNING_H_
#define TILEC_COMPILER_CACHE_SIGNING_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace tilec::cache {

// The statement signed for an artifact (see above).
std::string ArtifactStatement(std::string_view cache_key, std::string_view digest,
                              std::string_view metadata_json);

// The signature file written beside an artifact (`tilec compile --out`
// writes <fn>.<target>.sig): "tilec-signature-v1\n<cache key>\n<signature>\n".
std::string SignatureFile(std::string_view cache_key, std::string_view signature);
struct ParsedSignature {
  std::string cache_key, signature;
};
absl::StatusOr<ParsedSignature> ParseSignatureFile(std::string_view text);

class Signer {
 public:
  // Reads an Ed25519 private key (PEM); errors name the file.
  static absl::StatusOr<std::unique_ptr<Signer>> FromFile(const std::string& path);
  ~Signer();
  // The signature of `message`, as 128 lowercase hex digits.
  std::string Sign(std::string_view message) const;
  // The public key, PEM.
  std::string PublicKeyPem() const;

 private:
  Signer() = default;
  struct Key;
  std::unique_ptr<Key> key_;
};

class Verifier {
 public:
  // Reads the keys of `paths` (each a PEM public or private Ed25519 key).
  static absl::StatusOr<std::unique_ptr<Verifier>> FromFiles(const std::vector<std::string>& paths);
  static absl::StatusOr<std::unique_ptr<Verifier>> FromPem(const std::string& pem);
  ~Verifier();
  // Whether `signature_hex` is a signature of `message` by one of the keys.
  bool Verify(std::string_view message, std::string_view signature_hex) const;

 private:
  Verifier() = default;
  struct Keys;
  std::unique_ptr<Keys> keys_;
};

}  // namespace tilec::cache

#endif  // TILEC_COMPILER_CACHE_SIGNING_H_
