#include "client/remote.h"

#include "gtest/gtest.h"

namespace tilec::cli {
namespace {

TEST(RemoteTest, AnEmptyUnimplementedIsNotTheProgramsFault) {
  // gRPC's answer to a request a server could not parse, or to a method it
  // lacks: UNIMPLEMENTED with no message. Exit 70, not 1 ("the program is
  // wrong"); a tilec UNIMPLEMENTED with a message stays 1.
  EXPECT_EQ(ExitCodeForStatus(grpc::Status(grpc::StatusCode::UNIMPLEMENTED, ""), true), 70);
  EXPECT_EQ(ExitCodeForStatus(
                grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "x.py:3:5: T.cumsum on sm_80"), true),
            1);
  EXPECT_EQ(ExitCodeForStatus(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "bad"), true), 1);
}

TEST(RemoteTest, UnavailableIsAServerOnlyWhenThereIsOne) {
  const grpc::Status unavailable(grpc::StatusCode::UNAVAILABLE, "cannot read blobs/x: EIO");
  EXPECT_EQ(ExitCodeForStatus(unavailable, /*remote=*/true), kRemoteUnreachable);
  EXPECT_EQ(ExitCodeForStatus(unavailable, /*remote=*/false), 4);  // a local file
}

}  // namespace
}  // namespace tilec::cli
