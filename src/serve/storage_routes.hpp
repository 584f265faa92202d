// The storage data plane of `batchai serve` (docs/serve.md "The storage data plane"): requests
// whose Host is ACCOUNT.file.core.localhost[:PORT] (Azure Files) or ACCOUNT.blob.core.localhost
// (Blob), authenticated with SharedKey under the account's keys and answered from the control
// plane's StorageData, which confines every name and path.
#pragma once
#include <cstddef>
#include <optional>
#include <string>

#include <httplib.h>

#include "batchai/control_plane/control_plane.hpp"

namespace batchai::serve {

struct StorageTarget {
  bool blob = false;    // false: Azure Files
  std::string account;  // lower-case, as the Host names it
  std::string host;     // the Host header as sent (for ServiceEndpoint)
};

// The data-plane target the Host names; nullopt for any other host (the ARM API).
std::optional<StorageTarget> storage_target(const httplib::Request& req);
// A Put Blob (PUT with x-ms-blob-type and no comp=): the one request whose body may exceed the
// server's 4 MiB, up to kMaxPutBlobBytes (azure-storage-blob sends blobs up to 64 MiB whole).
bool is_put_blob(const httplib::Request& req, const StorageTarget& target);
inline constexpr std::size_t kMaxPutBlobBytes = 64 * 1024 * 1024;
// Answers the request (Storage's XML errors included; never throws).
void handle_storage(const httplib::Request& req, httplib::Response& res, const StorageTarget& target,
                    control_plane::ControlPlane& cp);

}  // namespace batchai::serve
