// The Azure Files handlers of the storage route table (storage_route_table.hpp): shares,
// directories and files, answered from the control plane's StorageData, which confines every
// name and path beneath the share's folder.
#include <ctime>
#include <optional>

#include "batchai/common/ids.hpp"
#include "storage/byte_reply.hpp"
#include "storage/shared_key.hpp"  // rfc1123
#include "storage/storage_route_table.hpp"
#include "storage/storage_xml.hpp"

namespace batchai::serve {
namespace {

namespace cp = control_plane;

// The directory the request names below its share; nullopt for the share's root.
std::optional<std::string> directory_of(const Exchange& x) {
  return x.rest.empty() ? std::nullopt : std::optional<std::string>(x.rest);
}

}  // namespace

void share_list(Exchange& x) { reply_listing(x, share_list_xml(x.endpoint(), x.data.share_list(x.auth))); }

void share_create(Exchange& x) {
  if (!x.data.share_create(x.auth, x.top()).value("created", false))
    return reply_storage_error(x.res, 409, "ShareAlreadyExists", "The specified share already exists.");
  reply_created(x);
}

void share_properties(Exchange& x) {
  if (!x.data.share_exists(x.auth, x.top()).value("exists", false))
    return reply_storage_error(x.res, 404, "ShareNotFound", "The specified share does not exist.");
  x.res.status = 200;
  x.res.set_header("x-ms-share-quota", "5120");
  x.res.set_header("Last-Modified", rfc1123(std::time(nullptr)));
}

void share_delete(Exchange& x) {
  if (!x.data.share_delete(x.auth, x.top()).value("deleted", false))
    return reply_storage_error(x.res, 404, "ShareNotFound", "The specified share does not exist.");
  x.res.status = 202;
}

void directory_list(Exchange& x) {
  reply_listing(x, directory_list_xml(x.endpoint(), x.top(), x.rest, x.data.file_list(x.auth, x.top(), directory_of(x))));
}

void directory_create(Exchange& x) {
  if (!x.data.directory_create(x.auth, x.top(), x.rest).value("created", false))
    return reply_storage_error(x.res, 409, "ResourceAlreadyExists", "The specified resource already exists.");
  reply_created(x);
}

void directory_properties(Exchange& x) {
  x.data.file_list(x.auth, x.top(), directory_of(x));  // NotFound when it is not a directory
  x.res.status = 200;
  x.res.set_header("Last-Modified", rfc1123(std::time(nullptr)));
}

void directory_delete(Exchange& x) {
  if (!x.data.directory_delete(x.auth, x.top(), x.rest).value("deleted", false))
    return reply_storage_error(x.res, 404, "ResourceNotFound", "The specified resource does not exist.");
  x.res.status = 202;
}

// Put Range: x-ms-range names where the body goes; at most 4 MiB, inside the declared length.
void file_put_range(Exchange& x) {
  auto range = parse_range(range_header(x.req));
  if (!range || !range->end)
    return reply_storage_error(x.res, 400, "InvalidHeaderValue", "x-ms-range must be bytes=START-END.");
  const std::uint64_t length = *range->end - range->start + 1;
  if (length > cp::kMaxPutRangeBytes)
    return reply_storage_error(x.res, 413, "RequestBodyTooLarge", "A range may hold at most 4 MiB (4194304 bytes).");
  if (x.header("x-ms-write") != "update")
    return reply_storage_error(x.res, 400, "InvalidHeaderValue", "Only x-ms-write: update is served (clear is not).");
  if (x.req.body.size() != length)
    return reply_storage_error(x.res, 400, "InvalidHeaderValue", "The body's length differs from the range's.");
  reply_created(x, x.data.file_write_range(x.auth, x.top(), x.rest, range->start, x.req.body));
  x.res.set_header("Content-MD5", md5_base64(x.req.body));
}

// Create File: the declared length (sparse, at most 4 TiB), no body; Put Range fills it.
void file_create(Exchange& x) {
  if (to_lower(x.header("x-ms-type")) != "file")
    return reply_storage_error(x.res, 400, "InvalidHeaderValue", "Create File needs x-ms-type: file.");
  auto length = parse_count(x.header("x-ms-content-length"));
  if (!length || *length > cp::kMaxShareFileBytes)
    return reply_storage_error(x.res, 400, "InvalidHeaderValue",
                               "x-ms-content-length must be a length of at most 4 TiB (4398046511104 bytes).");
  if (!x.req.body.empty()) return reply_storage_error(x.res, 400, "InvalidInput", "Create File takes no body.");
  reply_created(x, x.data.file_create(x.auth, x.top(), x.rest, *length));
}

void file_get(Exchange& x) { reply_stored_file(x, x.data.file_open(x.auth, x.top(), x.rest)); }

void file_delete(Exchange& x) {
  x.data.file_delete(x.auth, x.top(), x.rest);
  x.res.status = 202;
}

}  // namespace batchai::serve
