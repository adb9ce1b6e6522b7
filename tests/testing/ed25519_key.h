// A fresh Ed25519 key pair written as PEM files, for tests of signing.
#ifndef TILEC_TESTS_TESTING_ED25519_KEY_H_
#define TILEC_TESTS_TESTING_ED25519_KEY_H_

#include <openssl/evp.h>
#include <openssl/pem.h>

#include <cstdio>
#include <string>

namespace tilec::testing {

// Writes `<base>.pem` (private) and `<base>.pub.pem` (public); false on
// failure.
inline bool WriteEd25519Key(const std::string& base) {
  EVP_PKEY* key = nullptr;
  EVP_PKEY_CTX* ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, nullptr);
  bool ok = ctx != nullptr && EVP_PKEY_keygen_init(ctx) == 1 && EVP_PKEY_keygen(ctx, &key) == 1;
  EVP_PKEY_CTX_free(ctx);
  if (!ok) return false;
  FILE* priv = std::fopen((base + ".pem").c_str(), "w");
  FILE* pub = std::fopen((base + ".pub.pem").c_str(), "w");
  ok = priv != nullptr && pub != nullptr &&
       PEM_write_PrivateKey(priv, key, nullptr, nullptr, 0, nullptr, nullptr) == 1 &&
       PEM_write_PUBKEY(pub, key) == 1;
  if (priv) std::fclose(priv);
  if (pub) std::fclose(pub);
  EVP_PKEY_free(key);
  return ok;
}

}  // namespace tilec::testing

#endif  // TILEC_TESTS_TESTING_ED25519_KEY_H_
