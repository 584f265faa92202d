#include "storage/storage_routes.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <ctime>
#include <memory>

#include "batchai/common/errors.hpp"
#include "batchai/common/ids.hpp"
#include "storage/byte_reply.hpp"
#include "storage/shared_key.hpp"
#include "storage/storage_xml.hpp"

namespace batchai::serve {
namespace {

namespace cp = control_plane;

constexpr std::string_view kFileSuffix = ".file.core.localhost";
constexpr std::string_view kBlobSuffix = ".blob.core.localhost";
constexpr const char* kDefaultVersion = "2021-06-08";

struct Exchange {
  const HttpRequest& req;
  HttpResponse& res;
  const StorageTarget& target;
  cp::StorageData& data;
  cp::StorageAuth auth;          // already authenticated: no key
  std::vector<std::string> segs;  // the path's non-empty segments, decoded
  std::string rest;               // segments after the share or container, joined with '/'

  std::string param(const char* name) const { return req.has_param(name) ? req.get_param_value(name) : ""; }
  std::string header(const char* name) const { return req.has_header(name) ? req.get_header_value(name) : ""; }
  bool is_read() const { return req.method == "GET" || req.method == "HEAD"; }
  std::string endpoint() const { return "https://" + target.host + "/"; }
};

// The Storage error for the exception being handled: the service's code, a status by kind.
void reply_exception(HttpResponse& res) {
  try {
    throw;
  } catch (const NotFound& e) {
    reply_storage_error(res, 404, e.code() == "Error" ? "ResourceNotFound" : e.code(), e.what());
  } catch (const AlreadyExists& e) {
    reply_storage_error(res, 409, e.code() == "Error" ? "ResourceAlreadyExists" : e.code(), e.what());
  } catch (const Conflict& e) {
    reply_storage_error(res, 409, e.code() == "Error" ? "Conflict" : e.code(), e.what());
  } catch (const InvalidArgument& e) {
    const bool range = e.code() == "InvalidRange";
    reply_storage_error(res, range ? 416 : 400, e.code() == "Error" ? "InvalidInput" : e.code(), e.what());
  } catch (const UsageError& e) {
    reply_storage_error(res, 400, "InvalidInput", e.what());
  } catch (const std::exception& e) {
    reply_storage_error(res, 500, "InternalError", e.what());
  } catch (...) {
    reply_storage_error(res, 500, "InternalError", "The server failed with an unknown error.");
  }
}

void unsupported(Exchange& x) {
  reply_storage_error(x.res, 400, "UnsupportedHttpVerb",
              "batchai serve does not serve " + x.req.method + " with these parameters on this resource.");
}

void xml(Exchange& x, const std::string& body) {
  x.res.status = 200;
  x.res.set_content(body, "application/xml");
}

void created(Exchange& x, const Json& stored = Json::object()) {
  x.res.status = 201;
  const std::string etag = stored.value("etag", Json("")).is_string() ? stored.value("etag", "") : "";
  x.res.set_header("ETag", etag.empty() ? "\"0x" + std::to_string(std::time(nullptr)) + "\"" : etag);
  const std::string modified = iso_to_rfc1123(stored.value("lastModified", Json("")).is_string()
                                                  ? stored.value("lastModified", "")
                                                  : "");
  x.res.set_header("Last-Modified", modified.empty() ? rfc1123(std::time(nullptr)) : modified);
  x.res.set_header("x-ms-request-server-encrypted", "false");
}

std::string md5_base64(const std::string& bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &len, EVP_md5(), nullptr);
  return base64_encode(std::string_view(reinterpret_cast<const char*>(digest), len));
}

// GET or HEAD of a stored file: Storage's headers, then the bytes (byte_reply.hpp).
void serve_file(Exchange& x, cp::StoredFile stored) {
  x.res.set_header("ETag", stored.etag);
  x.res.set_header("Last-Modified", rfc1123(stored.modified.tv_sec));
  x.res.set_header("x-ms-server-encrypted", "false");
  if (x.target.blob)
    x.res.set_header("x-ms-blob-type", "BlockBlob");
  else
    x.res.set_header("x-ms-type", "File");
  reply_bytes(x.req, x.res, std::make_shared<const UniqueFd>(std::move(stored.fd)), stored.size);
}

// ---- Azure Files ----

void share_routes(Exchange& x, const std::string& share) {
  const std::string& m = x.req.method;
  if (m == "PUT" && x.param("comp").empty()) {
    if (!x.data.share_create(x.auth, share).value("created", false))
      return reply_storage_error(x.res, 409, "ShareAlreadyExists", "The specified share already exists.");
    return created(x);
  }
  if (x.is_read() && x.param("comp").empty()) {
    if (!x.data.share_exists(x.auth, share).value("exists", false))
      return reply_storage_error(x.res, 404, "ShareNotFound", "The specified share does not exist.");
    x.res.status = 200;
    x.res.set_header("x-ms-share-quota", "5120");
    x.res.set_header("Last-Modified", rfc1123(std::time(nullptr)));
    return;
  }
  if (m == "DELETE") {
    if (!x.data.share_delete(x.auth, share).value("deleted", false))
      return reply_storage_error(x.res, 404, "ShareNotFound", "The specified share does not exist.");
    x.res.status = 202;
    return;
  }
  unsupported(x);
}

void directory_routes(Exchange& x, const std::string& share) {
  const std::string& m = x.req.method;
  const std::optional<std::string> dir = x.rest.empty() ? std::nullopt : std::optional<std::string>(x.rest);
  if (m == "GET" && x.param("comp") == "list")
    return xml(x, directory_list_xml(x.endpoint(), share, x.rest, x.data.file_list(x.auth, share, dir)));
  if (!x.param("comp").empty()) return unsupported(x);
  if (m == "PUT") {
    if (!x.data.directory_create(x.auth, share, x.rest).value("created", false))
      return reply_storage_error(x.res, 409, "ResourceAlreadyExists", "The specified resource already exists.");
    return created(x);
  }
  if (x.is_read()) {
    x.data.file_list(x.auth, share, dir);  // NotFound when it is not a directory
    x.res.status = 200;
    x.res.set_header("Last-Modified", rfc1123(std::time(nullptr)));
    return;
  }
  if (m == "DELETE") {
    if (!x.data.directory_delete(x.auth, share, x.rest).value("deleted", false))
      return reply_storage_error(x.res, 404, "ResourceNotFound", "The specified resource does not exist.");
    x.res.status = 202;
    return;
  }
  unsupported(x);
}

// Put Range: x-ms-range names where the body goes; at most 4 MiB, inside the declared length.
void put_range(Exchange& x, const std::string& share) {
  auto range = parse_range(range_header(x.req));
  if (!range || !range->end)
    return reply_storage_error(x.res, 400, "InvalidHeaderValue", "x-ms-range must be bytes=START-END.");
  const std::uint64_t length = *range->end - range->start + 1;
  if (length > cp::kMaxPutRangeBytes)
    return reply_storage_error(x.res, 413, "RequestBodyTooLarge", "A range may hold at most 4 MiB (4194304 bytes).");
  const std::string write = x.header("x-ms-write");
  if (write != "update")
    return reply_storage_error(x.res, 400, "InvalidHeaderValue", "Only x-ms-write: update is served (clear is not).");
  if (x.req.body.size() != length)
    return reply_storage_error(x.res, 400, "InvalidHeaderValue", "The body's length differs from the range's.");
  created(x, x.data.file_write_range(x.auth, share, x.rest, range->start, x.req.body));
  x.res.set_header("Content-MD5", md5_base64(x.req.body));
}

void file_routes(Exchange& x) {
  if (x.segs.empty()) {
    if (x.req.method == "GET" && x.param("comp") == "list")
      return xml(x, share_list_xml(x.endpoint(), x.data.share_list(x.auth)));
    return unsupported(x);
  }
  const std::string share = x.segs[0];
  const std::string restype = x.param("restype");
  if (x.rest.empty() && restype == "share") return share_routes(x, share);
  if (restype == "directory") return directory_routes(x, share);
  if (!restype.empty() || x.rest.empty()) return unsupported(x);
  const std::string comp = x.param("comp");
  const std::string& m = x.req.method;
  if (m == "PUT" && comp == "range") return put_range(x, share);
  if (!comp.empty()) return unsupported(x);
  if (m == "PUT") {
    if (to_lower(x.header("x-ms-type")) != "file")
      return reply_storage_error(x.res, 400, "InvalidHeaderValue", "Create File needs x-ms-type: file.");
    auto length = parse_count(x.header("x-ms-content-length"));
    if (!length || *length > cp::kMaxShareFileBytes)
      return reply_storage_error(x.res, 400, "InvalidHeaderValue",
                         "x-ms-content-length must be a length of at most 4 TiB (4398046511104 bytes).");
    if (!x.req.body.empty()) return reply_storage_error(x.res, 400, "InvalidInput", "Create File takes no body.");
    return created(x, x.data.file_create(x.auth, share, x.rest, *length));
  }
  if (x.is_read()) return serve_file(x, x.data.file_open(x.auth, share, x.rest));
  if (m == "DELETE") {
    x.data.file_delete(x.auth, share, x.rest);
    x.res.status = 202;
    return;
  }
  unsupported(x);
}

// ---- Blob ----

void container_routes(Exchange& x, const std::string& container) {
  const std::string& m = x.req.method;
  if (m == "GET" && x.param("comp") == "list") {
    const std::string prefix = x.param("prefix");
    const auto prefix_opt = prefix.empty() ? std::nullopt : std::optional<std::string>(prefix);
    return xml(x, blob_list_xml(x.endpoint(), container, prefix, x.data.blob_list(x.auth, container, prefix_opt)));
  }
  if (!x.param("comp").empty()) return unsupported(x);
  if (m == "PUT") {
    if (!x.data.container_create(x.auth, container).value("created", false))
      return reply_storage_error(x.res, 409, "ContainerAlreadyExists", "The specified container already exists.");
    return created(x);
  }
  if (x.is_read()) {
    if (!x.data.container_exists(x.auth, container).value("exists", false))
      return reply_storage_error(x.res, 404, "ContainerNotFound", "The specified container does not exist.");
    x.res.status = 200;
    x.res.set_header("Last-Modified", rfc1123(std::time(nullptr)));
    x.res.set_header("x-ms-lease-status", "unlocked");
    x.res.set_header("x-ms-lease-state", "available");
    return;
  }
  if (m == "DELETE") {
    if (!x.data.container_delete(x.auth, container).value("deleted", false))
      return reply_storage_error(x.res, 404, "ContainerNotFound", "The specified container does not exist.");
    x.res.status = 202;
    return;
  }
  unsupported(x);
}

void blob_routes(Exchange& x) {
  if (x.segs.empty()) {
    if (x.req.method == "GET" && x.param("comp") == "list")
      return xml(x, container_list_xml(x.endpoint(), x.data.container_list(x.auth)));
    return unsupported(x);
  }
  const std::string container = x.segs[0];
  if (x.rest.empty()) {
    if (x.param("restype") == "container") return container_routes(x, container);
    return unsupported(x);
  }
  if (!x.param("comp").empty() || !x.param("restype").empty()) return unsupported(x);  // blocks: not served
  const std::string& m = x.req.method;
  if (m == "PUT") {
    if (x.header("x-ms-blob-type") != "BlockBlob")
      return reply_storage_error(x.res, 400, "InvalidHeaderValue", "Only block blobs (x-ms-blob-type: BlockBlob) are served.");
    if (x.header("If-None-Match") == "*") {
      bool exists = true;
      try {
        x.data.blob_open(x.auth, container, x.rest);
      } catch (const NotFound& e) {
        if (e.code() != "BlobNotFound") throw;
        exists = false;
      }
      if (exists) return reply_storage_error(x.res, 409, "BlobAlreadyExists", "The specified blob already exists.");
    }
    if (x.req.spooled) {  // the body arrived on disk (http_server.hpp), hashed on the way
      created(x, x.data.blob_put_file(x.auth, container, x.rest, x.req.spooled->fd.get()));
      x.res.set_header("Content-MD5", base64_encode(x.req.spooled->md5));
      return;
    }
    created(x, x.data.blob_put(x.auth, container, x.rest, x.req.body));
    x.res.set_header("Content-MD5", md5_base64(x.req.body));
    return;
  }
  if (x.is_read()) return serve_file(x, x.data.blob_open(x.auth, container, x.rest));
  if (m == "DELETE") {
    x.data.blob_delete(x.auth, container, x.rest);
    x.res.status = 202;
    return;
  }
  unsupported(x);
}

// SharedKey under one of the account's keys; 403 AuthenticationFailed otherwise (an unknown
// account included, so names cannot be probed).
bool storage_authenticated(const HttpRequest& req, HttpResponse& res, const StorageTarget& target,
                           cp::ControlPlane& cp) {
  std::vector<std::string> keys;
  const bool plain = target.account.size() >= 3 && target.account.size() <= 24 &&
                     target.account.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789") == std::string::npos;
  if (plain) {
    try {
      for (const auto& k : cp.storage_accounts().keys(std::nullopt, target.account)) keys.push_back(k.at("value").get<std::string>());
    } catch (const NotFound&) {
    }
  }
  const std::string why = keys.empty() ? "The storage account does not exist or has no keys."
                                       : shared_key_refusal(req, target.account, keys, std::time(nullptr));
  if (why.empty()) return true;
  reply_storage_error(res, 403, "AuthenticationFailed",
              "Server failed to authenticate the request. Make sure the value of Authorization header is formed "
              "correctly including the signature. " + why);
  return false;
}

// The headers every data-plane answer carries.
void storage_headers(const HttpRequest& req, HttpResponse& res) {
  const std::string version = req.has_header("x-ms-version") ? req.get_header_value("x-ms-version") : "";
  const bool plain = !version.empty() && version.size() <= 16 &&
                     version.find_first_not_of("0123456789-") == std::string::npos;
  res.set_header("x-ms-version", plain ? version : kDefaultVersion);
  res.set_header("x-ms-request-id", new_uuid());
  res.set_header("Date", rfc1123(std::time(nullptr)));
}

}  // namespace

