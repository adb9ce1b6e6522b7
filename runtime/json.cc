#include "runtime/json.h"

#include <cerrno>
#include <charconv>
#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace tilec::runtime::json {

const Value* Value::Find(std::string_view key) const {
  if (kind_ != Kind::kObject) return nullptr;
  auto it = object_.find(std::string(key));
  return it == object_.end() ? nullptr : &it->second;
}

class Parser {
 public:
  explicit Parser(std::string_view text) : s_(text) {}

  absl::StatusOr<Value> Document() {
    Value v;
    if (!ParseValue(v, 0)) return Error();
    SkipSpace();
    if (pos_ != s_.size()) {
      error_ = "unexpected text after the JSON value";
      return Error();
    }
    return v;
  }

 private:
  absl::Status Error() const {
    return absl::InvalidArgumentError(absl::StrCat("JSON at byte ", pos_, ": ", error_));
  }
  bool Fail(std::string message) {
    error_ = std::move(message);
    return false;
  }
  void SkipSpace() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\r' || s_[pos_] == '\t'))
      ++pos_;
  }
  bool Literal(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) return Fail("invalid literal");
    pos_ += word.size();
    return true;
  }

  bool ParseValue(Value& v, int depth) {
    if (depth > kMaxDepth) return Fail(absl::StrCat("nesting deeper than ", kMaxDepth));
    SkipSpace();
    if (pos_ >= s_.size()) return Fail("unexpected end of input");
    switch (s_[pos_]) {
      case 'n': v.kind_ = Value::Kind::kNull; return Literal("null");
      case 't':
        v.kind_ = Value::Kind::kBool;
        v.bool_ = true;
        return Literal("true");
      case 'f':
        v.kind_ = Value::Kind::kBool;
        v.bool_ = false;
        return Literal("false");
      case '"': v.kind_ = Value::Kind::kString; return ParseString(v.string_);
      case '[': {
        v.kind_ = Value::Kind::kArray;
        ++pos_;
        SkipSpace();
        if (pos_ < s_.size() && s_[pos_] == ']') {
          ++pos_;
          return true;
        }
        while (true) {
          v.array_.emplace_back();
          if (!ParseValue(v.array_.back(), depth + 1)) return false;
          SkipSpace();
          if (pos_ < s_.size() && s_[pos_] == ',') {
            ++pos_;
            continue;
          }
          if (pos_ < s_.size() && s_[pos_] == ']') {
            ++pos_;
            return true;
          }
          return Fail("expected ',' or ']' in an array");
        }
      }
      case '{': {
        v.kind_ = Value::Kind::kObject;
        ++pos_;
        SkipSpace();
        if (pos_ < s_.size() && s_[pos_] == '}') {
          ++pos_;
          return true;
        }
        while (true) {
          SkipSpace();
          if (pos_ >= s_.size() || s_[pos_] != '"') return Fail("expected a member name");
          std::string key;
          if (!ParseString(key)) return false;
          SkipSpace();
          if (pos_ >= s_.size() || s_[pos_] != ':') return Fail("expected ':' after a member name");
          ++pos_;
          Value member;
          if (!ParseValue(member, depth + 1)) return false;
          if (!v.object_.emplace(key, std::move(member)).second)
            return Fail(absl::StrCat("duplicate member \"", key, "\""));
          SkipSpace();
          if (pos_ < s_.size() && s_[pos_] == ',') {
            ++pos_;
            continue;
          }
          if (pos_ < s_.size() && s_[pos_] == '}') {
            ++pos_;
            return true;
          }
          return Fail("expected ',' or '}' in an object");
        }
      }
      default: return ParseNumber(v);
    }
  }

  bool ParseNumber(Value& v) {
    const size_t start = pos_;
    if (pos_ < s_.size() && s_[pos_] == '-') ++pos_;
    auto digits = [&] {
      size_t n = 0;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_, ++n;
      return n;
    };
    if (digits() == 0) return Fail("invalid value");
    bool integer = true;
    if (pos_ < s_.size() && s_[pos_] == '.') {
      ++pos_;
      integer = false;
      if (digits() == 0) return Fail("digits expected after '.'");
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      ++pos_;
      integer = false;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      if (digits() == 0) return Fail("digits expected in an exponent");
    }
    std::string_view text = s_.substr(start, pos_ - start);
    if (integer) {
      auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v.int_);
      if (ec == std::errc() && p == text.data() + text.size()) {
        v.kind_ = Value::Kind::kInt;
        return true;
      }
    }
    std::string copy(text);
    errno = 0;
    v.double_ = std::strtod(copy.c_str(), nullptr);
    v.kind_ = Value::Kind::kDouble;
    return true;
  }

  bool Hex4(uint32_t& out) {
    if (pos_ + 4 > s_.size()) return Fail("truncated \\u escape");
    out = 0;
    for (int i = 0; i < 4; ++i) {
      char c = s_[pos_++];
      out <<= 4;
      if (c >= '0' && c <= '9')
        out |= c - '0';
      else if (c >= 'a' && c <= 'f')
        out |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        out |= c - 'A' + 10;
      else
        return Fail("invalid \\u escape");
    }
    return true;
  }

  static void AppendUtf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  bool ParseString(std::string& out) {
    ++pos_;  // the opening quote
    while (true) {
      if (pos_ >= s_.size()) return Fail("unterminated string");
      char c = s_[pos_++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) return Fail("control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= s_.size()) return Fail("unterminated string");
      switch (char e = s_[pos_++]) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          uint32_t cp;
          if (!Hex4(cp)) return false;
          if (cp >= 0xD800 && cp < 0xDC00) {
            uint32_t low;
            if (s_.substr(pos_, 2) != "\\u") return Fail("unpaired UTF-16 surrogate");
            pos_ += 2;
            if (!Hex4(low)) return false;
            if (low < 0xDC00 || low >= 0xE000) return Fail("unpaired UTF-16 surrogate");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          } else if (cp >= 0xDC00 && cp < 0xE000) {
            return Fail("unpaired UTF-16 surrogate");
          }
          AppendUtf8(out, cp);
          break;
        }
        default: return Fail(absl::StrCat("invalid escape \\", std::string(1, e)));
      }
    }
  }

  std::string_view s_;
  size_t pos_ = 0;
  std::string error_;
};

absl::StatusOr<Value> Parse(std::string_view text) { return Parser(text).Document(); }

}  // namespace tilec::runtime::json
