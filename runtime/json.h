// A small JSON reader for artifact metadata: the runtime reads what the
// compiler writes without linking the compiler or a JSON library.
//
//   absl::StatusOr<json::Value> v = json::Parse(text);
//   v->Find("kernels")->array()[0].Find("name")->string()
//
// Numbers keep their text's integer value when they are integers (int64),
// else a double. Nesting deeper than kMaxDepth, trailing text, bad escapes
// and invalid UTF-16 surrogates are INVALID_ARGUMENT naming the byte offset.
#ifndef TILEC_RUNTIME_JSON_H_
#define TILEC_RUNTIME_JSON_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace tilec::runtime::json {

inline constexpr int kMaxDepth = 64;

class Value {
 public:
  enum class Kind { kNull, kBool, kInt, kDouble, kString, kArray, kObject };

  Kind kind() const { return kind_; }
  bool is_int() const { return kind_ == Kind::kInt; }
  bool is_string() const { return kind_ == Kind::kString; }
  bool is_array() const { return kind_ == Kind::kArray; }
  bool is_object() const { return kind_ == Kind::kObject; }

  int64_t int_value() const { return int_; }
  double number() const { return kind_ == Kind::kInt ? static_cast<double>(int_) : double_; }
  bool bool_value() const { return bool_; }
  const std::string& string() const { return string_; }
  const std::vector<Value>& array() const { return array_; }
  const std::map<std::string, Value>& object() const { return object_; }

  // The member `key` of an object, or nullptr (also for non-objects).
  const Value* Find(std::string_view key) const;

 private:
  friend class Parser;
  Kind kind_ = Kind::kNull;
  bool bool_ = false;
  int64_t int_ = 0;
  double double_ = 0;
  std::string string_;
  std::vector<Value> array_;
  std::map<std::string, Value> object_;
};

absl::StatusOr<Value> Parse(std::string_view text);

}  // namespace tilec::runtime::json

#endif  // TILEC_RUNTIME_JSON_H_
