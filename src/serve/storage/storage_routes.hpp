// The storage data plane of `batchai serve` (docs/serve.md "The storage data plane"): requests
// whose Host is ACCOUNT.file.core.localhost[:PORT] (Azure Files) or ACCOUNT.blob.core.localhost
// (Blob), authenticated with SharedKey under the account's keys and answered from the control
// plane's StorageData, which confines every name and path.
#pragma once
#include <cstddef>
#include <optional>
#include <string>

#include "http/http_message.hpp"

#include "batchai/control_plane/control_plane.hpp"

namespace batchai::serve {

struct StorageTarget {
  bool blob = false;    // false: Azure Files
  std::string account;  // lower-case, as the Host names it
  std::string host;     // the Host header as sent (for ServiceEndpoint)
};

// The data-plane target the Host names; nullopt for any other host (the ARM API).
std::optional<StorageTarget> storage_target(const HttpRequest& req);
// A Put Blob (PUT with x-ms-blob-type and no comp=): the one request whose body may exceed the
// server's 4 MiB, up to HttpLimits::max_put_blob_bytes (azure-storage-blob sends blobs up to
// 64 MiB whole); spooled to disk as it arrives.
bool is_put_blob(const HttpRequest& req, const StorageTarget& target);
// The answer refusing the request when its SharedKey signature (headers only) does not hold;
// nullopt when it does. Lets the server refuse before reading a body.
std::optional<HttpResponse> storage_refusal(const HttpRequest& req, const StorageTarget& target,
                                            control_plane::ControlPlane& cp);
// Answers the request (Storage's XML errors included; never throws).
void handle_storage(const HttpRequest& req, HttpResponse& res, const StorageTarget& target,
                    control_plane::ControlPlane& cp);

}  // namespace batchai::serve
