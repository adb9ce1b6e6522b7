// What a killed process leaves behind: files and folders named after the
// pid of the tilecd that made them, removed by the next tilecd to start once
// that pid no longer runs.
#ifndef TILEC_SERVER_LEFTOVERS_H_
#define TILEC_SERVER_LEFTOVERS_H_

#include <sys/types.h>

#include <string>

namespace tilec::server {

// Whether no process `pid` runs on this host.
bool ProcessIsGone(pid_t pid);

// Removes (recursively) each entry of `dir` whose name has `marker`
// followed by the decimal pid of a process that is gone, and returns how
// many it removed. `marker` is matched at the start of the name when
// `at_start`, anywhere otherwise. Errors (a folder that cannot be read, an
// entry that cannot be removed) leave it in place.
int RemoveLeftoversOfDeadProcesses(const std::string& dir, const std::string& marker,
                                   bool at_start);

}  // namespace tilec::server

#endif  // TILEC_SERVER_LEFTOVERS_H_
