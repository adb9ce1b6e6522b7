// `tilec recommend`: ranked tile configurations for a program's unbound tile
// parameters on one hardware profile (compiler/recommend/recommend.h).
#ifndef TILEC_CLIENT_RECOMMEND_COMMAND_H_
#define TILEC_CLIENT_RECOMMEND_COMMAND_H_

#include "client/cli.h"

namespace tilec::cli {

// Loads FILE/--fn with the -D bindings (parameters left unbound are
// recommended), finds --target among the built-in profiles and those of
// --profiles DIR, and prints the top --top configs as a table, or as JSON
// with --json. --dim name=size sets dynamic dims for the cost model.
int RecommendCommand(const Flags& flags);

}  // namespace tilec::cli

#endif  // TILEC_CLIENT_RECOMMEND_COMMAND_H_
