// The client-side rules of `cluster create` / `file-server create` as pure functions
// (docs/behaviour.md §4.3.1 scale settings, §4.3.2 image parsing, §4.3.3 admin account). No store,
// no I/O except reading an ssh key file named by the user and running ssh-keygen.
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
// home for ~/.ssh/id_rsa.pub and ~ expansion; `os_user` the default user name. Without
// `credential_required` (nodes batchai does not make: no account is created on them) neither a
// password nor a key is needed; one that is given is still checked.
Json resolve_admin_account(const AdminOptions& options, const Json& config, const std::string& home,
                           const std::string& os_user, bool credential_required);
bool is_valid_ssh_rsa_key(const std::string& key);

// docs/behaviour.md §4.3.4: prints az's warnings; runs ssh-keygen through `launcher` when no key exists.
void generate_ssh_keys(ProcessLauncher& launcher, const std::string& home);
// Step 1 of cluster and file-server create: with --generate-ssh-keys, makes sure ~/.ssh/id_rsa.pub
// exists and uses it unless a key was given on the command line.
AdminOptions with_generated_ssh_keys(ProcessLauncher& launcher, AdminOptions admin, const std::string& home);

}  // namespace batchai::control_plane
