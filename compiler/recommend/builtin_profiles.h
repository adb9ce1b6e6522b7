// The text of the built-in profiles (deploy/profiles/*.textproto), embedded
// at build time by compiler/recommend/CMakeLists.txt.
#ifndef TILEC_COMPILER_RECOMMEND_BUILTIN_PROFILES_H_
#define TILEC_COMPILER_RECOMMEND_BUILTIN_PROFILES_H_

#include <string_view>
#include <utility>
#include <vector>

namespace tilec::recommend::internal {

// (file name, file text) per built-in profile.
const std::vector<std::pair<std::string_view, std::string_view>>& BuiltinProfileTexts();

}  // namespace tilec::recommend::internal

#endif  // TILEC_COMPILER_RECOMMEND_BUILTIN_PROFILES_H_
