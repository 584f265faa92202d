// Requests to the control plane, one struct per command, field for field the command line's
// options (std::optional = "not given"). The CLI only fills these in (reading --config-file into
// `config`); `batchai serve` fills `config` with a request's body. Every rule of docs/behaviour.md
// (processing order, defaults, validation messages) lives in the control plane.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "batchai/common/json_util.hpp"

namespace batchai::control_plane {

// Where a workspace-scoped resource lives.
struct WorkspaceRef {
  std::string resource_group;
  std::string workspace;
};

// --storage-account-name/-key plus --afs-*/--bfs-*/--nfs-* (cluster create and job create).
struct MountOptions {
  std::optional<std::string> storage_account_name;
  std::optional<std::string> storage_account_key;
  std::optional<std::string> afs_name;
  std::string afs_mount_path = "afs";
  std::optional<std::string> bfs_name;
  std::string bfs_mount_path = "bfs";
  std::optional<std::string> nfs;  // file server name (same workspace) or ARM id
  std::string nfs_mount_path = "nfs";
  // AZURE_BATCHAI_STORAGE_ACCOUNT / _KEY as the caller's own environment gives them (the CLI reads
  // them as az does); `serve` leaves them empty, so the server's environment never fills a request.
  std::optional<std::string> environment_account_name;
  std::optional<std::string> environment_account_key;
};

// -u/-k/-p/--generate-ssh-keys (cluster create and file-server create).
struct AdminOptions {
  std::optional<std::string> user_name;
  std::optional<std::string> ssh_key;  // key text or path to a .pub file
  std::optional<std::string> password;
  bool generate_ssh_keys = false;
};

struct ClusterCreateOptions {
  WorkspaceRef where;
  std::string name;
  std::optional<Json> config;  // the cluster document ({"properties": {...}}), --config-file's
  std::optional<std::string> image;
  std::optional<std::string> custom_image;
  std::optional<std::string> vm_size;
  std::optional<int> target;
  std::optional<int> min_nodes;
  std::optional<int> max_nodes;
  std::optional<std::string> vm_priority;
  AdminOptions admin;
  bool use_auto_storage = false;
  MountOptions mounts;
  std::optional<std::string> subnet;
  std::optional<std::string> setup_task;
  std::optional<std::string> setup_task_output;
  // A Slurm-backed cluster on this partition (docs/slurm.md); the document's
  // properties.slurm.partition when not given.
  std::optional<std::string> slurm_partition;
};

struct FileServerCreateOptions {
  WorkspaceRef where;
  std::string name;
  std::optional<Json> config;  // the file server document, --config-file's
  std::optional<std::string> vm_size;
  std::optional<int> disk_count;
  std::optional<int> disk_size;
  std::optional<std::string> caching_type;
  std::optional<std::string> storage_sku;
  AdminOptions admin;
  std::optional<std::string> subnet;
  bool no_wait = false;
};

struct JobCreateOptions {
  WorkspaceRef where;
  std::string experiment;
  std::string name;
  Json config;  // the job document ({"properties": {...}}), --config-file's
  std::optional<std::string> cluster;  // name or ARM id
  MountOptions mounts;
};

// `cluster node exec` / `job node exec`.
struct NodeExecOptions {
  std::optional<std::string> node_id;
  std::optional<std::string> exec;
  std::vector<std::string> forwards;  // -L lport:rhost:rport
  std::optional<std::string> password;
  std::optional<std::string> ssh_private_key;
};

}  // namespace batchai::control_plane
