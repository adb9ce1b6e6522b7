#include "compiler/ir/wire.h"

#include <gtest/gtest.h>

#include <string>

#include "compiler/ir/limits.h"
#include "compiler/ir/proto_convert.h"
#include "compiler/ir/verifier.h"

namespace tilec::ir {
namespace {

// A program storing s[0] + s[1] + ... (`terms` loads) into a local buffer.
Program SumProgram(int terms) {
  Buffer s = MakeBuffer("S", DType::kFloat32, {IntImm(4)}, Scope::kLocal);
  Expr sum = Load(s, {IntImm(0)});
  for (int i = 1; i < terms; ++i) sum = Binary(BinaryOp::kAdd, sum, Load(s, {IntImm(i % 4)}));
  auto k = std::make_shared<KernelNode>();
  k->grid = {IntImm(1)};
  k->block_vars = {MakeVar("bx")};
  k->threads = IntImm(32);
  k->body = Seq({Allocate(s), Store(s, {IntImm(0)}, sum)});
  Program p;
  p.name = "sum";
  p.body = Seq({k});
  return p;
}

TEST(WireTest, DeepValidProgramsParse) {
  // 60 terms nest deeper than protobuf's default limit of 100 messages.
  Program p = SumProgram(60);
  ASSERT_TRUE(Verify(p).ok()) << Verify(p);
  std::string bytes = ToProto(p).SerializeAsString();
  tilec::v1::Program plain;
  EXPECT_FALSE(plain.ParseFromString(bytes))
      << "the default limit took it: the test proves nothing";
  tilec::v1::Program parsed;
  ASSERT_TRUE(ParseWire(bytes, &parsed));
  absl::StatusOr<Program> back = FromProto(parsed);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(Verify(*back).ok());
}

TEST(WireTest, EveryVerifiableProgramParses) {
  // At the nesting limit (the store, its sum, the kernel and blocks).
  Program p = SumProgram(kMaxNesting - 6);
  ASSERT_TRUE(Verify(p).ok()) << Verify(p);
  tilec::v1::Program parsed;
  EXPECT_TRUE(ParseWire(ToProto(p).SerializeAsString(), &parsed));
}

TEST(WireTest, TooDeepFailsToParseAndDoesNotCrash) {
  Program p = SumProgram(3 * kWireRecursionLimit);
  tilec::v1::Program parsed;
  EXPECT_FALSE(ParseWire(ToProto(p).SerializeAsString(), &parsed));
  EXPECT_FALSE(ParseWire(std::string("\xff\xff\xff"), &parsed));
}

}  // namespace
}  // namespace tilec::ir
