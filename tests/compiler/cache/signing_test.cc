// Artifact signatures: what a key signs verifies with its public key only,
// binds the cache key, the digest and the metadata, and rotation accepts
// either key.
#include "compiler/cache/signing.h"

#include <fstream>

#include "gtest/gtest.h"
#include "tests/testing/ed25519_key.h"
#include "tests/testing/temp_dir.h"

namespace tilec::cache {
namespace {

class Signing : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = tilec::testing::MakeTempDir("signing");
    ASSERT_TRUE(tilec::testing::WriteEd25519Key(dir_ + "/a"));
    ASSERT_TRUE(tilec::testing::WriteEd25519Key(dir_ + "/b"));
  }
  std::string dir_;
};

TEST_F(Signing, ASignatureVerifiesWithItsKeyAndBindsWhatItSigns) {
  auto signer = Signer::FromFile(dir_ + "/a.pem");
  ASSERT_TRUE(signer.ok()) << signer.status();
  const std::string statement = ArtifactStatement("key1", "digest1", "{\"kernels\":[]}");
  const std::string sig = (*signer)->Sign(statement);
  ASSERT_EQ(sig.size(), 128u);
  auto pub = Verifier::FromFiles({dir_ + "/a.pub.pem"});
  ASSERT_TRUE(pub.ok()) << pub.status();
  EXPECT_TRUE((*pub)->Verify(statement, sig));
  // Another key, cache key, digest or metadata: refused.
  EXPECT_FALSE((*pub)->Verify(ArtifactStatement("key2", "digest1", "{\"kernels\":[]}"), sig));
  EXPECT_FALSE((*pub)->Verify(ArtifactStatement("key1", "digest2", "{\"kernels\":[]}"), sig));
  EXPECT_FALSE((*pub)->Verify(ArtifactStatement("key1", "digest1", "{\"kernels\":[1]}"), sig));
  auto other = Verifier::FromFiles({dir_ + "/b.pub.pem"});
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE((*other)->Verify(statement, sig));
  // Malformed signatures.
  std::string flipped = sig;
  flipped[10] = flipped[10] == '0' ? '1' : '0';
  EXPECT_FALSE((*pub)->Verify(statement, flipped));
  EXPECT_FALSE((*pub)->Verify(statement, "-"));
  EXPECT_FALSE((*pub)->Verify(statement, std::string(128, 'z')));
  // The private key file verifies too, and the public key it derives is the
  // one written.
  auto from_private = Verifier::FromFiles({dir_ + "/a.pem"});
  ASSERT_TRUE(from_private.ok());
  EXPECT_TRUE((*from_private)->Verify(statement, sig));
  auto derived = Verifier::FromPem((*signer)->PublicKeyPem());
  ASSERT_TRUE(derived.ok());
  EXPECT_TRUE((*derived)->Verify(statement, sig));
}

TEST_F(Signing, RotationAcceptsEitherKey) {
  auto a = Signer::FromFile(dir_ + "/a.pem");
  auto b = Signer::FromFile(dir_ + "/b.pem");
  ASSERT_TRUE(a.ok() && b.ok());
  auto both = Verifier::FromFiles({dir_ + "/a.pub.pem", dir_ + "/b.pub.pem"});
  ASSERT_TRUE(both.ok());
  const std::string m = ArtifactStatement("k", "d", "{}");
  EXPECT_TRUE((*both)->Verify(m, (*a)->Sign(m)));
  EXPECT_TRUE((*both)->Verify(m, (*b)->Sign(m)));
}

TEST_F(Signing, BadKeyFilesAreRefusedNamingTheFile) {
  std::ofstream(dir_ + "/junk.pem") << "not a key\n";
  auto s = Signer::FromFile(dir_ + "/junk.pem");
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("junk.pem"), std::string_view::npos);
  auto pub_as_private = Signer::FromFile(dir_ + "/a.pub.pem");
  EXPECT_FALSE(pub_as_private.ok());
  EXPECT_FALSE(Verifier::FromFiles({dir_ + "/missing.pem"}).ok());
  EXPECT_FALSE(Verifier::FromFiles({}).ok());
}

}  // namespace
}  // namespace tilec::cache
