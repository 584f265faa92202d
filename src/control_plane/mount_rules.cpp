// Storage placeholders/credentials (docs/behaviour.md §4.5) and mount volume normalisation.
#include "mount_rules.hpp"

#include <algorithm>
#include <map>

#include "batchai/common/errors.hpp"
#include "batchai/common/ids.hpp"

namespace batchai::control_plane {
namespace {

constexpr const char* kAccountPlaceholder = "<AZURE_BATCHAI_STORAGE_ACCOUNT>";
constexpr const char* kKeyPlaceholder = "<AZURE_BATCHAI_STORAGE_KEY>";

std::string lookup_key(const KeyLookup& lookup, const std::string& account) {
  auto key = lookup(account);
  if (!key) throw InvalidArgument("Cannot find \"" + account + "\" storage account.");
  if (key->empty()) throw InvalidArgument("Cannot find a key for \"" + account + "\" storage account.");
  return *key;
}

std::string str(const Json& obj, const char* key) { return value_or<std::string>(obj, key, ""); }

bool has_key_or_reference(const Json& entry) {
  if (!entry.contains("credentials") || !entry["credentials"].is_object()) return false;
  const Json& c = entry["credentials"];
  return !str(c, "accountKey").empty() || (c.contains("accountKeySecretReference") && !c["accountKeySecretReference"].is_null());
}

// Steps 2, 4, 5 and 6 of docs/behaviour.md §4.5.2, shared by shares and containers.
void patch_entry(Json& e, bool is_share, const EffectiveStorage& s, const KeyLookup& lookup, bool& need_account,
                 bool& need_key) {
  if (str(e, "accountName") == kAccountPlaceholder) {
    need_account = true;
    e["accountName"] = s.account_name;
  }
  if (is_share) {
    std::string url = str(e, "azureFileUrl");
    if (auto pos = url.find(kAccountPlaceholder); pos != std::string::npos) {
      need_account = true;
      for (; pos != std::string::npos; pos = url.find(kAccountPlaceholder))
        url.replace(pos, std::string(kAccountPlaceholder).size(), s.account_name);
      e["azureFileUrl"] = url;
    }
  }
  bool has_credentials = e.contains("credentials") && e["credentials"].is_object();
  if (has_credentials && str(e["credentials"], "accountKey") == kKeyPlaceholder) {
    need_key = true;
    e["credentials"]["accountKey"] = s.account_key;
  }
  if (!has_credentials && str(e, "accountName") == s.account_name) {
    need_key = true;
    e["credentials"] = {{"accountKey", s.account_key}};
  }
  if (!is_share && str(e, "accountName").empty())
    throw InvalidArgument(
        "Ill-formed Azure Blob File System reference in the configuration file - no account name provided.");
  if (!str(e, "accountName").empty() && !has_key_or_reference(e))
    e["credentials"] = {{"accountKey", lookup_key(lookup, str(e, "accountName"))}};
}

Json secret_reference(const Json& wire) {
  if (!wire.is_object()) return nullptr;
  Json vault = wire.contains("sourceVault") && wire["sourceVault"].is_object()
                   ? Json{{"id", wire["sourceVault"].value("id", Json(nullptr))}}
                   : Json(nullptr);
  return {{"secretUrl", wire.value("secretUrl", Json(nullptr))}, {"sourceVault", vault}};
}

Json resource_id(const Json& wire) {
  if (!wire.is_object()) return nullptr;
  return {{"id", wire.value("id", Json(nullptr))}};
}

// Maps a list with `fn`; absent or empty → null (the service returns null for empty lists).
template <typename F>
Json map_list(const Json& list, F fn) {
  if (!list.is_array() || list.empty()) return nullptr;
  Json out = Json::array();
  for (const auto& item : list) out.push_back(fn(item));
  return out;
}

Json credentials(const Json& wire) {
  return {{"accountKey", nullptr},
          {"accountKeySecretReference", secret_reference(member_or_null(wire, "accountKeySecretReference"))}};
}

}  // namespace

EffectiveStorage effective_storage(const MountOptions& options, const KeyLookup& lookup) {
  EffectiveStorage s;
  if (options.storage_account_name && !options.storage_account_name->empty()) {
    s.account_name = *options.storage_account_name;
    s.account_key = options.storage_account_key ? *options.storage_account_key : lookup_key(lookup, s.account_name);
  } else {
    s.account_name = options.environment_account_name.value_or("");
    s.account_key = options.environment_account_key.value_or("");
  }
  return s;
}

std::optional<std::pair<std::string, std::string>> parse_azure_file_url(const std::string& url) {
  auto scheme = url.find("://");
  std::string rest = scheme == std::string::npos ? url : url.substr(scheme + 3);
  auto slash = rest.find('/');
  std::string host = rest.substr(0, slash);
  auto dot = host.find('.');
  if (dot == std::string::npos || dot == 0) return std::nullopt;
  std::string share = slash == std::string::npos ? "" : rest.substr(slash + 1);
  while (!share.empty() && share.back() == '/') share.pop_back();
  return std::make_pair(host.substr(0, dot), share);
}

void patch_mount_volumes(Json& mv, const EffectiveStorage& s, const KeyLookup& lookup) {
  if (!mv.is_object()) return;
  bool need_account = false, need_key = false;
  if (mv.contains("azureFileShares") && mv["azureFileShares"].is_array()) {
    for (auto& e : mv["azureFileShares"]) {
      if (str(e, "accountName").empty()) {
        std::string url = str(e, "azureFileUrl");
        if (url.empty()) throw InvalidArgument("Azure File URL cannot absent or be empty");
        auto parsed = parse_azure_file_url(url);
        if (!parsed) throw InvalidArgument("Ill-formed Azure File URL \"" + url + "\"");
        e["accountName"] = parsed->first;
      }
      patch_entry(e, true, s, lookup, need_account, need_key);
    }
  }
  if (mv.contains("azureBlobFileSystems") && mv["azureBlobFileSystems"].is_array())
    for (auto& e : mv["azureBlobFileSystems"]) patch_entry(e, false, s, lookup, need_account, need_key);
  if (need_account && s.account_name.empty())
    throw InvalidArgument(
        "Please configure Azure Storage account name via AZURE_BATCHAI_STORAGE_ACCOUNT or provide storage_account "
        "value in batchai section of your az configuration file.");
  if (need_key && s.account_key.empty())
    throw InvalidArgument(
        "Please configure Azure Storage account key via AZURE_BATCHAI_STORAGE_KEY or provide storage_key value in "
        "batchai section of your az configuration file.");
}

void check_mount_account_keys(const Json& mv, const AccountKeys& keys) {
  if (!mv.is_object()) return;
  for (const char* list : {"azureFileShares", "azureBlobFileSystems"}) {
    if (!mv.contains(list) || !mv[list].is_array()) continue;
    for (std::size_t i = 0; i < mv[list].size(); ++i) {
      const Json& e = mv[list][i];
      const std::string account = str(e, "accountName");
      const std::string key = e.contains("credentials") ? str(e["credentials"], "accountKey") : "";
      if (account.empty() || key.empty()) continue;  // a key-vault reference is not checked here
      const std::vector<std::string> valid = keys(account);
      if (valid.empty() || std::find(valid.begin(), valid.end(), key) != valid.end()) continue;
      // The storage commands' answer to a wrong key (storage_data.cpp), naming the mount.
      throw InvalidArgument("The account key given for storage account '" + account + "' in mountVolumes." + list + "[" +
                                std::to_string(i) + "] is not valid (authentication failed). Use a key from "
                                "'batchai storage account keys list -n " + account + "'.",
                            "AuthenticationFailed");
    }
  }
}

Json normalize_mount_volumes(const Json& wire) {
  if (!wire.is_object()) return nullptr;
  Json out;
  out["azureFileShares"] = map_list(member_or_null(wire, "azureFileShares"), [](const Json& e) {
    return Json{{"accountName", member_or_null(e, "accountName")},
                {"azureFileUrl", member_or_null(e, "azureFileUrl")},
                {"credentials", credentials(member_or_null(e, "credentials"))},
                {"directoryMode", e.value("directoryMode", Json("0777"))},
                {"fileMode", e.value("fileMode", Json("0777"))},
                {"relativeMountPath", member_or_null(e, "relativeMountPath")}};
  });
  out["azureBlobFileSystems"] = map_list(member_or_null(wire, "azureBlobFileSystems"), [](const Json& e) {
    return Json{{"accountName", member_or_null(e, "accountName")},
                {"containerName", member_or_null(e, "containerName")},
                {"credentials", credentials(member_or_null(e, "credentials"))},
                {"mountOptions", member_or_null(e, "mountOptions")},
                {"relativeMountPath", member_or_null(e, "relativeMountPath")}};
  });
  out["fileServers"] = map_list(member_or_null(wire, "fileServers"), [](const Json& e) {
    return Json{{"fileServer", resource_id(member_or_null(e, "fileServer"))},
                {"mountOptions", member_or_null(e, "mountOptions")},
                {"relativeMountPath", member_or_null(e, "relativeMountPath")},
                {"sourceDirectory", member_or_null(e, "sourceDirectory")}};
  });
  out["unmanagedFileSystems"] = map_list(member_or_null(wire, "unmanagedFileSystems"), [](const Json& e) {
    return Json{{"mountCommand", member_or_null(e, "mountCommand")}, {"relativeMountPath", member_or_null(e, "relativeMountPath")}};
  });
  return out;
}

Json normalize_node_setup(const Json& wire) {
  if (!wire.is_object()) return nullptr;
  Json out;
  out["mountVolumes"] = normalize_mount_volumes(member_or_null(wire, "mountVolumes"));
  Json perf = member_or_null(wire, "performanceCountersSettings");
  if (perf.is_object()) {
    Json ai = member_or_null(perf, "appInsightsReference");
    out["performanceCountersSettings"] = {
        {"appInsightsReference",
         {{"component", resource_id(member_or_null(ai, "component"))},
          {"instrumentationKey", member_or_null(ai, "instrumentationKey")},
          {"instrumentationKeySecretReference", secret_reference(member_or_null(ai, "instrumentationKeySecretReference"))}}}};
  } else {
    out["performanceCountersSettings"] = nullptr;
  }
  Json task = member_or_null(wire, "setupTask");
  if (task.is_object()) {
    out["setupTask"] = {
        {"commandLine", member_or_null(task, "commandLine")},
        {"environmentVariables", map_list(member_or_null(task, "environmentVariables"),
                                          [](const Json& v) {
                                            return Json{{"name", member_or_null(v, "name")}, {"value", member_or_null(v, "value")}};
                                          })},
        {"secrets", map_list(member_or_null(task, "secrets"),
                             [](const Json& v) {
                               return Json{{"name", member_or_null(v, "name")},
                                           {"value", nullptr},
                                           {"valueSecretReference", secret_reference(member_or_null(v, "valueSecretReference"))}};
                             })},
        {"stdOutErrPathPrefix", member_or_null(task, "stdOutErrPathPrefix")},
        {"stdOutErrPathSuffix", member_or_null(task, "stdOutErrPathSuffix")}};
  } else {
    out["setupTask"] = nullptr;
  }
  return out;
}

void append_command_line_mounts(Json& mount_volumes, const MountOptions& o, const std::string& file_server_id,
                                const KeyLookup& lookup) {
  if (!mount_volumes.is_object()) mount_volumes = Json::object();
  auto append = [&](const char* list, Json entry) {
    if (!mount_volumes.contains(list) || !mount_volumes[list].is_array()) mount_volumes[list] = Json::array();
    mount_volumes[list].push_back(std::move(entry));
  };
  if (!file_server_id.empty()) {
    if (o.nfs_mount_path.empty()) throw InvalidArgument("File server relative mount path cannot be empty.");
    append("fileServers", {{"fileServer", {{"id", file_server_id}}},
                           {"relativeMountPath", o.nfs_mount_path},
                           {"mountOptions", "rw"}});
  }
  if (!o.afs_name && !o.bfs_name) return;
  const auto storage = effective_storage(o, lookup);
  if (storage.account_name.empty())
    throw InvalidArgument(
        "Please configure Azure Storage account name via AZURE_BATCHAI_STORAGE_ACCOUNT or provide storage_account "
        "value in batchai section of your az configuration file.");
  if (storage.account_key.empty())
    throw InvalidArgument(
        "Please configure Azure Storage account key via AZURE_BATCHAI_STORAGE_KEY or provide storage_key value in "
        "batchai section of your az configuration file.");
  if (o.afs_name) {
    if (o.afs_mount_path.empty()) throw InvalidArgument("Azure File share relative mount path cannot be empty.");
    append("azureFileShares",
           {{"accountName", storage.account_name},
            {"azureFileUrl", "https://" + storage.account_name + ".file.core.windows.net/" + *o.afs_name},
            {"credentials", {{"accountKey", storage.account_key}}},
            {"relativeMountPath", o.afs_mount_path}});
  }
  if (o.bfs_name) {
    if (o.bfs_mount_path.empty()) throw InvalidArgument("Azure Storage Container relative mount path cannot be empty.");
    append("azureBlobFileSystems", {{"accountName", storage.account_name},
                                    {"containerName", *o.bfs_name},
                                    {"credentials", {{"accountKey", storage.account_key}}},
                                    {"relativeMountPath", o.bfs_mount_path}});
  }
}

}  // namespace batchai::control_plane
