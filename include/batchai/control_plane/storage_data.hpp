// `az storage share/directory/file/container/blob ...`: the data plane of storage accounts.
// Each call authenticates with the account key when one is given (wrong key: error), like az's
// data-plane commands; names and paths are confined to the account's folder.
#pragma once
#include <filesystem>
#include <optional>
#include <string>

#include "batchai/common/json_util.hpp"

namespace batchai::control_plane {

class ControlPlane;

struct StorageAuth {
  std::string account_name;
  std::optional<std::string> account_key;
};

class StorageData {
 public:
  explicit StorageData(ControlPlane& cp) : cp_(cp) {}

  Json share_create(const StorageAuth& auth, const std::string& share);
  Json share_delete(const StorageAuth& auth, const std::string& share);
  Json share_list(const StorageAuth& auth);
  Json share_exists(const StorageAuth& auth, const std::string& share);
  Json directory_create(const StorageAuth& auth, const std::string& share, const std::string& path);
  Json directory_delete(const StorageAuth& auth, const std::string& share, const std::string& path);
  Json directory_list(const StorageAuth& auth, const std::string& share, const std::string& path);
  Json file_upload(const StorageAuth& auth, const std::string& share, const std::filesystem::path& source,
                   const std::optional<std::string>& path);
  void file_download(const StorageAuth& auth, const std::string& share, const std::string& path,
                     const std::filesystem::path& dest);
  Json file_list(const StorageAuth& auth, const std::string& share, const std::optional<std::string>& path);
  Json file_delete(const StorageAuth& auth, const std::string& share, const std::string& path);
  Json container_create(const StorageAuth& auth, const std::string& container);
  Json container_delete(const StorageAuth& auth, const std::string& container);
  Json container_list(const StorageAuth& auth);
  Json blob_upload(const StorageAuth& auth, const std::string& container, const std::filesystem::path& file,
                   const std::string& name);
  Json blob_upload_batch(const StorageAuth& auth, const std::string& destination,
                         const std::filesystem::path& source, const std::optional<std::string>& pattern);
  void blob_download(const StorageAuth& auth, const std::string& container, const std::string& name,
                     const std::filesystem::path& file);
  Json blob_list(const StorageAuth& auth, const std::string& container, const std::optional<std::string>& prefix);
  Json blob_delete(const StorageAuth& auth, const std::string& container, const std::string& name);

  // Folder holding a share's or container's contents (mount targets for nodes and jobs).
  std::filesystem::path share_root(const std::string& account, const std::string& share) const;
  std::filesystem::path container_root(const std::string& account, const std::string& container) const;

 private:
  ControlPlane& cp_;
};

}  // namespace batchai::control_plane
