#include "server/service.h"

#include <string>

#include "gtest/gtest.h"

namespace tilec::server {
namespace {

TEST(ServiceTest, ShortMessagesPassUnchanged) {
  grpc::Status s = ToGrpc(absl::InvalidArgumentError("x.py:3:5: error: bad"));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "x.py:3:5: error: bad");
  EXPECT_TRUE(ToGrpc(absl::OkStatus()).ok());
}

TEST(ServiceTest, LongMessagesAreClippedToHeadAndTail) {
  // A message echoing 1 MB of request data would not fit in a trailer and
  // the client would lose the reply; it is cut, keeping both ends.
  std::string big = "HEAD" + std::string(1 << 20, 'x') + "TAIL";
  grpc::Status s = ToGrpc(absl::NotFoundError(big));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_LE(s.error_message().size(), kMaxStatusMessageBytes);
  EXPECT_EQ(s.error_message().substr(0, 4), "HEAD");
  EXPECT_EQ(s.error_message().substr(s.error_message().size() - 4), "TAIL");
  EXPECT_NE(s.error_message().find("bytes omitted"), std::string::npos);
}

}  // namespace
}  // namespace tilec::server
