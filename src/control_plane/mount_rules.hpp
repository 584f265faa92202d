// Storage placeholders and credentials (docs/behaviour.md §4.5) and the wire-to-output rules of
// mount volumes and node setup, shared by cluster create and job create. Pure functions.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "batchai/common/json_util.hpp"
#include "batchai/control_plane/options.hpp"

namespace batchai::control_plane {

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

}  // namespace batchai::control_plane
