// Scale settings, image parsing, admin account and ssh keys (docs/behaviour.md §4.3.1-§4.3.4).
#include "cluster_rules.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "batchai/common/errors.hpp"
#include "batchai/common/ids.hpp"
#include "batchai/common/log.hpp"
#include "batchai/common/process.hpp"

namespace fs = std::filesystem;

namespace batchai::control_plane {
namespace {

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::string current;
  for (char c : text) {
    if (c == sep) {
      parts.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  parts.push_back(current);
  return parts;
}

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::optional<std::string> base64_decode(const std::string& in) {
  static const std::string chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  int val = 0, bits = -8;
  std::size_t padding = 0;
  for (char c : in) {
    if (c == '=') {
      ++padding;
      continue;
    }
    if (padding) return std::nullopt;  // data after padding
    auto pos = chars.find(c);
    if (pos == std::string::npos) return std::nullopt;
    val = (val << 6) + static_cast<int>(pos);
    bits += 6;
    if (bits >= 0) {
      out.push_back(static_cast<char>((val >> bits) & 0xFF));
      bits -= 8;
    }
  }
  if ((in.size() % 4) != 0) return std::nullopt;
  return out;
}

std::string expand_user(const std::string& path, const std::string& home) {
  if (path == "~") return home;
  if (path.rfind("~/", 0) == 0) return home + path.substr(1);
  return path;
}

std::optional<std::string> read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

Json manual(int target) { return {{"nodeDeallocationOption", "requeue"}, {"targetNodeCount", target}}; }

}  // namespace

Json scale_settings_from_options(std::optional<int> target, std::optional<int> min_nodes,
                                 std::optional<int> max_nodes, const Json& from_config) {
  // A negative count would reach the node simulation as a negative cluster size.
  auto not_negative = [](const std::optional<int>& value, const char* option) {
    if (value && *value < 0)
      throw InvalidArgument(std::string(option) + " must be 0 or more nodes, got " + std::to_string(*value) + ".");
  };
  not_negative(target, "properties.scaleSettings.manual.targetNodeCount");
  not_negative(min_nodes, "properties.scaleSettings.autoScale.minimumNodeCount");
  not_negative(max_nodes, "properties.scaleSettings.autoScale.maximumNodeCount");
  const bool min_unset = !min_nodes || *min_nodes == 0;
  const bool max_unset = !max_nodes || *max_nodes == 0;
  if (!target && min_unset && max_unset) {
    if (from_config.is_null())
      throw InvalidArgument("Please provide scale setting for the cluster via command line or configuration file");
    return from_config;
  }
  if (min_nodes.has_value() != max_nodes.has_value())
    throw InvalidArgument("You need to either provide both min and max node counts or not provide any of them");
  if (min_nodes && *min_nodes > *max_nodes)
    throw InvalidArgument("Maximum nodes count must be greater or equal to minimum nodes count");
  if (min_nodes == max_nodes) {
    if (!min_nodes || target == min_nodes) return {{"autoScale", nullptr}, {"manual", manual(target.value_or(0))}};
    if (!target) return {{"autoScale", nullptr}, {"manual", manual(*min_nodes)}};
  }
  return {{"autoScale",
           {{"initialNodeCount", target.value_or(0)},
            {"maximumNodeCount", *max_nodes},
            {"minimumNodeCount", *min_nodes}}},
          {"manual", nullptr}};
}

Json default_image_reference() {
  return {{"offer", "UbuntuServer"},
          {"publisher", "Canonical"},
          {"sku", "16.04-LTS"},
          {"version", "latest"},
          {"virtualMachineImageId", nullptr}};
}

Json parse_image(const std::string& image, const std::optional<std::string>& custom_image) {
  Json ref;
  if (image.find(':') != std::string::npos) {
    auto parts = split(image, ':');
    if (parts.size() != 4)
      throw InvalidArgument(
          R"(properties.virtualMachineConfiguration.imageReference must be given as "publisher:offer:sku:version" or "publisher:offer:sku:")");
    if (parts[0].empty()) throw InvalidArgument("properties.virtualMachineConfiguration.imageReference.publisher is required.");
    if (parts[1].empty()) throw InvalidArgument("properties.virtualMachineConfiguration.imageReference.offer is required.");
    if (parts[2].empty()) throw InvalidArgument("properties.virtualMachineConfiguration.imageReference.sku is required.");
    ref = {{"publisher", parts[0]}, {"offer", parts[1]}, {"sku", parts[2]}};
    ref["version"] = parts[3].empty() ? Json(nullptr) : Json(parts[3]);
  } else if (iequals(image, "UbuntuLTS")) {
    ref = {{"publisher", "Canonical"}, {"offer", "UbuntuServer"}, {"sku", "16.04-LTS"}, {"version", nullptr}};
  } else if (iequals(image, "UbuntuDSVM")) {
    ref = {{"publisher", "microsoft-ads"},
           {"offer", "linux-data-science-vm-ubuntu"},
           {"sku", "linuxdsvmubuntu"},
           {"version", nullptr}};
  } else {
    throw InvalidArgument("Unsupported image alias \"" + image + "\", supported aliases are UbuntuLTS, UbuntuDSVM");
  }
  ref["virtualMachineImageId"] = nullptr;
  if (custom_image) {
    if (!looks_like_arm_id(*custom_image)) throw InvalidArgument("Ill-formed custom image resource id");
    ref["virtualMachineImageId"] = *custom_image;
  }
  return ref;
}

bool is_valid_ssh_rsa_key(const std::string& key) {
  std::istringstream in(key);
  std::string type, body;
  if (!(in >> type >> body) || type != "ssh-rsa") return false;
  auto data = base64_decode(body);
  if (!data || data->size() < 4) return false;
  const auto* bytes = reinterpret_cast<const unsigned char*>(data->data());
  std::size_t len = (std::size_t{bytes[0]} << 24) | (std::size_t{bytes[1]} << 16) | (std::size_t{bytes[2]} << 8) |
                    std::size_t{bytes[3]};
  return data->size() >= 4 + len && data->substr(4, len) == type;
}

Json resolve_admin_account(const AdminOptions& options, const Json& config, const std::string& home,
                           const std::string& os_user, bool credential_required) {
  std::string user = options.user_name.value_or(value_or<std::string>(config, "adminUserName", ""));
  if (user.empty() && !options.user_name) user = os_user;
  std::optional<std::string> password = options.password;
  if (!password && config.is_object() && config.contains("adminUserPassword") && config["adminUserPassword"].is_string())
    password = config["adminUserPassword"].get<std::string>();
  std::optional<std::string> key = options.ssh_key;
  if (!key && config.is_object() && config.contains("adminUserSshPublicKey") &&
      config["adminUserSshPublicKey"].is_string())
    key = config["adminUserSshPublicKey"].get<std::string>();
  if (!key && !password) {
    fs::path default_key = fs::path(home) / ".ssh" / "id_rsa.pub";
    if (fs::exists(default_key)) key = default_key.string();
  }
  if (key && !key->empty()) {
    std::error_code ec;
    fs::path as_path = expand_user(*key, home);
    if (key->size() < 4096 && fs::is_regular_file(as_path, ec)) key = read_text(as_path).value_or("");
    *key = trim(*key);
    if (!is_valid_ssh_rsa_key(*key)) throw InvalidArgument("Incorrect ssh public key value.");
  }
  if (user.empty()) throw InvalidArgument("Please provide admin user name.");
  if (credential_required && (!key || key->empty()) && (!password || password->empty()))
    throw InvalidArgument("Please provide admin user password or ssh key.");
  return {{"adminUserName", user},
          {"adminUserPassword", password ? Json(*password) : Json(nullptr)},
          {"adminUserSshPublicKey", key && !key->empty() ? Json(*key) : Json(nullptr)}};
}

AdminOptions with_generated_ssh_keys(ProcessLauncher& launcher, AdminOptions admin, const std::string& home) {
  if (!admin.generate_ssh_keys) return admin;
  generate_ssh_keys(launcher, home);
  if (!admin.ssh_key) admin.ssh_key = (std::filesystem::path(home) / ".ssh" / "id_rsa.pub").string();
  return admin;
}

void generate_ssh_keys(ProcessLauncher& launcher, const std::string& home) {
  fs::path dir = fs::path(home) / ".ssh";
  fs::path priv = dir / "id_rsa";
  fs::path pub = dir / "id_rsa.pub";
  if (fs::exists(priv) && fs::exists(pub)) {
    log::warning("Reusing existing ssh public key from ~/.ssh");
    return;
  }
  if (fs::exists(priv)) {
    log::warning("SSH private key id_rsa exists but public key is missing. Please export the public key.");
    return;
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  fs::permissions(dir, fs::perms::owner_all, ec);
  ProcessSpec spec;
  spec.argv = {"ssh-keygen", "-q", "-t", "rsa", "-b", "2048", "-N", "", "-C", "batchai", "-f", priv.string()};
  spec.stdout_file = "/dev/null";
  spec.stderr_file = "/dev/null";
  ProcessExit result;
  try {
    result = launcher.run(spec);
  } catch (const Error& e) {
    throw SystemError(std::string("Cannot generate SSH keys: ") + e.what() +
                      ". Install openssh-client (ssh-keygen) or pass --ssh-key/--password.");
  }
  if (result.exit_code != 0 || !fs::exists(pub))
    throw SystemError("Cannot generate SSH keys: ssh-keygen exited with code " + std::to_string(result.exit_code) +
                      ". Install openssh-client (ssh-keygen) or pass --ssh-key/--password.");
  log::warning(
      "SSH key files id_rsa and id_rsa.pub have been generated under ~/.ssh to allow SSH access to the nodes. If "
      "using machines without permanent storage, back up your keys to a safe location.");
}

}  // namespace batchai::control_plane
