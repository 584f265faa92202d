// The ARM REST server of `batchai serve` (docs/serve.md): HTTPS (Boost.Beast over Asio and OpenSSL), the
// discovery and token endpoints az needs, and the Microsoft.Resources, Microsoft.Storage and
// Microsoft.BatchAI 2018-05-01 operations over the control plane's services, on the same store
// as the CLI. Usable in-process (tests) as well as from the plugin's entry.
#pragma once
#include <filesystem>
#include <memory>
#include <string>

#include "batchai/control_plane/control_plane.hpp"
#include "batchai/serve/http_limits.hpp"

namespace batchai::serve {

// The credentials a home's server accepts and signs with, made once and kept 0600 under
// $BATCHAI_HOME/serve/credentials.json.
struct Identity {
  std::string tenant_id;
  std::string client_id;
  std::string client_secret;
  std::string token_key;  // HMAC-SHA256 key of the bearer tokens (raw bytes)
};

struct ServerConfig {
  control_plane::Settings settings;  // settings.home is $BATCHAI_HOME
  control_plane::Services services;
  std::string host = "127.0.0.1";
  int port = 8443;                   // 0: any free port
  std::filesystem::path cert_file;   // both empty: the home's self-signed certificate
  std::filesystem::path key_file;
  std::filesystem::path access_log;  // empty: no access log
  HttpLimits limits;
};

class Server {
 public:
  // Loads (or makes) the identity and the certificate and binds the port; throws
  // batchai::Error when it cannot (port taken, unreadable certificate, ...).
  explicit Server(ServerConfig config);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  int port() const;
  const Identity& identity() const;
  // The certificate clients must trust (REQUESTS_CA_BUNDLE).
  const std::filesystem::path& certificate() const;
  // The lines a user pastes to point az at this server, each starting with "export " or "az ".
  std::string client_setup_lines() const;
  // A fresh one-time dashboard login link (https://localhost:PORT/ui/login?token=...), valid 10 minutes.
  std::string ui_login_url() const;

  // Serves on the calling thread until stop(); returns within the limits' stop_grace of it.
  // False when a route was still running then (its worker is left behind: end the process).
  bool run();
  // Any thread; returns at once. Safe before, during and after run().
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace batchai::serve
