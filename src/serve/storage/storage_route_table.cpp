#include "storage/storage_route_table.hpp"

#include <openssl/evp.h>

#include <ctime>
#include <memory>

#include "storage/byte_reply.hpp"
#include "storage/shared_key.hpp"  // rfc1123, base64_encode
#include "storage/storage_xml.hpp"

namespace batchai::serve {
namespace {

using S = StorageService;
using L = PathLevel;

// Every data-plane operation served, in docs/serve-clients.md's order ("Routes"); the first row
// that matches wins. GET rows that answer properties or bytes take HEAD too; a listing is GET only.
const StorageRoute kRoutes[] = {
    {S::kFile, "GET", L::kAccount, "*", "list", share_list},
    {S::kFile, "PUT", L::kTop, "share", "", share_create},
    {S::kFile, "GET HEAD", L::kTop, "share", "", share_properties},
    {S::kFile, "DELETE", L::kTop, "share", "*", share_delete},
    {S::kFile, "GET", L::kTopOrBelow, "directory", "list", directory_list},
    {S::kFile, "PUT", L::kTopOrBelow, "directory", "", directory_create},
    {S::kFile, "GET HEAD", L::kTopOrBelow, "directory", "", directory_properties},
    {S::kFile, "DELETE", L::kTopOrBelow, "directory", "", directory_delete},
    {S::kFile, "PUT", L::kBelow, "", "range", file_put_range},
    {S::kFile, "PUT", L::kBelow, "", "", file_create},
    {S::kFile, "GET HEAD", L::kBelow, "", "", file_get},
    {S::kFile, "DELETE", L::kBelow, "", "", file_delete},
    {S::kBlob, "GET", L::kAccount, "*", "list", container_list},
    {S::kBlob, "GET", L::kTop, "container", "list", blob_list},
    {S::kBlob, "PUT", L::kTop, "container", "", container_create},
    {S::kBlob, "GET HEAD", L::kTop, "container", "", container_properties},
    {S::kBlob, "DELETE", L::kTop, "container", "", container_delete},
    {S::kBlob, "PUT", L::kBelow, "", "", blob_put},
    {S::kBlob, "GET HEAD", L::kBelow, "", "", blob_get},
    {S::kBlob, "DELETE", L::kBelow, "", "", blob_delete},
};

bool has_method(std::string_view methods, std::string_view method) {
  while (!methods.empty()) {
    const std::size_t end = methods.find(' ');
    if (methods.substr(0, end) == method) return true;
    if (end == std::string_view::npos) break;
    methods.remove_prefix(end + 1);
  }
  return false;
}

bool level_matches(PathLevel row, PathLevel level) {
  return row == level || (row == PathLevel::kTopOrBelow && (level == PathLevel::kTop || level == PathLevel::kBelow));
}

bool param_matches(std::string_view row, std::string_view value) { return row == "*" || row == value; }

}  // namespace

std::span<const StorageRoute> storage_route_table() { return kRoutes; }

const StorageRoute* match_storage_route(std::span<const StorageRoute> table, StorageService service,
                                        std::string_view method, PathLevel level, std::string_view restype,
                                        std::string_view comp) {
  for (const StorageRoute& row : table)
    if (row.service == service && has_method(row.methods, method) && level_matches(row.level, level) &&
        param_matches(row.restype, restype) && param_matches(row.comp, comp))
      return &row;
  return nullptr;
}

void reply_listing(Exchange& x, const std::string& xml) {
  x.res.status = 200;
  x.res.set_content(xml, "application/xml");
}

void reply_created(Exchange& x, const Json& stored) {
  x.res.status = 201;
  const std::string etag = stored.value("etag", Json("")).is_string() ? stored.value("etag", "") : "";
  x.res.set_header("ETag", etag.empty() ? "\"0x" + std::to_string(std::time(nullptr)) + "\"" : etag);
  const std::string modified =
      iso_to_rfc1123(stored.value("lastModified", Json("")).is_string() ? stored.value("lastModified", "") : "");
  x.res.set_header("Last-Modified", modified.empty() ? rfc1123(std::time(nullptr)) : modified);
  x.res.set_header("x-ms-request-server-encrypted", "false");
}

void reply_stored_file(Exchange& x, control_plane::StoredFile stored) {
  x.res.set_header("ETag", stored.etag);
  x.res.set_header("Last-Modified", rfc1123(stored.modified.tv_sec));
  x.res.set_header("x-ms-server-encrypted", "false");
  if (x.blob)
    x.res.set_header("x-ms-blob-type", "BlockBlob");
  else
    x.res.set_header("x-ms-type", "File");
  reply_bytes(x.req, x.res, std::make_shared<const UniqueFd>(std::move(stored.fd)), stored.size);
}

std::string md5_base64(const std::string& bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &len, EVP_md5(), nullptr);
  return base64_encode(std::string_view(reinterpret_cast<const char*>(digest), len));
}

}  // namespace batchai::serve
