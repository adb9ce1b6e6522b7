// Temporary directories for tests that are removed, with their contents, when
// the test process exits normally (a crashed test leaves its directory behind
// for inspection). Created under $TMPDIR, or /tmp.
#ifndef TILEC_TESTS_TESTING_TEMP_DIR_H_
#define TILEC_TESTS_TESTING_TEMP_DIR_H_

#include <string>
#include <string_view>

namespace tilec::testing {

// A new, empty directory named `<prefix>_XXXXXX`; "" when it cannot be made.
// Safe to call from several threads; forked children that exec or _exit
// never remove it.
std::string MakeTempDir(std::string_view prefix);

}  // namespace tilec::testing

#endif  // TILEC_TESTS_TESTING_TEMP_DIR_H_
