// Resource names straight from the store, for bash completion (src/cli/completion_names.cpp): the
// database opened read-only, with no schema step, no reconcile and a short wait for a writer, so
// that a <TAB> answers within milliseconds and never changes anything.
#pragma once
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace batchai::control_plane {

// How many parents (group, workspace, experiment, in that order) names of `kind` need: groups and
// storage-accounts 0, workspaces 1, experiments, clusters and file-servers 2, jobs 3; nullopt for
// a kind that is none of these.
std::optional<int> stored_name_parents(std::string_view kind);

// The names of `kind` under `parents` (lower-cased) that start with `prefix` (compared lower-cased),
// in order: as created while at most `display_limit` match, else their lower-cased keys (which the
// index alone answers). Empty when the store is missing, busy or unreadable.
std::vector<std::string> stored_names(const std::filesystem::path& db, std::string_view kind,
                                      const std::vector<std::string>& parents, const std::string& prefix,
                                      std::size_t display_limit);

}  // namespace batchai::control_plane
