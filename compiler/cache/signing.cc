#include "compiler/cache/signing.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "compiler/cache/digest.h"

namespace tilec::cache {
namespace {

struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using Pkey = std::unique_ptr<EVP_PKEY, PkeyFree>;

absl::StatusOr<std::string> ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(absl::StrCat("cannot read the key file '", path, "'"));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// An Ed25519 key from PEM text: private when `want_private` and the text
// holds one, else public (from a public or a private key).
Pkey ParseKey(const std::string& pem, bool want_private) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  if (bio == nullptr) return nullptr;
  EVP_PKEY* k = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
  if (k == nullptr && !want_private) {
    (void)BIO_reset(bio);
    k = PEM_read_bio_PUBKEY(bio, nullptr, nullptr, nullptr);
  }
  BIO_free(bio);
  Pkey key(k);
  if (key && EVP_PKEY_id(key.get()) != EVP_PKEY_ED25519) return nullptr;
  return key;
}

}  // namespace

std::string ArtifactStatement(std::string_view cache_key, std::string_view digest,
                              std::string_view metadata_json) {
  std::string out = "tilec-artifact-v1\n";
  out.append(cache_key).append("\n").append(digest).append("\n");
  return out + Sha256Hex(metadata_json);
}

std::string SignatureFile(std::string_view cache_key, std::string_view signature) {
  std::string out = "tilec-signature-v1\n";
  out.append(cache_key).append("\n").append(signature).append("\n");
  return out;
}

absl::StatusOr<ParsedSignature> ParseSignatureFile(std::string_view text) {
  constexpr std::string_view kHead = "tilec-signature-v1\n";
  if (text.substr(0, kHead.size()) != kHead) {
    return absl::InvalidArgumentError("not a tilec signature file (tilec-signature-v1)");
  }
  text.remove_prefix(kHead.size());
  const size_t a = text.find('\n');
  const size_t b = a == std::string_view::npos ? a : text.find('\n', a + 1);
  if (b == std::string_view::npos) {
    return absl::InvalidArgumentError("a signature file holds a cache key and a signature");
  }
  ParsedSignature p;
  p.cache_key = std::string(text.substr(0, a));
  p.signature = std::string(text.substr(a + 1, b - a - 1));
  return p;
}

struct Signer::Key {
  Pkey pkey;
};

Signer::~Signer() = default;

absl::StatusOr<std::unique_ptr<Signer>> Signer::FromFile(const std::string& path) {
  absl::StatusOr<std::string> pem = ReadText(path);
  if (!pem.ok()) return pem.status();
  Pkey k = ParseKey(*pem, /*want_private=*/true);
  if (!k) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", path,
                     "' holds no Ed25519 private key (make one with `openssl genpkey -algorithm "
                     "ed25519 -out ",
                     path, "`)"));
  }
  std::unique_ptr<Signer> s(new Signer);
  s->key_ = std::make_unique<Key>();
  s->key_->pkey = std::move(k);
  return s;
}

std::string Signer::Sign(std::string_view message) const {
  unsigned char sig[64];
  size_t len = sizeof sig;
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  bool ok = ctx != nullptr &&
            EVP_DigestSignInit(ctx, nullptr, nullptr, nullptr, key_->pkey.get()) == 1 &&
            EVP_DigestSign(ctx, sig, &len, reinterpret_cast<const unsigned char*>(message.data()),
                           message.size()) == 1;
  EVP_MD_CTX_free(ctx);
  if (!ok) return "";
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < len; ++i) {
    out.push_back(kHex[sig[i] >> 4]);
    out.push_back(kHex[sig[i] & 15]);
  }
  return out;
}

std::string Signer::PublicKeyPem() const {
  BIO* bio = BIO_new(BIO_s_mem());
  std::string out;
  if (bio != nullptr && PEM_write_bio_PUBKEY(bio, key_->pkey.get()) == 1) {
    char* data = nullptr;
    long n = BIO_get_mem_data(bio, &data);
    out.assign(data, static_cast<size_t>(n));
  }
  BIO_free(bio);
  return out;
}

struct Verifier::Keys {
  std::vector<Pkey> keys;
};

Verifier::~Verifier() = default;

absl::StatusOr<std::unique_ptr<Verifier>> Verifier::FromPem(const std::string& pem) {
  Pkey k = ParseKey(pem, /*want_private=*/false);
  if (!k) return absl::InvalidArgumentError("no Ed25519 public or private key in the PEM text");
  std::unique_ptr<Verifier> v(new Verifier);
  v->keys_ = std::make_unique<Keys>();
  v->keys_->keys.push_back(std::move(k));
  return v;
}

absl::StatusOr<std::unique_ptr<Verifier>> Verifier::FromFiles(
    const std::vector<std::string>& paths) {
  if (paths.empty()) return absl::InvalidArgumentError("no verification key file given");
  std::unique_ptr<Verifier> v(new Verifier);
  v->keys_ = std::make_unique<Keys>();
  for (const std::string& path : paths) {
    absl::StatusOr<std::string> pem = ReadText(path);
    if (!pem.ok()) return pem.status();
    Pkey k = ParseKey(*pem, /*want_private=*/false);
    if (!k) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", path, "' holds no Ed25519 public or private key"));
    }
    v->keys_->keys.push_back(std::move(k));
  }
  return v;
}

bool Verifier::Verify(std::string_view message, std::string_view signature_hex) const {
  if (signature_hex.size() != 128) return false;
  std::string sig;
  for (size_t i = 0; i < signature_hex.size(); i += 2) {
    int byte = 0;
    for (char c : signature_hex.substr(i, 2)) {
      const int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
      if (v < 0) return false;
      byte = byte * 16 + v;
    }
    sig.push_back(static_cast<char>(byte));
  }
  for (const Pkey& k : keys_->keys) {
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    const bool ok =
        ctx != nullptr && EVP_DigestVerifyInit(ctx, nullptr, nullptr, nullptr, k.get()) == 1 &&
        EVP_DigestVerify(ctx, reinterpret_cast<const unsigned char*>(sig.data()), sig.size(),
                         reinterpret_cast<const unsigned char*>(message.data()),
                         message.size()) == 1;
    EVP_MD_CTX_free(ctx);
    if (ok) return true;
  }
  return false;
}

}  // namespace tilec::cache
