// The ARM REST server of `batchai serve` (docs/serve.md): HTTPS (Boost.Beast over Asio and OpenSSL), the
// discovery and token endpoints az needs, and the Microsoft.Resources, Microsoft.Storage and
// Microsoft.BatchAI 2018-05-01 operations over the control plane's services, on the same store
// as the CLI. Usable in-process (tests) as well as from the plugin's entry.
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "batchai/control_plane/control_plane.hpp"

namespace batchai::serve {

// The credentials a home's server accepts and signs with, made once and kept 0600 under
// $BATCHAI_HOME/serve/credentials.json.
struct Identity {
  std::string tenant_id;
  std::string client_id;
  std::string client_secret;
  std::string token_key;  // HMAC-SHA256 key of the bearer tokens (raw bytes)
};

// The transport's hard limits (docs/serve.md "Limits"): what one client, however slow, silent
// or large, may hold of the server. Idle and slow connections cost a socket and a timer, never a
// thread; the routes run on `workers` threads with at most `queued_requests` waiting.
struct HttpLimits {
  std::chrono::milliseconds head_deadline{5000};      // TLS handshake + whole request head, from first byte
  std::chrono::milliseconds keep_alive_idle{5000};    // between requests on one connection
  std::chrono::milliseconds body_deadline{60000};     // a whole request body
  std::chrono::milliseconds body_progress{10000};     // without one byte of the body
  std::chrono::milliseconds write_progress{30000};    // an answer's piece (≤ 64 KiB) taken by the client
  std::size_t max_header_bytes = 64 * 1024;           // request line + header fields: 431 past it
  std::size_t max_target_bytes = 8 * 1024;            // the request target: 414 past it
  std::uint64_t max_body_bytes = 4 * 1024 * 1024;     // every body but a Put Blob's: 413 past it
  std::uint64_t max_put_blob_bytes = 64 * 1024 * 1024;  // spooled to disk as it arrives
  std::size_t max_connections = 4096;                 // in total
  std::size_t max_connections_per_peer = 512;         // from one address
  unsigned io_threads = 1;                            // TLS and parsing
  unsigned workers = 8;                               // the routes: SQLite, processes
  std::size_t queued_requests = 256;                  // waiting for a worker: 503 past it
  std::chrono::milliseconds stop_grace{1500};         // stop(): workers get this long to finish
  std::uint64_t max_access_log_bytes = 16 * 1024 * 1024;  // then it rotates, one old file kept
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
