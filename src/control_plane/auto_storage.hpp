// --use-auto-storage of cluster create: the batchaiautostorage resource group, a storage account
// in the cluster's location with share `batchaishare` and container `batchaicontainer`, made (or
// reused) through the storage services, as the original does through the storage API.
#pragma once
#include <string>

#include "batchai/common/json_util.hpp"

namespace batchai::control_plane {

class Groups;
class StorageAccounts;
class StorageData;
class Context;

class AutoStorage {
 public:
  AutoStorage(const Context& cx, Groups& groups, StorageAccounts& accounts, StorageData& data)
      : cx_(cx), groups_(groups), accounts_(accounts), data_(data) {}
  // Appends the auto-storage share and container to `mounts` (wire-form mountVolumes).
  void add_mounts(const std::string& location, Json& mounts);

 private:
  std::string account_in(const std::string& location);

  const Context& cx_;
  Groups& groups_;
  StorageAccounts& accounts_;
  StorageData& data_;
};

}  // namespace batchai::control_plane
