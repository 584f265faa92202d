// batchai::serve::Server: the doors (door.hpp: storage, job file links, dashboard, ARM) behind
// the event-driven transport (http/http_server.hpp). The server asks the doors in order which
// claims a request; that door authenticates it, routes it and renders its errors.
#include "batchai/serve/server.hpp"

#include <signal.h>
#include <sys/stat.h>

#include "batchai/common/errors.hpp"
#include "door.hpp"
#include "error_answer.hpp"
#include "http/certificate.hpp"
#include "http/http_server.hpp"
#include "identity.hpp"
#include "job_files/job_file_links.hpp"
#include "ui/ui_auth.hpp"

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

}  // namespace

// The transport's handler: asks the doors which one claims a request and lets it answer, its
// errors rendered from the one exception map (error_answer.hpp).
struct Server::Impl : HttpHandler {
  ServeState state;
  std::filesystem::path cert;
  std::filesystem::path key;
  Doors doors;                       // made once the port is bound (the dashboard's origin names it)
  std::unique_ptr<HttpServer> http;  // last: it calls back into the members above

  explicit Impl(ServerConfig c) : state(std::move(c)) {}

  BodyPlan admit(const HttpRequest& head) override {
    Door& door = door_for(doors, head);
    try {
      return door.admit(head);
    } catch (...) {
      BodyPlan plan;
      plan.refuse = error_response(door, head);
      return plan;
    }
  }

  HttpResponse handle(HttpRequest& req) override {
    Door& door = door_for(doors, req);
    try {
      HttpResponse res;
      door.answer(req, res);
      return res;
    } catch (...) {
      return error_response(door, req);
    }
  }

  // Inside a catch block: what the door says of the exception, none of what it had answered.
  static HttpResponse error_response(const Door& door, const HttpRequest& req) {
    HttpResponse res;
    door.render_error(&req, res, error_answer_from_current_exception());
    return res;
  }

  HttpResponse refusal(const HttpRequest* head, int status) override {
    static const HttpRequest kUnparsed;  // no head was parsed: no Host, no path
    HttpResponse res;
    door_for(doors, head ? *head : kUnparsed).render_error(head, res, transport_refusal(status, state.config.limits));
    return res;
  }
};

Server::Server(ServerConfig config) : impl_(std::make_unique<Impl>(std::move(config))) {
  Impl& i = *impl_;
  ServeState& s = i.state;
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
    i.cert = files.cert;
    i.key = files.key;
  } else {
    check_certificate_pair(s.config.cert_file, s.config.key_file);
    i.cert = s.config.cert_file;
    i.key = s.config.key_file;
  }
  const std::filesystem::path spool = dir / "uploads";
  std::filesystem::create_directories(spool);
  std::filesystem::permissions(spool, std::filesystem::perms::owner_all, std::filesystem::perm_options::replace);
  i.http = std::make_unique<HttpServer>(HttpEndpoint{s.config.host, s.config.port, i.cert, i.key, spool, s.config.access_log,
                                                     {std::string(kJobFileLinkPrefix)}},
                                        s.config.limits, i);
  s.port = i.http->port();
  s.base = "https://localhost:" + std::to_string(s.port);
  i.doors = make_doors(s);
}

Server::~Server() {
  stop();
}

int Server::port() const { return impl_->state.port; }
const Identity& Server::identity() const { return impl_->state.identity; }
const std::filesystem::path& Server::certificate() const { return impl_->cert; }

std::string Server::client_setup_lines() const {
  const std::string port = std::to_string(impl_->state.port);
  const Identity& identity = impl_->state.identity;
  return "export REQUESTS_CA_BUNDLE=" + shell_word(impl_->cert.string()) + "\n" +
         "az cloud register -n batchai-local --endpoint-resource-manager https://localhost:" + port +
         "/ --suffix-storage-endpoint core.localhost:" + port + "\n" + "az cloud set -n batchai-local\n" +
         "az login --service-principal -u " + identity.client_id + " -p " + identity.client_secret +
         " --tenant " + identity.tenant_id + "\n";
}

std::string Server::ui_login_url() const {
  return serve::ui_login_url(impl_->state.identity, impl_->state.port, now_seconds());
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
