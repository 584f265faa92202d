// The Blob handlers of the storage route table (storage_route_table.hpp): containers and block
// blobs, answered from the control plane's StorageData, which confines every name beneath the
// container's folder. A Put Blob's body may arrive spooled to disk (http/http_server.hpp).
#include <ctime>
#include <optional>

#include "batchai/common/errors.hpp"
#include "storage/byte_reply.hpp"
#include "storage/shared_key.hpp"  // rfc1123, base64_encode
#include "storage/storage_route_table.hpp"
#include "storage/storage_xml.hpp"

namespace batchai::serve {
namespace {

// If-None-Match: * on a Put Blob: refused when the blob is there already.
bool blob_exists(Exchange& x) {
  try {
    x.data.blob_open(x.auth, x.top(), x.rest);
  } catch (const NotFound& e) {
    if (e.code() != "BlobNotFound") throw;
    return false;
  }
  return true;
}

}  // namespace

void container_list(Exchange& x) { reply_listing(x, container_list_xml(x.endpoint(), x.data.container_list(x.auth))); }

void blob_list(Exchange& x) {
  const std::string prefix = x.param("prefix");
  const auto prefix_opt = prefix.empty() ? std::nullopt : std::optional<std::string>(prefix);
  reply_listing(x, blob_list_xml(x.endpoint(), x.top(), prefix, x.data.blob_list(x.auth, x.top(), prefix_opt)));
}

void container_create(Exchange& x) {
  if (!x.data.container_create(x.auth, x.top()).value("created", false))
    return reply_storage_error(x.res, 409, "ContainerAlreadyExists", "The specified container already exists.");
  reply_created(x);
}

void container_properties(Exchange& x) {
  if (!x.data.container_exists(x.auth, x.top()).value("exists", false))
    return reply_storage_error(x.res, 404, "ContainerNotFound", "The specified container does not exist.");
  x.res.status = 200;
  x.res.set_header("Last-Modified", rfc1123(std::time(nullptr)));
  x.res.set_header("x-ms-lease-status", "unlocked");
  x.res.set_header("x-ms-lease-state", "available");
}

void container_delete(Exchange& x) {
  if (!x.data.container_delete(x.auth, x.top()).value("deleted", false))
    return reply_storage_error(x.res, 404, "ContainerNotFound", "The specified container does not exist.");
  x.res.status = 202;
}

void blob_put(Exchange& x) {
  if (x.header("x-ms-blob-type") != "BlockBlob")
    return reply_storage_error(x.res, 400, "InvalidHeaderValue", "Only block blobs (x-ms-blob-type: BlockBlob) are served.");
  if (x.header("If-None-Match") == "*" && blob_exists(x))
    return reply_storage_error(x.res, 409, "BlobAlreadyExists", "The specified blob already exists.");
  if (x.req.spooled) {  // the body arrived on disk, hashed on the way
    reply_created(x, x.data.blob_put_file(x.auth, x.top(), x.rest, x.req.spooled->fd.get()));
    x.res.set_header("Content-MD5", base64_encode(x.req.spooled->md5));
    return;
  }
  reply_created(x, x.data.blob_put(x.auth, x.top(), x.rest, x.req.body));
  x.res.set_header("Content-MD5", md5_base64(x.req.body));
}

void blob_get(Exchange& x) { reply_stored_file(x, x.data.blob_open(x.auth, x.top(), x.rest)); }

void blob_delete(Exchange& x) {
  x.data.blob_delete(x.auth, x.top(), x.rest);
  x.res.status = 202;
}

}  // namespace batchai::serve
