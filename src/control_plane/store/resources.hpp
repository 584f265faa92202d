// The tables of the plain resources (store/resource_groups.cpp, store/workspaces.cpp,
// store/experiments.cpp, store/storage_accounts.cpp): their stored documents, read and written by
// name. The services (groups.cpp, workspaces.cpp, ...) hold the rules; the SQL is here.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "store/rows.hpp"

namespace batchai::control_plane::detail {

// resource_groups
std::optional<Json> group_doc(Store& store, const std::string& name);
void save_group_doc(Store& store, const std::string& name, const Json& doc);
void insert_group(Store& store, const std::string& name, const std::string& location, const Json& doc);
Json group_docs(Store& store);  // by name
void delete_group(Store& store, const std::string& name);

// workspaces
std::optional<Json> workspace_doc(Store& store, const WorkspaceRef& ref);
void save_workspace_doc(Store& store, const WorkspaceRef& ref, const Json& doc);
void insert_workspace(Store& store, const std::string& group, const std::string& name, const std::string& location,
                      const Json& doc);
Json workspace_docs(Store& store, const std::optional<std::string>& group);  // all groups' when none
void delete_workspace(Store& store, std::int64_t id);
// Row id and name of each workspace of the group.
std::vector<std::pair<std::int64_t, std::string>> workspaces_of_group(Store& store, const std::string& group);

// experiments
std::optional<Json> experiment_doc(Store& store, std::int64_t workspace_id, const std::string& name);
std::optional<Json> experiment_doc(Store& store, const WorkspaceRef& ref, const std::string& name);
void insert_experiment(Store& store, std::int64_t workspace_id, const std::string& name, const Json& doc);
// Row id and name as created, of the workspace's experiment `name`.
std::optional<std::pair<std::int64_t, std::string>> find_experiment(Store& store, std::int64_t workspace_id,
                                                                    const std::string& name);
void delete_experiment(Store& store, std::int64_t id);
// A page of the workspace's experiments after `after` (a lower-cased name), by name: at most
// `limit` + 1 rows, each read from the document by SQLite (no document parsed here).
struct ExperimentSummary {
  std::string name, name_lc, creation_time, provisioning_state, provisioning_state_time;
};
std::vector<ExperimentSummary> experiment_summaries(Store& store, std::int64_t workspace_id, const std::string& after,
                                                    std::int64_t limit);

// storage_accounts
struct AccountRow {
  std::string group_lc;
  std::string key1, key2;
  Json doc;
};
std::optional<AccountRow> find_account(Store& store, const std::string& name);
void insert_account(Store& store, const std::string& name, const std::string& group, const std::string& location,
                    const std::pair<std::string, std::string>& keys, const Json& doc);
Json account_docs(Store& store, const std::optional<std::string>& group);  // all groups' when none
void delete_account(Store& store, const std::string& name);
// Lower-cased names of the group's accounts; the first one in `location`, by name.
std::vector<std::string> accounts_of_group(Store& store, const std::string& group);
std::optional<std::string> first_account_in(Store& store, const std::string& group, const std::string& location);

}  // namespace batchai::control_plane::detail
