// `tilec recommend`: ranked tile configurations for a program's unbound tile
// parameters on one hardware profile (compiler/recommend/recommend.h).
#ifndef TILEC_CLIENT_RECOMMEND_COMMAND_H_
#define TILEC_CLIENT_RECOMMEND_COMMAND_H_

#include <string>
#include <string_view>

#include "client/cli.h"
#include "proto/tilec/v1/service.pb.h"

namespace tilec::cli {

// Reads FILE and builds a Recommend request for --fn with the -D bindings
// and -U names (parameters left unbound are recommended), profile --target,
// --top and --dim sizes; sends it to --server (or $TILEC_SERVER), else runs
// the same core in this process on the built-in profiles and those of
// --profiles DIR. Prints the response with FormatRecommendation.
int RecommendCommand(const Flags& flags);

// The one rendering of a Recommend response, the same for a served and an
// embedded recommendation: a readable table, or one JSON object with `json`.
// `function` is the kernel-building function's name (the request's).
std::string FormatRecommendation(std::string_view function,
                                 const tilec::v1::RecommendResponse& response, bool json);

}  // namespace tilec::cli

#endif  // TILEC_CLIENT_RECOMMEND_COMMAND_H_
