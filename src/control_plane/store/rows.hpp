// The stored rows the control plane's source files share, one store/<table>.cpp each: groups,
// workspaces, clusters, file servers and storage account keys, looked up with the service's
// not-found messages; time and document conversion; the trash of folders to delete after a
// transaction commits. The jobs table has its own header (store/jobs.hpp).
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "batchai/common/clock.hpp"
#include "batchai/common/errors.hpp"
#include "batchai/common/json_util.hpp"
#include "batchai/control_plane/options.hpp"
#include "batchai/control_plane/states.hpp"
#include "engine/cluster_kind.hpp"
#include "store/store.hpp"

namespace batchai::control_plane::detail {

inline std::int64_t to_us(TimePoint t) { return t.time_since_epoch().count(); }
inline TimePoint from_us(std::int64_t us) { return TimePoint(Micros(us)); }
inline std::string iso_us(std::int64_t us) { return format_iso(from_us(us)); }

inline Json parse_doc(const std::string& text) { return Json::parse(text); }
inline std::string dump_doc(const Json& doc) { return doc.dump(); }

struct GroupRow {
  std::string name;
  std::string location;
};
std::optional<GroupRow> find_group(Store& store, const std::string& name);
GroupRow require_group(Store& store, const std::string& name);  // NotFound "Resource group ... could not be found."

struct WorkspaceRow {
  std::int64_t id = 0;
  std::string resource_group;  // as stored (case preserved)
  std::string name;
  std::string location;
};
std::optional<WorkspaceRow> find_workspace(Store& store, const WorkspaceRef& ref);
WorkspaceRow require_workspace(Store& store, const WorkspaceRef& ref);
// The workspace a new cluster or file server `name` goes into (`table`: "clusters" or
// "file_servers"); AlreadyExists with the service's message when the name is taken.
WorkspaceRow require_workspace_for_new(Store& store, const WorkspaceRef& ref, const char* table, const std::string& name);

// Cluster row fields the simulation needs.
struct ClusterRow {
  std::int64_t id = 0;
  std::int64_t workspace_id = 0;
  std::string resource_group, workspace, name;
  std::string scale_mode;
  int target = 0, min_nodes = 0, max_nodes = 0;
  std::optional<std::int64_t> auto_demand;
  std::int64_t alloc_started_us = 0;
  AllocationState alloc_state = AllocationState::kSteady;
  std::int64_t alloc_changed_us = 0;
  std::int64_t next_ordinal = 0;
  std::string node_prefix, public_ip;
  Json doc;
  Json private_data;
  ClusterKind kind = ClusterKind::kSimulated;  // its engine column
};
std::optional<ClusterRow> load_cluster(Store& store, std::int64_t cluster_id);
// Number of nodes the cluster should have now: its target, or its auto-scale demand within bounds.
int desired_nodes(const ClusterRow& c);
ClusterRow require_cluster(Store& store, const WorkspaceRef& ref, const std::string& name);
[[noreturn]] void cluster_not_found();
// Row id and name of each cluster of the workspace.
std::vector<std::pair<std::int64_t, std::string>> cluster_names_in(Store& store, std::int64_t workspace_id);
// Row id and document of each cluster of the engine.
std::vector<std::pair<std::int64_t, Json>> cluster_docs_of_engine(Store& store, ClusterKind engine);
void save_cluster_doc(Store& store, std::int64_t cluster_id, const Json& doc);
// Nothing of the cluster changes with time any more (its row leaves the reconcile's pending set).
void mark_cluster_settled(Store& store, std::int64_t cluster_id);
// How many nodes the cluster can ever give one job: its nodes not leaving, or its auto-scale
// maximum when larger; nullopt when the cluster is gone.
std::optional<int> cluster_capacity(Store& store, std::int64_t cluster_id);
// Whether the cluster has anything that changes with time (a resize, nodes preparing).
bool cluster_pending(Store& store, std::int64_t cluster_id);
// Sets an auto-scale cluster's demand, marking it pending when the demand changed.
void set_auto_scale_demand(Store& store, std::int64_t cluster_id, int nodes);

// A file server's stored document (NotFound "The specified file server <name> is not found").
Json require_file_server_doc(Store& store, const WorkspaceRef& ref, const std::string& name);
[[noreturn]] void file_server_not_found(const std::string& name);

// A storage account's key1 (nullopt when no such account exists here) and both its keys (empty
// when none): what the mount rules' KeyLookup and AccountKeys ask for.
std::optional<std::string> account_key(Store& store, const std::string& account);
std::vector<std::string> account_keys(Store& store, const std::string& account);

// Records a folder for deletion after commit (call inside a write transaction).
void trash(Store& store, const std::filesystem::path& folder);
// The folders recorded for deletion; one taken off the record (deleted, or wanted again).
std::vector<std::string> trashed_folders(Store& store);
void untrash(Store& store, const std::filesystem::path& folder);
bool trash_holds_any(Store& store);

}  // namespace batchai::control_plane::detail
