// The client-side rules of `cluster create` / `file-server create` / `job create` as pure
// functions (docs/behaviour.md §4.3.1 scale settings, §4.3.2 image parsing, §4.3.3 admin account, §4.5 storage
// placeholders and credentials) plus the VM size table used by list-usages. No store, no I/O
// except reading an ssh key file named by the user.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "batchai/common/json_util.hpp"
#include "batchai/control_plane/options.hpp"

namespace batchai {
class ProcessLauncher;
}

namespace batchai::control_plane {

// docs/behaviour.md §4.3.1: scaleSettings ({"autoScale":..,"manual":..} in output shape) from -t/--min/--max,
// or `from_config` (output shape or null) when the command line gives none. Throws InvalidArgument
// (also for a negative count).
Json scale_settings_from_options(std::optional<int> target, std::optional<int> min_nodes,
                                 std::optional<int> max_nodes, const Json& from_config);

// docs/behaviour.md §4.3.2: {"offer","publisher","sku","version","virtualMachineImageId"}.
Json parse_image(const std::string& image, const std::optional<std::string>& custom_image);
// The service default image (Canonical UbuntuServer 16.04-LTS latest).
Json default_image_reference();

// docs/behaviour.md §4.3.3: {adminUserName, adminUserPassword (kept here; the caller nulls it), adminUserSshPublicKey}.
// `config` is the wire-form userAccountSettings of a config file (or null). `home` is the user's
// home for ~/.ssh/id_rsa.pub and ~ expansion; `os_user` the default user name.
Json resolve_admin_account(const AdminOptions& options, const Json& config, const std::string& home,
                           const std::string& os_user);
bool is_valid_ssh_rsa_key(const std::string& key);

// docs/behaviour.md §4.3.4: prints az's warnings; runs ssh-keygen through `launcher` when no key exists.
void generate_ssh_keys(ProcessLauncher& launcher, const std::string& home);
// Step 1 of cluster and file-server create: with --generate-ssh-keys, makes sure ~/.ssh/id_rsa.pub
// exists and uses it unless a key was given on the command line.
AdminOptions with_generated_ssh_keys(ProcessLauncher& launcher, AdminOptions admin, const std::string& home);

// docs/behaviour.md §4.5.1: effective storage account name and key (empty when unknown).
struct EffectiveStorage {
  std::string account_name;
  std::string account_key;
};
// Key of a storage account by name, nullopt when the account does not exist; when it exists but
// has no key, return "" (the "Cannot find a key" error).
using KeyLookup = std::function<std::optional<std::string>(const std::string& account)>;
EffectiveStorage effective_storage(const MountOptions& options, const KeyLookup& lookup);

// docs/behaviour.md §4.5.2: patches a wire-form mountVolumes object in place (placeholders, account names, keys).
void patch_mount_volumes(Json& mount_volumes, const EffectiveStorage& storage, const KeyLookup& lookup);

// Both keys (key1, key2) of a storage account by name; empty when no such account exists here.
using AccountKeys = std::function<std::vector<std::string>(const std::string& account)>;
// As the storage commands do: a patched wire-form mountVolumes whose azureFileShares or
// azureBlobFileSystems give an accountKey that is not a key of their (existing) account is
// refused with InvalidArgument (code AuthenticationFailed). Key-vault references are not checked.
void check_mount_account_keys(const Json& mount_volumes, const AccountKeys& keys);

// docs/behaviour.md §4.3.5 / §4.4 step 5: the mounts named on the command line, appended to a wire-form
// mountVolumes object (cluster-level for cluster create, job-level for job create). The file
// server (--nfs) is resolved by the caller; `file_server_id` is its ARM id, empty when none.
void append_command_line_mounts(Json& mount_volumes, const MountOptions& options, const std::string& file_server_id,
                                const KeyLookup& lookup);

// "https://<account>.file.core.windows.net/<share>" → (account, share); nullopt when ill-formed.
std::optional<std::pair<std::string, std::string>> parse_azure_file_url(const std::string& url);

// Output-shape MountVolumes (all keys, credentials.accountKey null) from the wire form.
Json normalize_mount_volumes(const Json& wire);
// Output-shape NodeSetup / SetupTask from the wire form (secret values nulled).
Json normalize_node_setup(const Json& wire);

struct VmSize {
  std::string name;    // canonical spelling, e.g. "Standard_NC6"
  std::string family;  // usage family, e.g. "NC" ("Standard NC Family")
  int vcpus = 1;
  int gpus = 0;
};
// Case-insensitive lookup; unknown sizes get 1 vCPU and a family derived from the name.
VmSize vm_size_info(const std::string& vm_size);
// Every family of the table, in a stable order (for list-usages).
const std::vector<std::string>& vm_families();

// The vCPU quotas list-usages reports. The regional ones ("Total Cluster Dedicated Regional
// vCPUs", and the same for low priority) are enforced wherever a node count enters: cluster
// create, resize and auto-scale. The per-family ones are reported only.
inline constexpr int kRegionalVcpuQuota = 100;
inline constexpr int kFamilyVcpuQuota = 24;

// Throws Conflict (code "OperationNotAllowed", Azure's quota wording) when `requested` more vCPUs
// on top of `in_use` would pass kRegionalVcpuQuota in `location`.
void check_regional_vcpu_quota(const std::string& location, bool low_priority, std::int64_t in_use,
                               std::int64_t requested);
// The most nodes of `vm_size` a cluster can ever have under the regional quota.
std::int64_t max_nodes_within_quota(const std::string& vm_size);

}  // namespace batchai::control_plane
