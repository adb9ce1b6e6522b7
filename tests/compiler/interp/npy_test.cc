#include "compiler/interp/npy.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace tilec::interp {
namespace {

using ir::DType;

// .npy bytes as NumPy writes them, with a hand-written header.
std::string NpyBytes(std::string header, std::string_view data, int major = 1) {
  const size_t prefix = major == 1 ? 10 : 12;
  header.append((64 - (prefix + header.size() + 1) % 64) % 64, ' ');
  header.push_back('\n');
  std::string out("\x93NUMPY", 6);
  out.push_back(static_cast<char>(major));
  out.push_back(0);
  for (size_t k = 0; k < prefix - 8; ++k)
    out.push_back(static_cast<char>(header.size() >> (8 * k)));
  return out + header + std::string(data);
}

std::string Int32s(std::initializer_list<int32_t> values) {
  std::string s;
  for (int32_t v : values) {
    for (int k = 0; k < 4; ++k) s.push_back(static_cast<char>(static_cast<uint32_t>(v) >> (8 * k)));
  }
  return s;
}

TEST(NpyTest, WritesNumPyFormat10) {
  Tensor t(DType::kFloat32, {2, 3});
  for (int i = 0; i < 6; ++i) t.SetDouble(i, i * 0.5);
  std::string data = EncodeNpy(t);
  EXPECT_EQ(data.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  const size_t header_len = static_cast<uint8_t>(data[8]) | (static_cast<uint8_t>(data[9]) << 8);
  EXPECT_EQ((10 + header_len) % 64, 0u);
  EXPECT_EQ(data[10 + header_len - 1], '\n');
  const std::string header = data.substr(10, header_len);
  EXPECT_NE(header.find("'descr': '<f4'"), std::string::npos) << header;
  EXPECT_NE(header.find("'fortran_order': False"), std::string::npos) << header;
  EXPECT_NE(header.find("'shape': (2, 3)"), std::string::npos) << header;
  EXPECT_EQ(data.size(), 10 + header_len + 24);
}

TEST(NpyTest, ShapesOfRankZeroAndOne) {
  EXPECT_NE(EncodeNpy(Tensor(DType::kInt32, {5})).find("'shape': (5,)"), std::string::npos);
  EXPECT_NE(EncodeNpy(Tensor::Scalar(DType::kFloat64, 2.5)).find("'shape': ()"), std::string::npos);
  auto s = DecodeNpy(EncodeNpy(Tensor::Scalar(DType::kFloat64, 2.5)));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->rank(), 0);
  EXPECT_EQ(s->GetDouble(0), 2.5);
}

TEST(NpyTest, EveryDTypeRoundTrips) {
  const uint64_t seed = 5;
  for (DType t : ir::kAllDTypes) {
    for (std::vector<int64_t> shape : {std::vector<int64_t>{4, 6}, std::vector<int64_t>{3, 3}}) {
      Tensor x = RandomTensor(t, shape, seed);
      auto y = DecodeNpyAs(EncodeNpy(x), t, shape);
      ASSERT_TRUE(y.ok()) << ir::DTypeName(t) << ": " << y.status();
      EXPECT_EQ(*y, x) << ir::DTypeName(t) << ShapeString(shape) << " seed " << seed;
    }
  }
}

TEST(NpyTest, NarrowFloatsAreWrittenAsFloat32Values) {
  Tensor x = RandomTensor(DType::kBFloat16, {8}, 3);
  std::string data = EncodeNpy(x);
  EXPECT_NE(data.find("'<f4'"), std::string::npos);
  auto y = DecodeNpy(data);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->dtype(), DType::kFloat32);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(y->GetDouble(i), x.GetDouble(i));
}

TEST(NpyTest, Int4IsPackedBytes) {
  Tensor x(DType::kInt4, {2, 4});
  for (int i = 0; i < 8; ++i) x.SetInt(i, i - 4);
  std::string data = EncodeNpy(x);
  EXPECT_NE(data.find("'|u1'"), std::string::npos);
  EXPECT_NE(data.find("'shape': (2, 2)"), std::string::npos);  // last dim halved
  auto odd = EncodeNpy(Tensor(DType::kInt4, {3, 3}));
  EXPECT_NE(odd.find("'shape': (5,)"), std::string::npos);
  auto bytes = DecodeNpy(data);
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(bytes->dtype(), DType::kUInt8);
  EXPECT_EQ(bytes->GetInt(0), 0xDC);  // elements -4 (0xC) and -3 (0xD)
}

