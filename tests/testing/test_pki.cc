#include "tests/testing/test_pki.h"

#include <fstream>
#include <vector>

#include "tests/testing/command.h"
#include "tests/testing/temp_dir.h"

namespace tilec::testing {

bool MakeTestPki(TestPki* pki, std::string* error) {
  pki->dir = MakeTempDir("pki");
  if (pki->dir.empty()) {
    *error = "cannot make a temporary directory";
    return false;
  }
  const std::string d = pki->dir;
  std::ofstream(d + "/server.ext") << "subjectAltName=IP:127.0.0.1,DNS:tilec.test\n";
  std::ofstream(d + "/client.ext") << "extendedKeyUsage=clientAuth\n";
  const std::string key = " -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes";
  const std::string sign = " -CA " + d + "/ca.pem -CAkey " + d + "/ca.key -CAcreateserial -days 1";
  const std::vector<std::string> steps = {
      "openssl req -x509" + key + " -days 1 -subj /CN=tilec-test-root -keyout " + d +
          "/ca.key -out " + d + "/ca.pem",
      "openssl req -x509" + key + " -days 1 -subj /CN=unrelated-root -keyout " + d +
          "/other_ca.key -out " + d + "/other_ca.pem",
      "openssl req" + key + " -subj /CN=tilec.test -keyout " + d + "/server.key -out " + d +
          "/server.csr",
      "openssl x509 -req -in " + d + "/server.csr" + sign + " -extfile " + d + "/server.ext -out " +
          d + "/server.pem",
      "openssl req" + key + " -subj /CN=tilecd -keyout " + d + "/client.key -out " + d +
          "/client.csr",
      "openssl x509 -req -in " + d + "/client.csr" + sign + " -extfile " + d + "/client.ext -out " +
          d + "/client.pem",
  };
  for (const std::string& s : steps) {
    CommandResult r = RunShellCommand(s);
    if (r.code != 0) {
      *error = s + ": " + r.out;
      return false;
    }
  }
  return true;
}

}  // namespace tilec::testing
