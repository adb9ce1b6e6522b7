// Checks inline device source that a program carries verbatim (a T.Kernel
// prelude) before any compiler sees it.
//
// Inline source comes from whoever sent the program: on tilecd, any client.
// It may not reach the file system through the preprocessor, or the server
// would read (and echo in diagnostics) files of the client's choosing. The
// rule is applied to the text as the preprocessor sees it, after joining
// backslash-newline continuations and dropping comments, so that spellings
// such as `# /*x*/ include`, `#\<newline>include` and `%:include` are caught:
//
// - no identifier `include`, `include_next`, `import`, `embed`,
//   `include_alias`, `__has_include`, `__has_include_next`, `__has_embed`
//   or `_Pragma` anywhere outside string and character literals (so neither
//   the directives nor the operators, nor a pragma built from a string);
// - no `#line` directive and no `# <number>` line marker (they rename the
//   file diagnostics are reported in);
// - no token pasting (`##`, `%:%:`), which could assemble a refused name;
// - no raw string literals, trigraphs (`??=`, `??/`), or backslashes outside
//   literals (universal character names could spell a refused name), and no
//   unterminated comment.
// Everything else (macros, conditionals, pragmas, device functions) is kept.
#ifndef TILEC_COMPILER_IR_INLINE_SOURCE_H_
#define TILEC_COMPILER_IR_INLINE_SOURCE_H_

#include <optional>
#include <string>
#include <string_view>

namespace tilec::ir {

struct InlineSourceProblem {
  int line = 1;    // 1-based, in the text as given
  int column = 1;  // 1-based
  std::string message;
};

// nullopt when `text` passes the rule above.
std::optional<InlineSourceProblem> CheckInlineSource(std::string_view text);

}  // namespace tilec::ir

#endif  // TILEC_COMPILER_IR_INLINE_SOURCE_H_