TEST(NpyTest, BFloat16FromRawBits) {
  std::string data = NpyBytes("{'descr': '<u2', 'fortran_order': False, 'shape': (2,), }",
                              std::string("\x80\x3F\x00\xC0", 4));
  auto t = DecodeNpyAs(data, DType::kBFloat16, {2});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->GetDouble(0), 1.0);
  EXPECT_EQ(t->GetDouble(1), -2.0);
}

TEST(NpyTest, ShapeOfAnyReadableFile) {
  // Raw bfloat16 bits ('<u2') have no dtype of their own, but their shape is
  // readable (tilec run binds dynamic dims from it before converting).
  std::string u2 = NpyBytes("{'descr': '<u2', 'fortran_order': False, 'shape': (2, 3), }",
                            std::string(12, '\x01'));
  auto shape = DecodeNpyShape(u2);
  ASSERT_TRUE(shape.ok()) << shape.status();
  EXPECT_EQ(*shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(DecodeNpyShape("not a numpy file").status().code(),
            absl::StatusCode::kInvalidArgument);
  std::string short_data =
      NpyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", std::string(8, '\0'));
  EXPECT_NE(DecodeNpyShape(short_data).status().message().find("expected 16 data bytes"),
            std::string::npos);
}

TEST(NpyTest, ReadsFortranOrderAndVersion2) {
  // Logical [[1, 2, 3], [4, 5, 6]] stored column by column.
  std::string data = NpyBytes("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }",
                              Int32s({1, 4, 2, 5, 3, 6}), 2);
  auto t = DecodeNpy(data);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->shape(), (std::vector<int64_t>{2, 3}));
  for (int i = 0; i < 6; ++i) EXPECT_EQ(t->GetInt(i), i + 1);
}

TEST(NpyTest, ConvertsOnRequest) {
  std::string data =
      NpyBytes("{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }", Int32s({1, -2, 70000}));
  auto t = DecodeNpyAs(data, DType::kFloat16, {3});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->GetDouble(0), 1.0);
  EXPECT_EQ(t->GetDouble(1), -2.0);
  EXPECT_TRUE(std::isinf(t->GetDouble(2)));
  auto wrong = DecodeNpyAs(data, DType::kFloat16, {4});
  EXPECT_EQ(wrong.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(wrong.status().message().find("expected shape [4]"), std::string::npos);
}

TEST(NpyTest, RejectsBadFiles) {
  EXPECT_NE(DecodeNpy("not a numpy file").status().message().find("magic"), std::string::npos);
  std::string big =
      NpyBytes("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", std::string(4, '\0'));
  EXPECT_NE(DecodeNpy(big).status().message().find("big-endian"), std::string::npos);
  std::string complex =
      NpyBytes("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", std::string(8, '\0'));
  EXPECT_NE(DecodeNpy(complex).status().message().find("'<c8'"), std::string::npos);
  std::string short_data =
      NpyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", std::string(8, '\0'));
  EXPECT_NE(DecodeNpy(short_data).status().message().find("expected 16 data bytes"),
            std::string::npos);
}

TEST(NpyTest, UnsignedDescriptorsReadAsTheirTypes) {
  std::string u2 =
      NpyBytes("{'descr': '<u2', 'fortran_order': False, 'shape': (1,), }", std::string(2, '\xff'));
  auto a = DecodeNpy(u2);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->dtype(), DType::kUInt16);
  EXPECT_EQ(a->GetInt(0), 65535);
  std::string u8 = NpyBytes("{'descr': '<u8', 'fortran_order': False, 'shape': (1,), }",
                            std::string(7, '\0') + "\x80");
  auto b = DecodeNpy(u8);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->dtype(), DType::kUInt64);
  EXPECT_EQ(static_cast<uint64_t>(b->GetInt(0)), uint64_t{1} << 63);
  // Into a float type, the value read as unsigned.
  auto c = DecodeNpyAs(u8, DType::kFloat64, {1});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->GetDouble(0), 9223372036854775808.0);
  Tensor u4(DType::kUInt32, {2});
  u4.SetInt(0, 4294967295);
  u4.SetInt(1, 7);
  EXPECT_NE(EncodeNpy(u4).find("'<u4'"), std::string::npos);
  auto d = DecodeNpy(EncodeNpy(u4));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(*d, u4);
}

TEST(NpyTest, FileRoundTrip) {
  const std::string path = ::testing::TempDir() + "/interp_npy_test.npy";
  Tensor x = RandomTensor(DType::kFloat16, {5, 7}, 11);
  ASSERT_TRUE(WriteNpy(path, x).ok());
  auto y = ReadNpy(path);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(*y, x);
  auto z = ReadNpyAs(path, DType::kFloat32, {5, 7});
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_EQ(z->GetDouble(12), x.GetDouble(12));
  std::remove(path.c_str());
  EXPECT_EQ(ReadNpy(path).status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace tilec::interp
