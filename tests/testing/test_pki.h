// A throwaway PKI for TLS tests, made with the openssl command (Debian's
// `openssl` package, installed by deploy/install-deps.sh): a root, a server
// certificate for 127.0.0.1 and `tilec.test` signed by it, a client
// certificate signed by it, and a second, unrelated root.
#ifndef TILEC_TESTS_TESTING_TEST_PKI_H_
#define TILEC_TESTS_TESTING_TEST_PKI_H_

#include <string>

namespace tilec::testing {

struct TestPki {
  std::string dir;
  std::string ca() const { return dir + "/ca.pem"; }
  std::string other_ca() const { return dir + "/other_ca.pem"; }
  std::string server_cert() const { return dir + "/server.pem"; }
  std::string server_key() const { return dir + "/server.key"; }
  std::string client_cert() const { return dir + "/client.pem"; }
  std::string client_key() const { return dir + "/client.key"; }
};

// Writes the files into a new temporary directory; `error` says which
// openssl command failed (its output included) when it returns false.
bool MakeTestPki(TestPki* pki, std::string* error);

}  // namespace tilec::testing

#endif  // TILEC_TESTS_TESTING_TEST_PKI_H_
