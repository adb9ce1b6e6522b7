#include "compiler/device/device_headers.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace tilec::device {
namespace {

namespace fs = std::filesystem;

const fs::path kDeviceDir = fs::path(TILEC_SOURCE_DIR) / "compiler" / "device";

// path relative to the include root -> file text, for every *.h of `folders`.
std::map<std::string, std::string> HeadersOnDisk(std::initializer_list<const char*> folders) {
  std::map<std::string, std::string> out;
  for (const char* folder : folders) {
    const fs::path root = kDeviceDir / folder;
    if (!fs::exists(root)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
      if (!entry.is_regular_file() || entry.path().extension() != ".h") continue;
      std::ifstream in(entry.path(), std::ios::binary);
      std::stringstream text;
      text << in.rdbuf();
      out[fs::relative(entry.path(), root).generic_string()] = text.str();
    }
  }
  return out;
}

std::map<std::string, std::string> Embedded(DeviceTarget target) {
  std::map<std::string, std::string> out;
  for (const DeviceHeader& h : DeviceHeaders(target)) {
    EXPECT_TRUE(out.emplace(std::string(h.path), std::string(h.text)).second)
        << "duplicate path " << h.path;
  }
  return out;
}

TEST(DeviceHeadersTest, CudaEmbedsCudaAndCommonFoldersByteForByte) {
  const auto disk = HeadersOnDisk({"cuda", "common"});
  const auto embedded = Embedded(DeviceTarget::kCuda);
  ASSERT_FALSE(disk.empty());
  EXPECT_EQ(embedded.size(), disk.size());
  for (const auto& [path, text] : disk) {
    auto it = embedded.find(path);
    ASSERT_NE(it, embedded.end()) << path << " is not embedded";
    EXPECT_EQ(it->second, text) << path << " differs from the file";
  }
}

TEST(DeviceHeadersTest, HostEmbedsHostAndCommonFoldersByteForByte) {
  const auto disk = HeadersOnDisk({"host", "common"});
  const auto embedded = Embedded(DeviceTarget::kHost);
  EXPECT_EQ(embedded.size(), disk.size());
  for (const auto& [path, text] : disk) {
    auto it = embedded.find(path);
    ASSERT_NE(it, embedded.end()) << path << " is not embedded";
    EXPECT_EQ(it->second, text) << path << " differs from the file";
  }
}

TEST(DeviceHeadersTest, HipEmbedsHipAndCommonFoldersByteForByte) {
  const auto disk = HeadersOnDisk({"hip", "common"});
  const auto embedded = Embedded(DeviceTarget::kHip);
  EXPECT_EQ(embedded.size(), disk.size());
  EXPECT_TRUE(embedded.count("tl/tl.h"));
  for (const auto& [path, text] : disk) {
    auto it = embedded.find(path);
    ASSERT_NE(it, embedded.end()) << path << " is not embedded";
    EXPECT_EQ(it->second, text) << path << " differs from the file";
  }
}

TEST(DeviceHeadersTest, PathsAreSortedAndRelativeToTheIncludeRoot) {
  for (DeviceTarget t : {DeviceTarget::kCuda, DeviceTarget::kHost, DeviceTarget::kHip}) {
    const auto headers = DeviceHeaders(t);
    for (size_t i = 0; i < headers.size(); ++i) {
      EXPECT_TRUE(headers[i].path.starts_with("tl/")) << headers[i].path;
      if (i > 0) {
        EXPECT_LT(headers[i - 1].path, headers[i].path);
      }
    }
  }
}

TEST(DeviceHeadersTest, CudaHasTheEntryHeaderAndTheCommonTemplates) {
  const auto embedded = Embedded(DeviceTarget::kCuda);
  for (const char* path : {"tl/tl.h", "tl/types.h", "tl/gemm.h", "tl/layout.h", "tl/reduce.h"}) {
    EXPECT_TRUE(embedded.contains(path)) << path;
  }
  // The entry header pulls in the common templates.
  EXPECT_NE(embedded.at("tl/tl.h").find("#include \"tl/gemm.h\""), std::string::npos);
  // Common headers are shared, not copied per target.
  const auto host = Embedded(DeviceTarget::kHost);
  EXPECT_EQ(host.at("tl/gemm.h"), embedded.at("tl/gemm.h"));
}

}  // namespace
}  // namespace tilec::device
