// Resource names for bash completion (packaging/completion/batchai.bash calls it):
//   batchai __complete-names KIND PREFIX [GROUP [WORKSPACE [EXPERIMENT]]]
// prints, one a line, the names of KIND (groups, storage-accounts, workspaces, experiments,
// clusters, file-servers, jobs) in the given parents that start with PREFIX. Read straight from
// the store, read-only, with no reconcile and no command tree: it runs on every <TAB>.
#pragma once

namespace batchai::cli {

// The hidden command's first word.
inline constexpr const char* kCompleteNamesCommand = "__complete-names";

// argv[1] is kCompleteNamesCommand. Exits 0 (names or none), 2 on a wrong call.
int complete_names(int argc, char** argv);

}  // namespace batchai::cli