bool is_put_blob(const HttpRequest& req, const StorageTarget& target) {
  return target.blob && req.method == "PUT" && req.has_header("x-ms-blob-type") && !req.has_param("comp");
}

std::optional<StorageTarget> storage_target(const HttpRequest& req) {
  const std::string host = req.get_header_value("Host");
  if (host.empty() || host.size() > 255) return std::nullopt;
  std::string name = to_lower(host);
  if (name.front() != '[') name = name.substr(0, name.find(':'));  // the port
  for (const auto& [suffix, blob] : {std::pair{kFileSuffix, false}, std::pair{kBlobSuffix, true}}) {
    if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      return StorageTarget{blob, name.substr(0, name.size() - suffix.size()), host};
  }
  return std::nullopt;
}

std::optional<HttpResponse> storage_refusal(const HttpRequest& req, const StorageTarget& target,
                                            control_plane::ControlPlane& cp) {
  HttpResponse res;
  try {
    storage_headers(req, res);
    if (storage_authenticated(req, res, target, cp)) return std::nullopt;
  } catch (...) {
    reply_exception(res);
  }
  return res;
}

void handle_storage(const HttpRequest& req, HttpResponse& res, const StorageTarget& target,
                    control_plane::ControlPlane& cp) {
  try {
    storage_headers(req, res);
    if (!storage_authenticated(req, res, target, cp)) return;
    Exchange x{req, res, target, cp.storage(), cp::StorageAuth{target.account, std::nullopt}, {}, {}};
    std::size_t start = 0;
    while (start <= req.path.size()) {
      std::size_t end = req.path.find('/', start);
      if (end == std::string::npos) end = req.path.size();
      if (end > start) x.segs.push_back(req.path.substr(start, end - start));
      start = end + 1;
    }
    for (std::size_t i = 1; i < x.segs.size(); ++i) x.rest += (i > 1 ? "/" : "") + x.segs[i];
    target.blob ? blob_routes(x) : file_routes(x);
  } catch (...) {
    res.headers.erase("ETag");
    res.headers.erase("Last-Modified");
    reply_exception(res);
  }
}

}  // namespace batchai::serve
