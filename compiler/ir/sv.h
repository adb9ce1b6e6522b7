// Abseil as installed here has its own absl::string_view, distinct from
// std::string_view, and absl::StrCat accepts only the former. Sv() adapts the
// IR's std::string_view names (DTypeName, BinaryOpName ...) for StrCat;
// every component uses this one adapter.
#ifndef TILEC_COMPILER_IR_SV_H_
#define TILEC_COMPILER_IR_SV_H_

#include <string_view>

#include "absl/strings/string_view.h"

namespace tilec {

inline absl::string_view Sv(std::string_view s) { return absl::string_view(s.data(), s.size()); }

}  // namespace tilec

#endif  // TILEC_COMPILER_IR_SV_H_
