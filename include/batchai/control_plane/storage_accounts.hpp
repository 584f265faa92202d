// `az storage account ...`: accounts live in a resource group; their names are global.
#pragma once
#include <optional>
#include <string>

#include "batchai/common/json_util.hpp"
#include "batchai/control_plane/list_page.hpp"

namespace batchai::control_plane {

class Context;

class StorageAccounts {
 public:
  StorageAccounts(const Context& cx)
      : cx_(cx) {}

  Json create(const std::string& resource_group, const std::string& name, const std::optional<std::string>& location,
              const std::string& sku, const std::string& kind);
  Json show(const std::optional<std::string>& resource_group, const std::string& name);
  Json list(const std::optional<std::string>& resource_group);
  Page list_page(const std::optional<std::string>& resource_group, const PageRequest& page);  // keyed by name
  void remove(const std::optional<std::string>& resource_group, const std::string& name);
  Json keys(const std::optional<std::string>& resource_group, const std::string& name);

 private:
  const Context& cx_;
};

}  // namespace batchai::control_plane
