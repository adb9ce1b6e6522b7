#include "server/auth.h"

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

TEST(TokenAuthTest, MalformedFilesNameTheLine) {
  auto bad = TokenAuth::FromText("ok\ntok admin\n", "tokens.txt");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(bad.status()));
  EXPECT_NE(bad.status().message().find("tokens.txt:2:"), absl::string_view::npos)
      << bad.status();
  EXPECT_FALSE(TokenAuth::FromText("# nothing\n", "t").ok());
  EXPECT_TRUE(absl::IsNotFound(TokenAuth::FromFile("/nonexistent/tokens").status()));
}

}  // namespace
}  // namespace tilec::server
