// Parser for the Python syntax of TileLang source files.
//
// Parse reads a whole file (kernel code and host code alike: imports,
// classes, torch code, argparse, `if __name__ == "__main__":`) into the
// syntax tree of ast.h. It accepts Python 3.11's statement and expression
// grammar (and 3.12's reuse of quotes inside f-strings), except `match`
// statements and 3.12 `type` aliases, which are reported as unsupported. The
// inside of an f-string stays opaque.
//
// Contract: Parse never crashes, on any input. On malformed input it returns
// an INVALID_ARGUMENT status built by SourceError, whose first line is
// `path:line:col: error: message` with a specific message ("expected ':'
// after 'for' header", "unmatched ')'", "unexpected indent", ...). Besides
// syntax, it checks what Python's parser checks: assignment and deletion
// targets, parameter order and duplicates, argument order, and nesting depth
// (at most 200 brackets, 100 indentation levels).
#ifndef TILEC_COMPILER_FRONTEND_PARSER_H_
#define TILEC_COMPILER_FRONTEND_PARSER_H_

#include <memory>

#include "absl/status/statusor.h"
#include "compiler/frontend/ast.h"
#include "compiler/frontend/source.h"

namespace tilec::frontend {

// Parses a whole file. The returned Module keeps a copy of `file`.
absl::StatusOr<std::unique_ptr<Module>> Parse(const SourceFile& file);

// Parses `file.text` as one expression (a bare tuple `a, b` is allowed), e.g.
// the value of a parameter given on the command line.
absl::StatusOr<ExprPtr> ParseExpression(const SourceFile& file);

}  // namespace tilec::frontend

#endif  // TILEC_COMPILER_FRONTEND_PARSER_H_
