// Small string helpers for the frontend's messages.
//
// Abseil's string_view is a distinct type in this build, so absl::StrCat does
// not take std::string_view; these helpers do (and take integers and
// doubles), which keeps message-building code short.
#ifndef TILEC_COMPILER_FRONTEND_STR_UTIL_H_
#define TILEC_COMPILER_FRONTEND_STR_UTIL_H_

#include <concepts>
#include <string>
#include <string_view>
#include <vector>

namespace tilec::frontend {
namespace str_internal {

inline void Put(std::string& out, std::string_view s) { out.append(s); }
inline void Put(std::string& out, const char* s) { out.append(s); }
inline void Put(std::string& out, const std::string& s) { out.append(s); }
inline void Put(std::string& out, char c) { out.push_back(c); }
template <std::integral T>
requires(!std::same_as<T, char> && !std::same_as<T, bool>) void Put(std::string& out, T v) {
  out += std::to_string(v);
}

}  // namespace str_internal

// Concatenates strings, characters and integers.
template <typename... Args>
std::string Cat(const Args&... args) {
  std::string out;
  (str_internal::Put(out, args), ...);
  return out;
}

// A std::string_view of any contiguous character range (absl::string_view,
// absl::Status::message(), ...).
template <typename S>
std::string_view SV(const S& s) {
  return std::string_view(s.data(), s.size());
}

inline bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}
inline bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
inline bool Contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

// Joins with a separator.
inline std::string Join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t k = 0; k < parts.size(); ++k) {
    if (k) out.append(sep);
    out.append(parts[k]);
  }
  return out;
}

// Splits at any of the characters in `seps`, dropping empty pieces.
inline std::vector<std::string> SplitAny(std::string_view s, std::string_view seps) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (seps.find(c) != std::string_view::npos) {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

}  // namespace tilec::frontend

#endif  // TILEC_COMPILER_FRONTEND_STR_UTIL_H_
