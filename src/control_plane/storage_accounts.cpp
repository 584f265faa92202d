// `az storage account ...`: storage accounts, their keys and their folders.
#include "batchai/control_plane/storage_accounts.hpp"

#include <algorithm>
#include <filesystem>
#include <random>

#include "batchai/common/ids.hpp"
#include "context.hpp"
#include "rows.hpp"
#include "location_rules.hpp"
#include "store.hpp"

namespace batchai::control_plane {

using namespace detail;

namespace {

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

Json StorageAccounts::create(const std::string& resource_group, const std::string& name,
                                          const std::optional<std::string>& location, const std::string& sku,
                                          const std::string& kind) {
  validate_account_name(name);
  // Checked before anything is looked up: a bad location is refused even for an existing account.
  const std::optional<std::string> given =
      location ? std::optional<std::string>(canonical_location(*location, "Microsoft.Storage/storageAccounts"))
               : std::nullopt;
  Json doc = cx_.store().write([&] {
    auto group = require_group(cx_.store(), resource_group);
    auto st = cx_.store().prepare("SELECT rg_lc, doc FROM storage_accounts WHERE name_lc = ?");
    st.bind(1, name);
    if (st.step()) {
      if (st.text(0) != to_lower(resource_group))
        throw AlreadyExists("The storage account named " + name + " is already taken. Choose another name.",
                            "StorageAccountAlreadyTaken");
      return parse_doc(st.text(1));  // create is an idempotent PUT
    }
    const std::string loc = given.value_or(group.location);
    Json d = account_doc(group.name, name, loc, sku.empty() ? "Standard_RAGRS" : sku, kind.empty() ? "Storage" : kind,
                         format_iso(cx_.clock().now()));
    cx_.store().prepare("INSERT INTO storage_accounts(name_lc, rg_lc, location, key1, key2, doc) VALUES (?,?,?,?,?,?)")
        .bind(1, name).bind(2, to_lower(resource_group)).bind(3, loc).bind(4, new_account_key())
        .bind(5, new_account_key()).bind(6, dump_doc(d)).run();
    return d;
  });
  std::error_code ec;
  std::filesystem::create_directories(cx_.layout().storage_account(name) / "shares", ec);
  std::filesystem::create_directories(cx_.layout().storage_account(name) / "blobs", ec);
  return doc;
}

Json StorageAccounts::show(const std::optional<std::string>& resource_group, const std::string& name) {
  return cx_.store().read([&] {
    auto st = cx_.store().prepare("SELECT rg_lc, doc FROM storage_accounts WHERE name_lc = ?");
    st.bind(1, to_lower(name));
    if (!st.step() || (resource_group && st.text(0) != to_lower(*resource_group)))
      account_not_found(resource_group, name);
    return parse_doc(st.text(1));
  });
}

Json StorageAccounts::list(const std::optional<std::string>& resource_group) {
  return cx_.store().read([&] {
    if (resource_group) require_group(cx_.store(), *resource_group);
    Json out = Json::array();
    auto st = cx_.store().prepare(
        "SELECT doc FROM storage_accounts WHERE ?1 IS NULL OR rg_lc = ?1 ORDER BY name_lc");
    st.bind(1, resource_group ? std::optional<std::string>(to_lower(*resource_group)) : std::nullopt);
    while (st.step()) out.push_back(parse_doc(st.text(0)));
    return out;
  });
}

void StorageAccounts::remove(const std::optional<std::string>& resource_group, const std::string& name) {
  cx_.store().write([&] {
    auto st = cx_.store().prepare("SELECT rg_lc FROM storage_accounts WHERE name_lc = ?");
    st.bind(1, to_lower(name));
    if (!st.step() || (resource_group && st.text(0) != to_lower(*resource_group)))
      account_not_found(resource_group, name);
    trash(cx_.store(), cx_.layout().storage_account(name));
    cx_.store().prepare("DELETE FROM storage_accounts WHERE name_lc = ?").bind(1, to_lower(name)).run();
  });
  cx_.empty_trash();
}

Json StorageAccounts::keys(const std::optional<std::string>& resource_group, const std::string& name) {
  return cx_.store().read([&] {
    auto st = cx_.store().prepare("SELECT rg_lc, key1, key2 FROM storage_accounts WHERE name_lc = ?");
    st.bind(1, to_lower(name));
    if (!st.step() || (resource_group && st.text(0) != to_lower(*resource_group)))
      account_not_found(resource_group, name);
    return Json::array({{{"keyName", "key1"}, {"permissions", "Full"}, {"value", st.text(1)}},
                        {{"keyName", "key2"}, {"permissions", "Full"}, {"value", st.text(2)}}});
  });
}

}  // namespace batchai::control_plane
