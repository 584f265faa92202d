// The event-driven HTTPS transport of `batchai serve` (docs/adr/0004, docs/serve.md "Limits"):
// Boost.Beast over Asio and OpenSSL. Connections live on a few I/O threads as sockets and timers;
// a request's route runs on the WorkerPool. Every phase has a deadline, every size a bound, and
// when connections run out the longest-idle one that has not sent a request gives way.
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "batchai/serve/http_limits.hpp"
#include "http/http_message.hpp"

namespace batchai::serve {

// How a request's body is to be read, decided from its head before any of the body is.
struct BodyPlan {
  std::optional<HttpResponse> refuse;  // answered at once; the body is never read
  std::uint64_t limit = 0;             // bytes; more is answered with refusal(413)
  bool spool = false;                  // to an unlinked file instead of memory
};

// What the transport asks of the routes. admit and handle run on worker threads.
class HttpHandler {
 public:
  virtual ~HttpHandler() = default;
  // For a request with a body: authentication and the body's limit, from the head alone.
  virtual BodyPlan admit(const HttpRequest& head) = 0;
  virtual HttpResponse handle(HttpRequest& request) = 0;
  // The answer to what the transport refuses itself (400, 413, 414, 431, 503); `head` is null
  // when no head was parsed. Cheap: runs on the I/O thread.
  virtual HttpResponse refusal(const HttpRequest* head, int status) = 0;
};

struct HttpEndpoint {
  std::string host;
  int port = 0;  // 0: any free port
  std::filesystem::path cert;
  std::filesystem::path key;
  std::filesystem::path spool_dir;  // where spooled bodies are written (unlinked at once)
  std::filesystem::path access_log;  // empty: none (access_log.hpp)
  std::vector<std::string> secret_path_prefixes;  // logged without what follows them
};

class HttpServer {
 public:
  // Binds; throws SystemError when it cannot (port taken, unreadable certificate).
  HttpServer(const HttpEndpoint& endpoint, const HttpLimits& limits, HttpHandler& handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int port() const;
  // Serves on the calling thread (and limits.io_threads - 1 more) until stop(); then gives the
  // workers limits.stop_grace to finish. False when one was still running.
  bool run();
  // Any thread, any time; returns at once.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace batchai::serve
