#include "server/auth.h"

#include <cstdio>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace tilec::server {
namespace {

TEST(TokenAuthTest, ChecksTokensAndRoles) {
  auto auth = TokenAuth::FromText("# ci\nsecret-1\nreader-2 read\n\nsecret-3 compile\n", "t");
  ASSERT_TRUE(auth.ok()) << auth.status();
  EXPECT_EQ((*auth)->size(), 3u);
  EXPECT_TRUE((*auth)->Check("Bearer secret-1", Access::kCompile).ok());
  EXPECT_TRUE((*auth)->Check("Bearer secret-3", Access::kCompile).ok());
  EXPECT_TRUE((*auth)->Check("Bearer reader-2", Access::kRead).ok());
  EXPECT_TRUE(absl::IsPermissionDenied((*auth)->Check("Bearer reader-2", Access::kCompile)));
  EXPECT_TRUE(absl::IsUnauthenticated((*auth)->Check("", Access::kRead)));
  EXPECT_TRUE(absl::IsUnauthenticated((*auth)->Check("Bearer ", Access::kRead)));
  EXPECT_TRUE(absl::IsUnauthenticated((*auth)->Check("Bearer secret-", Access::kRead)));
  EXPECT_TRUE(absl::IsUnauthenticated((*auth)->Check("secret-1", Access::kRead)));
  EXPECT_TRUE(absl::IsUnauthenticated((*auth)->Check("Bearer secret-1x", Access::kRead)));
}

TEST(TokenAuthTest, TheBearerSchemeIsCaseInsensitive) {
  // RFC 6750 2.1 with RFC 7235 2.1: the auth scheme is case-insensitive.
  auto auth = TokenAuth::FromText("secret-1\n", "t");
  ASSERT_TRUE(auth.ok()) << auth.status();
  for (const char* header : {"Bearer secret-1", "bearer secret-1", "BEARER secret-1",
                             "bEaReR secret-1", "Bearer  secret-1"}) {
    EXPECT_TRUE((*auth)->Check(header, Access::kCompile).ok()) << header;
  }
  EXPECT_TRUE(absl::IsUnauthenticated((*auth)->Check("Basic secret-1", Access::kRead)));
  EXPECT_TRUE(absl::IsUnauthenticated((*auth)->Check("Bearersecret-1", Access::kRead)));
  EXPECT_TRUE(absl::IsUnauthenticated((*auth)->Check("bearer  ", Access::kRead)));
}

TEST(TokenAuthTest, MalformedFilesNameTheLine) {
  auto bad = TokenAuth::FromText("ok\ntok admin\n", "tokens.txt");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(bad.status()));
  EXPECT_NE(bad.status().message().find("tokens.txt:2:"), absl::string_view::npos) << bad.status();
  EXPECT_FALSE(TokenAuth::FromText("# nothing\n", "t").ok());
  EXPECT_TRUE(absl::IsNotFound(TokenAuth::FromFile("/nonexistent/tokens").status()));
}

TEST(TokenAuthTest, ReloadReplacesTheTokensAndKeepsThemOnABadFile) {
  const std::string path = ::testing::TempDir() + "/tokens_reload";
  struct Remove {
    std::string path;
    ~Remove() { std::remove(path.c_str()); }
  } remove{path};
  std::ofstream(path) << "old-token\n";
  auto auth = TokenAuth::FromFile(path);
  ASSERT_TRUE(auth.ok()) << auth.status();
  EXPECT_TRUE((*auth)->Check("Bearer old-token", Access::kCompile).ok());
  std::ofstream(path) << "new-token read\n";
  ASSERT_TRUE((*auth)->Reload().ok());
  EXPECT_TRUE(absl::IsUnauthenticated((*auth)->Check("Bearer old-token", Access::kRead)));
  EXPECT_TRUE((*auth)->Check("Bearer new-token", Access::kRead).ok());
  EXPECT_TRUE(absl::IsPermissionDenied((*auth)->Check("Bearer new-token", Access::kCompile)));
  // A file that does not parse: its error, and the tokens in force stay.
  std::ofstream(path) << "fine\nbroken admin\n";
  absl::Status bad = (*auth)->Reload();
  EXPECT_TRUE(absl::IsInvalidArgument(bad)) << bad;
  EXPECT_NE(bad.message().find(":2:"), absl::string_view::npos) << bad;
  EXPECT_TRUE((*auth)->Check("Bearer new-token", Access::kRead).ok());
  EXPECT_TRUE(absl::IsUnauthenticated((*auth)->Check("Bearer fine", Access::kRead)));
  EXPECT_EQ((*auth)->size(), 1u);
  auto from_text = TokenAuth::FromText("t\n", "t");
  ASSERT_TRUE(from_text.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition((*from_text)->Reload()));
}

}  // namespace
}  // namespace tilec::server
