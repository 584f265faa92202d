// The storage door's routes as data (docs/serve-clients.md "Routes", serve_routes_test keeps the
// two equal): one row per (service, methods, level of the path, restype, comp) and its handler,
// a named function of storage_files.cpp or storage_blobs.cpp. Matching is pure, so it is tested
// without a server; a request no row matches is 400 UnsupportedHttpVerb, as Storage answers.
#pragma once
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "batchai/control_plane/storage_data.hpp"
#include "batchai/common/json_util.hpp"
#include "http/http_message.hpp"

namespace batchai::serve {

// One data-plane request as its handler sees it, authenticated already.
struct Exchange {
  const HttpRequest& req;
  HttpResponse& res;
  bool blob = false;                // false: Azure Files
  std::string host;                 // the Host header as sent (for ServiceEndpoint)
  control_plane::StorageData& data;
  control_plane::StorageAuth auth;  // already authenticated: no key
  std::vector<std::string> segs;    // the path's non-empty segments, decoded
  std::string rest;                 // segments after the share or container, joined with '/'

  std::string param(const char* name) const { return req.has_param(name) ? req.get_param_value(name) : ""; }
  std::string header(const char* name) const { return req.has_header(name) ? req.get_header_value(name) : ""; }
  const std::string& top() const { return segs.front(); }  // the share or container
  std::string endpoint() const { return "https://" + host + "/"; }
};

enum class StorageService { kFile, kBlob };
// Where the path points: the account (no segment), a share or container, a path below one, or
// either of the last two (a share's directories include its root).
enum class PathLevel { kAccount, kTop, kBelow, kTopOrBelow };

using StorageHandler = void (*)(Exchange&);

struct StorageRoute {
  StorageService service;
  std::string_view methods;  // space-separated: "GET HEAD"
  PathLevel level;
  std::string_view restype;  // the query's restype: "" absent, "*" any value
  std::string_view comp;     // the query's comp, likewise
  StorageHandler handler;
};

// The served rows, in the order docs/serve-clients.md lists them.
std::span<const StorageRoute> storage_route_table();
// The first row for the request; null when none (UnsupportedHttpVerb).
const StorageRoute* match_storage_route(std::span<const StorageRoute> table, StorageService service,
                                        std::string_view method, PathLevel level, std::string_view restype,
                                        std::string_view comp);

// What the handlers share (storage_route_table.cpp).
void reply_listing(Exchange& x, const std::string& xml);
// 201 with the stored item's ETag and Last-Modified (now when it has none).
void reply_created(Exchange& x, const Json& stored = Json::object());
// GET or HEAD of a stored file: Storage's headers, then the bytes (byte_reply.hpp).
void reply_stored_file(Exchange& x, control_plane::StoredFile stored);
std::string md5_base64(const std::string& bytes);

// Azure Files (storage_files.cpp).
void share_list(Exchange& x);
void share_create(Exchange& x);
void share_properties(Exchange& x);
void share_delete(Exchange& x);
void directory_list(Exchange& x);
void directory_create(Exchange& x);
void directory_properties(Exchange& x);
void directory_delete(Exchange& x);
void file_put_range(Exchange& x);
void file_create(Exchange& x);
void file_get(Exchange& x);
void file_delete(Exchange& x);

// Blob (storage_blobs.cpp).
void container_list(Exchange& x);
void blob_list(Exchange& x);
void container_create(Exchange& x);
void container_properties(Exchange& x);
void container_delete(Exchange& x);
void blob_put(Exchange& x);
void blob_get(Exchange& x);
void blob_delete(Exchange& x);

}  // namespace batchai::serve
