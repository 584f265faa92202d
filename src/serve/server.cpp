// batchai::serve::Server: cpp-httplib's SSLServer with every route going through one dispatcher
// (auth routes, bearer check, ARM routes), ARM error bodies for whatever httplib refuses itself.
#include "batchai/serve/server.hpp"

#include <httplib.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <thread>

#include "arm_error.hpp"
#include "arm_routes.hpp"
#include "auth_routes.hpp"
#include "batchai/common/errors.hpp"
#include "batchai/common/json_util.hpp"
#include "call.hpp"
#include "certificate.hpp"
#include "control_plane_pool.hpp"
#include "identity.hpp"
#include "operations.hpp"
#include "request_file.hpp"
#include "job_file_links.hpp"
#include "byte_reply.hpp"
#include "storage_routes.hpp"

namespace batchai::serve {
namespace {

// Bodies are JSON documents of the size a configuration file may have (common/json_util.hpp).
constexpr std::size_t kMaxBodyBytes = kMaxJsonFileBytes;

std::string shell_word(const std::string& text) {
  const bool plain = !text.empty() && text.find_first_not_of(
                                          "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./-:") ==
                                          std::string::npos;
  if (plain) return text;
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The generic ARM error for what httplib answers by itself (oversize body, unknown method, ...).
ArmError status_error(int status) {
  switch (status) {
    case 413:
      return {413, "RequestEntityTooLarge",
              "The request body is larger than the server accepts (4 MiB; 64 MiB for a Put Blob)."};
    case 414:
      return {414, "RequestUriTooLong", "The request URI is too long."};
    case 404:
      return {404, "NotFound", "batchai serve has no operation at this path."};
    case 405:
      return {405, "MethodNotAllowed", "The method is not served."};
    case 408:
      return {408, "RequestTimeout", "The request was not received in time."};
    default:
      return {status, status < 500 ? "BadRequest" : "InternalServerError", "The request could not be served."};
  }
}

// A well-formed method no route serves (TRACE, CONNECT, BREW): ARM's 405, not httplib's 404/400.
bool is_unserved_method(const std::string& method) {
  if (method.empty() || method.size() > 32 || method.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ") != std::string::npos)
    return false;
  for (const char* served : {"GET", "HEAD", "PUT", "POST", "DELETE", "PATCH", "OPTIONS"})
    if (method == served) return false;
  return true;
}

}  // namespace

struct Server::Impl {
  ServerConfig config;
  Identity identity;
  std::filesystem::path cert;
  std::filesystem::path key;
  std::filesystem::path request_dir;
  std::unique_ptr<httplib::SSLServer> http;
  int port = 0;
  std::string base;
  ControlPlanePool pool;
  Operations operations;
  std::atomic<bool> run_entered{false};
  std::atomic<bool> stop_requested{false};
  std::atomic<bool> finished{false};

  explicit Impl(ServerConfig c) : config(std::move(c)), pool(config.settings, config.services) {}

  void dispatch(const httplib::Request& req, httplib::Response& res) {
    auto target = storage_target(req);
    if (req.body.size() > kMaxBodyBytes && !(target && is_put_blob(req, *target))) {
      if (target) return reply_storage_error(res, 413, "RequestBodyTooLarge", "The request body is larger than 4 MiB.");
      return Call(req, res, base).error(status_error(413));
    }
    Call call(req, res, base);
    try {
      // The storage data plane (ACCOUNT.file|blob.core.localhost) signs with SharedKey, never
      // with the ARM bearer token, and answers Storage's XML errors itself.
      if (target) {
        auto lease = pool.borrow();
        return handle_storage(req, res, *target, *lease);
      }
      // A job file link carries its own signature: clients GET it without the bearer token.
      if (is_job_file_request(req)) {
        auto lease = pool.borrow();
        return handle_job_file(req, res, identity, *lease, static_cast<std::int64_t>(std::time(nullptr)));
      }
      if (handle_auth_route(call, identity)) return;
      if (!check_bearer(call, identity)) return;
      auto lease = pool.borrow();
      ArmContext ctx{*lease, operations, identity, request_dir};
      handle_arm(call, ctx);
    } catch (...) {
      ArmError e = arm_error_from_current_exception();
      e.message = without_request_paths(e.message, request_dir);
      res.headers.clear();
      call.error(e);
    }
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
  if (s.config.read_timeout_seconds < 1 || s.config.read_timeout_seconds > 3600)
    throw InvalidArgument("The read timeout must be between 1 and 3600 seconds.");
  const std::filesystem::path dir = s.config.settings.home / "serve";
  s.identity = load_or_create_identity(dir);
  s.request_dir = dir / "requests";
  if (s.config.cert_file.empty()) {
    CertificateFiles files = ensure_self_signed_certificate(dir);
    s.cert = files.cert;
    s.key = files.key;
  } else {
    check_certificate_pair(s.config.cert_file, s.config.key_file);
    s.cert = s.config.cert_file;
    s.key = s.config.key_file;
  }
  s.http = std::make_unique<httplib::SSLServer>(s.cert.c_str(), s.key.c_str());
  if (!s.http->is_valid()) throw SystemError("The TLS server could not be set up with " + s.cert.string() + ".");
  // httplib's default adds SO_REUSEPORT, with which a second `batchai serve` on the same port
  // would share it silently; SO_REUSEADDR alone lets a restart reuse the port, refuses a twin.
  // TCP_NODELAY (inherited by accepted sockets): httplib writes an answer's headers and body
  // apart, and Nagle would hold the body until the client's delayed ACK, 40 ms a request.
  s.http->set_socket_options([](int sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));
  });
  // httplib reads a body whole before any route sees it (one per request thread, at most a Put
  // Blob's 64 MiB; beyond that it answers 413 itself); dispatch refuses anything else over 4 MiB.
  s.http->set_payload_max_length(kMaxPutBlobBytes);
  // A client silent mid-request (or not reading its answer) holds a request thread: bounded.
  s.http->set_read_timeout(s.config.read_timeout_seconds, 0);
  s.http->set_write_timeout(s.config.read_timeout_seconds, 0);
  s.http->set_keep_alive_timeout(5);
  auto handler = [this](const httplib::Request& req, httplib::Response& res) { impl_->dispatch(req, res); };
  s.http->Get(".*", handler);
  s.http->Put(".*", handler);
  s.http->Post(".*", handler);
  s.http->Delete(".*", handler);
  s.http->Patch(".*", handler);
  s.http->Options(".*", handler);
  s.http->set_error_handler(httplib::Server::HandlerWithResponse([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;  // ours already
    if (is_unserved_method(req.method)) res.status = 405;  // httplib: TRACE 404, unknown 400
    res.set_content(status_error(res.status).body().dump(), "application/json; charset=utf-8");
    return httplib::Server::HandlerResponse::Handled;
  }));
  if (s.config.port == 0) {
    s.port = s.http->bind_to_any_port(s.config.host);
    if (s.port <= 0) throw SystemError("Cannot listen on " + s.config.host + " (any port).");
  } else {
    if (!s.http->bind_to_port(s.config.host, s.config.port))
      throw SystemError("Cannot listen on " + s.config.host + ":" + std::to_string(s.config.port) +
                        ": the port is taken or the address is not this machine's (try --port 0).");
    s.port = s.config.port;
  }
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

void Server::run() {
  Impl& s = *impl_;
  s.run_entered = true;
  if (s.stop_requested) {
    s.finished = true;
    return;
  }
  // A client that hangs up mid-answer must not kill the process: writes then fail with EPIPE.
  // Blocked, not ignored, so the processes the control plane starts do not inherit it.
  sigset_t pipe;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
  s.http->listen_after_bind();
  s.finished = true;
}

void Server::stop() {
  Impl& s = *impl_;
  s.stop_requested = true;
  // httplib's stop() does nothing before its loop runs: wait for the loop if run() has begun.
  while (s.run_entered && !s.finished && !s.http->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  s.http->stop();
}

}  // namespace batchai::serve
