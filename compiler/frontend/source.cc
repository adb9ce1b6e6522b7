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
  // A long line shows a window around the column, so that a diagnostic
  // stays short whatever the source holds.
  constexpr size_t kWindow = 80;
  std::string_view line = SourceLine(file, loc.line);
  size_t caret = static_cast<size_t>(col - 1);
  if (line.size() > 2 * kWindow) {
    size_t from = caret > kWindow ? caret - kWindow : 0;
    std::string shown = from > 0 ? "..." : "";
    shown += line.substr(from, 2 * kWindow);
    if (from + 2 * kWindow < line.size()) shown += "...";
    caret = caret - from + (from > 0 ? 3 : 0);
    out += shown;
  } else {
    out += line;
  }
  out += '\n';
  out += std::string(caret, ' ');
  out += "^\n";
  return out;
}

absl::Status SourceError(const SourceFile& file, SourceLoc loc, std::string_view message) {
  return absl::InvalidArgumentError(FormatDiagnostic(file, loc, message));
}

}  // namespace tilec::frontend
