// Storage placeholders/credentials (docs/behaviour.md §4.5), mount volume normalisation and VM sizes.
#include <algorithm>
#include <cstdlib>
#include <map>

#include "batchai/common/errors.hpp"
#include "batchai/common/ids.hpp"
#include "cluster_rules.hpp"

namespace batchai::control_plane {
namespace {

constexpr const char* kAccountPlaceholder = "<AZURE_BATCHAI_STORAGE_ACCOUNT>";
constexpr const char* kKeyPlaceholder = "<AZURE_BATCHAI_STORAGE_KEY>";

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

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

Json get(const Json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? Json(nullptr) : *it;
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
          {"accountKeySecretReference", secret_reference(get(wire, "accountKeySecretReference"))}};
}

}  // namespace

EffectiveStorage effective_storage(const MountOptions& options, const KeyLookup& lookup) {
  EffectiveStorage s;
  if (options.storage_account_name && !options.storage_account_name->empty()) {
    s.account_name = *options.storage_account_name;
    s.account_key = options.storage_account_key ? *options.storage_account_key : lookup_key(lookup, s.account_name);
  } else {
    s.account_name = env_or_empty("AZURE_BATCHAI_STORAGE_ACCOUNT");
    s.account_key = env_or_empty("AZURE_BATCHAI_STORAGE_KEY");
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
  out["azureFileShares"] = map_list(get(wire, "azureFileShares"), [](const Json& e) {
    return Json{{"accountName", get(e, "accountName")},
                {"azureFileUrl", get(e, "azureFileUrl")},
                {"credentials", credentials(get(e, "credentials"))},
                {"directoryMode", e.value("directoryMode", Json("0777"))},
                {"fileMode", e.value("fileMode", Json("0777"))},
                {"relativeMountPath", get(e, "relativeMountPath")}};
  });
  out["azureBlobFileSystems"] = map_list(get(wire, "azureBlobFileSystems"), [](const Json& e) {
    return Json{{"accountName", get(e, "accountName")},
                {"containerName", get(e, "containerName")},
                {"credentials", credentials(get(e, "credentials"))},
                {"mountOptions", get(e, "mountOptions")},
                {"relativeMountPath", get(e, "relativeMountPath")}};
  });
  out["fileServers"] = map_list(get(wire, "fileServers"), [](const Json& e) {
    return Json{{"fileServer", resource_id(get(e, "fileServer"))},
                {"mountOptions", get(e, "mountOptions")},
                {"relativeMountPath", get(e, "relativeMountPath")},
                {"sourceDirectory", get(e, "sourceDirectory")}};
  });
  out["unmanagedFileSystems"] = map_list(get(wire, "unmanagedFileSystems"), [](const Json& e) {
    return Json{{"mountCommand", get(e, "mountCommand")}, {"relativeMountPath", get(e, "relativeMountPath")}};
  });
  return out;
}

Json normalize_node_setup(const Json& wire) {
  if (!wire.is_object()) return nullptr;
  Json out;
  out["mountVolumes"] = normalize_mount_volumes(get(wire, "mountVolumes"));
  Json perf = get(wire, "performanceCountersSettings");
  if (perf.is_object()) {
    Json ai = get(perf, "appInsightsReference");
    out["performanceCountersSettings"] = {
        {"appInsightsReference",
         {{"component", resource_id(get(ai, "component"))},
          {"instrumentationKey", get(ai, "instrumentationKey")},
          {"instrumentationKeySecretReference", secret_reference(get(ai, "instrumentationKeySecretReference"))}}}};
  } else {
    out["performanceCountersSettings"] = nullptr;
  }
  Json task = get(wire, "setupTask");
  if (task.is_object()) {
    out["setupTask"] = {
        {"commandLine", get(task, "commandLine")},
        {"environmentVariables", map_list(get(task, "environmentVariables"),
                                          [](const Json& v) {
                                            return Json{{"name", get(v, "name")}, {"value", get(v, "value")}};
                                          })},
        {"secrets", map_list(get(task, "secrets"),
                             [](const Json& v) {
                               return Json{{"name", get(v, "name")},
                                           {"value", nullptr},
                                           {"valueSecretReference", secret_reference(get(v, "valueSecretReference"))}};
                             })},
        {"stdOutErrPathPrefix", get(task, "stdOutErrPathPrefix")},
        {"stdOutErrPathSuffix", get(task, "stdOutErrPathSuffix")}};
  } else {
    out["setupTask"] = nullptr;
  }
  return out;
}

namespace {

const std::vector<VmSize>& vm_table() {
  static const std::vector<VmSize> table = {
      {"Standard_NC6", "NC", 6, 1},           {"Standard_NC12", "NC", 12, 2},
      {"Standard_NC24", "NC", 24, 4},         {"Standard_NC24r", "NC", 24, 4},
      {"Standard_NC6s_v2", "NCSv2", 6, 1},    {"Standard_NC12s_v2", "NCSv2", 12, 2},
      {"Standard_NC24s_v2", "NCSv2", 24, 4},  {"Standard_NC24rs_v2", "NCSv2", 24, 4},
      {"Standard_NC6s_v3", "NCSv3", 6, 1},    {"Standard_NC12s_v3", "NCSv3", 12, 2},
      {"Standard_NC24s_v3", "NCSv3", 24, 4},  {"Standard_NC24rs_v3", "NCSv3", 24, 4},
      {"Standard_ND6s", "ND", 6, 1},          {"Standard_ND12s", "ND", 12, 2},
      {"Standard_ND24s", "ND", 24, 4},        {"Standard_ND24rs", "ND", 24, 4},
      {"Standard_NV6", "NV", 6, 1},           {"Standard_NV12", "NV", 12, 2},
      {"Standard_NV24", "NV", 24, 4},         {"Standard_D1", "D", 1, 0},
      {"Standard_D2", "D", 2, 0},             {"Standard_D3", "D", 4, 0},
      {"Standard_D4", "D", 8, 0},             {"Standard_D11", "D", 2, 0},
      {"Standard_D12", "D", 4, 0},            {"Standard_D13", "D", 8, 0},
      {"Standard_D14", "D", 16, 0},           {"Standard_D1_v2", "Dv2", 1, 0},
      {"Standard_D2_v2", "Dv2", 2, 0},        {"Standard_D3_v2", "Dv2", 4, 0},
      {"Standard_D4_v2", "Dv2", 8, 0},        {"Standard_D5_v2", "Dv2", 16, 0},
      {"Standard_D11_v2", "Dv2", 2, 0},       {"Standard_D12_v2", "Dv2", 4, 0},
      {"Standard_D13_v2", "Dv2", 8, 0},       {"Standard_D14_v2", "Dv2", 16, 0},
      {"Standard_D2_v3", "Dv3", 2, 0},        {"Standard_D4_v3", "Dv3", 4, 0},
      {"Standard_D8_v3", "Dv3", 8, 0},        {"Standard_D16_v3", "Dv3", 16, 0},
      {"Standard_D32_v3", "Dv3", 32, 0},      {"Standard_D64_v3", "Dv3", 64, 0},
      {"Standard_F1", "F", 1, 0},             {"Standard_F2", "F", 2, 0},
      {"Standard_F4", "F", 4, 0},             {"Standard_F8", "F", 8, 0},
      {"Standard_F16", "F", 16, 0},           {"Standard_F2s_v2", "FSv2", 2, 0},
      {"Standard_F4s_v2", "FSv2", 4, 0},      {"Standard_F8s_v2", "FSv2", 8, 0},
      {"Standard_F16s_v2", "FSv2", 16, 0},    {"Standard_F32s_v2", "FSv2", 32, 0},
      {"Standard_F64s_v2", "FSv2", 64, 0},    {"Standard_F72s_v2", "FSv2", 72, 0},
      {"Standard_A1", "A0-A7", 1, 0},         {"Standard_A2", "A0-A7", 2, 0},
      {"Standard_A3", "A0-A7", 4, 0},         {"Standard_A4", "A0-A7", 8, 0},
      {"Standard_E2_v3", "Ev3", 2, 0},        {"Standard_E4_v3", "Ev3", 4, 0},
      {"Standard_E8_v3", "Ev3", 8, 0},        {"Standard_E16_v3", "Ev3", 16, 0},
      {"Standard_H8", "H", 8, 0},             {"Standard_H16", "H", 16, 0},
  };
  return table;
}

}  // namespace

VmSize vm_size_info(const std::string& vm_size) {
  for (const auto& v : vm_table())
    if (iequals(v.name, vm_size)) return v;
  // Unknown: family = the letters after "Standard_" up to the first digit, 1 vCPU.
  std::string rest = vm_size;
  if (rest.size() > 9 && iequals(rest.substr(0, 9), "Standard_")) rest = rest.substr(9);
  std::string family;
  for (char c : rest) {
    if (!std::isalpha(static_cast<unsigned char>(c))) break;
    family += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return {vm_size, family.empty() ? "Other" : family, 1, 0};
}

const std::vector<std::string>& vm_families() {
  static const std::vector<std::string> families = [] {
    std::vector<std::string> out;
    for (const auto& v : vm_table())
      if (std::find(out.begin(), out.end(), v.family) == out.end()) out.push_back(v.family);
    return out;
  }();
  return families;
}

}  // namespace batchai::control_plane
