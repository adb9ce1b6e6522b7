#include "compiler/frontend/source.h"

#include <string>
#include <string_view>

namespace tilec::frontend {

std::string_view SourceLine(const SourceFile& file, int line) {
  if (line < 1) return {};
  std::string_view text = file.text;
  size_t pos = 0;
  for (int i = 1; i < line; ++i) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) return {};
    pos = nl + 1;
  }
  if (pos > text.size()) return {};
  size_t end = text.find('\n', pos);
  std::string_view result =
      text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
  if (!result.empty() && result.back() == '\r') result.remove_suffix(1);
  return result;
}

std::string FormatDiagnostic(const SourceFile& file, SourceLoc loc, std::string_view message) {
  int col = loc.col < 1 ? 1 : loc.col;
  // Abseil's string_view is not std::string_view in this build: concatenate by hand.
  std::string out = file.path;
  out += ":" + std::to_string(loc.line) + ":" + std::to_string(loc.col) + ": error: ";
  out += message;
  out += '\n';
  out += SourceLine(file, loc.line);
  out += '\n';
  out += std::string(col - 1, ' ');
  out += "^\n";
  return out;
}

absl::Status SourceError(const SourceFile& file, SourceLoc loc, std::string_view message) {
  return absl::InvalidArgumentError(FormatDiagnostic(file, loc, message));
}

}  // namespace tilec::frontend
