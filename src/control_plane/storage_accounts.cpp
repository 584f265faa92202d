// `az storage account ...`: storage accounts, their keys and their folders.
#include "batchai/control_plane/storage_accounts.hpp"

#include <algorithm>
#include <filesystem>
#include <random>

#include "batchai/common/ids.hpp"
#include "context.hpp"
#include "store/resources.hpp"
#include "location_rules.hpp"
#include "store/store.hpp"

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

// The account `name`, in group `rg` when one is given; the service's not-found error otherwise.
AccountRow account_in(Store& store, const std::optional<std::string>& rg, const std::string& name) {
  auto account = find_account(store, name);
  if (!account || (rg && account->group_lc != to_lower(*rg))) account_not_found(rg, name);
  return *account;
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
    if (auto existing = find_account(cx_.store(), name)) {
      if (existing->group_lc != to_lower(resource_group))
        throw AlreadyExists("The storage account named " + name + " is already taken. Choose another name.",
                            "StorageAccountAlreadyTaken");
      return existing->doc;  // create is an idempotent PUT
    }
    const std::string loc = given.value_or(group.location);
    Json d = account_doc(group.name, name, loc, sku.empty() ? "Standard_RAGRS" : sku, kind.empty() ? "Storage" : kind,
                         format_iso(cx_.clock().now()));
    const std::string key1 = new_account_key();
    insert_account(cx_.store(), name, resource_group, loc, {key1, new_account_key()}, d);
    return d;
  });
  std::error_code ec;
  std::filesystem::create_directories(cx_.layout().storage_account(name) / "shares", ec);
  std::filesystem::create_directories(cx_.layout().storage_account(name) / "blobs", ec);
  return doc;
}

Json StorageAccounts::show(const std::optional<std::string>& resource_group, const std::string& name) {
  return cx_.store().read([&] {
    return account_in(cx_.store(), resource_group, name).doc;
  });
}

Json StorageAccounts::list(const std::optional<std::string>& resource_group) {
  return cx_.store().read([&] {
    if (resource_group) require_group(cx_.store(), *resource_group);
    return account_docs(cx_.store(), resource_group);
  });
}

void StorageAccounts::remove(const std::optional<std::string>& resource_group, const std::string& name) {
  cx_.store().write([&] {
    account_in(cx_.store(), resource_group, name);
    trash(cx_.store(), cx_.layout().storage_account(name));
    delete_account(cx_.store(), name);
  });
  cx_.empty_trash();
}

Json StorageAccounts::keys(const std::optional<std::string>& resource_group, const std::string& name) {
  return cx_.store().read([&] {
    const AccountRow account = account_in(cx_.store(), resource_group, name);
    return Json::array({{{"keyName", "key1"}, {"permissions", "Full"}, {"value", account.key1}},
                        {{"keyName", "key2"}, {"permissions", "Full"}, {"value", account.key2}}});
  });
}

}  // namespace batchai::control_plane
