#include "auto_storage.hpp"

#include "batchai/common/ids.hpp"
#include "batchai/common/log.hpp"
#include "batchai/control_plane/groups.hpp"
#include "batchai/control_plane/storage_accounts.hpp"
#include "batchai/control_plane/storage_data.hpp"
#include "context.hpp"
#include "store/resources.hpp"

namespace batchai::control_plane {

using namespace detail;

namespace {
constexpr const char* kAutoStorageGroup = "batchaiautostorage";
}  // namespace

std::string AutoStorage::account_in(const std::string& location) {
  Store& store = cx_.store();
  if (store.read([&] { return find_group(store, kAutoStorageGroup).has_value(); })) {
    log::warning("BatchAI will use existing batchaiautostorage resource group for auto-storage account");
  } else {
    log::warning("Creating batchaiautostorage resource group for auto-storage account");
    groups_.create(kAutoStorageGroup, location, std::nullopt);
  }
  std::string account =
      store.read([&] { return first_account_in(store, kAutoStorageGroup, location).value_or(std::string()); });
  if (!account.empty()) log::warning("Using existing " + account + " storage account as an auto-storage account");
  while (account.empty()) {
    std::string candidate = "bai" + random_string(12);
    try {
      accounts_.create(kAutoStorageGroup, candidate, location, "Standard_LRS", "Storage");
      account = candidate;
      log::warning("Created auto storage account " + account);
    } catch (const AlreadyExists&) {
    }
  }
  return account;
}

void AutoStorage::add_mounts(const std::string& location, Json& mounts) {
  const std::string account = account_in(location);
  const std::string key = account_key(cx_.store(), account).value_or("");
  data_.share_create({account, key}, "batchaishare");
  data_.container_create({account, key}, "batchaicontainer");
  auto append = [&](const char* list, Json entry) {
    if (!mounts.contains(list) || !mounts[list].is_array()) mounts[list] = Json::array();
    mounts[list].push_back(std::move(entry));
  };
  append("azureFileShares", {{"accountName", account},
                             {"azureFileUrl", "https://" + account + ".file.core.windows.net/batchaishare"},
                             {"credentials", {{"accountKey", key}}},
                             {"relativeMountPath", "autoafs"}});
  append("azureBlobFileSystems", {{"accountName", account},
                                  {"containerName", "batchaicontainer"},
                                  {"credentials", {{"accountKey", key}}},
                                  {"relativeMountPath", "autobfs"}});
}

}  // namespace batchai::control_plane
