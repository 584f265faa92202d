// batchai::serve::Server: the routes behind the event-driven transport (http_server.hpp): the
// auth routes, the bearer check, the ARM routes, the storage data plane, the job file links and
// the dashboard (/ui/, its own login: never the bearer token, and ARM never takes its cookie),
// with each refusal shaped as its API answers errors (ARM JSON or Storage XML).
#include "batchai/serve/server.hpp"

#include <signal.h>
#include <sys/stat.h>

#include <ctime>

#include "arm/arm_error.hpp"
#include "arm/arm_routes.hpp"
#include "arm/auth_routes.hpp"
#include "batchai/common/errors.hpp"
#include "batchai/common/json_util.hpp"
#include "storage/byte_reply.hpp"
#include "arm/call.hpp"
#include "http/certificate.hpp"
#include "control_plane_pool.hpp"
#include "http/http_server.hpp"
#include "identity.hpp"
#include "job_files/job_file_links.hpp"
#include "arm/operations.hpp"
#include "storage/storage_routes.hpp"
#include "ui/ui_auth.hpp"
#include "ui/ui_routes.hpp"
#include "arm/wire_cache.hpp"

namespace batchai::serve {
namespace {

std::string shell_word(const std::string& text) {
  const bool plain = !text.empty() && text.find_first_not_of(
                                          "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./-:") ==
                                          std::string::npos;
  if (plain) return text;
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string mib(std::uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

// What the transport refuses itself, as ARM and Storage name it.
struct Refusal {
  const char* arm_code;
  const char* storage_code;
  std::string message;
};

Refusal refusal_for(int status, const HttpLimits& limits) {
  switch (status) {
    case 400:
      return {"BadRequest", "InvalidInput", "The request is not well-formed HTTP."};
    case 413:
      return {"RequestEntityTooLarge", "RequestBodyTooLarge",
              "The request body is larger than the server accepts (" + mib(limits.max_body_bytes) + "; " +
                  mib(limits.max_put_blob_bytes) + " for a Put Blob)."};
    case 414:
      return {"RequestUriTooLong", "InvalidUri",
              "The request URI is longer than " + std::to_string(limits.max_target_bytes) + " bytes."};
    case 431:
      return {"RequestHeaderFieldsTooLarge", "RequestHeaderFieldsTooLarge",
              "The request's header fields are larger than " + std::to_string(limits.max_header_bytes / 1024) +
                  " KiB."};
    case 503:
      return {"ServerBusy", "ServerBusy", "The server is busy: try again in a second."};
    case 507:
      return {"InsufficientStorage", "InsufficientStorage",
              "The server's disk is full: the body could not be stored. Free space where BATCHAI_HOME is, then "
              "send it again."};
    default:
      return {"InternalServerError", "InternalError", "The request could not be served."};
  }
}

// The token endpoint's form (client id, secret, scope) is read before any credential is checked:
// a few hundred bytes in practice, so a small bound keeps what an anonymous client can make the
// server hold small.
constexpr std::uint64_t kTokenBodyLimit = 16 * 1024;

// A well-formed method no route serves (TRACE, CONNECT, BREW): ARM's 405 before any check.
bool is_unserved_method(const std::string& method) {
  for (const char* served : {"GET", "HEAD", "PUT", "POST", "DELETE", "PATCH", "OPTIONS"})
    if (method == served) return false;
  return true;
}

}  // namespace

struct Server::Impl : HttpHandler {
  ServerConfig config;
  Identity identity;
  std::filesystem::path cert;
  std::filesystem::path key;
  int port = 0;
  std::string base;
  ControlPlanePool pool;
  Operations operations;
  WireCache job_wire;                // jobs' wire text for GET …/jobs (wire_cache.hpp)
  UsedUiLogins ui_logins;            // dashboard links already exchanged, kept in the home (ui_auth.hpp)
  RateGate ui_overview_engines{std::chrono::milliseconds(500)};
  RateGate ui_jobs_engines{std::chrono::milliseconds(500)};
  std::unique_ptr<HttpServer> http;  // last: it calls back into the members above

  explicit Impl(ServerConfig c)
      : config(std::move(c)), pool(config.settings, config.services), ui_logins(config.settings.home / "serve") {}

  BodyPlan admit(const HttpRequest& head) override {
    BodyPlan plan;
    plan.limit = config.limits.max_body_bytes;
    if (auto target = storage_target(head)) {
      auto lease = pool.borrow();
      plan.refuse = storage_refusal(head, *target, *lease);
      if (is_put_blob(head, *target)) {
        plan.limit = config.limits.max_put_blob_bytes;
        plan.spool = true;
      }
      return plan;
    }
    // Routes that take no body refuse one from its head, unread, before any credential counts:
    // an anonymous client must not make the server read or hold a byte of a body.
    if (is_job_file_request(head) || is_ui_request(head) || is_unserved_method(head.method)) {
      plan.refuse = takes_no_body(head);
      return plan;
    }
    HttpResponse res;
    Call call(head, res, base);
    if (is_auth_route(call)) {
      if (call.is({"adfs", "oauth2", "token"}))
        plan.limit = kTokenBodyLimit;
      else
        plan.refuse = takes_no_body(head);
      return plan;
    }
    if (!check_bearer(call, identity)) plan.refuse = std::move(res);
    return plan;
  }

  // Not a storage request (those are admitted above): ARM's error shape, the dashboard's headers.
  HttpResponse takes_no_body(const HttpRequest& head) {
    HttpResponse res = refusal(&head, 413);
    res.set_content(ArmError{413, "RequestEntityTooLarge", "This request takes no body: send it without one."}.body().dump(),
                    "application/json; charset=utf-8");
    res.close = true;
    return res;
  }

  HttpResponse handle(HttpRequest& req) override {
    HttpResponse res;
    Call call(req, res, base);
    try {
      // The storage data plane (ACCOUNT.file|blob.core.localhost) signs with SharedKey, never
      // with the ARM bearer token, and answers Storage's XML errors itself.
      if (auto target = storage_target(req)) {
        auto lease = pool.borrow();
        handle_storage(req, res, *target, *lease);
        return res;
      }
      // A job file link carries its own signature: clients GET it without the bearer token.
      if (is_job_file_request(req)) {
        auto lease = pool.borrow();
        handle_job_file(req, res, identity, *lease, static_cast<std::int64_t>(std::time(nullptr)));
        return res;
      }
      // The dashboard: its cookie, never the bearer token; its answers carry its own headers.
      if (is_ui_request(req)) {
        UiContext ui{identity, port, config.host, ui_logins, pool, base, ui_overview_engines, ui_jobs_engines};
        handle_ui(req, res, ui, static_cast<std::int64_t>(std::time(nullptr)));
        return res;
      }
      if (is_unserved_method(req.method)) {
        call.error(405, "MethodNotAllowed", "The method is not served.");
        return res;
      }
      if (handle_auth_route(call, identity)) return res;
      if (!check_bearer(call, identity)) return res;
      auto lease = pool.borrow();
      ArmContext ctx{*lease, operations, identity, job_wire};
      handle_arm(call, ctx);
    } catch (...) {
      ArmError e = arm_error_from_current_exception();
      res.headers.clear();
      res.file.reset();
      call.error(e);
    }
    return res;
  }

  HttpResponse refusal(const HttpRequest* head, int status) override {
    const Refusal r = refusal_for(status, config.limits);
    HttpResponse res;
    if (head != nullptr && storage_target(*head)) {
      reply_storage_error(res, status, r.storage_code, r.message);
      return res;
    }
    res.status = status;
    // A refusal before the path is known (431, an unparsable head, 414) may answer a /ui/ request:
    // it carries the dashboard's headers too, which no other client minds.
    if (head == nullptr || head->path.empty() || is_ui_request(*head)) set_ui_security_headers(res);
    res.set_header("x-ms-failure-cause", "gateway");
    res.set_content(ArmError{status, r.arm_code, r.message}.body().dump(), "application/json; charset=utf-8");
    return res;
  }
};

Server::Server(ServerConfig config) : impl_(std::make_unique<Impl>(std::move(config))) {
  Impl& s = *impl_;
  if (s.config.port < 0 || s.config.port > 65535)
    throw InvalidArgument("--port must be between 0 and 65535, got " + std::to_string(s.config.port) + ".");
  if (s.config.host.empty() || s.config.host.size() > 255 ||
      s.config.host.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.-:") !=
          std::string::npos)
    throw InvalidArgument("--host must be an IP address or a host name.");
  if (s.config.cert_file.empty() != s.config.key_file.empty())
    throw InvalidArgument("--cert and --key go together: give both or neither.");
  const std::filesystem::path dir = s.config.settings.home / "serve";
  s.identity = load_or_create_identity(dir);
  if (s.config.cert_file.empty()) {
    CertificateFiles files = ensure_self_signed_certificate(dir);
    s.cert = files.cert;
    s.key = files.key;
  } else {
    check_certificate_pair(s.config.cert_file, s.config.key_file);
    s.cert = s.config.cert_file;
    s.key = s.config.key_file;
  }
  const std::filesystem::path spool = dir / "uploads";
  std::filesystem::create_directories(spool);
  std::filesystem::permissions(spool, std::filesystem::perms::owner_all, std::filesystem::perm_options::replace);
  s.http = std::make_unique<HttpServer>(HttpEndpoint{s.config.host, s.config.port, s.cert, s.key, spool, s.config.access_log,
                                                                     {std::string(kJobFileLinkPrefix)}},
                                        s.config.limits, s);
  s.port = s.http->port();
  s.base = "https://localhost:" + std::to_string(s.port);
}

Server::~Server() {
  stop();
}

int Server::port() const { return impl_->port; }
const Identity& Server::identity() const { return impl_->identity; }
const std::filesystem::path& Server::certificate() const { return impl_->cert; }

std::string Server::client_setup_lines() const {
  const std::string port = std::to_string(impl_->port);
  return "export REQUESTS_CA_BUNDLE=" + shell_word(impl_->cert.string()) + "\n" +
         "az cloud register -n batchai-local --endpoint-resource-manager https://localhost:" + port +
         "/ --suffix-storage-endpoint core.localhost:" + port + "\n" + "az cloud set -n batchai-local\n" +
         "az login --service-principal -u " + impl_->identity.client_id + " -p " + impl_->identity.client_secret +
         " --tenant " + impl_->identity.tenant_id + "\n";
}

std::string Server::ui_login_url() const {
  return serve::ui_login_url(impl_->identity, impl_->port, static_cast<std::int64_t>(std::time(nullptr)));
}

bool Server::run() {
  // A client that hangs up mid-answer must not kill the process: writes then fail with EPIPE.
  // Blocked, not ignored, so the processes the control plane starts do not inherit it.
  sigset_t pipe;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
  return impl_->http->run();
}

void Server::stop() { impl_->http->stop(); }

}  // namespace batchai::serve
