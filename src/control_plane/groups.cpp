// `az group ...` and `az storage account ...`: resource groups and storage accounts.
#include <algorithm>
#include <random>

#include "batchai/common/ids.hpp"
#include "batchai/control_plane/control_plane.hpp"
#include "batchai/control_plane/jobs.hpp"
#include "store.hpp"
#include "internal.hpp"

namespace batchai::control_plane {

using namespace detail;

namespace {

void validate_group_name(const std::string& name) {
  bool ok = !name.empty() && name.size() <= 90 && name.back() != '.' &&
            std::all_of(name.begin(), name.end(), [](unsigned char c) {
              return std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '(' || c == ')';
            });
  if (!ok)
    throw InvalidArgument("Resource group names only allow up to 90 alphanumeric characters, periods, underscores, "
                          "hyphens and parenthesis and cannot end in a period: '" + name + "'.");
}

std::string normalize_location(const std::string& location) {
  std::string out;
  for (char c : location)
    if (c != ' ') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (out.empty()) throw InvalidArgument("Please provide a location, e.g. --location eastus.");
  return out;
}

void validate_account_name(const std::string& name) {
  bool ok = name.size() >= 3 && name.size() <= 24 && std::all_of(name.begin(), name.end(), [](unsigned char c) {
              return std::islower(c) || std::isdigit(c);
            });
  if (!ok)
    throw InvalidArgument("The storage account named " + name +
                          " is not valid. Storage account name must be between 3 and 24 characters in length and "
                          "use numbers and lower-case letters only.");
}

// Storage keys look like Azure's: base64 of 64 random bytes.
std::string new_account_key() {
  static const char* chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::random_device rd;
  std::string bytes;
  for (int i = 0; i < 64; ++i) bytes += static_cast<char>(rd() & 0xFF);
  std::string out;
  int val = 0, bits = -6;
  for (unsigned char c : bytes) {
    val = (val << 8) + c;
    bits += 8;
    while (bits >= 0) {
      out += chars[(val >> bits) & 0x3F];
      bits -= 6;
    }
  }
  if (bits > -6) out += chars[((val << 8) >> (bits + 8)) & 0x3F];
  while (out.size() % 4) out += '=';
  return out;
}

Json account_doc(const std::string& rg, const std::string& name, const std::string& location, const std::string& sku,
                 const std::string& kind, const std::string& created) {
  const std::string base = "https://" + name + ".";
  auto underscore = sku.find('_');
  std::string tier = underscore == std::string::npos ? sku : sku.substr(0, underscore);
  return {{"accessTier", kind == "BlobStorage" ? Json("Hot") : Json(nullptr)},
          {"creationTime", created},
          {"customDomain", nullptr},
          {"enableHttpsTrafficOnly", false},
          {"encryption",
           {{"keySource", "Microsoft.Storage"},
            {"keyVaultProperties", nullptr},
            {"services",
             {{"blob", {{"enabled", true}, {"lastEnabledTime", created}}},
              {"file", {{"enabled", true}, {"lastEnabledTime", created}}},
              {"queue", nullptr},
              {"table", nullptr}}}}},
          {"id", arm_id(subscription_id(), rg, {{"storageAccounts", name}}, "Microsoft.Storage")},
          {"identity", nullptr},
          {"kind", kind},
          {"lastGeoFailoverTime", nullptr},
          {"location", location},
          {"name", name},
          {"networkRuleSet",
           {{"bypass", "AzureServices"},
            {"defaultAction", "Allow"},
            {"ipRules", Json::array()},
            {"virtualNetworkRules", Json::array()}}},
          {"primaryEndpoints",
           {{"blob", base + "blob.core.windows.net/"},
            {"file", base + "file.core.windows.net/"},
            {"queue", base + "queue.core.windows.net/"},
            {"table", base + "table.core.windows.net/"}}},
          {"primaryLocation", location},
          {"provisioningState", "Succeeded"},
          {"resourceGroup", rg},
          {"secondaryEndpoints", nullptr},
          {"secondaryLocation", nullptr},
          {"sku", {{"capabilities", nullptr}, {"kind", nullptr}, {"locations", nullptr}, {"name", sku},
                   {"resourceType", nullptr}, {"restrictions", nullptr}, {"tier", tier}}},
          {"statusOfPrimary", "available"},
          {"statusOfSecondary", nullptr},
          {"tags", Json::object()},
          {"type", "Microsoft.Storage/storageAccounts"}};
}

[[noreturn]] void account_not_found(const std::optional<std::string>& rg, const std::string& name) {
  if (rg)
    throw NotFound("The Resource 'Microsoft.Storage/storageAccounts/" + name + "' under resource group '" + *rg +
                       "' was not found.",
                   "ResourceNotFound");
  throw NotFound("The storage account '" + name + "' was not found. Create it with 'batchai storage account create'.",
                 "StorageAccountNotFound");
}

}  // namespace

// ---- resource groups ----

Json ControlPlane::group_create(const std::string& name, const std::string& location, const std::optional<Json>& tags) {
  validate_group_name(name);
  const std::string loc = normalize_location(location);
  Json doc = store_->write([&] {
    if (auto existing = find_group(*store_, name)) {
      if (existing->location != loc)
        throw InvalidArgument("Invalid resource group location '" + loc + "'. The Resource group already exists in "
                              "location '" + existing->location + "'.");
      auto st = store_->prepare("SELECT doc FROM resource_groups WHERE name_lc = ?");
      st.bind(1, to_lower(name));
      st.step();
      Json d = parse_doc(st.text(0));
      if (tags) {
        d["tags"] = *tags;
        store_->prepare("UPDATE resource_groups SET doc = ? WHERE name_lc = ?").bind(1, dump_doc(d)).bind(2, to_lower(name)).run();
      }
      return d;
    }
    Json d = {{"id", arm_id(subscription_id(), name, {})},
              {"location", loc},
              {"managedBy", nullptr},
              {"name", name},
              {"properties", {{"provisioningState", "Succeeded"}}},
              {"tags", tags ? *tags : Json(nullptr)},
              {"type", "Microsoft.Resources/resourceGroups"}};
    store_->prepare("INSERT INTO resource_groups(name_lc, name, location, doc) VALUES (?, ?, ?, ?)")
        .bind(1, to_lower(name)).bind(2, name).bind(3, loc).bind(4, dump_doc(d)).run();
    return d;
  });
  return doc;
}

Json ControlPlane::group_show(const std::string& name) {
  reconcile();
  return store_->read([&] {
    auto st = store_->prepare("SELECT doc FROM resource_groups WHERE name_lc = ?");
    st.bind(1, to_lower(name));
    if (!st.step()) require_group(*store_, name);
    return parse_doc(st.text(0));
  });
}

Json ControlPlane::group_list() {
  reconcile();
  return store_->read([&] {
    Json out = Json::array();
    auto st = store_->prepare("SELECT doc FROM resource_groups ORDER BY name_lc");
    while (st.step()) out.push_back(parse_doc(st.text(0)));
    return out;
  });
}

bool ControlPlane::group_exists(const std::string& name) {
  return store_->read([&] { return find_group(*store_, name).has_value(); });
}

void ControlPlane::group_delete(const std::string& name) {
  store_->write([&] {
    const GroupRow group = require_group(*store_, name);
    std::vector<std::pair<std::int64_t, std::string>> workspaces;
    {
      auto st = store_->prepare("SELECT id, name FROM workspaces WHERE rg_lc = ?");
      st.bind(1, to_lower(name));
      while (st.step()) workspaces.emplace_back(st.integer(0), st.text(1));
    }
    const std::string with = " with its resource group '" + group.name + "'";
    for (const auto& [id, workspace] : workspaces) end_jobs_of_workspace(id, workspace, with);
    std::vector<std::string> accounts;
    {
      auto st = store_->prepare("SELECT name_lc FROM storage_accounts WHERE rg_lc = ?");
      st.bind(1, to_lower(name));
      while (st.step()) accounts.push_back(st.text(0));
    }
    for (const auto& a : accounts) trash(*store_, layout_.storage_account(a));
    trash(*store_, settings_.home / "clusters" / to_lower(name));
    trash(*store_, settings_.home / "fileservers" / to_lower(name));
    // Workspaces, clusters, nodes, experiments, file servers and accounts go by ON DELETE CASCADE.
    store_->prepare("DELETE FROM resource_groups WHERE name_lc = ?").bind(1, to_lower(name)).run();
  });
  empty_trash();
}

// ---- storage accounts ----

Json ControlPlane::storage_account_create(const std::string& resource_group, const std::string& name,
                                          const std::optional<std::string>& location, const std::string& sku,
                                          const std::string& kind) {
  validate_account_name(name);
  Json doc = store_->write([&] {
    auto group = require_group(*store_, resource_group);
    auto st = store_->prepare("SELECT rg_lc, doc FROM storage_accounts WHERE name_lc = ?");
    st.bind(1, name);
    if (st.step()) {
      if (st.text(0) != to_lower(resource_group))
        throw AlreadyExists("The storage account named " + name + " is already taken. Choose another name.",
                            "StorageAccountAlreadyTaken");
      return parse_doc(st.text(1));  // create is an idempotent PUT
    }
    std::string loc = location ? normalize_location(*location) : group.location;
    Json d = account_doc(group.name, name, loc, sku.empty() ? "Standard_RAGRS" : sku, kind.empty() ? "Storage" : kind,
                         format_iso(clock_->now()));
    store_->prepare("INSERT INTO storage_accounts(name_lc, rg_lc, location, key1, key2, doc) VALUES (?,?,?,?,?,?)")
        .bind(1, name).bind(2, to_lower(resource_group)).bind(3, loc).bind(4, new_account_key())
        .bind(5, new_account_key()).bind(6, dump_doc(d)).run();
    return d;
  });
  std::error_code ec;
  std::filesystem::create_directories(layout_.storage_account(name) / "shares", ec);
  std::filesystem::create_directories(layout_.storage_account(name) / "blobs", ec);
  return doc;
}

Json ControlPlane::storage_account_show(const std::optional<std::string>& resource_group, const std::string& name) {
  return store_->read([&] {
    auto st = store_->prepare("SELECT rg_lc, doc FROM storage_accounts WHERE name_lc = ?");
    st.bind(1, to_lower(name));
    if (!st.step() || (resource_group && st.text(0) != to_lower(*resource_group)))
      account_not_found(resource_group, name);
    return parse_doc(st.text(1));
  });
}

Json ControlPlane::storage_account_list(const std::optional<std::string>& resource_group) {
  return store_->read([&] {
    if (resource_group) require_group(*store_, *resource_group);
    Json out = Json::array();
    auto st = store_->prepare(
        "SELECT doc FROM storage_accounts WHERE ?1 IS NULL OR rg_lc = ?1 ORDER BY name_lc");
    st.bind(1, resource_group ? std::optional<std::string>(to_lower(*resource_group)) : std::nullopt);
    while (st.step()) out.push_back(parse_doc(st.text(0)));
    return out;
  });
}

void ControlPlane::storage_account_delete(const std::optional<std::string>& resource_group, const std::string& name) {
  store_->write([&] {
    auto st = store_->prepare("SELECT rg_lc FROM storage_accounts WHERE name_lc = ?");
    st.bind(1, to_lower(name));
    if (!st.step() || (resource_group && st.text(0) != to_lower(*resource_group)))
      account_not_found(resource_group, name);
    trash(*store_, layout_.storage_account(name));
    store_->prepare("DELETE FROM storage_accounts WHERE name_lc = ?").bind(1, to_lower(name)).run();
  });
  empty_trash();
}

Json ControlPlane::storage_account_keys(const std::optional<std::string>& resource_group, const std::string& name) {
  return store_->read([&] {
    auto st = store_->prepare("SELECT rg_lc, key1, key2 FROM storage_accounts WHERE name_lc = ?");
    st.bind(1, to_lower(name));
    if (!st.step() || (resource_group && st.text(0) != to_lower(*resource_group)))
      account_not_found(resource_group, name);
    return Json::array({{{"keyName", "key1"}, {"permissions", "Full"}, {"value", st.text(1)}},
                        {{"keyName", "key2"}, {"permissions", "Full"}, {"value", st.text(2)}}});
  });
}

}  // namespace batchai::control_plane
