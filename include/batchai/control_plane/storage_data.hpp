// `az storage share/directory/file/container/blob ...`: the data plane of storage accounts.
// Each call authenticates with the account key when one is given (wrong key: error), like az's
// data-plane commands; names and paths are confined to the account's folder.
#pragma once
#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "batchai/common/confined_path.hpp"
#include "batchai/common/json_util.hpp"

namespace batchai::control_plane {

class Context;

struct StorageAuth {
  std::string account_name;
  std::optional<std::string> account_key;
};

// Azure Files' largest file (4 TiB): a declared length above it is refused.
inline constexpr std::uint64_t kMaxShareFileBytes = 4ULL << 40;
// Azure's largest range in one Put Range (4 MiB).
inline constexpr std::uint64_t kMaxPutRangeBytes = 4ULL << 20;

// A share file or blob opened for reading, with what its answer headers need.
struct StoredFile {
  UniqueFd fd;
  std::uint64_t size = 0;
  std::string etag;
  struct timespec modified {};
};

class StorageData {
 public:
  StorageData(const Context& cx)
      : cx_(cx) {}

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
  // The REST data plane (`batchai serve`): Create File of a declared length (zeros; an existing
  // file is replaced, as Azure does), Put Range at an offset inside that length, and reads.
  Json file_create(const StorageAuth& auth, const std::string& share, const std::string& path, std::uint64_t length);
  Json file_write_range(const StorageAuth& auth, const std::string& share, const std::string& path,
                        std::uint64_t offset, std::string_view bytes);
  StoredFile file_open(const StorageAuth& auth, const std::string& share, const std::string& path);
  // Put Blob from bytes already in memory (the request body, bounded by the server).
  Json blob_put(const StorageAuth& auth, const std::string& container, const std::string& name, std::string_view bytes);
  // The same with the blob's bytes read from `source_fd` (at its start), e.g. an upload spooled
  // to disk by the server, so a large blob never sits whole in memory.
  Json blob_put_file(const StorageAuth& auth, const std::string& container, const std::string& name, int source_fd);
  StoredFile blob_open(const StorageAuth& auth, const std::string& container, const std::string& name);
  Json container_exists(const StorageAuth& auth, const std::string& container);

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
  const Context& cx_;
};

}  // namespace batchai::control_plane
