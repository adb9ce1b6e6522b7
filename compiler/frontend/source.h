// Source text and diagnostics for the frontend.
//
// A SourceFile is the text of one TileLang file and the path it is reported
// under. A SourceLoc points at one character of it: 1-based line and column,
// where columns count characters (UTF-8 code points; a tab is one column).
//
// Every user error in the frontend is reported through SourceError, so all of
// them read the same way:
//
//   path:line:col: error: message
//   <the source line>
//   <col-1 spaces>^
#ifndef TILEC_COMPILER_FRONTEND_SOURCE_H_
#define TILEC_COMPILER_FRONTEND_SOURCE_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace tilec::frontend {

struct SourceFile {
  std::string path;
  std::string text;
};

struct SourceLoc {
  int line = 0;  // 1-based; 0 means unknown
  int col = 0;   // 1-based, in characters
};

inline bool operator==(SourceLoc a, SourceLoc b) { return a.line == b.line && a.col == b.col; }

// The text of line `line` (1-based) without its line terminator; empty when
// the file has no such line.
std::string_view SourceLine(const SourceFile& file, int line);

// "path:line:col: error: message\n<line>\n<spaces>^\n". A location past the
// end of the file prints an empty source line.
std::string FormatDiagnostic(const SourceFile& file, SourceLoc loc, std::string_view message);

// An INVALID_ARGUMENT status whose message is FormatDiagnostic(file, loc, message).
absl::Status SourceError(const SourceFile& file, SourceLoc loc, std::string_view message);

}  // namespace tilec::frontend

#endif  // TILEC_COMPILER_FRONTEND_SOURCE_H_
