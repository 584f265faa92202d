// The storage door (docs/serve-clients.md "The storage data plane"): requests whose Host is
// ACCOUNT.file.core.localhost[:PORT] (Azure Files) or ACCOUNT.blob.core.localhost (Blob),
// authenticated with SharedKey under the account's keys, routed through the storage route table
// (storage_route_table.hpp); errors in Storage's XML.
#include <ctime>
#include <optional>

#include "batchai/common/errors.hpp"
#include "batchai/common/ids.hpp"
#include "door.hpp"
#include "storage/byte_reply.hpp"
#include "storage/shared_key.hpp"
#include "storage/storage_route_table.hpp"

namespace batchai::serve {
namespace {

namespace cp = control_plane;

struct StorageTarget {
  bool blob = false;    // false: Azure Files
  std::string account;  // lower-case, as the Host names it
  std::string host;     // the Host header as sent (for ServiceEndpoint)
};

constexpr std::string_view kFileSuffix = ".file.core.localhost";
constexpr std::string_view kBlobSuffix = ".blob.core.localhost";
constexpr const char* kDefaultVersion = "2021-06-08";

// The path's non-empty segments, and those after the share or container joined with '/'.
void split_path(Exchange& x) {
  const std::string& path = x.req.path;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    if (end > start) x.segs.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  for (std::size_t i = 1; i < x.segs.size(); ++i) x.rest += (i > 1 ? "/" : "") + x.segs[i];
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

// A Put Blob (PUT with x-ms-blob-type and no comp=): the one request whose body may exceed the
// server's 4 MiB, up to HttpLimits::max_put_blob_bytes (azure-storage-blob sends blobs up to
// 64 MiB whole); spooled to disk as it arrives.
bool is_put_blob(const HttpRequest& req, const StorageTarget& target) {
  return target.blob && req.method == "PUT" && req.has_header("x-ms-blob-type") && !req.has_param("comp");
}

// The data-plane target the Host names; nullopt for any other host.
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

// SharedKey over the head; a Put Blob may send up to max_put_blob_bytes, spooled to disk.
class StorageDoor final : public Door {
 public:
  explicit StorageDoor(ServeState& state) : state_(state) {}

  bool claims(const HttpRequest& head) const override { return storage_target(head).has_value(); }

  BodyPlan admit(const HttpRequest& head) override {
    const StorageTarget target = *storage_target(head);
    BodyPlan plan;
    plan.limit = state_.config.limits.max_body_bytes;
    HttpResponse res;
    storage_headers(head, res);
    auto lease = state_.pool.borrow();
    if (!storage_authenticated(head, res, target, *lease)) plan.refuse = std::move(res);
    if (is_put_blob(head, target)) {
      plan.limit = state_.config.limits.max_put_blob_bytes;
      plan.spool = true;
    }
    return plan;
  }

  void answer(HttpRequest& req, HttpResponse& res) override {
    const StorageTarget target = *storage_target(req);
    storage_headers(req, res);
    auto lease = state_.pool.borrow();
    if (!storage_authenticated(req, res, target, *lease)) return;
    Exchange x{req, res, target.blob, target.host, (*lease).storage(), cp::StorageAuth{target.account, std::nullopt}, {}, {}};
    split_path(x);
    const PathLevel level = x.segs.empty() ? PathLevel::kAccount : x.rest.empty() ? PathLevel::kTop : PathLevel::kBelow;
    const StorageRoute* route =
        match_storage_route(storage_route_table(), target.blob ? StorageService::kBlob : StorageService::kFile,
                            req.method, level, x.param("restype"), x.param("comp"));
    if (route == nullptr)
      return reply_storage_error(res, 400, "UnsupportedHttpVerb",
                                 "batchai serve does not serve " + req.method + " with these parameters on this resource.");
    route->handler(x);
  }

  void render_error(const HttpRequest* req, HttpResponse& res, const ErrorAnswer& e) const override {
    if (req != nullptr) storage_headers(*req, res);
    reply_storage_error(res, e.status, e.code.empty() ? storage_code(e.kind) : e.code, e.message);
  }

 private:
  ServeState& state_;
};

}  // namespace

std::unique_ptr<Door> make_storage_door(ServeState& state) { return std::make_unique<StorageDoor>(state); }

}  // namespace batchai::serve
